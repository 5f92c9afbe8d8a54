#!/usr/bin/env python3
"""Sweep throughput: configurations per second of a 1,000-point sweep on a LocalCluster.

    .venv/bin/python benchmarks/sweep_bench.py                 # 1 and 2 workers
    .venv/bin/python benchmarks/sweep_bench.py --workers 1 2 4 --points 200 --serial

The grid is the null device (txonly, unbounded rate) over batch size x NAPI budget x packet
size x need_wakeup x NIC ring size, 1 ms of emulated time each, without the result cache.
The kernels are compiled (or loaded from numba's cache) in this process first, so the
workers only load them.

Columns: ``wall s`` from starting the cluster to the frame; ``startup s`` the cluster's
start plus loading the kernels on every worker; ``cfg/s`` overall and after startup;
``worker CPU s`` the CPU time all workers used, and ``cfg/s idle`` what the sweep part would
reach on an otherwise idle machine (workers in parallel, each using its own CPU time) - on
a shared machine the wall clock mostly measures the other load.
"""
import argparse
import itertools
import logging
import os
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from xskbench.sweep import sweep  # noqa: E402

AXES = {
    "xsk.batch_size": [16, 32, 64, 128, 256],
    "null.napi_budget": [16, 32, 64, 128],
    "workload.packet_size": [64, 256, 512, 1024, 1500],
    "xsk.need_wakeup": [True, False],
    "null.ring_size": [256, 512, 1024, 2048, 4096],
}


def grid(points: int) -> list[dict]:
    """The first ``points`` points of the AXES product (1,000 in all)."""
    combos = itertools.islice(itertools.product(*AXES.values()), points)
    return [dict(zip(AXES, combo, strict=True)) for combo in combos]


def _cpu_seconds() -> float:
    import psutil

    t = psutil.Process().cpu_times()
    return t.user + t.system


def _run(base, points, workers):
    """-> (wall, startup, worker CPU s) for one sweep; workers=None runs serially."""
    if workers is None:
        t0, c0 = time.perf_counter(), _cpu_seconds()
        df = sweep(base, points, scheduler="serial", cache=False, progress=False)
        _check(df, points)
        return time.perf_counter() - t0, 0.0, _cpu_seconds() - c0
    from dask.distributed import Client, LocalCluster

    t0 = time.perf_counter()
    with LocalCluster(n_workers=workers, threads_per_worker=1, processes=True,
                      dashboard_address=None, silence_logs=logging.ERROR) as cluster, \
            Client(cluster) as client:
        started = time.perf_counter() - t0
        before = client.run(_cpu_seconds)
        df = sweep(base, points, scheduler=client, cache=False, progress=False)
        after = client.run(_cpu_seconds)
        wall = time.perf_counter() - t0
    _check(df, points)
    cpu = sum(after[w] - before[w] for w in after)
    return wall, started + df.attrs["sweep"]["startup_s"], cpu


def _check(df, points):
    info = df.attrs["sweep"]
    assert info["computed"] == len(points) and info["errors"] == 0, info


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--points", type=int, default=1000, help="at most 1000 (default 1000)")
    ap.add_argument("--workers", type=int, nargs="+", default=[1, 2])
    ap.add_argument("--duration", type=float, default=0.001, help="emulated s per run")
    ap.add_argument("--serial", action="store_true", help="also run in this process")
    args = ap.parse_args()
    base = {"device": "null",
            "workload": {"duration_s": args.duration, "warmup_s": args.duration / 5}}
    points = grid(args.points)
    t0 = time.perf_counter()
    sweep(base, points[:1], scheduler="serial", cache=False, progress=False)
    load = os.getloadavg()[0]
    print(f"{len(points)} configurations, {args.duration * 1e3:g} ms emulated each, "
          f"{os.cpu_count()} cores, load average {load:.1f}; kernels in this process: "
          f"{time.perf_counter() - t0:.1f} s")
    runs = [("serial", None)] if args.serial else []
    runs += [(f"{n} worker{'s' * (n > 1)}", n) for n in args.workers]
    print(f"{'':10} {'wall s':>7} {'startup s':>9} {'cfg/s':>6} {'after startup':>13} "
          f"{'worker CPU s':>12} {'cfg/s idle':>10}")
    for label, n in runs:
        wall, startup, cpu = _run(base, points, n)
        idle = len(points) / (cpu / (n or 1))
        print(f"{label:10} {wall:7.1f} {startup:9.1f} {len(points) / wall:6.1f} "
              f"{len(points) / (wall - startup):13.1f} {cpu:12.1f} {idle:10.1f}")
    print(f"load average now {os.getloadavg()[0]:.1f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
