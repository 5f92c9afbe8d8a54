"""Every knob of ``xskbench fields`` changes the result of a device's reference scenario, or
is declared inert there, with the reason, in data/inert_knobs.yaml (and then really changes
nothing: a stale declaration fails too).

One short run per knob (2 ms emulated) beside one base run per device and base setting. A
knob is changed from the scenario's value to another valid one; knobs that act only together
with another (a fault period with its length, a queue layout with several queues) get that
other one in the base run too (``BASES``).
"""
from functools import cache

import numpy as np
import pytest
import yaml

from xskbench import calibrate
from xskbench.devices import DEVICES
from xskbench.fields import iter_fields
from xskbench.paths import DATA_DIR
from xskbench.run import run
from xskbench.sections import SECTIONS

#: device -> its reference scenario (benchmarks/long_run.py), first in the order knobs of
#: the core sections are tried
REFERENCE = {"null": "null-rxdrop-zc-1core", "tun": "tun-ovs-zc1", "veth": "veth-rfc-zc",
             "virtio-net": "virtio-zc-l2fwd"}
SHORT = (("workload.duration_s", 0.002), ("workload.warmup_s", 0.0005))
INERT = yaml.safe_load((DATA_DIR / "inert_knobs.yaml").read_text()) or {}

# fault groups: the knob that switches the fault on, then the others it needs
_FAULTS = (
    ("faults.stall_us", {"faults.stall_us": 20.0, "faults.stall_period_us": 200.0,
                         "faults.stall_context": "host"}),
    ("faults.spike_us", {"faults.spike_us": 5.0, "faults.spike_window_us": 20.0,
                         "faults.spike_period_us": 200.0}),
    ("faults.burst_factor", {"faults.burst_factor": 4.0, "faults.burst_us": 20.0,
                             "faults.burst_period_us": 200.0}),
    ("faults.fill_stop_us", {"faults.fill_stop_us": 20.0, "faults.fill_stop_period_us": 200.0}),
    ("faults.irq_late_prob", {"faults.irq_late_prob": 0.5, "faults.irq_late_us": 5.0}),
)
_MQ = {"mq.queues": 2}
_TAP_RX = {"mode": "copy", "tun.peer": "fd", "workload.kind": "rxdrop", "workload.rate_pps": None}
_FIRST = {"faults.spike_us": ("tun",), "faults.burst_factor": ("tun",),
          "faults.irq_late_prob": ("tun",), "faults.stall_us": ("tun",)}


def _fault_bases():
    for switch, group in _FAULTS:
        first = _FIRST.get(switch, ())
        yield switch, ({k: v for k, v in group.items() if k != switch}, group[switch], first)
        for path, on in group.items():
            if path != switch:  # the fault on; the knob changed from its working value
                yield path, (group, "app" if path.endswith("context") else 2 * on, first)


#: knob -> (settings it needs to act, the value it is changed to or None, devices to try
#: first); without an entry: the scenario as it is, another valid value, every device
BASES = {
    **dict(_fault_bases()),
    "mq.queues": ({}, 2, ("tun",)),
    "mq.pinning": (_MQ, None, ("tun",)),
    "mq.host": (_MQ, None, ("tun",)),
    "mq.umem": ({**_MQ, "tun.zc_version": 2}, "shared-pool", ("tun",)),
    "mq.skew": (_MQ, 0.5, ("tun",)),
    "workload.rate_pps": ({}, 100_000.0, ()),
    "testbed.llc_mb": ({}, 1.0, ("tun",)),
    "xsk.comp_size": ({}, 64, ()),
    "xsk.tx_size": ({}, 64, ()),
    "xsk.umem_frames": ({}, 2048, ()),
    "xsk.tx_full": ({"xsk.tx_size": 64}, None, ("virtio-net",)),
    "null.irq_delay_ns": ({"null.line_rate_pps": 1e6}, None, ()),
    "virtio.desc_cache_threshold": ({"virtio.desc_cache": True}, 1, ()),
    "virtio.exit_delay_ns": ({"virtio.host": "vhost-net", "workload.kind": "txonly",
                              "workload.rate_pps": 1e6}, None, ()),
    "tun.tx_queue_len": ({"mode": "copy", "workload.rate_pps": None}, 32, ()),
    "tun.vhost_batch": ({"tun.zc_version": 2, "workload.rate_pps": None}, 16, ()),
    "tun.weight_pkts": ({}, 4, ()),
    "tun.weight_bytes": ({}, 4096, ()),
    "tun.guest_burst": ({"tun.guest": "pmd", "workload.rate_pps": None}, 4, ()),
    "tun.guest_ring": ({"workload.rate_pps": None}, 16, ()),
    "tun.guest_budget": ({}, 1, ()),
    "tun.vhost_stall_us": ({}, 1000.0, ()),
    "tun.peer": ({"mode": "copy"}, "fd", ()),
    "tun.napi_cpu": ({"mode": "copy", "tun.peer": "fd"}, None, ()),
    "tun.xdp_mode": (_TAP_RX, None, ()),
    "tun.fd_batch": (_TAP_RX, 16, ()),
    "veth.ptr_ring_size": ({"mode": "copy"}, 16, ()),
    "veth.peer": ({"mode": "copy"}, "xdp_drop", ()),
    "veth.xdp_mode": ({"mode": "copy", "veth.peer": "xdp_drop", "workload.kind": "rxdrop"},
                      "skb", ()),
    "veth.batch_max_segs": ({"veth.batch": True}, 8, ()),
    "veth.csum_offload": ({"veth.batch": True}, None, ()),
    "veth.nic_uso": ({"veth.batch": True}, None, ()),
    "veth.backlog_size": ({"mode": "udp"}, 10, ()),
    # busy poll: the app drives the null NIC's NAPI (veth's RFC zero copy refuses it)
    # (below line rate, so that NAPI completes and interrupts have something to defer)
    "xsk.busy_poll": ({"workload.rate_pps": 5e6}, True, ("null",)),
    "xsk.busy_budget": ({"xsk.busy_poll": True, "workload.rate_pps": 10e6}, 4, ("null",)),
    "xsk.napi_defer_hard_irqs": ({"xsk.busy_poll": True, "workload.rate_pps": 5e6}, 0,
                                 ("null",)),
    "xsk.tx_csum": ({}, "app", ("tun",)),
    "null.link_gbps": ({}, 10.0, ()),
    "null.line_rate_pps": ({}, 1e6, ()),  # 64 B at 100 Gbit/s: the bit rate binds above
    "virtio.csum": ({"mode": "copy", "workload.kind": "txonly", "xsk.tx_csum": "offload"},
                    None, ()),
    "virtio.vhost_busyloop_us": ({"virtio.host": "vhost-net", "workload.kind": "txonly"},
                                 50.0, ()),
}


def _other(info, value):
    """A valid value other than ``value`` for the knob."""
    if info.base is bool:
        return not value
    if info.choices:
        return next(c for c in info.choices if c != value)
    if value is None:
        return 2.0 if info.base is float else 2
    if info.name.endswith("_cpu"):
        return value + 4
    for new in (value * 2, value // 2 if info.base is int else value / 2, value + 1):
        new = info.base(new)
        if new != value and (info.hi is None or new <= info.hi) and (
                info.lo is None or new >= info.lo):
            return new
    raise AssertionError(f"no other value for {info.path}")


def _knobs():
    """(path, FieldInfo, devices it applies to) for every field of every section."""
    device_of = {d.section_name: name for name, d in DEVICES.items()}
    for section, cls in SECTIONS.items():
        for info in iter_fields(cls):
            if section in device_of:
                yield info.path, info, [device_of[section]]
            else:
                yield info.path, info, list(REFERENCE)


KNOBS = {path: (info, devices) for path, info, devices in _knobs()}


@cache
def _result(device, settings):
    cfg = calibrate.scenario_config(REFERENCE[device]).replace(**dict(SHORT + settings))
    res = run(cfg)
    assert res.invariants["balanced"]
    return res


def _fingerprint(res):
    """What a run reports: CPUs, cycles and ops per context, counters, latency, fault log."""
    return (res.labels, res.label_cpu, tuple(np.asarray(res.busy).tolist()),
            tuple(np.asarray(res.op_calls).ravel().tolist()), tuple(sorted(res.totals.items())),
            tuple(np.asarray(res.latency_hist).tolist()), repr(sorted(res.extra.items())))


def test_inert_table_names_real_knobs_and_devices():
    for path, where in INERT.items():
        assert path in KNOBS, f"data/inert_knobs.yaml: no knob {path}"
        assert isinstance(where, dict) and where, path
        for device, why in where.items():
            assert device == "*" or device in KNOBS[path][1], (path, device)
            assert isinstance(why, str) and len(why) > 10, (path, device)


def _value(ref, path):
    current = ref.config
    for part in path.split("."):
        current = getattr(current, part)
    return current


@pytest.mark.parametrize("path", list(KNOBS))
def test_knob_changes_a_reference_result_or_is_declared_inert(path):
    """Tried on the devices it applies to (preferred first) until one result changes."""
    info, devices = KNOBS[path]
    base, value, first = BASES.get(path, ({}, None, ()))
    settings = tuple(sorted(base.items()))
    tried = []
    for device in [d for d in first if d in devices] + [d for d in devices if d not in first]:
        ref = _result(device, settings)
        current = _value(ref, path)
        new = value if value is not None and value != current else _other(info, current)
        try:
            changed = _result(device, tuple(sorted({**base, path: new}.items())))
        except ValueError:  # the device refuses the value: a config error, not a result
            tried.append(f"{device}: {new!r} refused")
            continue
        if _fingerprint(changed) != _fingerprint(ref):
            assert path not in INERT, (f"{path} is declared inert in data/inert_knobs.yaml, "
                                       f"but {current!r} -> {new!r} changes {device}'s "
                                       "reference result: remove the declaration")
            return
        tried.append(f"{device}: {current!r} -> {new!r}")
    declared = INERT.get(path, {})
    assert "*" in declared or set(devices) <= set(declared), (
        f"{path} changes no reference result ({'; '.join(tried)}): declare it in "
        "data/inert_knobs.yaml with why")
