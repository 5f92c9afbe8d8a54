"""The emulated devices, one folder each (section, setup, kernel) behind a :class:`Device`
record. ``DEVICES`` is the one registry every layer reads: config checks, faults, multi-queue
plans, sweeps, widgets, the CLI and the tests.

Adding a device: README "Add a device". A device can also live outside the package: list
its module (which exposes ``DEVICE``) in ``XSKBENCH_DEVICES=module[,module]``; they join the
registry when it is first imported (before the config sections are assembled).
"""
import importlib
import os
from typing import Any

from .null import DEVICE as NULL
from .record import WORKLOADS, Device, declared_contexts, in_order
from .tun import DEVICE as TUN
from .veth import DEVICE as VETH
from .virtio_net import DEVICE as VIRTIO_NET

DEVICES: dict[str, Device] = {}


def _register(device: Device) -> None:
    """Add ``device`` to the registry. Only at import: the config sections are assembled from
    the registry once (a device added later would have no section in RunConfig)."""
    if device.name in DEVICES:
        raise ValueError(f"device {device.name!r} is registered already")
    DEVICES[device.name] = device


def get(name: Any) -> Device:
    """The record of device ``name``; ValueError listing the devices if unknown."""
    if not isinstance(name, str) or name not in DEVICES:
        raise ValueError(f"device={name!r}: must be one of {', '.join(map(repr, DEVICES))}")
    return DEVICES[name]


def _external(spec: str) -> list[Device]:
    """The ``DEVICE`` of every module named in ``spec`` (``XSKBENCH_DEVICES``)."""
    out = []
    for name in filter(None, (s.strip() for s in spec.split(","))):
        try:
            module = importlib.import_module(name)
        except ImportError as err:
            raise ImportError(f"XSKBENCH_DEVICES={spec!r}: cannot import {name!r} ({err}); "
                              "allowed: importable modules that define DEVICE") from err
        device = getattr(module, "DEVICE", None)
        if not isinstance(device, Device):
            raise ImportError(f"XSKBENCH_DEVICES={spec!r}: module {name!r} has no DEVICE "
                              "(a xskbench.devices.Device record)")
        out.append(device)
    return out


for _dev in (NULL, VIRTIO_NET, TUN, VETH, *_external(os.environ.get("XSKBENCH_DEVICES", ""))):
    _register(_dev)

__all__ = ["DEVICES", "WORKLOADS", "Device", "declared_contexts", "get", "in_order"]
