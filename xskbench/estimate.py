"""How long emulation takes, before it starts: ``xskbench run`` and ``sweep`` print the
estimate of long work and refuse work above :data:`LIMIT_S` unless told ``--yes``.

The estimate is emulated time x queues x the device's emulation speed (wall seconds per
emulated second of one queue).  The speeds are the slowest mode/workload of each device in
a 20 ms run with a warm numba cache on a 2-core machine shared with other work (2026-12);
they are deliberately on the slow side.  Compilation (20-40 s per device kernel, once per
cache) is not included.
"""
from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

#: Wall seconds per emulated second per queue pair.
EMULATION_SPEED = {"null": 20.0, "virtio-net": 20.0, "tun": 4.0, "veth": 3.0}
NOTICE_S = 10.0    # print the estimate of work longer than this
LIMIT_S = 600.0    # refuse longer work unless --yes


def run_seconds(cfg: Any) -> float:
    """Estimated wall time of one run of ``cfg`` (a RunConfig or a full nested dict)."""
    if isinstance(cfg, Mapping):
        device, duration = cfg["device"], cfg["workload"]["duration_s"]
        queues = cfg["mq"]["queues"]
    else:
        device, duration, queues = cfg.device, cfg.workload.duration_s, cfg.mq.queues
    return duration * queues * EMULATION_SPEED.get(device, max(EMULATION_SPEED.values()))


def sweep_seconds(configs: Iterable[Any], slots: int = 1) -> float:
    """Estimated wall time of running ``configs`` on ``slots`` parallel workers."""
    return sum(run_seconds(c) for c in configs) / max(1, slots)


def _human(seconds: float) -> str:
    if seconds < 120:
        return f"{seconds:.0f} s"
    if seconds < 7200:
        return f"{seconds / 60:.0f} min"
    return f"{seconds / 3600:.1f} h"


def gate(seconds: float, what: str, yes: bool) -> str | None:
    """The line to print before ``what`` (None if it is quick); ValueError if it is
    estimated above LIMIT_S and not ``yes``."""
    if seconds > LIMIT_S and not yes:
        raise ValueError(f"{what} is estimated at {_human(seconds)} of emulation (more than "
                         f"{_human(LIMIT_S)}); add --yes to run it anyway")
    if seconds > NOTICE_S:
        return f"xskbench: {what}: estimated {_human(seconds)} of emulation"
    return None
