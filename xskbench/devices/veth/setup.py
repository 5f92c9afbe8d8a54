"""The veth pair: udp baseline, AF_XDP copy mode (ptr_ring + veth_poll) and the RFC's
zero-copy tx NAPI (optionally batching into GSO skbs). See kernel.py."""
from xskbench.devices.record import in_order
from xskbench.kernels.engine import wake
from xskbench.kernels.ptr_ring import batch_for, ptr_ring_init, ptr_ring_words
from xskbench.machine import Context, build, start_app
from xskbench.queues import llc_miss_ppm, packet_bytes

from . import CONTEXTS
from . import kernel as k

UDP_GRO_CNT_MAX = 64
GRO_MAX_SIZE = 65536


def setup(cfg, hz, cc, cb):
    v = cfg.veth
    xdp_drop = v.peer == "xdp_drop"
    rx = cfg.workload.kind != "txonly"
    # veth_xmit's __veth_xdp_flush raises NET_RX on the sending CPU: on the measured pair the
    # peer's NAPI runs where the app's sendto runs (the RFC's testbed states its own CPU)
    peer_cpu = v.app_cpu if xdp_drop else v.napi_cpu
    contexts = in_order(CONTEXTS, [
        Context("app", v.app_cpu),
        # the "host" side: whichever context runs the peer's stack in this mode
        Context("backlog", v.app_cpu, softirq=True, ksoftirqd=f"ksoftirqd/{v.app_cpu}",
                host=cfg.mode == "udp"),
        Context("napi", peer_cpu, softirq=True, ksoftirqd=f"ksoftirqd/{peer_cpu}",
                host=cfg.mode == "copy" and not rx),
        Context("napi_tx", v.napi_cpu, softirq=True, ksoftirqd=f"ksoftirqd/{v.napi_cpu}",
                host=cfg.mode == "zerocopy"),
        # the measured pair's receive side: the peer's sender and the receiving veth's NAPI
        Context("sender", v.napi_cpu),
        Context("rx_napi", v.napi_cpu, softirq=True, ksoftirqd=f"ksoftirqd/{v.napi_cpu}",
                host=rx),
    ])
    mach = build(cfg, hz, contexts, extra_labels={"sys": v.app_cpu},
                 dev_words={"xdp_ring": ptr_ring_words(v.ptr_ring_size)} if rx else None)
    m = mach.m
    m[k.D_MODE] = k.MODES.index(cfg.mode)
    m[k.D_BATCH] = int(v.batch)
    m[k.D_MAXSEG] = v.batch_max_segs
    m[k.D_CSUM] = int(v.csum_offload)
    m[k.D_RCAP] = v.ptr_ring_size
    m[k.D_BCAP] = v.backlog_size
    m[k.D_BUDGET] = v.napi_budget
    m[k.D_EXTRA] = v.sink_extra_cycles
    m[k.D_L_SYS] = mach.label("sys")
    m[k.D_GRO] = int(v.gro_udp_fwd)
    # udp_gro_receive_segment: at most UDP_GRO_CNT_MAX segments and 64 KB per merged skb
    m[k.D_GRO_MAX] = max(1, min(UDP_GRO_CNT_MAX, GRO_MAX_SIZE // (cfg.workload.packet_size - 34)))
    m[k.D_USO] = int(v.nic_uso)
    m[k.D_LLC_PPM] = llc_miss_ppm(cfg, packet_bytes(cfg, v.ptr_ring_size))
    m[k.D_PEER] = k.PEERS.index(v.peer)
    m[k.D_XDPGEN] = int(v.xdp_mode == "skb")
    if rx:  # the receiving veth's xdp_ring, VETH_RING_SIZE like the peer's
        m[k.D_XR] = mach.rings["xdp_ring"]
        ptr_ring_init(m, m[k.D_XR], v.ptr_ring_size, batch_for(v.ptr_ring_size))
    start_app(mach, cfg, cc, cb, k.APP, k.RXNAPI if rx else k.PEER)
    if rx:
        wake(m, k.SENDER, 0)
    return mach


def packets_in_flight(mach):
    return k.in_flight(mach.m)

