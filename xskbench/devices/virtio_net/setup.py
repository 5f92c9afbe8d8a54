"""virtio-net: the guest driver (AF_XDP zero copy / copy, or the DPDK virtio PMD) on two
split virtqueues, with a vhost-user polling PMD (or vhost-net worker) on its own host CPU."""
from xskbench.devices.record import in_order
from xskbench.kernels import afxdp
from xskbench.kernels.engine import wake
from xskbench.kernels.layout import CX_N, CX_WATCH, H_ARR_END, H_CTX, MC
from xskbench.kernels.xsk_ring import NEED_WAKEUP, R_FLAGS
from xskbench.machine import Context, build, start_app

from . import CONTEXTS
from . import kernel as k
from . import virtqueue as vq

VNET_HDR = 12  # struct virtio_net_hdr_mrg_rxbuf
# host CPUs are their own CPUs in the engine, past every guest CPU (the fields' 0..63): a
# guest vCPU never shares a clock with a host core
HOST_CPU_BASE = 64



def setup(cfg, hz, cc, cb):
    v = cfg.virtio
    pmd = cfg.mode == "pmd"
    hcpu = HOST_CPU_BASE + v.host_cpu
    if pmd:
        contexts = [Context("pmd", v.app_cpu), Context("host", hcpu, host=True)]
        extra = {}
    else:
        contexts = [Context("app", v.app_cpu),
                    Context("napi_tx", v.tx_napi_cpu, softirq=True,
                            ksoftirqd=f"ksoftirqd/{v.tx_napi_cpu}"),
                    Context("napi_tx_local", v.app_cpu, softirq=True,
                            ksoftirqd=f"ksoftirqd/{v.app_cpu}"),
                    Context("napi_rx", v.rx_napi_cpu, softirq=True,
                            ksoftirqd=f"ksoftirqd/{v.rx_napi_cpu}"),
                    Context("host", hcpu, host=True)]
        extra = {"sys": v.app_cpu}
    contexts = in_order(CONTEXTS[cfg.mode], contexts)
    words = vq.vq_words(v.queue_size)
    mach = build(cfg, hz, contexts, extra_labels=extra,
                 dev_words={"virtio_txq": words, "virtio_rxq": words, "virtio_hscr": 512})
    m = mach.m
    mc_per_s = hz * MC
    txq, rxq = mach.rings["virtio_txq"], mach.rings["virtio_rxq"]
    cache_thr = v.desc_cache_threshold
    for q in (txq, rxq):
        vq.vq_init(m, q, v.queue_size, int(v.event_idx), int(v.indirect), int(v.desc_cache),
                   cache_thr)
    m[k.D_TXQ], m[k.D_RXQ], m[k.D_HSCR] = txq, rxq, mach.rings["virtio_hscr"]
    m[k.D_BUDGET] = v.napi_budget
    m[k.D_MODE] = k.MODES.index(cfg.mode)
    m[k.D_WAKEUP] = k.WAKEUPS.index(v.wakeup)
    m[k.D_HOSTKIND] = k.HOSTS.index(v.host)
    ns = lambda x: round(x * 1e-9 * mc_per_s)  # noqa: E731
    m[k.D_IRQ_DELAY], m[k.D_IPI_DELAY], m[k.D_EXIT_DELAY] = (
        ns(v.irq_delay_ns), ns(v.ipi_delay_ns), ns(v.exit_delay_ns))
    m[k.D_HDR] = VNET_HDR
    m[k.D_RXLEN] = cfg.xsk.frame_size - cfg.xsk.headroom - 256 + VNET_HDR
    m[k.D_CLEANTX] = int(v.rx_cleantx)
    m[k.D_HOST_BURST] = v.host_burst
    m[k.D_PRIME] = v.tx_first * v.host_burst if cfg.workload.kind == "l2fwd" else 0
    m[k.D_TXLAST] = k.TXN
    m[k.D_BUSYLOOP] = round(v.vhost_busyloop_us * 1e-6 * mc_per_s)
    m[k.D_CSUM] = int(v.csum)
    m[k.D_REFILL_DELAY] = round(0.5 * mc_per_s)  # HZ / 2
    # the socket's NAPI id is rx NAPI's (the rxq's xdp_rxq_info), marked by xsk_rcv: a
    # receiving socket busy-polls rx NAPI; a copy-mode sender has none (zero copy txonly /
    # l2fwd with busy poll are refused in check: nothing would wake tx NAPI)
    afxdp.bp_init(m, k.D_BP, cfg.xsk, not pmd and cfg.workload.kind != "txonly", mc_per_s)
    # a polling vhost-user backend keeps guest kicks disabled; vhost-net starts asleep
    for q in (txq, rxq):
        vq.vq_dev_notify(m, q, v.host == "vhost-net")
    host_ctx = k.PHOST if pmd else k.HOST
    if v.host == "vhost-user":
        wake(m, host_ctx, 0)  # polls from t=0
    else:
        m[k.D_HOST_SLEEP] = 1
        if cfg.workload.kind != "txonly":
            wake(m, host_ctx, 0)
            m[k.D_HOST_SLEEP] = 0
    if pmd:
        wake(m, k.PMD, 0)
        if cfg.workload.kind == "txonly":
            m[H_ARR_END] = 0
        m[mach.rings["tx"] + R_FLAGS] &= ~NEED_WAKEUP
    else:
        m[k.D_L_SYS] = mach.label("sys")
        start_app(mach, cfg, cc, cb, k.APP, k.RXN)
        if cfg.mode == "zerocopy" and v.wakeup != "inline" and not cfg.xsk.busy_poll:
            # the host's used entries are the NAPIs' to read; its interrupts unpark the
            # application explicitly (kernel._host_interrupts)
            m[m[H_CTX] + k.APP * CX_N + CX_WATCH] = ~(1 << k.HOST)
    return mach


def packets_in_flight(mach):
    """Packets inside the device: guest RX buffers the host filled and the guest has not
    reaped; in the kernel modes also TX buffers the guest has not reaped (the DPDK PMD counts
    a packet as sent when it enqueues it, as testpmd does)."""
    m = mach.m
    txq, rxq = int(m[k.D_TXQ]), int(m[k.D_RXQ])
    n = int(vq.vq_used_pending(m, rxq)) + int(m[k.D_VH_LOOP])  # + looped back in vhost-net
    if m[k.D_MODE] != k.MODE_PMD:
        n += int(m[txq + vq.Q_INUSE])
    return n
