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
from xskbench import ops as op
from xskbench import stats as st
from xskbench.devices.virtio_net import (  # the ids, per mode, in setup's order
    CONTEXTS,  # noqa: F401  (declared_contexts reads it here)
    GUEST_CONTEXTS,
    PMD_CONTEXTS,
)
from xskbench.kernels import afxdp, loop
from xskbench.kernels.engine import (
    book,
    books,
    charge,
    cost,
    count,
    cx,
    cx_set,
    folded,
    idle_spin,
    lockstep_bounds,
    napi_complete,
    napi_enter,
    napi_schedule,
    now,
    replays,
    run_to,
    spend,
    steady_poll,
    stir,
    switch_label,
    unpark,
    wake,
)
from xskbench.kernels.faults import notify_at
from xskbench.kernels.jit import ix, njit
from xskbench.kernels.layout import (
    CX_A,
    CX_CPU,
    CX_KLABEL,
    CX_SCHED,
    CX_STALL,
    DEV_BASE,
    H_BUSYBUDGET,
    H_BUSYPOLL,
    H_CLK,
    H_NEEDWAKE,
    H_NO_REPLAY,
    H_NOW,
    H_NSEG,
    H_PKTLEN,
    H_PROGRESS,
    H_QACC,
    H_QCTX,
    H_QLABEL,
    H_QREAD,
    H_SCR,
    H_TXCSUM,
    H_WORKLOAD,
    H_ZC,
    INF,
    TXCSUM_OFFLOAD,
    WL_L2FWD,
    WL_RXDROP,
    WL_TXONLY,
)
from xskbench.kernels.steady import unsteady_if_idle

from . import PMD_BURST
from . import virtqueue as vq

(
    D_TXQ, D_RXQ, D_BUDGET, D_MODE, D_WAKEUP, D_HOSTKIND, D_IRQ_DELAY, D_IPI_DELAY,
    D_EXIT_DELAY, D_L_SYS, D_TXSCHED, D_TXCTX, D_TXMISSED, D_TXLAST, D_PRIME, D_HDR,
    D_RXLEN, D_CLEANTX, D_HOST_BURST, D_HOST_SLEEP, D_HSCR, D_VH_LOOP, D_BUSYLOOP,
    D_VH_LAST, D_VH_WOKEN, D_CSUM, D_REFILL_DELAY, D_WORK, D_BP,
) = range(DEV_BASE, DEV_BASE + 29)  # D_BP: afxdp.BP_WORDS words (busy poll)
VHOST_NET_BATCH = 64  # used entries signalled together (vhost_net_signal_used)
VHOST_NET_PKT_WEIGHT = 256  # packets per handle_tx / handle_rx pass before requeueing
VHOST_NET_WEIGHT = 0x80000  # bytes per pass before requeueing
TUN_READQ_SIZE = 500  # the tap's tfile ptr_ring (tx_queue_len)
# D_MODE, D_WAKEUP, D_HOSTKIND values: the config's names, in this order
MODES = ("zerocopy", "copy", "pmd")
MODE_ZC, MODE_COPY, MODE_PMD = range(len(MODES))
WAKEUPS = ("local", "ipi", "inline")
WAKE_LOCAL, WAKE_IPI, WAKE_INLINE = range(len(WAKEUPS))
HOSTS = ("vhost-user", "vhost-net")
HOST_USER, HOST_NET = range(len(HOSTS))
FIELD_ENUMS = {"wakeup": WAKEUPS, "host": HOSTS}  # virtio.<field> -> the kernel's numbering
APP, TXN, TXL, RXN, HOST = range(len(GUEST_CONTEXTS))
PMD, PHOST = range(len(PMD_CONTEXTS))


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
            m[D_VH_WOKEN] = 1
            wake(m, PHOST if m[D_MODE] == MODE_PMD else HOST, t)


@njit(cache=True)
def _tx_mark_missed(m):
    """NAPIF_STATE_MISSED on the tx NAPI: it polls once more (a state others' wakeups read)."""
    if not m[D_TXMISSED]:
        m[D_TXMISSED] = 1
        stir(m)


@njit(cache=True)
def _tx_schedule(m, c, t, irq):
    """Schedule the (single) tx NAPI on context ``c``; missed if already scheduled. A lost
    interrupt or IPI (``t`` = INF) schedules nothing."""
    if t >= INF:
        return False
    if m[D_TXSCHED]:
        _tx_mark_missed(m)
        return False
    m[D_TXSCHED] = 1
    m[D_TXCTX] = c
    stir(m)
    if irq:
        cx_set(m, c, CX_A, 1)
    wake(m, c, t)
    return True


@njit(cache=True)
def _host_interrupts(m, cc, cb):
    """vhost: signal the guest (eventfd → irqfd) where its used_event asks for it. The NAPI
    state it sets is what the application's wakeups read: that unparks it (setup.py)."""
    t = now(m)
    if vq.vq_dev_should_signal(m, m[D_TXQ]):
        charge(m, cc, cb, op.EVENTFD_SIGNAL, 1, 0)
        vq.vq_disable_cb(m, m[D_TXQ])  # skb_xmit_done
        _tx_schedule(m, TXN, notify_at(m, t + m[D_IRQ_DELAY]), True)
        unpark(m, APP)
    if vq.vq_dev_should_signal(m, m[D_RXQ]):
        charge(m, cc, cb, op.EVENTFD_SIGNAL, 1, 0)
        vq.vq_disable_cb(m, m[D_RXQ])  # skb_recv_done
        if napi_schedule(m, RXN, notify_at(m, t + m[D_IRQ_DELAY])):
            cx_set(m, RXN, CX_A, 1)
        unpark(m, APP)


# --- guest TX ----------------------------------------------------------------------------------
@njit(cache=True)
def free_old_xmit(m, cc, cb):
    """__free_old_xmit: reap used TX buffers (detach, kfree/cache the indirect table), then
    xsk_tx_completed once (zero copy) or the skb destructors (copy mode), which complete
    each skb's H_NSEG descriptors. Every buffer reaped completes: the loop keeps the time in
    a local and its calls are booked once."""
    q = m[D_TXQ]
    n = nk = nc = 0
    walked = 16 * (1 + m[H_NSEG])  # the buffer's sgs: the header and a frag per descriptor
    t = now(m)
    while True:
        head, ln, ts, fr = vq.vq_get_buf(m, q, t)
        if head < 0:
            break
        # per byte = per 16-B descriptor walked: the ring's, plus an indirect table's
        t += (cost(cc, cb, op.VIRTQUEUE_GET_BUF_CTX, 0) + cost(cc, cb, op.FREE_OLD_XMIT_PTR, 0)
              + cost(cc, cb, op.DETACH_BUF_SPLIT, walked + 16 if fr != vq.FREE_NONE else walked))
        if fr == vq.FREE_KFREE:
            t += cost(cc, cb, op.KFREE, 0)
            nk += 1
        elif fr == vq.FREE_CACHE:
            t += cost(cc, cb, op.DESC_CACHE_PUT, 0)
            nc += 1
        n += 1
    if n:
        run_to(m, t, t)  # its last look: the empty one
        books(m, cc, cb, op.VIRTQUEUE_GET_BUF_CTX, n, 0)
        books(m, cc, cb, op.DETACH_BUF_SPLIT, n, n * walked + 16 * (nk + nc))
        books(m, cc, cb, op.FREE_OLD_XMIT_PTR, n, 0)
        books(m, cc, cb, op.KFREE, nk, 0)
        books(m, cc, cb, op.DESC_CACHE_PUT, nc, 0)
        if m[H_ZC]:
            afxdp.tx_completed(m, cc, cb, n, op.XSK_TX_COMPLETED)
        else:
            charge(m, cc, cb, op.KFREE_SKB, n, 0)
            afxdp.tx_completed(m, cc, cb, n * m[H_NSEG], op.XSK_DESTRUCT_SKB)
    return n


@njit(cache=True)
def _add_out(m, cc, cb, addr, ln, t):
    """virtqueue_add_outbuf(_premapped) at ``t``: the shared header and the data, one sg per
    descriptor of a multi-buffer skb (xmit_skb: skb_to_sgvec over its frags). Its calls'
    time only, on the caller's clock: a caller sends what it took from TX and books its
    batch (_add_out_books). Returns how the indirect table came (vq.ADD_*), the time after
    and the time of its look (the avail ring's publish)."""
    q = m[D_TXQ]
    nsg = 1 + m[H_NSEG]
    look = t + cost(cc, cb, op.VIRTQUEUE_ADD_OUTBUF, 0)
    how = vq.vq_add(m, q, addr, nsg, ln, False, look)
    # cost per descriptor written (16 B each): the indirect table's nsg plus the ring's 1
    t = look + cost(cc, cb, op.VIRTQUEUE_ADD, 16 * (nsg + 1) if how != vq.ADD_DIRECT else 16 * nsg)
    if how == vq.ADD_KMALLOC:
        t += (cost(cc, cb, op.KMALLOC, 0) + cost(cc, cb, op.KMALLOC_SLAB, 0)
              + cost(cc, cb, op.MEMSET_ERMS, 0))
    elif how == vq.ADD_CACHE:
        t += cost(cc, cb, op.DESC_CACHE_GET, 0)
    if how == vq.ADD_KMALLOC or how == vq.ADD_CACHE:
        t += cost(cc, cb, op.VRING_MAP_ONE_SG, 0)
    return how, t, look


@njit(cache=True)
def _add_out_books(m, cc, cb, n, nk, nc):
    """The books of ``n`` _add_out calls, ``nk`` of which kmalloc'd an indirect table and
    ``nc`` took one from the cache (their bytes: each call's, summed)."""
    nsg = 1 + m[H_NSEG]
    books(m, cc, cb, op.VIRTQUEUE_ADD_OUTBUF, n, 0)
    books(m, cc, cb, op.VIRTQUEUE_ADD, n, 16 * (nsg * n + nk + nc))
    books(m, cc, cb, op.KMALLOC, nk, 0)
    books(m, cc, cb, op.KMALLOC_SLAB, nk, 0)
    books(m, cc, cb, op.MEMSET_ERMS, nk, 0)
    books(m, cc, cb, op.DESC_CACHE_GET, nc, 0)
    books(m, cc, cb, op.VRING_MAP_ONE_SG, nk + nc, 0)


@njit(cache=True)
def virtnet_xsk_xmit(m, cc, cb, budget):
    """Reap completions, then send up to min(budget, free ring slots) xsk descriptors;
    one kick per batch; set the TX need_wakeup flag. Returns how many were sent."""
    charge(m, cc, cb, op.VIRTNET_XSK_RUN, 1, 0)
    free_old_xmit(m, cc, cb)
    q = m[D_TXQ]
    room = m[ix(q + vq.Q_NUM_FREE)] // vq.vq_slots_for(m, q, 2)
    k = afxdp.zc_tx_peek_batch(m, cc, cb, min(budget, room))
    scr = m[H_SCR]
    nk = nc = 0
    t, look = m[H_NOW] + m[H_QACC], m[H_QREAD]
    for i in range(k):
        t += cost(cc, cb, op.VIRTNET_XSK_XMIT, 0)
        how, t, look = _add_out(m, cc, cb, m[ix(scr + 2 * i)], m[ix(scr + 2 * i + 1)], t)
        nk, nc = nk + (how == vq.ADD_KMALLOC), nc + (how == vq.ADD_CACHE)
    if k:
        run_to(m, t, look)
        books(m, cc, cb, op.VIRTNET_XSK_XMIT, k, 0)
        _add_out_books(m, cc, cb, k, nk, nc)
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
    stir(m)  # the NAPI state the application's wakeups read: missed cleared or idle
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
    elif _signal_after_enable(m, q):
        _tx_schedule(m, TXN, _late_signal_at(m, q), True)


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
        _tx_mark_missed(m)
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
    q, nseg = m[D_TXQ], m[H_NSEG]
    sent = n = nk = nc = 0
    while sent + nseg <= 32:  # TX_BATCH_SIZE descriptors
        free_old_xmit(m, cc, cb)
        addr, ln = afxdp.generic_xmit_one(m, cc, cb, False)
        if addr < 0:
            break
        if m[ix(q + vq.Q_NUM_FREE)] < vq.vq_slots_for(m, q, 1 + nseg):
            afxdp.generic_xmit_busy(m, addr)
            break
        if m[H_TXCSUM] == TXCSUM_OFFLOAD:  # the skb carries CHECKSUM_PARTIAL
            afxdp.csum_offload(m, cc, cb, 1)
            if not m[D_CSUM]:  # no VIRTIO_NET_F_CSUM: validate_xmit_skb sums it here
                charge(m, cc, cb, op.CSUM_PARTIAL, 1, ln)
        charge(m, cc, cb, op.START_XMIT, 1, 0)
        how, t, look = _add_out(m, cc, cb, addr, ln, m[H_NOW] + m[H_QACC])
        run_to(m, t, look)
        n, nk, nc = n + 1, nk + (how == vq.ADD_KMALLOC), nc + (how == vq.ADD_CACHE)
        sent += nseg
    afxdp.generic_xmit_done(m)
    if sent:
        _add_out_books(m, cc, cb, n, nk, nc)
        _kick(m, cc, cb, q)
        if not m[D_TXSCHED]:  # start_xmit re-arms callbacks so completions get reaped
            vq.vq_enable_cb_prepare(m, q)


@njit(cache=True)
def _busy_poll(m, cc, cb):
    """sk_busy_loop → napi_busy_loop on rx NAPI (the socket's NAPI id), one pass unless
    softirq owns it, then busy_poll_stop's second poll; with deferral rx callbacks stay
    disabled under the napi_watchdog timer, else virtqueue_napi_complete re-arms them.
    Returns True when the socket busy-polls."""
    state = afxdp.bp_begin(m, cc, cb, D_BP, RXN)
    if state != afxdp.BP_POLL:
        return state == afxdp.BP_SOFTIRQ
    budget = m[H_BUSYBUDGET]
    rx_poll(m, cc, cb, budget)
    afxdp.bp_stop(m, D_BP)
    full = rx_poll(m, cc, cb, budget)
    if afxdp.bp_end(m, D_BP, RXN):
        vq.vq_disable_cb(m, m[D_RXQ])
    elif full:
        napi_schedule(m, RXN, now(m))
    else:
        _rx_complete(m, cc, cb)
    return True


@njit(cache=True)
def app_quantum(m, cc, cb):
    progress = m[H_PROGRESS]
    kick = afxdp.app_iteration(m, cc, cb)
    if kick:
        label = m[H_QLABEL]
        switch_label(m, m[D_L_SYS])
        if kick & afxdp.KICK_TX:
            charge(m, cc, cb, op.SYS_SENDTO, 1, 0)
            count(m, st.SENDTO_CALLS, 1)
            busy = _busy_poll(m, cc, cb)
            if afxdp.sendto_wakes(m):
                if not m[H_ZC]:
                    _copy_sendto(m, cc, cb)
                elif not busy:
                    _xsk_wakeup(m, cc, cb)
        if kick & afxdp.KICK_RX:
            charge(m, cc, cb, op.SYS_RECVFROM, 1, 0)
            count(m, st.POLL_CALLS, 1)
            if not _busy_poll(m, cc, cb) and m[H_ZC] and afxdp.recvfrom_wakes(m):
                if napi_schedule(m, RXN, now(m)):  # refill via rx NAPI (inf.)
                    charge(m, cc, cb, op.NAPI_SCHEDULE, 1, 0)
        switch_label(m, label)
    if m[H_PROGRESS] == progress:
        idle_spin(m, cc, cb, APP, _app_next_change(m))
    wake(m, APP, now(m))


@njit(cache=True)
def _app_next_change(m):
    """The first time the application's idle poll could find work by itself: its rings'
    next stamped entry and, where its syscall runs the driver, the host's next used entry
    the driver reads there (vhost-net publishes a whole batch, each entry stamped ahead of
    the guest): the TX queue's where the syscall reaps TX (copy-mode xmit, inline wakeup,
    busy poll's rx_cleantx), the RX queue's only where it runs rx NAPI (busy poll). A used RX
    entry is rx NAPI's to read otherwise: a copy-mode receiver's idle spin does not stop at
    each of the host's."""
    t = afxdp.app_next_change(m)
    if not m[H_ZC] or m[D_WAKEUP] == WAKE_INLINE or m[H_BUSYPOLL]:
        t = min(t, _used_next(m, m[D_TXQ]))
    if m[H_BUSYPOLL]:
        t = min(t, _used_next(m, m[D_RXQ]))
    return t


@njit(cache=True)
def _used_next(m, q):
    """When the driver can next see a used entry of ``q`` it has not taken (INF: none)."""
    if vq.vq_used_pending(m, q) == 0:
        return INF
    return vq.vq_used_stamp(m, q)


# --- guest RX ----------------------------------------------------------------------------------
@njit(cache=True)
def _refill(m, cc, cb):
    """try_fill_recv when num_free > min(budget, vring size) / 2: UMEM buffers (zero copy,
    virtnet_add_recvbuf_xsk) or driver pages (copy mode); one kick."""
    q = m[D_RXQ]
    free = m[ix(q + vq.Q_NUM_FREE)]
    if free <= min(m[D_BUDGET], m[ix(q + vq.Q_NUM)]) // 2:
        return
    t = now(m)
    if m[H_ZC]:
        k = afxdp.zc_refill(m, cc, cb, free)
        if k == 0 and not m[H_NEEDWAKE]:
            # virtnet_add_recvbuf_xsk: -ENOMEM without need_wakeup; try_fill_recv fails and
            # the refill work retries (schedule_delayed_work(&vi->refill, HZ / 2))
            napi_schedule(m, RXN, now(m) + m[D_REFILL_DELAY])
        scr = m[H_SCR]
        for i in range(k):  # the adds are published at t: their calls are booked at once
            vq.vq_add(m, q, m[ix(scr + i)], 1, m[D_RXLEN], True, t)
        if k:
            charge(m, cc, cb, op.VIRTQUEUE_ADD_INBUF, k, 0)
            charge(m, cc, cb, op.VIRTQUEUE_ADD, k, 16 * k)
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
    return m[ix(m[H_CLK] + cx(m, c, CX_CPU))] > now(m)


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
        spend(m, cc, cb, op.VIRTQUEUE_GET_BUF_CTX, 0)
        spend(m, cc, cb, op.DETACH_BUF_SPLIT, 16)
        spend(m, cc, cb, op.RECEIVE_XSK, 0)
        spend(m, cc, cb, op.BPF_PROG_RUN_XDP, 0)
        if m[H_ZC]:
            afxdp.xsk_rcv_zc(m, cc, cb, vq.vq_token(m, q, head), ln - hdr, ts)
        else:
            afxdp.xsk_rcv_copy(m, cc, cb, ln - hdr, ts)
            charge(m, cc, cb, op.PAGE_POOL_RECYCLE, 1, 0)
    if got:
        books(m, cc, cb, op.VIRTQUEUE_GET_BUF_CTX, got, 0)
        books(m, cc, cb, op.DETACH_BUF_SPLIT, got, 16 * got)
        books(m, cc, cb, op.RECEIVE_XSK, got, 0)
        books(m, cc, cb, op.BPF_PROG_RUN_XDP, got, 0)
        unsteady_if_idle(m)  # every packet dropped (RX full)
        afxdp.xdp_flush(m, cc, cb)
    _refill(m, cc, cb)
    m[D_WORK] = got
    return got >= budget


@njit(cache=True)
def _rx_complete(m, cc, cb):
    """virtqueue_napi_complete: re-arm rx callbacks, poll again if a used entry raced in."""
    q = m[D_RXQ]
    charge(m, cc, cb, op.VIRTQUEUE_ENABLE_CB_PREPARE, 1, 0)
    vq.vq_enable_cb_prepare(m, q)
    if vq.vq_more_used(m, q, now(m)):
        vq.vq_disable_cb(m, q)
        napi_schedule(m, RXN, now(m))
    elif _signal_after_enable(m, q):
        if napi_schedule(m, RXN, _late_signal_at(m, q)):
            cx_set(m, RXN, CX_A, 1)


@njit(cache=True)
def _signal_after_enable(m, q):
    """vhost-net published used entries after this moment (its quantum ran first, when the
    callbacks were still off) and then went to sleep: at its publish time it would have
    seen the callbacks re-enabled and signalled. True when that signal is owed (the vhost-user
    PMD re-checks on every poll and needs no such repair)."""
    if m[D_HOSTKIND] != HOST_NET or m[D_MODE] == MODE_PMD:
        return False
    if vq.vq_used_pending(m, q) == 0:
        return False
    vq.vq_disable_cb(m, q)  # skb_recv_done / skb_xmit_done
    return True


@njit(cache=True)
def _late_signal_at(m, q):
    """When that owed interrupt reaches the guest (its eventfd_signal is the host's cost,
    left uncharged like the repaired kick)."""
    return notify_at(m, vq.vq_used_stamp(m, q) + m[D_IRQ_DELAY])


@njit(cache=True)
def rx_napi_quantum(m, cc, cb):
    if afxdp.bp_sleeps(m, cc, cb, D_BP, RXN):
        return
    napi_enter(m, cc, cb, RXN)
    if rx_poll(m, cc, cb, m[D_BUDGET]):
        if afxdp.bp_yield(m, D_BP):  # the busy poller takes over; callbacks stay off
            cx_set(m, RXN, CX_SCHED, 0)
            vq.vq_disable_cb(m, m[D_RXQ])
            wake(m, RXN, m[ix(D_BP + afxdp.BP_DUE)])
            return
        wake(m, RXN, now(m))
    elif napi_complete(m, RXN):
        if afxdp.bp_masked(m, D_BP) and afxdp.bp_complete(m, D_BP, m[D_WORK]):
            vq.vq_disable_cb(m, m[D_RXQ])  # napi_complete_done said no: callbacks stay off
            wake(m, RXN, m[ix(D_BP + afxdp.BP_DUE)])
        else:
            _rx_complete(m, cc, cb)


# --- host --------------------------------------------------------------------------------------
@njit(cache=True)
def _host_inject(m, cc, cb, ln):
    """Put one packet into a guest RX buffer; False (dropped) when none is posted."""
    q = m[D_RXQ]
    count(m, st.OFFERED, 1)
    if vq.vq_dev_avail(m, q, now(m), 1) == 0:
        count(m, st.RX_MISSED, 1)
        return False
    head = vq.vq_dev_pop(m, q)
    charge(m, cc, cb, op.RTE_VHOST_ENQUEUE, 1, ln)
    vq.vq_dev_push_used(m, q, head, ln + m[D_HDR], now(m))
    m[H_PROGRESS] += 1
    return True


@njit(cache=True)
def _avail_next(m, q):
    """When the device can next see an avail entry of ``q`` it has not consumed (INF: none
    posted): the PMD's view of that ring changes by itself only then."""
    if m[ix(q + vq.Q_LAST_AVAIL)] == m[ix(q + vq.Q_AVAIL_IDX)]:
        return INF
    return vq.vq_avail_stamp(m, q)


@njit(cache=True)
def _host_next_change(m):
    """The first time an idle host PMD poll could find work without another context moving:
    guest TX entries always, guest RX buffers where it injects without a TX packet."""
    t = _avail_next(m, m[D_TXQ])
    wl = m[H_WORKLOAD]
    if wl == WL_RXDROP or (wl == WL_L2FWD and m[D_PRIME] > 0):
        t = min(t, _avail_next(m, m[D_RXQ]))
    return t


@njit(cache=True)
def host_quantum(m, cc, cb, hctx):
    """One host PMD iteration: a burst from guest TX (looped into guest RX for l2fwd),
    priming / generating into guest RX, then interrupts where the guest asked for them."""
    progress = m[H_PROGRESS]
    charge(m, cc, cb, op.VHOST_USER_POLL, 1, 0)
    txq, rxq = m[D_TXQ], m[D_RXQ]
    burst = m[D_HOST_BURST]
    wl = m[H_WORKLOAD]
    n = vq.vq_dev_avail(m, txq, now(m), burst)
    scr = m[D_HSCR]
    for i in range(n):
        head = vq.vq_dev_pop(m, txq)
        ln = vq.vq_head_len(m, txq, head)
        charge(m, cc, cb, op.RTE_VHOST_DEQUEUE, 1, ln)
        vq.vq_dev_push_used(m, txq, head, 0, now(m))
        m[ix(scr + i)] = ln
        m[H_PROGRESS] += 1
    if wl == WL_L2FWD:
        for i in range(n):
            _host_inject(m, cc, cb, m[ix(scr + i)])
        k = vq.vq_dev_avail(m, rxq, now(m), min(m[D_PRIME], burst))
        for _ in range(k):
            _host_inject(m, cc, cb, m[H_PKTLEN])
        m[D_PRIME] -= k
    elif wl == WL_RXDROP:
        k = vq.vq_dev_avail(m, rxq, now(m), burst)
        for _ in range(k):
            _host_inject(m, cc, cb, m[H_PKTLEN])
    if m[D_MODE] != MODE_PMD:
        _host_interrupts(m, cc, cb)
    if m[H_PROGRESS] == progress:
        idle_spin(m, cc, cb, hctx, _host_next_change(m))
    wake(m, hctx, now(m))
    if m[H_PROGRESS] != progress and m[D_MODE] != MODE_PMD and (
            wl == WL_TXONLY or (wl == WL_L2FWD and m[D_PRIME] == 0)):
        _host_lockstep(m, cc, cb, hctx)


@njit(cache=True)
def _host_lockstep(m, cc, cb, hctx):
    """The host PMD's next polls of a guest that sends (txonly; l2fwd, looped into guest RX,
    once primed), run here at once while each is one the engine would fold (it starts
    before any other context could run: before the horizon, the next ring sample, the end
    of warm-up) and a plain one: a burst of the TX entries stamped by its look, none of
    them (nor their copies into RX) asking for an interrupt, or a steady empty poll (parked)
    with the replays spin_until would make of it, up to the poll that sees the next entry. A
    host PMD faster than a guest that stamps each descriptor as it adds it polls twice per
    packet (and replays the empty polls between); each poll here is its ring work and a few
    sums, the books are kept once for all of them (engine.folded), the same as quantum by
    quantum."""
    p = cc[op.VHOST_USER_POLL]
    if m[H_NO_REPLAY] or p <= 0 or cx(m, hctx, CX_STALL) > 0 or cx(m, hctx, CX_KLABEL) >= 0:
        return
    # an idle poll's spin_until sees the same horizon (the spinners watching the host were
    # unparked by the productive poll before it)
    hzn, end, lim = lockstep_bounds(m, hctx)
    idle_ok = steady_poll(m, hctx, op.VHOST_USER_POLL, p)
    q, rq, burst, scr = m[D_TXQ], m[D_RXQ], m[D_HOST_BURST], m[D_HSCR]
    fwd, hdr = m[H_WORKLOAD] == WL_L2FWD, m[D_HDR]
    c_deq, b_deq = cc[op.RTE_VHOST_DEQUEUE], cb[op.RTE_VHOST_DEQUEUE]
    c_enq, b_enq = cc[op.RTE_VHOST_ENQUEUE], cb[op.RTE_VHOST_ENQUEUE]
    t = m[H_NOW] + m[H_QACC]
    quanta = polls = pkts = nbytes = injected = ibytes = missed = idle_cycles = start = 0
    moved = length = 0
    idle = prev_idle = False
    seen = INF
    while t < lim:
        look = t + p  # the poll's read of the avail ring
        n = vq.vq_dev_avail(m, q, look, burst)
        reps = 0
        if n == 0:
            if not idle_ok:
                break
            seen = _avail_next(m, q)
            reps = max(replays(t, p, p, hzn, seen, end), 0)  # spin_until's of this poll
        else:
            used, rused = m[ix(q + vq.Q_USED_IDX)], m[ix(rq + vq.Q_USED_IDX)]
            # (n copies into RX at most: a guest that asked to hear of fewer asked of n)
            if vq.vq_dev_would_signal(m, q, used, used + n) or (
                    fwd and vq.vq_dev_would_signal(m, rq, rused, rused + n)):
                break
        if idle:  # the quantum before this poll ends: an idle one's cycles are idle
            idle_cycles += length
        prev_idle, idle = idle, n == 0
        start, moved = t, n
        quanta += 1
        polls += 1 + reps
        t = look + reps * p
        for i in range(n):
            head = vq.vq_dev_pop(m, q)
            ln = vq.vq_head_len(m, q, head)
            t += c_deq + ln * b_deq
            vq.vq_dev_push_used(m, q, head, 0, t)
            nbytes += ln
            m[ix(scr + i)] = ln
        pkts += n
        for i in range(n if fwd else 0):  # _host_inject
            if vq.vq_dev_avail(m, rq, t, 1) == 0:
                missed += 1
                continue
            ln = m[ix(scr + i)]
            head = vq.vq_dev_pop(m, rq)
            t += c_enq + ln * b_enq
            vq.vq_dev_push_used(m, rq, head, ln + hdr, t)
            injected += 1
            ibytes += ln
            moved += 1
        length = t - start
    if quanta == 0:
        return
    for o in (q, rq):  # every poll's vhost_notify looked
        m[ix(o + vq.Q_SIG_OLD)] = m[ix(o + vq.Q_USED_IDX)]
    m[H_PROGRESS] += pkts + injected
    book(m, cc, cb, op.VHOST_USER_POLL, polls, 0)
    book(m, cc, cb, op.RTE_VHOST_DEQUEUE, pkts, nbytes)
    if fwd:
        book(m, cc, cb, op.RTE_VHOST_ENQUEUE, injected, ibytes)
        count(m, st.OFFERED, pkts)
        count(m, st.RX_MISSED, missed)
    folded(m, hctx, quanta, start, length, moved, idle, prev_idle, idle_cycles, seen - p)


# --- host: in-kernel vhost-net (drivers/vhost/net.c) ------------------------------------------
@njit(cache=True)
def _vhost_signal(m, cc, cb, q, n):
    """vhost_net_signal_used: the used entries of the batch, then an interrupt where the
    guest's used_event asks for one (kernel modes; the DPDK PMD polls)."""
    if n:
        charge(m, cc, cb, op.VHOST_SIGNAL_USED, 1, 0)
        if m[D_MODE] != MODE_PMD:
            _host_interrupts(m, cc, cb)


@njit(cache=True)
def _handle_tx(m, cc, cb, arm):
    """handle_tx_copy: per guest TX buffer vhost_get_vq_desc, tun_sendmsg → tun_get_user
    (skb alloc, copy out of guest memory), netif_receive_skb into the host stack and its
    bridge (br_handle_frame) to a sink that frees it (l2fwd: forwarded back out the tap,
    tun_net_xmit into the tfile ptr_ring);
    used entries signalled per VHOST_NET_BATCH. An empty ring re-enables guest kicks only
    when ``arm`` (not while vhost_net_busy_poll spins). Returns (packets, weight exceeded)."""
    q = m[D_TXQ]
    charge(m, cc, cb, op.HANDLE_TX, 1, 0)
    vq.vq_dev_notify(m, q, False)  # vhost_disable_notify
    n = 0
    nbytes = 0
    pend = 0
    while True:
        if vq.vq_dev_avail(m, q, now(m), 1) == 0:
            if not arm:
                break
            vq.vq_dev_notify(m, q, True)  # vhost_enable_notify, then the race re-check
            if vq.vq_dev_avail(m, q, now(m), 1) == 0:
                break
            vq.vq_dev_notify(m, q, False)
        head = vq.vq_dev_pop(m, q)
        ln = vq.vq_head_len(m, q, head)
        charge(m, cc, cb, op.VHOST_GET_VQ_DESC, 1, 0)
        charge(m, cc, cb, op.TUN_GET_USER, 1, 0)
        charge(m, cc, cb, op.COPY_FROM_ITER, 1, ln)
        charge(m, cc, cb, op.NETIF_RECEIVE_SKB, 1, 0)  # netif_receive_skb → the bridge
        charge(m, cc, cb, op.BR_HANDLE_FRAME, 1, 0)
        if m[H_WORKLOAD] != WL_L2FWD:  # the sink drops it
            charge(m, cc, cb, op.KFREE_SKB, 1, 0)
        else:  # back out the tap into its tfile ptr_ring
            charge(m, cc, cb, op.TUN_NET_XMIT, 1, 0)
            count(m, st.OFFERED, 1)
            if m[D_VH_LOOP] >= TUN_READQ_SIZE:
                count(m, st.TUN_TX_DROPPED, 1)
            else:
                m[D_VH_LOOP] += 1
        vq.vq_dev_push_used(m, q, head, 0, now(m))
        m[H_PROGRESS] += 1
        n += 1
        nbytes += ln
        pend += 1
        if pend == VHOST_NET_BATCH:
            _vhost_signal(m, cc, cb, q, pend)
            pend = 0
        if n >= VHOST_NET_PKT_WEIGHT or nbytes >= VHOST_NET_WEIGHT:
            break
    _vhost_signal(m, cc, cb, q, pend)
    return n, n >= VHOST_NET_PKT_WEIGHT or nbytes >= VHOST_NET_WEIGHT


@njit(cache=True)
def _handle_rx(m, cc, cb, arm):
    """handle_rx: per packet from the tfile ptr_ring (l2fwd: what handle_tx looped back;
    rxdrop: a host sender that always has one queued) get_rx_bufs takes a guest buffer,
    tun_recvmsg copies the packet into it; no guest buffer → vhost_enable_notify and wait
    for the guest's refill kick. Returns (packets, weight exceeded)."""
    q = m[D_RXQ]
    wl = m[H_WORKLOAD]
    if wl == WL_TXONLY or (wl == WL_L2FWD and m[D_VH_LOOP] == 0 and m[D_PRIME] == 0):
        return 0, False
    charge(m, cc, cb, op.HANDLE_RX, 1, 0)
    vq.vq_dev_notify(m, q, False)
    n = 0
    pend = 0
    ln = m[H_PKTLEN]
    while n < VHOST_NET_PKT_WEIGHT and n * ln < VHOST_NET_WEIGHT:
        if wl == WL_L2FWD and m[D_VH_LOOP] == 0 and m[D_PRIME] == 0:
            break
        if vq.vq_dev_avail(m, q, now(m), 1) == 0:
            count(m, st.VHOST_NO_RX_BUFS, 1)
            if not arm:
                break
            vq.vq_dev_notify(m, q, True)
            if vq.vq_dev_avail(m, q, now(m), 1) == 0:
                break
            vq.vq_dev_notify(m, q, False)
        if wl == WL_L2FWD and m[D_VH_LOOP] > 0:
            m[D_VH_LOOP] -= 1
        else:  # rxdrop's host sender, or l2fwd priming as the vhost-user host does
            m[D_PRIME] -= int(wl == WL_L2FWD)
            count(m, st.OFFERED, 1)
        head = vq.vq_dev_pop(m, q)
        charge(m, cc, cb, op.PTR_RING_CONSUME_BATCHED, 1, 0)
        charge(m, cc, cb, op.GET_RX_BUFS, 1, 0)
        charge(m, cc, cb, op.TUN_DO_READ, 1, 0)
        charge(m, cc, cb, op.COPY_TO_ITER, 1, ln)
        vq.vq_dev_push_used(m, q, head, ln + m[D_HDR], now(m))
        m[H_PROGRESS] += 1
        n += 1
        pend += 1
        if pend == VHOST_NET_BATCH:
            _vhost_signal(m, cc, cb, q, pend)
            pend = 0
    _vhost_signal(m, cc, cb, q, pend)
    return n, n >= VHOST_NET_PKT_WEIGHT or n * ln >= VHOST_NET_WEIGHT


@njit(cache=True)
def vhost_net_quantum(m, cc, cb, hctx):
    """The vhost worker: handle_tx then handle_rx (one worker thread serves both vqs). It
    requeues itself while there is work; idle, it busy-polls the vqs for busyloop_timeout if
    set, then enables notifications and sleeps until a guest kick wakes it."""
    if m[D_VH_WOKEN]:
        m[D_VH_WOKEN] = 0
        charge(m, cc, cb, op.CONTEXT_SWITCH, 1, 0)
        count(m, st.VHOST_WAKEUPS, 1)
    spinning = m[D_BUSYLOOP] > 0 and now(m) < m[D_VH_LAST] + m[D_BUSYLOOP]
    ntx, tx_more = _handle_tx(m, cc, cb, not spinning)
    nrx, rx_more = _handle_rx(m, cc, cb, not spinning)
    if ntx or nrx:
        m[D_VH_LAST] = now(m)
    if tx_more or rx_more or (ntx + nrx > 0 and m[H_WORKLOAD] != WL_RXDROP):
        wake(m, hctx, now(m))
        return
    if m[H_WORKLOAD] == WL_RXDROP and nrx:  # the host sender keeps the ptr_ring non-empty
        wake(m, hctx, now(m))
        return
    if spinning:
        # vhost_net_busy_poll: spin on the avail rings; guest kicks stay as they were (not
        # re-enabled: with EVENT_IDX avail_event is not advanced, so the guest does not kick)
        charge(m, cc, cb, op.VHOST_NET_BUSY_POLL, 1, 0)
        wake(m, hctx, now(m))
        return
    # asleep: vqs left with notifications enabled by handle_tx/handle_rx; a kick wakes it
    q = m[D_TXQ]
    wl = m[H_WORKLOAD]
    if m[ix(q + vq.Q_AVAIL_IDX)] == m[ix(q + vq.Q_LAST_AVAIL)] and (
            wl == WL_RXDROP or m[D_VH_LOOP] > 0 or m[D_PRIME] > 0):
        q = m[D_RXQ]  # packets wait for guest RX buffers: a refill kick wakes the worker
    if m[ix(q + vq.Q_AVAIL_IDX)] != m[ix(q + vq.Q_LAST_AVAIL)]:
        # the guest published after this moment (its quantum ran first): it saw avail_event
        # and kicked; deliver that kick (its cost is the guest's)
        count(m, st.KICKS, 1)
        t = notify_at(m, vq.vq_avail_stamp(m, q) + m[D_EXIT_DELAY])
        m[D_HOST_SLEEP] = int(t >= INF)
        m[D_VH_WOKEN] = int(t < INF)
        wake(m, hctx, t)
        return
    if not m[D_HOST_SLEEP]:  # the guest's next kick wakes it
        stir(m)
    m[D_HOST_SLEEP] = 1


# --- guest DPDK virtio PMD (testpmd io forwarding) ---------------------------------------------
@njit(cache=True)
def _pmd_kick(m, q):
    """virtqueue_notify from user space (cost inside the per-packet ops); wakes vhost-net."""
    if vq.vq_kick_prepare(m, q):
        count(m, st.KICKS, 1)
        _wake_host(m)


@njit(cache=True)
def pmd_quantum(m, cc, cb):
    progress = m[H_PROGRESS]
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
            m[ix(scr + got)] = ln - hdr
            nbytes += ln - hdr
            got += 1
        if got:
            count(m, st.RX_PACKETS, got)
            count(m, st.RX_BYTES, nbytes)
            m[H_PROGRESS] += got
        free = m[ix(rxq + vq.Q_NUM_FREE)]
        if free >= PMD_BURST:  # virtio_rxq_rearm once rx_free_thresh descriptors are free
            for _ in range(free):
                charge(m, cc, cb, op.VIRTIO_RXQ_REARM, 1, 0)
                vq.vq_add(m, rxq, -1, 1, m[D_RXLEN], True, now(m))
            _pmd_kick(m, rxq)
    if wl == WL_TXONLY:
        got = PMD_BURST
        plen = m[H_PKTLEN]
        for i in range(got):
            m[ix(scr + i)] = plen
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
            if m[ix(txq + vq.Q_NUM_FREE)] < 1:
                break
            charge(m, cc, cb, op.VIRTIO_XMIT_PKTS, 1, 0)
            vq.vq_add(m, txq, -1, 1, m[ix(scr + i)], False, now(m))
            sent += 1
            tb += m[ix(scr + i)]
        count(m, st.TX_PACKETS, sent)
        count(m, st.TX_BYTES, tb)
        count(m, st.TX_ERRORS, got - sent)
        m[H_PROGRESS] += sent
        if sent:
            _pmd_kick(m, txq)
    if m[H_PROGRESS] == progress:  # nothing received or sent (txonly: a full ring's drops)
        # its burst reads only the host's used entries, stamped ahead of it: TX's in txonly,
        # else RX's (TX is cleaned up only when it received something to send)
        idle_spin(m, cc, cb, PMD, _used_next(m, txq if wl == WL_TXONLY else rxq))
    wake(m, PMD, now(m))


@njit(cache=True)
def quantum(m, cc, cb, c):
    """One quantum of context ``c`` (kernels/loop.py)."""
    if m[D_MODE] == MODE_PMD:
        if c == PMD:
            pmd_quantum(m, cc, cb)
        elif m[D_HOSTKIND] == HOST_NET:
            vhost_net_quantum(m, cc, cb, PHOST)
        else:
            host_quantum(m, cc, cb, PHOST)
    elif c == APP:
        app_quantum(m, cc, cb)
    elif c == TXN or c == TXL:
        tx_napi_quantum(m, cc, cb, c)
    elif c == RXN:
        rx_napi_quantum(m, cc, cb)
    elif m[D_HOSTKIND] == HOST_NET:
        vhost_net_quantum(m, cc, cb, HOST)
    else:
        host_quantum(m, cc, cb, HOST)


loop.define(globals())  # run_chunk(M, OFF, cc, cb, events): the engine loop over ``quantum``
