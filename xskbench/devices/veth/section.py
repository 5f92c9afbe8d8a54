"""Section `veth`: the veth pair (baseline veth_xmit/ptr_ring and the RFC's xsk tx NAPI)."""

from dataclasses import dataclass

from xskbench.fields import Section, fld


@dataclass(frozen=True)
class VethConfig(Section):
    """Veth pair: the sender on one end, a sink (bridge → NIC) past the peer."""

    SECTION = "veth"

    ptr_ring_size: int = fld(256, "the peer's ptr_ring (VETH_RING_SIZE); full → drop",
                             unit="skbs", lo=2, hi=65536)
    napi_budget: int = fld(64, "packets per NAPI poll (veth_poll, veth tx NAPI)",
                           unit="packets", lo=1, hi=1024)
    batch: bool = fld(False, "RFC patch 8: aggregate IPv4 UDP descs into GSO skbs (zerocopy)")
    batch_max_segs: int = fld(17, "descs per aggregate (MAX_SKB_FRAGS)", unit="segs",
                              lo=1, hi=17)
    csum_offload: bool = fld(True, "checksum offload on the paths that have it "
                             "(udp: CHECKSUM_PARTIAL; batch: udp4_hwcsum); off = software "
                             "csum in the context that computes it")
    gro_udp_fwd: bool = fld(False, "rx-udp-gro-forwarding on the peer (NETIF_F_GRO_UDP_FWD, "
                            "off by default): the peer's GRO merges same-flow UDP skbs of a "
                            "poll into one GSO skb (copy and zerocopy without batch)")
    nic_uso: bool = fld(True, "the NIC past the bridge segments UDP GSO skbs (mlx5 "
                        "NETIF_F_GSO_UDP_L4); off = validate_xmit_skb segments them in "
                        "software, one skb per segment, in the sending softirq")
    backlog_size: int = fld(1000, "netdev_max_backlog (udp mode)", unit="skbs", lo=1,
                            hi=100000)
    sink_extra_cycles: int = fld(0, "extra per-skb work past the peer, on top of "
                                 "br_forward_finish", unit="cycles", lo=0, hi=1_000_000)
    app_cpu: int = fld(0, "CPU running the sender", lo=0, hi=63)
    napi_cpu: int = fld(1, "CPU running the peer's NAPI and the veth tx NAPI (peer=xdp_drop: "
                        "the peer's sender and the receiving veth's NAPI)", lo=0, hi=63)
    peer: str = fld("bridge", "what is past the peer: 'bridge' (the RFC's testbed: bridge → "
                    "mlx5, a libxudp sender) or 'xdp_drop' (xskbench measure's pair: an "
                    "XDP_DROP program on the peer, an xdpsock app; rxdrop/l2fwd get a "
                    "live-frames sender on the peer)", choices=("bridge", "xdp_drop"))
    xdp_mode: str = fld("native", "how the receiving socket's XDP program is attached "
                        "(peer=xdp_drop, rxdrop/l2fwd): 'native' (veth_xdp_rcv_one runs it) "
                        "or 'skb' (generic XDP: an skb per frame, the stack, per-packet "
                        "flush)", choices=("native", "skb"))
