"""The kernels run as plain Python (``NUMBA_DISABLE_JIT=1``), so a developer can step through
the model in a debugger, and give the same bytes as compiled: every device x mode x
workload, 0.1 ms each."""
import hashlib
import json
import os
import subprocess
import sys

from xskbench import RunConfig
from xskbench.devices import DEVICES
from xskbench.run import run

SCRIPT = """
import hashlib, json, sys
from xskbench import RunConfig
from xskbench.run import run
for d in json.loads(sys.argv[1]):
    print(hashlib.sha1(run(RunConfig.from_dict(d)).to_json_text().encode()).hexdigest())
"""


def _configs():
    for name, dev in DEVICES.items():
        for mode in dev.modes:
            for kind in dev.workloads:
                try:
                    yield RunConfig(device=name, mode=mode).replace(**{
                        "workload.kind": kind, "workload.duration_s": 0.0001,
                        "workload.warmup_s": 0.0})
                except ValueError:  # a workload this mode does not run
                    continue


def test_every_kernel_runs_as_plain_python_with_the_compiled_bytes():
    cfgs = list(_configs())
    assert len(cfgs) >= 20
    env = {**os.environ, "NUMBA_DISABLE_JIT": "1"}
    out = subprocess.run([sys.executable, "-c", SCRIPT,
                          json.dumps([c.to_dict() for c in cfgs])],
                         env=env, capture_output=True, text=True, timeout=600, check=True)
    plain = out.stdout.split()
    compiled = [hashlib.sha1(run(c).to_json_text().encode()).hexdigest() for c in cfgs]
    assert plain == compiled
