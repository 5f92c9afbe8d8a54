"""Long runs: each device's reference scenario at full rate for seconds of emulated time.

For every run it reports how often the u32 producer index of each xsk ring wrapped (the
indices start just below 2^32), that memory stays flat (the arena is allocated once; RSS
before and after the run) and the wall time per emulated second, which should not grow with
the duration. The books are checked at the end of every run, as always.

    .venv/bin/python benchmarks/long_run.py                     # 0.1 s, 1 s and 10 s
    .venv/bin/python benchmarks/long_run.py --durations 0.1 1 --json
"""

import argparse
import json
import os
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from xskbench import costs  # noqa: E402
from xskbench.devices import DEVICES  # noqa: E402
from xskbench.kernels.layout import M32  # noqa: E402
from xskbench.kernels.xsk_ring import R_PROD  # noqa: E402
from xskbench.machine import RING_NAMES, start_index  # noqa: E402
from xskbench.results import collect  # noqa: E402
from xskbench.run import run, run_speed, simulate  # noqa: E402
from xskbench.seeds import scenario  # noqa: E402

#: device -> its reference scenario (data/scenarios.yaml), run at full rate
REFERENCE = {"null": "null-rxdrop-zc-1core", "virtio-net": "virtio-zc-l2fwd",
             "tun": "tun-ovs-zc1", "veth": "veth-rfc-zc"}


def rss_mib():
    """Resident set size now (not the peak), MiB."""
    pages = int(Path("/proc/self/statm").read_text().split()[1])
    return pages * os.sysconf("SC_PAGE_SIZE") / 2**20


def long_run(name, duration):
    cfg = scenario(name, **{"workload.rate_pps": None, "workload.duration_s": duration,
                            "workload.warmup_s": 0.001})
    prof = costs.for_config(cfg)
    hz = (cfg.testbed.cpu_ghz or prof.cpu_ghz) * 1e9
    dev = DEVICES[cfg.device]
    cc, cb = prof.arrays(run_speed(cfg))
    rss0 = rss_mib()
    t0 = time.perf_counter()
    # every ring's indices start here; setup may already have produced (the fill ring)
    start = {r: start_index(cfg.workload.seed) for r in RING_NAMES}
    (mach,) = simulate(dev, [cfg], hz, cc, cb)
    m = mach.m
    res = collect(cfg, mach, prof, cc, cb, dev.impl.packets_in_flight(mach))
    wall = time.perf_counter() - t0
    rss1 = rss_mib()
    rings = {}
    for r in RING_NAMES:
        end = int(m[mach.rings[r] + R_PROD])
        produced = (end - start[r]) & M32  # exact while fewer than 2^32 entries were produced
        rings[r] = {"start": start[r], "end": end, "produced": produced,
                    "wraps": (start[r] + produced) >> 32}
    pkts = res.totals["rx_packets"] + res.totals["tx_packets"]
    return {"device": cfg.device, "scenario": name, "mode": cfg.mode,
            "kind": cfg.workload.kind, "emulated_s": duration, "wall_s": round(wall, 3),
            "wall_per_emulated_s": round(wall / duration, 3), "packets": pkts,
            "mpps": round(pkts / duration / 1e6, 3), "arena_mib": round(m.nbytes / 2**20, 2),
            "rss_before_mib": round(rss0, 1), "rss_after_mib": round(rss1, 1),
            "balanced": res.invariants["balanced"], "rings": rings}


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--durations", type=float, nargs="+", default=[0.1, 1.0, 10.0],
                    help="emulated seconds per run (default 0.1 1 10)")
    ap.add_argument("--devices", nargs="+", default=list(REFERENCE), choices=list(REFERENCE))
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args(argv)
    rows = []
    for device in args.devices:
        name = REFERENCE[device]
        run(scenario(name, **{"workload.duration_s": 0.002, "workload.warmup_s": 0.001}))
        for duration in args.durations:  # warm: compiled above, not timed
            row = long_run(name, duration)
            rows.append(row)
            if not args.json:
                wraps = " ".join(f"{r}:{v['wraps']}" for r, v in row["rings"].items())
                print(f"{device:10s} {row['scenario']:22s} {duration:6g} s emulated  "
                      f"{row['wall_s']:8.2f} s wall  {row['wall_per_emulated_s']:7.2f} s/s  "
                      f"{row['mpps']:7.2f} Mpps  wraps {wraps}  arena "
                      f"{row['arena_mib']} MiB  RSS {row['rss_before_mib']} -> "
                      f"{row['rss_after_mib']} MiB  balanced {row['balanced']}", flush=True)
    if args.json:
        print(json.dumps(rows, indent=1))


if __name__ == "__main__":
    main()
