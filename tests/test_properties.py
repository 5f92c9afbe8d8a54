"""Properties of random valid configurations, every device and mode (hypothesis).

Every field is drawn within its metadata bounds (``xskbench.fields.iter_fields``); the few
cross-field limits are drawn to hold (packet size within the frame, batch within the rings,
UMEM at least the fill ring) and whatever validation still rejects is discarded. Faults are
drawn per kind (windows that fit the run); a set the run's device refuses is dropped. Runs are
short (0.5-2 ms emulated). ``benchmarks/soak.py`` runs the same property many more times.
"""

import json
import math

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from xskbench import faults
from xskbench.config import DEVICE_MODES, XDP_PACKET_HEADROOM, RunConfig
from xskbench.devices import DEVICES
from xskbench.fields import iter_fields
from xskbench.run import run
from xskbench.sections import SECTIONS

# every device x mode x workload the registry says it models
# (veth receives only as the measured pair in copy mode, tun only from a process on the tap
# fd on one queue: their checks refuse the rest)
RECEIVE = {"veth": {"veth.peer": "xdp_drop"}, "tun": {"tun.peer": "fd", "mq.queues": 1}}


def _modelled(d, m, k):
    try:
        RunConfig(device=d, mode=m).replace(**{"workload.kind": k,
                                               **(RECEIVE.get(d, {}) if k != "txonly" else {})})
    except ValueError:
        return False
    return True


COMBOS = [(d.name, m, k) for d in DEVICES.values() for m in d.modes for k in d.workloads
          if _modelled(d.name, m, k)]


def _value(info):
    """A strategy for one field within its metadata (bounds, choices, powers of two)."""
    if info.choices:
        base = st.sampled_from(info.choices)
    elif info.base is bool:
        base = st.booleans()
    elif info.pow2:
        lo, hi = int(info.lo).bit_length() - 1, int(info.hi).bit_length() - 1
        base = st.integers(lo, hi).map(lambda e: 1 << e)
    elif info.base is int:
        lo, hi = int(info.lo), int(info.hi)
        # bounds and the default are where the edge cases live; the rest log-uniform
        span = st.integers(0, max(0, (hi - lo).bit_length())).flatmap(
            lambda b: st.integers(lo, min(hi, lo + (1 << b))))
        base = st.one_of(st.sampled_from(sorted({lo, hi, info.default})), span)
    elif info.base is float:
        lo, hi = float(info.lo), float(info.hi)
        vals = [lo, hi] + ([info.default] if info.default is not None else [])
        if lo > 0:
            body = st.floats(math.log(lo), math.log(hi)).map(
                lambda x: min(hi, max(lo, math.exp(x))))
        else:
            body = st.floats(lo, hi, allow_nan=False, allow_infinity=False)
        base = st.one_of(st.sampled_from(vals), body)
    else:
        raise AssertionError(f"no strategy for {info.path}")
    return st.one_of(st.none(), base) if info.optional else base


FIELD_VALUES = {info.path: _value(info) for cls in SECTIONS.values()
                for info in iter_fields(cls) if cls.SECTION != "faults"}  # see fault_groups
# the workload's own limits are drawn below
SHORT = {"workload.duration_s", "workload.warmup_s", "workload.packet_size", "workload.kind",
         "xsk.batch_size", "xsk.umem_frames"}


@st.composite
def fault_groups(draw):
    """Faults (issue #10) in windows that fit a short run: one dict per kind switched on."""
    groups = []
    for kind, length, period in faults.WINDOWS:
        if draw(st.booleans()):
            p = draw(st.integers(20, 400))
            g = {f"faults.{length}": float(draw(st.integers(1, p - 1))),
                 f"faults.{period}": float(p)}
            if kind == "spike":
                g["faults.spike_us"] = draw(st.floats(0.0, 50.0))
            if kind == "burst":
                g["faults.burst_factor"] = draw(st.floats(1.0, 20.0))
            groups.append(g)
    if draw(st.booleans()):
        groups.append({"faults.irq_lost_prob": draw(st.sampled_from([0.0, 0.01, 0.2, 1.0])),
                       "faults.irq_late_prob": draw(st.floats(0.0, 1.0)),
                       "faults.irq_late_us": draw(st.floats(0.0, 50.0))})
    return groups


@st.composite
def configs(draw, combos=tuple(COMBOS)):
    """Valid RunConfigs of the given (device, mode, workload kind) combinations."""
    device, mode, kind = draw(st.sampled_from(combos))
    values = {path: draw(strategy) for path, strategy in FIELD_VALUES.items()
              if path not in SHORT}
    x = lambda name: values[f"xsk.{name}"]  # noqa: E731
    room = x("frame_size") - x("headroom") - XDP_PACKET_HEADROOM
    values["workload.packet_size"] = draw(st.one_of(st.sampled_from([42, 64, room]),
                                                    st.integers(42, room)))
    values["xsk.batch_size"] = draw(st.integers(1, min(2048, x("tx_size"), x("fill_size"))))
    fill_exp = x("fill_size").bit_length() - 1
    values["xsk.umem_frames"] = 1 << draw(st.integers(max(6, fill_exp), min(18, fill_exp + 3)))
    values["workload.kind"] = kind
    if kind != "txonly":
        values.update(RECEIVE.get(device, {}))
    duration = draw(st.sampled_from([0.0005, 0.001, 0.002]))
    values["workload.duration_s"] = duration
    values["workload.warmup_s"] = draw(st.sampled_from([0.0, duration / 4, duration / 2]))
    groups = draw(fault_groups())  # before the check: what is drawn must not depend on it
    try:
        cfg = RunConfig(device=device, mode=mode).replace(**values)
    except ValueError:
        assume(False)
    for group in groups:
        try:  # a fault that cannot act on this device / workload is refused: leave it out
            cfg = cfg.replace(**group)
        except ValueError:
            pass
    return cfg


def check_run(cfg):
    """The properties of one run; returns the result."""
    res = run(cfg)
    inv = res.invariants
    assert inv["balanced"]
    n = cfg.mq.queues  # a UMEM per queue, or one split between the queues (mq.umem=shared)
    per_queue = cfg.xsk.umem_frames // n if cfg.mq.umem == "shared" else cfg.xsk.umem_frames
    assert sum(inv["frames"].values()) == inv["umem_frames"] == per_queue * n
    p = inv["packets"]
    assert p["offered"] == p["delivered"] + sum(p["dropped"].values()) + p["in_flight"]
    assert min(p["delivered"], p["in_flight"], *p["dropped"].values()) >= 0
    assert all(v >= 0 for v in res.totals.values())
    return res


@pytest.mark.parametrize("combo", COMBOS, ids="/".join)
@settings(max_examples=4, derandomize=True, deadline=None, database=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])
@given(data=st.data())
def test_random_valid_configs_run_and_balance(combo, data):
    cfg = data.draw(configs((combo,)))
    res = check_run(cfg)
    # determinism: the same config gives the same result, byte for byte
    again = run(RunConfig.from_json(cfg.to_json()))
    assert json.dumps(again.to_json(), sort_keys=True) == json.dumps(res.to_json(),
                                                                     sort_keys=True)


@pytest.mark.parametrize(("device", "mode"),
                         [(d, m) for d, modes in DEVICE_MODES.items() for m in modes])
def test_every_device_mode_default_balances(device, mode):
    check_run(RunConfig(device=device, mode=mode).replace(
        **{"workload.duration_s": 0.001, "workload.warmup_s": 0.0002}))
