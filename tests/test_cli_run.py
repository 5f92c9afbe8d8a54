"""``xskbench run`` end to end: JSON, the text reports, options reaching the config, and
errors as one line with exit status 2. (Parsing alone is covered by test_cli.py.)"""
import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

import xskbench
from xskbench import stats
from xskbench.cli import build_parser, main

REPO = Path(__file__).resolve().parent.parent
SHORT = ["--device", "null", "--duration", "0.002"]


def _main(capsys, *argv):
    status = main(list(argv))
    out, err = capsys.readouterr()
    return status, out, err


def _report_choices():
    sub = next(a for a in build_parser()._actions if a.dest == "command")
    run_parser = sub.choices["run"]
    return next(a for a in run_parser._actions if a.dest == "report").choices


def test_python_dash_m_run_json():
    argv = [sys.executable, "-m", "xskbench", "run", "--device", "null", "--mode", "copy",
            "--workload", "txonly", "--duration", "0.002", "--json"]
    proc = subprocess.run(argv, cwd=REPO, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    doc = json.loads(proc.stdout)
    assert {"pps", "bps", "cpu", "counters", "profile", "config", "version", "seed",
            "invariants"} <= set(doc)
    assert doc["version"] == xskbench.__version__ and doc["seed"] == 1
    assert (doc["config"]["device"], doc["config"]["mode"]) == ("null", "copy")
    assert doc["config"]["workload"]["kind"] == "txonly"
    assert doc["config"]["workload"]["duration_s"] == 0.002
    assert doc["pps"]["tx"] > 0 and doc["pps"]["rx"] == 0
    assert doc["bps"]["tx"] == pytest.approx(8 * 64 * doc["pps"]["tx"], rel=1e-5)
    assert set(doc["counters"]) == set(stats.NAMES)
    assert set(doc["cpu"]) >= {"app", "napi"}
    assert doc["invariants"]["balanced"] is True
    assert doc["profile"] and {"context", "op", "calls", "cycles", "share"} == set(
        doc["profile"][0])


def test_report_profile_is_a_perf_top_list(capsys):
    status, out, err = _main(capsys, "run", *SHORT, "--report", "profile")
    assert status == 0 and not err
    lines = out.splitlines()
    assert lines[0].split() == ["Overhead", "Context", "Symbol"]
    rows = [re.fullmatch(r" +(\d+\.\d\d)%  (\S+) +\[k\] (\S+)", line) for line in lines[1:]]
    assert rows and all(rows), lines
    shares = [float(r[1]) for r in rows]
    assert shares == sorted(shares, reverse=True)
    assert 0 < sum(shares) <= 100.05
    assert "app_loop" in {r[3] for r in rows}
    assert all(len(line) <= 72 for line in lines)


def test_default_report_is_xdpsock_like(capsys):
    status, out, err = _main(capsys, "run", *SHORT, "--workload", "rxdrop")
    assert status == 0 and not err
    assert out.startswith(" sock0@null:0 rxdrop zerocopy (64 B, 1 ms emulated)")
    assert re.search(r"^ rx +[\d,]+ +[\d,]+ +\d+\.\d{3}$", out, re.M)
    assert "<- bottleneck" in out and "latency p50" in out
    assert all(len(line) <= 72 for line in out.splitlines())


@pytest.mark.parametrize("style", _report_choices())
def test_every_offered_report_style_renders(capsys, style):
    status, out, err = _main(capsys, "run", *SHORT, "--report", style)
    assert (status, err) == (0, "")
    assert out.strip()
    assert all(len(line) <= 72 for line in out.splitlines())


def test_options_reach_the_config(capsys):
    status, out, _ = _main(capsys, "run", *SHORT, "--json", "--packet-size", "128",
                           "--rate", "1e6", "--seed", "9", "--set", "xsk.batch_size=16",
                           "--set", "xsk.need_wakeup=false", "null.napi_budget=32")
    assert status == 0
    doc = json.loads(out)
    cfg = doc["config"]
    assert cfg["xsk"]["batch_size"] == 16 and cfg["xsk"]["need_wakeup"] is False
    assert cfg["null"]["napi_budget"] == 32
    assert cfg["workload"]["packet_size"] == 128 and cfg["workload"]["rate_pps"] == 1e6
    assert doc["seed"] == cfg["workload"]["seed"] == 9
    # and reach the run: the rate is met, frames are 128 B
    assert doc["pps"]["tx"] == pytest.approx(1e6, rel=0.02)
    assert doc["counters"]["tx_bytes"] == 128 * doc["counters"]["tx_packets"]


@pytest.mark.parametrize(("argv", "fragment"), [
    (["--duration", "0.0005"],
     "workload.warmup_s=0.001 must be < workload.duration_s=0.0005"),
    (["--set", "xsk.batch_size=512", "xsk.tx_size=256"],
     "xsk.batch_size=512 must be <= xsk.tx_size=256"),
    (["--set", "xsk.umem_frames=64"], "xsk.umem_frames=64 must be >= xsk.fill_size=2048"),
    (["--testbed", "nosuch"], "testbed.profile='nosuch'"),
    (["--set", "null.napi_budget=0"], "null.napi_budget=0: must be"),
    (["--mode", "pmd"], "mode='pmd': device 'null' supports"),
])
def test_run_errors_are_one_line_and_exit_2(capsys, argv, fragment):
    status, out, err = _main(capsys, "run", "--device", "null", *argv)
    assert status == 2 and out == ""
    assert err.count("\n") == 1 and err.startswith("xskbench: error: ")
    assert fragment in err
