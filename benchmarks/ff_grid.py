"""Fast-forward exactness over grids of configurations (2 ms runs): for virtio-net every
wakeup, host, workload, busy poll, need_wakeup and fault kind (seeded choices of rate, CPU
placement, queues and ring size); for null, tun and veth every mode, workload, busy poll,
need_wakeup and fault kind (seeded choices of the device's own knobs). Prints the 1-based
indices whose results differ with ``fast_forward=False``; ``--show I ...`` prints those
configurations' settings.

    .venv/bin/python benchmarks/ff_grid.py                  # virtio-net, 326 configurations
    .venv/bin/python benchmarks/ff_grid.py --device tun     # or null, veth
    .venv/bin/python benchmarks/ff_grid.py --random 300 --seed 2   # the property tests' draws

tests/test_fastforward.py holds the defaults and the cases these grids found; the grids are
the wider net (10-60 s each), run by hand after a change to the engine's shortcuts.
``--random N`` draws N configurations instead, every device/mode/workload in turn, by the
strategy of tests/test_properties.py (every section, extreme values included), and saves
the differing ones as JSON (``--save``)."""
import argparse
import itertools
import json
import random
from pathlib import Path

from xskbench import RunConfig
from xskbench.run import run

FAULTS = {
    "none": {},
    "lost": {"faults.irq_lost_prob": 0.3},
    "late": {"faults.irq_late_prob": 0.3, "faults.irq_late_us": 5.0},
    "stall": {"faults.stall_us": 20.0, "faults.stall_period_us": 200.0},
    "fill": {"faults.fill_stop_us": 50.0, "faults.fill_stop_period_us": 300.0},
}


def grid(device="virtio-net"):
    """The configurations of ``device``, in a fixed order (seeded)."""
    if device != "virtio-net":
        return _other_grid(device)
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


# each device's own knobs the other grids draw from (seeded), beside mode and workload
KNOBS = {
    "null": {"null.napi_budget": [8, 64, 256], "null.ring_size": [64, 1024],
             "null.app_cpu": [0, 1], "workload.rate_pps": [None, 1e6, 2e7]},
    "tun": {"tun.peer": ["vhost", "fd"], "tun.zc_version": [1, 2], "tun.guest": ["napi", "pmd"],
            "tun.xdp_mode": ["native", "skb"], "tun.tx_queue_len": [64, 500],
            "workload.rate_pps": [None, 1e6]},
    "veth": {"veth.peer": ["bridge", "xdp_drop"], "veth.batch": [False, True],
             "veth.xdp_mode": ["native", "skb"], "veth.ptr_ring_size": [64, 256],
             "workload.rate_pps": [None, 1e5]},
}


def _other_grid(device):
    from xskbench.devices import DEVICES

    dev = DEVICES[device]
    rng = random.Random(11)
    out = []
    for mode, wl, bp, fault, nw in itertools.product(
            dev.modes, dev.workloads, [False, True], list(FAULTS), [True, False]):
        kw = {"workload.kind": wl, "xsk.busy_poll": bp, "xsk.need_wakeup": nw,
              "workload.duration_s": 0.002, "workload.warmup_s": 0.0003,
              "workload.seed": rng.randint(1, 99), **FAULTS[fault]}
        if fault == "stall":
            kw["faults.stall_context"] = rng.choice(["host", "app"])
        for _ in range(20):  # redraw the knobs of a combination the config refuses
            draw = {knob: rng.choice(values) for knob, values in KNOBS[device].items()}
            if rng.random() < 0.2:
                draw["mq.queues"] = 2
            try:
                out.append(RunConfig(device=device, mode=mode).replace(**kw, **draw))
                break
            except ValueError:
                continue
    return out


def _differs(cfg):
    return run(cfg).to_json_text() != run(cfg, fast_forward=False).to_json_text()


def random_sweep(n, seed, save):
    """``n`` configurations drawn like the property tests'; the differing ones go to ``save``."""
    from soak import draw_configs  # the property tests' strategy (it puts tests/ on the path)

    seen, bad = [0], []

    def check(combo, cfg):
        seen[0] += 1
        if _differs(cfg):
            bad.append(json.loads(cfg.to_json()))
            print("differs:", "/".join(combo), flush=True)

    draw_configs(n, seed, check)
    Path(save).write_text(json.dumps(bad, indent=1))
    print(f"{len(bad)} of {seen[0]} random configurations differ with fast_forward=False "
          f"(saved to {save})")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--show", type=int, nargs="*", default=[])
    ap.add_argument("--device", default="virtio-net",
                    choices=("virtio-net", "null", "tun", "veth"))
    ap.add_argument("--random", type=int, default=0, metavar="N",
                    help="N configurations drawn like the property tests' instead of a grid")
    ap.add_argument("--seed", type=int, default=0, help="the random draws' seed (0)")
    ap.add_argument("--save", default="ff-differ.json", help="where --random saves the differing")
    args = ap.parse_args()
    if args.random:
        random_sweep(args.random, args.seed, args.save)
        return
    cfgs = grid(args.device)
    if args.show:
        for i in args.show:
            print(i, cfgs[i - 1])
        return
    bad = [i for i, c in enumerate(cfgs, 1) if _differs(c)]
    print(f"{len(bad)} of {len(cfgs)} differ with fast_forward=False: {bad}")


if __name__ == "__main__":
    main()
