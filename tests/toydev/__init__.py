"""A toy device for tests/test_toy_device.py: a loopback NIC whose NAPI takes the xsk's TX
descriptors and completes them at once (zero copy, txonly only).

It lives outside the package on purpose: ``XSKBENCH_DEVICES=toydev`` (with ``tests`` on the
path) registers it, and every layer - configs, the CLI, multi-queue plans, faults, sweeps,
widgets, property tests - picks it up from this record alone (README "Add a device").
It charges existing ops only (napi_poll, xsk_tx_peek_release_desc_batch, xsk_tx_completed,
the app's and syscalls' ops), so it needs no op-table row or prior of its own.
"""
from xskbench.devices import Device

from .section import ToyConfig

DEVICE = Device(
    name="toy", package=__name__, section=ToyConfig, modes=("zerocopy",),
    workloads=("txonly",), about="a loopback NIC that only transmits",
)
