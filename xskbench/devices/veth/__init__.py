"""The veth pair: udp baseline, AF_XDP copy mode and the RFC's zero-copy tx NAPI."""
from ..record import Device
from .section import VethConfig

CONTEXTS = ("app", "backlog", "napi", "napi_tx", "sender", "rx_napi")  # ids in this order


def check(cfg):
    wl = cfg.workload.kind
    if wl != "txonly" and (cfg.mode != "copy" or cfg.veth.peer != "xdp_drop"):
        raise ValueError(f"workload.kind={wl!r} on veth needs mode='copy' and "
                         f"veth.peer='xdp_drop' (the measured pair's receive side), not "
                         f"mode={cfg.mode!r} veth.peer={cfg.veth.peer!r}; allowed: txonly")
    if cfg.veth.peer == "xdp_drop" and cfg.mode != "copy":
        raise ValueError(f"veth.peer='xdp_drop' models the measured pair in copy mode (veth "
                         f"has no AF_XDP zero copy), not mode={cfg.mode!r}; allowed: 'copy'")
    if cfg.veth.xdp_mode == "skb" and (cfg.veth.peer != "xdp_drop" or wl == "txonly"):
        raise ValueError("veth.xdp_mode='skb' attaches the receiving socket's program: it "
                         "needs veth.peer='xdp_drop' and workload.kind rxdrop or l2fwd, not "
                         f"veth.peer={cfg.veth.peer!r} workload.kind={wl!r}")
    if cfg.veth.peer == "xdp_drop" and cfg.xsk.busy_poll:
        raise ValueError("xsk.busy_poll=true with veth.peer='xdp_drop': busy poll is not "
                         "modelled on the measured pair; allowed: xsk.busy_poll=false")
    if cfg.veth.batch and cfg.mode != "zerocopy":
        raise ValueError(f"veth.batch=true needs mode=zerocopy (the RFC's tx NAPI), "
                         f"not mode={cfg.mode!r}")
    if cfg.xsk.busy_poll and cfg.mode == "zerocopy":  # (paths-a: busy poll)
        raise ValueError("xsk.busy_poll=true with mode=zerocopy: the socket busy-polls the "
                         "veth rq's NAPI (its NAPI id), which does not transmit, and "
                         "prefer-busy-poll skips ndo_xsk_wakeup, so the RFC's tx NAPI is never "
                         "scheduled; allowed: mode='copy' or xsk.busy_poll=false")


DEVICE = Device(
    name="veth", package=__name__, section=VethConfig, modes=("udp", "copy", "zerocopy"),
    workloads=("txonly", "rxdrop", "l2fwd"),
    about="txonly into the RFC's bridge → NIC (veth.peer='bridge') or into an XDP_DROP "
          "peer; rxdrop/l2fwd in copy mode on the measured pair (veth.peer='xdp_drop')",
    check=check,
    # every napi_schedule raises a softirq on a CPU: nothing is delivered that could be lost
    notifies=lambda cfg: False,
    contexts=lambda cfg: CONTEXTS,
)
