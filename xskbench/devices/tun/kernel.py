"""tun + vhost-net: a host application's AF_XDP socket bound to a tun queue, whose packets
vhost-net copies into a guest's receive virtqueue (design/datapaths.md §3).

Contexts: APP (the host application, e.g. an OVS PMD; its syscalls go to label "sys"),
VHOST (the vhost-net worker thread), GUEST (the guest's virtio-net rx NAPI on a vCPU).

Copy mode (mainline): sendto → xsk_generic_xmit (skb + payload copy) → tun_net_xmit →
tfile ptr_ring (full: dropped, tun's tx_dropped) → sk_data_ready queues handle_rx on the
worker → handle_rx: vhost_net_buf_produce takes up to VHOST_NET_BATCH pointers, each
packet takes a guest buffer (get_rx_bufs), is copied into guest memory, the skb is consumed
and its destructor publishes the completion; used entries are signalled when more than 64
are pending; a pass stops at VHOST_NET_PKT_WEIGHT / VHOST_NET_WEIGHT and requeues itself.

Zero copy v1 (Jan 2024 patch): sendto only calls ndo_xsk_wakeup (wakes vhost); handle_rx
peeks one xsk descriptor at a time (xsk_tx_peek_desc + xsk_tx_release under the pool lock),
copies it from UMEM into the guest and completes it (xsk_tx_completed(pool, 1)).
Zero copy v2 (Feb 2024): vhost_net_buf_produce finds the ptr_ring empty, tun_peek_xsk
completes the previous batch, peeks a batch (bounded by the ptr_ring's free slots and
TUN_XDP_BATCH = vhost_batch) and pushes tagged descriptor pointers into the ptr_ring.

v1 pays per packet what v2 pays per batch: the peek_len call, the pool lock, the TX consumer
release and the completion publish, each publish a cache line the application reads.

The guest (``tun.guest``): napi = the kernel's virtio-net rx NAPI, interrupted by vhost
(eventfd → irqfd); it verifies the L4 checksum in software, because AF_XDP traffic reaches it
with no checksum state (copy mode: a CHECKSUM_NONE skb, so tun's vnet header has no
DATA_VALID; zero copy: the patch writes a zeroed vnet header). pmd = a DPDK virtio PMD
(testpmd rxonly) polling the used ring; it disabled interrupts (VRING_AVAIL_F_NO_INTERRUPT),
so vhost_add_used_and_signal_n writes used entries and never signals, and it does not touch
the payload. Either kicks vhost when vhost asked for avail notifications (out of buffers).

Several queues' vhost workers on one host core (mq.host = shared): one worker per queue pair,
each a thread, so a handle_rx pass after another queue's pass on that core is a context switch.

A process on the tap fd instead of vhost-net (``tun.peer = fd``, the measured tap in a
namespace): contexts APP and PEER (FD_CONTEXTS; PEER takes VHOST's id). The peer's write()
runs the whole receive path on its own CPU in process context (tun_get_user → tun_build_skb →
native XDP on the xdp_buff, or generic XDP in netif_receive_skb → __xsk_rcv copy → flush);
its read() drains the tfile ptr_ring the application's sendto fills (tun_net_xmit, full →
tx_dropped). tun_net_xmit's skb_orphan runs the xsk destructor, so a descriptor completes
when its skb enters the ptr_ring, not when it is read.

Packet bytes copied by the CPU beyond the queue's share of the LLC (testbed.llc_mb) are read
from memory: ``llc_miss`` per byte, in proportion (queues.llc_miss_ppm).

The guest side is minimal on purpose (not the virtio-net split-ring model): the rx
virtqueue is four counters (buffers posted, taken by vhost, used published, consumed by the
guest); a published used index is visible to the guest from the time vhost published it.
Guest TX (handle_tx) is not modelled. Deviation from the v1 patch: vhost checks for
a guest buffer before peeking a descriptor, so the "peeked but no guest buffer → stranded
descriptor" bug pointed out in review does not happen here.
"""
from xskbench import ops as op
from xskbench import stats as st
from xskbench.devices.tun import CONTEXTS  # the ids, in setup's order
from xskbench.kernels import afxdp, loop
from xskbench.kernels.engine import (
    as_last_idle_log,
    book,
    books,
    charge,
    count,
    cx,
    cx_set,
    delay,
    folded,
    horizon,
    idle_spin,
    lockstep_bounds,
    napi_complete,
    napi_enter,
    napi_schedule,
    now,
    replays,
    spend,
    spin_until,
    switch_label,
    wake,
)
from xskbench.kernels.faults import notify_at, offered_clock, offered_time
from xskbench.kernels.jit import ix, njit
from xskbench.kernels.layout import (
    CX_A,
    CX_CPU,
    CX_READY,
    CX_SCHED,
    CX_STALL,
    DEV_BASE,
    H_APPSTK_N,
    H_BATCH,
    H_CPULAST,
    H_CQ,
    H_FLEN,
    H_GAP,
    H_HEADROOM,
    H_NO_REPLAY,
    H_NOW,
    H_NREFRESH,
    H_NSEG,
    H_OUTSTANDING,
    H_OWN,
    H_PKTLEN,
    H_PROGRESS,
    H_QACC,
    H_QLABEL,
    H_SCR,
    H_SENT_SEQ,
    H_START_T,
    H_TX,
    H_WORKLOAD,
    H_ZC,
    INF,
    OWN_CQ,
    OWN_DEV,
    WL_TXONLY,
)
from xskbench.kernels.llc import llc_miss
from xskbench.kernels.ptr_ring import (
    ptr_ring_consume,
    ptr_ring_consume_batched,
    ptr_ring_count,
    ptr_ring_free,
    ptr_ring_produce,
)
from xskbench.kernels.steady import unsteady_if_idle
from xskbench.kernels.xsk_ring import (
    R_REFRESH,
    cons_peek,
    cons_release,
    cons_would_see,
    prod_nb_free,
    prod_reserve,
    prod_submit_n,
    prod_would_free,
    ring_addr,
    ring_entries,
    ring_len,
    ring_write,
)

(
    D_PR, D_VB, D_VB_HEAD, D_VB_N, D_VB_CAP, D_G_SIZE, D_G_AVAIL, D_VH_TAKEN, D_G_USED,
    D_G_CONS, D_VH_WAIT_AVAIL, D_VH_QUEUED, D_WPKTS, D_WBYTES, D_GBUDGET, D_IRQ_DELAY,
    D_L_SYS, D_ZCV, D_V2_PREV, D_STALL_UNTIL, D_BURST, D_GPMD, D_GBURST, D_G_USED_PREV,
    D_G_USED_AT, D_LLC_PPM, D_VH_RAN, D_FD, D_FD_NATIVE, D_FD_BATCH, D_FD_W, D_FD_R,
    D_FD_POLL,
) = range(DEV_BASE, DEV_BASE + 33)
APP, VHOST, GUEST = range(len(CONTEXTS))
PEER = VHOST
TX_BATCH_SIZE = 32  # xsk_generic_xmit: descriptors per sendto
L4_OFFSET = 34      # Ethernet + IPv4 headers in front of the L4 header
SIGNAL_BATCH = 64   # vhost_net_signal_used when done_idx > VHOST_NET_BATCH


# --- completions -------------------------------------------------------------------------
@njit(cache=True)
def _publish(m, cc, cb):
    """A ring index store (TX consumer, completion producer) the application polls."""
    charge(m, cc, cb, op.XSK_RING_PUBLISH, 1, 0)


@njit(cache=True)
def _complete_dropped(m, cc, cb, k):
    """The destructor of a dropped skb: the completion is published (the frame goes back to
    the application) but the packet is not counted as transmitted."""
    cq = m[H_CQ]
    charge(m, cc, cb, op.XSK_DESTRUCT_SKB, k, 0)
    i = m[ix(cq + 2)]  # R_PROD: oldest reserved, unpublished completion (in-order submit)
    for j in range(k):
        f = afxdp.frame_of(m, ring_addr(m, cq, i + j))
        m[ix(m[H_OWN] + f)] = OWN_CQ
    prod_submit_n(m, cq, k, now(m))
    _publish(m, cc, cb)


# --- waking the vhost worker ------------------------------------------------------------
@njit(cache=True)
def _vhost_queue(m, cc, cb):
    """vhost_poll_queue → vhost_vq_work_queue: queue handle_rx once; wake the worker if it
    sleeps (the waker pays try_to_wake_up, the worker a context switch in)."""
    if m[D_VH_QUEUED]:
        return
    m[D_VH_QUEUED] = 1
    charge(m, cc, cb, op.VHOST_POLL_QUEUE, 1, 0)
    if cx(m, VHOST, CX_READY) >= INF:
        charge(m, cc, cb, op.WAKE_UP_PROCESS, 1, 0)
        count(m, st.VHOST_WAKEUPS, 1)
        cx_set(m, VHOST, CX_A, 1)
        t = notify_at(m, now(m) + delay(m, m[D_IRQ_DELAY]))
        if t >= INF:  # lost wakeup: nothing queued, the next sk_data_ready queues it again
            m[D_VH_QUEUED] = 0
            return
        wake(m, VHOST, max(t, m[D_STALL_UNTIL]))


@njit(cache=True)
def _wake_reader(m, cc, cb):
    """tun.peer=fd: the tfile's wait queue wakes the process sleeping in ppoll()."""
    if not m[D_FD_POLL]:
        return
    charge(m, cc, cb, op.WAKE_UP_PROCESS, 1, 0)
    t = notify_at(m, now(m) + delay(m, m[D_IRQ_DELAY]))
    if t >= INF:  # lost wakeup: it sleeps on until the next sk_data_ready
        return
    m[D_FD_POLL] = 0
    cx_set(m, PEER, CX_A, 1)
    wake(m, PEER, t)


@njit(cache=True)
def _data_ready(m, cc, cb):
    """sk_data_ready on the tfile socket → vhost_poll_wakeup, or the fd's reader."""
    charge(m, cc, cb, op.SOCK_DEF_READABLE, 1, 0)
    if m[D_FD]:
        _wake_reader(m, cc, cb)
    else:
        _vhost_queue(m, cc, cb)


# --- the application's syscalls -----------------------------------------------------------
@njit(cache=True)
def _sendto(m, cc, cb):
    charge(m, cc, cb, op.SYS_SENDTO, 1, 0)
    count(m, st.SENDTO_CALLS, 1)
    if m[H_ZC]:  # ndo_xsk_wakeup = __tun_xdp_flush_tfile: wake vhost, nothing else
        charge(m, cc, cb, op.XSK_WAKEUP, 1, 0)
        count(m, st.WAKEUPS, 1)
        _data_ready(m, cc, cb)
        return
    sent = 0
    while sent < TX_BATCH_SIZE:
        addr, ln = afxdp.generic_xmit_one(m, cc, cb, True)
        if addr < 0:
            break
        llc_miss(m, cc, cb, m[D_LLC_PPM], ln)  # skb_store_bits reads the UMEM frame
        sent += 1
        charge(m, cc, cb, op.TUN_NET_XMIT, 1, 0)
        if not ptr_ring_produce(m, m[D_PR], addr, ln, now(m)):
            # ptr_ring full: tx_dropped, kfree_skb → destructor; NET_XMIT_DROP ends sendto
            count(m, st.TUN_TX_DROPPED, 1)
            charge(m, cc, cb, op.KFREE_SKB, 1, 0)
            _complete_dropped(m, cc, cb, 1)
            break
        if m[D_FD]:
            # skb_orphan in tun_net_xmit ran xsk_destruct_skb: the descriptor is complete
            # while its copy waits in the ptr_ring (vhost-net: completed at consume_skb)
            afxdp.tx_completed(m, cc, cb, 1, op.XSK_DESTRUCT_SKB)
        _data_ready(m, cc, cb)
    if sent:
        _publish(m, cc, cb)
    afxdp.generic_xmit_done(m)


@njit(cache=True)
def app_quantum(m, cc, cb):
    """One OVS PMD iteration toward the tun port. Unlike xdpsock (a sendto on every loop
    while completions are outstanding), netdev-afxdp kicks once after sending a batch, and
    again while the kernel leaves descriptors on TX (copy mode: 32 per sendto, -EBUSY).
    At a set rate the PMD forwards ``pmd_burst`` packets at a time. With tun.peer=fd the
    application is xdpsock: a sendto whenever TX wants a kick."""
    progress = m[H_PROGRESS]
    gap = m[H_GAP]
    burst = m[D_BURST]
    ovs = not m[D_FD]
    if ovs and gap > 0 and burst > 1 and m[H_WORKLOAD] == WL_TXONLY and m[H_APPSTK_N] >= burst:
        due = (offered_clock(m, now(m)) - m[H_START_T]) // gap + 1
        if due - m[H_SENT_SEQ] < burst:  # the PMD's poll found less than a burst: spin
            charge(m, cc, cb, op.APP_LOOP, 1, 0)
            t = offered_time(m, m[H_START_T] + (m[H_SENT_SEQ] + burst - 1) * gap)
            spin_until(m, cc, cb, horizon(m, APP), t)
            wake(m, APP, now(m))
            return
    sent = m[H_SENT_SEQ]
    kick = afxdp.app_iteration(m, cc, cb)
    if ovs and m[H_SENT_SEQ] == sent and (m[H_ZC] or ring_entries(m, m[H_TX]) == 0):
        kick &= ~afxdp.KICK_TX  # OVS kicks after a batch it sent, not on every poll
    if kick:
        label = m[H_QLABEL]
        switch_label(m, m[D_L_SYS])
        if kick & afxdp.KICK_TX:
            _sendto(m, cc, cb)
        if kick & afxdp.KICK_RX:
            charge(m, cc, cb, op.SYS_RECVFROM, 1, 0)
            count(m, st.POLL_CALLS, 1)
        switch_label(m, label)
    if m[H_PROGRESS] == progress:
        spin_until(m, cc, cb, horizon(m, APP), afxdp.app_next_change(m))
    wake(m, APP, now(m))  # the PMD spins
    if (ovs and m[H_ZC] and gap == 0 and kick == 0 and m[H_WORKLOAD] == WL_TXONLY
            and m[H_PROGRESS] != progress and m[H_SENT_SEQ] == sent):
        _app_lockstep(m, cc, cb)


@njit(cache=True)
def _app_lockstep(m, cc, cb):
    """The OVS PMD's next polls after one that reaped completions and sent nothing (zero
    copy, txonly, no set rate), run here at once while each is one the engine would fold (it
    starts before the horizon, the next ring sample, the end of warm-up) and a plain one: it
    reaps what vhost completed by its look and finds no room for its batch on TX, so it
    neither sends nor kicks; an empty one is replayed as spin_until replays it. vhost
    completes one descriptor at a time, each stamped: the PMD polls twice per packet (and
    replays the empty polls between). Each poll here is its ring work and a few sums, the
    books are kept once for all of them (engine.folded), the same as quantum by quantum."""
    c_loop, c_peek, c_ref = cc[op.APP_LOOP], cc[op.RING_PEEK], cc[op.RING_REFRESH]
    if (m[H_NO_REPLAY] or m[H_NSEG] != 1 or cx(m, APP, CX_STALL) > 0
            or c_loop + c_peek <= 0):
        return
    hzn, end, lim = lockstep_bounds(m, APP)  # no spinner watches it: spin_until's horizon too
    cq, tx, batch = m[H_CQ], m[H_TX], m[H_BATCH]
    t = m[H_NOW] + m[H_QACC]
    quanta = polls = refreshed = charged = idle_cycles = start = length = moved = 0
    idle = prev_idle = False
    while t < lim and m[H_OUTSTANDING] > 0:
        look = t + c_loop  # the completion ring's read; TX's after the peek's charge
        k = cons_would_see(m, cq, batch, look)
        n = min(batch, m[H_APPSTK_N] + k)
        if n == 0 or prod_would_free(m, tx, n, look + c_peek) >= n:
            break  # nothing to send, or the batch fits: it sends (and kicks)
        if idle:  # the quantum before this poll ends: an idle one's cycles are idle
            idle_cycles += length
        before = m[ix(cq + R_REFRESH)] + m[ix(tx + R_REFRESH)]
        k, idx = cons_peek(m, cq, batch, look)
        afxdp.reap(m, k, idx, look + c_peek)
        prod_nb_free(m, tx, n, look + c_peek)
        r = m[ix(cq + R_REFRESH)] + m[ix(tx + R_REFRESH)] - before
        q = c_loop + c_peek + r * c_ref
        reps = 0
        # an empty one's log: its loop, the completion ring's peek, the TX-full count and
        # its ring refreshes (charge_refreshes), as app_iteration charges them
        if k == 0 and as_last_idle_log(m, APP, q, (
                (op.APP_LOOP, 1), (op.RING_PEEK, 1), (-1 - st.TX_FULL_POLLS, 1),
                (op.RING_REFRESH, r)), 4 if r else 3):
            seen = afxdp.app_next_change_at(m, t)
            reps = max(replays(t, q, c_loop + c_peek, hzn, seen, end), 0)
        prev_idle, idle = idle, k == 0
        start, moved, length = t, k, q * (1 + reps)
        quanta += 1
        polls += 1 + reps
        refreshed += r
        charged += r * (1 + reps)
        t += length
    if quanta == 0:
        return
    book(m, cc, cb, op.APP_LOOP, polls, 0)
    book(m, cc, cb, op.RING_PEEK, polls, 0)
    book(m, cc, cb, op.RING_REFRESH, charged, 0)
    count(m, st.TX_FULL_POLLS, polls)
    m[H_NREFRESH] += refreshed  # charged here, as each poll's charge_refreshes would
    folded(m, APP, quanta, start, length, moved, idle, prev_idle, idle_cycles, -1)


# --- vhost-net handle_rx --------------------------------------------------------------------
@njit(cache=True)
def _peek_one(m, cc, cb):
    """tun_peek_len (v1), called through sock->ops->peek_len for every packet:
    xsk_tx_peek_desc + xsk_tx_release under the pool lock, one descriptor. The completion
    slot is reserved at peek (xskq_prod_reserve_addr). Returns (addr, len) or (-1, 0)."""
    charge(m, cc, cb, op.TUN_PEEK_LEN, 1, 0)
    charge(m, cc, cb, op.XSK_TX_PEEK_DESC, 1, 0)
    tx, cq = m[H_TX], m[H_CQ]
    if prod_nb_free(m, cq, 1, now(m)) < 1:
        return -1, 0
    k, idx = cons_peek(m, tx, 1, now(m))
    if k == 0:
        count(m, st.TX_RING_EMPTY, 1)
        return -1, 0
    addr = ring_addr(m, tx, idx)
    ln = ring_len(m, tx, idx)
    ck, cidx = prod_reserve(m, cq, 1, now(m))
    ring_write(m, cq, cidx, addr - m[H_HEADROOM], 0)
    m[ix(m[H_OWN] + afxdp.frame_of(m, addr))] = OWN_DEV
    m[ix(m[H_FLEN] + afxdp.frame_of(m, addr))] = ln
    cons_release(m, tx, now(m))
    charge(m, cc, cb, op.XSK_TX_RELEASE, 1, 0)
    _publish(m, cc, cb)
    afxdp.charge_refreshes(m, cc, cb)
    return addr, ln


@njit(cache=True)
def _peek_xsk_v2(m, cc, cb):
    """tun_peek_xsk (v2): complete the previous batch, peek a new one into the ptr_ring."""
    if m[D_V2_PREV]:
        afxdp.tx_completed(m, cc, cb, m[D_V2_PREV], op.XSK_TX_COMPLETED)
        _publish(m, cc, cb)
        m[D_V2_PREV] = 0
    n = min(ptr_ring_free(m, m[D_PR]), m[D_VB_CAP])
    k = afxdp.zc_tx_peek_batch(m, cc, cb, n)
    if k:
        _publish(m, cc, cb)  # the batch's one TX consumer release
    scr = m[H_SCR]
    for i in range(k):
        ptr_ring_produce(m, m[D_PR], m[ix(scr + 2 * i)], m[ix(scr + 2 * i + 1)], now(m))
    charge(m, cc, cb, op.PTR_RING_PRODUCE, k, 0)
    m[D_V2_PREV] = k
    return k


@njit(cache=True)
def _buf_produce(m, cc, cb):
    """vhost_net_buf_produce: refill vhost's local pointer cache from the ptr_ring."""
    k = ptr_ring_consume_batched(m, m[D_PR], m[D_VB], m[D_VB_CAP], now(m))
    if k == 0 and m[H_ZC]:  # v2: the ptr_ring is fed from the xsk on demand
        if _peek_xsk_v2(m, cc, cb):
            k = ptr_ring_consume_batched(m, m[D_PR], m[D_VB], m[D_VB_CAP], now(m))
    charge(m, cc, cb, op.PTR_RING_CONSUME_BATCHED, k, 0)
    m[D_VB_HEAD] = 0
    m[D_VB_N] = k


@njit(cache=True)
def _used_seen(m):
    """The used index as the guest sees it now: the latest publish only from its time on."""
    return m[D_G_USED] if now(m) >= m[D_G_USED_AT] else m[D_G_USED_PREV]


@njit(cache=True)
def _signal_used(m, cc, cb, n):
    """vhost_net_signal_used: publish ``n`` used entries; interrupt the guest unless its
    NAPI is already polling (callbacks disabled) or it is a PMD (interrupts off)."""
    charge(m, cc, cb, op.VHOST_SIGNAL_USED, 1, 0)
    m[D_G_USED_PREV] = m[D_G_USED]
    m[D_G_USED] += n
    m[D_G_USED_AT] = now(m)
    if not m[D_GPMD] and not cx(m, GUEST, CX_SCHED):
        charge(m, cc, cb, op.EVENTFD_SIGNAL, 1, 0)
        if napi_schedule(m, GUEST, notify_at(m, now(m) + delay(m, m[D_IRQ_DELAY]))):
            cx_set(m, GUEST, CX_A, 1)


@njit(cache=True)
def vhost_quantum(m, cc, cb):
    if now(m) < m[D_STALL_UNTIL]:  # fault injection: the worker is stalled
        wake(m, VHOST, m[D_STALL_UNTIL])
        return
    if cx(m, VHOST, CX_A):
        cx_set(m, VHOST, CX_A, 0)
        charge(m, cc, cb, op.CONTEXT_SWITCH, 1, 0)
    elif m[D_VH_RAN] and m[ix(m[H_CPULAST] + cx(m, VHOST, CX_CPU))] == 0:
        # another queue's vhost worker (a thread of its own) ran on this core since
        charge(m, cc, cb, op.CONTEXT_SWITCH, 1, 0)
    m[D_VH_RAN] = 1
    m[D_VH_QUEUED] = 0
    charge(m, cc, cb, op.HANDLE_RX, 1, 0)
    zc, v1 = m[H_ZC], m[D_ZCV] == 1
    pkts, nbytes, done = 0, 0, 0
    requeue = False
    while True:
        if m[D_G_AVAIL] - m[D_VH_TAKEN] <= 0:  # get_rx_bufs: no guest buffer
            m[D_VH_WAIT_AVAIL] = 1
            count(m, st.VHOST_NO_RX_BUFS, 1)
            break
        if zc and v1:
            addr, ln = _peek_one(m, cc, cb)
            if addr < 0:
                break
        else:
            if m[D_VB_N] == 0:
                _buf_produce(m, cc, cb)
                if m[D_VB_N] == 0:
                    break
            s = m[D_VB] + 2 * m[D_VB_HEAD]
            addr, ln = m[ix(s)], m[ix(s + 1)]
            m[D_VB_HEAD] += 1
            m[D_VB_N] -= 1
        spend(m, cc, cb, op.GET_RX_BUFS, 0)  # booked once after the loop
        m[D_VH_TAKEN] += 1
        spend(m, cc, cb, op.TUN_DO_READ, 0)
        spend(m, cc, cb, op.COPY_TO_ITER, ln)  # the copy into guest memory
        llc_miss(m, cc, cb, m[D_LLC_PPM], ln)
        if not zc:  # consume_skb: the destructor publishes the completion
            charge(m, cc, cb, op.KFREE_SKB, 1, 0)
            afxdp.tx_completed(m, cc, cb, 1, op.XSK_DESTRUCT_SKB)
        elif v1:
            afxdp.tx_completed(m, cc, cb, 1, op.XSK_TX_COMPLETED)
            _publish(m, cc, cb)
            afxdp.set_tx_need_wakeup(m, cc, cb, True)
        done += 1
        pkts += 1
        nbytes += ln
        if done > SIGNAL_BATCH:
            _signal_used(m, cc, cb, done)
            done = 0
        if pkts >= m[D_WPKTS] or nbytes >= m[D_WBYTES]:  # vhost_exceeds_weight
            count(m, st.VHOST_REQUEUES, 1)
            requeue = True
            break
    if pkts:
        books(m, cc, cb, op.GET_RX_BUFS, pkts, 0)
        books(m, cc, cb, op.TUN_DO_READ, pkts, 0)
        books(m, cc, cb, op.COPY_TO_ITER, pkts, nbytes)
        unsteady_if_idle(m)
    if done:
        _signal_used(m, cc, cb, done)
    if requeue or m[D_VH_QUEUED]:
        m[D_VH_QUEUED] = 1
        wake(m, VHOST, now(m))
    elif zc:
        afxdp.set_tx_need_wakeup(m, cc, cb, True)


# --- the guest: rx NAPI or a polling PMD --------------------------------------------------------
@njit(cache=True)
def _guest_take(m, cc, cb, got, refill_op):
    """Consume ``got`` used entries, repost every free buffer (``refill_op`` each) and kick
    vhost if it asked for avail notifications."""
    m[D_G_CONS] += got
    m[H_PROGRESS] += got  # received packets: not an empty poll
    count(m, st.GUEST_RX_PACKETS, got)
    free = m[D_G_SIZE] - (m[D_G_AVAIL] - m[D_G_CONS])
    if free > 0:
        charge(m, cc, cb, refill_op, free, 0)
        m[D_G_AVAIL] += free
        if m[D_VH_WAIT_AVAIL]:  # vhost enabled avail notification: kick it
            m[D_VH_WAIT_AVAIL] = 0
            charge(m, cc, cb, op.VIRTQUEUE_KICK, 1, 0)
            count(m, st.KICKS, 1)
            _vhost_queue(m, cc, cb)


@njit(cache=True)
def guest_quantum(m, cc, cb):
    """virtnet_poll: ≤budget packets up the guest stack, each L4 checksum verified in
    software (no DATA_VALID in the vnet header), then refill."""
    napi_enter(m, cc, cb, GUEST)
    charge(m, cc, cb, op.NAPI_POLL, 1, 0)
    count(m, st.NAPI_POLLS, 1)
    got = min(_used_seen(m) - m[D_G_CONS], m[D_GBUDGET])
    charge(m, cc, cb, op.VIRTNET_RECEIVE, got, 0)
    charge(m, cc, cb, op.CSUM_PARTIAL, got, got * max(m[H_PKTLEN] - L4_OFFSET, 0))
    _guest_take(m, cc, cb, got, op.TRY_FILL_RECV)
    if got >= m[D_GBUDGET]:
        wake(m, GUEST, now(m))
    elif napi_complete(m, GUEST) and m[D_G_USED] > m[D_G_CONS]:
        # virtqueue_enable_cb found more: poll again (once it is visible)
        napi_schedule(m, GUEST, max(now(m), m[D_G_USED_AT]))


@njit(cache=True)
def guest_pmd_quantum(m, cc, cb):
    """testpmd rxonly on the DPDK virtio PMD: one rte_eth_rx_burst (virtio_recv_pkts, then
    virtio_rxq_rearm of every free slot), the mbufs freed; an empty poll spins."""
    charge(m, cc, cb, op.PKT_BURST_RECEIVE, 1, 0)
    got = min(_used_seen(m) - m[D_G_CONS], m[D_GBURST])
    if got > 0:
        charge(m, cc, cb, op.VIRTIO_RECV_PKTS, got, 0)
        charge(m, cc, cb, op.RTE_PKTMBUF_FREE, got, 0)
        _guest_take(m, cc, cb, got, op.VIRTIO_RXQ_REARM)
    else:
        seen = m[D_G_USED_AT] if m[D_G_USED] > m[D_G_CONS] else INF  # seen at its time
        idle_spin(m, cc, cb, GUEST, seen)  # parked: only vhost's publishes change its view
    wake(m, GUEST, now(m))


# --- tun.peer=fd: a process on the tap fd --------------------------------------------------
@njit(cache=True)
def _write_one(m, cc, cb):
    """write() of one frame into the tap fd: tun_get_user in the writer's process context,
    bottom halves off. The frame is copied into a page frag (tun_build_skb); native XDP runs
    on that xdp_buff, generic XDP on the skb built around it in netif_receive_skb. The
    redirect copies it into a fill-ring buffer (__xsk_rcv), flushed at once."""
    charge(m, cc, cb, op.KSYS_WRITE, 1, 0)
    count(m, st.OFFERED, 1)
    m[H_PROGRESS] += 1
    ln = m[H_PKTLEN]
    charge(m, cc, cb, op.TUN_BUILD_SKB, 1, 0)
    charge(m, cc, cb, op.COPY_FROM_ITER, 1, ln)
    native = m[D_FD_NATIVE]
    if not native:  # build_skb, eth_type_trans, then __netif_receive_skb_core
        charge(m, cc, cb, op.TUN_GET_USER, 1, 0)
        charge(m, cc, cb, op.NETIF_RECEIVE_SKB, 1, 0)
        charge(m, cc, cb, op.DO_XDP_GENERIC, 1, 0)
    charge(m, cc, cb, op.BPF_PROG_RUN_XDP, 1, 0)
    if afxdp.xsk_rcv_copy(m, cc, cb, ln, now(m)):
        afxdp.xdp_flush(m, cc, cb)  # xdp_do_flush after tun_xdp_act / xsk_generic_rcv's
    if not native:
        charge(m, cc, cb, op.KFREE_SKB, 1, 0)  # consume_skb after the generic redirect


@njit(cache=True)
def _read_one(m, cc, cb):
    """read() on the tap fd: tun_ring_recv takes one skb (none: -EAGAIN), tun_put_user
    copies it out, consume_skb frees it. Returns whether a packet was read."""
    charge(m, cc, cb, op.KSYS_READ, 1, 0)
    charge(m, cc, cb, op.TUN_RING_RECV, 1, 0)
    skb, ln = ptr_ring_consume(m, m[D_PR], now(m))
    if skb < 0:
        return False
    charge(m, cc, cb, op.TUN_DO_READ, 1, 0)
    charge(m, cc, cb, op.COPY_TO_ITER, 1, ln)
    charge(m, cc, cb, op.KFREE_SKB, 1, 0)
    m[H_PROGRESS] += 1
    return True


@njit(cache=True)
def peer_quantum(m, cc, cb):
    """One syscall of the process on the tap fd (the real backend's tap_loop): a round is
    ``fd_batch`` write()s (rxdrop, l2fwd), then read() until -EAGAIN or 4 x fd_batch; a
    txonly reader whose round read nothing sleeps in ppoll() until sk_data_ready."""
    if cx(m, PEER, CX_A):  # woken from ppoll
        cx_set(m, PEER, CX_A, 0)
        charge(m, cc, cb, op.CONTEXT_SWITCH, 1, 0)
    batch = m[D_FD_BATCH]
    if m[H_WORKLOAD] != WL_TXONLY and m[D_FD_W] < batch:
        _write_one(m, cc, cb)
        m[D_FD_W] += 1
    elif _read_one(m, cc, cb):
        m[D_FD_R] += 1
        if m[D_FD_R] >= 4 * batch:
            m[D_FD_W], m[D_FD_R] = 0, 0
    else:  # -EAGAIN ends the round
        idle = m[H_WORKLOAD] == WL_TXONLY and m[D_FD_R] == 0
        m[D_FD_W], m[D_FD_R] = 0, 0
        if idle:
            charge(m, cc, cb, op.DO_SYS_POLL, 1, 0)
            if ptr_ring_count(m, m[D_PR]) == 0:  # tun_chr_poll: nothing queued, sleep
                m[D_FD_POLL] = 1
                return
    wake(m, PEER, now(m))


@njit(cache=True)
def quantum(m, cc, cb, c):
    """One quantum of context ``c`` (kernels/loop.py)."""
    if c == APP:
        app_quantum(m, cc, cb)
    elif m[D_FD]:
        peer_quantum(m, cc, cb)
    elif c == VHOST:
        vhost_quantum(m, cc, cb)
    elif m[D_GPMD]:
        guest_pmd_quantum(m, cc, cb)
    else:
        guest_quantum(m, cc, cb)


loop.define(globals())  # run_chunk(M, OFF, cc, cb, events): the engine loop over ``quantum``


@njit(cache=True)
def in_flight(m):
    """Packets inside tun/vhost: skbs (or v2 tagged descriptors) not yet completed. An fd
    reader's skbs were completed in tun_net_xmit (skb_orphan): none."""
    if m[D_FD]:
        return 0
    if m[H_ZC]:
        return m[D_V2_PREV]
    return ptr_ring_count(m, m[D_PR]) + m[D_VB_N]
