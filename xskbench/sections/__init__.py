"""Config sections. Each is a frozen dataclass deriving from :class:`xskbench.fields.Section`.

A new section is one import plus one entry in :data:`SECTIONS`; ``RunConfig``, the CLI and the
widgets pick it up from there.
"""

from xskbench.sections.afxdp import TestbedConfig, WorkloadConfig, XskConfig
from xskbench.sections.faults import FaultsConfig
from xskbench.sections.mq import MqConfig
from xskbench.sections.null import NullConfig
from xskbench.sections.tun import TunConfig
from xskbench.sections.veth import VethConfig
from xskbench.sections.virtio import VirtioConfig

#: Section name -> class, in the order used by RunConfig, JSON and ``xskbench fields``.
SECTIONS: dict[str, type] = {cls.SECTION: cls for cls in (
    XskConfig, WorkloadConfig, TestbedConfig, NullConfig, VirtioConfig, TunConfig, VethConfig,
    MqConfig, FaultsConfig,
)}


def section_class(name: str) -> type:
    """The section class called ``name``; ValueError listing the sections if unknown."""
    try:
        return SECTIONS[name]
    except KeyError:
        raise ValueError(f"unknown section {name!r}; allowed: {', '.join(SECTIONS)}") from None


__all__ = ["SECTIONS", "FaultsConfig", "MqConfig", "NullConfig", "TestbedConfig", "TunConfig",
           "VethConfig", "VirtioConfig", "WorkloadConfig", "XskConfig", "section_class"]
