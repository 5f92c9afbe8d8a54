"""``run(config)``: validate (the config already is), build the arena, run the device's
kernel, collect the result."""
from . import costs
from .devices import DEVICES
from .results import collect


def run(cfg):
    dev = DEVICES.get(cfg.device)
    if dev is None:
        raise ValueError(f"device={cfg.device!r}: not emulated yet; have {', '.join(DEVICES)}")
    prof = costs.for_config(cfg)
    hz = (cfg.testbed.cpu_ghz or prof.cpu_ghz) * 1e9
    cc, cb = prof.arrays()
    mach = dev.setup(cfg, hz, cc, cb)
    dev.simulate(mach, cc, cb)
    return collect(cfg, mach, prof, cc, cb, dev.packets_in_flight(mach))
