"""``run(config)``: build the arena, run the device's kernel, collect the result."""
import sys
import time

import numpy as np

from . import costs, faults, queues
from .devices import get as get_device
from .kernels import layout as L
from .kernels import loop
from .results import collect

SPREAD_SIGMAS = 3.0  # run_speed's draw is cut here: a cost factor is never <= 0

# the kernel runs this many quanta per call: ~30-200 ms of wall, so Ctrl-C and the progress
# line get a turn that often while the per-call overhead stays negligible
CHUNK_EVENTS = 100_000


class EventBudgetExceeded(ValueError):
    """A run's quanta stopped moving virtual time: it would never end."""


def run(cfg, progress=False, fast_forward=True):
    """One run of ``cfg``; ``progress``: draw a progress line on a terminal's stderr when the
    run takes more than a second; ``fast_forward=False``: no shortcut (no idle-spin replay, no
    folding, no batched receive: the same result, quantum by quantum and packet by packet,
    tests/test_fastforward.py)."""
    prof = costs.for_config(cfg)
    return emulate(cfg, prof, (cfg.testbed.cpu_ghz or prof.cpu_ghz) * 1e9, progress,
                   fast_forward)


def emulate(cfg, prof, hz, progress=False, fast_forward=True):
    """One run of ``cfg`` with the cost profile ``prof`` on a ``hz`` CPU."""
    dev = get_device(cfg.device)
    cc, cb = prof.arrays(run_speed(cfg))
    cfgs = queues.queue_configs(cfg)
    machs = simulate(dev, cfgs, hz, cc, cb, progress, fast_forward)
    return queues.combine(cfg, [_collect(dev, c, mach, prof, cc, cb)
                                for c, mach in zip(cfgs, machs, strict=True)])


def _collect(dev, cfg, mach, prof, cc, cb):
    """One queue's Result, with its fault windows and recovery times if a fault is on."""
    res = collect(cfg, mach, prof, cc, cb, dev.impl.packets_in_flight(mach))
    if (fault_report := faults.report(cfg, mach)) is not None:
        res.extra["faults"] = fault_report
    return res


def simulate(dev, cfgs, hz, cc, cb, progress=False, fast_forward=True):
    """Build one arena per queue config and run them all on one timeline, in chunks of
    ``CHUNK_EVENTS`` quanta (kernels/loop.py): KeyboardInterrupt lands between two chunks."""
    machs = [dev.impl.setup(c, hz, cc, cb) for c in cfgs]
    for mach in machs:
        mach.m[L.H_NO_REPLAY] = int(not fast_forward)
    M, OFF = queues.arenas(machs, cfgs[0])
    duration = cfgs[0].workload.duration_s
    # the event budget: at most one quantum per cycle of every CPU (every quantum charges
    # some), and virtual time must move within every chunk; either way a run cannot hang
    budget = int(hz * duration * max(int(m.m[L.H_NCPU]) for m in machs)) + CHUNK_EVENTS
    bar = _ProgressLine(duration) if progress and sys.stderr.isatty() else None
    events, done = 0, loop.progress(M, OFF)
    try:
        while True:
            n = dev.kernel.run_chunk(M, OFF, cc, cb, CHUNK_EVENTS)
            events += n
            if n < CHUNK_EVENTS:
                break
            last, done = done, loop.progress(M, OFF)
            if events > budget or done <= last:
                why = (f"the last {n:,} quanta left virtual time where it was" if done <= last
                       else f"{events:,} quanta, over the budget of one per CPU cycle")
                raise EventBudgetExceeded(
                    f"the run is stuck at {done * duration:g} s of workload.duration_s="
                    f"{duration:g}: {why}; a context runs without time passing (allowed: "
                    "cost tables whose ops cost cycles)")
            if bar:
                bar.update(loop.progress(M, OFF))
    finally:
        if bar:
            bar.close()
    return machs  # each machine's arena is a view of its part of M


class _ProgressLine:
    """``emulated 0.42/1 s (42%)`` on stderr, redrawn in place; shown once the run has taken
    a second, so short runs print nothing."""

    def __init__(self, duration):
        self.duration, self.t0, self.shown = duration, time.monotonic(), False

    def update(self, done):
        if time.monotonic() - self.t0 < 1.0:
            return
        self.shown = True
        sys.stderr.write(f"\remulated {done * self.duration:.4g}/{self.duration:g} s "
                         f"({done:.0%})")
        sys.stderr.flush()

    def close(self):
        if self.shown:
            sys.stderr.write("\r\033[K")
            sys.stderr.flush()


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
