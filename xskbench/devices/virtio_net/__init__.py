"""virtio-net: the guest driver (AF_XDP zero copy / copy, or the DPDK virtio PMD) on split
virtqueues, with a vhost-user polling PMD or a vhost-net worker on the host."""
from ...umem import descs_per_packet
from ..record import Device
from .section import VirtioConfig

PMD_BURST = 32  # the DPDK virtio PMD's rx burst and rearm threshold (kernel.py)
# context ids in this order, per mode (setup builds them by these names)
GUEST_CONTEXTS = ("app", "napi_tx", "napi_tx_local", "napi_rx", "host")
PMD_CONTEXTS = ("pmd", "host")
CONTEXTS = {"zerocopy": GUEST_CONTEXTS, "copy": GUEST_CONTEXTS, "pmd": PMD_CONTEXTS}


def check(cfg):
    v = cfg.virtio
    if v.desc_cache and not v.indirect:
        # the desc cache holds indirect tables (desc_cache_threshold is ignored while off)
        raise ValueError("virtio.desc_cache=true needs virtio.indirect=true (the cache holds "
                         "indirect tables); allowed: virtio.indirect=true, or "
                         "virtio.desc_cache=false")
    x = cfg.xsk
    if x.busy_poll and cfg.mode == "zerocopy" and cfg.workload.kind != "rxdrop":
        raise ValueError(f"xsk.busy_poll=true with mode=zerocopy and workload.kind="
                         f"{cfg.workload.kind!r}: the socket busy-polls rx NAPI (its NAPI id) "
                         "and prefer-busy-poll skips ndo_xsk_wakeup, so nothing schedules tx "
                         "NAPI; allowed: workload.kind='rxdrop', mode='copy', or "
                         "xsk.busy_poll=false")
    if x.tx_csum == "offload" and cfg.mode == "zerocopy":
        raise ValueError("xsk.tx_csum='offload' with mode=zerocopy: virtio-net has no "
                         "xsk_tx_metadata_ops (Linux 6.13); allowed: mode='copy' (the skb "
                         "carries CHECKSUM_PARTIAL), or xsk.tx_csum='none'/'app'")
    if x.multi_buffer and cfg.mode == "zerocopy":
        # xp_assign_dev: netdev->xdp_zc_max_segs == 1 && (flags & XDP_USE_SG) → -EOPNOTSUPP;
        # mainline virtio-net xsk zero copy (6.11+) leaves xdp_zc_max_segs at 1 (a posted
        # series with VIRTNET_MAX_ZC_SEGS = 8 would lift it)
        raise ValueError("xsk.multi_buffer=true with mode=zerocopy: virtio-net keeps "
                         "xdp_zc_max_segs = 1, so bind with XDP_USE_SG fails (xp_assign_dev: "
                         "-EOPNOTSUPP); allowed: xsk.multi_buffer=false, or device 'null'")
    if descs_per_packet(x, cfg.workload.packet_size) > 1 and cfg.workload.kind != "txonly":
        raise ValueError(f"workload.packet_size={cfg.workload.packet_size} with xsk.multi_buffer"
                         f"=true and workload.kind={cfg.workload.kind!r}: virtio-net receive of "
                         "a packet spread over mergeable RX buffers is not modelled; allowed: "
                         "workload.kind='txonly' (copy mode), or a packet that fits one buffer")
    if cfg.mode != "pmd" and v.queue_size > cfg.xsk.fill_size:
        raise ValueError(f"virtio.queue_size={v.queue_size} must be <= xsk.fill_size="
                         f"{cfg.xsk.fill_size} (the rx queue is filled from the fill ring)")
    if cfg.mode == "pmd" and cfg.workload.kind != "txonly" and v.queue_size < PMD_BURST:
        raise ValueError(f"virtio.queue_size={v.queue_size} must be >= {PMD_BURST} in mode "
                         f"'pmd' with workload {cfg.workload.kind!r} (the DPDK virtio PMD rearms "
                         f"its rx queue {PMD_BURST} descriptors at a time); allowed: "
                         f"virtio.queue_size >= {PMD_BURST}")


def _notifies(cfg):
    # the DPDK PMD polls a polling vhost-user backend: nothing is notified
    return not (cfg.mode == "pmd" and cfg.virtio.host != "vhost-net")


def _paced(cfg):
    w = cfg.workload
    return w.rate_pps is not None and w.kind == "txonly" and cfg.mode != "pmd"


DEVICE = Device(
    name="virtio-net", package=__name__, section=VirtioConfig,
    modes=("zerocopy", "copy", "pmd"), check=check, multi_buffer_modes=("copy",),
    host_cpu_fields=("host_cpu",), host_cpus_apart=True, notifies=_notifies, paced=_paced,
    notify_note="mode pmd only with virtio.host='vhost-net'",
    contexts=lambda cfg: CONTEXTS[cfg.mode],
)
