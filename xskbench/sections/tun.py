"""Section `tun`: the tun device."""

from dataclasses import dataclass

from xskbench.fields import Section


@dataclass(frozen=True)
class TunConfig(Section):
    """Tun device (placeholder; fields added with the device model)."""

    SECTION = "tun"
