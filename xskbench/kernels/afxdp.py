"""The AF_XDP core: the application's loops (xdpsock txonly / rxdrop / l2fwd) and the
kernel's xsk functions a driver calls (net/xdp/xsk.c, xsk_buff_pool.c, xsk_queue.h).

Every UMEM frame has exactly one owner at every moment (``OWN_*``); each move below
updates it, so the books can be checked at any time. Nothing here knows a device: drivers
call these functions and do their own transmit and receive.
"""

from .. import ops as op
from .. import stats as st
from .engine import charge, count, cx, now, stir, wake
from .faults import fill_edge, fill_held, fill_stopped, offered_clock, offered_time
from .jit import bit_length, ix, njit
from .layout import (
    CX_SCHED,
    H_APPSTK,
    H_APPSTK_N,
    H_BATCH,
    H_BUSYPOLL,
    H_CQ,
    H_FLEN,
    H_FQ,
    H_FRAME,
    H_FRAME_SHIFT,
    H_FTS,
    H_GAP,
    H_HEADROOM,
    H_LAT,
    H_NEEDWAKE,
    H_NOW,
    H_NREFRESH,
    H_NSEG,
    H_OUTSTANDING,
    H_OWN,
    H_PKTLEN,
    H_POOL,
    H_POOL_N,
    H_PROGRESS,
    H_QREFRESH,
    H_RX,
    H_SCR,
    H_SEGLEN,
    H_SENT_SEQ,
    H_SHARED_POOL,
    H_START_T,
    H_TX,
    H_TXCSUM,
    H_TXFULL_DROP,
    H_WORKLOAD,
    H_ZC,
    INF,
    LAT_BINS,
    OWN_APP,
    OWN_CQ,
    OWN_DEV,
    OWN_FQ,
    OWN_POOL,
    OWN_RX,
    OWN_SKB,
    OWN_TX,
    TXCSUM_APP,
    TXCSUM_OFFLOAD,
    WL_L2FWD,
    WL_RXDROP,
    WL_TXONLY,
)
from .steady import unsteady
from .xsk_ring import (
    R_PROD,
    R_REFRESH,
    cons_cancel,
    cons_peek,
    cons_release,
    free_at,
    geometry,
    needs_wakeup,
    next_stamp,
    prod_cancel,
    prod_nb_free,
    prod_reserve,
    prod_submit,
    prod_submit_n,
    ring_addr,
    ring_len,
    ring_write,
    set_flag,
)

# what the application asks of the kernel after an iteration (a device runs the syscall)
KICK_TX = 1  # sendto(): copy mode xmits inside it, zero-copy calls ndo_xsk_wakeup
KICK_RX = 2  # recvfrom()/poll(): wake RX (fill ring needs refilling or busy poll)


# --- frames -----------------------------------------------------------------------------
@njit(cache=True, inline="always")
def frame_of(m, addr):
    """addr // frame size, without a 64-bit division. The per-descriptor loops shift by a
    local copy of ``H_FRAME_SHIFT`` instead: LLVM reloads a header word after every store
    to the arena (it might be that word)."""
    return addr >> m[H_FRAME_SHIFT]


@njit(cache=True, inline="always")
def own(m, addr, who):
    m[ix(m[H_OWN] + frame_of(m, addr))] = who


@njit(cache=True, inline="always")
def seg_len(m, i, plen):
    """Length of the descriptor at stream index ``i`` of a packet of ``plen`` bytes: every
    packet is H_NSEG descriptors in a row on every ring (whole packets move), each full but
    the last (XDP_PKT_CONTD set on all but the last)."""
    if m[H_NSEG] == 1:
        return plen
    j = i % m[H_NSEG]
    return m[H_SEGLEN] if j < m[H_NSEG] - 1 else plen - j * m[H_SEGLEN]


@njit(cache=True, inline="always")
def ends_packet(m, i):
    """The descriptor at stream index ``i`` is its packet's last (XDP_PKT_CONTD clear)."""
    return m[H_NSEG] == 1 or (i + 1) % m[H_NSEG] == 0


@njit(cache=True, inline="always")
def packets_in(m, i, k):
    """Packets that end among the ``k`` descriptors from stream index ``i``."""
    if m[H_NSEG] == 1:  # no division on the common path
        return k
    return (i + k) // m[H_NSEG] - i // m[H_NSEG]


@njit(cache=True, inline="always")
def whole(m, n):
    """``n`` descriptors rounded down to whole packets."""
    return n if m[H_NSEG] == 1 else n - n % m[H_NSEG]


@njit(cache=True)
def app_push(m, addr):
    m[ix(m[H_APPSTK] + m[H_APPSTK_N])] = addr
    m[H_APPSTK_N] += 1
    own(m, addr, OWN_APP)


@njit(cache=True)
def pool_push(m, addr):
    """xsk_buff_free: a driver-held buffer goes to the pool's free list, not the fill ring."""
    m[ix(m[H_POOL] + m[H_POOL_N])] = addr
    m[H_POOL_N] += 1
    own(m, addr, OWN_POOL)


@njit(cache=True, inline="always")
def latency_add(m, dt):
    """Record ``dt`` (now - the packet's stamp) in a histogram with 4 bins per octave."""
    m[ix(m[H_LAT] + latency_bin(dt))] += 1


@njit(cache=True, inline="always")
def latency_bin(dt):
    cyc = dt // 1000
    if cyc < 1:
        b = 0
    else:  # bin = floor(4·log2(cyc)) + 1 from the bit length: no log (nor a call to
        # numba's out-of-line frexp) per packet; cyc = x·2^(e-1) with x in [1, 2), and
        # x >= Q ⇔ cyc >= Q·2^(e-1), exact in floats (scaling by a power of two)
        e = bit_length(cyc)
        p, c = float(1 << (e - 1)), float(cyc)
        b = min(LAT_BINS - 1, 4 * (e - 1) + (c >= Q1 * p) + (c >= Q2 * p) + (c >= Q3 * p) + 1)
    return b


Q1, Q2, Q3 = 2 ** 0.25, 2 ** 0.5, 2 ** 0.75  # quarter-octave thresholds


# --- application side (xdpsock / libxdp) -------------------------------------------------
@njit(cache=True)
def app_fill(m, cc, cb):
    """Give the application's free frames to the fill ring (xsk_populate_fill_ring and the
    refill after receive)."""
    n = m[H_APPSTK_N]
    if n == 0 or fill_stopped(m, now(m)):
        return 0
    fq = m[H_FQ]
    k, idx = prod_reserve(m, fq, n, now(m))
    if k == 0:
        count(m, st.FILL_FAIL_POLLS, 1)
        return 0
    charge(m, cc, cb, op.RING_RESERVE, 1, 0)
    # pop the free stack's top, write the slot, own(): header words in locals (stores to the
    # arena might alias them)
    ab, _, mask = geometry(m, fq)  # a fill entry is an address alone: its length stays 0
    owner, stk, shift, top = m[H_OWN], m[H_APPSTK], m[H_FRAME_SHIFT], n - 1
    for i in range(k):
        addr = m[ix(stk + top - i)]
        m[ix(ab + ((idx + i) & mask))] = addr
        m[ix(owner + (addr >> shift))] = OWN_FQ
    m[H_APPSTK_N] = n - k
    prod_submit(m, fq, now(m))
    m[H_PROGRESS] += k
    return k


@njit(cache=True)
def app_complete_tx(m, cc, cb):
    """complete_tx_only / complete_tx_l2fwd: reap the completion ring."""
    if m[H_OUTSTANDING] == 0:
        return 0
    k, idx = cons_peek(m, m[H_CQ], m[H_BATCH], now(m))
    charge(m, cc, cb, op.RING_PEEK, 1, 0)
    reap(m, k, idx, now(m))
    return k


@njit(cache=True, inline="always")
def reap(m, k, idx, t):
    """The ``k`` completions peeked at ``idx`` back to the application at ``t``: latency
    bins, its free stack, the consumer release."""
    cq = m[H_CQ]
    ab, _, mask = geometry(m, cq)
    fts, owner, stk, n0 = m[H_FTS], m[H_OWN], m[H_APPSTK], m[H_APPSTK_N]
    # a batch's frames share the time they were written: one bin, counted once per run
    t0, b, nb = -1, 0, 0
    single, lat, shift = m[H_NSEG] == 1, m[H_LAT], m[H_FRAME_SHIFT]
    for i in range(k):
        addr = m[ix(ab + ((idx + i) & mask))]
        f = addr >> shift
        if single or ends_packet(m, idx + i):  # descriptor written → completion reaped
            if m[ix(fts + f)] != t0:
                m[ix(lat + b)] += nb
                t0, nb = m[ix(fts + f)], 0
                b = latency_bin(t - t0)
            nb += 1
        m[ix(stk + n0 + i)] = addr
        m[ix(owner + f)] = OWN_APP
    m[ix(lat + b)] += nb
    m[H_APPSTK_N] = n0 + k
    if k:
        cons_release(m, cq, t)
        m[H_OUTSTANDING] -= k
        m[H_PROGRESS] += k


@njit(cache=True)
def _tx_budget(m):
    """How many packets the sender may put on TX now: the batch, limited by a set rate."""
    nseg = m[H_NSEG]  # no division per iteration for single-buffer packets
    n = min(m[H_BATCH], m[H_APPSTK_N] if nseg == 1 else m[H_APPSTK_N] // nseg)
    gap = m[H_GAP]
    if gap > 0:
        due = (offered_clock(m, now(m)) - m[H_START_T]) // gap + 1
        n = min(n, due - m[H_SENT_SEQ])
    return max(n, 0)


@njit(cache=True)
def app_txonly(m, cc, cb):
    """One xdpsock tx_only iteration: generate a batch on TX (all or nothing, like
    xsk_ring_prod__reserve), then ask for a kick when the TX ring wants one."""
    n = _tx_budget(m)
    tx = m[H_TX]
    kick = 0
    nseg = m[H_NSEG]
    nd = n * nseg  # one descriptor per buffer of each packet
    if n > 0:
        if prod_nb_free(m, tx, nd, now(m)) < nd:
            count(m, st.TX_FULL_POLLS, 1)
        else:
            kd, idx = prod_reserve(m, tx, nd, now(m))
            k = kd // nseg
            charge(m, cc, cb, op.RING_RESERVE, 1, 0)
            charge(m, cc, cb, op.APP_PKT, k, 0)
            if nseg > 1:
                charge(m, cc, cb, op.APP_DESC_CONTD, kd - k, 0)
            plen, hr, t = m[H_PKTLEN], m[H_HEADROOM], now(m)
            if m[H_TXCSUM] == TXCSUM_APP:  # no offload: the sender sums every frame
                charge(m, cc, cb, op.APP_CSUM, k, k * plen)
            owner, fts, flen, stk = m[H_OWN], m[H_FTS], m[H_FLEN], m[H_APPSTK]
            ab, lb, mask = geometry(m, tx)
            n0, shift = m[H_APPSTK_N], m[H_FRAME_SHIFT]
            for i in range(kd):
                addr = m[ix(stk + n0 - 1 - i)]  # pop the application's free frames
                f = addr >> shift
                j = (idx + i) & mask
                ln = plen if nseg == 1 else seg_len(m, idx + i, plen)
                m[ix(ab + j)] = addr + hr
                m[ix(lb + j)] = ln
                m[ix(owner + f)] = OWN_TX
                m[ix(fts + f)] = t
                m[ix(flen + f)] = ln
            m[H_APPSTK_N] = n0 - kd
            prod_submit(m, tx, now(m))
            m[H_OUTSTANDING] += kd
            m[H_SENT_SEQ] += k
            m[H_PROGRESS] += kd
            count(m, st.TX_SUBMITTED, k)
            count(m, st.OFFERED, k)
    if m[H_OUTSTANDING] > 0 and _tx_wants_kick(m):
        kick |= KICK_TX
    return kick


@njit(cache=True, inline="always")
def _tx_wants_kick(m):
    """xdpsock's kick_tx rule: always without need_wakeup (the kernel never sets the flag,
    so every iteration with outstanding TX costs a sendto), always when busy polling (the
    syscall drives NAPI), else only when the driver set the TX ring's need_wakeup flag."""
    return m[H_NEEDWAKE] == 0 or m[H_BUSYPOLL] != 0 or needs_wakeup(m, m[H_TX])


@njit(cache=True)
def app_rx(m, cc, cb):
    """One xdpsock rx_drop / l2fwd iteration on the RX ring."""
    rx = m[H_RX]
    tx = m[H_TX]
    want = m[H_BATCH] * m[H_NSEG]  # descriptors: whole packets (RX publishes whole ones)
    if m[H_WORKLOAD] == WL_L2FWD and not m[H_TXFULL_DROP]:  # xdpsock waits for TX room
        want = whole(m, min(want, prod_nb_free(m, tx, want, now(m))))
    k, idx = cons_peek(m, rx, want, now(m))
    charge(m, cc, cb, op.RING_PEEK, 1, 0)
    if k == 0:
        count(m, st.RX_EMPTY_POLLS, 1)
        if fill_held(m):
            app_fill(m, cc, cb)
        kick = 0
        # xdpsock rx_drop: recvfrom on an empty RX ring only when busy polling or when the
        # driver asked for a fill-ring wakeup (never set without XDP_USE_NEED_WAKEUP: then
        # the kernel side runs on interrupts alone)
        if m[H_BUSYPOLL] or needs_wakeup(m, m[H_FQ]):
            kick |= KICK_RX
        if m[H_WORKLOAD] == WL_L2FWD and m[H_OUTSTANDING] > 0 and _tx_wants_kick(m):
            kick |= KICK_TX
        return kick
    kp = packets_in(m, idx, k)
    charge(m, cc, cb, op.APP_PKT, kp, 0)
    if k > kp:
        charge(m, cc, cb, op.APP_DESC_CONTD, k - kp, 0)
    nbytes = 0
    if m[H_WORKLOAD] == WL_RXDROP:
        # header words in locals (stores to the arena might alias them), as app_complete_tx
        ab, lb, mask = geometry(m, rx)
        fts, owner, stk, n0, lat = m[H_FTS], m[H_OWN], m[H_APPSTK], m[H_APPSTK_N], m[H_LAT]
        shift, chunk, single, t = m[H_FRAME_SHIFT], -m[H_FRAME], m[H_NSEG] == 1, now(m)
        for i in range(k):
            j = (idx + i) & mask
            addr = m[ix(ab + j)]
            nbytes += m[ix(lb + j)]
            f = addr >> shift
            if single or ends_packet(m, idx + i):  # latency_add
                m[ix(lat + latency_bin(t - m[ix(fts + f)]))] += 1
            m[ix(stk + n0 + i)] = addr & chunk  # app_push of the chunk's start
            m[ix(owner + f)] = OWN_APP
        m[H_APPSTK_N] = n0 + k
        cons_release(m, rx, now(m))
        app_fill(m, cc, cb)
    else:  # l2fwd: swap MACs and send the same frame back out
        want = k if m[H_NSEG] == 1 else whole(m, min(k, prod_nb_free(m, tx, k, now(m))))
        tk, tidx = prod_reserve(m, tx, want, now(m))
        charge(m, cc, cb, op.RING_RESERVE, 1, 0)
        ab, lb, mask = geometry(m, rx)
        tab, tlb, tmask = geometry(m, tx)
        owner, flen, shift = m[H_OWN], m[H_FLEN], m[H_FRAME_SHIFT]  # locals, as above
        for i in range(k):
            j = (idx + i) & mask
            addr, ln = m[ix(ab + j)], m[ix(lb + j)]
            nbytes += ln
            if i < tk:
                tj = (tidx + i) & tmask
                m[ix(tab + tj)] = addr
                m[ix(tlb + tj)] = ln
                f = addr >> shift
                m[ix(owner + f)] = OWN_TX
                m[ix(flen + f)] = ln
            else:  # testpmd frees what the TX ring did not take: TX-errors
                app_push(m, addr & -m[H_FRAME])  # the chunk's start
        cons_release(m, rx, now(m))
        prod_submit(m, tx, now(m))
        m[H_OUTSTANDING] += tk
        count(m, st.TX_SUBMITTED, tk // m[H_NSEG])
        if tk < k:
            count(m, st.TX_ERRORS, (k - tk) // m[H_NSEG])
            app_fill(m, cc, cb)
    count(m, st.RX_PACKETS, kp)
    count(m, st.RX_BYTES, nbytes)
    m[H_PROGRESS] += k
    kick = 0
    if m[H_WORKLOAD] == WL_L2FWD and _tx_wants_kick(m):
        kick |= KICK_TX
    return kick


@njit(cache=True)
def app_next_change(m):
    """When the application's view can next change by itself: a ring entry stamped in its
    future, the next packet its rate allows, a fill-ring stop window's edge. Future of the
    quantum's *start*: an entry that became visible during the quantum, after the ring was
    read, is work for the next poll (from the quantum's end it would look past, and a replay
    would skip that poll)."""
    return app_next_change_at(m, m[H_NOW])


@njit(cache=True)
def app_next_change_at(m, t0):
    """``app_next_change`` for a poll that starts at ``t0``."""
    t = min(next_stamp(m, m[H_FQ], True, t0), next_stamp(m, m[H_CQ], False, t0))
    t = min(t, min(next_stamp(m, m[H_RX], False, t0), _tx_room_at(m, t0)))
    t = min(t, fill_edge(m, t0))
    if m[H_GAP] > 0 and m[H_WORKLOAD] == WL_TXONLY:
        t = min(t, offered_time(m, m[H_START_T] + m[H_SENT_SEQ] * m[H_GAP]))
    return t


@njit(cache=True)
def _tx_room_at(m, t0):
    """When TX room the application can use appears: tx_only reserves its whole batch or
    nothing, so a full ring changes nothing for it until the batch fits (a replayed idle spin
    then skips the polls that saw some slots free but not enough); any slot otherwise."""
    tx = m[H_TX]
    if m[H_WORKLOAD] != WL_TXONLY:
        return next_stamp(m, tx, True, t0)
    nd = _tx_budget(m) * m[H_NSEG]
    if nd == 0:  # no frames or not due: TX room changes nothing (the CQ and the rate do)
        return INF
    return free_at(m, tx, nd)


@njit(cache=True)
def charge_refreshes(m, cc, cb):
    """Each refresh of a cached ring index reads the cache line the other side wrote: charge
    the refreshes made since the last call (the rings count them as they happen)."""
    n = 0
    for slot in (H_FQ, H_CQ, H_RX, H_TX):
        n += m[ix(m[ix(slot)] + R_REFRESH)]
    if n > m[H_NREFRESH]:
        if n - m[H_NREFRESH] != m[H_QREFRESH]:  # some made by another context: the next
            unsteady(m)  # poll charges fewer, this is no steady idle spin
        charge(m, cc, cb, op.RING_REFRESH, n - m[H_NREFRESH], 0)
        m[H_NREFRESH] = n
    m[H_QREFRESH] = 0


@njit(cache=True)
def app_iteration(m, cc, cb):
    """One loop of the application; returns the KICK_* flags for the device to act on."""
    charge(m, cc, cb, op.APP_LOOP, 1, 0)
    wl = m[H_WORKLOAD]
    if wl == WL_TXONLY:
        app_complete_tx(m, cc, cb)
        kick = app_txonly(m, cc, cb)
    else:
        if wl == WL_L2FWD and app_complete_tx(m, cc, cb):
            app_fill(m, cc, cb)
        kick = app_rx(m, cc, cb)
    charge_refreshes(m, cc, cb)
    return kick


# --- kernel side: zero-copy driver API -------------------------------------------------------
@njit(cache=True)
def zc_alloc_batch(m, cc, cb, n):
    """xsk_buff_alloc_batch: up to ``n`` buffers into scratch, from the pool's free list
    first, then the fill ring. Returns how many; an empty fill ring is counted."""
    scr = m[H_SCR]
    k = 0
    while k < n and m[H_POOL_N] > 0:
        m[H_POOL_N] -= 1
        m[ix(scr + k)] = m[ix(m[H_POOL] + m[H_POOL_N])]
        k += 1
    if k < n:
        fq = m[H_FQ]
        j, idx = cons_peek(m, fq, n - k, now(m))
        ab, _, mask = geometry(m, fq)
        for i in range(j):
            m[ix(scr + k + i)] = m[ix(ab + ((idx + i) & mask))]
        k += j
        if k < n:
            count(m, st.FILL_EMPTY, 1)
    owner, shift = m[H_OWN], m[H_FRAME_SHIFT]  # own() per buffer, its words in locals
    for i in range(k):
        m[ix(owner + (m[ix(scr + i)] >> shift))] = OWN_DEV
    charge(m, cc, cb, op.XSK_BUFF_ALLOC_BATCH, k, 0)
    m[H_PROGRESS] += k
    charge_refreshes(m, cc, cb)
    return k


@njit(cache=True)
def zc_refill(m, cc, cb, n):
    """A driver's zero-copy refill: xsk_buff_alloc_batch, then the rule every driver follows
    — ask the application for a wakeup (fill ring need_wakeup) only when it came up short."""
    k = zc_alloc_batch(m, cc, cb, n)
    set_rx_need_wakeup(m, cc, cb, k < n)
    return k


@njit(cache=True)
def _rx_desc(m, addr, length, t0):
    """xskq_prod_reserve_desc: put the filled buffer on RX; a full RX ring drops the packet
    (rx_ring_full) and the buffer goes back to the pool."""
    rx = m[H_RX]
    k, idx = prod_reserve(m, rx, 1, now(m))
    if k == 0:
        count(m, st.RX_RING_FULL, 1)
        pool_push(m, addr)
        return False
    rx_put(m, idx, addr, length, t0)
    m[H_PROGRESS] += 1
    return True


@njit(cache=True, inline="always")
def rx_put(m, idx, addr, length, t0):
    """Fill the reserved RX descriptor ``idx`` with a buffer that arrived at ``t0``."""
    ring_write(m, m[H_RX], idx, addr + m[H_HEADROOM], length)
    own(m, addr, OWN_RX)
    m[ix(m[H_FTS] + frame_of(m, addr))] = t0


@njit(cache=True)
def xsk_rcv_zc(m, cc, cb, addr, length, t0):
    """XDP_REDIRECT into the socket, zero copy: reserve an RX descriptor for the buffer.
    A full RX ring drops the packet (rx_ring_full) and frees the buffer to the pool."""
    charge(m, cc, cb, op.XSK_RCV_ZC, 1, 0)
    return _rx_desc(m, addr, length, t0)


@njit(cache=True)
def xsk_rcv_zc_frags(m, cc, cb, length, t0):
    """xsk_rcv_zc of a multi-buffer packet whose H_NSEG buffers the driver put in scratch
    (xsk_buff_add_frag chained them): RX must take every descriptor, else the whole packet
    is dropped (rx_queue_full) and its buffers go back to the pool; then __xsk_rcv_zc per
    buffer, XDP_PKT_CONTD on all but the last."""
    n, scr = m[H_NSEG], m[H_SCR]
    charge(m, cc, cb, op.XSK_BUFF_ADD_FRAG, n - 1, 0)
    if prod_nb_free(m, m[H_RX], n, now(m)) < n:
        count(m, st.RX_RING_FULL, 1)
        for i in range(n):
            pool_push(m, m[ix(scr + i)])
        return False
    for i in range(n):
        charge(m, cc, cb, op.XSK_RCV_ZC, 1, 0)
        _rx_desc(m, m[ix(scr + i)], seg_len(m, i, length), t0)
    return True


@njit(cache=True)
def xsk_rcv_copy(m, cc, cb, length, t0):
    """__xsk_rcv (copy mode): pop a fill-ring buffer, memcpy the packet into it, reserve an
    RX descriptor. No buffer → rx_dropped; RX full → rx_ring_full."""
    if m[H_NSEG] > 1:
        return _xsk_rcv_copy_frags(m, cc, cb, length, t0)
    charge(m, cc, cb, op.XSK_BUFF_ALLOC, 1, 0)
    fq = m[H_FQ]
    if m[H_POOL_N] > 0:
        m[H_POOL_N] -= 1
        addr = m[ix(m[H_POOL] + m[H_POOL_N])]
    else:
        j, idx = cons_peek(m, fq, 1, now(m))
        if j == 0:
            count(m, st.FILL_EMPTY, 1)
            count(m, st.RX_DROPPED, 1)
            return False
        addr = ring_addr(m, fq, idx)
    charge(m, cc, cb, op.XSK_RCV_COPY, 1, length)
    return _rx_desc(m, addr, length, t0)


@njit(cache=True)
def _xsk_rcv_copy_frags(m, cc, cb, length, t0):
    """__xsk_rcv of a packet longer than one buffer: num_desc = ceil(len / frame size);
    xsk_buff_can_alloc(num_desc) else rx_dropped, RX room for num_desc else rx_queue_full
    (nothing taken yet), then per buffer xsk_buff_alloc, a copy of its part and
    __xsk_rcv_zc with XDP_PKT_CONTD on all but the last."""
    n, fq = m[H_NSEG], m[H_FQ]
    from_pool = min(n, m[H_POOL_N])
    j, idx = 0, 0
    if from_pool < n:
        j, idx = cons_peek(m, fq, n - from_pool, now(m))
    if from_pool + j < n:
        cons_cancel(m, fq, j)
        count(m, st.FILL_EMPTY, 1)
        count(m, st.RX_DROPPED, 1)
        return False
    if prod_nb_free(m, m[H_RX], n, now(m)) < n:
        cons_cancel(m, fq, j)
        count(m, st.RX_RING_FULL, 1)
        return False
    for i in range(n):
        if i < from_pool:
            m[H_POOL_N] -= 1
            addr = m[ix(m[H_POOL] + m[H_POOL_N])]
        else:
            addr = ring_addr(m, fq, idx + i - from_pool)
        ln = seg_len(m, i, length)
        charge(m, cc, cb, op.XSK_BUFF_ALLOC, 1, 0)
        charge(m, cc, cb, op.XSK_RCV_COPY, 1, ln)
        _rx_desc(m, addr, ln, t0)
    return True


@njit(cache=True)
def xdp_flush(m, cc, cb):
    """xdp_do_flush → xsk_flush: publish RX, release the fill ring's consumer."""
    charge(m, cc, cb, op.XDP_DO_FLUSH, 1, 0)
    prod_submit(m, m[H_RX], now(m))
    cons_release(m, m[H_FQ], now(m))
    charge_refreshes(m, cc, cb)


@njit(cache=True)
def zc_tx_peek_batch(m, cc, cb, n):
    """xsk_tx_peek_release_desc_batch: up to ``n`` TX descriptors into scratch (addr, len),
    bounded by free completion slots; the completion addresses are written now, published
    later by xsk_tx_completed. Returns how many."""
    tx = m[H_TX]
    cq = m[H_CQ]
    n = min(n, prod_nb_free(m, cq, n, now(m)))
    if m[H_NSEG] > 1:  # xskq_cons_read_desc_batch stops at a packet boundary
        n = whole(m, n)
    k, idx = cons_peek(m, tx, n, now(m))
    if k == 0:
        if n > 0:
            count(m, st.TX_RING_EMPTY, 1)
        return 0
    if m[H_SHARED_POOL] > 1:
        # several sockets on the pool: xsk_tx_peek_release_fallback, one xsk_tx_peek_desc per
        # desc walking the pool's xsk_tx_list (the other sockets' TX rings are lines other
        # CPUs write), then xsk_tx_release
        charge(m, cc, cb, op.XSK_TX_PEEK_DESC, k, 0)
        charge(m, cc, cb, op.RING_REFRESH, m[H_SHARED_POOL] - 1, 0)
        charge(m, cc, cb, op.XSK_TX_RELEASE, 1, 0)
    else:
        charge(m, cc, cb, op.XSK_TX_PEEK_BATCH, k, 0)
    ck, cidx = prod_reserve(m, cq, k, now(m))
    scr, hr, owner, shift = m[H_SCR], m[H_HEADROOM], m[H_OWN], m[H_FRAME_SHIFT]
    tab, tlb, tmask = geometry(m, tx)
    cab, _, cmask = geometry(m, cq)  # a completion is an address alone (length stays 0)
    for i in range(k):
        j = (idx + i) & tmask
        addr = m[ix(tab + j)]
        m[ix(scr + 2 * i)] = addr
        m[ix(scr + 2 * i + 1)] = m[ix(tlb + j)]
        m[ix(cab + ((cidx + i) & cmask))] = addr - hr
        m[ix(owner + (addr >> shift))] = OWN_DEV
    cons_release(m, tx, now(m))
    m[H_PROGRESS] += k
    charge_refreshes(m, cc, cb)
    return k


@njit(cache=True)
def tx_completed(m, cc, cb, k, call_op):
    """xsk_tx_completed / the skb destructor (one per packet): publish ``k`` completions
    (one per descriptor) in order and count the packets they end as transmitted."""
    cq = m[H_CQ]
    i = m[ix(cq + R_PROD)]  # the oldest reserved, unpublished completion
    npk = packets_in(m, i, k)
    charge(m, cc, cb, call_op, 1 if call_op == op.XSK_TX_COMPLETED else npk, 0)
    ab, _, mask = geometry(m, cq)
    flen, owner, shift = m[H_FLEN], m[H_OWN], m[H_FRAME_SHIFT]
    nbytes = 0
    for j in range(k):
        f = m[ix(ab + ((i + j) & mask))] >> shift
        nbytes += m[ix(flen + f)]
        m[ix(owner + f)] = OWN_CQ
    prod_submit_n(m, cq, k, now(m))
    m[H_PROGRESS] += k
    count(m, st.TX_PACKETS, npk)
    count(m, st.TX_BYTES, nbytes)


# --- kernel side: copy-mode transmit (xsk_generic_xmit) ----------------------------------
@njit(cache=True)
def generic_xmit_one(m, cc, cb, copy_payload):
    """One descriptor of __xsk_generic_xmit: peek TX, reserve a completion slot, build the
    skb (payload copied unless the device takes UMEM frags: IFF_TX_SKB_NO_LINEAR).
    Returns (addr, len), or (-1, 0) when TX is empty or the completion ring is full.
    A multi-buffer packet goes as one skb (generic_xmit_frags)."""
    if m[H_NSEG] > 1:
        return generic_xmit_frags(m, cc, cb, copy_payload)
    tx = m[H_TX]
    k, idx = cons_peek(m, tx, 1, now(m))
    if k == 0:
        return -1, 0
    cq = m[H_CQ]
    ck, cidx = prod_reserve(m, cq, 1, now(m))
    if ck == 0:
        cons_cancel(m, tx, 1)
        return -1, 0
    addr = ring_addr(m, tx, idx)
    ln = ring_len(m, tx, idx)
    ring_write(m, cq, cidx, addr - m[H_HEADROOM], 0)
    charge(m, cc, cb, op.XSK_GENERIC_XMIT, 1, 0)
    charge(m, cc, cb, op.SOCK_ALLOC_SEND_SKB, 1, 0)
    if copy_payload:
        charge(m, cc, cb, op.SKB_STORE_BITS, 1, ln)
    charge(m, cc, cb, op.DEV_DIRECT_XMIT, 1, 0)
    own(m, addr, OWN_SKB)
    m[H_PROGRESS] += 1
    return addr, ln


@njit(cache=True)
def generic_xmit_frags(m, cc, cb, copy_payload):
    """__xsk_generic_xmit over the H_NSEG descriptors of one packet: xsk_build_skb takes
    the first into the skb's head and each next (XDP_PKT_CONTD) as a frag — a page and a
    copy, or the UMEM page itself without copy (xsk_build_skb_zerocopy) — with one
    completion slot per descriptor; the skb leaves once, after its last descriptor. The
    descriptors (addr, len) are left in scratch; returns (first addr, packet length)."""
    n, tx, cq = m[H_NSEG], m[H_TX], m[H_CQ]
    k, idx = cons_peek(m, tx, n, now(m))
    if k < n:
        cons_cancel(m, tx, k)
        return -1, 0
    ck, cidx = prod_reserve(m, cq, n, now(m))
    if ck < n:
        cons_cancel(m, tx, n)
        prod_cancel(m, cq, ck)
        return -1, 0
    scr, total = m[H_SCR], 0
    for i in range(n):
        addr = ring_addr(m, tx, idx + i)
        ln = ring_len(m, tx, idx + i)
        ring_write(m, cq, cidx + i, addr - m[H_HEADROOM], 0)
        m[ix(scr + 2 * i)] = addr
        m[ix(scr + 2 * i + 1)] = ln
        total += ln
        own(m, addr, OWN_SKB)
    charge(m, cc, cb, op.XSK_GENERIC_XMIT, n, 0)
    charge(m, cc, cb, op.SOCK_ALLOC_SEND_SKB, 1, 0)
    charge(m, cc, cb, op.XSK_BUILD_SKB_FRAG, n - 1, 0)
    if copy_payload:
        charge(m, cc, cb, op.SKB_STORE_BITS, n, total)
    charge(m, cc, cb, op.DEV_DIRECT_XMIT, 1, 0)
    m[H_PROGRESS] += n
    return m[ix(scr)], total


@njit(cache=True)
def generic_xmit_busy(m, addr):
    """NETDEV_TX_BUSY: give the packet's descriptors back to TX and cancel their
    completion slots."""
    n = m[H_NSEG]
    cons_cancel(m, m[H_TX], n)
    prod_cancel(m, m[H_CQ], n)
    if n == 1:
        own(m, addr, OWN_TX)
    for i in range(n if n > 1 else 0):
        own(m, m[ix(m[H_SCR] + 2 * i)], OWN_TX)


@njit(cache=True)
def generic_xmit_done(m):
    """__xsk_tx_release: publish the TX consumer after the sendto's descriptors."""
    cons_release(m, m[H_TX], now(m))


@njit(cache=True)
def set_tx_need_wakeup(m, cc, cb, on):
    """Only zero-copy drivers manage the flags; in copy mode TX always wants a sendto."""
    if m[H_NEEDWAKE] and m[H_ZC] and needs_wakeup(m, m[H_TX]) != on:
        charge(m, cc, cb, op.XSK_SET_NEED_WAKEUP, 1, 0)
        set_flag(m, m[H_TX], on)


@njit(cache=True, inline="always")
def sendto_wakes(m):
    """__xsk_sendmsg: ndo_xsk_wakeup / xsk_generic_xmit only while pool->cached_need_wakeup
    has XDP_WAKEUP_TX — always without XDP_USE_NEED_WAKEUP (set at bind, never cleared)."""
    return m[H_NEEDWAKE] == 0 or needs_wakeup(m, m[H_TX])


@njit(cache=True, inline="always")
def recvfrom_wakes(m):
    """__xsk_recvmsg: ndo_xsk_wakeup only while the fill ring's need_wakeup is set (never
    without XDP_USE_NEED_WAKEUP: then recvfrom is a bare syscall)."""
    return m[H_NEEDWAKE] != 0 and needs_wakeup(m, m[H_FQ])


@njit(cache=True, inline="always")
def csum_offload(m, cc, cb, k):
    """xsk_tx_metadata_request per descriptor when the sender asks for checksum offload."""
    if m[H_TXCSUM] == TXCSUM_OFFLOAD:
        charge(m, cc, cb, op.XSK_TX_METADATA_REQUEST, k, 0)


@njit(cache=True)
def set_rx_need_wakeup(m, cc, cb, on):
    if m[H_NEEDWAKE] and m[H_ZC] and needs_wakeup(m, m[H_FQ]) != on:
        charge(m, cc, cb, op.XSK_SET_NEED_WAKEUP, 1, 0)
        set_flag(m, m[H_FQ], on)


# --- busy polling (SO_PREFER_BUSY_POLL + SO_BUSY_POLL_BUDGET, net/core/dev.c) ----------------
# A device keeps BP_WORDS consecutive words from ``bp``: whether the socket has a NAPI id to
# busy-poll (sk_napi_id >= MIN_NAPI_ID), the device interrupt masked by the deferral, how
# many deferrals are left (napi_defer_hard_irqs), when the napi_watchdog hrtimer fires, the
# gro_flush_timeout and the configured napi_defer_hard_irqs.
BP_NAPI_ID, BP_MASKED, BP_DEFER, BP_DUE, BP_TIMEOUT, BP_DEFER_CFG, BP_PREFER = range(7)
BP_WORDS = 7


def bp_init(m, bp, xsk, napi_id, mc_per_s):
    """Fill a device's busy-poll words at setup (plain Python)."""
    m[ix(bp + BP_NAPI_ID)] = int(bool(napi_id) and xsk.busy_poll)
    m[ix(bp + BP_MASKED)] = 0
    m[ix(bp + BP_DEFER)] = 0
    m[ix(bp + BP_DUE)] = INF
    m[ix(bp + BP_TIMEOUT)] = round(xsk.gro_flush_timeout_ns * 1e-9 * mc_per_s)
    m[ix(bp + BP_DEFER_CFG)] = xsk.napi_defer_hard_irqs
    m[ix(bp + BP_PREFER)] = 0


@njit(cache=True, inline="always")
def bp_masked(m, bp):
    """The device interrupt stays masked: the busy poller or the watchdog polls instead."""
    return m[ix(bp + BP_MASKED)] != 0


BP_OFF, BP_SOFTIRQ, BP_POLL = range(3)  # what bp_begin found


@njit(cache=True)
def bp_begin(m, cc, cb, bp, c):
    """sk_busy_loop's entry from a syscall: BP_OFF when the socket does not busy-poll;
    BP_SOFTIRQ when softirq owns the NAPI (context ``c``): napi_busy_loop sets
    NAPI_STATE_PREFER_BUSY_POLL so the softirq yields after its current poll; BP_POLL: the
    caller polls (one non-blocking pass, bp_stop, busy_poll_stop's poll, bp_end)."""
    if m[ix(bp + BP_NAPI_ID)] == 0:
        return BP_OFF
    charge(m, cc, cb, op.SK_BUSY_LOOP, 1, 0)
    if cx(m, c, CX_SCHED):
        m[ix(bp + BP_PREFER)] = 1
        return BP_SOFTIRQ
    return BP_POLL


@njit(cache=True)
def bp_end(m, bp, c):
    """After the two busy polls: count them; while the interrupt stays masked the NAPI
    context ``c`` sleeps until the watchdog is due (True)."""
    count(m, st.BUSY_POLLS, 2)
    if m[ix(bp + BP_MASKED)] == 0:
        return False
    wake(m, c, m[ix(bp + BP_DUE)])
    return True


@njit(cache=True)
def bp_yield(m, bp):
    """net_rx_action's napi_poll after a poll that had more work: with prefer-busy-poll set
    it completes the NAPI instead of polling again (napi_complete_done clears the flag,
    defers the interrupt and arms the watchdog). True when the softirq yields."""
    if m[ix(bp + BP_PREFER)] == 0:
        return False
    m[ix(bp + BP_PREFER)] = 0
    bp_stop(m, bp)
    stir(m)  # the caller clears NAPI_STATE_SCHED: the busy poller's next sk_busy_loop polls
    return True


@njit(cache=True)
def bp_stop(m, bp):
    """busy_poll_stop with prefer-busy-poll: if napi_defer_hard_irqs and gro_flush_timeout
    are both set, arm the napi_watchdog hrtimer and keep the interrupt masked (returns
    True); else the driver re-enables its interrupt as after any NAPI poll (False)."""
    if m[ix(bp + BP_DEFER_CFG)] > 0 and m[ix(bp + BP_TIMEOUT)] > 0:
        m[ix(bp + BP_MASKED)] = 1
        m[ix(bp + BP_DEFER)] = m[ix(bp + BP_DEFER_CFG)]
        m[ix(bp + BP_DUE)] = now(m) + m[ix(bp + BP_TIMEOUT)]
        return True
    return False


@njit(cache=True)
def bp_watchdog(m, cc, cb, bp):
    """A NAPI context woken while masked: is this the watchdog firing (True: the hrtimer
    interrupt runs napi_watchdog → __napi_schedule_irqoff), or a stale wake-up before a
    later re-arm (False: the caller sleeps until ``BP_DUE``)?"""
    if now(m) < m[ix(bp + BP_DUE)]:
        return False
    m[ix(bp + BP_DUE)] = INF
    charge(m, cc, cb, op.NAPI_WATCHDOG, 1, 0)
    count(m, st.WATCHDOG_POLLS, 1)
    return True


@njit(cache=True)
def bp_sleeps(m, cc, cb, bp, ctx):
    """The prologue of a busy-polled NAPI context ``ctx`` woken while its interrupt is
    masked: True when the wake-up predates the watchdog's re-arm (it sleeps again until
    ``BP_DUE``; the quantum ends), False when the poll goes ahead (possibly the watchdog's)."""
    if bp_masked(m, bp) and not cx(m, ctx, CX_SCHED) and not bp_watchdog(m, cc, cb, bp):
        wake(m, ctx, m[ix(bp + BP_DUE)])
        return True
    return False


@njit(cache=True)
def bp_complete(m, bp, work):
    """napi_complete_done of a softirq poll while masked: work resets the deferral count;
    while it is above zero the count drops, the timer is re-armed and the interrupt stays
    masked (True); at zero the driver re-enables its interrupt (False)."""
    if work:
        m[ix(bp + BP_DEFER)] = m[ix(bp + BP_DEFER_CFG)]
    if m[ix(bp + BP_DEFER)] > 0:
        m[ix(bp + BP_DEFER)] -= 1
        m[ix(bp + BP_DUE)] = now(m) + m[ix(bp + BP_TIMEOUT)]
        return True
    m[ix(bp + BP_MASKED)] = 0
    return False
