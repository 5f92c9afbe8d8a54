"""The emulated devices, one folder each (section, setup, kernel) behind a :class:`Device`
record. ``DEVICES`` is the one registry every layer reads: config checks, faults, multi-queue
plans, sweeps, widgets, the CLI and the tests.

Adding a device: README "Add a device".
"""
from typing import Any

from .null import DEVICE as NULL
from .record import WORKLOADS, Device
from .tun import DEVICE as TUN
from .veth import DEVICE as VETH
from .virtio_net import DEVICE as VIRTIO_NET

DEVICES: dict[str, Device] = {}


def register(device: Device) -> Device:
    """Add ``device`` to the registry (a test's toy device too); returns it."""
    if device.name in DEVICES and DEVICES[device.name] is not device:
        raise ValueError(f"device {device.name!r} is registered already")
    DEVICES[device.name] = device
    return device


def unregister(name: str) -> None:
    DEVICES.pop(name, None)


def get(name: Any) -> Device:
    """The record of device ``name``; ValueError listing the devices if unknown."""
    if not isinstance(name, str) or name not in DEVICES:
        raise ValueError(f"device={name!r}: must be one of {', '.join(map(repr, DEVICES))}")
    return DEVICES[name]


for _dev in (NULL, VIRTIO_NET, TUN, VETH):
    register(_dev)

__all__ = ["DEVICES", "WORKLOADS", "Device", "get", "register", "unregister"]
