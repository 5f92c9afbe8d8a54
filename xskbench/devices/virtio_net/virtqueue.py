"""The split virtqueue (drivers/virtio/virtio_ring.c, *_split) as arena data structures.

A virtqueue at arena offset ``o``: a header, the descriptor table (addr, len, flags, next),
the avail ring (head, publish time), the used ring (id, len, publish time) and per-head
state (token, chain length, indirect sg count). Free descriptors form a chain through
``next`` (``free_head``). A multi-sg buffer with ``VIRTIO_RING_F_INDIRECT_DESC`` takes one
ring slot and an indirect table: kmalloc'd per packet and kfree'd on detach, or, with the
desc cache (Xuan Zhuo's "virtio support cache indirect desc", not merged), popped from and
pushed back to a per-vq free list when ``sg <= threshold``.

These functions only move data and return what happened; the driver that calls them charges
the ops (kernel driver and DPDK PMD charge differently). Both sides see the other side's
ring index only as of the virtual time it was published (entries carry publish stamps).
Indices are free running; ``vring_need_event`` works on their u16 values (EVENT_IDX).
"""
from xskbench.kernels.engine import stir
from xskbench.kernels.jit import ix, njit

(
    Q_NUM, Q_NUM_FREE, Q_FREE_HEAD, Q_AVAIL_IDX, Q_LAST_USED, Q_USED_IDX, Q_LAST_AVAIL,
    Q_AVAIL_EVENT, Q_USED_EVENT, Q_KICK_OLD, Q_CB_ON, Q_EVENT, Q_INDIRECT, Q_CACHE_ON,
    Q_CACHE_THR, Q_CACHE_N, Q_NO_NOTIFY, Q_SIG_OLD, Q_TBL_LIVE, Q_INUSE,
) = range(20)
QH = 24
F_NEXT, F_WRITE, F_INDIRECT = 1, 2, 4
# what vq_add did with an indirect table (the driver charges accordingly)
ADD_DIRECT, ADD_KMALLOC, ADD_CACHE = 0, 1, 2
FREE_NONE, FREE_KFREE, FREE_CACHE = 0, 1, 2
U16 = 0xFFFF


def vq_words(num):
    return QH + 4 * num + 2 * num + 3 * num + 3 * num


@njit(cache=True, inline="always")
def _desc(m, o, i):
    return o + QH + 4 * i


@njit(cache=True, inline="always")
def _avail(m, o, idx):
    return _avail_at(o, m[ix(o + Q_NUM)], idx)


@njit(cache=True, inline="always")
def _used(m, o, idx):
    return _used_at(o, m[ix(o + Q_NUM)], idx)


@njit(cache=True, inline="always")
def _head(m, o, h):
    return _head_at(o, m[ix(o + Q_NUM)], h)


# the same from a ring size read once (a hot function's local: the arena's stores would
# make the compiled code read it again at every use)
@njit(cache=True, inline="always")
def _avail_at(o, num, idx):
    return o + QH + 4 * num + 2 * (idx & (num - 1))


@njit(cache=True, inline="always")
def _used_at(o, num, idx):
    return o + QH + 6 * num + 3 * (idx & (num - 1))


@njit(cache=True, inline="always")
def _head_at(o, num, h):
    return o + QH + 9 * num + 3 * h


@njit(cache=True)
def vq_init(m, o, num, event, indirect, cache_on, cache_thr):
    """An empty queue of ``num`` (pow2) descriptors; callbacks off until the driver asks."""
    for i in range(QH + 12 * num):
        m[ix(o + i)] = 0
    m[ix(o + Q_NUM)] = num
    m[ix(o + Q_NUM_FREE)] = num
    for i in range(num):
        m[ix(_desc(m, o, i) + 3)] = i + 1
    m[ix(o + Q_EVENT)] = event
    m[ix(o + Q_INDIRECT)] = indirect
    m[ix(o + Q_CACHE_ON)] = cache_on
    m[ix(o + Q_CACHE_THR)] = cache_thr
    m[ix(o + Q_CACHE_N)] = num if cache_on else 0  # virtqueue_set_desc_cache: num tables


@njit(cache=True, inline="always")
def need_event(event, new, old):
    """vring_need_event on u16 indices."""
    return ((new - event - 1) & U16) < ((new - old) & U16)


# --- driver side -----------------------------------------------------------------------------
@njit(cache=True)
def vq_slots_for(m, o, nsg):
    """Ring slots one buffer of ``nsg`` sgs takes (virtqueue_use_indirect)."""
    if m[ix(o + Q_INDIRECT)] and nsg > 1:
        return 1
    return nsg


@njit(cache=True)
def vq_add(m, o, token, nsg, length, write, t):
    """virtqueue_add_split: returns ADD_* (what the indirect table came from), or -1 when
    the ring has no room (-ENOSPC). The avail idx is published at ``t``."""
    num_free, num = m[ix(o + Q_NUM_FREE)], m[ix(o + Q_NUM)]
    indirect = m[ix(o + Q_INDIRECT)] and nsg > 1 and num_free > 0
    need = 1 if indirect else nsg
    if num_free < need:
        return -1
    head = m[ix(o + Q_FREE_HEAD)]
    how = ADD_DIRECT
    d = _desc(m, o, head)
    if indirect:
        m[ix(d)] = token
        m[ix(d + 1)] = length  # the payload length the device reads (vq_head_len)
        m[ix(d + 2)] = F_INDIRECT
        m[ix(o + Q_FREE_HEAD)] = m[ix(d + 3)]
        if m[ix(o + Q_CACHE_ON)] and nsg <= m[ix(o + Q_CACHE_THR)] and m[ix(o + Q_CACHE_N)] > 0:
            m[ix(o + Q_CACHE_N)] -= 1
            how = ADD_CACHE
        else:
            m[ix(o + Q_TBL_LIVE)] += 1
            how = ADD_KMALLOC
    else:
        for s in range(nsg):
            m[ix(d)] = token
            m[ix(d + 1)] = length if s == nsg - 1 else 12
            m[ix(d + 2)] = (F_NEXT if s < nsg - 1 else 0) | (F_WRITE if write else 0)
            if s < nsg - 1:
                d = _desc(m, o, m[ix(d + 3)])
        m[ix(o + Q_FREE_HEAD)] = m[ix(d + 3)]
    m[ix(o + Q_NUM_FREE)] = num_free - need
    h = _head_at(o, num, head)
    m[ix(h)] = token
    m[ix(h + 1)] = need
    m[ix(h + 2)] = nsg if indirect else 0
    m[ix(o + Q_INUSE)] += 1
    idx = m[ix(o + Q_AVAIL_IDX)]
    a = _avail_at(o, num, idx)
    m[ix(a)] = head
    m[ix(a + 1)] = t
    m[ix(o + Q_AVAIL_IDX)] = idx + 1
    return how


@njit(cache=True)
def vq_head_len(m, o, head):
    """The payload length the device reads from a buffer: its last sg (an indirect buffer's
    head carries it; a chain is followed to its end: its head is the 12-byte vnet header)."""
    d = _desc(m, o, head)
    for _ in range(m[ix(_head(m, o, head) + 1)] - 1):
        d = _desc(m, o, m[ix(d + 3)])
    return m[ix(d + 1)]


@njit(cache=True)
def vq_kick_prepare(m, o):
    """virtqueue_kick_prepare_split: does the device want a notification?"""
    new = m[ix(o + Q_AVAIL_IDX)]
    old = m[ix(o + Q_KICK_OLD)]
    m[ix(o + Q_KICK_OLD)] = new
    if m[ix(o + Q_EVENT)]:
        return need_event(m[ix(o + Q_AVAIL_EVENT)] & U16, new & U16, old & U16)
    return m[ix(o + Q_NO_NOTIFY)] == 0


@njit(cache=True)
def vq_more_used(m, o, t):
    """virtqueue_poll / more_used_split: a used entry published by ``t`` not yet taken."""
    last = m[ix(o + Q_LAST_USED)]
    if last == m[ix(o + Q_USED_IDX)]:
        return False
    return m[ix(_used(m, o, last) + 2)] <= t


@njit(cache=True)
def vq_get_buf(m, o, t):
    """virtqueue_get_buf_ctx_split + detach_buf_split: (head, used len, used stamp, free)
    with free one of FREE_*, or head -1 when nothing is used by ``t``."""
    last = m[ix(o + Q_LAST_USED)]
    if last == m[ix(o + Q_USED_IDX)]:
        return -1, 0, 0, FREE_NONE
    num = m[ix(o + Q_NUM)]
    u = _used_at(o, num, last)
    ts = m[ix(u + 2)]
    if ts > t:
        return -1, 0, 0, FREE_NONE
    head, ln = m[ix(u)], m[ix(u + 1)]
    m[ix(o + Q_LAST_USED)] = last + 1
    h = _head_at(o, num, head)
    n = m[ix(h + 1)]
    # walk the chain back onto the free list
    i = head
    for _ in range(n - 1):
        i = m[ix(_desc(m, o, i) + 3)]
    m[ix(_desc(m, o, i) + 3)] = m[ix(o + Q_FREE_HEAD)]
    m[ix(o + Q_FREE_HEAD)] = head
    m[ix(o + Q_NUM_FREE)] += n
    m[ix(o + Q_INUSE)] -= 1
    fr = FREE_NONE
    nsg = m[ix(h + 2)]
    if nsg > 0:
        if m[ix(o + Q_CACHE_ON)] and nsg <= m[ix(o + Q_CACHE_THR)]:
            m[ix(o + Q_CACHE_N)] += 1
            fr = FREE_CACHE
        else:
            m[ix(o + Q_TBL_LIVE)] -= 1
            fr = FREE_KFREE
    return head, ln, ts, fr


@njit(cache=True)
def vq_token(m, o, head):
    return m[ix(_head(m, o, head))]


@njit(cache=True)
def vq_disable_cb(m, o):
    """virtqueue_disable_cb_split (with EVENT_IDX only the shadow flag changes)."""
    m[ix(o + Q_CB_ON)] = 0


@njit(cache=True)
def vq_enable_cb_prepare(m, o):
    """virtqueue_enable_cb_prepare_split: ask for an interrupt at the next used entry."""
    m[ix(o + Q_CB_ON)] = 1
    m[ix(o + Q_USED_EVENT)] = m[ix(o + Q_LAST_USED)]


@njit(cache=True)
def vq_used_stamp(m, o):
    """When the next used entry the driver has not taken was published (INF-free: callers
    check vq_used_pending first)."""
    return m[ix(_used(m, o, m[ix(o + Q_LAST_USED)]) + 2)]


@njit(cache=True)
def vq_used_pending(m, o):
    """Used entries the device published that the driver has not taken."""
    return m[ix(o + Q_USED_IDX)] - m[ix(o + Q_LAST_USED)]


# --- device side (vhost-user / vhost-net) -----------------------------------------------------
@njit(cache=True)
def vq_dev_avail(m, o, t, cap):
    """Avail entries published by ``t`` the device has not consumed, counted up to ``cap``
    (what the caller can take: a burst, or 1 to ask whether any; a posted RX ring holds
    hundreds, and a packet's poll need not count them all)."""
    i0 = i = m[ix(o + Q_LAST_AVAIL)]
    end = min(m[ix(o + Q_AVAIL_IDX)], i + cap)
    if i >= end:
        return 0
    num = m[ix(o + Q_NUM)]
    while i < end and m[ix(_avail_at(o, num, i) + 1)] <= t:
        i += 1
    return i - i0


@njit(cache=True)
def vq_avail_stamp(m, o):
    """When the next unconsumed avail entry was published."""
    return m[ix(_avail(m, o, m[ix(o + Q_LAST_AVAIL)]) + 1)]


@njit(cache=True)
def vq_dev_pop(m, o):
    """The next avail head (caller checked vq_dev_avail)."""
    i = m[ix(o + Q_LAST_AVAIL)]
    m[ix(o + Q_LAST_AVAIL)] = i + 1
    return m[ix(_avail(m, o, i))]


@njit(cache=True)
def vq_dev_push_used(m, o, head, length, t):
    idx = m[ix(o + Q_USED_IDX)]
    u = _used(m, o, idx)
    m[ix(u)] = head
    m[ix(u + 1)] = length
    m[ix(u + 2)] = t
    m[ix(o + Q_USED_IDX)] = idx + 1


@njit(cache=True)
def vq_dev_should_signal(m, o):
    """vhost_notify / vring_need_event on used_event: interrupt the driver?"""
    new = m[ix(o + Q_USED_IDX)]
    old = m[ix(o + Q_SIG_OLD)]
    m[ix(o + Q_SIG_OLD)] = new
    return vq_dev_would_signal(m, o, old, new)


@njit(cache=True)
def vq_dev_would_signal(m, o, old, new):
    """Whether used entries ``old`` up to ``new`` (one vhost_notify's span) interrupt the
    driver."""
    if new == old:
        return False
    if m[ix(o + Q_EVENT)]:
        return m[ix(o + Q_CB_ON)] == 1 and need_event(m[ix(o + Q_USED_EVENT)] & U16, new & U16,
                                                  old & U16)
    return m[ix(o + Q_CB_ON)] == 1


@njit(cache=True)
def vq_dev_notify(m, o, on):
    """Device enables/disables guest kicks: with EVENT_IDX it writes avail_event only when
    enabling (a polling vhost-user backend never does, so kicks stay suppressed). A change is
    one the driver's kicks read (engine.stir)."""
    if on:
        if m[ix(o + Q_NO_NOTIFY)] or m[ix(o + Q_AVAIL_EVENT)] != m[ix(o + Q_LAST_AVAIL)]:
            stir(m)
        m[ix(o + Q_AVAIL_EVENT)] = m[ix(o + Q_LAST_AVAIL)]
        m[ix(o + Q_NO_NOTIFY)] = 0
    elif not m[ix(o + Q_NO_NOTIFY)]:
        stir(m)
        m[ix(o + Q_NO_NOTIFY)] = 1
