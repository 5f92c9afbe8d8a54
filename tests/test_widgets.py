"""The Explorer widget (kernel side): controls from the field metadata, live figures, errors
as messages, the sweep; and the plotting functions it is built on."""

from __future__ import annotations

import dataclasses
import subprocess
import sys
from pathlib import Path

import ipywidgets as W
import numpy as np
import plotly.graph_objects as go
import pytest

import xskbench
from xskbench import plotting
from xskbench.config import DEVICE_MODES
from xskbench.fields import Section, fld, iter_fields
from xskbench.sections import SECTIONS
from xskbench.widgets import (
    Explorer,
    make_control,
    numeric_fields,
    pow2_options,
    sweep_points,
    sync_figure,
)


@pytest.fixture(scope="module")
def ex():
    return Explorer(sweep_key=None)


def _all_fields():
    return [info for cls in SECTIONS.values() for info in iter_fields(cls)]


def _trace_y(fw, i=0):
    return list(np.asarray(fw.data[i].y, dtype=float))


def test_import_stays_light():
    code = ("import sys, xskbench\n"
            "heavy = [m for m in ('plotly', 'ipywidgets', 'kaleido') if m in sys.modules]\n"
            "assert not heavy, heavy\n"
            "assert callable(xskbench.export)\n"
            "assert xskbench.widgets.Explorer and xskbench.plotting.cpu_figure\n")
    subprocess.run([sys.executable, "-c", code], check=True, timeout=120)


def test_a_control_per_field(ex):
    fields = _all_fields()
    assert set(ex.controls) == {"device", "mode"} | {f.path for f in fields}
    assert list(ex.controls["device"].value_widget.options) == list(DEVICE_MODES)
    assert list(ex.controls["mode"].value_widget.options) == list(DEVICE_MODES["null"])
    for info in fields:
        c = ex.controls[info.path]
        w = c.value_widget
        assert c.value == getattr(getattr(ex.config, info.section), info.name), info.path
        if info.base is bool:
            assert isinstance(w, W.Checkbox)
        elif info.choices:
            assert isinstance(w, W.Dropdown)
            assert tuple(v for _, v in w.options) == tuple(info.choices)
        elif info.pow2:
            assert isinstance(w, W.SelectionSlider)
            values = [v for _, v in w.options]
            assert all(v & (v - 1) == 0 for v in values)
            assert values == pow2_options(info)
        elif info.base in (int, float):
            assert isinstance(w, W.IntSlider | W.FloatSlider | W.BoundedIntText
                              | W.BoundedFloatText | W.IntText | W.FloatText), info.path
        if hasattr(w, "continuous_update"):
            assert w.continuous_update is False, info.path
        if info.optional:
            assert c.none_box is not None and isinstance(c.widget, W.HBox)
    # grouped per section: one tab each, in SECTIONS order
    assert list(ex.sections.titles) == list(SECTIONS)
    assert ex.controls["workload.rate_pps"].none_box.description == "unbounded"


def test_controls_are_generic_for_a_new_section():
    @dataclasses.dataclass(frozen=True)
    class Demo(Section):
        SECTION = "demo"
        on: bool = fld(True, "a switch")
        kind: str = fld("a", "a choice", choices=("a", "b"))
        ring: int = fld(256, "a ring", lo=64, hi=4096, pow2=True)
        budget: int = fld(64, "a budget", lo=1, hi=1024)
        ghz: float = fld(2.0, "a clock", lo=0.5, hi=6.0)
        rate: float = fld(1e6, "a wide rate", lo=1.0, hi=1e9)
        limit: float | None = fld(None, "a limit; none = unlimited", lo=1.0, hi=100.0)

    kinds = {}
    for info in iter_fields(Demo):
        c = make_control(info, info.default)
        kinds[info.name] = type(c.value_widget)
        assert c.value == info.default
    assert kinds == {"on": W.Checkbox, "kind": W.Dropdown, "ring": W.SelectionSlider,
                     "budget": W.IntSlider, "ghz": W.FloatSlider, "rate": W.BoundedFloatText,
                     "limit": W.FloatSlider}
    limit = make_control(next(i for i in iter_fields(Demo) if i.name == "limit"), None)
    assert limit.none_box.description == "unlimited" and limit.value_widget.disabled
    limit.value = 42.0
    assert limit.value == 42.0 and not limit.none_box.value and not limit.value_widget.disabled
    limit.value = None
    assert limit.value is None


def test_a_change_is_one_comm_message_per_figure(monkeypatch):
    """Each figure's redraw reaches the page as one message (plotly would send four: both
    edit ids, the update, then None), carrying the update and both edit ids."""
    ex = Explorer(sweep_key=None)
    ex._show_figures()  # open the comms, as the page's bundle loader would
    sent = {name: [] for name in ex.figures}
    for name, fw in ex.figures.items():
        assert fw.comm is not None
        monkeypatch.setattr(fw, "_send", lambda msg, buffers=None, name=name:
                            sent[name].append(msg))
    ex.controls["xsk.need_wakeup"].value = not ex.controls["xsk.need_wakeup"].value
    assert ex.error == ""
    for name in ("cpu", "profile", "occupancy"):
        (msg,) = sent[name]
        state = msg["state"]
        update = state["_py2js_update"]
        assert msg["method"] == "update"
        assert update["layout_edit_id"] == state["_last_layout_edit_id"] > 0
        assert update["trace_edit_id"] == state["_last_trace_edit_id"] > 0
        assert update["style_data"] or update["layout_data"]
    assert not ex.figures["cpu"]._layout_edit_in_process  # nothing waits for the page


def test_changing_a_control_updates_the_figures(ex):
    cpu = ex.figures["cpu"]
    before_title = cpu.layout.title.text
    before_y = _trace_y(cpu)
    before_line = ex.bottleneck.value
    ids = {name: id(fw) for name, fw in ex.figures.items()}
    ex.controls["workload.kind"].value = "rxdrop"
    assert ex.error == ""
    assert ex.config.workload.kind == "rxdrop"
    assert ex.figures["cpu"] is cpu and {n: id(f) for n, f in ex.figures.items()} == ids
    assert cpu.layout.title.text != before_title and "rxdrop" in cpu.layout.title.text
    assert _trace_y(cpu) != before_y
    assert ex.bottleneck.value != before_line
    assert "rxdrop" in ex.report.value
    # a slider: batch size
    before = (ex.bottleneck.value, _trace_y(cpu), _trace_y(cpu, 1))
    ex.controls["xsk.batch_size"].value = 16
    assert ex.config.xsk.batch_size == 16 and ex.error == ""
    assert ex.last_update_s > 0
    assert (ex.bottleneck.value, _trace_y(cpu), _trace_y(cpu, 1)) != before
    ex.controls["workload.kind"].value = "txonly"
    ex.controls["xsk.batch_size"].value = 64


def test_invalid_combination_is_a_message(ex):
    good = ex.result
    title = ex.figures["cpu"].layout.title.text
    ex.controls["xsk.tx_size"].value = 32  # batch_size 64 > tx_size 32
    assert ex.result is good
    assert "batch_size" in ex.error and "tx_size" in ex.error
    assert "Traceback" not in ex.message.value and "batch_size" in ex.message.value
    assert ex.figures["cpu"].layout.title.text == title
    ex.controls["xsk.tx_size"].value = 2048
    assert ex.error == "" and ex.message.value == ""
    assert ex.result is not good


def test_every_device_runs_or_explains(ex):
    for device, modes in DEVICE_MODES.items():
        ex.set(device=device)
        assert list(ex.controls["mode"].value_widget.options) == list(modes)
        assert ex.controls["mode"].value in modes
        if ex.error:
            assert ex.message.value  # shown, not raised
        else:
            assert ex.config.device == device
            assert ex.result.config.device == device
    ex.set(device="null")
    assert ex.error == "" and ex.config.device == "null"


def test_optional_field(ex):
    ex.controls["workload.rate_pps"].value = 1e6
    assert ex.config.workload.rate_pps == 1e6 and ex.error == ""
    assert abs(ex.result.pps["tx"] - 1e6) / 1e6 < 0.05
    ex.controls["workload.rate_pps"].value = None
    assert ex.config.workload.rate_pps is None


def test_sweep_view(ex):
    ex.sweep_knob.value = "xsk.tx_size"  # runs the sweep
    key, points, results, base = ex.sweep_data
    assert key == "xsk.tx_size" and 5 <= len(points) <= 8
    fw = ex.figures["sweep"]
    assert list(fw.data[0].x) == points
    assert "xsk.tx_size" in fw.layout.title.text
    # points below batch_size are invalid: reported, not raised
    bad = [p for p, r in zip(points, results, strict=True) if isinstance(r, str)]
    assert all(p < ex.config.xsk.batch_size for p in bad)
    ok = [r for r in results if not isinstance(r, str)]
    assert ok and all(r.config.xsk.tx_size in points for r in ok)
    cpu = [y for y in fw.data[2].y if y is not None]
    assert len(cpu) == len(ok) and all(0 <= y <= 110 for y in cpu)
    # a knob with choices, and one that is unset (none): around the measured rate
    ex.sweep_knob.value = "xsk.frame_size"
    assert ex.sweep_data[1] == [2048, 4096]
    ex.sweep_knob.value = "workload.rate_pps"
    pts = ex.sweep_data[1]
    assert 5 <= len(pts) <= 8 and min(pts) < max(ex.result.pps.values()) < max(pts)


def test_queue_sweep_is_a_scaling_plot(ex):
    ex.sweep_knob.value = "mq.queues"
    key, points, results, _ = ex.sweep_data
    assert key == "mq.queues" and points == [1, 2, 4, 8]
    fw = ex.figures["sweep"]
    assert fw.layout.title.text.startswith("scaling with queues")
    assert [t.name for t in fw.data] == ["pps (all queues)", "linear from the first point",
                                         "CPUs used"]
    cores = list(fw.data[2].y)
    assert cores == sorted(cores) and cores[-1] > 3 * cores[0]  # each queue brings CPUs
    assert all(r.bottleneck.startswith("q") for r in results[1:])
    ex.sweep_knob.value = "xsk.tx_size"  # back to a plain sweep: the traces are rebuilt
    assert "xsk.tx_size" in ex.figures["sweep"].layout.title.text


def test_sweep_points_and_knobs():
    knobs = {i.path for i in numeric_fields()}
    assert "xsk.batch_size" in knobs and "workload.rate_pps" in knobs
    assert not any(i.base in (bool, str) for i in numeric_fields())
    info = {i.path: i for i in _all_fields()}
    assert sweep_points(info["xsk.tx_size"], 2048) == [256, 512, 1024, 2048, 4096, 8192,
                                                       16384]
    assert sweep_points(info["xsk.tx_size"], 32)[:2] == [32, 64]
    pts = sweep_points(info["xsk.batch_size"], 64)
    assert pts == sorted(set(pts)) and 64 in pts and all(isinstance(p, int) for p in pts)
    assert sweep_points(info["xsk.headroom"], 0)[0] == 0


def test_sync_figure_keeps_the_widget():
    fw = go.FigureWidget([go.Bar(x=["a"], y=[1])], layout=dict(title=dict(text="one")))
    sync_figure(fw, go.Figure([go.Bar(x=["a", "b"], y=[2, 3]),
                               go.Scatter(x=[1], y=[1])], layout=dict(title=dict(text="two"))))
    assert [t.type for t in fw.data] == ["bar", "scatter"]
    assert list(fw.data[0].y) == [2, 3] and fw.layout.title.text == "two"
    sync_figure(fw, ([dict(type="scatter", x=[0], y=[5])], {"title": {"text": "three"}}))
    assert [t.type for t in fw.data] == ["scatter"] and fw.layout.title.text == "three"
    sync_figure(fw, go.Figure([go.Scatter(x=np.arange(3.0), y=np.array([1, 2, 3]))]))
    assert list(fw.data[0].y) == [1, 2, 3] and list(fw.data[0].x) == [0.0, 1.0, 2.0]


def test_plotting_functions(ex):
    res = ex.result
    for name, build in plotting.FIGURES.items():
        fig = build(res)
        assert isinstance(fig, go.Figure) and fig.data, name
        meta = fig.layout.meta["xskbench"]
        assert meta["version"] == xskbench.__version__
        assert meta["config"] == res.config.to_dict() and meta["seed"] == res.config.workload.seed
    cpu = plotting.cpu_figure(res)
    assert [t.name for t in cpu.data] == ["useful work", "idle polls"]
    total = np.add(cpu.data[0].y, cpu.data[1].y)
    ran = [lab for lab in res.labels if res.cpu[lab] > 0]  # contexts at 0 % are left out
    assert np.allclose(total, [res.cpu[lab] for lab in ran], atol=1e-6)
    assert len(cpu.data[0].x) == len(ran) < len(res.labels)
    prof = plotting.profile_figure(res, top=10)
    expect = res.profile().head(10)
    assert list(prof.data[0].x) == pytest.approx(expect["share"].to_list())
    assert list(prof.data[0].y) == [f"{o} [{c}]" for o, c in zip(expect["op"],
                                                                  expect["context"],
                                                                  strict=True)]
    occ = plotting.occupancy_figure(res)
    assert [t.name for t in occ.data] == [c for c in res.occupancy.columns if c != "time_us"]
    assert res.bottleneck in plotting.bottleneck_line(res)
    frame = plotting.figure_frame(cpu)
    assert len(frame) == 2 * len(ran)


def test_index_links_every_notebook():
    """notebooks/index.ipynb (where `make lab` opens) links every notebook."""
    import nbformat

    nb_dir = Path(__file__).resolve().parent.parent / "notebooks"
    index = nbformat.read(nb_dir / "index.ipynb", as_version=4)
    text = "\n".join(c.source for c in index.cells if c.cell_type == "markdown")
    missing = [p.name for p in sorted(nb_dir.glob("*.ipynb"))
               if p.name != "index.ipynb" and f"]({p.name})" not in text]
    assert not missing, f"add a row for {missing} to notebooks/index.ipynb"


# --- feedback, compare, save/load (issue #19) ------------------------------------------------
def test_a_burst_of_changes_runs_once_with_the_last_values(ex):
    """In a kernel (an event loop runs), changes made in one go run once, the newest, as
    soon as the callback returns; changes that queue up right behind a run (separate
    callbacks) wait DEBOUNCE_S and run once too."""
    import asyncio

    runs = ex.runs
    batch = ex.controls["xsk.batch_size"]

    async def burst():
        for v in (16, 24, 32):
            batch.value = v
        assert "running…" in ex.status.value  # shown before the run starts
        assert ex.runs == runs
        await asyncio.sleep(0)  # an idle kernel: the run starts at once
        assert ex.runs == runs + 1 and ex.config.xsk.batch_size == 32
        loop = asyncio.get_running_loop()
        for v in (40, 48):  # as comm messages that queued up during that run
            loop.call_soon(setattr, batch, "value", v)
        await asyncio.sleep(0)
        await asyncio.sleep(0)
        assert ex.runs == runs + 1
        await asyncio.sleep(10 * ex.debounce_s)

    asyncio.run(burst())
    assert ex.runs == runs + 2 and ex.config.xsk.batch_size == 48
    assert "xsk-done" in ex.status.value and ex.error == ""
    batch.value = 64


def test_first_use_status_is_apart_from_the_run():
    from xskbench import widgets

    widgets._WARM.discard("null")
    ex2 = Explorer(sweep_key=None)
    assert "first null run in this kernel" in ex2.status.value
    ex2.controls["xsk.batch_size"].value = 32
    assert "first" not in ex2.status.value and "emulated in" in ex2.status.value


def test_labels_carry_units(ex):
    info = {i.path: i for i in _all_fields()}
    assert ex.controls["xsk.batch_size"].value_widget.description == \
        f"batch_size ({info['xsk.batch_size'].unit})"
    assert ex.controls["xsk.need_wakeup"].value_widget.description == "need_wakeup"


def test_pin_and_compare(ex):
    ex.pin()
    assert ex.pinned is ex.result and "xsk-delta" in ex.compare.value
    before = ex.compare.value
    ex.controls["mode"].value = "copy"
    assert ex.result is not ex.pinned and ex.compare.value != before
    assert "mode=copy" in ex.compare.value and "Baseline" in ex.compare.value
    rows = {name: (b, a, d) for name, b, a, d in
            xskbench.compare.delta_rows(ex.pinned, ex.result)}
    assert rows["tx pps"][2] == pytest.approx(ex.result.pps["tx"] - ex.pinned.pps["tx"])
    assert "sys CPU %" in rows  # copy mode's context, absent in zero copy: 0 -> its CPU
    diff = xskbench.compare.profile_diff(ex.pinned, ex.result)
    shares = ex.pinned.profile()
    top = f"{shares['op'][0]} [{shares['context'][0]}]"
    assert diff[0][0] == top and diff[0][1] == pytest.approx(shares["share"][0])
    text = ex.write_cover_letter(2)
    assert "2 seeds each" in text and "mode=copy" in text and "±" in text
    assert all(len(line) <= 72 for line in text.splitlines())
    rate = next(line for line in text.splitlines() if line.startswith("rate"))
    assert rate.endswith("%  Mpps") and rate.count("±") == 2  # mean ± sd twice, the gain
    ex.unpin()
    ex.controls["mode"].value = "zerocopy"
    assert "Pin this run" in ex.compare.value


def test_save_load_and_cli_line(ex, tmp_path):
    import shlex

    ex.set(**{"xsk.batch_size": 32, "workload.rate_pps": 2e6})
    cfg = ex.config
    for fmt_ in ("yaml", "json"):
        path = ex.save(fmt_, tmp_path / "cfg")
        assert path.suffix == f".{fmt_}" and xskbench.load(path) == cfg
    ex.set(**{"xsk.batch_size": 64, "workload.rate_pps": None})
    assert ex.config != cfg
    assert ex.load(path) and ex.config == cfg and ex.result.config == cfg
    assert not ex.load(tmp_path / "missing.yaml") and "cannot read" in ex.file_out.value
    # the "as CLI" line runs the same config
    line = xskbench.export.cli_line(cfg)
    assert line in html_unescape(ex.cli.value)
    args = shlex.split(line)[1:]
    out = subprocess.run([sys.executable, "-m", "xskbench", *args, "--json"], check=True,
                         capture_output=True, text=True, timeout=300).stdout
    import json

    assert json.loads(out)["config"] == cfg.to_dict()
    ex.set(**{"xsk.batch_size": 64, "workload.rate_pps": None})


def html_unescape(text: str) -> str:
    import html

    return html.unescape(text)


def test_sweep_throughput_vs_cpu_view(ex):
    ex.sweep_knob.value = "xsk.batch_size"
    knob_fig = ex.figures["sweep"]
    assert knob_fig.layout.xaxis.type == "log"  # powers of two: log2, ticked at each point
    assert list(knob_fig.layout.xaxis.tickvals) == ex.sweep_data[1]
    assert knob_fig.layout.yaxis2.tickmode == "linear"  # not synced to the left axis
    ex.sweep_view.value = "cpu"
    fw = ex.figures["sweep"]
    assert fw.layout.title.text.startswith("throughput vs CPU across xsk.batch_size")
    assert fw.layout.yaxis2.overlaying is None  # one pair of axes
    res = [r for r in ex.sweep_data[2] if not isinstance(r, str)]
    assert list(fw.data[0].x) == pytest.approx([sum(r.cpu.values()) for r in res])
    assert list(fw.data[0].text) == [f"batch_size={p}" for p in ex.sweep_data[1]]
    ex.sweep_view.value = "knob"


def test_figures_size_to_the_panel():
    from xskbench.widgets import MIN_FIG_WIDTH, figure_width

    # 1440 px screen with the file browser open: the output area is ~1100 px: two per row
    assert 2 * figure_width(1100) + 40 <= 1100 and figure_width(1100) >= MIN_FIG_WIDTH
    assert figure_width(700) == 670  # one per row
    assert figure_width(0) == xskbench.widgets.FIG_WIDTH  # not measured yet


def test_nine_contexts_stay_legible():
    cfg = xskbench.RunConfig().replace(**{"workload.duration_s": 0.001,
                                          "workload.warmup_s": 0.0002, "mq.queues": 4})
    res = xskbench.run(cfg)
    fig = plotting.cpu_figure(res)
    assert len(fig.data[0].x) > 6
    assert fig.layout.xaxis.tickangle == -35 and fig.layout.xaxis.tickfont.size == 10
