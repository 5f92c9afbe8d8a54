"""``run(config)``: build the arena, run the device's kernel, collect the result."""
import numpy as np

from . import costs, faults
from .devices import DEVICES
from .results import collect


def run(cfg):
    prof = costs.for_config(cfg)
    return emulate(cfg, prof, (cfg.testbed.cpu_ghz or prof.cpu_ghz) * 1e9)


def emulate(cfg, prof, hz):
    """One run of ``cfg`` with the cost profile ``prof`` on a ``hz`` CPU."""
    dev = DEVICES.get(cfg.device)
    if dev is None:
        raise ValueError(f"device={cfg.device!r}: not emulated; have {', '.join(DEVICES)}")
    cc, cb = prof.arrays(run_speed(cfg))
    mach = dev.setup(cfg, hz, cc, cb)
    dev.simulate(mach, cc, cb)
    res = collect(cfg, mach, prof, cc, cb, dev.packets_in_flight(mach))
    if (fault_report := faults.report(cfg, mach)) is not None:
        res.extra["faults"] = fault_report
    return res


def run_speed(cfg):
    """This run's cost factor: one seeded draw of the testbed's run-to-run spread (clock and
    memory-placement effects that hold for a whole run and that the ops do not model)."""
    spread = cfg.testbed.run_spread
    if spread == 0:
        return 1.0
    return float(1.0 + spread * np.random.default_rng(cfg.workload.seed).standard_normal())
