"""Section `virtio`: the virtio-net device (guest driver, split virtqueues, host backend)."""

from dataclasses import dataclass

from xskbench.fields import Section, fld


@dataclass(frozen=True)
class VirtioConfig(Section):
    """Virtio-net: virtqueues, NAPI, the xsk TX wakeup, the desc cache, the host backend and
    CPU placement (host CPUs are numbered apart from guest CPUs)."""

    SECTION = "virtio"

    queue_size: int = fld(256, "virtqueue size, rx and tx (QEMU default 256)", unit="descs",
                          lo=16, hi=1024, pow2=True)
    napi_budget: int = fld(64, "packets per NAPI poll (napi_weight)", unit="packets", lo=1,
                           hi=1024)
    indirect: bool = fld(True, "VIRTIO_RING_F_INDIRECT_DESC: a multi-sg buffer takes one "
                               "ring slot and an indirect table")
    event_idx: bool = fld(True, "VIRTIO_RING_F_EVENT_IDX: notification suppression by index")
    desc_cache: bool = fld(False, "cache indirect tables per vq instead of kmalloc/kfree "
                                  "(Xuan Zhuo's desc cache series, not merged)")
    desc_cache_threshold: int = fld(19, "largest sg count served from the desc cache "
                                        "(MAX_SKB_FRAGS + 2)", unit="sgs", lo=1, hi=64)
    # ipi by default: the wakeup the seed's cover letter describes for its measurements
    wakeup: str = fld("ipi", "xsk TX wakeup: local = NAPI on the calling CPU (merged), "
                             "ipi = IPI to the CPU that last ran tx NAPI (2023 v1), "
                             "inline = xmit inside sendto (2021 series)",
                      choices=("local", "ipi", "inline"))
    host: str = fld("vhost-user", "host backend: vhost-user polling PMD or vhost-net worker "
                                  "woken by kicks", choices=("vhost-user", "vhost-net"))
    host_burst: int = fld(32, "host PMD burst", unit="packets", lo=1, hi=512)
    vhost_busyloop_us: float = fld(0.0, "vhost-net busyloop_timeout (VHOST_SET_VRING_BUSYLOOP"
                                   "_TIMEOUT): the worker spins on empty vqs this long before "
                                   "sleeping; 0 = sleep at once", unit="us", lo=0.0, hi=1000.0)
    csum: bool = fld(True, "VIRTIO_NET_F_CSUM negotiated: the device takes partial checksums "
                           "(copy-mode TX with xsk.tx_csum=offload); off, the guest sums each "
                           "frame in validate_xmit_skb (skb_checksum_help)")
    tx_first: int = fld(8, "l2fwd: bursts the host injects to prime the loop "
                           "(testpmd start tx_first)", unit="bursts", lo=1, hi=64)
    rx_cleantx: bool = fld(True, "rx NAPI reaps TX completions (virtnet_poll_cleantx)")
    app_cpu: int = fld(0, "guest CPU of the application (or the DPDK PMD)", lo=0, hi=63)
    tx_napi_cpu: int = fld(1, "guest CPU of tx NAPI (its interrupt affinity)", lo=0, hi=63)
    rx_napi_cpu: int = fld(2, "guest CPU of rx NAPI", lo=0, hi=63)
    host_cpu: int = fld(0, "host CPU of the backend (numbered apart from guest CPUs)", lo=0,
                        hi=63)
    irq_delay_ns: float = fld(2000.0, "guest interrupt delivery (irqfd / posted interrupt)",
                              unit="ns", lo=0.0, hi=1e6)
    ipi_delay_ns: float = fld(2000.0, "IPI delivery in a VM (vmexits on both sides)",
                              unit="ns", lo=0.0, hi=1e6)
    exit_delay_ns: float = fld(1000.0, "guest kick to vhost-net worker wake-up", unit="ns",
                               lo=0.0, hi=1e6)
