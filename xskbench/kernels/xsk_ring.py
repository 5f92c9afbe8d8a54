"""The AF_XDP single-producer/single-consumer ring (net/xdp/xsk_queue.h, libxdp xsk.h).

A ring at arena offset ``o`` holds u32 free-running ``producer``/``consumer`` words shared by
both sides, and each side's private cached copy of both. Indices are masked by ``size - 1``
only when an entry is addressed. A side refreshes its cached view of the other side's word
only when its cached view cannot satisfy the request — as the kernel and libxdp do.

Causality: every entry records the virtual time it was published (producer submit) and
released (consumer release). A side refreshing at time ``now`` sees only what the other side
had published by ``now``, so nothing is consumed before it exists.
"""
from .jit import ix, njit
from .layout import H_QREFRESH, M32
from .steady import unsteady

(R_SIZE, R_MASK, R_PROD, R_CONS, R_PCPROD, R_PCCONS, R_CCPROD, R_CCCONS, R_FLAGS,
 R_REFRESH, R_UNUSED1, R_UNUSED2) = range(12)
R_HDR = 12
NEED_WAKEUP = 1  # XDP_RING_NEED_WAKEUP


def ring_words(size):
    return R_HDR + 4 * size


@njit(cache=True)
def ring_init(m, o, size, start):
    """Empty ring of ``size`` entries whose indices all start at ``start`` (u32)."""
    start &= M32
    m[ix(o + R_SIZE)] = size
    m[ix(o + R_MASK)] = size - 1
    for k in range(R_PROD, R_FLAGS):
        m[ix(o + k)] = start
    m[ix(o + R_FLAGS)] = 0
    m[ix(o + R_REFRESH)] = 0


@njit(cache=True, inline="always")
def _slot(m, o, idx, field):
    return o + R_HDR + field * m[ix(o + R_SIZE)] + (idx & m[ix(o + R_MASK)])


@njit(cache=True, inline="always")
def _stamp(m, o, i, end, field, now):
    """Stamp the entries [i, end) with ``now`` (geometry read once: the hot loop)."""
    size, mask = m[ix(o + R_SIZE)], m[ix(o + R_MASK)]
    base = o + R_HDR + field * size
    n = (end - i) & M32
    for k in range(n):
        m[ix(base + ((i + k) & mask))] = now


@njit(cache=True, inline="always")
def geometry(m, o):
    """(address-field base, length-field base, mask) of a ring, for loops over entries."""
    size = m[ix(o + R_SIZE)]
    return o + R_HDR, o + R_HDR + size, m[ix(o + R_MASK)]


@njit(cache=True)
def ring_addr(m, o, idx):
    return m[ix(_slot(m, o, idx, 0))]


@njit(cache=True)
def ring_len(m, o, idx):
    return m[ix(_slot(m, o, idx, 1))]


@njit(cache=True)
def ring_write(m, o, idx, addr, length):
    m[ix(_slot(m, o, idx, 0))] = addr
    m[ix(_slot(m, o, idx, 1))] = length


@njit(cache=True, inline="always")
def _refresh(m, o, cached, v):
    """A side's cached view of the other side's word becomes ``v`` (counted: the refresh
    reads the other side's cache line). Returns whether the view moved: the caller marks
    the quantum ``unsteady`` (no idle spin to replay, engine.spin_until) when the moved
    view now covers its request, as the same request in the next poll is then met without
    a refresh. A view that moved but still falls short is refreshed again by the next poll,
    which sees what this one saw: that poll is the same."""
    moved = v != m[ix(o + cached)]
    m[ix(o + cached)] = v
    m[ix(o + R_REFRESH)] += 1
    m[H_QREFRESH] += 1
    return moved


@njit(cache=True)
def _visible(m, o, shared, known, tfield, now):
    """The other side's word as seen at ``now``: short of the entries stamped later."""
    w = m[ix(o + shared)]
    if w == known or m[ix(_slot(m, o, (w - 1) & M32, tfield))] <= now:
        return w  # all of it (the usual case)
    return (known + _first_after(m, o, known, (w - known) & M32, tfield, now)) & M32


@njit(cache=True, inline="always")
def _prod_word(m, o, now):
    """The producer word as the consumer would see it refreshed at ``now``."""
    return _visible(m, o, R_PROD, m[ix(o + R_CCPROD)], 2, now)


@njit(cache=True, inline="always")
def _cons_word(m, o, now):
    """The consumer word as the producer would see it refreshed at ``now``."""
    return _visible(m, o, R_CONS, m[ix(o + R_PCCONS)], 3, now)


@njit(cache=True, inline="always")
def _first_after(m, o, lo, n, field, now):
    """The first k in [0, n) whose entry ``lo + k`` is stamped after ``now`` (n if none).
    Stamps grow along the ring, so a search finds it: galloping from ``lo`` (a poller
    usually finds the first one or two entries visible, however many are stamped ahead),
    then binary within the last step."""
    a, b, step = 0, 0, 1  # entries before a are stamped by now; b: the first one tried after
    while b < n and m[ix(_slot(m, o, (lo + b) & M32, field))] <= now:
        a = b + 1
        b += step
        step += step
    b = min(b, n)
    while a < b:
        mid = (a + b) // 2
        if m[ix(_slot(m, o, (lo + mid) & M32, field))] > now:
            b = mid
        else:
            a = mid + 1
    return a


# --- producer side ------------------------------------------------------------------------
@njit(cache=True, inline="always")
def prod_free_cached(m, o):
    """Free slots as the producer's cached view of the consumer has them (no refresh)."""
    return m[ix(o + R_SIZE)] - ((m[ix(o + R_PCPROD)] - m[ix(o + R_PCCONS)]) & M32)


@njit(cache=True)
def prod_nb_free(m, o, n, now):
    """xskq_prod_nb_free: free slots, refreshing cached_cons only if fewer than ``n``."""
    free = prod_free_cached(m, o)
    if free >= n:
        return free
    moved = _refresh(m, o, R_PCCONS, _cons_word(m, o, now))
    free = prod_free_cached(m, o)
    if moved and free >= n:
        unsteady(m)
    return free


@njit(cache=True)
def prod_would_free(m, o, n, now):
    """What ``prod_nb_free`` would return at ``now``, refreshing nothing."""
    free = prod_free_cached(m, o)
    if free >= n:
        return free
    return m[ix(o + R_SIZE)] - ((m[ix(o + R_PCPROD)] - _cons_word(m, o, now)) & M32)


@njit(cache=True)
def prod_reserve(m, o, n, now):
    """Reserve up to ``n`` slots; returns (count, first index). xsk_ring_prod__reserve
    reserves all or nothing; callers wanting that pass ``n`` only when it fits."""
    k = min(n, prod_nb_free(m, o, n, now))
    idx = m[ix(o + R_PCPROD)]
    m[ix(o + R_PCPROD)] = (idx + k) & M32
    return k, idx


@njit(cache=True)
def prod_submit(m, o, now):
    """__xskq_prod_submit: publish everything reserved so far, stamped ``now``."""
    end = m[ix(o + R_PCPROD)]
    _stamp(m, o, m[ix(o + R_PROD)], end, 2, now)
    m[ix(o + R_PROD)] = end


@njit(cache=True)
def prod_submit_n(m, o, n, now):
    """xskq_prod_submit_n: publish the next ``n`` reserved entries (in-order completion)."""
    i = m[ix(o + R_PROD)]
    end = (i + n) & M32
    _stamp(m, o, i, end, 2, now)
    m[ix(o + R_PROD)] = end


@njit(cache=True)
def prod_cancel(m, o, n):
    """xskq_prod_cancel_n: give back ``n`` reserved, unpublished slots."""
    m[ix(o + R_PCPROD)] = (m[ix(o + R_PCPROD)] - n) & M32


# --- consumer side ------------------------------------------------------------------------
@njit(cache=True, inline="always")
def cons_avail_cached(m, o):
    """Entries the consumer's cached view of the producer has ready (no refresh)."""
    return (m[ix(o + R_CCPROD)] - m[ix(o + R_CCCONS)]) & M32


@njit(cache=True)
def cons_nb_avail(m, o, n, now):
    """xskq_cons_nb_entries: entries ready, refreshing cached_prod only if fewer than ``n``."""
    avail = cons_avail_cached(m, o)
    if avail < n:
        moved = _refresh(m, o, R_CCPROD, _prod_word(m, o, now))
        avail = cons_avail_cached(m, o)
        if moved and avail >= n:
            unsteady(m)
    return min(avail, n)


@njit(cache=True)
def cons_would_see(m, o, n, now):
    """What ``cons_nb_avail`` would return at ``now``, refreshing nothing."""
    avail = cons_avail_cached(m, o)
    if avail < n:
        avail = (_prod_word(m, o, now) - m[ix(o + R_CCCONS)]) & M32
    return min(avail, n)


@njit(cache=True)
def cons_peek(m, o, n, now):
    """Peek up to ``n`` entries: returns (count, first index) and advances cached_cons."""
    k = cons_nb_avail(m, o, n, now)
    idx = m[ix(o + R_CCCONS)]
    m[ix(o + R_CCCONS)] = (idx + k) & M32
    return k, idx


@njit(cache=True)
def cons_release(m, o, now):
    """__xskq_cons_release: publish the consumer word, stamping the freed slots ``now``."""
    end = m[ix(o + R_CCCONS)]
    _stamp(m, o, m[ix(o + R_CONS)], end, 3, now)
    m[ix(o + R_CONS)] = end


@njit(cache=True)
def cons_cancel(m, o, n):
    """xskq_cons_cancel_n: un-read ``n`` peeked, unreleased entries (xmit said busy)."""
    m[ix(o + R_CCCONS)] = (m[ix(o + R_CCCONS)] - n) & M32


@njit(cache=True)
def ring_entries(m, o):
    """Entries published and not yet released (what a ring-occupancy plot shows)."""
    return (m[ix(o + R_PROD)] - m[ix(o + R_CONS)]) & M32


@njit(cache=True)
def set_flag(m, o, on):
    if on:
        m[ix(o + R_FLAGS)] |= NEED_WAKEUP
    else:
        m[ix(o + R_FLAGS)] &= ~NEED_WAKEUP


@njit(cache=True)
def needs_wakeup(m, o):
    return (m[ix(o + R_FLAGS)] & NEED_WAKEUP) != 0


@njit(cache=True)
def next_stamp(m, o, producer, now):
    """For one side (the producer's or the consumer's): when the next move the other side
    already made becomes visible after ``now`` — the first stamp later than ``now`` among the
    entries published (or slots released) that this side has not seen; 2**62 if none."""
    if producer:
        lo, hi, field = m[ix(o + R_PCCONS)], m[ix(o + R_CONS)], 3
    else:
        lo, hi, field = m[ix(o + R_CCPROD)], m[ix(o + R_PROD)], 2
    n = (hi - lo) & M32
    a = _first_after(m, o, lo, n, field, now)
    if a == n:
        return 2**62
    return m[ix(_slot(m, o, (lo + a) & M32, field))]


@njit(cache=True)
def free_at(m, o, nd):
    """For the producer: when ``nd`` slots are free, counting only what the consumer has
    released already (the stamp of the release that frees the ``nd``-th slot); 2**62 if the
    consumer has not released that far. A producer reserving all or nothing (xsk_ring_prod__
    reserve) sees nothing new before then: fewer free slots are as good as none."""
    need = nd - prod_free_cached(m, o)
    if need <= 0:
        return 0
    if need > ((m[ix(o + R_CONS)] - m[ix(o + R_PCCONS)]) & M32):
        return 2**62
    return m[ix(_slot(m, o, (m[ix(o + R_PCCONS)] + need - 1) & M32, 3))]
