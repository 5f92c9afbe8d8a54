"""The Explorer: an ipywidgets front end to one emulated run, for JupyterLab.

Every control is generated from the config field metadata (:mod:`xskbench.fields`) of the
sections in :data:`xskbench.sections.SECTIONS`, and the device/mode dropdowns from
:data:`xskbench.config.DEVICE_MODES`, so a new device or section shows up without edits here.
A change re-runs the emulation (``xskbench.run``) and updates four persistent plotly
``FigureWidget``s in place: CPU per context, a sweep of one knob, ring occupancy and the
perf-top profile.  The figures themselves come from :mod:`xskbench.plotting`.

>>> from xskbench.widgets import Explorer
>>> Explorer()          # in a notebook cell
"""

from __future__ import annotations

import asyncio
import contextlib
import copy
import functools
import html
import json
import math
import tempfile
import time
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

import ipywidgets as W
import numpy as np
import plotly.graph_objects as go
import yaml

import xskbench
from xskbench import plotting
from xskbench import sweep as sweep_engine
from xskbench.compare import changed_keys, cover_letter, delta_rows, profile_diff
from xskbench.config import DEVICE_MODES, RunConfig
from xskbench.devices import DEVICES
from xskbench.export import cli_line, config_tag, export
from xskbench.fields import FieldInfo, fmt, iter_fields
from xskbench.sections import SECTIONS

#: The Explorer's default scenario is short, so that a redraw stays interactive.
DURATION_S = 0.002
WARMUP_S = 0.0005
SWEEP_POINTS = 7
_DESC = {"description_width": "135px"}
_CTRL_WIDTH = "380px"
_NUMERIC = (int, float)
#: Pixel width of the Explorer's figures: plotly cannot size a widget to its container
#: reliably (the container may not be in the page yet when it first draws).
FIG_WIDTH = 560
MIN_FIG_WIDTH, MAX_FIG_WIDTH = 400, 760
#: Changes that arrive within this time of the end of a run (they queued up behind it) run
#: once, the newest, this long after the last of them: a burst does not queue a run each.
DEBOUNCE_S = 0.015
TEMPLATES = {False: "plotly_white", True: "plotly_dark"}
#: Devices whose kernels this process has already run (compiled or loaded from the cache).
_WARM: set[str] = set()


# --- controls from field metadata ---------------------------------------------------------
def pow2_options(info: FieldInfo) -> list[int]:
    """The powers of two a pow2 field accepts (bounds default to 1 .. 2^20)."""
    lo = max(int(info.lo if info.lo is not None else 1), 1)
    hi = int(info.hi if info.hi is not None else 1 << 20)
    k = math.ceil(math.log2(lo))
    out = []
    while 2 ** k <= hi:
        out.append(2 ** k)
        k += 1
    return out


def _nice_step(span: float) -> float:
    return 10 ** math.floor(math.log10(span / 200))


def _on_grid(value: float, lo: float, step: float) -> bool:
    q = (value - lo) / step
    return abs(q - round(q)) < 1e-6


def _kind(info: FieldInfo, value: Any) -> str:
    """Which widget a field gets: checkbox, dropdown, pow2, slider or text."""
    if info.base is bool:
        return "checkbox"
    if info.choices:
        return "dropdown"
    if info.base is str:
        return "text"
    if info.pow2:
        return "pow2"
    bounded = info.lo is not None and info.hi is not None
    if info.widget in ("slider", "text"):
        return info.widget if bounded or info.widget == "text" else "text"
    if not bounded:
        return "text"
    span = info.hi - info.lo
    if info.base is int:
        return "slider" if span <= 10_000 else "text"
    step = info.step or _nice_step(span)
    values = [v for v in (value, info.default) if v is not None]
    if span <= 100 and all(_on_grid(v, info.lo, step) for v in values):
        return "slider"
    return "text"


def _placeholder(info: FieldInfo, kind: str) -> Any:
    """A value for an optional field's value widget while "none" is ticked."""
    lo, hi = info.lo, info.hi
    if info.choices:
        return info.choices[0]
    if info.base in (bool, str):
        return info.base()
    if kind == "pow2":
        opts = pow2_options(info)
        return opts[len(opts) // 2]
    if lo is None or hi is None:
        v = lo if lo is not None else hi if hi is not None else 0
    elif kind == "slider":
        step = info.step or (1 if info.base is int else _nice_step(hi - lo))
        v = lo + round((hi - lo) / 2 / step) * step
    else:  # a wide text field: a tenth of the upper bound, as a round number
        v = max(lo, 10 ** math.floor(math.log10(hi)) / 10) if hi > 0 else lo
    return info.base(v)


def _none_label(info: FieldInfo) -> str:
    """``"offered packet rate; none = unbounded"`` -> ``"unbounded"``."""
    _, sep, rest = info.doc.partition("none = ")
    return rest.strip().rstrip(".") if sep else "none"


def _tooltip(info: FieldInfo) -> str:
    unit = f" [{info.unit}]" if info.unit else ""
    return f"{info.path}{unit}: {info.doc}. Accepts {info.allowed()}; default {fmt(info.default)}."


def label(info: FieldInfo) -> str:
    """A control's label: the field's name and its unit, ``"irq_delay_ns (ns)"``."""
    return f"{info.name} ({info.unit})" if info.unit else info.name


def _value_widget(info: FieldInfo, kind: str, value: Any) -> W.ValueWidget:
    common = dict(description=label(info), tooltip=_tooltip(info), style=_DESC,
                  layout=W.Layout(width=_CTRL_WIDTH))
    if kind == "checkbox":
        return W.Checkbox(value=bool(value), indent=True, **common)
    if kind == "dropdown":
        return W.Dropdown(options=[(fmt(c), c) for c in info.choices], value=value, **common)
    if kind == "pow2":
        opts = pow2_options(info)
        if value not in opts:
            opts = sorted({*opts, value})
        return W.SelectionSlider(options=[(str(v), v) for v in opts], value=value,
                                 continuous_update=False, **common)
    if kind == "slider" and info.base is int:
        return W.IntSlider(value=value, min=int(info.lo), max=int(info.hi),
                           step=int(info.step or 1), continuous_update=False, **common)
    if kind == "slider":
        step = info.step or _nice_step(info.hi - info.lo)
        decimals = max(0, -math.floor(math.log10(step)))
        return W.FloatSlider(value=value, min=info.lo, max=info.hi, step=step,
                             readout_format=f".{decimals}f", continuous_update=False,
                             **common)
    if kind == "text" and info.base is str:
        return W.Text(value=value, continuous_update=False, **common)
    bounded = info.lo is not None and info.hi is not None
    if info.base is int:
        if bounded:
            return W.BoundedIntText(value=value, min=int(info.lo), max=int(info.hi),
                                    continuous_update=False, **common)
        return W.IntText(value=value, continuous_update=False, **common)
    if bounded:
        return W.BoundedFloatText(value=value, min=info.lo, max=info.hi, step=None,
                                  continuous_update=False, **common)
    return W.FloatText(value=value, step=None, continuous_update=False, **common)


class Control:
    """One config value in the Explorer: ``key`` (``"xsk.tx_size"``, ``"device"``), the
    displayed ``widget`` and a ``value`` (``None`` for an optional field left unbounded)."""

    def __init__(self, key: str, widget: W.Widget, value_widget: W.ValueWidget,
                 none_box: W.Checkbox | None = None, info: FieldInfo | None = None,
                 kind: str = "dropdown"):
        self.key, self.widget, self.value_widget = key, widget, value_widget
        self.none_box, self.info, self.kind = none_box, info, kind
        widget.add_class("xsk-field-" + key.replace(".", "-"))

    @property
    def value(self) -> Any:
        if self.none_box is not None and self.none_box.value:
            return None
        return self.value_widget.value

    @value.setter
    def value(self, value: Any) -> None:
        if self.none_box is not None:
            if value is None:
                self.none_box.value = True
                return
            self.value_widget.value = value  # set first: one change of the effective value
            self.none_box.value = False
            return
        self.value_widget.value = value

    def observe(self, callback: Callable[[dict], None]) -> None:
        self.value_widget.observe(callback, names="value")
        if self.none_box is not None:
            self.none_box.observe(callback, names="value")

    def __repr__(self) -> str:
        return f"Control({self.key!r}, {self.kind}, value={self.value!r})"


def make_control(info: FieldInfo, value: Any) -> Control:
    """The widget of one field, showing ``value``: bool -> Checkbox, choices -> Dropdown,
    pow2 -> SelectionSlider of powers of two, bounded numbers -> slider (narrow ranges) or
    bounded text box, Optional -> a "none" checkbox (labelled from the doc) + the value."""
    kind = _kind(info, value)
    shown = value if value is not None else _placeholder(info, kind)
    vw = _value_widget(info, kind, shown)
    if not info.optional:
        return Control(info.path, vw, vw, info=info, kind=kind)
    box = W.Checkbox(value=value is None, description=_none_label(info), indent=False,
                     tooltip=f"{info.path} = none: {info.doc}",
                     layout=W.Layout(width="auto"))
    vw.disabled = value is None
    box.observe(lambda ch: setattr(vw, "disabled", ch["new"]), names="value")
    return Control(info.path, W.HBox([vw, box]), vw, none_box=box, info=info, kind=kind)


def numeric_fields() -> list[FieldInfo]:
    """The fields a sweep can vary: ints and floats (optional or not), not bools."""
    return [info for cls in SECTIONS.values() for info in iter_fields(cls)
            if info.base in _NUMERIC and info.base is not bool]


def sweep_points(info: FieldInfo, current: Any, n: int = SWEEP_POINTS,
                 ref: float | None = None) -> list[Any]:
    """About ``n`` values of a numeric field around ``current``: its choices; neighbouring
    powers of two; ``current`` × 2^k; or, when current is 0/none, spread over the bounds
    (``ref`` stands in for an unset current value, e.g. the measured rate)."""
    if info.choices:
        return [c for c in info.choices if isinstance(c, _NUMERIC)][:8]
    lo = info.lo if info.lo is not None else -math.inf
    hi = info.hi if info.hi is not None else math.inf
    if info.pow2:
        opts = pow2_options(info)
        centre = current if current is not None else ref or opts[len(opts) // 2]
        i = min(range(len(opts)), key=lambda j: abs(math.log2(opts[j] / centre)))
        start = max(0, min(i - n // 2, len(opts) - n))
        return opts[start:start + n]
    c = current if current not in (None, 0) else ref
    if c:
        raw = [c * 2.0 ** k for k in range(-(n // 2), n - n // 2)]
    elif math.isfinite(lo) and math.isfinite(hi):
        if lo > 0 and hi / lo >= 100:
            raw = [lo * (hi / lo) ** (k / (n - 1)) for k in range(n)]
        else:
            raw = [lo + (hi - lo) * k / (n - 1) for k in range(n)]
    else:
        raw = [float(k) for k in range(n)]
    out: list[Any] = []
    for v in raw:
        v = min(max(v, lo), hi)
        v = round(v) if info.base is int else float(f"{v:.4g}")
        if v not in out:
            out.append(v)
    return sorted(out)


def run_sweep(cfg: Any, key: str, points: Sequence[Any]) -> list[Any]:
    """The emulator at each value of ``key`` (the sweep engine, uncached); an invalid point
    gives its one-line message."""
    return sweep_engine.outcomes(cfg, {key: list(points)})


# --- figure widgets -----------------------------------------------------------------------
def _spec(fig: Any) -> tuple[list[dict], dict]:
    """A figure's traces (without uid) and layout (without template) as plain dicts."""
    # per object, not fig.to_dict(): that turns numpy arrays into base64 ("bdata") dicts
    data = []
    for tr in fig.data:
        props = tr.to_plotly_json()
        props.pop("uid", None)
        props.setdefault("type", tr.type)
        data.append(props)
    layout = fig.layout.to_plotly_json()
    layout.pop("template", None)
    return data, layout


def _same(a: Any, b: Any) -> bool:
    if a is b:
        return True
    if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        try:
            return bool(np.array_equal(np.asarray(a), np.asarray(b)))
        except (TypeError, ValueError):
            return False
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_same(a[k], b[k]) for k in a)
    if isinstance(a, list | tuple) and isinstance(b, list | tuple):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b, strict=True))
    return type(a) is type(b) and a == b


def _changes(old: dict, new: dict) -> dict:
    out = {k: v for k, v in new.items() if k not in old or not _same(old[k], v)}
    out.update({k: None for k in old if k not in new})
    return out


def _restructure(fw: go.FigureWidget, data: list[dict]) -> int:
    """Add or remove traces where the structure changed; the number of traces kept."""
    k = 0
    while (k < min(len(fw.data), len(data))
           and fw.data[k].type == data[k].get("type", "scatter")):
        k += 1
    if k < len(fw.data):
        fw.data = fw.data[:k]
    if k < len(data):
        fw.add_traces(data[k:])
    return k


def _set_changed(fw: go.FigureWidget, spec: plotting.Spec, old: plotting.Spec, k: int) -> None:
    data, layout = spec
    for i in range(k):
        changed = _changes(old[0][i], data[i])
        changed.pop("type", None)
        if changed:
            fw.data[i].update(changed, overwrite=True)
    changed = _changes(old[1], layout)
    if changed:
        fw.layout.update(changed, overwrite=True)
    fw._xsk_sent = spec


def sync_figures(pairs: Sequence[tuple[go.FigureWidget, go.Figure | plotting.Spec]]) -> None:
    """Make each persistent widget show its figure (a figure or a plotting spec).  Traces
    are added or removed only where the structure changed; otherwise only the properties
    that differ from what was sent last are set, inside one ``batch_update`` per figure,
    all opened together: the browser gets every figure's change at the same moment."""
    todo = []
    for fw, fig in pairs:
        spec = fig if isinstance(fig, tuple) else _spec(fig)
        old = getattr(fw, "_xsk_sent", None) or _spec(fw)
        todo.append((fw, spec, old, _restructure(fw, spec[0])))
    with contextlib.ExitStack() as stack:
        for fw, *_ in todo:
            stack.enter_context(fw.batch_update())
        for fw, spec, old, k in todo:
            _set_changed(fw, spec, old, k)


def sync_figure(fw: go.FigureWidget, fig: go.Figure | plotting.Spec) -> None:
    """:func:`sync_figures` of one figure."""
    sync_figures([(fw, fig)])


# --- plotly's widget bundle, loaded once per page --------------------------------------------
# plotly's FigureWidget is an anywidget whose state carries plotly's 5 MB widget bundle as
# inline ES module source: every figure ships it again and the browser compiles it once per
# figure, in turn.  anywidget gives a widget 2 s to get ready and otherwise drops every
# later message to it - so on a busy machine the first figures of a session stay empty or
# stop updating.  Here one loader widget carries the bundle and imports it once; the
# figures' own module is a few lines that reuse it, and their comms open only once the
# loader has reported the bundle loaded, so they are ready at once.

_BUNDLE = Path(go.__file__).resolve().parent.parent / "package_data" / "widgetbundle.js"



def _bundle_key() -> str:
    """Names the bundle in the page (``Symbol.for``): plotly's version and the file's size."""
    import plotly

    size = _BUNDLE.stat().st_size if _BUNDLE.exists() else 0
    return f"xskbench.plotly-widget-bundle/{plotly.__version__}/{size}"


_FIGURE_ESM = """
const KEY = Symbol.for(%(key)s);
export default async () => {
  for (let i = 0; !globalThis[KEY]; i++) {  // set by the loader widget's module
    if (i > 2400) throw new Error("xskbench: plotly's widget bundle was never loaded");
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  const mod = await globalThis[KEY];
  return mod.default();
};
"""

_LOADER_ESM = """
const KEY = Symbol.for(%(key)s);
export default () => ({
  initialize({ model }) {
    if (!globalThis[KEY]) {
      const source = model.get("bundle");
      const url = URL.createObjectURL(new Blob([source], { type: "text/javascript" }));
      globalThis[KEY] = import(url).then((mod) => {
        // After every update a figure view sends plotly's full data and layout back to
        // the kernel: deep merges and diffs (~20 ms per change of three figures), then two
        // comm messages per figure that keep the kernel busy and JupyterLab's status
        // churning.  Nothing reads those defaults (the layout's never reaches Python).
        const view = mod.FigureView.prototype;
        view._sendTraceDeltas = view._sendLayoutDelta = () => {};
        return mod;
      }).finally(() => URL.revokeObjectURL(url));
    }
    globalThis[KEY].then(() => { model.set("loaded", true); model.save_changes(); });
    // JupyterLab's theme: figures follow light/dark
    const theme = () => {
      const dark = document.body.dataset.jpThemeLight === "false";
      if (model.get("dark") !== dark) { model.set("dark", dark); model.save_changes(); }
    };
    theme();
    new MutationObserver(theme).observe(document.body,
      { attributes: true, attributeFilter: ["data-jp-theme-light"] });
  },
  render({ model, el }) {
    // the width of the notebook's output area: figures size to the panel (found once
    // the view is in the page)
    let ro = null, timer = null, wait = null;
    const report = (host) => {
      clearTimeout(timer);
      timer = setTimeout(() => {
        const w = Math.round(host.clientWidth);
        if (w > 0 && Math.abs(w - model.get("width")) > 8) {
          model.set("width", w); model.save_changes();
        }
      }, 150);
    };
    const start = () => {
      if (!el.isConnected) { wait = setTimeout(start, 100); return; }
      const host = el.closest(".jp-OutputArea-output") || el.closest(".jp-Cell")
        || el.parentElement;
      ro = new ResizeObserver(() => report(host));
      ro.observe(host);
      report(host);
    };
    start();
    return () => { clearTimeout(wait); clearTimeout(timer); if (ro) ro.disconnect(); };
  },
});
"""


@functools.cache
def bundle_loader() -> Any:
    """The one widget (per kernel) that loads plotly's widget bundle into the page and
    reports ``loaded``; it draws nothing."""
    import anywidget
    import traitlets

    class PlotlyBundle(anywidget.AnyWidget):
        _esm = _LOADER_ESM % {"key": json.dumps(_bundle_key())}
        # the bundle travels as state, so that this widget's own module stays tiny and it
        # is ready at once
        bundle = traitlets.Unicode().tag(sync=True)
        loaded = traitlets.Bool(False).tag(sync=True)
        dark = traitlets.Bool(False).tag(sync=True)  # JupyterLab's dark theme is on
        width = traitlets.Int(0).tag(sync=True)  # px of the notebook's output area

    return PlotlyBundle(bundle=_BUNDLE.read_text(), layout=W.Layout(display="none"))


class FigureWidget(go.FigureWidget):
    """A ``go.FigureWidget`` that reuses the page's plotly bundle (see
    :func:`bundle_loader`) and opens its comm only when :meth:`show` is called: the first
    message then carries the whole current figure.  Before that it is a plain Python
    object that is updated like any FigureWidget."""

    _esm = _FIGURE_ESM % {"key": json.dumps(_bundle_key())}

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        self._xsk_deferred = True
        super().__init__(*args, **kwargs)

    def open(self) -> None:
        if not getattr(self, "_xsk_deferred", False):
            super().open()

    def show(self) -> None:
        """Open the comm: the browser gets the figure as it is now."""
        if self.comm is not None:
            return
        self._widget_data = copy.deepcopy(self._data)
        self._widget_layout = copy.deepcopy(self._layout_obj._props)
        self._py2js_update = None  # the figure above has every update already
        self._layout_edit_in_process = self._trace_edit_in_process = False
        self._xsk_deferred = False
        self.open()

    def _send_update_msg(self, restyle_data: dict, relayout_data: dict,
                         trace_indexes: Any = None, source_view_id: Any = None) -> None:
        """plotly's Plotly.update message as one comm message, not four: plotly sets both
        edit ids, the update and then ``None`` (so that an equal update fires again), each
        a message the page handles in a task of its own (1-6 ms each on 8 Dec).  The edit
        ids make every update differ.  The page never reports an edit back (the loader's
        patch), so none stays in process."""
        with self.hold_sync():
            self._last_trace_edit_id += 1
            self._last_layout_edit_id += 1
            self._py2js_update = {
                "style_data": restyle_data, "layout_data": relayout_data,
                "style_traces": self._normalize_trace_indexes(trace_indexes),
                "trace_edit_id": self._last_trace_edit_id,
                "layout_edit_id": self._last_layout_edit_id,
                "source_view_id": source_view_id}


def _sized(spec: plotting.Spec, width: int = FIG_WIDTH) -> plotting.Spec:
    data, layout = spec
    return data, dict(layout, width=width)


def figure_width(panel_px: int) -> int:
    """Figure width for an output area ``panel_px`` wide: two per row when they can be at
    least MIN_FIG_WIDTH (a 2×2 grid on a 1440 px screen with the file browser open), else
    one filling the row."""
    if panel_px <= 0:
        return FIG_WIDTH
    two = (panel_px - 40) // 2
    return int(min(two, MAX_FIG_WIDTH) if two >= MIN_FIG_WIDTH
               else max(panel_px - 30, 320))


def _figure_widget(spec: plotting.Spec | None, title: str = "",
                   template: str = plotting.TEMPLATE) -> go.FigureWidget:
    if spec is None:
        return FigureWidget([], layout=dict(height=plotting.HEIGHT, width=FIG_WIDTH,
                                            template=template, title=dict(text=title)))
    # Layout at construction: set afterwards, it is missing at the first render.
    fig = plotting.figure(spec, template)
    fw = FigureWidget(fig.data, layout=fig.layout.to_plotly_json())
    fw._xsk_sent = spec
    return fw


def _pre(text: str) -> str:
    return ("<pre style='font-size:12px;line-height:1.3;margin:0'>"
            f"{html.escape(text)}</pre>")


# --- the Explorer -------------------------------------------------------------------------
class Explorer:
    """Controls for every config field, four live figures, the bottleneck, the report,
    a pinned run to compare with, save/load of the config and an export button.  Display
    it as the last expression of a cell.

    ``config`` is the starting configuration; by default the null device with a short
    emulated duration (``duration_s``) so that each change redraws in well under a second.
    Files (exports, saved configs, cover letters) go under ``export_stem``'s folder, which
    is gitignored, with the config's hash in their names.
    """

    VIEWS = ("cpu", "sweep", "occupancy", "profile")

    def __init__(self, config: Any = None, *, duration_s: float = DURATION_S,
                 warmup_s: float = WARMUP_S, sweep_key: str | None = "xsk.batch_size",
                 export_stem: str = "exports/xskbench", debounce_s: float = DEBOUNCE_S) -> None:
        if config is None:
            config = RunConfig().replace(**{"workload.duration_s": duration_s,
                                            "workload.warmup_s": warmup_s})
        self.config = config
        self.result: Any = None
        self.pinned: Any = None
        self.cover_text = ""
        self.error: str = ""
        self.last_update_s = math.nan
        self.runs = 0  # runs done (a change that a later one superseded never runs)
        self.debounce_s = debounce_s
        self.sweep_data: tuple[str, list, list, Any] | None = None
        self._holding = False
        self._sweep_stale = False
        self._pending = 0  # the newest change: a scheduled run of an older one is dropped
        self._ran_at = -math.inf  # perf_counter() at the end of the last scheduled run
        loader = bundle_loader()
        self.template = TEMPLATES[bool(loader.dark)]
        self.fig_width = figure_width(loader.width)

        # controls
        self.controls: dict[str, Control] = {}
        dev = W.Dropdown(options=list(DEVICE_MODES), value=config.device, description="device",
                         style=_DESC, layout=W.Layout(width="300px"))
        mode = W.Dropdown(options=list(DEVICE_MODES[config.device]), value=config.mode,
                          description="mode", style=_DESC, layout=W.Layout(width="300px"))
        self.controls["device"] = Control("device", dev, dev)
        self.controls["mode"] = Control("mode", mode, mode)
        tabs = []
        for name, cls in SECTIONS.items():
            section = getattr(config, name)
            ctrls = [make_control(info, getattr(section, info.name))
                     for info in iter_fields(cls)]
            for c in ctrls:
                self.controls[c.key] = c
            doc = (cls.__doc__ or "").strip().splitlines()[0] if cls.__doc__ else ""
            head = W.HTML(f"<i>{html.escape(doc)}</i>" if ctrls else
                          f"<i>{html.escape(doc)}</i><br>(no settings yet)")
            grid = W.GridBox([c.widget for c in ctrls], layout=W.Layout(
                grid_template_columns="repeat(auto-fill, minmax(400px, 1fr))",
                grid_gap="2px 12px"))
            tabs.append(W.VBox([head, grid]))
        self.sections = W.Tab(children=tabs, titles=list(SECTIONS))
        self.sections.selected_index = 0

        # outputs
        self.message = W.HTML("")
        self.message.add_class("xsk-message")
        self.bottleneck = W.HTML("")
        self.bottleneck.add_class("xsk-bottleneck")
        self.status = W.HTML("")
        self.status.add_class("xsk-status")
        self.report = W.HTML("")
        self.report.add_class("xsk-report")
        self.cli = W.HTML("")
        self.cli.add_class("xsk-cli")
        self.compare = W.HTML("")
        self.compare.add_class("xsk-compare")

        # first run and the persistent figure widgets
        self.update()
        figs = self._specs() if self.result is not None else {}
        self.figures: dict[str, go.FigureWidget] = {
            v: _figure_widget(figs.get(v), title=v, template=self.template)
            for v in self.VIEWS if v != "sweep"}

        # sweep
        knobs = [i.path for i in numeric_fields()]
        self.sweep_knob = W.Dropdown(
            options=knobs, value=sweep_key if sweep_key in knobs else knobs[0],
            description="sweep", style={"description_width": "45px"},
            layout=W.Layout(width="270px"))
        self.sweep_knob.add_class("xsk-sweep-knob")
        self.sweep_button = W.Button(description="Sweep", icon="play",
                                     tooltip=f"run ~{SWEEP_POINTS} points of the knob",
                                     layout=W.Layout(width="90px"))
        self.sweep_follow = W.Checkbox(value=False, description="follow changes", indent=False,
                                       layout=W.Layout(width="auto"))
        self.sweep_view = W.ToggleButtons(
            options=[("pps vs knob", "knob"), ("pps vs CPU", "cpu")], value="knob",
            tooltips=["packet rate and the bottleneck's CPU against the knob",
                      "throughput versus total CPU, one point per knob value"],
            style={"button_width": "110px"})
        self.sweep_view.add_class("xsk-sweep-view")
        self.sweep_status = W.HTML("")
        self.figures["sweep"] = _figure_widget(None, title="sweep", template=self.template)
        if sweep_key is not None and self.result is not None:
            self.run_sweep()
        self.sweep_knob.observe(lambda _: self.run_sweep(), names="value")
        self.sweep_button.on_click(lambda _: self.run_sweep())
        self.sweep_view.observe(lambda _: self._draw_sweep(), names="value")

        # compare
        self.pin_button = W.Button(description="Pin this run", icon="thumb-tack",
                                   tooltip="keep this run and compare the next ones with it")
        self.pin_button.add_class("xsk-pin")
        self.pin_button.on_click(lambda _: self.pin())
        self.unpin_button = W.Button(description="Unpin", icon="times",
                                     layout=W.Layout(width="90px"))
        self.unpin_button.on_click(lambda _: self.unpin())
        self.cover_seeds = W.BoundedIntText(value=5, min=2, max=50, description="seeds",
                                            style={"description_width": "45px"},
                                            layout=W.Layout(width="120px"))
        self.cover_button = W.Button(description="Cover letter", icon="envelope",
                                     tooltip="pinned vs current over N seeds: mean ± sd, gain")
        self.cover_button.on_click(lambda _: self.write_cover_letter())
        self.cover_out = W.HTML("")
        self._draw_compare()

        # save / load
        self.file_stem = W.Text(value=str(Path(export_stem).parent / "config"),
                                description="save as", style={"description_width": "55px"},
                                layout=W.Layout(width="300px"))
        self.save_yaml = W.Button(description="Save YAML", icon="save",
                                  layout=W.Layout(width="110px"))
        self.save_json = W.Button(description="Save JSON", icon="save",
                                  layout=W.Layout(width="110px"))
        self.save_yaml.on_click(lambda _: self.save("yaml"))
        self.save_json.on_click(lambda _: self.save("json"))
        self.load_path = W.Text(placeholder="a .yaml/.json config or an export's .json",
                                description="load", style={"description_width": "55px"},
                                layout=W.Layout(width="380px"))
        self.load_button = W.Button(description="Load", icon="folder-open",
                                    layout=W.Layout(width="90px"))
        self.load_button.on_click(lambda _: self.load(self.load_path.value))
        self.upload = W.FileUpload(accept=".yaml,.yml,.json", multiple=False,
                                   description="Upload")
        self.upload.observe(self._on_upload, names="value")
        self.file_out = W.HTML("")

        # export
        self.export_stem = W.Text(value=export_stem, description="stem", style=_DESC,
                                  layout=W.Layout(width="420px"))
        self.export_view = W.Dropdown(options=self.VIEWS, value="cpu", description="view",
                                      style={"description_width": "40px"},
                                      layout=W.Layout(width="180px"))
        self.export_button = W.Button(description="Export", icon="download",
                                      tooltip="PNG, SVG, PDF, HTML, CSV, JSON and text")
        self.export_out = W.HTML("")
        self.export_button.on_click(lambda _: self.export())

        for c in self.controls.values():
            if c.key == "device":
                c.observe(self._on_device)
            else:
                c.observe(self._on_change)
        self.widget = self._assemble()
        loader.observe(self._on_theme, names="dark")
        loader.observe(self._on_width, names="width")
        if loader.loaded:
            self._show_figures()
        else:
            loader.observe(self._on_bundle, names="loaded")

    # --- layout -----------------------------------------------------------------------------
    def _assemble(self) -> W.Widget:
        # Each figure sits in a slot that shows a placeholder until the browser has
        # plotly's bundle (see bundle_loader): then the FigureWidget's comm opens.
        self._slots = {name: W.Box([W.HTML("<i style='color:#888'>loading plotly…</i>")],
                                   layout=W.Layout(width=f"{self.fig_width}px",
                                                   min_height=f"{plotting.HEIGHT}px"))
                       for name in self.figures}

        def cell(w: W.Widget, name: str) -> W.Box:
            box = W.Box([w], layout=W.Layout(flex="0 0 auto", margin="0 8px 0 0"))
            box.add_class(f"xsk-fig-{name}")
            return box

        row = dict(flex_flow="row wrap", width="100%")
        sweep = W.VBox([W.HBox([self.sweep_knob, self.sweep_button, self.sweep_follow],
                               layout=W.Layout(flex_flow="row wrap")),
                        self.sweep_view, self.sweep_status, self._slots["sweep"]])
        compare = W.VBox([
            W.HBox([self.pin_button, self.unpin_button, self.cover_seeds, self.cover_button],
                   layout=W.Layout(flex_flow="row wrap")),
            self.compare, self.cover_out])
        files = W.VBox([
            W.HBox([self.file_stem, self.save_yaml, self.save_json],
                   layout=W.Layout(flex_flow="row wrap")),
            W.HBox([self.load_path, self.load_button, self.upload],
                   layout=W.Layout(flex_flow="row wrap")),
            self.file_out,
        ])
        more = W.Accordion(children=[
            self.report, files,
            W.VBox([W.HBox([self.export_stem, self.export_view, self.export_button]),
                    self.export_out]),
        ], titles=("report (xdpsock style)", "save / load the config", "export"))
        more.selected_index = 0
        head = W.HBox([self.controls["device"].widget, self.controls["mode"].widget,
                       self.status], layout=W.Layout(flex_flow="row wrap"))
        ui = W.VBox([
            W.HTML("<b>xskbench Explorer</b>: every change re-runs the emulation"),
            head, self.sections, self.message, self.bottleneck, self.cli,
            W.HBox([cell(self._slots["cpu"], "cpu"), cell(self._slots["profile"], "profile")],
                   layout=W.Layout(**row)),
            W.HBox([cell(self._slots["occupancy"], "occupancy"), cell(sweep, "sweep")],
                   layout=W.Layout(**row)),
            compare, more, bundle_loader(),
        ])
        ui.add_class("xsk-explorer")
        return ui

    def _on_bundle(self, change: dict) -> None:
        if change["new"]:
            bundle_loader().unobserve(self._on_bundle, names="loaded")
            self._show_figures()

    def _show_figures(self) -> None:
        for name, fw in self.figures.items():
            fw.show()
            if self._slots[name].children != (fw,):
                self._slots[name].children = (fw,)

    def _on_theme(self, change: dict) -> None:
        """JupyterLab switched light/dark: the figures follow."""
        self.template = TEMPLATES[bool(change["new"])]
        for fw in self.figures.values():
            fw.update_layout(template=self.template)

    def _on_width(self, change: dict) -> None:
        """The notebook panel was resized: the figures follow (two per row if they fit)."""
        width = figure_width(change["new"])
        if width == self.fig_width:
            return
        self.fig_width = width
        for slot in self._slots.values():
            slot.layout.width = f"{width}px"
        pairs = [(fw, _sized(fw._xsk_sent, width)) for fw in self.figures.values()
                 if getattr(fw, "_xsk_sent", None)]
        sync_figures(pairs)

    def _repr_mimebundle_(self, **kwargs: Any) -> Any:
        return self.widget._repr_mimebundle_(**kwargs)

    # --- config -----------------------------------------------------------------------------
    def config_from_controls(self) -> Any:
        """The RunConfig the controls describe (ValueError if the combination is invalid)."""
        data: dict[str, Any] = {"device": self.controls["device"].value,
                                "mode": self.controls["mode"].value}
        for name, cls in SECTIONS.items():
            data[name] = {i.name: self.controls[i.path].value for i in iter_fields(cls)}
        return RunConfig.from_dict(data)

    @contextlib.contextmanager
    def hold(self) -> Iterator[None]:
        """Change several controls, then run once: ``with ex.hold(): ...``."""
        outer = self._holding
        with self._quiet():
            yield
        if not outer:
            self.update()

    def set(self, **changes: Any) -> None:
        """Set controls by key at once: ``ex.set(**{"xsk.tx_size": 512, "mode": "copy"})``."""
        with self.hold():
            for key, value in changes.items():
                if key == "device":
                    self._set_device(value)
                else:
                    self.controls[key].value = value

    def apply(self, cfg: Any) -> None:
        """Show (and run) a whole RunConfig on the controls."""
        changes: dict[str, Any] = {"device": cfg.device, "mode": cfg.mode}
        for name, cls in SECTIONS.items():
            section = getattr(cfg, name)
            changes.update({i.path: getattr(section, i.name) for i in iter_fields(cls)})
        self.set(**changes)

    def _set_device(self, device: str) -> None:
        ctrl_dev, ctrl_mode = self.controls["device"], self.controls["mode"]
        with self._quiet():
            ctrl_dev.value = device
            modes = list(DEVICE_MODES.get(device, ()))
            keep = ctrl_mode.value if ctrl_mode.value in modes else (modes or [None])[0]
            ctrl_mode.value_widget.options = modes
            ctrl_mode.value_widget.value = keep
        section = DEVICES[device].section_name if device in DEVICES else None
        if section is not None:
            self.sections.selected_index = list(SECTIONS).index(section)

    @contextlib.contextmanager
    def _quiet(self) -> Iterator[None]:
        outer = self._holding
        self._holding = True
        try:
            yield
        finally:
            self._holding = outer

    def _on_device(self, change: dict) -> None:
        if self._holding:
            return
        with self._quiet():
            self._set_device(change["new"])
        self.request()

    def _on_change(self, _change: dict) -> None:
        if not self._holding:
            self.request()

    # --- running and drawing ------------------------------------------------------------
    def request(self) -> None:
        """A control changed: run the controls' config.  In a kernel (an event loop is
        running) the run is scheduled, and only the newest change's runs: changes made in
        one go (one callback) run once.  The run starts at once when the kernel has been
        idle for DEBOUNCE_S; right after a run (changes that queued up behind it) it starts
        DEBOUNCE_S later, so a burst runs once, with the last values.  Elsewhere (tests,
        scripts) it runs synchronously.  (The browser itself holds back a control's next
        change until the kernel has handled the previous one.)"""
        self._pending += 1
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            loop = None
        if loop is None or self.debounce_s <= 0:
            self.update()
            return
        self._show_state(self.controls["device"].value)
        if time.perf_counter() - self._ran_at >= self.debounce_s:
            loop.call_soon(self._run_if_newest, self._pending)
        else:
            loop.call_later(self.debounce_s, self._run_if_newest, self._pending)

    def _run_if_newest(self, generation: int) -> None:
        if generation == self._pending:
            self.update()
            self._ran_at = time.perf_counter()

    def _show_state(self, device: str) -> None:
        text = ("compiling kernels (first use)…" if device not in _WARM else "running…")
        self.status.value = f"<span class='xsk-busy' style='color:#b60'>{text}</span>"

    def _specs(self) -> dict[str, plotting.Spec]:
        """The single-result views as plotting specs (plain dicts: no plotly validation)."""
        return {name: _sized(build(self.result), self.fig_width)
                for name, build in plotting.SPECS.items()}

    def update(self) -> bool:
        """Run the configuration on the controls and redraw; False (and a message in the
        widget) if it is invalid or the run fails."""
        t0 = time.perf_counter()
        try:
            cfg = self.config_from_controls()
        except ValueError as err:
            return self._fail(f"Invalid configuration: {err}")
        first = cfg.device not in _WARM
        self._show_state(cfg.device)
        try:
            res = xskbench.run(cfg)
        except ValueError as err:
            return self._fail(f"Cannot run this configuration: {err}")
        except Exception as err:  # noqa: BLE001 - shown in the widget, never a traceback
            return self._fail(f"The run failed ({type(err).__name__}): {err}")
        _WARM.add(cfg.device)
        self.config, self.result, self.error = cfg, res, ""
        self.runs += 1
        t_run = time.perf_counter() - t0
        self.message.value = ""
        if hasattr(self, "figures"):
            specs = self._specs()
            sync_figures([(self.figures[name], spec) for name, spec in specs.items()])
            if self.sweep_follow.value:
                self.run_sweep()
            elif self.sweep_data is not None:
                self._sweep_stale = True
                self.sweep_status.value = "<i>config changed: press Sweep</i>"
            self._draw_compare()
        self.bottleneck.value = (f"<b>{html.escape(plotting.bottleneck_line(res))}</b>")
        self.cli.value = ("<span style='color:#666'>as CLI:</span> <code style='user-select:"
                          f"all'>{html.escape(cli_line(cfg))}</code>")
        self.report.value = _pre(res.report())
        self.last_update_s = time.perf_counter() - t0
        what = (f"first {cfg.device} run in this kernel: {t_run:.1f} s, mostly compiling "
                "or loading its kernels" if first else
                f"ran {res.window_s * 1e3:.3g} ms emulated in {t_run * 1e3:.0f} ms")
        self.status.value = (f"<span class='xsk-done' data-run='{self.runs}' "
                             f"style='color:#666'>{what}; drawn in "
                             f"{(self.last_update_s - t_run) * 1e3:.0f} ms</span>")
        return True

    def _fail(self, text: str) -> bool:
        self.error = text
        self.status.value = "<span class='xsk-done' style='color:#a00'>not run</span>"
        self.message.value = (
            "<div style='color:#a00;background:#fee;border:1px solid #e99;padding:4px 8px;"
            f"white-space:pre-wrap'>{html.escape(text)}<br><i>The figures show the last "
            "valid configuration.</i></div>")
        return False

    def run_sweep(self) -> None:
        """Run the sweep of the chosen knob around the current configuration."""
        if self.result is None:
            self.sweep_status.value = "<i>no valid configuration to sweep</i>"
            return
        key = self.sweep_knob.value
        section, _, name = key.partition(".")
        info = next(i for i in iter_fields(SECTIONS[section]) if i.name == name)
        current = getattr(getattr(self.config, section), name)
        ref = max(self.result.pps.values()) if info.unit == "pps" else None
        points = sweep_points(info, current, ref=ref)
        t0 = time.perf_counter()
        self.sweep_status.value = "<i>sweeping…</i>"
        results = run_sweep(self.config, key, points)
        self.sweep_data = (key, points, results, self.config)
        self._draw_sweep()
        self._sweep_stale = False
        self.sweep_status.value = (f"<span style='color:#666'>{len(points)} points in "
                                   f"{time.perf_counter() - t0:.1f} s</span>")

    def sweep_spec(self) -> plotting.Spec:
        """The sweep as shown: against the knob, or throughput versus CPU."""
        key, points, results, base = self.sweep_data
        build = plotting.sweep_cpu_spec if self.sweep_view.value == "cpu" else \
            plotting.sweep_spec
        return build(key, points, results, base=base)

    def _draw_sweep(self) -> None:
        if self.sweep_data is not None:
            sync_figure(self.figures["sweep"], _sized(self.sweep_spec(), self.fig_width))

    # --- compare ------------------------------------------------------------------------
    def pin(self) -> None:
        """Keep the current run: the next ones are shown against it (the delta table)."""
        self.pinned = self.result
        self._draw_compare()

    def unpin(self) -> None:
        self.pinned = None
        self.cover_out.value = ""
        self._draw_compare()

    def _draw_compare(self) -> None:
        if self.pinned is None or self.result is None:
            self.compare.value = ("<i style='color:#666'>Pin this run, change something: "
                                  "the table compares the two.</i>")
            return
        self.compare.value = compare_html(self.pinned, self.result)

    def write_cover_letter(self, n: int | None = None) -> str:
        """The pinned and the current config over ``n`` seeds (default: the box) as a
        cover-letter block; shown, and written next to the exports."""
        if self.pinned is None:
            self.cover_out.value = "<i>pin a run first</i>"
            return ""
        n = n or self.cover_seeds.value
        self.cover_out.value = f"<i>running both configs over {n} seeds…</i>"
        text = cover_letter(self.pinned.config, self.config, n)
        path = self._unique(Path(self.export_stem.value).parent / "cover", self.config, "txt")
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
        self.cover_text = text
        self.cover_out.value = _pre(text) + f"wrote <code>{html.escape(str(path))}</code>"
        return text

    # --- files ----------------------------------------------------------------------------
    @staticmethod
    def _unique(stem: Path, cfg: Any, suffix: str) -> Path:
        """``stem-<config hash>.suffix``: a file per configuration, never overwritten by
        another one."""
        return stem.with_name(f"{stem.name}-{config_tag(cfg)}.{suffix}")

    def save(self, fmt_: str = "yaml", stem: str | Path | None = None) -> Path | None:
        """Write the current config as ``<stem>-<hash>.yaml`` or ``.json``; loads back with
        ``xskbench.load`` (or the Load button)."""
        try:
            cfg = self.config_from_controls()
            path = self._unique(Path(stem or self.file_stem.value), cfg, fmt_)
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(cfg.to_json() + "\n" if fmt_ == "json" else
                            yaml.safe_dump(cfg.to_dict(), sort_keys=False))
        except (ValueError, OSError) as err:
            self.file_out.value = f"<span style='color:#a00'>{html.escape(str(err))}</span>"
            return None
        self.file_out.value = f"saved <code>{html.escape(str(path))}</code>"
        return path

    def load(self, path: str | Path) -> bool:
        """Load a config file (YAML, JSON, or the JSON an export wrote) onto the controls
        and run it."""
        try:
            cfg = xskbench.load(path)
        except ValueError as err:
            self.file_out.value = f"<span style='color:#a00'>{html.escape(str(err))}</span>"
            return False
        self.apply(cfg)
        self.file_out.value = f"loaded <code>{html.escape(str(path))}</code>"
        return True

    def _on_upload(self, change: dict) -> None:
        files = change["new"]
        if not files:
            return
        item = files[0]
        with tempfile.TemporaryDirectory() as tmp:
            path = Path(tmp) / Path(item["name"]).name
            path.write_bytes(bytes(item["content"]))
            self.load(path)

    # --- export -------------------------------------------------------------------------
    def export(self, view: str | None = None, stem: str | Path | None = None) -> dict:
        """Export one view (default: the dropdown's) as ``<stem>-<view>-<config hash>.*``
        (default stem: the text box), with :func:`xskbench.export`; returns format -> path
        (empty, and a message in the widget, if it failed)."""
        view = view or self.export_view.value
        stem = Path(stem or self.export_stem.value)
        self.export_out.value = "<i>exporting…</i>"
        try:
            if self.result is None:
                raise ValueError("nothing to export: no valid run yet")
            cfg = self.sweep_data[3] if view == "sweep" and self.sweep_data else self.config
            stem = stem.with_name(f"{stem.name}-{view}-{config_tag(cfg)}")
            if view == "cpu":
                paths = export(self.result, stem)
            elif view == "sweep":
                if self.sweep_data is None:
                    raise ValueError("no sweep yet: press Sweep first")
                paths = export(plotting.figure(self.sweep_spec()), stem)
            else:
                paths = export(plotting.FIGURES[view](self.result), stem, result=self.result)
        except Exception as err:  # noqa: BLE001 - shown in the widget
            self.export_out.value = (f"<span style='color:#a00'>export failed: "
                                     f"{html.escape(str(err))}</span>")
            return {}
        self.export_out.value = "wrote " + ", ".join(
            f"<code>{html.escape(str(p))}</code>" for p in paths.values())
        return paths


def compare_html(before: Any, after: Any) -> str:
    """The delta table of two runs (pinned, current) and their perf-diff rows, as HTML."""
    def num(v: float) -> str:
        return f"{v:,.0f}" if abs(v) >= 1e4 else f"{v:.2f}"

    changed = changed_keys(before.config, after.config)
    rows = "".join(
        f"<tr><td>{html.escape(name)}</td><td>{num(b)}</td><td>{num(a)}</td>"
        f"<td>{num(d)}</td><td>{(100 * d / b if b else math.nan):+.1f} %</td></tr>"
        for name, b, a, d in delta_rows(before, after))
    perf = "".join(
        f"<tr><td>{html.escape(sym)}</td><td>{base:.2f} %</td><td>{d:+.2f} %</td></tr>"
        for sym, base, d in profile_diff(before, after))
    style = "<style>.xsk-compare td,.xsk-compare th{padding:1px 8px;text-align:right}" \
            ".xsk-compare td:first-child{text-align:left}</style>"
    return (f"{style}<b>pinned → current</b>: {html.escape(' '.join(changed) or 'same config')}"
            "<div style='display:flex;flex-wrap:wrap;gap:24px;align-items:flex-start'>"
            "<table class='xsk-delta'><tr><th></th><th>pinned</th><th>current</th><th>Δ</th>"
            f"<th>Δ %</th></tr>{rows}</table>"
            "<table class='xsk-perfdiff'><tr><th>perf diff: symbol [context]</th>"
            f"<th>Baseline</th><th>Delta</th></tr>{perf}</table></div>")
