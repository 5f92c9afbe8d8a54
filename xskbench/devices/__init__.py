"""One module per device: each turns a config into an arena, runs its kernel and names
what its contexts are. ``DEVICES`` maps the config's device name to its module."""
from . import null, tun, veth, virtio_net

DEVICES = {"null": null, "tun": tun, "veth": veth, "virtio-net": virtio_net}
