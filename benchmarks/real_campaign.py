"""The measured grids in data/measurements/ (root; about 10 min of wall time).

Each grid varies one field at a time around a base point (``xskbench.real.measure.sweep``),
pinned app/peer, 3 repeats of a 2 s window; the file records the machine and its load.
Usage: python benchmarks/real_campaign.py [GRID ...]   (default: all grids)
"""
import dataclasses
import json
import os
import sys
import time

from xskbench.real import measure as M
from xskbench.real.environment import MeasureError, check_environment
from xskbench.real.machine_info import machine_info

OUT = os.path.join(os.path.dirname(__file__), "..", "data", "measurements")
BASE = M.MeasureConfig(duration=2.0, warmup=0.5, repeats=3, priority="high")
SHARED = ("the machine was shared: other sessions compiled and ran numba code during the "
          "campaign (see loadavg); app and peer were pinned to their CPUs at nice -20 in "
          "sessions of their own, so the load competes mostly through caches, memory and "
          "kernel threads; the spread over repeats is in each point's 'spread'")

GRIDS = {
    "veth_copy_rxdrop": (dict(), {
        "batch": [16, 32, 64, 128, 256], "ring": [256, 512, 2048, 4096],
        "packet_size": [64, 256, 512, 1024, 1500], "need_wakeup": [True, False],
        "wait": ["spin", "poll", "busy-poll"], "rate_pps": [None, 0.5e6, 1e6, 2e6]}),
    "veth_copy_txonly": (dict(workload="txonly"), {
        "batch": [16, 32, 64, 128, 256], "ring": [256, 512, 2048, 4096],
        "packet_size": [64, 512, 1500], "need_wakeup": [True, False],
        "wait": ["spin", "poll", "busy-poll"]}),
    "veth_copy_l2fwd": (dict(workload="l2fwd"), {
        "batch": [16, 64, 256], "ring": [256, 2048], "packet_size": [64, 512, 1500],
        "need_wakeup": [True, False], "wait": ["spin", "poll"]}),
    "veth_skb_rxdrop": (dict(xdp_mode="skb"), {
        "batch": [16, 64, 256], "packet_size": [64, 512, 1500], "need_wakeup": [True, False]}),
    "tun_copy_rxdrop": (dict(device="tun", xdp_mode="skb"), {
        "batch": [16, 64, 256], "ring": [256, 2048], "packet_size": [64, 512, 1500],
        "need_wakeup": [True, False], "xdp_mode": ["skb", "native"]}),
    "tun_copy_txonly": (dict(device="tun", xdp_mode="skb", workload="txonly"), {
        "batch": [16, 64, 256], "ring": [256, 2048], "packet_size": [64, 512, 1500],
        "need_wakeup": [True, False]}),
    "tun_copy_l2fwd": (dict(device="tun", xdp_mode="skb", workload="l2fwd"), {
        "batch": [16, 64, 256], "packet_size": [64, 1500]}),
}


def zerocopy_probe() -> str:
    """The kernel's answer to a zero-copy bind on veth and tun."""
    out = []
    for dev in ("veth", "tun"):
        cfg = dataclasses.replace(BASE, device=dev, mode="zerocopy", repeats=1, duration=0.2,
                                  warmup=0.0, xdp_mode="native")
        try:
            M.measure(cfg)
            out.append(f"{dev}: zero-copy bound")
        except MeasureError as err:
            out.append(f"{dev}: {err}")
    return "; ".join(out)


def main(names):
    check_environment()
    for name in names or GRIDS:
        over, axes = GRIDS[name]
        base = dataclasses.replace(BASE, **over)
        t0, load0 = time.time(), os.getloadavg()
        doc = M.sweep(base, axes, progress=lambda f, v, r, name=name: print(
            f"{name} {f}={v}: rx {r['pps']['rx'] / 1e6:.3f} tx {r['pps']['tx'] / 1e6:.3f} "
            f"Mpps cv {100 * r['spread']['pps']['rx' if r['pps']['rx'] else 'tx']['cv']:.1f}%",
            file=sys.stderr, flush=True))
        doc["name"] = name
        doc["machine"].update(nproc=os.cpu_count(), loadavg_before=[round(x, 2) for x in load0],
                              loadavg_after=[round(x, 2) for x in os.getloadavg()],
                              wall_s=round(time.time() - t0, 1), shared=SHARED)
        path = os.path.join(OUT, f"{name}.json")
        with open(path, "w") as f:
            json.dump(doc, f, indent=1, sort_keys=True)
            f.write("\n")
        print(f"wrote {path}: {len({json.dumps(p['result']['config']) for p in doc['points']})}"
              f" points, {time.time() - t0:.0f} s", file=sys.stderr, flush=True)
    if not names:
        with open(os.path.join(OUT, "zerocopy.json"), "w") as f:
            json.dump({"probe": zerocopy_probe(), "machine": machine_info()}, f, indent=1)
            f.write("\n")


if __name__ == "__main__":
    main(sys.argv[1:])
