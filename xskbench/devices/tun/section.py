"""Section `tun`: a tun device with one tfile, vhost-net serving a guest's rx virtqueue."""

from dataclasses import dataclass

from xskbench.fields import Section, fld


@dataclass(frozen=True)
class TunConfig(Section):
    """Tun + vhost-net: the tfile ptr_ring, the vhost worker, the guest's receive queue."""

    SECTION = "tun"

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
