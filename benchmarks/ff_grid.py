"""Fast-forward exactness over a grid of virtio-net configurations: every wakeup, host,
workload, busy poll, need_wakeup and fault kind (2 ms runs, seeded choices of rate, CPU
placement, queues and ring size). Prints the 1-based indices whose results differ with
``fast_forward=False``; ``--show I ...`` prints those configurations' settings.

tests/test_fastforward.py holds the defaults and the cases this grid found; the grid is the
wider net (about 10 s), run by hand after a change to the engine's shortcuts."""
import argparse
import itertools
import random

from xskbench import RunConfig
from xskbench.run import run

FAULTS = {
    "none": {},
    "lost": {"faults.irq_lost_prob": 0.3},
    "late": {"faults.irq_late_prob": 0.3, "faults.irq_late_us": 5.0},
    "stall": {"faults.stall_us": 20.0, "faults.stall_period_us": 200.0},
    "fill": {"faults.fill_stop_us": 50.0, "faults.fill_stop_period_us": 300.0},
}


def grid():
    """The configurations, in a fixed order (seeded)."""
    rng = random.Random(7)
    out = []
    for wl, wake, host, bp, fault, nw in itertools.product(
            ["txonly", "rxdrop", "l2fwd"], ["local", "ipi", "inline"],
            ["vhost-user", "vhost-net"], [False, True], list(FAULTS), [True, False]):
        if bp and wl == "txonly":
            continue
        kw = {"workload.kind": wl, "virtio.wakeup": wake, "virtio.host": host,
              "xsk.busy_poll": bp, "xsk.need_wakeup": nw, "workload.duration_s": 0.002,
              "workload.warmup_s": 0.0003, "workload.seed": rng.randint(1, 99), **FAULTS[fault]}
        if fault == "stall":
            kw["faults.stall_context"] = rng.choice(["host", "app"])
        if rng.random() < 0.3:
            kw["workload.rate_pps"] = rng.choice([1e5, 1e6, 3e6])
        if rng.random() < 0.3:
            kw["virtio.app_cpu"] = rng.choice([1, 2])
        if rng.random() < 0.2:
            kw["mq.queues"] = 2
        if rng.random() < 0.2:
            kw["virtio.queue_size"] = 64
        for mode in (["zerocopy", "copy"] if rng.random() < 0.3 else ["zerocopy"]):
            try:
                out.append(RunConfig(device="virtio-net", mode=mode).replace(**kw))
            except ValueError:  # a combination the config refuses (e.g. fill faults, txonly)
                continue
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--show", type=int, nargs="*", default=[])
    args = ap.parse_args()
    cfgs = grid()
    if args.show:
        for i in args.show:
            print(i, cfgs[i - 1])
        return
    bad = [i for i, c in enumerate(cfgs, 1)
           if run(c).to_json_text() != run(c, fast_forward=False).to_json_text()]
    print(f"{len(bad)} of {len(cfgs)} differ with fast_forward=False: {bad}")


if __name__ == "__main__":
    main()
