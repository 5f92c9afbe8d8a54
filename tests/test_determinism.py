"""A run is a pure function of its config: the same config and seed give byte-identical JSON
in separate processes (and in this one); other seeds are valid runs too."""
import json
import subprocess
import sys
from pathlib import Path

import pytest

from xskbench import RunConfig, run

REPO = Path(__file__).resolve().parent.parent

# (CLI options, the same as RunConfig.replace changes)
CASES = [
    (["--mode", "zerocopy", "--workload", "l2fwd", "--duration", "0.002",
      "--set", "xsk.fill_size=64", "xsk.batch_size=32"],
     {"mode": "zerocopy", "workload.kind": "l2fwd", "workload.duration_s": 0.002,
      "xsk.fill_size": 64, "xsk.batch_size": 32}),
    (["--mode", "copy", "--workload", "rxdrop", "--duration", "0.002", "--rate", "2e6",
      "--seed", "5"],
     {"mode": "copy", "workload.kind": "rxdrop", "workload.duration_s": 0.002,
      "workload.rate_pps": 2e6, "workload.seed": 5}),
]


def canonical(doc):
    return json.dumps(doc, sort_keys=True)


@pytest.fixture(scope="module", autouse=True)
def _warm_numba_cache():
    """Compile (or load) the kernels here first: the subprocesses then load numba's on-disk
    cache instead of each compiling for half a minute."""
    run(RunConfig(device="null").replace(**{"workload.duration_s": 0.0005,
                                            "workload.warmup_s": 0.0}))


def _spawn(options):
    return subprocess.Popen(
        [sys.executable, "-m", "xskbench", "run", "--device", "null", *options, "--json"],
        cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def test_same_config_same_bytes_in_separate_processes():
    """The first case runs in two subprocesses (byte-identical output), every case also
    in this process (identical JSON)."""
    procs = [_spawn(CASES[0][0]), _spawn(CASES[0][0])] + [_spawn(o) for o, _ in CASES[1:]]
    outs = []
    for p in procs:  # all started at once
        out, err = p.communicate(timeout=300)
        assert p.returncode == 0, err
        outs.append(out)
    assert outs[0] == outs[1]  # byte for byte
    for out, (_, changes) in zip(outs[1:], CASES, strict=True):
        doc = json.loads(out)
        cfg = RunConfig(device="null").replace(**changes)
        assert doc["config"] == cfg.to_dict()
        assert doc["invariants"]["balanced"] is True
        assert canonical(run(cfg).to_json()) == canonical(doc)


@pytest.mark.parametrize("kind", ("txonly", "l2fwd"))
def test_same_config_same_bytes_in_process(kind):
    cfg = RunConfig(device="null", mode="copy").replace(**{
        "workload.kind": kind, "workload.duration_s": 0.002, "workload.warmup_s": 0.0005})
    assert canonical(run(cfg).to_json()) == canonical(run(cfg).to_json())


@pytest.mark.parametrize("seed", (0, 3, 6, 7, 2**32 - 1))
@pytest.mark.parametrize("mode", ("zerocopy", "copy"))
def test_other_seeds_are_valid_runs(mode, seed):
    cfg = RunConfig(device="null", mode=mode).replace(**{
        "workload.kind": "l2fwd", "workload.duration_s": 0.002, "workload.warmup_s": 0.0005,
        "workload.seed": seed})
    doc = json.loads(canonical(run(cfg).to_json()))
    assert doc["seed"] == seed and doc["config"]["workload"]["seed"] == seed
    inv = doc["invariants"]
    assert inv["balanced"] is True
    assert sum(inv["frames"].values()) == inv["umem_frames"] == cfg.xsk.umem_frames
    p = inv["packets"]
    assert p["offered"] == p["delivered"] + sum(p["dropped"].values()) + p["in_flight"]
    assert doc["pps"]["rx"] > 0 and doc["pps"]["tx"] > 0
