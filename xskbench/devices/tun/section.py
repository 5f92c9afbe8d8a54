"""Section `tun`: a tun device with one tfile, and who is on the other side of it: vhost-net
serving a guest's rx virtqueue, or a process reading and writing the tap fd."""

from dataclasses import dataclass

from xskbench.fields import Section, fld


@dataclass(frozen=True)
class TunConfig(Section):
    """Tun + vhost-net (the tfile ptr_ring, the vhost worker, the guest's receive queue), or a
    tap whose fd a process writes and reads (``peer = fd``)."""

    SECTION = "tun"

    peer: str = fld("vhost", "the other side of the tfile: vhost = vhost-net into a guest (the "
                    "host application sends toward it: txonly); fd = a process on the tap fd "
                    "on napi_cpu, whose write() runs tun_get_user, XDP and the copy into the "
                    "socket (rxdrop, l2fwd) and whose read() drains what the socket sent "
                    "(l2fwd, txonly)", choices=("vhost", "fd"))
    xdp_mode: str = fld("native", "peer=fd: where the XDP program runs: native = in "
                        "tun_build_skb on an xdp_buff (tap, O_NONBLOCK, frame within a page); "
                        "skb = generic XDP on the built skb in netif_receive_skb",
                        choices=("native", "skb"))
    fd_batch: int = fld(64, "peer=fd: write() calls per round before the process drains the "
                        "fd with read() until EAGAIN (at most 4x this many)", unit="calls",
                        lo=1, hi=4096)
    napi_cpu: int = fld(1, "peer=fd: CPU of the process on the tap fd; its write() runs the "
                        "receive path with bottom halves off, as a NAPI poll would (the name "
                        "the measured rows read)", lo=0, hi=63)

    tx_queue_len: int = fld(500, "tfile ptr_ring length (dev tx_queue_len, TUN_READQ_SIZE)",
                            unit="ptrs", lo=1, hi=65536)
    zc_version: int = fld(1, "zero-copy patch modelled in mode zerocopy: 1 = Jan 2024 "
                          "(single-desc peek), 2 = Feb 2024 (batched peek via the ptr_ring)",
                          choices=(1, 2))
    vhost_batch: int = fld(64, "VHOST_NET_BATCH: pointers vhost_net_buf_produce takes at once",
                           unit="ptrs", lo=1, hi=1024)
    weight_pkts: int = fld(256, "VHOST_NET_PKT_WEIGHT: packets per handle_rx pass",
                           unit="packets", lo=1, hi=65536)
    weight_bytes: int = fld(0x80000, "VHOST_NET_WEIGHT: bytes per handle_rx pass",
                            unit="bytes", lo=64, hi=1 << 30)
    guest: str = fld("napi", "guest receiver: napi = the kernel's virtio-net rx NAPI, woken by "
                     "vhost's interrupt; pmd = a DPDK virtio PMD (testpmd rxonly) polling the rx "
                     "virtqueue with interrupts off, so vhost-net never signals",
                     choices=("napi", "pmd"))
    guest_burst: int = fld(32, "guest PMD: packets per rte_eth_rx_burst (testpmd --burst)",
                           unit="packets", lo=1, hi=512)
    guest_ring: int = fld(256, "guest rx virtqueue size (avail/used entries)", unit="descs",
                          lo=16, hi=32768, pow2=True)
    guest_budget: int = fld(64, "guest NAPI budget per poll (guest=napi)", unit="packets",
                            lo=1, hi=1024)
    pmd_burst: int = fld(1, "packets the host app forwards per loop at a set rate (an OVS "
                         "PMD forwards what its other port delivered since its last poll; "
                         "1 = xdpsock, one packet as soon as it is due)", unit="packets",
                         lo=1, hi=64)
    vhost_stall_us: float = fld(0.0, "stall the vhost worker this long at start (fault "
                                "injection: the ptr_ring fills, tun drops)", unit="us",
                                lo=0.0, hi=1e6)
    app_cpu: int = fld(0, "CPU of the host application (OVS PMD)", lo=0, hi=63)
    vhost_cpu: int = fld(1, "CPU of the vhost-net worker thread", lo=0, hi=63)
    guest_cpu: int = fld(2, "CPU (vCPU) running the guest's rx NAPI or PMD", lo=0, hi=63)
    irq_delay_ns: float = fld(1000.0, "guest interrupt / worker wake-up latency", unit="ns",
                              lo=0.0, hi=1e6)
