"""The veth pair: udp baseline, AF_XDP copy mode and the RFC's zero-copy tx NAPI."""
from ..record import Device
from .section import VethConfig


def check(cfg):
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
    workloads=("txonly",),
    about="the model only sends; nothing is received on the sender's end",
    check=check,
    # every napi_schedule raises a softirq on a CPU: nothing is delivered that could be lost
    notifies=lambda cfg: False,
)
