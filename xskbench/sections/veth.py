"""Section `veth`: the veth pair."""

from dataclasses import dataclass

from xskbench.fields import Section


@dataclass(frozen=True)
class VethConfig(Section):
    """Veth pair (placeholder; fields added with the device model)."""

    SECTION = "veth"
