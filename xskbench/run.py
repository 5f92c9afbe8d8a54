"""``run(config)``: build the arena, run the device's kernel, collect the result."""
import numpy as np

from . import costs, faults, queues
from .devices import get as get_device
from .results import collect

SPREAD_SIGMAS = 3.0  # run_speed's draw is cut here: a cost factor is never <= 0


def run(cfg):
    prof = costs.for_config(cfg)
    return emulate(cfg, prof, (cfg.testbed.cpu_ghz or prof.cpu_ghz) * 1e9)


def emulate(cfg, prof, hz):
    """One run of ``cfg`` with the cost profile ``prof`` on a ``hz`` CPU."""
    dev = get_device(cfg.device)
    cc, cb = prof.arrays(run_speed(cfg))
    cfgs = queues.queue_configs(cfg)
    machs = simulate(dev, cfgs, hz, cc, cb)
    return queues.combine(cfg, [_collect(dev, c, mach, prof, cc, cb)
                                for c, mach in zip(cfgs, machs, strict=True)])


def _collect(dev, cfg, mach, prof, cc, cb):
    """One queue's Result, with its fault windows and recovery times if a fault is on."""
    res = collect(cfg, mach, prof, cc, cb, dev.impl.packets_in_flight(mach))
    if (fault_report := faults.report(cfg, mach)) is not None:
        res.extra["faults"] = fault_report
    return res


def simulate(dev, cfgs, hz, cc, cb):
    """Build one arena per queue config and run them all on one timeline."""
    machs = [dev.impl.setup(c, hz, cc, cb) for c in cfgs]
    dev.kernel.simulate(*queues.arenas(machs, cfgs[0]), cc, cb)
    return machs


def run_speed(cfg):
    """This run's cost factor: one seeded draw of the testbed's run-to-run spread (clock and
    memory-placement effects that hold for a whole run and that the ops do not model).

    The normal draw is truncated at ``SPREAD_SIGMAS`` (redrawn beyond it) so that the factor
    stays positive for every seed: testbed.run_spread <= 0.2 keeps it within 1 +- 0.6."""
    spread = cfg.testbed.run_spread
    if spread == 0:
        return 1.0
    rng = np.random.default_rng(cfg.workload.seed)
    z = rng.standard_normal()
    while abs(z) > SPREAD_SIGMAS:
        z = rng.standard_normal()
    return float(1.0 + spread * z)
