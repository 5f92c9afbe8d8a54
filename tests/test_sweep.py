"""Parameter sweeps: grids, sampling, error rows, the Parquet cache, Dask, the CLI, the plots.

Runs are short (2 ms of emulated time on the null device).  The first run in this process
compiles the kernels (or loads them from numba's cache); the LocalCluster test comes after
the serial one so that its workers load what this process compiled.
"""
import importlib
import math
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pandas as pd
import pytest

import xskbench.sweep_cli  # noqa: F401 - registers `xskbench sweep` (also imported by cli)
from xskbench.cli import main
from xskbench.config import DEVICE_MODES, RunConfig
from xskbench.sweep_plots import pareto, pareto_figure, tornado_figure

sw = importlib.import_module("xskbench.sweep")

BASE = {"device": "null", "workload": {"duration_s": 0.002, "warmup_s": 0.0005}}
GRID = {"workload.rate_pps": [2e7, None], "null.napi_budget": [16, 64],
        "xsk.batch_size": [64, 4096]}  # batch_size 4096 > tx_size: invalid
N_POINTS, N_VALID = 8, 4


# --- grids and sampling (no runs) ------------------------------------------------------------

def test_cartesian_grid_order_and_values():
    assert callable(sw) and sw.sweep is not sw  # xskbench.sweep(...) calls sweep.sweep
    points = sw.expand({"xsk.batch_size": [16, 64], "mode": "copy", "null.napi_budget": [8, 9]})
    assert points == [
        {"xsk.batch_size": 16, "mode": "copy", "null.napi_budget": 8},
        {"xsk.batch_size": 16, "mode": "copy", "null.napi_budget": 9},
        {"xsk.batch_size": 64, "mode": "copy", "null.napi_budget": 8},
        {"xsk.batch_size": 64, "mode": "copy", "null.napi_budget": 9}]
    assert sw.expand([{"xsk.tx_size": 512}, {}]) == [{"xsk.tx_size": 512}, {}]
    tasks = sw.plan({"workload": {"rate_pps": "1e6"}}, {"xsk.batch_size": [16, "16", 32]})
    assert len(tasks) == 2  # "16" parses to 16: duplicates run once
    assert tasks[0].config["workload"]["rate_pps"] == 1e6
    assert [t.point for t in tasks] == [0, 1]


@pytest.mark.parametrize(("grid", "fragment"), [
    ({"xsk.nope": [1]}, "unknown field xsk.nope"),
    ({"nope.x": [1]}, "unknown section 'nope'"),
    ({"xsk.tx_size": []}, "has no values"),
    ({"batch_size": [1]}, "expected SECTION.FIELD"),
    ("xsk.tx_size", "grid must be a mapping"),
    ({"sample": "sobol", "n": 3, "fields": ["xsk.tx_size"]}, "must be 'random' or 'lhs'"),
    ({"sample": "lhs", "n": 0, "fields": ["xsk.tx_size"]}, "n=0"),
    ({"sample": "lhs", "n": 3, "fields": []}, "non-empty"),
    ({"sample": "lhs", "n": 3, "fields": ["testbed.profile"], "m": 1}, "unknown keys"),
    ({"sample": "lhs", "n": 3, "fields": ["workload.duration_s"], "seed": -1}, "seed=-1"),
    ({"sample": "lhs", "n": 3, "fields": {"xsk.tx_size": {"lo": 33, "hi": 63}}},
     "no power of two"),
])
def test_bad_grids_are_one_line_errors(grid, fragment):
    with pytest.raises(ValueError) as err:
        sw.plan(None, grid)
    assert fragment in str(err.value) and "\n" not in str(err.value)


SAMPLED = ["device", "mode", "xsk.tx_size", "xsk.umem_frames", "xsk.frame_size",
           "xsk.need_wakeup", "xsk.batch_size", "xsk.headroom", "workload.kind",
           "workload.rate_pps", "workload.packet_size", "null.irq_delay_ns",
           "testbed.cpu_ghz"]


@pytest.mark.parametrize("method", ["random", "lhs"])
def test_sampling_respects_bounds_and_is_reproducible(method):
    spec = {"sample": method, "n": 40, "fields": SAMPLED, "seed": 7}
    points = sw.sample_points(spec)
    assert len(points) == 40 and points == sw.sample_points(spec)
    assert points != sw.sample_points({**spec, "seed": 8})
    for p in points:
        assert list(p) == SAMPLED
        for path, value in p.items():
            info = sw.field_of(path)
            assert value is not None  # optional fields are never None unless listed
            if info is None:
                assert value in (DEVICE_MODES if path == "device"
                                 else {m for ms in DEVICE_MODES.values() for m in ms})
                continue
            assert info.check(value) == value and type(value) is info.base, (path, value)
            if info.pow2:
                assert value & (value - 1) == 0
    # bools and choices cover their values; log-uniform for wide bounds
    assert {p["xsk.need_wakeup"] for p in points} == {False, True}
    assert {p["xsk.frame_size"] for p in points} == {2048, 4096}
    rates = sorted(p["workload.rate_pps"] for p in points)
    assert rates[len(rates) // 2] < 1e8  # median of log-uniform [1, 1e9] is ~3e4


def test_lhs_stratifies_and_listed_none():
    n = 20
    spec = {"sample": "lhs", "n": n, "seed": 1,
            "fields": {"null.irq_delay_ns": {"lo": 0, "hi": 1000, "log": False},
                       "xsk.busy_budget": {"lo": 1, "hi": 20},
                       "workload.rate_pps": {"choices": [None, "1e6"]}}}
    points = sw.sample_points(spec)
    strata = sorted(int(p["null.irq_delay_ns"] // (1000 / n)) for p in points)
    assert strata == list(range(n))  # one point in each of the n strata
    assert sorted(p["xsk.busy_budget"] for p in points) == list(range(1, 21))
    rates = [p["workload.rate_pps"] for p in points]
    assert rates.count(None) == rates.count(1e6) == n // 2


# --- running -------------------------------------------------------------------------------

def test_sweep_serial_cluster_and_cache_agree(tmp_path):
    serial = sw.sweep(BASE, GRID, scheduler="serial", cache=tmp_path / "a", progress=False)
    info = serial.attrs["sweep"]
    assert (info["points"], info["computed"], info["invalid"]) == (N_POINTS, N_VALID, 4)
    assert serial["config_hash"].nunique() == N_POINTS
    ok = serial[serial["error"].isna()]
    assert len(ok) == N_VALID * ok.groupby("config_hash").size().iloc[0]
    assert (ok["pps_tx"] > 0).all() and ok["cpu_pct"].notna().all()
    assert set(serial.columns) >= {"xsk.batch_size", "null.napi_budget", "context",
                                   "cpu_pct", "pps_tx", "bottleneck", "config_hash", "error"}
    # rows come in grid order
    order = [t.config_hash for t in sw.plan(BASE, GRID)]
    assert list(dict.fromkeys(serial["config_hash"])) == order

    # the same sweep on a LocalCluster of 2 workers, writing a fresh cache
    cluster = sw.sweep(BASE, GRID, workers=2, cache=tmp_path / "b", progress=False)
    assert cluster.attrs["sweep"]["computed"] == N_VALID
    pd.testing.assert_frame_equal(serial, cluster)

    # rerun from either cache: nothing is computed, and the frame is the same
    for cache in ("a", "b"):
        again = sw.sweep(BASE, GRID, scheduler="serial", cache=tmp_path / cache,
                         progress=False)
        assert again.attrs["sweep"]["computed"] == 0
        assert again.attrs["sweep"]["cached"] == N_POINTS
        pd.testing.assert_frame_equal(serial, again)

    # a bigger sweep computes only its new points
    bigger = {**GRID, "null.napi_budget": [16, 64, 128]}
    grown = sw.sweep(BASE, bigger, scheduler="serial", cache=tmp_path / "a", progress=False)
    assert grown.attrs["sweep"]["computed"] == 2
    assert grown.attrs["sweep"]["cached"] == N_POINTS
    pd.testing.assert_frame_equal(
        serial, grown[grown["config_hash"].isin(serial["config_hash"])].reset_index(drop=True))


def test_serial_sweep_makes_one_table_per_chunk(monkeypatch):
    # an Arrow table per configuration cost ~15 ms each, several times a short run
    real, joined = sw._join, []

    def counted(frames, *args):
        joined.append(len(frames))
        return real(frames, *args)

    monkeypatch.setattr(sw, "_join", counted)
    grid = {"null.napi_budget": [8, 16, 32, 64, 128]}
    df = sw.sweep(BASE, grid, scheduler="serial", cache=False, chunk_size=2, progress=False)
    assert joined == [2, 2, 1]  # each chunk's frames, joined once
    assert df["config_hash"].nunique() == 5 and df["error"].isna().all()


def test_interrupted_sweep_resumes(tmp_path, monkeypatch):
    grid = {"null.napi_budget": [8, 16, 32, 64]}
    real = sw._run_into
    calls = []

    def flaky(item, *args):
        calls.append(item)
        if len(calls) == 2:
            raise KeyboardInterrupt  # the user stops the sweep after one configuration
        return real(item, *args)

    monkeypatch.setattr(sw, "_run_into", flaky)
    with pytest.raises(sw.SweepInterrupted, match="1 of 4 configurations done; they are "
                                                  "cached in .*, a rerun resumes"):
        sw.sweep(BASE, grid, scheduler="serial", cache=tmp_path, chunk_size=2, progress=False)
    assert len(list(tmp_path.glob("part-*.parquet"))) == 1
    monkeypatch.setattr(sw, "_run_into", real)
    resumed = sw.sweep(BASE, grid, scheduler="serial", cache=tmp_path, progress=False)
    assert resumed.attrs["sweep"]["computed"] == 3 and resumed.attrs["sweep"]["cached"] == 1
    fresh = sw.sweep(BASE, grid, scheduler="serial", cache=False, progress=False)
    pd.testing.assert_frame_equal(fresh, resumed)


def test_invalid_combination_and_failing_run_are_error_rows(tmp_path, monkeypatch):
    grid = [{"xsk.batch_size": 1024, "xsk.tx_size": 512}, {"xsk.tx_size": 512}]
    df = sw.sweep(BASE, grid, scheduler="serial", cache=tmp_path, progress=False)
    bad = df[df["error"].notna()]
    assert len(bad) == 1 and bad["config_hash"].nunique() == 1
    row = bad.iloc[0]
    assert "xsk.batch_size=1024 must be <= xsk.tx_size=512" in row["error"]
    assert row["xsk.batch_size"] == 1024 and row["xsk.tx_size"] == 512
    assert pd.isna(row["context"]) and math.isnan(row["pps_tx"])
    assert df[df["error"].isna()]["pps_tx"].gt(0).all()

    # a run that fails (here: an exception inside run) is an error row, and not cached
    def boom(cfg):
        raise RuntimeError("boom")

    monkeypatch.setattr(sw, "run", boom)
    point = [{"xsk.tx_size": 1024}]
    failed = sw.sweep(BASE, point, scheduler="serial", cache=tmp_path, progress=False)
    assert list(failed["error"]) == ["RuntimeError: boom"]
    monkeypatch.undo()
    again = sw.sweep(BASE, point, scheduler="serial", cache=tmp_path, progress=False)
    assert again.attrs["sweep"]["computed"] == 1 and again["error"].isna().all()


def test_cli_sweep_writes_parquet(tmp_path, capsys):
    grid = tmp_path / "grid.yaml"
    grid.write_text(
        "base:\n  device: null\n  workload: {duration_s: 0.002, warmup_s: 5e-4}\n"
        "grid:\n  workload.rate_pps: [1e7, 3e7]\n  null.napi_budget: [16, 64]\n")
    out = tmp_path / "out" / "results.parquet"
    status = main(["sweep", str(grid), "--scheduler", "serial", "--out", str(out),
                   "--cache-dir", str(tmp_path / "cache"), "--no-progress"])
    text = capsys.readouterr().out
    assert status == 0, text
    assert "4 configurations: 4 computed, 0 cached, 0 failed" in text
    assert "Pareto front" in text
    df = pd.read_parquet(out)
    assert df["config_hash"].nunique() == 4 and df["error"].isna().all()
    assert sorted(df["workload.rate_pps"].unique()) == [1e7, 3e7]


@pytest.mark.parametrize(("text", "args", "fragment"), [
    (None, [], "cannot read"),
    ("base: [1\n", [], "malformed YAML"),
    ("grid: {xsk.tx_size: [512]}\nextra: 1\n", [], "unknown keys ['extra']"),
    ("base: {}\n", [], "missing grid"),
    ("grid: {xsk.nope: [1]}\n", [], "unknown field xsk.nope"),
    ("grid: {xsk.tx_size: [512]}\n", ["--workers", "0"], "--workers: 0 must be >= 1"),
    ("grid: {xsk.tx_size: [512]}\n", ["--out", "x.csv"], "expected a .parquet file"),
])
def test_cli_sweep_errors(tmp_path, capsys, text, args, fragment):
    path = tmp_path / "grid.yaml"
    if text is not None:
        path.write_text(text)
    status = main(["sweep", str(path), "--no-cache", *args])
    err = capsys.readouterr().err
    assert status == 2
    assert err.startswith("xskbench: error: ") and fragment in err and err.count("\n") == 1


# --- summaries, sensitivity, plots ------------------------------------------------------------

def test_pareto_front():
    summ = pd.DataFrame({"config_hash": list("abcde"), "cpu_total": [100, 100, 150, 200, 120],
                         "pps": [5.0, 6.0, 6.0, 9.0, 1.0], "error": [None] * 5})
    assert list(pareto(summ)["pareto"]) == [False, True, False, True, False]


def test_sensitivity_and_figures(tmp_path):
    base = {**BASE, "workload": {**BASE["workload"], "rate_pps": 2e7}}
    fields = ["null.napi_budget", "xsk.need_wakeup", "xsk.frame_size", "xsk.batch_size"]
    frame = sw.sensitivity(base, fields, scheduler="serial", cache=tmp_path, progress=False)
    metrics = list(dict.fromkeys(frame["metric"]))
    assert metrics[0] == "pps" and all(m.startswith("cpu:") for m in metrics[1:])
    dirs = frame[frame["metric"] == "pps"].set_index("field")["direction"]
    assert list(dirs["null.napi_budget"]) == ["low", "high"]
    assert list(dirs[["xsk.need_wakeup"]]) == ["low"]  # True -> False
    assert list(dirs[["xsk.frame_size"]]) == ["low"]  # 4096 -> 2048, no higher choice
    pps = frame[(frame["metric"] == "pps") & (frame["field"] == "null.napi_budget")]
    assert list(pps["value"]) == [32, 128] and (pps["base"] > 1.9e7).all()
    assert frame["error"].isna().all()
    fig = tornado_figure(frame)
    assert len(fig.data) == 2 * len(metrics)
    assert set(fig.data[0].y) == set(fields)

    df = sw.sweep(base, {"null.napi_budget": [16, 64], "workload.rate_pps": [1e7, 3e7]},
                  scheduler="serial", cache=tmp_path, progress=False)
    fig = pareto_figure(df)
    assert [t.name for t in fig.data] == ["dominated", "Pareto front"]
    assert len(fig.data[0].x) + len(fig.data[1].x) == 4
    assert "<b>null.napi_budget</b>=" in fig.data[1].hovertext[0]
    first = sw.summarize(df).iloc[0]
    assert sw.row_config(first) == RunConfig.from_dict(base).replace(
        **{"null.napi_budget": 16, "workload.rate_pps": 1e7})


# --- one engine: points, each, outcomes, runners (issue #15) ---------------------------------

def _emulate_twice(cfg):
    """A runner other than the emulator (module level: picklable)."""
    from xskbench.run import run

    first = run(cfg)
    assert run(cfg).to_json() == first.to_json()  # deterministic for a seed
    return first


def test_points_each_and_outcomes():
    cfgs = sw.points(BASE, {"null.napi_budget": [16, 64]})
    assert [c.null.napi_budget for c in cfgs] == [16, 64]
    assert all(isinstance(c, RunConfig) and c.workload.duration_s == 0.002 for c in cfgs)
    with pytest.raises(ValueError, match=r"grid point 1 \(xsk.batch_size=4096\): "
                                         r"xsk.batch_size=4096: must be an int in \[1, 2048\]"):
        sw.points(BASE, {"xsk.batch_size": [64, 4096]})
    seen = []
    out = sw.each([cfgs[0], cfgs[1], cfgs[0]], on_result=lambda i, c, r: seen.append(i))
    assert out[0] is out[2] and seen == [0, 1, 2]  # equal configs run once
    assert out[0].pps["tx"] > 0
    results = sw.outcomes(BASE, {"xsk.batch_size": [64, 4096], "null.napi_budget": [16]})
    assert results[0].to_json() == out[0].to_json()
    assert results[1] == "xsk.batch_size=4096: must be an int in [1, 2048]"
    axes = sw.one_at_a_time(cfgs[0], {"null.napi_budget": [8, 32], "mode": ["copy"]})
    assert [(a, v, c.null.napi_budget, c.mode) for a, v, c in axes] == [
        ("null.napi_budget", 8, 8, "zerocopy"), ("null.napi_budget", 32, 32, "zerocopy"),
        ("mode", "copy", 16, "copy")]


def test_a_runner_is_part_of_the_cache_key(tmp_path):
    grid = {"null.napi_budget": [16, 64]}
    mine = sw.sweep(BASE, grid, scheduler="serial", cache=tmp_path, progress=False,
                    runner=_emulate_twice)
    assert mine.attrs["sweep"]["computed"] == 2 and mine["error"].isna().all()
    emulated = sw.sweep(BASE, grid, scheduler="serial", cache=tmp_path, progress=False)
    assert emulated.attrs["sweep"]["computed"] == 2  # not the other runner's rows
    pd.testing.assert_frame_equal(mine.drop(columns="config_hash"),
                                  emulated.drop(columns="config_hash"))


@pytest.mark.parametrize(("grid", "fragment"), [
    ({"null.napi_budget": list(range(1, 501)), "xsk.busy_budget": list(range(1, 501))},
     "grid: 500 x 500 = 250000 points; allowed: at most 100000"),
    ({"sample": "random", "n": 1_000_000_000, "fields": ["xsk.tx_size"]},
     "sample: n=1000000000: must be an int in [1, 100000]"),
    ([{}] * 100_001, "grid: explicit = 100001 points"),
])
def test_huge_grids_are_refused_before_planning(grid, fragment):
    with pytest.raises(ValueError) as err:
        sw.plan(None, grid)
    assert fragment in str(err.value)


# --- the cache: validated parts, quarantine (issue #18) -------------------------------------

@pytest.mark.parametrize("damage", ["drop pps_tx", "cpu_pct as text"])
def test_bad_cache_part_is_quarantined_and_recomputed(tmp_path, damage):
    import pyarrow as pa
    import pyarrow.parquet as pq

    grid = {"null.napi_budget": [16, 64]}
    fresh = sw.sweep(BASE, grid, scheduler="serial", cache=tmp_path, progress=False)
    (part,) = tmp_path.glob("part-*.parquet")
    table = pq.read_table(part)
    if damage == "drop pps_tx":
        table = table.drop_columns(["pps_tx"])
    else:
        i = table.column_names.index("cpu_pct")
        table = table.set_column(i, "cpu_pct", pa.array(["lots"] * table.num_rows))
    pq.write_table(table, part)
    with pytest.warns(UserWarning, match=f"sweep cache: {part.name} .*; moved to quarantine/"):
        again = sw.sweep(BASE, grid, scheduler="serial", cache=tmp_path, progress=False)
    assert again.attrs["sweep"]["computed"] == 2 and again.attrs["sweep"]["cached"] == 0
    pd.testing.assert_frame_equal(fresh, again)
    assert (tmp_path / "quarantine" / part.name).exists() and not part.exists()
    third = sw.sweep(BASE, grid, scheduler="serial", cache=tmp_path, progress=False)
    assert third.attrs["sweep"]["cached"] == 2  # the recomputed part is good


# --- the CLI: output paths first, estimates, Ctrl-C (issue #18) -----------------------------

def _grid_file(tmp_path, duration=0.002, values=(16, 64), extra=""):
    path = tmp_path / "grid.yaml"
    path.write_text(f"base:\n  device: null\n  workload: {{duration_s: {duration}, "
                    f"warmup_s: 0.0}}\n{extra}grid:\n  null.napi_budget: {list(values)}\n")
    return path


@pytest.mark.parametrize("out", ["file.txt/x.parquet", "dir.parquet"])
def test_cli_sweep_checks_the_output_before_the_work(tmp_path, capsys, out):
    (tmp_path / "file.txt").write_text("")
    (tmp_path / "dir.parquet").mkdir()
    status = main(["sweep", str(_grid_file(tmp_path)), "--scheduler", "serial", "--out",
                   str(tmp_path / out), "--cache-dir", str(tmp_path / "cache"),
                   "--no-progress"])
    err = capsys.readouterr().err
    assert status == 2 and err.count("\n") == 1 and f"--out {tmp_path / out}" in err, err
    assert not (tmp_path / "cache").exists()  # nothing ran


def test_cli_sweep_and_run_refuse_hours_without_yes(tmp_path, capsys):
    grid = _grid_file(tmp_path, duration=60, values=range(8, 72, 8),
                      extra="  mq: {queues: 16, pinning: same-cpu}\n")
    status = main(["sweep", str(grid), "--scheduler", "serial", "--no-cache",
                   "--no-progress", "--out", str(tmp_path / "x.parquet")])
    err = capsys.readouterr().err
    assert status == 2 and "estimated at 42.7 h of emulation" in err and "--yes" in err, err
    status = main(["run", "--device", "virtio-net", "--workload", "l2fwd", "--duration", "60",
                   "--set", "mq.queues=16"])
    err = capsys.readouterr().err
    assert status == 2 and "this run is estimated at 5.3 h" in err and "--yes" in err, err


def test_ctrl_c_ends_a_sweep_with_one_line_and_a_consistent_cache(tmp_path):
    import pyarrow.parquet as pq

    grid = _grid_file(tmp_path, duration=0.05, values=range(8, 264, 8))
    cache = tmp_path / "cache"
    proc = subprocess.Popen([sys.executable, "-m", "xskbench", "sweep", str(grid), "--scheduler",
                             "serial", "--no-progress", "--cache-dir", str(cache), "--out",
                             str(tmp_path / "x.parquet")],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        first = proc.stderr.readline()  # printed after planning, before the first run
        assert "estimated" in first, first
        time.sleep(3)
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=120)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 130, err
    assert err.count("\n") == 1 and "Traceback" not in err, err
    assert err.startswith("xskbench: sweep interrupted: ") and "of 32 configurations" in err
    assert not (tmp_path / "x.parquet").exists()
    for part in cache.glob("*"):  # only whole parts, each readable
        assert part.name.startswith("part-") and pq.read_table(part).num_rows > 0


def _session_members(pgid):
    """The pids of the processes in process group ``pgid`` (from /proc)."""
    out = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[2]) == pgid:  # after the name: state, ppid, pgrp
            out.append(int(stat.parent.name))
    return out


def _cluster_up(pid):
    """The sweep, the resource tracker and two workers are running, and the sweep catches
    SIGINT again (while the cluster starts it ignores it, see sweep._dask)."""
    status = Path(f"/proc/{pid}/status").read_text()
    caught = int(next(ln.split()[1] for ln in status.splitlines() if ln.startswith("SigCgt")), 16)
    return len(_session_members(pid)) >= 4 and caught & (1 << (signal.SIGINT - 1))


def test_ctrl_c_on_a_terminal_stops_a_local_dask_sweep_with_one_line(tmp_path):
    """A terminal's Ctrl-C reaches the whole process group, the local cluster's workers too:
    they ignore it, the sweep stops within seconds (workers busy in a kernel are killed) and
    says so in one line; no process of the group outlives it."""
    grid = _grid_file(tmp_path, duration=0.5, values=range(8, 264, 8))
    proc = subprocess.Popen([sys.executable, "-m", "xskbench", "sweep", str(grid), "--workers",
                             "2", "--no-progress", "--no-cache", "--yes", "--out",
                             str(tmp_path / "x.parquet")], start_new_session=True,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 120
        while not _cluster_up(proc.pid) and time.monotonic() < deadline:
            time.sleep(0.2)
        assert _cluster_up(proc.pid), "the local cluster did not start"
        os.killpg(proc.pid, signal.SIGINT)
        t0 = time.monotonic()
        out, err = proc.communicate(timeout=60)
        waited = time.monotonic() - t0
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
    assert proc.returncode == 130, err
    lines = [ln for ln in err.splitlines() if "estimated" not in ln]
    assert lines and lines[0].startswith("xskbench: sweep interrupted: ") and len(lines) == 1, err
    assert waited < 20, f"the sweep took {waited:.0f} s to stop"
    deadline = time.monotonic() + 10  # the resource tracker exits once its pipe closes
    while _session_members(proc.pid) and time.monotonic() < deadline:
        time.sleep(0.2)
    left = [Path(f"/proc/{p}/cmdline").read_bytes()[:80] for p in _session_members(proc.pid)]
    assert left == [], left
