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

import contextlib
import copy
import functools
import html
import json
import math
import time
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

import ipywidgets as W
import numpy as np
import plotly.graph_objects as go

import xskbench
from xskbench import plotting
from xskbench.config import DEVICE_MODES, RunConfig
from xskbench.devices import DEVICES
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


def _value_widget(info: FieldInfo, kind: str, value: Any) -> W.ValueWidget:
    common = dict(description=info.name, tooltip=_tooltip(info), style=_DESC,
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
    """``xskbench.run`` at each value of ``key``; an invalid point gives its message."""
    out: list[Any] = []
    for v in points:
        try:
            out.append(xskbench.run(cfg.replace(**{key: v})))
        except ValueError as err:
            out.append(str(err))
    return out


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


def sync_figure(fw: go.FigureWidget, fig: go.Figure | plotting.Spec) -> None:
    """Make the persistent widget ``fw`` show ``fig`` (a figure or a plotting spec).
    Traces are added or removed only if the structure changed; otherwise only the
    properties that differ from what was sent last are set, all in one ``batch_update``
    (one message to the browser)."""
    data, layout = fig if isinstance(fig, tuple) else _spec(fig)
    old_data, old_layout = getattr(fw, "_xsk_sent", None) or _spec(fw)
    k = 0
    while (k < min(len(fw.data), len(data))
           and fw.data[k].type == data[k].get("type", "scatter")):
        k += 1
    if k < len(fw.data):
        fw.data = fw.data[:k]
    if k < len(data):
        fw.add_traces(data[k:])
    with fw.batch_update():
        for i in range(k):
            changed = _changes(old_data[i], data[i])
            changed.pop("type", None)
            if changed:
                fw.data[i].update(changed, overwrite=True)
        changed = _changes(old_layout, layout)
        if changed:
            fw.layout.update(changed, overwrite=True)
    fw._xsk_sent = (data, layout)


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
      globalThis[KEY] = import(url).finally(() => URL.revokeObjectURL(url));
    }
    globalThis[KEY].then(() => { model.set("loaded", true); model.save_changes(); });
  },
  render() {},
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
        self._layout_edit_in_process = self._trace_edit_in_process = False
        self._xsk_deferred = False
        self.open()


def _sized(spec: plotting.Spec) -> plotting.Spec:
    data, layout = spec
    return data, dict(layout, width=FIG_WIDTH)


def _figure_widget(spec: plotting.Spec | None, title: str = "") -> go.FigureWidget:
    if spec is None:
        return FigureWidget([], layout=dict(height=plotting.HEIGHT, width=FIG_WIDTH,
                                            template=plotting.TEMPLATE,
                                            title=dict(text=title)))
    # Layout at construction: set afterwards, it is missing at the first render.
    fig = plotting.figure(spec)
    fw = FigureWidget(fig.data, layout=fig.layout.to_plotly_json())
    fw._xsk_sent = spec
    return fw


def _pre(text: str) -> str:
    return ("<pre style='font-size:12px;line-height:1.3;margin:0'>"
            f"{html.escape(text)}</pre>")


# --- the Explorer -------------------------------------------------------------------------
class Explorer:
    """Controls for every config field, four live figures, the bottleneck, the report and
    an export button.  Display it as the last expression of a cell.

    ``config`` is the starting configuration; by default the null device with a short
    emulated duration (``duration_s``) so that each change redraws in well under a second.
    """

    VIEWS = ("cpu", "sweep", "occupancy", "profile")

    def __init__(self, config: Any = None, *, duration_s: float = DURATION_S,
                 warmup_s: float = WARMUP_S, sweep_key: str | None = "xsk.batch_size",
                 export_stem: str = "exports/xskbench") -> None:
        if config is None:
            config = RunConfig().replace(**{"workload.duration_s": duration_s,
                                            "workload.warmup_s": warmup_s})
        self.config = config
        self.result: Any = None
        self.error: str = ""
        self.last_update_s = math.nan
        self.sweep_data: tuple[str, list, list, Any] | None = None
        self._holding = False
        self._sweep_stale = False

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

        # first run and the persistent figure widgets
        self.update()
        figs = self._specs() if self.result is not None else {}
        self.figures: dict[str, go.FigureWidget] = {
            v: _figure_widget(figs.get(v), title=v) for v in self.VIEWS if v != "sweep"}

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
        self.sweep_status = W.HTML("")
        self.figures["sweep"] = _figure_widget(None, title="sweep")
        if sweep_key is not None and self.result is not None:
            self.run_sweep()
        self.sweep_knob.observe(lambda _: self.run_sweep(), names="value")
        self.sweep_button.on_click(lambda _: self.run_sweep())

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
        loader = bundle_loader()
        if loader.loaded:
            self._show_figures()
        else:
            loader.observe(self._on_bundle, names="loaded")

    # --- layout -----------------------------------------------------------------------------
    def _assemble(self) -> W.Widget:
        # Each figure sits in a slot that shows a placeholder until the browser has
        # plotly's bundle (see bundle_loader): then the FigureWidget's comm opens.
        self._slots = {name: W.Box([W.HTML("<i style='color:#888'>loading plotly…</i>")],
                                   layout=W.Layout(width=f"{FIG_WIDTH}px",
                                                   min_height=f"{plotting.HEIGHT}px"))
                       for name in self.figures}

        def cell(w: W.Widget, name: str) -> W.Box:
            box = W.Box([w], layout=W.Layout(flex="0 0 auto", margin="0 8px 0 0"))
            box.add_class(f"xsk-fig-{name}")
            return box

        row = dict(flex_flow="row wrap", width="100%")
        sweep = W.VBox([W.HBox([self.sweep_knob, self.sweep_button, self.sweep_follow],
                               layout=W.Layout(flex_flow="row wrap")),
                        self.sweep_status, self._slots["sweep"]])
        more = W.Accordion(children=[
            self.report,
            W.VBox([W.HBox([self.export_stem, self.export_view, self.export_button]),
                    self.export_out]),
        ], titles=("report (xdpsock style)", "export"))
        more.selected_index = 0
        head = W.HBox([self.controls["device"].widget, self.controls["mode"].widget,
                       self.status])
        ui = W.VBox([
            W.HTML("<b>xskbench Explorer</b>: every change re-runs the emulation"),
            head, self.sections, self.message, self.bottleneck,
            W.HBox([cell(self._slots["cpu"], "cpu"), cell(self._slots["profile"], "profile")],
                   layout=W.Layout(**row)),
            W.HBox([cell(self._slots["occupancy"], "occupancy"), cell(sweep, "sweep")],
                   layout=W.Layout(**row)),
            more, bundle_loader(),
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
        with self.hold():
            self._set_device(change["new"])

    def _on_change(self, _change: dict) -> None:
        if not self._holding:
            self.update()

    # --- running and drawing ------------------------------------------------------------
    def _specs(self) -> dict[str, plotting.Spec]:
        """The single-result views as plotting specs (plain dicts: no plotly validation)."""
        return {name: _sized(build(self.result)) for name, build in plotting.SPECS.items()}

    def update(self) -> bool:
        """Run the configuration on the controls and redraw; False (and a message in the
        widget) if it is invalid or the run fails."""
        t0 = time.perf_counter()
        try:
            cfg = self.config_from_controls()
        except ValueError as err:
            return self._fail(f"Invalid configuration: {err}")
        try:
            res = xskbench.run(cfg)
        except ValueError as err:
            return self._fail(f"Cannot run this configuration: {err}")
        except Exception as err:  # noqa: BLE001 - shown in the widget, never a traceback
            return self._fail(f"The run failed ({type(err).__name__}): {err}")
        self.config, self.result, self.error = cfg, res, ""
        t_run = time.perf_counter() - t0
        self.message.value = ""
        if hasattr(self, "figures"):
            for name, spec in self._specs().items():
                sync_figure(self.figures[name], spec)
            if self.sweep_follow.value:
                self.run_sweep()
            elif self.sweep_data is not None:
                self._sweep_stale = True
                self.sweep_status.value = "<i>config changed: press Sweep</i>"
        self.bottleneck.value = (f"<b>{html.escape(plotting.bottleneck_line(res))}</b>")
        self.report.value = _pre(res.report())
        self.last_update_s = time.perf_counter() - t0
        self.status.value = (f"<span style='color:#666'>ran {res.window_s * 1e3:.3g} ms "
                             f"emulated in {t_run * 1e3:.0f} ms; drawn in "
                             f"{self.last_update_s * 1e3:.0f} ms</span>")
        return True

    def _fail(self, text: str) -> bool:
        self.error = text
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
        results = run_sweep(self.config, key, points)
        self.sweep_data = (key, points, results, self.config)
        sync_figure(self.figures["sweep"],
                    _sized(plotting.sweep_spec(key, points, results, base=self.config)))
        self._sweep_stale = False
        self.sweep_status.value = (f"<span style='color:#666'>{len(points)} points in "
                                   f"{time.perf_counter() - t0:.1f} s</span>")

    # --- export -------------------------------------------------------------------------
    def export(self, view: str | None = None, stem: str | Path | None = None) -> dict:
        """Export one view (default: the dropdown's) as ``<stem>-<view>.*`` (default stem:
        the text box), with :func:`xskbench.export`; returns format -> path (empty, and a
        message in the widget, if it failed)."""
        from xskbench.export import export

        view = view or self.export_view.value
        stem = Path(stem or self.export_stem.value)
        stem = stem.with_name(f"{stem.name}-{view}")
        self.export_out.value = "<i>exporting…</i>"
        try:
            if self.result is None:
                raise ValueError("nothing to export: no valid run yet")
            if view == "cpu":
                paths = export(self.result, stem)
            elif view == "sweep":
                if self.sweep_data is None:
                    raise ValueError("no sweep yet: press Sweep first")
                key, points, results, base = self.sweep_data
                fig = plotting.sweep_figure(key, points, results, base=base)
                paths = export(fig, stem)
            else:
                paths = export(plotting.FIGURES[view](self.result), stem, result=self.result)
        except Exception as err:  # noqa: BLE001 - shown in the widget
            self.export_out.value = (f"<span style='color:#a00'>export failed: "
                                     f"{html.escape(str(err))}</span>")
            return {}
        self.export_out.value = "wrote " + ", ".join(
            f"<code>{html.escape(str(p))}</code>" for p in paths.values())
        return paths
