"""tun + vhost-net: a host application's AF_XDP socket on a tun queue; vhost-net copies the
packets into a guest (copy mode = mainline, zerocopy = the 2024 patches, v1 or v2)."""
from xskbench.devices.record import in_order
from xskbench.kernels.engine import wake
from xskbench.kernels.layout import CX_N, CX_WATCH, H_CTX, MC
from xskbench.kernels.ptr_ring import batch_for, ptr_ring_init, ptr_ring_words
from xskbench.machine import Context, build, start_app
from xskbench.queues import llc_miss_ppm, packet_bytes

from . import CONTEXTS, FD_CONTEXTS
from . import kernel as k

# tun_can_build_skb (x86-64): SKB_DATA_ALIGN(len + TUN_RX_PAD (64) + XDP_PACKET_HEADROOM (256))
# + SKB_DATA_ALIGN(sizeof(struct skb_shared_info)) (320) must fit in PAGE_SIZE (4096)
BUILD_SKB_MAX = 4096 - 320 - 64 - 256


def setup(cfg, hz, cc, cb):
    t = cfg.tun
    fd = t.peer == "fd"
    if fd:
        contexts = in_order(FD_CONTEXTS, [Context("app", t.app_cpu),
                                            Context("peer", t.napi_cpu, host=True)])
    else:
        contexts = in_order(CONTEXTS, [
            Context("app", t.app_cpu), Context("vhost", t.vhost_cpu, host=True),
            Context("guest", t.guest_cpu) if t.guest == "pmd" else
            Context("guest", t.guest_cpu, softirq=True, ksoftirqd="guest_ksoftirqd")])
    mach = build(cfg, hz, contexts, extra_labels={"sys": t.app_cpu},
                 dev_words={"tun_ptr_ring": ptr_ring_words(t.tx_queue_len),
                            "vhost_buf": 2 * t.vhost_batch})
    m = mach.m
    mc_per_s = hz * MC
    m[k.D_PR], m[k.D_VB] = mach.rings["tun_ptr_ring"], mach.rings["vhost_buf"]
    ptr_ring_init(m, m[k.D_PR], t.tx_queue_len, batch_for(t.tx_queue_len))
    m[k.D_VB_CAP] = t.vhost_batch
    m[k.D_G_SIZE] = t.guest_ring
    m[k.D_G_AVAIL] = t.guest_ring  # the guest posted its whole rx ring at open
    m[k.D_WPKTS], m[k.D_WBYTES] = t.weight_pkts, t.weight_bytes
    m[k.D_GBUDGET] = t.guest_budget
    m[k.D_IRQ_DELAY] = round(t.irq_delay_ns * 1e-9 * mc_per_s)
    m[k.D_L_SYS] = mach.label("sys")
    m[k.D_ZCV] = t.zc_version
    m[k.D_STALL_UNTIL] = round(t.vhost_stall_us * 1e-6 * mc_per_s)
    m[k.D_BURST] = t.pmd_burst
    m[k.D_GPMD] = int(t.guest == "pmd")
    m[k.D_GBURST] = t.guest_burst
    # tun_can_build_skb: a frame over BUILD_SKB_MAX takes tun_alloc_skb, and a native program
    # then runs as generic XDP on that skb
    native = t.xdp_mode == "native" and cfg.workload.packet_size <= BUILD_SKB_MAX
    m[k.D_FD], m[k.D_FD_NATIVE], m[k.D_FD_BATCH] = fd, native, t.fd_batch
    # packet bytes in circulation: UMEM frames, the guest's buffers, skbs in the ptr_ring
    skbs = t.tx_queue_len if cfg.mode == "copy" else 0
    m[k.D_LLC_PPM] = llc_miss_ppm(cfg, packet_bytes(cfg, (0 if fd else t.guest_ring) + skbs))
    start_app(mach, cfg, cc, cb, k.APP, k.PEER if fd else k.GUEST)
    if fd:
        wake(m, k.PEER, 0)  # the process writes (or reads) from the start
    elif t.guest == "pmd":
        wake(m, k.GUEST, 0)  # the PMD polls from the start
        # its empty poll reads only the used index vhost publishes: other contexts' horizons
        # skip its polls until vhost moves something (engine.idle_spin parks it)
        m[m[H_CTX] + k.GUEST * CX_N + CX_WATCH] = 1 << k.VHOST
    return mach


def packets_in_flight(mach):
    """Packets inside tun/vhost-net: skbs in the ptr_ring or vhost's batch (copy), peeked
    descriptors not yet completed (zero copy v2); none with tun.peer=fd (kernel.in_flight)."""
    return int(k.in_flight(mach.m))
