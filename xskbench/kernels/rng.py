"""Each arena's own seeded stream of uniform numbers (interrupt, IPI and wakeup jitter; lost
and late interrupts).

SplitMix64 over a counter: draw k of an arena is a fixed function of its key (``H_SEED``: the
run's seed, and the queue in the high word) and k. So a queue's draws do not depend on
how its quanta interleave with other queues' (queues on CPUs of their own run ahead of one
another, ``multiq.pick``), and an idle-spin replay skips its draws by adding to the counter.
"""
import warnings

import numpy as np

from .jit import ix, njit
from .layout import H_RNG, H_SEED

GOLDEN = np.uint64(0x9E3779B97F4A7C15)
MIX1, MIX2 = np.uint64(0xBF58476D1CE4E5B9), np.uint64(0x94D049BB133111EB)
S30, S27, S31, S11 = np.uint64(30), np.uint64(27), np.uint64(31), np.uint64(11)
UNIT = 1.0 / 2.0**53
# run as plain Python (NUMBA_DISABLE_JIT), numpy warns when the products wrap, as they must
warnings.filterwarnings("ignore", "overflow encountered in scalar multiply", RuntimeWarning,
                        __name__)


@njit(cache=True)
def draw(m):
    """The arena's next number, uniform in [0, 1)."""
    m[H_RNG] += 1
    z = ix(m[H_SEED]) + ix(m[H_RNG]) * GOLDEN
    z = (z ^ (z >> S30)) * MIX1
    z = (z ^ (z >> S27)) * MIX2
    return float((z ^ (z >> S31)) >> S11) * UNIT


@njit(cache=True, inline="always")
def skip(m, n):
    """Advance the stream by ``n`` draws (their values unused)."""
    m[H_RNG] += n
