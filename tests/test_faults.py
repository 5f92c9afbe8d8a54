"""Fault injection (issue #10): every fault on every device it applies to keeps the books
balanced, raises the drop counter the kernel would, and reports recovery times; faults are
seeded (deterministic) and, when off, change nothing."""

import json

import numpy as np
import pytest

from xskbench import faults
from xskbench.config import RunConfig
from xskbench.machine import Context
from xskbench.run import run

SHORT = {"workload.duration_s": 0.006, "workload.warmup_s": 0.001}
SMALL_UMEM = {"xsk.fill_size": 256, "xsk.umem_frames": 1024}
STALL = {"faults.stall_us": 100.0, "faults.stall_period_us": 1500.0}
IRQ = {"faults.irq_lost_prob": 0.05, "faults.irq_late_prob": 0.2, "faults.irq_late_us": 10.0}
SPIKE = {"faults.spike_us": 30.0, "faults.spike_window_us": 200.0,
         "faults.spike_period_us": 1500.0}
FILL = {"faults.fill_stop_us": 200.0, "faults.fill_stop_period_us": 1500.0}
BURST = {"faults.burst_factor": 10.0, "faults.burst_us": 50.0, "faults.burst_period_us": 1500.0}


def _run(device, mode, **changes):
    res = run(RunConfig(device=device, mode=mode).replace(**SHORT, **changes))
    assert res.invariants["balanced"]
    return res


def _pps(res):
    return res.pps["rx"] + res.pps["tx"]


def _windows(res, kind):
    return [w for w in res.faults["windows"] if w["fault"] == kind]


# --- host stall: the device's host side descheduled ------------------------------------------

@pytest.mark.parametrize(("device", "mode", "extra"), [
    ("null", "zerocopy", {}),
    ("virtio-net", "zerocopy", {}),
    ("virtio-net", "pmd", {}),
    ("tun", "copy", {"faults.stall_us": 400.0}),
    ("veth", "copy", {"faults.stall_us": 300.0}),
    ("veth", "zerocopy", {"faults.stall_us": 300.0}),
])
def test_host_stall_lowers_the_rate_and_recovers(device, mode, extra):
    base = _run(device, mode)
    res = _run(device, mode, **{**STALL, **extra})
    assert _pps(res) < _pps(base)
    wins = _windows(res, "stall")
    assert len(wins) == 3 and all(w["end_us"] - w["start_us"] > 0 for w in wins)
    assert any(w["recovery_us"] is not None and w["recovery_us"] >= 0 for w in wins)
    assert res.to_json()["faults"]["windows"] == wins


def test_vhost_stall_fills_the_ptr_ring_and_tun_drops():
    res = _run("tun", "copy", **{**STALL, "faults.stall_us": 400.0})
    assert res.counters["tun_tx_dropped"] > 0


def test_any_context_can_be_descheduled_and_a_wrong_name_is_refused():
    base = _run("virtio-net", "zerocopy", **{"workload.kind": "rxdrop"})
    res = _run("virtio-net", "zerocopy", **{"workload.kind": "rxdrop", **STALL,
                                            "faults.stall_context": "napi_rx"})
    assert _pps(res) < _pps(base)
    # refused by the config, before any run, naming the contexts of this device and mode
    with pytest.raises(ValueError, match="faults.stall_context='bogus'.*'host', 'app'.*'guest'"):
        RunConfig(device="tun", mode="copy").replace(**STALL, **{"faults.stall_context": "bogus"})
    with pytest.raises(ValueError, match="stall_context='vhost'.*mode 'copy' has the contexts "
                                         "'host', 'app', 'peer'$"):
        RunConfig(device="tun", mode="copy").replace(**STALL, **{
            "tun.peer": "fd", "workload.kind": "rxdrop", "faults.stall_context": "vhost"})
    with pytest.raises(ValueError, match="stall_context='app'.*'pmd' has the contexts 'host', "
                                         "'pmd'$"):
        RunConfig(device="virtio-net", mode="pmd").replace(**STALL, **{
            "faults.stall_context": "app"})
    # a device whose record does not name its contexts: the run refuses it as it builds them
    cfg = RunConfig(device="null", mode="zerocopy").replace(**STALL, **{
        "faults.stall_context": "napi"})
    with pytest.raises(ValueError, match="stall_context='napi': device 'null' mode 'zerocopy' "
                                         "has the contexts 'host', 'app'$"):
        faults.install(np.zeros(4096, dtype=np.int64), 1024, cfg, [Context("app", 0)], 1e12)


# --- lost / late / spiked notifications --------------------------------------------------------

# paths whose notifications (interrupts, kicks, sk_data_ready) a fault can hit
NOTIFYING = [("null", "copy", {"workload.rate_pps": 1e6}),
             ("virtio-net", "zerocopy", {"workload.rate_pps": 1e6}),
             ("tun", "copy", {})]

@pytest.mark.parametrize(("device", "mode", "extra"), NOTIFYING)
def test_lost_and_late_notifications_are_recovered_by_later_ones(device, mode, extra):
    base = _run(device, mode, **extra)
    res = _run(device, mode, **extra, **IRQ)
    n = res.faults["notifications"]
    assert n["lost"] > 0 and n["late"] > 0
    assert _pps(res) > 0.9 * _pps(base)  # the next kick / signal / sk_data_ready recovers


def test_a_lost_kick_with_event_idx_is_not_recovered():
    """virtio pmd + vhost-net: the guest kicks only when it passes avail_event, which the
    sleeping worker never moves: one lost kick stops transmission (the books still hold)."""
    res = _run("virtio-net", "pmd", **{"virtio.host": "vhost-net", "faults.irq_lost_prob": 1.0})
    assert res.faults["notifications"]["lost"] > 0
    assert res.counters["tx_packets"] == 0 and res.counters["tx_errors"] > 0


@pytest.mark.parametrize(("device", "mode", "extra"), NOTIFYING)
def test_spike_windows_delay_notifications(device, mode, extra):
    base = _run(device, mode, **extra)
    res = _run(device, mode, **extra, **SPIKE)
    assert res.faults["notifications"]["spiked"] > 0
    assert res.latency_us["p99"] >= base.latency_us["p99"]
    assert len(_windows(res, "spike")) == 3


# --- fill-ring starvation -----------------------------------------------------------------------

@pytest.mark.parametrize(("device", "mode", "drop"), [
    ("null", "zerocopy", "rx_missed"),
    ("null", "copy", "rx_dropped"),
    ("virtio-net", "zerocopy", None),  # the host generates only into posted buffers
    ("virtio-net", "copy", "rx_dropped"),
])
def test_fill_starvation_empties_the_fill_ring(device, mode, drop):
    extra = {"workload.kind": "rxdrop", **SMALL_UMEM}
    if device == "null":
        extra.update({"workload.rate_pps": 5e6, "null.ring_size": 256})
    base = _run(device, mode, **extra)
    res = _run(device, mode, **extra, **FILL)
    assert res.counters["fill_ring_empty_descs"] > base.counters["fill_ring_empty_descs"]
    assert res.faults["fill_refills_skipped"] > 0
    if drop:
        assert res.counters[drop] > base.counters[drop]
    assert _pps(res) < _pps(base)
    assert any(w["recovery_us"] is not None for w in _windows(res, "fill_stop"))


# --- bursts above the offered rate ------------------------------------------------------------

@pytest.mark.parametrize(("device", "mode", "extra", "drop"), [
    ("null", "zerocopy", {"workload.kind": "rxdrop", "workload.rate_pps": 2e6,
                          "xsk.rx_size": 32, "null.ring_size": 64}, "rx_ring_full"),
    ("tun", "copy", {"workload.rate_pps": 1e6, "tun.tx_queue_len": 16}, "tun_tx_dropped"),
    ("veth", "copy", {"workload.rate_pps": 3e5, "veth.ptr_ring_size": 16},
     "veth_xdp_ring_full"),
    ("veth", "udp", {"workload.rate_pps": 3e5}, None),
    ("virtio-net", "zerocopy", {"workload.rate_pps": 1e6}, None),
])
def test_bursts_offer_more_and_fill_rings(device, mode, extra, drop):
    base = _run(device, mode, **extra)
    res = _run(device, mode, **extra, **BURST)
    assert res.counters["offered_packets"] > base.counters["offered_packets"]
    if drop:
        assert res.counters[drop] > base.counters[drop]
    assert len(_windows(res, "burst")) == 3


def test_offered_clock_inverts():
    """The pacers' clock (faster inside burst windows) and its inverse agree."""
    from xskbench.kernels import faults as kf
    from xskbench.kernels.layout import H_FAULT, HDR

    m = np.zeros(HDR + kf.F_TS, dtype=np.int64)
    m[H_FAULT] = f = HDR
    m[f + kf.F_BURST_X], m[f + kf.F_BURST_LEN], m[f + kf.F_BURST_PER] = 4_000_000, 50, 1000
    for t in (0, 999, 1000, 1010, 1049, 1050, 1500, 2025, 7777):
        u = kf.offered_clock(m, t)
        assert kf.offered_time(m, u) <= t and kf.offered_clock(m, kf.offered_time(m, u)) >= u
    assert kf.offered_clock(m, 1050) == 1050 + 4 * 50  # 5x inside the window
    assert kf.offered_clock(m, 2100) == 2100 + 4 * 100


# --- recovery times, determinism, defaults ------------------------------------------------------

def test_recovery_time_from_a_synthetic_series():
    t = np.arange(0, 1000, 10.0)
    rate = np.where((t >= 300) & (t < 400), 0.0, 100.0)  # packets per µs, stalled 300-400
    rate[(t >= 400) & (t < 450)] = 50.0  # slow start: back to full at 450
    d = np.concatenate([[0.0], np.cumsum(rate[:-1] * 10)])
    pre, rec = faults.recovery(t, d, 300, 400, 2000, 100)
    assert pre == pytest.approx(100.0) and rec == pytest.approx(50.0)
    slow = np.concatenate([[0.0], np.cumsum(np.where(t >= 400, 50.0, rate)[:-1] * 10)])
    assert faults.recovery(t, slow, 300, 400, 2000, 100)[1] is None  # never back


def test_same_seed_same_json_with_faults_on():
    cfg = RunConfig(device="tun", mode="copy").replace(**SHORT, **IRQ, **STALL)
    a, b = run(cfg).to_json_text(), run(RunConfig.from_json(cfg.to_json())).to_json_text()
    assert a == b
    other = run(cfg.replace(**{"workload.seed": 7})).to_json()
    assert other["faults"]["notifications"] != json.loads(a)["faults"]["notifications"]


@pytest.mark.parametrize(("device", "mode"), [("null", "zerocopy"), ("virtio-net", "copy"),
                                              ("tun", "zerocopy"), ("veth", "copy")])
def test_defaults_change_nothing(device, mode):
    plain = run(RunConfig(device=device, mode=mode).replace(**SHORT)).to_json()
    inert = {"faults.stall_context": "app", "faults.stall_period_us": 500.0,
             "faults.irq_late_us": 5.0, "faults.spike_period_us": 100.0,
             "faults.burst_us": 10.0, "faults.burst_period_us": 100.0}
    other = run(RunConfig(device=device, mode=mode).replace(**SHORT, **inert)).to_json()
    assert "faults" not in plain and "faults" not in other
    plain.pop("config"), other.pop("config")
    assert plain == other


def test_the_text_report_shows_the_faults():
    res = _run("virtio-net", "zerocopy", **STALL)
    text = res.report()
    assert " faults: stall" in text and "recovery median" in text
    assert all(len(line) <= 72 for line in text.splitlines())
