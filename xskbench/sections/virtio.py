"""Section `virtio`: the virtio-net device."""

from dataclasses import dataclass

from xskbench.fields import Section


@dataclass(frozen=True)
class VirtioConfig(Section):
    """Virtio-net device (placeholder; fields added with the device model)."""

    SECTION = "virtio"
