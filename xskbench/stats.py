"""The one stats table: every counter a run keeps, its unit, the kernel counter it mirrors,
what it means, whether it is a drop reason, and the names xdpsock and testpmd print it under.
Kernels index counters by the constants below; results, DataFrame columns, reports and plot
labels take their names and units from here.
"""
from typing import NamedTuple


class Stat(NamedTuple):
    name: str
    unit: str
    mirrors: str       # the kernel (or device) counter it stands for
    doc: str
    drop: bool = False  # a drop reason: offered = delivered + dropped + in flight (books)
    xdpsock: str = ""   # the line xdpsock prints it on (its -x / -a statistics)
    testpmd: str = ""   # the field of testpmd's ``show port stats`` that reports it


TABLE = (
    Stat("offered_packets", "pkts", "the generator's packets (pktgen / the peer's testpmd tx)",
         "packets offered to the datapath"),
    Stat("rx_packets", "pkts", "xsk rx ring consumed", "packets the application received",
         xdpsock="rx", testpmd="RX-packets"),
    Stat("rx_bytes", "bytes", "xsk rx ring consumed (bytes)", "bytes the application received",
         testpmd="RX-bytes"),
    Stat("tx_packets", "pkts", "xsk completion ring consumed",
         "packets transmitted and completed", xdpsock="tx", testpmd="TX-packets"),
    Stat("tx_bytes", "bytes", "xsk completion ring consumed (bytes)",
         "bytes transmitted and completed", testpmd="TX-bytes"),
    Stat("tx_submitted", "pkts", "xsk tx ring produced", "descriptors the application put on TX"),
    # testpmd's RX-errors: the AF_XDP PMD's receive errors, here the socket's rx_dropped
    Stat("rx_dropped", "pkts", "XDP_STATISTICS rx_dropped",
         "dropped: no UMEM buffer for a copy-mode receive", drop=True,
         xdpsock="rx dropped", testpmd="RX-errors"),
    Stat("rx_ring_full", "pkts", "XDP_STATISTICS rx_ring_full", "dropped: RX ring full",
         drop=True, xdpsock="rx queue full"),
    # testpmd's RX-nombuf: receives that found no buffer to fill (the fill ring was empty)
    Stat("fill_ring_empty_descs", "events", "XDP_STATISTICS rx_fill_ring_empty_descs",
         "the driver found the fill ring empty", xdpsock="fill ring empty",
         testpmd="RX-nombuf"),
    Stat("tx_ring_empty_descs", "events", "XDP_STATISTICS tx_ring_empty_descs",
         "the driver found the TX ring empty", xdpsock="tx ring empty"),
    Stat("rx_invalid_descs", "descs", "XDP_STATISTICS rx_invalid_descs", "invalid RX descriptors",
         xdpsock="rx invalid"),
    Stat("tx_invalid_descs", "descs", "XDP_STATISTICS tx_invalid_descs", "invalid TX descriptors",
         drop=True, xdpsock="tx invalid"),
    # testpmd's RX-missed is the port's imissed: packets the NIC (or device) could not place
    # because no receive buffer was posted - this counter only (a full AF_XDP RX ring is
    # rx_ring_full, which testpmd's port stats do not show)
    Stat("rx_missed", "pkts", "ethtool rx_missed_errors",
         "dropped by the NIC: no RX buffer posted", drop=True, testpmd="RX-missed"),
    Stat("tx_errors", "pkts", "ndo_start_xmit NETDEV_TX_BUSY / sendto -EAGAIN",
         "transmit attempts refused (-EAGAIN/busy)", drop=True, testpmd="TX-errors"),
    Stat("sendto_calls", "calls", "sendto() syscalls", "sendto() kicks by the app",
         xdpsock="tx wakeup sendtos"),
    Stat("poll_calls", "calls", "recvfrom()/poll() syscalls", "recvfrom()/poll() by the app",
         xdpsock="opt polls"),
    Stat("rx_empty_polls", "polls", "app loop: RX ring empty", "app polls that found RX empty",
         xdpsock="rx empty polls"),
    Stat("fill_fail_polls", "polls", "app loop: fill ring reserve failed",
         "app could not refill the fill ring", xdpsock="fill fail polls"),
    Stat("tx_full_polls", "polls", "app loop: TX ring full", "app found the TX ring full",
         xdpsock="tx trigger sendtos"),
    Stat("napi_polls", "polls", "/proc/net/softnet_stat", "NAPI poll rounds"),
    Stat("napi_schedules", "events", "napi_schedule", "NAPI scheduled from idle"),
    Stat("wakeups", "events", "ndo_xsk_wakeup", "driver wakeups through ndo_xsk_wakeup"),
    Stat("interrupts", "irqs", "/proc/interrupts", "hard interrupts delivered"),
    Stat("kicks", "kicks", "virtnet sq kicks", "doorbells to the device or host"),
    Stat("ksoftirqd_handoffs", "events", "ksoftirqd wakeups", "softirq work handed to ksoftirqd"),
    Stat("veth_xdp_ring_full", "pkts", "veth peer rx_drops (ptr_ring full)",
         "dropped: the peer's ptr_ring (xdp_ring) was full in veth_xmit", drop=True),
    Stat("backlog_dropped", "pkts", "/proc/net/softnet_stat dropped",
         "dropped: the per-CPU backlog (netdev_max_backlog) was full", drop=True),
    # tun + vhost-net
    Stat("tun_tx_dropped", "pkts", "tun dev tx_dropped (ip -s link)",
         "dropped by tun_net_xmit: the tfile ptr_ring was full", drop=True),
    Stat("vhost_no_rx_bufs", "events", "vhost-net handle_rx: no guest buffer",
         "vhost found the guest's avail ring empty and waited for a kick"),
    Stat("vhost_requeues", "events", "vhost_exceeds_weight",
         "handle_rx hit its weight (256 pkts / 0x80000 B) and requeued itself"),
    Stat("vhost_wakeups", "events", "vhost worker wake_up_process",
         "the vhost worker woken from sleep"),
    Stat("guest_rx_packets", "pkts", "guest ip -s link rx", "packets the guest's NAPI received"),
    # busy poll
    Stat("busy_polls", "polls", "napi_busy_loop (LINUX_MIB_BUSYPOLLRXPACKETS)",
         "NAPI polls run inside the application's syscall (busy poll)"),
    Stat("watchdog_polls", "polls", "napi_watchdog hrtimer",
         "NAPI polls the gro_flush_timeout timer scheduled while interrupts were deferred"),
)
NAMES = tuple(s.name for s in TABLE)
INDEX = {s.name: i for i, s in enumerate(TABLE)}
BY_NAME = {s.name: s for s in TABLE}
N_STATS = len(TABLE)
# Drop counters: offered = delivered + dropped (by these reasons) + in flight.
DROP_REASONS = tuple(s.name for s in TABLE if s.drop)
#: The tools' names -> the counter: testpmd's ``show port stats`` fields, xdpsock's lines.
TESTPMD = {s.testpmd: s.name for s in TABLE if s.testpmd}
XDPSOCK = {s.xdpsock: s.name for s in TABLE if s.xdpsock}

OFFERED = INDEX["offered_packets"]
RX_PACKETS = INDEX["rx_packets"]
RX_BYTES = INDEX["rx_bytes"]
TX_PACKETS = INDEX["tx_packets"]
TX_BYTES = INDEX["tx_bytes"]
TX_SUBMITTED = INDEX["tx_submitted"]
RX_DROPPED = INDEX["rx_dropped"]
RX_RING_FULL = INDEX["rx_ring_full"]
FILL_EMPTY = INDEX["fill_ring_empty_descs"]
TX_RING_EMPTY = INDEX["tx_ring_empty_descs"]
RX_INVALID = INDEX["rx_invalid_descs"]
TX_INVALID = INDEX["tx_invalid_descs"]
RX_MISSED = INDEX["rx_missed"]
TX_ERRORS = INDEX["tx_errors"]
SENDTO_CALLS = INDEX["sendto_calls"]
POLL_CALLS = INDEX["poll_calls"]
RX_EMPTY_POLLS = INDEX["rx_empty_polls"]
FILL_FAIL_POLLS = INDEX["fill_fail_polls"]
TX_FULL_POLLS = INDEX["tx_full_polls"]
NAPI_POLLS = INDEX["napi_polls"]
NAPI_SCHEDULES = INDEX["napi_schedules"]
WAKEUPS = INDEX["wakeups"]
INTERRUPTS = INDEX["interrupts"]
KICKS = INDEX["kicks"]
KSOFTIRQD_HANDOFFS = INDEX["ksoftirqd_handoffs"]

# veth
VETH_RING_FULL = INDEX["veth_xdp_ring_full"]
BACKLOG_DROPPED = INDEX["backlog_dropped"]

# tun + vhost-net
TUN_TX_DROPPED = INDEX["tun_tx_dropped"]
VHOST_NO_RX_BUFS = INDEX["vhost_no_rx_bufs"]
VHOST_REQUEUES = INDEX["vhost_requeues"]
VHOST_WAKEUPS = INDEX["vhost_wakeups"]
GUEST_RX_PACKETS = INDEX["guest_rx_packets"]
BUSY_POLLS = INDEX["busy_polls"]
WATCHDOG_POLLS = INDEX["watchdog_polls"]
