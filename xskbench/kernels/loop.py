"""The one simulation loop every device runs (kernels/engine.py, kernels/multiq.py).

A device kernel provides ``quantum(m, cc, cb, c)``: one quantum of its context ``c`` in arena
``m`` (``begin`` has run; ``finish`` runs after). It then calls ``loop.define(globals())``,
which compiles :data:`SOURCE` into its module as ``run_chunk(M, OFF, cc, cb, events)``.

``run_chunk`` executes at most ``events`` quanta and returns how many it ran: fewer means the
run reached its end. Stopping between two quanta and resuming is exact (the next ``pick``
starts from the same arena), so the Python driver (``xskbench/run.py``) runs a long emulation
in chunks: Ctrl-C lands between chunks, a progress line is drawn, an event budget enforced.

Why a template: numba caches a loop that calls ``quantum`` only if ``quantum`` is a global of
the loop's module; passed as an argument, it would recompile in every process whenever the
quantum draws random numbers ("dynamic globals"); a closure is not cached either. Compiled
under the device file's name, ``run_chunk`` is cached beside the device's other functions.
"""
import sys

from .engine import begin, finish, fold, sample
from .jit import njit
from .layout import H_END, H_NOW
from .multiq import pick, share

__all__ = ["begin", "define", "finish", "fold", "njit", "pick", "progress", "sample", "share"]

SOURCE = '''
@_loop.njit(cache=True)
def run_chunk(M, OFF, cc, cb, events):
    """Run up to ``events`` quanta over every queue's arena; returns the number run."""
    for i in range(events):
        q, c = _loop.pick(M, OFF)
        if c < 0:
            return i
        m = M[OFF[q]:OFF[q + 1]]
        _loop.begin(m, c)
        quantum(m, cc, cb, c)
        hzn = _loop.fold(m, c, -1)
        while hzn >= 0:  # it runs again before anyone else could: no trip to the scheduler
            quantum(m, cc, cb, c)
            hzn = _loop.fold(m, c, hzn)
        _loop.finish(m, c)
        _loop.sample(m)
        _loop.share(M, OFF, q, c)
    return events
'''


def define(namespace):
    """Compile ``run_chunk`` into a device kernel module (its ``globals()``), calling the
    module's ``quantum``."""
    namespace["_loop"] = sys.modules[__name__]
    exec(compile(SOURCE, namespace["__file__"], "exec"), namespace)


@njit(cache=True)
def progress(M, OFF):
    """How far the run is: each queue's latest quantum start as a fraction of the end, averaged
    over the queues (queues on CPUs of their own run ahead of one another, multiq.pick: any
    queue's step moves it)."""
    done = 0.0
    nq = len(OFF) - 1
    for q in range(nq):
        m = M[OFF[q]:OFF[q + 1]]
        done += min(1.0, m[H_NOW] / max(m[H_END], 1))
    return done / nq
