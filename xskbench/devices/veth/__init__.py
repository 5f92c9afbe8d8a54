"""The veth pair: udp baseline, AF_XDP copy mode and the RFC's zero-copy tx NAPI."""
from ..record import Device
from .section import VethConfig


def check(cfg):
    if cfg.veth.batch and cfg.mode != "zerocopy":
        raise ValueError(f"veth.batch=true needs mode=zerocopy (the RFC's tx NAPI), "
                         f"not mode={cfg.mode!r}")


DEVICE = Device(
    name="veth", package=__name__, section=VethConfig, modes=("udp", "copy", "zerocopy"),
    workloads=("txonly",),
    about="the model only sends; nothing is received on the sender's end",
    check=check,
    # every napi_schedule raises a softirq on a CPU: nothing is delivered that could be lost
    notifies=lambda cfg: False,
)
