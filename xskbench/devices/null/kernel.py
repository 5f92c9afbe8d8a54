"""The null device: a NIC whose wire transmits and receives at a set rate, with a hardware
descriptor ring each way, driven by one NAPI context — enough to exercise the AF_XDP core
(zero-copy driver API and copy mode) before the virtual devices.

TX: posted descriptors leave the wire back to back, each taking its frame's time on the wire
(length + 4 B FCS + 20 B preamble/IFG at the link's bit rate, at least the NIC's packet-rate
gap); NAPI reaps them.
RX: packets arrive every ``arr_gap`` (the same wire time); each needs a posted buffer, else
the NIC misses it.

One NAPI serves both directions (a combined channel, as i40e/ice/mlx5), so a busy-polling
socket (xsk.busy_poll) polls all of the queue's work from its syscalls.
"""
from xskbench import ops as op
from xskbench import stats as st
from xskbench.devices.null import CONTEXTS  # the ids: APP, NAPI
from xskbench.kernels import afxdp, loop
from xskbench.kernels.engine import (
    charge,
    count,
    cx,
    cx_set,
    delay,
    idle_spin,
    napi_complete,
    napi_enter,
    napi_schedule,
    now,
    switch_label,
    wake,
)
from xskbench.kernels.faults import bursty, notify_at, offered_clock, offered_time
from xskbench.kernels.jit import ix, njit
from xskbench.kernels.layout import (
    CX_A,
    CX_READY,
    CX_SCHED,
    DEV_BASE,
    H_ARR_END,
    H_BUSYBUDGET,
    H_BUSYPOLL,
    H_FQ,
    H_FRAME_SHIFT,
    H_FTS,
    H_HEADROOM,
    H_NEEDWAKE,
    H_NEXT_ARR,
    H_NO_REPLAY,
    H_NOW,
    H_NSEG,
    H_OWN,
    H_PKTLEN,
    H_POOL_N,
    H_PROGRESS,
    H_QLABEL,
    H_RX,
    H_SCR,
    H_WORKLOAD,
    H_ZC,
    INF,
    OWN_RX,
    WL_TXONLY,
)
from xskbench.kernels.xsk_ring import (
    cons_avail_cached,
    cons_peek,
    geometry,
    prod_free_cached,
    prod_reserve,
)

(
    D_TXQ, D_CAP, D_TX_HEAD, D_TX_TAIL, D_WIRE_FREE, D_LINE_GAP, D_RXQ, D_RX_POST, D_RX_FILL,
    D_RX_DONE, D_ARR_GAP, D_BUDGET, D_IRQ_DELAY, D_L_SYS, D_BYTE_GAP, D_WORK, D_BP,
) = range(DEV_BASE, DEV_BASE + 17)  # D_BP: afxdp.BP_WORDS words (busy poll)
WIRE_OVERHEAD = 4 + 20  # FCS, preamble + start delimiter + inter-frame gap
BYTE_GAP_SHIFT = 10  # D_BYTE_GAP is the wire time of one byte in millicycles × 2**10
APP, NAPI = range(len(CONTEXTS))


# --- the NIC ------------------------------------------------------------------------------
@njit(cache=True, inline="always")
def wire_time(ln, line_gap, byte_gap):
    """How long a frame of ``ln`` bytes holds the wire: its bits at the link rate
    (``byte_gap``: D_BYTE_GAP), at least the NIC's packet-rate gap (``line_gap``)."""
    return max(line_gap, ((ln + WIRE_OVERHEAD) * byte_gap) >> BYTE_GAP_SHIFT)


@njit(cache=True)
def _post_tx(m, scr, n, t):
    """Hand ``n`` descriptors (addr, len pairs from ``scr``) to the wire: a packet of
    H_NSEG descriptors (one per buffer) holds the wire once for its whole length, and its
    descriptors are done together when the wire has sent it. The NIC's TX ring keeps when
    each is done, not its address: its completion slot holds that already."""
    mask, nseg, txq = m[D_CAP] - 1, m[H_NSEG], m[D_TXQ]
    # the wire and the queue's head in locals: stores to the arena might alias header words
    free, head, line_gap, byte_gap = m[D_WIRE_FREE], m[D_TX_HEAD], m[D_LINE_GAP], m[D_BYTE_GAP]
    end = 0  # the descriptors before ``end`` are of packets the wire has taken
    for i in range(n):
        if i == end:  # a packet's first descriptor: the wire takes the whole packet
            ln = m[ix(scr + 2 * i + 1)]
            for j in range(i + 1, i + nseg):
                ln += m[ix(scr + 2 * j + 1)]
            free = max(t, free) + wire_time(ln, line_gap, byte_gap)
            end = i + nseg
        m[ix(txq + (head & mask))] = free
        head += 1
    m[D_WIRE_FREE], m[D_TX_HEAD] = free, head


@njit(cache=True, inline="always")
def _rx_slot(m, i):
    return m[D_RXQ] + 3 * (i & (m[D_CAP] - 1))


@njit(cache=True)
def _rx_arrivals(m, t):
    """Every packet that arrived by ``t`` lands in the oldest free posted buffers (H_NSEG of
    them), if they were posted before it arrived; otherwise the NIC drops it (rx_missed)."""
    gap, nseg, end, bursts = m[D_ARR_GAP], m[H_NSEG], m[H_ARR_END], bursty(m)
    a = m[H_NEXT_ARR]
    # the ring's words in locals: stores to the arena might alias them
    rxq, mask, fill, post = m[D_RXQ], m[D_CAP] - 1, m[D_RX_FILL], m[D_RX_POST]
    offered = missed = 0  # counted once per call: the counters see the same totals
    while a <= t and a < end:
        offered += 1
        if fill + nseg <= post and m[ix(rxq + 3 * ((fill + nseg - 1) & mask) + 1)] <= a:
            for i in range(nseg):
                m[ix(rxq + 3 * ((fill + i) & mask) + 2)] = a
            fill += nseg
        else:
            missed += 1
        a = offered_time(m, offered_clock(m, a) + gap) if bursts else a + gap
    m[H_NEXT_ARR], m[D_RX_FILL] = a, fill
    if offered:
        count(m, st.OFFERED, offered)
    if missed:
        count(m, st.RX_MISSED, missed)


@njit(cache=True, inline="always")
def _tx_next_done(m):
    """When the oldest transmit in flight is done on the wire (INF: none)."""
    if m[D_TX_TAIL] < m[D_TX_HEAD]:
        return m[ix(m[D_TXQ] + (m[D_TX_TAIL] & (m[D_CAP] - 1)))]
    return INF


@njit(cache=True)
def _next_irq(m):
    """When the NIC next has something to signal: a TX completion or a received packet."""
    t = _tx_next_done(m)
    if m[D_RX_DONE] < m[D_RX_FILL]:
        t = min(t, now(m))
    elif m[D_RX_FILL] + m[H_NSEG] <= m[D_RX_POST] and m[H_NEXT_ARR] < m[H_ARR_END]:
        s = _rx_slot(m, m[D_RX_FILL] + m[H_NSEG] - 1)
        t = min(t, max(m[H_NEXT_ARR], m[ix(s + 1)]))
    return t


@njit(cache=True)
def _nic_next_change(m):
    """When a poll of the NIC next finds something new by itself: a TX completion, a
    received packet, or an arrival (taken or missed) — from the quantum's start."""
    t = _tx_next_done(m)
    if m[D_RX_DONE] < m[D_RX_FILL]:
        t = m[H_NOW]
    if m[H_NEXT_ARR] < m[H_ARR_END]:
        t = min(t, m[H_NEXT_ARR])
    return t


# --- the driver: one NAPI poll ---------------------------------------------------------------
@njit(cache=True)
def poll(m, cc, cb, budget):
    """The driver's NAPI poll: reap TX, transmit from the xsk (zero copy), receive into the
    xsk, refill. Returns True when a direction used its whole budget (poll again)."""
    charge(m, cc, cb, op.NAPI_POLL, 1, 0)
    count(m, st.NAPI_POLLS, 1)
    cap = m[D_CAP]
    zc = m[H_ZC]
    t = now(m)
    done = 0
    # a packet's descriptors finish together: reaping never stops inside one
    tail, head, txq, nseg = m[D_TX_TAIL], m[D_TX_HEAD], m[D_TXQ], m[H_NSEG]
    while tail < head and (done < budget or tail % nseg):
        if m[ix(txq + (tail & (cap - 1)))] > t:
            break
        tail += 1
        done += 1
    m[D_TX_TAIL] = tail
    if done:
        charge(m, cc, cb, op.NULL_CLEAN_TX, done, 0)
        if zc:
            afxdp.tx_completed(m, cc, cb, done, op.XSK_TX_COMPLETED)
        else:
            charge(m, cc, cb, op.KFREE_SKB, done // m[H_NSEG], 0)
            afxdp.tx_completed(m, cc, cb, done, op.XSK_DESTRUCT_SKB)
    sent = 0
    if zc:
        room = cap - (m[D_TX_HEAD] - m[D_TX_TAIL])
        sent = afxdp.zc_tx_peek_batch(m, cc, cb, min(budget, room))
        scr = m[H_SCR]
        charge(m, cc, cb, op.NULL_XMIT_DESC, sent, 0)
        afxdp.csum_offload(m, cc, cb, sent // m[H_NSEG])  # the NIC sums: no per-byte cost
        _post_tx(m, scr, sent, now(m))
    got = 0
    if m[H_WORKLOAD] != WL_TXONLY:
        _rx_arrivals(m, now(m))
        plen, nseg, scr = m[H_PKTLEN], m[H_NSEG], m[H_SCR]
        if nseg == 1:
            got = _rx_run(m, cc, cb, min(m[D_RX_FILL] - m[D_RX_DONE], budget), plen, zc)
        while m[D_RX_DONE] < m[D_RX_FILL] and got < budget:
            s = _rx_slot(m, m[D_RX_DONE])
            for i in range(nseg):  # a multi-buffer packet: one RX descriptor per buffer
                m[ix(scr + i)] = m[ix(_rx_slot(m, m[D_RX_DONE] + i))]
            m[D_RX_DONE] += nseg
            got += 1
            charge(m, cc, cb, op.NULL_RX_DESC, nseg, 0)
            charge(m, cc, cb, op.BPF_PROG_RUN_XDP, 1, 0)
            if zc and nseg > 1:
                afxdp.xsk_rcv_zc_frags(m, cc, cb, plen, m[ix(s + 2)])
            elif zc:
                afxdp.xsk_rcv_zc(m, cc, cb, m[ix(s)], plen, m[ix(s + 2)])
            else:
                if nseg > 1:  # the driver's pages as frags of one xdp_buff
                    charge(m, cc, cb, op.XDP_BUFF_ADD_FRAG, nseg - 1, 0)
                afxdp.xsk_rcv_copy(m, cc, cb, plen, m[ix(s + 2)])
                charge(m, cc, cb, op.PAGE_POOL_RECYCLE, nseg, 0)
        if got:
            afxdp.xdp_flush(m, cc, cb)
        if _refill(m, cc, cb) and not m[H_NEEDWAKE]:
            # i40e/ice zc receive: a short fill-ring refill without need_wakeup returns the
            # whole budget, so NAPI keeps polling until the application refills
            got = budget
    m[D_WORK] = done + sent + got
    return done >= budget or sent >= budget or got >= budget


@njit(cache=True)
def _rx_run(m, cc, cb, n, plen, zc):
    """``n`` single-buffer packets into the xsk at once, when RX has room for all of them
    without refreshing its view, and in copy mode the pool is empty and the fill ring's view
    holds a buffer for each (else 0: the loop takes them one by one). The same books as one
    at a time: nothing here reads the time, so the charges can follow the packets
    (tests/test_fastforward.py compares the two: H_NO_REPLAY takes them one at a time)."""
    rx, fq = m[H_RX], m[H_FQ]
    if n <= 0 or m[H_NO_REPLAY] or prod_free_cached(m, rx) < n:
        return 0
    if not zc and (m[H_POOL_N] > 0 or cons_avail_cached(m, fq) < n):
        return 0
    _, idx = prod_reserve(m, rx, n, now(m))
    fidx = 0 if zc else cons_peek(m, fq, n, now(m))[1]  # copy mode: xsk_buff_alloc each
    # afxdp.rx_put per packet, with the rings' and frames' words in locals
    ab, lb, mask = geometry(m, rx)
    fab, _, fmask = geometry(m, fq)
    rxq, cmask, done = m[D_RXQ], m[D_CAP] - 1, m[D_RX_DONE]
    owner, fts, shift, hr = m[H_OWN], m[H_FTS], m[H_FRAME_SHIFT], m[H_HEADROOM]
    for i in range(n):
        s = rxq + 3 * ((done + i) & cmask)
        addr = m[ix(s)] if zc else m[ix(fab + ((fidx + i) & fmask))]
        j = (idx + i) & mask
        m[ix(ab + j)] = addr + hr
        m[ix(lb + j)] = plen
        f = addr >> shift
        m[ix(owner + f)] = OWN_RX
        m[ix(fts + f)] = m[ix(s + 2)]
    m[D_RX_DONE] = done + n
    m[H_PROGRESS] += n
    charge(m, cc, cb, op.NULL_RX_DESC, n, 0)
    charge(m, cc, cb, op.BPF_PROG_RUN_XDP, n, 0)
    if zc:
        charge(m, cc, cb, op.XSK_RCV_ZC, n, 0)
    else:  # xsk_rcv_copy each: a buffer, the copy; the driver's page recycled
        charge(m, cc, cb, op.XSK_BUFF_ALLOC, n, 0)
        charge(m, cc, cb, op.XSK_RCV_COPY, n, n * plen)
        charge(m, cc, cb, op.PAGE_POOL_RECYCLE, n, 0)
    return n


@njit(cache=True)
def _refill(m, cc, cb):
    """Post RX buffers: UMEM frames from the fill ring (zero copy) or driver pages (copy).
    Returns True when the fill ring came up short (zero copy)."""
    free = m[D_CAP] - (m[D_RX_POST] - m[D_RX_DONE])
    if free == 0:
        return False
    t = now(m)
    if m[H_ZC]:
        k = afxdp.zc_refill(m, cc, cb, free)
        scr, rxq, mask, post = m[H_SCR], m[D_RXQ], m[D_CAP] - 1, m[D_RX_POST]
        for i in range(k):  # the ring's words in locals: stores to the arena might alias them
            s = rxq + 3 * ((post + i) & mask)
            m[ix(s)] = m[ix(scr + i)]
            m[ix(s + 1)] = t
        m[D_RX_POST] = post + k
        charge(m, cc, cb, op.NULL_POST_RX, k, 0)
        return k < free
    else:
        charge(m, cc, cb, op.PAGE_POOL_ALLOC, free, 0)
        for _ in range(free):
            s = _rx_slot(m, m[D_RX_POST])
            m[ix(s)] = -1
            m[ix(s + 1)] = t
            m[D_RX_POST] += 1
    return False


@njit(cache=True)
def _arm_irq(m):
    """The driver re-enabled its interrupt: it fires at the NIC's next event."""
    t = _next_irq(m)
    if t < INF:
        cx_set(m, NAPI, CX_A, 1)
        wake(m, NAPI, notify_at(m, t + delay(m, m[D_IRQ_DELAY])))


@njit(cache=True)
def napi_quantum(m, cc, cb):
    if afxdp.bp_sleeps(m, cc, cb, D_BP, NAPI):
        return
    napi_enter(m, cc, cb, NAPI)
    if poll(m, cc, cb, m[D_BUDGET]):
        if afxdp.bp_yield(m, D_BP):  # the busy poller takes over; the interrupt stays off
            cx_set(m, NAPI, CX_SCHED, 0)
            wake(m, NAPI, m[ix(D_BP + afxdp.BP_DUE)])
            return
        wake(m, NAPI, now(m))
        afxdp.set_tx_need_wakeup(m, cc, cb, False)
    elif napi_complete(m, NAPI):
        afxdp.set_tx_need_wakeup(m, cc, cb, True)
        if afxdp.bp_masked(m, D_BP) and afxdp.bp_complete(m, D_BP, m[D_WORK]):
            wake(m, NAPI, m[ix(D_BP + afxdp.BP_DUE)])  # deferred: the watchdog polls next
        else:
            _arm_irq(m)


@njit(cache=True)
def _kick_napi(m, cc, cb):
    """ndo_xsk_wakeup: if NAPI is idle, fire the queue's interrupt (i40e/mlx5 do)."""
    charge(m, cc, cb, op.XSK_WAKEUP, 1, 0)
    count(m, st.WAKEUPS, 1)
    if napi_schedule(m, NAPI, notify_at(m, now(m) + delay(m, m[D_IRQ_DELAY]))):
        charge(m, cc, cb, op.NAPI_SCHEDULE, 1, 0)
        count(m, st.NAPI_SCHEDULES, 1)
        cx_set(m, NAPI, CX_A, 1)


@njit(cache=True)
def _busy_poll(m, cc, cb):
    """sk_busy_loop → napi_busy_loop, non-blocking (one pass), unless softirq owns the NAPI;
    then busy_poll_stop: one more poll, and with deferral (napi_defer_hard_irqs and
    gro_flush_timeout) the interrupt stays masked under the napi_watchdog timer; without
    it the driver re-enables the interrupt, or softirq takes over a full budget. Returns
    True when the socket busy-polls (and in zero copy xsk_no_wakeup skips the wakeup)."""
    state = afxdp.bp_begin(m, cc, cb, D_BP, NAPI)
    if state != afxdp.BP_POLL:
        return state == afxdp.BP_SOFTIRQ
    budget = m[H_BUSYBUDGET]
    poll(m, cc, cb, budget)
    afxdp.bp_stop(m, D_BP)
    full = poll(m, cc, cb, budget)
    if afxdp.bp_end(m, D_BP, NAPI):  # a pending interrupt is not raised
        cx_set(m, NAPI, CX_A, 0)
        cx_set(m, NAPI, CX_READY, INF)
        wake(m, NAPI, m[ix(D_BP + afxdp.BP_DUE)])
    elif full:
        napi_schedule(m, NAPI, now(m))
    else:
        _arm_irq(m)
    return True


@njit(cache=True)
def _sendto(m, cc, cb):
    charge(m, cc, cb, op.SYS_SENDTO, 1, 0)
    count(m, st.SENDTO_CALLS, 1)
    busy = _busy_poll(m, cc, cb)
    if not afxdp.sendto_wakes(m):
        return
    if m[H_ZC]:
        if not busy:
            _kick_napi(m, cc, cb)
        return
    # copy mode: xsk_generic_xmit runs here, at most TX_BATCH_SIZE descriptors
    cap, nseg, scr = m[D_CAP], m[H_NSEG], m[H_SCR]
    sent = 0
    while sent + nseg <= 32:  # TX_BATCH_SIZE descriptors
        addr, ln = afxdp.generic_xmit_one(m, cc, cb, True)
        if addr < 0:
            break
        if m[D_TX_HEAD] - m[D_TX_TAIL] > cap - nseg:  # NETDEV_TX_BUSY → -EAGAIN
            afxdp.generic_xmit_busy(m, addr)
            break
        charge(m, cc, cb, op.NULL_XMIT_DESC, nseg, 0)
        if nseg == 1:
            m[ix(scr)], m[ix(scr + 1)] = addr, ln
        _post_tx(m, scr, nseg, now(m))
        sent += nseg
    afxdp.generic_xmit_done(m)
    if sent and not cx(m, NAPI, CX_SCHED) and not afxdp.bp_masked(m, D_BP):
        cx_set(m, NAPI, CX_A, 1)
        wake(m, NAPI, notify_at(m, _next_irq(m) + delay(m, m[D_IRQ_DELAY])))


@njit(cache=True)
def app_quantum(m, cc, cb):
    progress = m[H_PROGRESS]
    kick = afxdp.app_iteration(m, cc, cb)
    if kick:
        label = m[H_QLABEL]
        switch_label(m, m[D_L_SYS])
        if kick & afxdp.KICK_TX:
            _sendto(m, cc, cb)
        if kick & afxdp.KICK_RX:
            charge(m, cc, cb, op.SYS_RECVFROM, 1, 0)
            count(m, st.POLL_CALLS, 1)
            if not _busy_poll(m, cc, cb) and m[H_ZC] and afxdp.recvfrom_wakes(m):
                _kick_napi(m, cc, cb)
        switch_label(m, label)
    if m[H_PROGRESS] == progress:
        seen = afxdp.app_next_change(m)
        if m[H_BUSYPOLL]:  # its poll reads the NIC, whose queues change by themselves
            seen = min(seen, _nic_next_change(m))
        idle_spin(m, cc, cb, APP, seen)
    wake(m, APP, now(m))  # xdpsock spins


@njit(cache=True)
def quantum(m, cc, cb, c):
    """One quantum of context ``c`` (kernels/loop.py)."""
    if c == APP:
        app_quantum(m, cc, cb)
    else:
        napi_quantum(m, cc, cb)


loop.define(globals())  # run_chunk(M, OFF, cc, cb, events): the engine loop over ``quantum``
