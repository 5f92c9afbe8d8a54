"""A new device is one folder: tests/toydev (record, section, setup, kernel), registered from
outside the package with ``XSKBENCH_DEVICES=toydev``. Every layer picks it up from the record
alone - RunConfig and its checks, the CLI, multi-queue plans, faults, sweeps, the Explorer and
the property tests - with no edit anywhere else (README "Add a device").

Also here: every registered device's setup builds its contexts in the order its kernel
declares (``CONTEXTS``: the context ids), and the kernel's enums match the config's names.
"""
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from xskbench import costs
from xskbench.config import RunConfig
from xskbench.devices import DEVICES, WORKLOADS, declared_contexts
from xskbench.fields import field_info
from xskbench.sections import section_class

REPO = Path(__file__).resolve().parent.parent
ENV = {**os.environ, "PYTHONPATH": os.pathsep.join([str(REPO), str(REPO / "tests")]),
       "XSKBENCH_DEVICES": "toydev"}
SHORT = ["--duration", "0.002", "--set", "workload.warmup_s=0.0005"]

# Run with the toy registered; prints one JSON object of what each layer made of it.
LAYERS = r'''
import contextlib, io, json
from xskbench import queues
from xskbench.config import DEVICE_MODES, RunConfig
from xskbench.devices import DEVICES
from xskbench.run import run
from xskbench.sections import SECTIONS
from xskbench.sweep import sweep
from xskbench.widgets import Explorer
import test_properties

out = {}
short = {"workload.duration_s": 0.003, "workload.warmup_s": 0.0005}
cfg = RunConfig(device="toy").replace(**short)
out["registry"] = list(DEVICES)
out["sections"] = list(SECTIONS)
out["modes"] = list(DEVICE_MODES["toy"])
out["toy_section"] = cfg.to_dict()["toy"]
refused = {}
for changes in ({"mode": "copy"}, {"workload.kind": "rxdrop"}, {"toy.napi_budget": 0}):
    try:
        RunConfig(device="toy").replace(**changes)
    except ValueError as err:
        refused[json.dumps(changes)] = str(err)
out["refused"] = refused

def summary(res):
    return {"tx_pps": res.pps["tx"], "balanced": res.invariants["balanced"],
            "labels": list(res.labels)}

out["single"] = summary(run(cfg))
mq = cfg.replace(**{"mq.queues": 2})
out["mq_plan"] = [q.to_dict()["toy"] for q in queues.queue_configs(mq)]
out["mq"] = summary(run(mq))
stall = run(cfg.replace(**{"faults.stall_us": 100.0, "faults.stall_period_us": 900.0}))
out["stall"] = summary(stall) | {"windows": stall.faults["windows"]}
df = sweep(cfg, {"toy.napi_budget": [16, 64]}, scheduler="serial", cache=False,
           progress=False)
out["sweep"] = {"points": sorted(df["toy.napi_budget"].unique().tolist()),
                "errors": int(df["error"].notna().sum()), "device": sorted(set(df["device"]))}
ex = Explorer()
out["explorer_devices"] = list(ex.controls["device"].value_widget.options)
ex.set(device="toy")
out["explorer"] = {"modes": list(ex.controls["mode"].value_widget.options),
                   "error": ex.error, "device": ex.result.config.device,
                   "controls": sorted(k for k in ex.controls if k.startswith("toy."))}
out["combos"] = [list(c) for c in test_properties.COMBOS if c[0] == "toy"]
print(json.dumps(out))
'''


def _run(argv, **kw):
    proc = subprocess.run(argv, cwd=REPO, env=ENV, capture_output=True, text=True,
                          timeout=900, **kw)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return proc.stdout


@pytest.fixture(scope="module")
def layers():
    return json.loads(_run([sys.executable, "-c", LAYERS]).splitlines()[-1])


def test_config_fields_and_checks_come_from_the_record(layers):
    assert layers["registry"][-1] == "toy" and "toy" in layers["sections"]
    assert layers["modes"] == ["zerocopy"]
    assert layers["toy_section"] == {"app_cpu": 0, "napi_cpu": 1, "napi_budget": 64,
                                     "irq_delay_ns": 1000.0}
    refused = layers["refused"]
    assert refused['{"mode": "copy"}'] == "mode='copy': device 'toy' supports 'zerocopy'"
    assert refused['{"workload.kind": "rxdrop"}'] == (
        "workload.kind='rxdrop': device 'toy' models 'txonly' "
        "(a loopback NIC that only transmits)")
    assert refused['{"toy.napi_budget": 0}'].startswith("toy.napi_budget=0")


def test_runs_balance_single_and_multi_queue(layers):
    single = layers["single"]
    assert single["balanced"] and single["tx_pps"] > 0
    assert single["labels"][:2] == ["app", "napi"]
    # mq.queues=2, pinning spread: each queue's CPUs one stride apart
    assert [(q["app_cpu"], q["napi_cpu"]) for q in layers["mq_plan"]] == [(0, 1), (2, 3)]
    mq = layers["mq"]
    assert mq["balanced"] and mq["tx_pps"] > 0
    assert {"q0/app", "q0/napi", "q1/app", "q1/napi"} <= set(mq["labels"])


def test_a_stall_of_the_host_context_hits_the_toys_napi(layers):
    stall = layers["stall"]
    assert stall["balanced"] and stall["tx_pps"] < layers["single"]["tx_pps"]
    # windows at k·900 us, k = 1, 2, 3, inside the 3 ms run
    assert [(w["fault"], w["start_us"]) for w in stall["windows"]] == [
        ("stall", 900.0), ("stall", 1800.0), ("stall", 2700.0)]


def test_sweep_explorer_and_property_combos_list_the_toy(layers):
    assert layers["sweep"] == {"points": [16, 64], "errors": 0, "device": ["toy"]}
    assert layers["explorer_devices"][-1] == "toy"
    assert layers["explorer"] == {"modes": ["zerocopy"], "error": "", "device": "toy",
                                  "controls": ["toy.app_cpu", "toy.irq_delay_ns",
                                               "toy.napi_budget", "toy.napi_cpu"]}
    assert layers["combos"] == [["toy", "zerocopy", "txonly"]]


def test_the_property_tests_run_the_toy():
    out = _run([sys.executable, "-m", "pytest", "-o", "addopts=", "-p", "no:cacheprovider", "-v",
                "-n", "0", "-k", "toy", "tests/test_properties.py"])
    # random valid configs, and the default config, of the toy's one combo balance
    passed = sorted(line.split("::")[1].split(" ")[0] for line in out.splitlines()
                    if " PASSED" in line)
    assert passed == ["test_every_device_mode_default_balances[toy-zerocopy]",
                      "test_random_valid_configs_run_and_balance[toy/zerocopy/txonly]"]


def test_the_cli_lists_and_runs_the_toy():
    fields = _run([sys.executable, "-m", "xskbench", "fields", "--section", "toy"])
    assert [line.split()[0] for line in fields.splitlines()[1:]] == [
        "toy.app_cpu", "toy.napi_cpu", "toy.napi_budget", "toy.irq_delay_ns"]
    doc = json.loads(_run([sys.executable, "-m", "xskbench", "run", "--device", "toy",
                           *SHORT, "--json"]))
    assert doc["config"]["device"] == "toy" and doc["invariants"]["balanced"]
    assert doc["pps"]["tx"] > 0 and doc["counters"]["tx_packets"] > 0


def test_a_missing_module_or_one_without_device_is_one_clear_error():
    for spec, words in (("no_such_toydev", "cannot import 'no_such_toydev'"),
                        ("toydev.section", "module 'toydev.section' has no DEVICE")):
        proc = subprocess.run([sys.executable, "-c", "import xskbench"], cwd=REPO,
                              env={**ENV, "XSKBENCH_DEVICES": spec}, capture_output=True,
                              text=True, timeout=300)
        assert proc.returncode != 0
        assert f"XSKBENCH_DEVICES={spec!r}: {words}" in proc.stderr.splitlines()[-1]


# --- every registered device: contexts and enums as the kernel declares them --------------

@pytest.mark.parametrize(("device", "mode"),
                         [(d.name, m) for d in DEVICES.values() for m in d.modes])
def test_setup_builds_the_contexts_in_the_kernels_order(device, mode):
    dev = DEVICES[device]
    kind = dev.workloads[0]
    cfg = RunConfig(device=device, mode=mode).replace(**{"workload.kind": kind})
    prof = costs.for_config(cfg)
    cc, cb = prof.arrays(1.0)
    mach = dev.impl.setup(cfg, prof.cpu_ghz * 1e9, cc, cb)
    assert tuple(c.name for c in mach.contexts) == declared_contexts(dev.kernel, mode)
    # the record names them without building a run (faults.stall_context's config check)
    assert dev.contexts is None or dev.contexts(cfg) == declared_contexts(dev.kernel, mode)
    if device == "tun" and mode == "copy":  # a process on the tap fd instead of vhost
        fd = cfg.replace(**{"tun.peer": "fd"})
        mach = dev.impl.setup(fd, prof.cpu_ghz * 1e9, cc, cb)
        assert tuple(c.name for c in mach.contexts) == dev.contexts(fd) == ("app", "peer")


def test_the_workloads_are_numbered_as_the_config_names_them():
    # the kernels' H_WORKLOAD numbering (kernels/layout.py) and workload.kind's choices
    assert field_info(section_class("workload"), "kind").choices == WORKLOADS
    assert all(set(d.workloads) <= set(WORKLOADS) for d in DEVICES.values())


@pytest.mark.parametrize("device", list(DEVICES))
def test_the_kernels_enums_are_the_configs_names(device):
    dev = DEVICES[device]
    kernel = dev.kernel
    if hasattr(kernel, "MODES"):  # a kernel that branches on the mode numbers it like this
        assert sorted(kernel.MODES) == sorted(dev.modes)
    # a section field whose value the kernel reads as a number: ENUM tuple <-> its choices
    for field, enum in getattr(kernel, "FIELD_ENUMS", {}).items():
        assert sorted(field_info(dev.section, field).choices) == sorted(enum)
