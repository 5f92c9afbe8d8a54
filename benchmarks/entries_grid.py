"""Engine entries per packet moved, per context, over a grid of configurations.

Where is a polling context entered once per packet or more? Every device x mode x workload
and the knobs that decide who polls whom (virtio-net wakeup and host; tun peer, guest and
zero-copy version; veth peer and batching; busy poll and need_wakeup everywhere), 1 ms
emulated each.

    .venv/bin/python benchmarks/entries_grid.py               # rows above 0.5 entries/packet
    .venv/bin/python benchmarks/entries_grid.py --device tun --above 0

An entry is one call of a context's quantum (``bench.entries``): its cost is the emulator's,
whatever the quantum did. A context entered per packet is either one event per packet in
the model (a write() per packet on a tap fd) or a spinner the fast-forward does not skip (an
idle spin that never replays, a horizon that stops at every poll of another spinner): the
grid found four of those on 7 Dec (README, Performance). Knob combinations a device ignores
(virtio-net's pmd mode and the guest's wakeup) print once each: the rows are deduplicated
by their counts."""
import argparse
import itertools
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench import entries  # noqa: E402  (it puts the working tree first on sys.path)

from xskbench import RunConfig  # noqa: E402
from xskbench.devices import DEVICES  # noqa: E402

KNOBS = {
    "virtio-net": {"virtio.wakeup": ["local", "ipi", "inline"],
                   "virtio.host": ["vhost-user", "vhost-net"]},
    "null": {},
    "tun": {"tun.peer": ["vhost", "fd"], "tun.guest": ["napi", "pmd"], "tun.zc_version": [1, 2]},
    "veth": {"veth.peer": ["bridge", "xdp_drop"], "veth.batch": [False, True]},
}
EVERYWHERE = {"xsk.busy_poll": [False, True], "xsk.need_wakeup": [True, False]}


def configs(device):
    """Every valid combination of ``device``'s modes, workloads and knobs (1 ms runs)."""
    dev, knobs = DEVICES[device], {**KNOBS[device], **EVERYWHERE}
    for mode, kind in itertools.product(dev.modes, dev.workloads):
        for values in itertools.product(*knobs.values()):
            settings = {"workload.kind": kind, "workload.duration_s": 0.001,
                        "workload.warmup_s": 0.0001, **dict(zip(knobs, values, strict=True))}
            try:
                yield RunConfig(device=device, mode=mode).replace(**settings), settings
            except ValueError:  # a combination the config refuses
                continue


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--device", choices=sorted(KNOBS), action="append")
    ap.add_argument("--above", type=float, default=0.5,
                    help="print rows whose entries per packet exceed this (default 0.5)")
    args = ap.parse_args()
    rows, seen = [], set()
    for device in args.device or list(KNOBS):
        for cfg, settings in configs(device):
            entered, _, packets = entries(cfg)
            per = {c: n / max(packets, 1) for c, n in sorted(entered.items())}
            key = (device, cfg.mode, cfg.workload.kind, packets, tuple(sorted(entered.items())))
            if sum(per.values()) <= args.above or key in seen:
                continue
            seen.add(key)
            parts = " ".join(f"{c} {v:.2f}" for c, v in per.items())
            knobs = " ".join(f"{k.split('.')[1]}={v}" for k, v in settings.items()
                             if not k.startswith("workload."))
            rows.append((sum(per.values()), f"{device} {cfg.mode} {cfg.workload.kind}",
                         knobs, parts))
    for total, case, knobs, parts in sorted(rows, reverse=True):
        print(f"{total:6.2f}  {case:28s} {parts:40s} {knobs}")
    print(f"{len(rows)} rows above {args.above} entries per packet")


if __name__ == "__main__":
    main()
