"""A cost profile for this machine, fitted to the stored real measurements."""
import json

import numpy as np
import pytest

from xskbench import costs, real_calibrate
from xskbench.cli import main
from xskbench.paths import COSTS_DIR, DATA_DIR

STORED = DATA_DIR / "measurements" / "veth_copy_rxdrop_2026-12-02.json"


@pytest.fixture(scope="module")
def fit():
    return real_calibrate.fit(STORED, cpu_ghz=2.6)


def test_every_measured_configuration_is_a_row_or_says_why_not():
    doc = real_calibrate.load(STORED)
    rows, skipped = real_calibrate.rows(doc, 2.6)
    assert len(rows) + len(skipped) == len(doc["points"])
    assert len({json.dumps(r["config"], sort_keys=True) for r in rows}) == len(rows)
    assert any("wait=poll" in why for _, why in skipped)  # no emulated poll() loop
    for r in rows:
        assert r["config"]["device"] == "veth" and r["config"]["mode"] == "copy"
        assert r["config"]["veth"]["peer"] == "xdp_drop"
        assert r["config"]["workload"]["kind"] == "rxdrop"
        assert r["metric"] == "pps" and r["context"] == "cpu0"  # the peer's CPU
        assert 90 <= float(r["util"]) <= 100


def test_the_fit_gives_finite_positive_costs_and_residuals(fit):
    call, byte = np.asarray(fit["call"]), np.asarray(fit["byte"])
    assert np.all(np.isfinite(call)) and np.all(np.isfinite(byte))
    assert np.all(call >= 0) and np.all(byte >= 0)
    priors = fit["priors"]
    names = list(priors)
    # every op with a prior keeps a positive cost; the fit moved some of them
    assert all(call[i] > 0 for i, o in enumerate(names) if priors[o][0] > 0)
    assert any(abs(call[i] - priors[o][0]) > 1 for i, o in enumerate(names))
    res = fit["residuals"]
    assert [r["id"] for r in res] == [r["id"] for r in fit["rows"]]
    assert all(np.isfinite(r["error"]) and r["emulated"] > 0 for r in res)
    assert sum(r["within"] for r in res) >= len(res) - 2
    text = real_calibrate.render(fit)
    assert "measured" in text and "not fitted: wait=poll" in text


def test_cli_prints_and_writes_nothing_without_write(tmp_path, monkeypatch, capsys):
    monkeypatch.setattr(costs, "COSTS_DIR", tmp_path)
    before = sorted(p.name for p in COSTS_DIR.glob("*.json"))
    status = main(["calibrate", "--from-measurements", str(STORED), "--cpu-ghz", "2.6"])
    out, _ = capsys.readouterr()
    assert status == 0
    assert "error" in out and "veth_copy_rxdrop_2026-12-02:batch=16" in out
    assert not list(tmp_path.iterdir())
    assert sorted(p.name for p in COSTS_DIR.glob("*.json")) == before


def test_cli_write_gives_a_loadable_profile(tmp_path, monkeypatch, capsys):
    monkeypatch.setattr(costs, "COSTS_DIR", tmp_path)
    status = main(["calibrate", "--from-measurements", str(STORED), "--cpu-ghz", "2.6",
                   "--testbed", "bench-box", "--write"])
    out, _ = capsys.readouterr()
    assert status == 0 and "wrote" in out
    assert [p.name for p in tmp_path.iterdir()] == ["bench-box.json"]
    prof = costs.load("bench-box")
    assert prof.cpu_ghz == 2.6
    doc = prof.meta
    assert doc["inputs_hash"] == costs.inputs_hash(doc)
    assert doc["fit_rows"] and len(doc["residuals"]) == len(doc["fit_rows"])
    assert all(v >= 0 for v in prof.call.values()) and prof.call["bpf_prog_run_xdp"] > 0


def test_cli_refuses_a_published_testbed_and_stray_options(capsys):
    assert main(["calibrate", "--from-measurements", str(STORED), "--testbed", "veth-rfc",
                 "--write"]) == 2
    assert "published testbed" in capsys.readouterr().err
    assert main(["calibrate", "--write"]) == 2
    assert "only with --from-measurements" in capsys.readouterr().err
