"""Fast-forward (the idle-spin replay, kernels/engine.spin_until) must only save emulation
time: with it on and off, every device and mode should give byte-identical results, books,
counters, latency and time series included.

Known not exact yet (issue #17, marked xfail strict: the test fails once they become exact,
so the mark must then go): the application replays of null and veth (zero
copy) skip a poll that, quantum by quantum, would already see work (H_PROGRESS moves one
quantum earlier), so idle-poll cycles differ and, with receive workloads, counters by a few
packets in a thousand. virtio-net and the copy / UDP paths replay nothing: they are exact.
"""
import pytest

from xskbench import RunConfig
from xskbench.devices import DEVICES
from xskbench.run import run

NOT_EXACT_YET = {("null", "zerocopy", "txonly"), ("null", "zerocopy", "rxdrop"),
                 ("null", "zerocopy", "l2fwd"), ("null", "copy", "l2fwd"),
                 ("veth", "zerocopy", "txonly")}
CASES = [pytest.param(name, mode, kind, marks=pytest.mark.xfail(
             strict=True, reason="idle-spin replay not exact yet (module docstring)"))
         if (name, mode, kind) in NOT_EXACT_YET else (name, mode, kind)
         for name, dev in DEVICES.items() if dev.package.startswith("xskbench.")
         for mode in dev.modes for kind in dev.workloads
         if not (name == "tun" and mode == "zerocopy" and kind != "txonly")]
#: settings a device's receive workloads need (tun: a process on the tap fd, copy mode)
RECEIVE = {"tun": {"tun.peer": "fd"}}


def _same(cfg):
    return run(cfg).to_json_text() == run(cfg, fast_forward=False).to_json_text()


@pytest.mark.parametrize(("device", "mode", "kind"), CASES)
def test_fast_forward_on_and_off_give_the_same_bytes(device, mode, kind):
    extra = RECEIVE.get(device, {}) if kind != "txonly" else {}
    assert _same(RunConfig(device=device, mode=mode).replace(**{
        "workload.kind": kind, "workload.duration_s": 0.003, "workload.warmup_s": 0.0005,
        **extra}))


def test_fast_forward_is_exact_with_two_queues_and_faults():
    assert _same(RunConfig(device="null", mode="copy").replace(**{
        "mq.queues": 2, "faults.irq_lost_prob": 0.01, "faults.irq_late_prob": 0.1,
        "faults.irq_late_us": 5.0,
        "workload.duration_s": 0.003, "workload.warmup_s": 0.0005}))
