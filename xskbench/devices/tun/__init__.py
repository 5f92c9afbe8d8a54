"""tun + vhost-net: a host application's AF_XDP socket on a tun queue; vhost-net copies the
packets into a guest's receive queue."""
from ..record import Device
from .section import TunConfig

DEVICE = Device(
    name="tun", package=__name__, section=TunConfig, modes=("copy", "zerocopy"),
    workloads=("txonly",), about="the host application sending toward the guest",
    host_cpu_fields=("vhost_cpu",),
)
