"""Parameter sweeps: grids, sampling, error rows, the Parquet cache, Dask, the CLI, the plots.

Runs are short (2 ms of emulated time on the null device).  The first run in this process
compiles the kernels (or loads them from numba's cache); the LocalCluster test comes after
the serial one so that its workers load what this process compiled.
"""
import importlib
import math
import sys

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


def test_interrupted_sweep_resumes(tmp_path, monkeypatch):
    grid = {"null.napi_budget": [8, 16, 32, 64]}
    real = sw._run_chunk
    calls = []

    def flaky(items):
        calls.append(len(items))
        if len(calls) == 2:
            raise KeyboardInterrupt  # the user stops the sweep after one chunk
        return real(items)

    monkeypatch.setattr(sw, "_run_chunk", flaky)
    with pytest.raises(KeyboardInterrupt):
        sw.sweep(BASE, grid, scheduler="serial", cache=tmp_path, chunk_size=2, progress=False)
    assert len(list(tmp_path.glob("part-*.parquet"))) == 1
    monkeypatch.setattr(sw, "_run_chunk", real)
    resumed = sw.sweep(BASE, grid, scheduler="serial", cache=tmp_path, progress=False)
    assert resumed.attrs["sweep"]["computed"] == 2 and resumed.attrs["sweep"]["cached"] == 2
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

    monkeypatch.setattr(sys.modules["xskbench.run"], "run", boom)
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
