"""virtio-net in a guest, with a vhost-user polling PMD (or a vhost-net worker) on the host.

Guest contexts (zerocopy / copy): the application, tx NAPI (on ``tx_napi_cpu``, and a second
instance on the application's CPU for the "local" wakeup: one NAPI, scheduled on whichever
CPU asked), rx NAPI. Host: one PMD thread on its own CPU polling both virtqueues in bursts
of 32. ``pmd`` mode replaces the guest kernel by the DPDK virtio PMD (testpmd io forwarding)
polling the same virtqueues from user space.

l2fwd: the host loops guest TX back into guest RX (testpmd io forwarding on the host, primed
with ``tx_first`` bursts — an assumption; the seed does not say what the host ran).
txonly: the host sinks guest TX. rxdrop: the host generates into every free guest RX buffer.
"""
from numba import njit

from xskbench import ops as op
from xskbench import stats as st
from xskbench.kernels import afxdp, loop
from xskbench.kernels.engine import (
    charge,
    count,
    cx,
    cx_set,
    napi_complete,
    napi_enter,
    napi_schedule,
    now,
    wake,
)
from xskbench.kernels.faults import notify_at
from xskbench.kernels.layout import (
    CX_A,
    CX_CPU,
    DEV_BASE,
    H_CLK,
    H_PKTLEN,
    H_PROGRESS,
    H_QCTX,
    H_QLABEL,
    H_SCR,
    H_WORKLOAD,
    H_ZC,
    INF,
    WL_L2FWD,
    WL_RXDROP,
    WL_TXONLY,
)

from . import virtqueue as vq

(
    D_TXQ, D_RXQ, D_BUDGET, D_MODE, D_WAKEUP, D_HOSTKIND, D_IRQ_DELAY, D_IPI_DELAY,
    D_EXIT_DELAY, D_L_SYS, D_TXSCHED, D_TXCTX, D_TXMISSED, D_TXLAST, D_PRIME, D_HDR,
    D_RXLEN, D_CLEANTX, D_HOST_BURST, D_HOST_SLEEP, D_HSCR,
) = range(DEV_BASE, DEV_BASE + 21)
MODE_ZC, MODE_COPY, MODE_PMD = range(3)
WAKE_LOCAL, WAKE_IPI, WAKE_INLINE = range(3)
HOST_USER, HOST_NET = range(2)
# context ids (kernel modes)
APP, TXN, TXL, RXN, HOST = range(5)
# context ids (pmd mode)
PMD, PHOST = 0, 1
PMD_BURST = 32


# --- kicks and interrupts ------------------------------------------------------------------
@njit(cache=True)
def _kick(m, cc, cb, q):
    """virtqueue_kick_prepare (+ virtqueue_notify when the device asked for it)."""
    charge(m, cc, cb, op.VIRTQUEUE_KICK_PREPARE, 1, 0)
    if vq.vq_kick_prepare(m, q):
        charge(m, cc, cb, op.VIRTQUEUE_KICK, 1, 0)
        count(m, st.KICKS, 1)
        _wake_host(m)


@njit(cache=True)
def _wake_host(m):
    """A kick wakes a sleeping vhost-net worker; a lost kick leaves it asleep, for the next
    kick to wake."""
    if m[D_HOST_SLEEP]:
        t = notify_at(m, now(m) + m[D_EXIT_DELAY])
        if t < INF:
            m[D_HOST_SLEEP] = 0
            wake(m, PHOST if m[D_MODE] == MODE_PMD else HOST, t)


@njit(cache=True)
def _tx_schedule(m, c, t, irq):
    """Schedule the (single) tx NAPI on context ``c``; missed if already scheduled. A lost
    interrupt or IPI (``t`` = INF) schedules nothing."""
    if t >= INF:
        return False
    if m[D_TXSCHED]:
        m[D_TXMISSED] = 1
        return False
    m[D_TXSCHED] = 1
    m[D_TXCTX] = c
    if irq:
        cx_set(m, c, CX_A, 1)
    wake(m, c, t)
    return True


@njit(cache=True)
def _host_interrupts(m, cc, cb):
    """vhost: signal the guest (eventfd → irqfd) where its used_event asks for it."""
    t = now(m)
    if vq.vq_dev_should_signal(m, m[D_TXQ]):
        charge(m, cc, cb, op.EVENTFD_SIGNAL, 1, 0)
        vq.vq_disable_cb(m, m[D_TXQ])  # skb_xmit_done
        _tx_schedule(m, TXN, notify_at(m, t + m[D_IRQ_DELAY]), True)
    if vq.vq_dev_should_signal(m, m[D_RXQ]):
        charge(m, cc, cb, op.EVENTFD_SIGNAL, 1, 0)
        vq.vq_disable_cb(m, m[D_RXQ])  # skb_recv_done
        if napi_schedule(m, RXN, notify_at(m, t + m[D_IRQ_DELAY])):
            cx_set(m, RXN, CX_A, 1)


# --- guest TX ----------------------------------------------------------------------------------
@njit(cache=True)
def free_old_xmit(m, cc, cb):
    """__free_old_xmit: reap used TX buffers (detach, kfree/cache the indirect table), then
    xsk_tx_completed once (zero copy) or the skb destructors (copy mode)."""
    q = m[D_TXQ]
    n = 0
    while True:
        head, ln, ts, fr = vq.vq_get_buf(m, q, now(m))
        if head < 0:
            break
        charge(m, cc, cb, op.VIRTQUEUE_GET_BUF_CTX, 1, 0)
        # per byte = per 16-B descriptor walked: the ring's, plus an indirect table's 2
        charge(m, cc, cb, op.DETACH_BUF_SPLIT, 1, 48 if fr != vq.FREE_NONE else 32)
        charge(m, cc, cb, op.FREE_OLD_XMIT_PTR, 1, 0)
        if fr == vq.FREE_KFREE:
            charge(m, cc, cb, op.KFREE, 1, 0)
        elif fr == vq.FREE_CACHE:
            charge(m, cc, cb, op.DESC_CACHE_PUT, 1, 0)
        n += 1
    if n:
        if m[H_ZC]:
            afxdp.tx_completed(m, cc, cb, n, op.XSK_TX_COMPLETED)
        else:
            charge(m, cc, cb, op.KFREE_SKB, n, 0)
            afxdp.tx_completed(m, cc, cb, n, op.XSK_DESTRUCT_SKB)
    return n


@njit(cache=True)
def _add_out(m, cc, cb, addr, ln):
    """virtqueue_add_outbuf(_premapped) with 2 sgs: the shared header and the data."""
    q = m[D_TXQ]
    charge(m, cc, cb, op.VIRTQUEUE_ADD_OUTBUF, 1, 0)
    how = vq.vq_add(m, q, addr, 2, ln, False, now(m))
    # cost per descriptor written (16 B each): the indirect table's 2 plus the ring's 1
    charge(m, cc, cb, op.VIRTQUEUE_ADD, 1, 48 if how != vq.ADD_DIRECT else 32)
    if how == vq.ADD_KMALLOC:
        charge(m, cc, cb, op.KMALLOC, 1, 0)
        charge(m, cc, cb, op.KMALLOC_SLAB, 1, 0)
        charge(m, cc, cb, op.MEMSET_ERMS, 1, 0)
    elif how == vq.ADD_CACHE:
        charge(m, cc, cb, op.DESC_CACHE_GET, 1, 0)
    if how == vq.ADD_KMALLOC or how == vq.ADD_CACHE:
        charge(m, cc, cb, op.VRING_MAP_ONE_SG, 1, 0)
    return how


@njit(cache=True)
def virtnet_xsk_xmit(m, cc, cb, budget):
    """Reap completions, then send up to min(budget, free ring slots) xsk descriptors;
    one kick per batch; set the TX need_wakeup flag. Returns how many were sent."""
    charge(m, cc, cb, op.VIRTNET_XSK_RUN, 1, 0)
    free_old_xmit(m, cc, cb)
    q = m[D_TXQ]
    room = m[q + vq.Q_NUM_FREE] // vq.vq_slots_for(m, q, 2)
    k = afxdp.zc_tx_peek_batch(m, cc, cb, min(budget, room))
    scr = m[H_SCR]
    for i in range(k):
        charge(m, cc, cb, op.VIRTNET_XSK_XMIT, 1, 0)
        _add_out(m, cc, cb, m[scr + 2 * i], m[scr + 2 * i + 1])
    if k:
        _kick(m, cc, cb, q)
    afxdp.set_tx_need_wakeup(m, cc, cb, True)
    return k


@njit(cache=True)
def tx_napi_quantum(m, cc, cb, c):
    """virtnet_poll_tx on context ``c`` (only the instance the NAPI is scheduled on runs)."""
    if not m[D_TXSCHED] or m[D_TXCTX] != c:
        return
    if cx(m, c, CX_A):
        cx_set(m, c, CX_A, 0)
        charge(m, cc, cb, op.IRQ_ENTRY, 1, 0)
        count(m, st.INTERRUPTS, 1)
    charge(m, cc, cb, op.NAPI_POLL, 1, 0)
    count(m, st.NAPI_POLLS, 1)
    m[D_TXLAST] = c
    q = m[D_TXQ]
    vq.vq_disable_cb(m, q)
    budget = m[D_BUDGET]
    if m[H_ZC]:
        sent = virtnet_xsk_xmit(m, cc, cb, budget)
    else:
        free_old_xmit(m, cc, cb)
        sent = 0
    if sent >= budget:
        wake(m, c, now(m))
        return
    if m[D_TXMISSED]:
        m[D_TXMISSED] = 0
        wake(m, c, now(m))
        return
    m[D_TXSCHED] = 0
    charge(m, cc, cb, op.VIRTQUEUE_ENABLE_CB_PREPARE, 1, 0)
    vq.vq_enable_cb_prepare(m, q)
    if vq.vq_more_used(m, q, now(m)):  # virtqueue_poll race: poll again
        vq.vq_disable_cb(m, q)
        _tx_schedule(m, c, now(m), False)


@njit(cache=True)
def _xsk_wakeup(m, cc, cb):
    """virtnet_xsk_wakeup from sendto, by strategy."""
    charge(m, cc, cb, op.XSK_WAKEUP, 1, 0)
    count(m, st.WAKEUPS, 1)
    w = m[D_WAKEUP]
    if w == WAKE_INLINE:  # 2021 series: xmit inside the syscall, NAPI left to interrupts
        virtnet_xsk_xmit(m, cc, cb, m[D_BUDGET])
        if not m[D_TXSCHED]:
            vq.vq_enable_cb_prepare(m, m[D_TXQ])
        return
    if m[D_TXSCHED]:  # napi_if_scheduled_mark_missed
        m[D_TXMISSED] = 1
        return
    target = TXL
    if w == WAKE_IPI:
        last = m[D_TXLAST]
        if cx(m, last, CX_CPU) != cx(m, APP, CX_CPU):
            charge(m, cc, cb, op.IPI_SEND, 1, 0)
            if _tx_schedule(m, last, notify_at(m, now(m) + m[D_IPI_DELAY]), True):
                count(m, st.NAPI_SCHEDULES, 1)  # (not when the IPI was lost)
            return
    charge(m, cc, cb, op.NAPI_SCHEDULE, 1, 0)
    count(m, st.NAPI_SCHEDULES, 1)
    _tx_schedule(m, target, now(m), False)


@njit(cache=True)
def _copy_sendto(m, cc, cb):
    """Copy mode: __xsk_generic_xmit → start_xmit (IFF_TX_SKB_NO_LINEAR: no payload copy)."""
    q = m[D_TXQ]
    sent = 0
    while sent < 32:
        free_old_xmit(m, cc, cb)
        addr, ln = afxdp.generic_xmit_one(m, cc, cb, False)
        if addr < 0:
            break
        if m[q + vq.Q_NUM_FREE] < vq.vq_slots_for(m, q, 2):
            afxdp.generic_xmit_busy(m, addr)
            break
        charge(m, cc, cb, op.START_XMIT, 1, 0)
        _add_out(m, cc, cb, addr, ln)
        sent += 1
    afxdp.generic_xmit_done(m)
    if sent:
        _kick(m, cc, cb, q)
        if not m[D_TXSCHED]:  # start_xmit re-arms callbacks so completions get reaped
            vq.vq_enable_cb_prepare(m, q)


@njit(cache=True)
def app_quantum(m, cc, cb):
    kick = afxdp.app_iteration(m, cc, cb)
    if kick:
        label = m[H_QLABEL]
        m[H_QLABEL] = m[D_L_SYS]
        if kick & afxdp.KICK_TX:
            charge(m, cc, cb, op.SYS_SENDTO, 1, 0)
            count(m, st.SENDTO_CALLS, 1)
            if m[H_ZC]:
                _xsk_wakeup(m, cc, cb)
            else:
                _copy_sendto(m, cc, cb)
        if kick & afxdp.KICK_RX:
            charge(m, cc, cb, op.SYS_RECVFROM, 1, 0)
            count(m, st.POLL_CALLS, 1)
            if m[H_ZC] and napi_schedule(m, RXN, now(m)):  # refill via rx NAPI (inf.)
                charge(m, cc, cb, op.NAPI_SCHEDULE, 1, 0)
        m[H_QLABEL] = label
    wake(m, APP, now(m))


# --- guest RX ----------------------------------------------------------------------------------
@njit(cache=True)
def _refill(m, cc, cb):
    """try_fill_recv when num_free > min(budget, vring size) / 2: UMEM buffers (zero copy,
    virtnet_add_recvbuf_xsk) or driver pages (copy mode); one kick."""
    q = m[D_RXQ]
    free = m[q + vq.Q_NUM_FREE]
    if free <= min(m[D_BUDGET], m[q + vq.Q_NUM]) // 2:
        return
    t = now(m)
    if m[H_ZC]:
        k = afxdp.zc_refill(m, cc, cb, free)
        scr = m[H_SCR]
        for i in range(k):
            charge(m, cc, cb, op.VIRTQUEUE_ADD_INBUF, 1, 0)
            charge(m, cc, cb, op.VIRTQUEUE_ADD, 1, 16)
            vq.vq_add(m, q, m[scr + i], 1, m[D_RXLEN], True, t)
    else:
        k = free
        charge(m, cc, cb, op.PAGE_POOL_ALLOC, k, 0)
        for _ in range(k):
            charge(m, cc, cb, op.VIRTQUEUE_ADD_INBUF, 1, 0)
            charge(m, cc, cb, op.VIRTQUEUE_ADD, 1, 16)
            vq.vq_add(m, q, -1, 1, m[D_RXLEN], True, t)
    if k:
        _kick(m, cc, cb, q)


@njit(cache=True)
def _txq_locked(m):
    """__netif_tx_trylock fails while tx NAPI runs on another CPU: its CPU is inside a
    quantum that spans this moment."""
    if not m[D_TXSCHED]:
        return False
    c = m[D_TXCTX]
    if c == m[H_QCTX]:
        return False
    return m[m[H_CLK] + cx(m, c, CX_CPU)] > now(m)


@njit(cache=True)
def rx_poll(m, cc, cb, budget):
    """virtnet_poll: cleantx, receive ≤ budget into the xsk, flush once, refill."""
    charge(m, cc, cb, op.NAPI_POLL, 1, 0)
    count(m, st.NAPI_POLLS, 1)
    if m[D_CLEANTX] and m[H_WORKLOAD] != WL_RXDROP:
        charge(m, cc, cb, op.VIRTNET_POLL_CLEANTX, 1, 0)
        if not _txq_locked(m):
            free_old_xmit(m, cc, cb)
    q = m[D_RXQ]
    got = 0
    hdr = m[D_HDR]
    while got < budget:
        head, ln, ts, fr = vq.vq_get_buf(m, q, now(m))
        if head < 0:
            break
        got += 1
        charge(m, cc, cb, op.VIRTQUEUE_GET_BUF_CTX, 1, 0)
        charge(m, cc, cb, op.DETACH_BUF_SPLIT, 1, 16)
        charge(m, cc, cb, op.RECEIVE_XSK, 1, 0)
        charge(m, cc, cb, op.BPF_PROG_RUN_XDP, 1, 0)
        if m[H_ZC]:
            afxdp.xsk_rcv_zc(m, cc, cb, vq.vq_token(m, q, head), ln - hdr, ts)
        else:
            afxdp.xsk_rcv_copy(m, cc, cb, ln - hdr, ts)
            charge(m, cc, cb, op.PAGE_POOL_RECYCLE, 1, 0)
    if got:
        afxdp.xdp_flush(m, cc, cb)
    _refill(m, cc, cb)
    return got >= budget


@njit(cache=True)
def rx_napi_quantum(m, cc, cb):
    napi_enter(m, cc, cb, RXN)
    q = m[D_RXQ]
    if rx_poll(m, cc, cb, m[D_BUDGET]):
        wake(m, RXN, now(m))
    elif napi_complete(m, RXN):
        charge(m, cc, cb, op.VIRTQUEUE_ENABLE_CB_PREPARE, 1, 0)
        vq.vq_enable_cb_prepare(m, q)
        if vq.vq_more_used(m, q, now(m)):
            vq.vq_disable_cb(m, q)
            napi_schedule(m, RXN, now(m))


# --- host --------------------------------------------------------------------------------------
@njit(cache=True)
def _host_inject(m, cc, cb, ln):
    """Put one packet into a guest RX buffer; False (dropped) when none is posted."""
    q = m[D_RXQ]
    count(m, st.OFFERED, 1)
    if vq.vq_dev_avail(m, q, now(m)) == 0:
        count(m, st.RX_MISSED, 1)
        return False
    head = vq.vq_dev_pop(m, q)
    charge(m, cc, cb, op.RTE_VHOST_ENQUEUE, 1, ln)
    vq.vq_dev_push_used(m, q, head, ln + m[D_HDR], now(m))
    m[H_PROGRESS] += 1
    return True


@njit(cache=True)
def host_quantum(m, cc, cb, hctx):
    """One host PMD iteration: a burst from guest TX (looped into guest RX for l2fwd),
    priming / generating into guest RX, then interrupts where the guest asked for them."""
    charge(m, cc, cb, op.VHOST_USER_POLL, 1, 0)
    txq, rxq = m[D_TXQ], m[D_RXQ]
    burst = m[D_HOST_BURST]
    wl = m[H_WORKLOAD]
    n = min(burst, vq.vq_dev_avail(m, txq, now(m)))
    scr = m[D_HSCR]
    for i in range(n):
        head = vq.vq_dev_pop(m, txq)
        ln = vq.vq_head_len(m, txq, head)
        charge(m, cc, cb, op.RTE_VHOST_DEQUEUE, 1, ln)
        vq.vq_dev_push_used(m, txq, head, 0, now(m))
        m[scr + i] = ln
        m[H_PROGRESS] += 1
    if wl == WL_L2FWD:
        for i in range(n):
            _host_inject(m, cc, cb, m[scr + i])
        k = min(m[D_PRIME], burst, vq.vq_dev_avail(m, rxq, now(m)))
        for _ in range(k):
            _host_inject(m, cc, cb, m[H_PKTLEN])
        m[D_PRIME] -= k
    elif wl == WL_RXDROP:
        k = min(burst, vq.vq_dev_avail(m, rxq, now(m)))
        for _ in range(k):
            _host_inject(m, cc, cb, m[H_PKTLEN])
    if m[D_MODE] != MODE_PMD:
        _host_interrupts(m, cc, cb)
    if m[D_HOSTKIND] == HOST_NET and n == 0 and m[D_PRIME] == 0 and wl != WL_RXDROP:
        vq.vq_dev_notify(m, txq, True)  # vhost_enable_notify, then sleep until kicked
        vq.vq_dev_notify(m, rxq, True)
        if vq.vq_dev_avail(m, txq, now(m)) == 0:
            if m[txq + vq.Q_AVAIL_IDX] != m[txq + vq.Q_LAST_AVAIL]:
                # the guest published after this moment (its quantum ran first): it would
                # have seen avail_event and kicked; deliver that kick (cost left uncharged)
                count(m, st.KICKS, 1)
                t = notify_at(m, vq.vq_avail_stamp(m, txq) + m[D_EXIT_DELAY])
                m[D_HOST_SLEEP] = int(t >= INF)  # lost: asleep until the next kick
                wake(m, hctx, t)
                return
            m[D_HOST_SLEEP] = 1
            return
        vq.vq_dev_notify(m, txq, False)
        vq.vq_dev_notify(m, rxq, False)
    wake(m, hctx, now(m))


# --- guest DPDK virtio PMD (testpmd io forwarding) ---------------------------------------------
@njit(cache=True)
def _pmd_kick(m, q):
    """virtqueue_notify from user space (cost inside the per-packet ops); wakes vhost-net."""
    if vq.vq_kick_prepare(m, q):
        count(m, st.KICKS, 1)
        _wake_host(m)


@njit(cache=True)
def pmd_quantum(m, cc, cb):
    charge(m, cc, cb, op.PKT_BURST_IO_FORWARD, 1, 0)
    txq, rxq = m[D_TXQ], m[D_RXQ]
    wl = m[H_WORKLOAD]
    got = 0
    nbytes = 0
    scr = m[H_SCR]
    hdr = m[D_HDR]
    if wl != WL_TXONLY:
        while got < PMD_BURST:
            head, ln, ts, fr = vq.vq_get_buf(m, rxq, now(m))
            if head < 0:
                break
            charge(m, cc, cb, op.VIRTIO_RECV_PKTS, 1, 0)
            m[scr + got] = ln - hdr
            nbytes += ln - hdr
            got += 1
        if got:
            count(m, st.RX_PACKETS, got)
            count(m, st.RX_BYTES, nbytes)
            m[H_PROGRESS] += got
        free = m[rxq + vq.Q_NUM_FREE]
        if free >= PMD_BURST:  # virtio_rxq_rearm once rx_free_thresh descriptors are free
            for _ in range(free):
                charge(m, cc, cb, op.VIRTIO_RXQ_REARM, 1, 0)
                vq.vq_add(m, rxq, -1, 1, m[D_RXLEN], True, now(m))
            _pmd_kick(m, rxq)
    if wl == WL_TXONLY:
        got = PMD_BURST
        plen = m[H_PKTLEN]
        for i in range(got):
            m[scr + i] = plen
        count(m, st.TX_SUBMITTED, got)
        count(m, st.OFFERED, got)
    if wl != WL_RXDROP and got:
        while True:  # virtio_xmit_cleanup
            head, ln, ts, fr = vq.vq_get_buf(m, txq, now(m))
            if head < 0:
                break
            charge(m, cc, cb, op.VIRTIO_XMIT_CLEANUP, 1, 0)
        sent = 0
        tb = 0
        for i in range(got):
            if m[txq + vq.Q_NUM_FREE] < 1:
                break
            charge(m, cc, cb, op.VIRTIO_XMIT_PKTS, 1, 0)
            vq.vq_add(m, txq, -1, 1, m[scr + i], False, now(m))
            sent += 1
            tb += m[scr + i]
        count(m, st.TX_PACKETS, sent)
        count(m, st.TX_BYTES, tb)
        count(m, st.TX_ERRORS, got - sent)
        m[H_PROGRESS] += sent
        if sent:
            _pmd_kick(m, txq)
    wake(m, PMD, now(m))


@njit(cache=True)
def quantum(m, cc, cb, c):
    """One quantum of context ``c`` (kernels/loop.py)."""
    if m[D_MODE] == MODE_PMD:
        if c == PMD:
            pmd_quantum(m, cc, cb)
        else:
            host_quantum(m, cc, cb, PHOST)
    elif c == APP:
        app_quantum(m, cc, cb)
    elif c == TXN or c == TXL:
        tx_napi_quantum(m, cc, cb, c)
    elif c == RXN:
        rx_napi_quantum(m, cc, cb)
    else:
        host_quantum(m, cc, cb, HOST)


loop.define(globals())  # run_chunk(M, OFF, cc, cb, events): the engine loop over ``quantum``
