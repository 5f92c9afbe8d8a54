"""The one stats table: every counter a run keeps, its unit, the kernel/tool counter it
mirrors and what it means. Kernels index counters by the constants below; results,
DataFrame columns, reports and plot labels take their names and units from here.
"""
from typing import NamedTuple


class Stat(NamedTuple):
    name: str
    unit: str
    mirrors: str
    doc: str


TABLE = (
    Stat("offered_packets", "pkts", "pktgen/testpmd tx", "packets offered to the datapath"),
    Stat("rx_packets", "pkts", "xdpsock rx", "packets the application received"),
    Stat("rx_bytes", "bytes", "xdpsock rx bytes", "bytes the application received"),
    Stat("tx_packets", "pkts", "xdpsock tx", "packets transmitted and completed"),
    Stat("tx_bytes", "bytes", "xdpsock tx bytes", "bytes transmitted and completed"),
    Stat("tx_submitted", "pkts", "xsk tx ring produced", "descriptors the application put on TX"),
    Stat("rx_dropped", "pkts", "XDP_STATISTICS rx_dropped",
         "dropped: no UMEM buffer for a copy-mode receive"),
    Stat("rx_ring_full", "pkts", "XDP_STATISTICS rx_ring_full", "dropped: RX ring full"),
    Stat("fill_ring_empty_descs", "events", "XDP_STATISTICS rx_fill_ring_empty_descs",
         "the driver found the fill ring empty"),
    Stat("tx_ring_empty_descs", "events", "XDP_STATISTICS tx_ring_empty_descs",
         "the driver found the TX ring empty"),
    Stat("rx_invalid_descs", "descs", "XDP_STATISTICS rx_invalid_descs", "invalid RX descriptors"),
    Stat("tx_invalid_descs", "descs", "XDP_STATISTICS tx_invalid_descs", "invalid TX descriptors"),
    Stat("rx_missed", "pkts", "ethtool rx_missed_errors",
         "dropped by the NIC: no RX buffer posted"),
    Stat("tx_errors", "pkts", "testpmd TX-errors", "transmit attempts refused (-EAGAIN/busy)"),
    Stat("sendto_calls", "calls", "xdpsock tx_wakeup_sendtos", "sendto() kicks by the app"),
    Stat("poll_calls", "calls", "xdpsock rx_wakeup/opt_poll", "recvfrom()/poll() by the app"),
    Stat("rx_empty_polls", "polls", "xdpsock rx_empty_polls", "app polls that found RX empty"),
    Stat("fill_fail_polls", "polls", "xdpsock fill_fail_polls",
         "app could not refill the fill ring"),
    Stat("tx_full_polls", "polls", "xdpsock tx_trigger_sendtos", "app found the TX ring full"),
    Stat("napi_polls", "polls", "/proc/net/softnet_stat", "NAPI poll rounds"),
    Stat("napi_schedules", "events", "napi_schedule", "NAPI scheduled from idle"),
    Stat("wakeups", "events", "ndo_xsk_wakeup", "driver wakeups through ndo_xsk_wakeup"),
    Stat("interrupts", "irqs", "/proc/interrupts", "hard interrupts delivered"),
    Stat("kicks", "kicks", "virtnet sq kicks", "doorbells to the device or host"),
    Stat("ksoftirqd_handoffs", "events", "ksoftirqd wakeups", "softirq work handed to ksoftirqd"),
    Stat("veth_xdp_ring_full", "pkts", "veth peer rx_drops (ptr_ring full)",
         "dropped: the peer's ptr_ring (xdp_ring) was full in veth_xmit"),
    Stat("backlog_dropped", "pkts", "/proc/net/softnet_stat dropped",
         "dropped: the per-CPU backlog (netdev_max_backlog) was full"),
    # tun + vhost-net
    Stat("tun_tx_dropped", "pkts", "tun dev tx_dropped (ip -s link)",
         "dropped by tun_net_xmit: the tfile ptr_ring was full"),
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

# Drop counters: offered = delivered + dropped (by these reasons) + in flight.
DROP_REASONS = ("rx_dropped", "rx_ring_full", "rx_missed", "tx_invalid_descs", "tx_errors")
# veth
VETH_RING_FULL = INDEX["veth_xdp_ring_full"]
BACKLOG_DROPPED = INDEX["backlog_dropped"]
DROP_REASONS = DROP_REASONS + ("veth_xdp_ring_full", "backlog_dropped")

# tun + vhost-net
TUN_TX_DROPPED = INDEX["tun_tx_dropped"]
VHOST_NO_RX_BUFS = INDEX["vhost_no_rx_bufs"]
VHOST_REQUEUES = INDEX["vhost_requeues"]
VHOST_WAKEUPS = INDEX["vhost_wakeups"]
GUEST_RX_PACKETS = INDEX["guest_rx_packets"]
BUSY_POLLS = INDEX["busy_polls"]
WATCHDOG_POLLS = INDEX["watchdog_polls"]
DROP_REASONS = DROP_REASONS + ("tun_tx_dropped",)
