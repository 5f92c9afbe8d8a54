"""The last-level cache the queues share (testbed.llc_mb; queues.llc_miss_ppm gives each
queue's miss share): packet bytes the CPU copies beyond a queue's part come from memory."""
from .. import ops as op
from .engine import charge
from .jit import njit


@njit(cache=True)
def llc_miss(m, cc, cb, ppm, nbytes):
    """Charge the ``ppm`` per million of ``nbytes`` copied that the LLC share does not hold."""
    if ppm:
        charge(m, cc, cb, op.LLC_MISS, 1, nbytes * ppm // 1000000)
