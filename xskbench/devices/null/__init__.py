"""The null device: an ideal NIC that sinks TX and sources RX at line rate."""
from ..record import Device
from .section import NullConfig

CONTEXTS = ("app", "napi")  # context ids in this order (setup builds them by these names)

DEVICE = Device(
    name="null", package=__name__, section=NullConfig, modes=("zerocopy", "copy"),
    wire_field=("line_rate_pps", "link_gbps"), multi_buffer_modes=("zerocopy", "copy"),
    contexts=lambda cfg: CONTEXTS,
    # the NIC's receive arrivals are paced by the wire, a txonly sender by a set rate
    paced=lambda cfg: cfg.workload.kind != "txonly" or cfg.workload.rate_pps is not None,
)
