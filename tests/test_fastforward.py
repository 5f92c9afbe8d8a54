"""Fast-forward (the idle-spin replay, kernels/engine.spin_until) only saves emulation time:
with it on and off, every device and mode gives byte-identical results, books, counters,
latency and time series included, warm-up and end of the run where they cut a spin."""
import pytest

from xskbench import RunConfig
from xskbench.devices import DEVICES
from xskbench.run import run

CASES = [(name, mode, kind) for name, dev in DEVICES.items() if dev.package.startswith("xskbench.")
         for mode in dev.modes for kind in dev.workloads]


@pytest.mark.parametrize(("device", "mode", "kind"), CASES)
def test_fast_forward_on_and_off_give_the_same_bytes(device, mode, kind):
    cfg = RunConfig(device=device, mode=mode).replace(**{
        "workload.kind": kind, "workload.duration_s": 0.0012, "workload.warmup_s": 0.0003})
    on, off = run(cfg).to_json_text(), run(cfg, fast_forward=False).to_json_text()
    assert on == off


def test_fast_forward_is_exact_with_two_queues_and_a_paced_rate():
    cfg = RunConfig(device="null").replace(**{
        "workload.kind": "rxdrop", "workload.rate_pps": 4e6, "mq.queues": 2,
        "workload.duration_s": 0.0012, "workload.warmup_s": 0.0003})
    assert run(cfg).to_json_text() == run(cfg, fast_forward=False).to_json_text()
