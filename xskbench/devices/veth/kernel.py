"""The veth pair: a sender on one end, a sink past the peer (bridge → NIC), three modes.

- udp: iperf3 -u, one sendto per datagram: udp_sendmsg → ip_output → dev_queue_xmit →
  veth_xmit → netif_rx onto the sending CPU's backlog → process_backlog (softirq on that
  CPU) → the peer's stack → sink; the skb is freed (sock_wfree) after the sink.
- copy: AF_XDP copy mode: xsk_generic_xmit in sendto (≤32 descs, skb + payload copy) →
  veth_xmit → the peer's ptr_ring (full → drop, counted as veth counts it; sendto stops:
  -EBUSY) → veth_poll NAPI on the peer (budget 64) → sink; completion by the skb destructor.
- zerocopy: the RFC's veth tx NAPI woken by ndo_xsk_wakeup: per desc xsk_tx_peek_desc, then
  page + memcpy + build_skb + napi_gro_receive on the peer (CQ completed at once); with
  ``batch`` up to 17 same-flow descs become one GSO skb whose frags point into UMEM,
  completed by its destructor. The peer's stack (sink) runs in that same softirq.

What aggregation saves is per aggregate: one skb head, one seg-info kmalloc, one GRO entry,
one bridge traversal and dev_queue_xmit (the sink), one destructor; what it still pays is
per segment: the peek, get_page + frag, the NIC's data segment and one CQ entry. A batch of
one segment is not the non-batch path, though: the RFC's batch skb is zero copy (frags into
UMEM) and CHECKSUM_PARTIAL, so it skips the memcpy and the software checksum in GRO
(udp4_gro_receive validates a CHECKSUM_NONE skb) that the non-batch skb pays.

Offloads: ``gro_udp_fwd`` (rx-udp-gro-forwarding on the peer) lets GRO merge the same-flow
UDP skbs of one poll (copy mode and the non-batch zero copy) into one GSO skb of at most
UDP_GRO_CNT_MAX segments and 64 KB, so the stack past the peer runs once per merged skb;
each merged skb costs skb_gro_receive. A GSO skb reaches the NIC whole when it segments UDP
(``nic_uso``, mlx5's NETIF_F_GSO_UDP_L4: one data segment per frag); otherwise
validate_xmit_skb segments it in software (skb_segment per segment) and the NIC transmits
each segment as its own skb.

Packet bytes copied by the CPU beyond the queue's share of the LLC (testbed.llc_mb) are read
from memory: ``llc_miss`` per byte, in proportion (queues.llc_miss_ppm).

The measured pair (``veth.peer = "xdp_drop"``: ``xskbench measure``'s veth topology, no
bridge, no NIC). Receive (rxdrop, l2fwd), copy mode: the peer's sender (xdp-trafficgen's
mechanism, real/roles.py) is BPF_PROG_RUN with live frames on the peer's CPU: per batch of 64
frames xdp_test_run_batch runs the program (XDP_REDIRECT) and xdp_do_redirect queues each
frame; xdp_do_flush → bq_xmit_all → veth_xdp_xmit produces them into the receiving veth's
xdp_ring (a real ptr_ring; full → the frame is returned, peer_tq_xdp_xmit_err) and
__veth_xdp_flush schedules its NAPI on the sender's CPU, where it runs as softirq at the
batch's local_bh_enable. veth_poll → veth_xdp_rcv_one runs the socket's program (XDP_REDIRECT
into the XSKMAP), __xsk_rcv copies the frame into a fill-ring buffer (RX full → "rx queue
full", veth's rx_queue_0_drops), the frame goes back to its page pool; xdp_do_flush at the end
of the poll publishes RX. With the socket's program attached in generic mode (``veth.xdp_mode =
"skb"``) the receiving veth has no native program: veth_xdp_rcv_bulk_skb builds an skb around
each frame (__xdp_build_skb_from_frame), napi_gro_receive → __netif_receive_skb_core runs
do_xdp_generic, and xsk_generic_rcv copies it (__xsk_rcv) and flushes RX per packet; the skb
is consumed. Transmit (txonly, l2fwd's TX): copy_sendto as above, into the peer's
ptr_ring; the peer's NAPI is scheduled on the sending CPU (the app's) and runs the peer's
XDP_DROP program: veth_convert_skb_to_xdp_buff first copies the skb into a page-pool page
(skb_pp_cow_data: xsk_build_skb leaves NET_SKB_PAD of headroom, < XDP_PACKET_HEADROOM), then
both skbs are freed (the original's destructor completes the descriptor). The application is
xdpsock-like (no libxudp work, frames prewritten).

Packets inside the device are counted, not stored: all skbs of a run have the same length.
"""
from xskbench import ops as op
from xskbench import stats as st
from xskbench.devices.veth import CONTEXTS  # the ids, in setup's order
from xskbench.kernels import afxdp, loop
from xskbench.kernels.engine import (
    books,
    charge,
    count,
    horizon,
    napi_complete,
    napi_schedule,
    now,
    spend,
    spin_until,
    switch_label,
    wake,
)
from xskbench.kernels.faults import offered_clock, offered_time
from xskbench.kernels.jit import ix, njit
from xskbench.kernels.layout import (
    DEV_BASE,
    H_CNT,
    H_CQ,
    H_FLEN,
    H_GAP,
    H_HEADROOM,
    H_OWN,
    H_PKTLEN,
    H_PROGRESS,
    H_QLABEL,
    H_SENT_SEQ,
    H_START_T,
    H_TX,
    OWN_CQ,
    OWN_DEV,
)
from xskbench.kernels.llc import llc_miss
from xskbench.kernels.ptr_ring import ptr_ring_consume, ptr_ring_count, ptr_ring_produce
from xskbench.kernels.steady import unsteady_if_idle
from xskbench.kernels.xsk_ring import (
    cons_cancel,
    cons_peek,
    cons_release,
    prod_reserve,
    prod_submit_n,
    ring_addr,
    ring_write,
)

(
    D_MODE, D_BATCH, D_MAXSEG, D_CSUM, D_RCAP, D_RN, D_BCAP, D_BN, D_BUDGET, D_EXTRA,
    D_L_SYS, D_AGG, D_GRO, D_GRO_MAX, D_USO, D_LLC_PPM, D_PEER, D_XR, D_XDPGEN,
) = range(DEV_BASE, DEV_BASE + 19)
MODES = ("udp", "copy", "zerocopy")  # D_MODE values, in this order
MODE_UDP, MODE_COPY, MODE_ZC = range(len(MODES))
APP, BACKLOG, PEER, TXNAPI, SENDER, RXNAPI = range(len(CONTEXTS))
PEERS = ("bridge", "xdp_drop")  # D_PEER values: the RFC's testbed, the measured pair
PEER_BRIDGE, PEER_XDP_DROP = range(len(PEERS))
LIVE_BATCH = 64  # xdp-trafficgen's BPF_PROG_RUN live-frames batch (real/roles.py)
HDR_LEN = 42  # Ethernet + IPv4 + UDP headers in front of the UDP payload
TX_BATCH_SIZE = 32  # xsk_generic_xmit descs per sendto


# --- shared pieces ------------------------------------------------------------------------
@njit(cache=True)
def _sink(m, cc, cb, nskb):
    """The stack past the peer: bridge → dev_queue_xmit → NIC, per skb (a GSO skb is one)."""
    charge(m, cc, cb, op.BR_FORWARD_FINISH, nskb, 0)
    if m[D_EXTRA]:
        charge(m, cc, cb, op.VETH_SINK_EXTRA, nskb * m[D_EXTRA], 0)


@njit(cache=True)
def _xmit_gso(m, cc, cb, nseg):
    """A GSO skb of ``nseg`` segments past the peer: bridge and dev_queue_xmit once; the NIC
    takes one data segment per frag (USO), or validate_xmit_skb segments it in software and
    every further segment is one more NIC xmit."""
    _sink(m, cc, cb, 1)
    if m[D_USO]:
        charge(m, cc, cb, op.NIC_DSEG, nseg, 0)
    else:
        charge(m, cc, cb, op.SKB_SEGMENT, nseg, 0)
        charge(m, cc, cb, op.NIC_XMIT, nseg - 1, 0)


@njit(cache=True)
def _gro_deliver(m, cc, cb, n):
    """``n`` skbs received in one poll (napi_gro_receive each) leave GRO toward the sink:
    one by one, or with rx-udp-gro-forwarding merged into GSO skbs of ≤ D_GRO_MAX
    segments (skb_gro_receive per merged skb) flushed at the end of the poll."""
    if n <= 0:
        return
    if not m[D_GRO]:
        _sink(m, cc, cb, n)
        charge(m, cc, cb, op.KFREE_SKB, n, 0)
        return
    left = n
    while left > 0:
        k = min(left, m[D_GRO_MAX])
        if k > 1:
            charge(m, cc, cb, op.SKB_GRO_RECEIVE, k - 1, 0)
            _xmit_gso(m, cc, cb, k)
        else:
            _sink(m, cc, cb, 1)
        charge(m, cc, cb, op.KFREE_SKB, 1, 0)
        left -= k


@njit(cache=True)
def _complete_dropped(m, cc, cb):
    """kfree_skb of a dropped copy-mode skb: its destructor submits one completion (in ring
    order, as xsk_cq_submit_locked does), but nothing was transmitted."""
    charge(m, cc, cb, op.KFREE_SKB, 1, 0)
    charge(m, cc, cb, op.XSK_DESTRUCT_SKB, 1, 0)
    cq = m[H_CQ]
    addr = ring_addr(m, cq, m[ix(cq + 2)])  # R_PROD: the oldest reserved completion
    m[ix(m[H_OWN] + afxdp.frame_of(m, addr))] = OWN_CQ
    prod_submit_n(m, cq, 1, now(m))


@njit(cache=True)
def _gro_csum(m, cc, cb, n):
    """udp4_gro_receive → skb_gro_checksum_validate_zero_check: an skb arriving with
    CHECKSUM_NONE and a non-zero UDP checksum is verified in software (UDP header + payload)
    in the receiving NAPI. The copy-mode and RFC non-batch skbs are CHECKSUM_NONE; the batch
    path's GSO skb is CHECKSUM_PARTIAL."""
    if n:
        charge(m, cc, cb, op.CSUM_PARTIAL, n, n * (m[H_PKTLEN] - 34))


@njit(cache=True)
def _app_csum(m, cc, cb, k):
    """libxudp computes the UDP checksum in user space unless the path offloads it: copy
    mode and the RFC's non-batch path have no offload; batch has udp4_hwcsum."""
    if k and (m[D_MODE] == MODE_COPY or m[D_BATCH] == 0 or m[D_CSUM] == 0):
        charge(m, cc, cb, op.CSUM_PARTIAL, k, k * (m[H_PKTLEN] - HDR_LEN))


# --- udp mode -----------------------------------------------------------------------------
@njit(cache=True)
def udp_app_quantum(m, cc, cb):
    """iperf3 -u -b 0: one datagram per sendto."""
    gap = m[H_GAP]
    if gap > 0:
        due = offered_time(m, m[H_START_T] + m[H_SENT_SEQ] * gap)
        if due > now(m):
            wake(m, APP, due)
            return
    plen = m[H_PKTLEN]
    pay = plen - HDR_LEN
    charge(m, cc, cb, op.IPERF3_UDP_SEND, 1, 0)
    m[H_SENT_SEQ] += 1
    count(m, st.TX_SUBMITTED, 1)
    count(m, st.OFFERED, 1)
    label = m[H_QLABEL]
    switch_label(m, m[D_L_SYS])
    charge(m, cc, cb, op.SYS_SENDTO, 1, 0)
    count(m, st.SENDTO_CALLS, 1)
    charge(m, cc, cb, op.UDP_SENDMSG, 1, 0)
    charge(m, cc, cb, op.IP_GENERIC_GETFRAG, 1, pay)
    if m[D_CSUM] == 0:  # csum_and_copy_from_user: the sender computes it
        charge(m, cc, cb, op.CSUM_PARTIAL, 1, pay)
    charge(m, cc, cb, op.IP_OUTPUT, 1, 0)
    charge(m, cc, cb, op.DEV_QUEUE_XMIT, 1, 0)
    charge(m, cc, cb, op.VETH_XMIT, 1, 0)
    charge(m, cc, cb, op.NETIF_RX, 1, 0)
    if m[D_BN] >= m[D_BCAP]:
        count(m, st.BACKLOG_DROPPED, 1)
        charge(m, cc, cb, op.KFREE_SKB, 1, 0)
        charge(m, cc, cb, op.SOCK_WFREE, 1, 0)
    else:
        m[D_BN] += 1
        if napi_schedule(m, BACKLOG, now(m)):
            charge(m, cc, cb, op.NAPI_SCHEDULE, 1, 0)
            count(m, st.NAPI_SCHEDULES, 1)
    switch_label(m, label)
    wake(m, APP, now(m))


@njit(cache=True)
def backlog_quantum(m, cc, cb):
    """process_backlog on the sending CPU: the peer's stack and the sink, per skb."""
    charge(m, cc, cb, op.NAPI_POLL, 1, 0)
    count(m, st.NAPI_POLLS, 1)
    n = min(m[D_BN], m[D_BUDGET])
    charge(m, cc, cb, op.NETIF_RECEIVE_SKB, n, 0)
    _sink(m, cc, cb, n)
    charge(m, cc, cb, op.KFREE_SKB, n, 0)
    charge(m, cc, cb, op.SOCK_WFREE, n, 0)
    m[D_BN] -= n
    m[H_PROGRESS] += n  # moved packets: not an empty poll
    count(m, st.TX_PACKETS, n)
    count(m, st.TX_BYTES, n * m[H_PKTLEN])
    _poll_end(m, BACKLOG, n, m[D_BN])


@njit(cache=True)
def _poll_end(m, c, done, left):
    """Budget used → poll again at once (the softirq re-raises); else complete, and poll
    again if work arrived meanwhile (the re-check after napi_complete_done)."""
    if done >= m[D_BUDGET]:
        wake(m, c, now(m))
    elif napi_complete(m, c) and left > 0:
        napi_schedule(m, c, now(m))


# --- copy mode ----------------------------------------------------------------------------
@njit(cache=True)
def copy_sendto(m, cc, cb):
    """__xsk_generic_xmit → __dev_direct_xmit → veth_xmit → the peer's ptr_ring."""
    sent = 0
    while sent < TX_BATCH_SIZE:
        addr, ln = afxdp.generic_xmit_one(m, cc, cb, True)
        if addr < 0:
            break
        llc_miss(m, cc, cb, m[D_LLC_PPM], ln)  # skb_store_bits reads the UMEM frame
        charge(m, cc, cb, op.VETH_XMIT, 1, 0)
        if m[D_RN] >= m[D_RCAP]:  # ptr_ring_produce fails: NET_XMIT_DROP → -EBUSY
            count(m, st.VETH_RING_FULL, 1)
            _complete_dropped(m, cc, cb)
            break
        m[D_RN] += 1
        sent += 1
        if napi_schedule(m, PEER, now(m)):  # __veth_xdp_flush
            charge(m, cc, cb, op.NAPI_SCHEDULE, 1, 0)
            count(m, st.NAPI_SCHEDULES, 1)
    afxdp.generic_xmit_done(m)


@njit(cache=True)
def peer_quantum(m, cc, cb):
    """veth_poll on the peer: consume ≤budget skbs from the ptr_ring, up the stack to the
    sink; freeing each skb runs xsk_destruct_skb (one completion)."""
    charge(m, cc, cb, op.NAPI_POLL, 1, 0)
    count(m, st.NAPI_POLLS, 1)
    n = min(m[D_RN], m[D_BUDGET])
    if n and m[D_PEER] == PEER_XDP_DROP:
        _xdp_drop_skbs(m, cc, cb, n)
    elif n:
        charge(m, cc, cb, op.VETH_XDP_RCV_SKB, n, 0)
        charge(m, cc, cb, op.NAPI_GRO_RECEIVE, n, 0)
        _gro_csum(m, cc, cb, n)
        _gro_deliver(m, cc, cb, n)
        m[D_RN] -= n
        afxdp.tx_completed(m, cc, cb, n, op.XSK_DESTRUCT_SKB)
    _poll_end(m, PEER, n, m[D_RN])


@njit(cache=True)
def _xdp_drop_skbs(m, cc, cb, n):
    """veth_xdp_rcv_skb of ``n`` copy-mode skbs on a peer running XDP_DROP: the skb becomes
    an xdp_buff through a page-pool copy (skb_pp_cow_data), the program drops it, the page
    is recycled and both skbs are freed; the original's destructor completes its desc."""
    charge(m, cc, cb, op.VETH_XDP_RCV_SKB, n, 0)
    charge(m, cc, cb, op.PAGE_POOL_ALLOC, n, 0)
    charge(m, cc, cb, op.MEMCPY, n, n * m[H_PKTLEN])
    charge(m, cc, cb, op.BPF_PROG_RUN_XDP, n, 0)
    charge(m, cc, cb, op.PAGE_POOL_RECYCLE, n, 0)
    charge(m, cc, cb, op.KFREE_SKB, 2 * n, 0)
    m[D_RN] -= n
    afxdp.tx_completed(m, cc, cb, n, op.XSK_DESTRUCT_SKB)


# --- receive on the measured pair: the peer's live-frames sender, veth_poll into the xsk ----
@njit(cache=True)
def sender_quantum(m, cc, cb):
    """One xdp_test_run_batch of the peer's sender (BPF_PROG_RUN, live frames): run the
    program over the batch, redirect, then veth_xdp_xmit into the receiving veth's xdp_ring
    and schedule its NAPI on this CPU. A set rate sends the frames due, at most a batch."""
    n = LIVE_BATCH
    gap = m[H_GAP]
    if gap > 0:
        n = min(n, (offered_clock(m, now(m)) - m[H_START_T]) // gap + 1 - m[H_SENT_SEQ])
        if n <= 0:
            wake(m, SENDER, offered_time(m, m[H_START_T] + m[H_SENT_SEQ] * gap))
            return
    charge(m, cc, cb, op.XDP_TEST_RUN_BATCH, n, 0)
    charge(m, cc, cb, op.BPF_PROG_RUN_XDP, n, 0)
    charge(m, cc, cb, op.XDP_DO_REDIRECT, n, 0)
    count(m, st.OFFERED, n)
    m[H_SENT_SEQ] += n
    charge(m, cc, cb, op.VETH_XDP_XMIT, n, 0)
    xr, plen = m[D_XR], m[H_PKTLEN]
    sent = 0
    for _ in range(n):
        if not ptr_ring_produce(m, xr, now(m), plen, now(m)):  # value: the produce time
            break
        sent += 1
    if sent < n:  # the frames veth_xdp_xmit did not take go back to the page pool
        count(m, st.VETH_RING_FULL, n - sent)
        charge(m, cc, cb, op.PAGE_POOL_RECYCLE, n - sent, 0)
    if sent and napi_schedule(m, RXNAPI, now(m)):  # __veth_xdp_flush
        charge(m, cc, cb, op.NAPI_SCHEDULE, 1, 0)
        count(m, st.NAPI_SCHEDULES, 1)
    m[H_PROGRESS] += n
    wake(m, SENDER, now(m))


@njit(cache=True)
def rx_napi_quantum(m, cc, cb):
    """veth_poll → veth_xdp_rcv on the receiving veth: ≤budget frames from the xdp_ring,
    each through the socket's program (XDP_REDIRECT) into __xsk_rcv (copy into a fill-ring
    buffer; RX full or no buffer → dropped with that reason); the frame returns to its page
    pool either way; xdp_do_flush publishes RX at the end of the poll."""
    charge(m, cc, cb, op.NAPI_POLL, 1, 0)
    count(m, st.NAPI_POLLS, 1)
    xr = m[D_XR]
    done = 0
    while done < m[D_BUDGET]:
        t0, ln = ptr_ring_consume(m, xr, now(m))
        if t0 < 0:
            break
        done += 1
        charge(m, cc, cb, op.VETH_XDP_RCV_ONE, 1, 0)
        if m[D_XDPGEN]:  # no native program: an skb, the stack, generic XDP
            charge(m, cc, cb, op.XDP_BUILD_SKB_FROM_FRAME, 1, 0)
            charge(m, cc, cb, op.NAPI_GRO_RECEIVE, 1, 0)
            charge(m, cc, cb, op.NETIF_RECEIVE_SKB, 1, 0)
            charge(m, cc, cb, op.DO_XDP_GENERIC, 1, 0)
        charge(m, cc, cb, op.BPF_PROG_RUN_XDP, 1, 0)
        charge(m, cc, cb, op.XDP_DO_REDIRECT, 1, 0)
        llc_miss(m, cc, cb, m[D_LLC_PPM], ln)
        afxdp.xsk_rcv_copy(m, cc, cb, ln, t0)
        if m[D_XDPGEN]:  # xsk_generic_rcv flushes per packet; consume_skb frees the frame
            afxdp.xdp_flush(m, cc, cb)
            charge(m, cc, cb, op.KFREE_SKB, 1, 0)
        charge(m, cc, cb, op.PAGE_POOL_RECYCLE, 1, 0)
    if done:
        if not m[D_XDPGEN]:
            afxdp.xdp_flush(m, cc, cb)
        m[H_PROGRESS] += done
    _poll_end(m, RXNAPI, done, ptr_ring_count(m, xr))


# --- zero-copy mode (the RFC's veth tx NAPI) ----------------------------------------------
@njit(cache=True)
def _emit_aggregate(m, cc, cb, nseg):
    """One GSO skb of ``nseg`` descs: head with copied headers, frags into UMEM, seg-info
    list; up the peer's stack to the sink; its destructor completes the descs, one
    xsk_tx_completed_addr each under cq_lock."""
    charge(m, cc, cb, op.VETH_XSK_GSO_SKB, 1, 0)
    charge(m, cc, cb, op.KMALLOC, 1, 0)
    charge(m, cc, cb, op.SKB_FILL_PAGE_DESC, nseg, 0)
    charge(m, cc, cb, op.NAPI_GRO_RECEIVE, 1, 0)
    _xmit_gso(m, cc, cb, nseg)
    charge(m, cc, cb, op.KFREE_SKB, 1, 0)
    charge(m, cc, cb, op.VETH_XSK_DESTRUCT_SKB, 1, 0)
    charge(m, cc, cb, op.XSK_TX_COMPLETED, nseg - 1, 0)
    afxdp.tx_completed(m, cc, cb, nseg, op.XSK_TX_COMPLETED)


@njit(cache=True)
def veth_xsk_tx_xmit(m, cc, cb, budget):
    """Up to ``budget`` descs, one xsk_tx_peek_desc each; returns how many were sent."""
    tx = m[H_TX]
    cq = m[H_CQ]
    sent = agg = nbytes = 0
    gro = 0  # non-batch skbs of this poll in the peer's GRO (all of one flow)
    while sent < budget:  # each desc's calls take their time here, booked after the loop
        k, idx = cons_peek(m, tx, 1, now(m))
        if k == 0:
            if sent == 0:
                count(m, st.TX_RING_EMPTY, 1)
            break
        ck, cidx = prod_reserve(m, cq, 1, now(m))
        if ck == 0:
            cons_cancel(m, tx, 1)
            break
        spend(m, cc, cb, op.XSK_TX_PEEK_DESC, 0)
        addr = ring_addr(m, tx, idx)
        ring_write(m, cq, cidx, addr - m[H_HEADROOM], 0)
        m[ix(m[H_OWN] + afxdp.frame_of(m, addr))] = OWN_DEV
        sent += 1
        if m[D_BATCH]:
            agg += 1
            if agg == m[D_MAXSEG]:
                _emit_aggregate(m, cc, cb, agg)
                agg = 0
        else:
            ln = m[ix(m[H_FLEN] + afxdp.frame_of(m, addr))]
            spend(m, cc, cb, op.VETH_XSK_BUILD_SKB, 0)
            spend(m, cc, cb, op.MEMCPY, ln)
            nbytes += ln
            llc_miss(m, cc, cb, m[D_LLC_PPM], ln)
            afxdp.tx_completed(m, cc, cb, 1, op.XSK_TX_COMPLETED)  # xsk_tx_completed_addr
            spend(m, cc, cb, op.NAPI_GRO_RECEIVE, 0)
            _gro_csum(m, cc, cb, 1)
            gro += 1
            if not m[D_GRO] or gro == m[D_GRO_MAX]:
                _gro_deliver(m, cc, cb, gro)
                gro = 0
    if agg:
        _emit_aggregate(m, cc, cb, agg)
    _gro_deliver(m, cc, cb, gro)
    if sent:
        books(m, cc, cb, op.XSK_TX_PEEK_DESC, sent, 0)
        if not m[D_BATCH]:
            books(m, cc, cb, op.VETH_XSK_BUILD_SKB, sent, 0)
            books(m, cc, cb, op.MEMCPY, sent, nbytes)
            books(m, cc, cb, op.NAPI_GRO_RECEIVE, sent, 0)
        unsteady_if_idle(m)
        cons_release(m, tx, now(m))  # xsk_tx_release
        charge(m, cc, cb, op.NAPI_SCHEDULE, 1, 0)  # napi_schedule(&peer_rq->xdp_napi)
    return sent


@njit(cache=True)
def txnapi_quantum(m, cc, cb):
    charge(m, cc, cb, op.NAPI_POLL, 1, 0)
    count(m, st.NAPI_POLLS, 1)
    afxdp.set_tx_need_wakeup(m, cc, cb, False)
    sent = veth_xsk_tx_xmit(m, cc, cb, m[D_BUDGET])
    if sent >= m[D_BUDGET]:
        wake(m, TXNAPI, now(m))
    elif napi_complete(m, TXNAPI):
        afxdp.set_tx_need_wakeup(m, cc, cb, True)


@njit(cache=True)
def zc_sendto(m, cc, cb):
    """ndo_xsk_wakeup (veth_xsk_wakeup): schedule the tx NAPI unless it is running."""
    charge(m, cc, cb, op.XSK_WAKEUP, 1, 0)
    count(m, st.WAKEUPS, 1)
    if napi_schedule(m, TXNAPI, now(m)):
        charge(m, cc, cb, op.NAPI_SCHEDULE, 1, 0)
        count(m, st.NAPI_SCHEDULES, 1)


# --- the AF_XDP sender (libxudp) ----------------------------------------------------------
@njit(cache=True)
def xsk_app_quantum(m, cc, cb):
    progress = m[H_PROGRESS]
    k0 = m[ix(m[H_CNT] + st.TX_SUBMITTED)]
    kick = afxdp.app_iteration(m, cc, cb)
    k = m[ix(m[H_CNT] + st.TX_SUBMITTED)] - k0
    if k and m[D_PEER] == PEER_BRIDGE:  # the RFC's sender is libxudp; measure's is xdpsock
        charge(m, cc, cb, op.XUDP_SEND_PKT, k, 0)
        _app_csum(m, cc, cb, k)
    if kick & afxdp.KICK_RX:  # rxdrop's recvfrom: copy mode wakes nothing (no busy poll)
        label = m[H_QLABEL]
        switch_label(m, m[D_L_SYS])
        charge(m, cc, cb, op.SYS_RECVFROM, 1, 0)
        count(m, st.POLL_CALLS, 1)
        switch_label(m, label)
    if kick & afxdp.KICK_TX:
        label = m[H_QLABEL]
        switch_label(m, m[D_L_SYS])
        charge(m, cc, cb, op.SYS_SENDTO, 1, 0)
        count(m, st.SENDTO_CALLS, 1)
        if m[D_MODE] == MODE_COPY:
            copy_sendto(m, cc, cb)
        else:
            zc_sendto(m, cc, cb)
        switch_label(m, label)
    if m[H_PROGRESS] == progress:
        spin_until(m, cc, cb, horizon(m, APP), afxdp.app_next_change(m))
    wake(m, APP, now(m))


@njit(cache=True)
def quantum(m, cc, cb, c):
    """One quantum of context ``c`` (kernels/loop.py)."""
    if c == APP:
        if m[D_MODE] == MODE_UDP:
            udp_app_quantum(m, cc, cb)
        else:
            xsk_app_quantum(m, cc, cb)
    elif c == BACKLOG:
        backlog_quantum(m, cc, cb)
    elif c == PEER:
        peer_quantum(m, cc, cb)
    elif c == TXNAPI:
        txnapi_quantum(m, cc, cb)
    elif c == SENDER:
        sender_quantum(m, cc, cb)
    else:
        rx_napi_quantum(m, cc, cb)


loop.define(globals())  # run_chunk(M, OFF, cc, cb, events): the engine loop over ``quantum``


def in_flight(m):
    """Packets inside the device: on the backlog, the peer's ptr_ring or the receiving
    veth's xdp_ring."""
    return int(m[D_BN] + m[D_RN] + (ptr_ring_count(m, m[D_XR]) if m[D_XR] else 0))

