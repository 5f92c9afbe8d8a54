"""Arena layout: every header slot and context word has its own index (a new slot cannot
silently land on another), core slots stay below the device area, each device's ``D_*`` slots
inside it, and the allocator refuses what does not fit."""
import importlib

import pytest

from xskbench.devices import DEVICES
from xskbench.kernels import layout as L


def _ints(module, prefix):
    return {k: v for k, v in vars(module).items()
            if k.startswith(prefix) and isinstance(v, int) and not isinstance(v, bool)}


def _assert_distinct(slots):
    by_index = {}
    for name, i in slots.items():
        by_index.setdefault(i, []).append(name)
    assert {i: n for i, n in by_index.items() if len(n) > 1} == {}


def test_core_header_slots_are_distinct_and_below_the_device_area():
    core = _ints(L, "H_")
    assert len(core) > 80
    _assert_distinct(core)
    assert max(core.values()) < L.DEV_BASE < L.HDR


@pytest.mark.parametrize("name", sorted(DEVICES))
def test_device_slots_are_distinct_and_inside_the_device_area(name):
    kernel = importlib.import_module(f"{DEVICES[name].package}.kernel")
    dev = _ints(kernel, "D_")
    assert dev, f"{name}: no D_ slots found"
    _assert_distinct(dev)
    assert L.DEV_BASE <= min(dev.values()) and max(dev.values()) < L.HDR


def test_context_words_are_distinct_and_fit_a_context():
    words = {k: v for k, v in _ints(L, "CX_").items() if k != "CX_N"}
    _assert_distinct(words)
    assert max(words.values()) < L.CX_N


def test_the_allocator_refuses_slots_past_its_area():
    assert L.device_slots(3) == range(L.DEV_BASE, L.DEV_BASE + 3)
    with pytest.raises(ValueError, match="do not fit"):
        L.device_slots(L.HDR - L.DEV_BASE + 1)
