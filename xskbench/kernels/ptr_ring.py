"""The kernel's ptr_ring (include/linux/ptr_ring.h): tun's tfile->tx_ring, veth's xdp_ring.

A ring at arena offset ``o`` is an array of ``size`` pointers plus ``producer``,
``consumer_head`` and ``consumer_tail``. A NULL slot is free; the producer tests only its own
slot (``queue[producer]`` non-NULL → full, -ENOSPC). The consumer does not NULL a slot when
it takes it: ``__ptr_ring_discard_one`` zeroes consumed slots in batches of ``batch``
(2 cache lines of pointers = 16, or 1 when 16 > size/2), newest first, so the producer and
consumer do not share a cache line. The quirk: up to ``batch - 1`` consumed slots still look
occupied, so a ring of ``size`` can refuse a produce while holding fewer than ``size``.

Pointers are stored as ``value + 1`` so that 0 is NULL; a slot also holds a length and the
virtual time it was produced (a consumer at ``now`` does not see later entries).
"""
from .jit import ix, njit

P_SIZE, P_PROD, P_CHEAD, P_CTAIL, P_BATCH, P_COUNT = range(6)
P_HDR = 8
SMP_CACHE_BYTES = 64
PTR_BYTES = 8


def ptr_ring_words(size):
    return P_HDR + 3 * max(size, 1)


def batch_for(size):
    """ptr_ring_init's r->batch."""
    b = SMP_CACHE_BYTES * 2 // PTR_BYTES
    if b > size // 2 or b == 0:
        b = 1
    return b


@njit(cache=True)
def ptr_ring_init(m, o, size, batch):
    m[ix(o + P_SIZE)] = size
    m[ix(o + P_PROD)] = 0
    m[ix(o + P_CHEAD)] = 0
    m[ix(o + P_CTAIL)] = 0
    m[ix(o + P_BATCH)] = batch
    m[ix(o + P_COUNT)] = 0
    for i in range(3 * max(size, 1)):
        m[ix(o + P_HDR + i)] = 0


@njit(cache=True, inline="always")
def _q(m, o, i):
    return o + P_HDR + 3 * i


@njit(cache=True)
def ptr_ring_produce(m, o, value, length, t):
    """__ptr_ring_produce: -ENOSPC (False) when the producer's slot is not NULL."""
    size = m[ix(o + P_SIZE)]
    p = m[ix(o + P_PROD)]
    if size == 0 or m[ix(_q(m, o, p))] != 0:
        return False
    s = _q(m, o, p)
    m[ix(s)] = value + 1
    m[ix(s + 1)] = length
    m[ix(s + 2)] = t
    p += 1
    if p >= size:
        p = 0
    m[ix(o + P_PROD)] = p
    m[ix(o + P_COUNT)] += 1
    return True


@njit(cache=True)
def _discard_one(m, o):
    """__ptr_ring_discard_one: advance consumer_head; zero the consumed run in a batch."""
    size = m[ix(o + P_SIZE)]
    head = m[ix(o + P_CHEAD)] + 1
    tail = m[ix(o + P_CTAIL)]
    if head - tail >= m[ix(o + P_BATCH)] or head >= size:
        i = head
        while i > tail:  # zero in reverse so the producer never sees a hole first
            i -= 1
            m[ix(_q(m, o, i))] = 0
        m[ix(o + P_CTAIL)] = head
    if head >= size:
        head = 0
        m[ix(o + P_CTAIL)] = 0
    m[ix(o + P_CHEAD)] = head
    m[ix(o + P_COUNT)] -= 1


@njit(cache=True)
def ptr_ring_consume(m, o, now):
    """__ptr_ring_consume: (value, length), or (-1, 0) when empty (as seen at ``now``)."""
    if m[ix(o + P_SIZE)] == 0 or m[ix(o + P_COUNT)] == 0:
        return -1, 0
    s = _q(m, o, m[ix(o + P_CHEAD)])
    if m[ix(s)] == 0 or m[ix(s + 2)] > now:
        return -1, 0
    v, ln = m[ix(s)] - 1, m[ix(s + 1)]
    _discard_one(m, o)
    return v, ln


@njit(cache=True)
def ptr_ring_consume_batched(m, o, dst, n, now):
    """__ptr_ring_consume_batched: up to ``n`` (value, length) pairs into m[dst:]."""
    k = 0
    while k < n:
        v, ln = ptr_ring_consume(m, o, now)
        if v < 0:
            break
        m[ix(dst + 2 * k)] = v
        m[ix(dst + 2 * k + 1)] = ln
        k += 1
    return k


@njit(cache=True)
def ptr_ring_count(m, o):
    """Entries produced and not yet consumed (bookkeeping, not a kernel field)."""
    return m[ix(o + P_COUNT)]


@njit(cache=True)
def ptr_ring_free(m, o):
    """Slots the producer could fill now: NULL slots from ``producer`` on (the quirk:
    consumed slots not yet zeroed do not count)."""
    size = m[ix(o + P_SIZE)]
    p = m[ix(o + P_PROD)]
    k = 0
    while k < size and m[ix(_q(m, o, (p + k) % size))] == 0:
        k += 1
    return k
