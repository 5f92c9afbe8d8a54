"""Config sections. Each is a frozen dataclass deriving from :class:`xskbench.fields.Section`.

The core sections live here; each device's section lives in its folder (``devices/<name>/``)
and joins :data:`SECTIONS` through the device registry. ``RunConfig``, the CLI and the widgets
pick them up from there.
"""

from xskbench.devices import DEVICES
from xskbench.sections.afxdp import TestbedConfig, WorkloadConfig, XskConfig
from xskbench.sections.faults import FaultsConfig
from xskbench.sections.mq import MqConfig


def _sections() -> dict[str, type]:
    """Section name -> class, in the order used by RunConfig, JSON and ``xskbench fields``:
    the AF_XDP core, one section per registered device, then multi-queue and faults."""
    return {cls.SECTION: cls for cls in (
        XskConfig, WorkloadConfig, TestbedConfig, *(d.section for d in DEVICES.values()),
        MqConfig, FaultsConfig)}


SECTIONS: dict[str, type] = _sections()


def section_class(name: str) -> type:
    """The section class called ``name``; ValueError listing the sections if unknown."""
    try:
        return SECTIONS[name]
    except KeyError:
        raise ValueError(f"unknown section {name!r}; allowed: {', '.join(SECTIONS)}") from None


__all__ = ["SECTIONS", "FaultsConfig", "MqConfig", "TestbedConfig", "WorkloadConfig", "XskConfig",
           "section_class"]
