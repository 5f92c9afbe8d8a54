"""The null device: an ideal NIC (wire rate, one descriptor ring each way) with one NAPI
context, so the AF_XDP core runs before any virtual device exists."""
from xskbench.devices.record import in_order
from xskbench.kernels import afxdp
from xskbench.kernels import layout as L
from xskbench.kernels.layout import MC
from xskbench.machine import Context, build, start_app

from . import CONTEXTS
from . import kernel as k


def setup(cfg, hz, cc, cb):
    n = cfg.null
    contexts = in_order(CONTEXTS, [
        Context("app", n.app_cpu),
        Context("napi", n.napi_cpu, softirq=True, ksoftirqd="ksoftirqd", host=True)])
    mach = build(cfg, hz, contexts, extra_labels={"sys": n.app_cpu},
                 dev_words={"null_txq": n.ring_size, "null_rxq": 3 * n.ring_size})
    m = mach.m
    mc_per_s = hz * MC
    rate = cfg.workload.rate_pps
    m[k.D_TXQ], m[k.D_RXQ] = mach.rings["null_txq"], mach.rings["null_rxq"]
    m[k.D_CAP], m[k.D_LINE_GAP] = n.ring_size, round(mc_per_s / n.line_rate_pps)
    m[k.D_BYTE_GAP] = round(8 * mc_per_s / (n.link_gbps * 1e9) * 2 ** k.BYTE_GAP_SHIFT)
    # every arrival is packet_size long
    wire = k.wire_time(cfg.workload.packet_size, m[k.D_LINE_GAP], m[k.D_BYTE_GAP])
    m[k.D_ARR_GAP] = wire if rate is None else max(wire, round(mc_per_s / rate))
    m[k.D_BUDGET] = n.napi_budget
    m[k.D_IRQ_DELAY] = round(n.irq_delay_ns * 1e-9 * mc_per_s)
    m[k.D_L_SYS] = mach.label("sys")
    # the socket's NAPI id: zero copy takes the pool's queue (combined channel); a copy-mode
    # socket marks it from received packets, so a copy txonly sender has none
    napi_id = cfg.mode == "zerocopy" or cfg.workload.kind != "txonly"
    afxdp.bp_init(m, k.D_BP, cfg.xsk, napi_id, mc_per_s)
    start_app(mach, cfg, cc, cb, k.APP, k.NAPI)
    return mach


def packets_in_flight(mach):
    """Packets inside the NIC: on the TX wire queue, or received and not yet polled (each
    xsk.multi_buffer packet holds H_NSEG descriptors)."""
    m = mach.m
    descs = m[k.D_TX_HEAD] - m[k.D_TX_TAIL] + m[k.D_RX_FILL] - m[k.D_RX_DONE]
    return int(descs // m[L.H_NSEG])
