"""The engine loop in chunks (kernels/loop.py, run.simulate): stopping between two quanta and
resuming changes nothing, and a run whose quanta take no virtual time stops with a clear error
instead of hanging."""
import sys

import numpy as np
import pytest

from xskbench import RunConfig, costs, queues
from xskbench.devices import DEVICES
from xskbench.run import EventBudgetExceeded, run

run_module = sys.modules["xskbench.run"]  # the package exports run(), the function


@pytest.mark.parametrize("device", ["null", "virtio-net"])
def test_small_chunks_give_the_same_bytes(device, monkeypatch):
    cfg = RunConfig(device=device).replace(**{"workload.kind": "txonly" if device == "null"
                                              else "l2fwd", "mq.queues": 2,
                                              "workload.duration_s": 0.001,
                                              "workload.warmup_s": 0.0002})
    whole = run(cfg).to_json_text()
    monkeypatch.setattr(run_module, "CHUNK_EVENTS", 7)
    assert run(cfg).to_json_text() == whole


def test_quanta_that_take_no_time_hit_the_event_budget():
    cfg = RunConfig(device="null").replace(**{"workload.duration_s": 0.0005,
                                              "workload.warmup_s": 0.0})
    prof = costs.for_config(cfg)
    cc, cb = prof.arrays(1.0)
    free = np.zeros_like(cc), np.zeros_like(cb)  # every op costs nothing: time stands still
    with pytest.raises(EventBudgetExceeded, match="workload.duration_s=0.0005"):
        run_module.simulate(DEVICES["null"], queues.queue_configs(cfg), 3e9, *free)
