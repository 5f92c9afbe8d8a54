"""The null device: an ideal NIC that sinks TX and sources RX at line rate."""
from ..record import Device
from .section import NullConfig

DEVICE = Device(
    name="null", package=__name__, section=NullConfig, modes=("zerocopy", "copy"),
    wire_field=("line_rate_pps", "link_gbps"), multi_buffer_modes=("zerocopy", "copy"),
    # the NIC's receive arrivals are paced by the wire, a txonly sender by a set rate
    paced=lambda cfg: cfg.workload.kind != "txonly" or cfg.workload.rate_pps is not None,
)
