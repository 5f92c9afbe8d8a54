"""Plotly figures of results: pure functions from :class:`xskbench.results.Result` to
``go.Figure`` - nothing here runs the emulation.

Each view has a *spec* builder (``cpu_spec``, ``sweep_spec``, ``occupancy_spec``,
``profile_spec``: traces and layout as plain dicts) and a figure builder (``cpu_figure`` …)
that wraps the spec in a ``go.Figure`` with a template.  Notebooks display the figures and
:func:`xskbench.export` writes them; the Explorer copies the specs into its persistent
``FigureWidget``s, which skips plotly's validation and template resolution (~40 ms per
figure) on every update.  A view keeps the same trace structure from one result to the
next, so a widget can be updated in place, and every figure carries the run's config,
xskbench version and seed in ``layout.meta``.
"""

from __future__ import annotations

import base64
import functools
import math
from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd
import plotly.graph_objects as go

from xskbench import __version__
from xskbench.ops import NAMES as OP_NAMES

#: Colours of the context labels, in the order a device lists them.
PALETTE = ("#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2",
           "#7f7f7f", "#bcbd22", "#17becf")
RING_COLOURS = {"fill": "#2ca02c", "completion": "#9467bd", "rx": "#1f77b4", "tx": "#ff7f0e"}
IDLE_COLOUR = "#c8c8c8"
HEIGHT = 380
#: A figure as plain dicts: (traces, layout without template).
Spec = tuple[list[dict], dict]
TEMPLATE = "plotly_white"
_MARGIN = dict(l=60, r=20, t=72, b=50)
_FONT = dict(family="DejaVu Sans, Arial, sans-serif", size=12)


# --- formatting -----------------------------------------------------------------------------
def fmt_pps(x: float | None) -> str:
    """``106026667`` -> ``"106.03 Mpps"``."""
    if x is None or (isinstance(x, float) and math.isnan(x)):
        return "n/a"
    for scale, unit in ((1e9, "Gpps"), (1e6, "Mpps"), (1e3, "kpps")):
        if abs(x) >= scale:
            return f"{x / scale:.2f} {unit}"
    return f"{x:.0f} pps"


def context_colour(res: Any, label: str) -> str:
    return PALETTE[list(res.labels).index(label) % len(PALETTE)]


def scenario(cfg: Any) -> str:
    """``null · zerocopy · txonly 64 B``."""
    w = cfg.workload
    return f"{cfg.device} · {cfg.mode} · {w.kind} {w.packet_size} B"


@functools.lru_cache(maxsize=16)
def _config_dict(cfg: Any) -> dict:
    return cfg.to_dict()


def meta(cfg: Any, **extra: Any) -> dict:
    """What :func:`xskbench.export` writes as JSON next to a figure (``layout.meta``)."""
    return {"xskbench": {"version": __version__, "seed": cfg.workload.seed,
                         "config": _config_dict(cfg), **extra}}


def _layout(title: str, cfg: Any, **kw: Any) -> dict:
    """The layout every figure shares (the template is added by :func:`figure`)."""
    kw.setdefault("margin", _MARGIN)
    kw.setdefault("legend", dict(orientation="h", x=1, xanchor="right", y=1.0,
                                 yanchor="bottom"))
    return dict(title=dict(text=title, x=0.01, xanchor="left", y=0.985, yanchor="top",
                           font=dict(size=14)),
                height=HEIGHT, font=_FONT,
                meta=meta(cfg, **kw.pop("meta_extra", {})), **kw)


def _both_rates(res: Any) -> str:
    pps = res.pps
    return ", ".join(f"{d} {fmt_pps(pps[d])}" for d in ("tx", "rx") if pps[d] > 0) or "0 pps"


def bottleneck_line(res: Any) -> str:
    """One line naming the bottleneck context, e.g. for a widget or a caption."""
    lab = res.bottleneck
    i = list(res.labels).index(lab)
    pps = res.pps
    return (f"bottleneck: {lab} on CPU {res.label_cpu[i]}, {res.cpu[lab]:.1f} % busy "
            f"({res.idle_poll[lab]:.1f} % idle polls) · tx {pps['tx']:,.0f} pps · "
            f"rx {pps['rx']:,.0f} pps")


# --- (1) throughput versus CPU ------------------------------------------------------------
def cpu_spec(res: Any) -> Spec:
    """Bars of CPU % per context, split into useful work and idle polls (shaded), the
    packet rate in the title and the bottleneck context marked."""
    cpu, idle = res.cpu, res.idle_poll
    bneck = res.bottleneck
    # contexts that never ran (0 %) are left out: they only crowd the axis
    labels = [lab for lab in res.labels if cpu[lab] > 0 or lab == bneck]
    cpus = dict(zip(res.labels, res.label_cpu, strict=True))
    x = [f"{lab}<br>cpu{cpus[lab]}" for lab in labels]
    useful = [max(cpu[lab] - idle[lab], 0.0) for lab in labels]
    idle_y = [idle[lab] for lab in labels]
    colours = [context_colour(res, lab) for lab in labels]
    widths = [3 if lab == bneck else 0 for lab in labels]
    top = max([100.0] + [cpu[lab] for lab in labels])
    b = labels.index(bneck)
    data = [
        dict(type="bar", name="useful work", x=x, y=useful,
             marker=dict(color=colours, line=dict(color="black", width=widths)),
             text=[f"{u:.1f}" for u in useful], textposition="inside",
             hovertemplate="%{x}: %{y:.1f} % useful<extra></extra>"),
        # one grey, hatched colour (not the context's, faded): a legend swatch of its own
        # and dark labels that stay readable
        dict(type="bar", name="idle polls", x=x, y=idle_y,
             marker=dict(color=IDLE_COLOUR, pattern=dict(shape="/", fgcolor="#666",
                                                         solidity=0.25),
                         line=dict(color="black", width=widths)),
             text=[f"{v:.1f}" if v >= 0.05 else "" for v in idle_y], textposition="inside",
             insidetextfont=dict(color="#111"),
             hovertemplate="%{x}: %{y:.1f} % in polls that moved nothing<extra></extra>"),
    ]
    many = len(labels) > 6  # e.g. 9 contexts with 4 queues: slanted, smaller labels
    layout = _layout(
        f"{scenario(res.config)}: {_both_rates(res)}", res.config,
        barmode="stack", bargap=0.35,
        # below the bars: the bottleneck's label may sit where a top legend would be
        legend=dict(orientation="h", x=0, xanchor="left", y=-0.2, yanchor="top",
                    traceorder="normal"),
        xaxis=dict(type="category", tickangle=-35 if many else 0,
                   tickfont=dict(size=10 if many else 12)),
        uniformtext=dict(minsize=8, mode="hide"),
        yaxis=dict(title=dict(text="CPU % of one core"), range=[0, top * 1.15],
                   ticksuffix=" %"),
        shapes=[dict(type="line", xref="paper", x0=0, x1=1, yref="y", y0=100, y1=100,
                     line=dict(color="#888", dash="dash", width=1))],
        annotations=[dict(x=x[b], y=cpu[bneck], yref="y", text=f"bottleneck<br>{bneck}",
                          showarrow=True, arrowhead=2, ax=0, ay=-32,
                          font=dict(color="#b00"))],
        meta_extra={"pps": res.pps, "bottleneck": bneck},
    )
    layout["margin"] = dict(_MARGIN, t=50, b=110 if many else 80)
    if many:
        layout["legend"]["y"] = -0.3
    return data, layout


# --- (2) a sweep of one knob --------------------------------------------------------------
def sweep_frame(key: str, points: Sequence[Any], results: Sequence[Any]) -> pd.DataFrame:
    """One row per sweep point; ``results`` items are Results, or a string saying why the
    point could not run (invalid combination)."""
    rows = []
    for value, res in zip(points, results, strict=True):
        if isinstance(res, str) or res is None:
            rows.append({key: value, "pps_tx": None, "pps_rx": None, "bottleneck": None,
                         "bottleneck_cpu_pct": None, "bottleneck_idle_pct": None,
                         "error": res or "not run"})
            continue
        lab = res.bottleneck
        rows.append({key: value, "pps_tx": res.pps["tx"], "pps_rx": res.pps["rx"],
                     "bottleneck": lab, "bottleneck_cpu_pct": res.cpu[lab],
                     "bottleneck_idle_pct": res.idle_poll[lab], "error": ""})
    return pd.DataFrame(rows, columns=[key, "pps_tx", "pps_rx", "bottleneck",
                                       "bottleneck_cpu_pct", "bottleneck_idle_pct", "error"])


def _is_geometric(values: Sequence[float]) -> bool:
    v = [float(x) for x in values if x is not None]
    return len(v) >= 3 and min(v) > 0 and max(v) / min(v) >= 20


def _opt(v: Any) -> float | None:
    return None if v is None or pd.isna(v) else float(v)


def sweep_spec(key: str, points: Sequence[Any], results: Sequence[Any],
               base: Any = None) -> Spec:
    """Packet rate (left axis) and the bottleneck context's CPU % (right axis) against the
    values of one config field ``key`` (``"section.field"``).  ``results`` holds a Result
    or an error string per point; ``base`` is the swept config (default: the first
    result's). A sweep of ``mq.queues`` is drawn as a scaling plot (:func:`scaling_spec`)."""
    if key == SCALING_KEY:
        return scaling_spec(points, results, base)
    df = sweep_frame(key, points, results)
    if base is None:
        base = next((r.config for r in results if not isinstance(r, str) and r is not None),
                    None)
        if base is None:
            raise ValueError("sweep_figure: no point ran; pass base= (the swept config)")
    xs = list(points)
    data = []
    for d, colour in (("tx", "#ff7f0e"), ("rx", "#1f77b4")):
        ys = [_opt(v) for v in df[f"pps_{d}"]]
        data.append(dict(type="scatter", name=f"{d} pps", x=xs, y=ys, mode="lines+markers",
                         line=dict(color=colour, width=2), yaxis="y",
                         visible=True if any(ys) else "legendonly",
                         hovertemplate=f"{key}=%{{x}}: %{{y:,.0f}} {d} pps<extra></extra>"))
    names = ["" if b is None or pd.isna(b) else str(b) for b in df["bottleneck"]]
    data.append(dict(type="scatter", name="bottleneck CPU %", x=xs, yaxis="y2",
                     y=[_opt(v) for v in df["bottleneck_cpu_pct"]],
                     mode="lines+markers+text", text=names, textposition="top center",
                     textfont=dict(size=10, color="#b00"),
                     line=dict(color="#b00", dash="dot", width=2),
                     marker=dict(symbol="diamond", size=8),
                     hovertemplate="%{text}: %{y:.1f} % CPU<extra></extra>"))
    bad = [f"{x}" for x, e in zip(xs, df["error"], strict=True) if e]
    note = f" (invalid: {', '.join(bad)})" if bad else ""
    layout = _layout(
        f"sweep of {key}: {scenario(base)}{note}", base,
        margin=dict(_MARGIN, r=60),
        xaxis=_knob_axis(key, xs),
        yaxis=dict(title=dict(text="packets per second"), rangemode="tozero"),
        # its own round ticks (0, 20 … 100 %), not ticks synced to the left axis' grid
        # (20.5 %, 40.9 % …); no grid of its own
        yaxis2=dict(title=dict(text="bottleneck CPU %"), overlaying="y", side="right",
                    range=[0, 115], tickmode="linear", tick0=0, dtick=20, ticksuffix=" %",
                    showgrid=False),
        meta_extra={"sweep": {"key": key, "points": xs}},
    )
    return data, layout


def _is_pow2(values: Sequence[Any]) -> bool:
    return len(values) >= 3 and all(isinstance(v, int) and not isinstance(v, bool) and v > 0
                                    and v & (v - 1) == 0 for v in values)


def _knob_axis(key: str, xs: Sequence[Any]) -> dict:
    """The x axis of a knob: powers of two on a log2 scale, ticked at each point (plotly's
    log axis would tick 1, 2, 5, 10 …); other wide ranges log, narrow ones linear;
    anything not numeric as categories."""
    numeric = all(isinstance(x, int | float) and not isinstance(x, bool) for x in xs)
    axis: dict[str, Any] = dict(title=dict(text=key))
    if numeric and _is_pow2(list(xs)):
        axis.update(type="log", tickvals=list(xs), ticktext=[str(x) for x in xs])
    else:
        axis["type"] = ("log" if numeric and _is_geometric(xs) else
                        "linear" if numeric else "category")
    return axis


def sweep_cpu_spec(key: str, points: Sequence[Any], results: Sequence[Any],
                   base: Any = None) -> Spec:
    """Throughput versus CPU across one knob (the Pareto view of a sweep, in the Explorer):
    total CPU (all contexts, % of one core) on x, the packet rate on y, one point per value
    of ``key`` labelled with it and joined in knob order; one pair of axes."""
    ok = [(p, r) for p, r in zip(points, results, strict=True)
          if r is not None and not isinstance(r, str)]
    if base is None:
        if not ok:
            raise ValueError("sweep_cpu_spec: no point ran; pass base= (the swept config)")
        base = ok[0][1].config
    name = key.split(".")[-1]
    cpu = [float(sum(r.cpu.values())) for _, r in ok]
    pps = [float(max(r.pps.values())) for _, r in ok]
    data = [dict(type="scatter", name=f"{key} (labels)", x=cpu, y=pps,
                 mode="lines+markers+text", text=[f"{name}={p}" for p, _ in ok],
                 # labels at both ends only (the colour runs along the knob): points
                 # often crowd together
                 texttemplate=[("%{text}" if j in (0, len(ok) - 1) else "")
                               for j in range(len(ok))],
                 textposition="top center", textfont=dict(size=10),
                 line=dict(color="#888", width=1), customdata=[r.bottleneck for _, r in ok],
                 marker=dict(size=9, color=list(range(len(ok))), colorscale="Viridis"),
                 hovertemplate="%{text}: %{y:,.0f} pps for %{x:.1f} % CPU "
                               "(bottleneck %{customdata})<extra></extra>")]
    bad = [f"{p}" for p, r in zip(points, results, strict=True)
           if r is None or isinstance(r, str)]
    note = f" (invalid: {', '.join(bad)})" if bad else ""
    layout = _layout(
        f"throughput vs CPU across {key}: {scenario(base)}{note}", base, showlegend=False,
        xaxis=dict(title=dict(text="total CPU (% of one core, all contexts)"),
                   rangemode="tozero", ticksuffix=" %"),
        yaxis=dict(title=dict(text="packets per second"), rangemode="tozero"),
        meta_extra={"sweep": {"key": key, "points": list(points)}},
    )
    return data, layout


SCALING_KEY = "mq.queues"


def scaling_spec(points: Sequence[Any], results: Sequence[Any], base: Any = None) -> Spec:
    """Scaling with queue pairs: total packet rate (left) beside the linear ideal from the
    first point, and the CPUs' worth of work used (right), each point labelled with its
    bottleneck context; ``results`` as for :func:`sweep_spec`."""
    ok = [(n, r) for n, r in zip(points, results, strict=True)
          if r is not None and not isinstance(r, str)]
    if base is None:
        if not ok:
            raise ValueError("scaling_spec: no point ran; pass base= (the swept config)")
        base = ok[0][1].config
    xs = [n for n, _ in ok]
    pps = [max(r.pps.values()) for _, r in ok]
    cores = [sum(r.cpu.values()) / 100.0 for _, r in ok]
    ideal = [pps[0] * n / xs[0] for n in xs] if ok else []
    data = [
        dict(type="scatter", name="pps (all queues)", x=xs, y=pps, mode="lines+markers+text",
             text=[r.bottleneck for _, r in ok], textposition="top center",
             textfont=dict(size=10, color="#b00"), line=dict(color="#ff7f0e", width=2),
             yaxis="y", hovertemplate="%{x} queues: %{y:,.0f} pps, bottleneck %{text}"
             "<extra></extra>"),
        dict(type="scatter", name="linear from the first point", x=xs, y=ideal,
             mode="lines", line=dict(color="#999", dash="dot", width=1), yaxis="y",
             hoverinfo="skip"),
        dict(type="scatter", name="CPUs used", x=xs, y=cores, mode="lines+markers",
             line=dict(color="#1f77b4", dash="dash", width=2), yaxis="y2",
             hovertemplate="%{x} queues: %{y:.2f} CPUs<extra></extra>"),
    ]
    bad = [f"{n}" for n, r in zip(points, results, strict=True)
           if r is None or isinstance(r, str)]
    note = f" (invalid: {', '.join(bad)})" if bad else ""
    mq = base.mq
    layout = _layout(
        f"scaling with queues ({mq.pinning}, host {mq.host}, umem {mq.umem}): "
        f"{scenario(base)}{note}", base, margin=dict(_MARGIN, r=60),
        xaxis=dict(title=dict(text="queue pairs (mq.queues)"), dtick=1),
        yaxis=dict(title=dict(text="packets per second"), rangemode="tozero"),
        yaxis2=dict(title=dict(text="CPUs used"), overlaying="y", side="right", tickmode="auto",
                    rangemode="tozero", showgrid=False),
        meta_extra={"sweep": {"key": SCALING_KEY, "points": list(points)}},
    )
    return data, layout


# --- (3) ring occupancy -------------------------------------------------------------------
def occupancy_spec(res: Any) -> Spec:
    """Entries in each xsk ring over emulated time (the warm-up shaded)."""
    occ = res.occupancy
    rings = [c for c in occ.columns if c != "time_us"]
    t = occ["time_us"].to_numpy()
    data = [dict(type="scatter", name=ring, x=t, y=occ[ring].to_numpy(), mode="lines",
                 line=dict(width=1.5, shape="hv",
                           color=RING_COLOURS.get(ring, PALETTE[i % len(PALETTE)])),
                 hovertemplate=f"{ring}: %{{y}} entries at %{{x:.1f}} µs<extra></extra>")
            for i, ring in enumerate(rings)]
    warm = res.config.workload.warmup_s * 1e6
    layout = _layout(
        f"ring occupancy: {scenario(res.config)}", res.config,
        xaxis=dict(title=dict(text="emulated time (µs)")),
        yaxis=dict(title=dict(text="entries"), rangemode="tozero"),
        shapes=[dict(type="rect", xref="x", x0=0, x1=warm, yref="paper", y0=0, y1=1,
                     fillcolor="#ddd", opacity=0.4, line=dict(width=0), layer="below")],
        annotations=[dict(x=warm / 2, xref="x", y=1, yref="paper", yanchor="bottom",
                          text="warm-up", showarrow=False, font=dict(size=10, color="#666"))],
    )
    return data, layout


# --- (4) perf top -------------------------------------------------------------------------
def profile_spec(res: Any, top: int = 15) -> Spec:
    """The emulated ``perf top``: share of all cycles per (op, context), largest on top
    (the rows of ``res.profile().head(top)``, computed without pandas)."""
    cyc = np.asarray(res.op_cycles, dtype=float)
    total = cyc.sum() or 1.0
    flat = cyc.ravel()
    order = [int(i) for i in np.argsort(-flat, kind="stable")[:top] if flat[i] > 0]
    n_ops = cyc.shape[1]
    ctxs = [res.labels[i // n_ops] for i in order]
    ops = [OP_NAMES[i % n_ops] for i in order]
    share = [float(100.0 * flat[i] / total) for i in order]
    calls = np.asarray(res.op_calls).ravel()
    custom = [[int(calls[i]), float(flat[i])] for i in order]
    data = [dict(type="bar", name="share of cycles", orientation="h", x=share,
                 y=[f"{op} [{ctx}]" for op, ctx in zip(ops, ctxs, strict=True)],
                 marker=dict(color=[context_colour(res, c) for c in ctxs]),
                 text=[f"{s:.1f} %" for s in share], textposition="auto",
                 customdata=custom,
                 hovertemplate=("%{y}: %{x:.2f} %<br>%{customdata[0]:,} calls, "
                                "%{customdata[1]:,.0f} cycles<extra></extra>"))]
    layout = _layout(
        f"perf top (emulated): {scenario(res.config)}", res.config,
        xaxis=dict(title=dict(text="% of all cycles"), rangemode="tozero", ticksuffix=" %"),
        yaxis=dict(autorange="reversed", automargin=True, tickfont=dict(size=10)),
        showlegend=False,
    )
    return data, layout


# --- figures ------------------------------------------------------------------------------
def figure(spec: Spec, template: str | None = TEMPLATE) -> go.Figure:
    """A ``go.Figure`` of a spec (traces and layout as dicts)."""
    data, layout = spec
    return go.Figure(data, layout=dict(layout, template=template) if template else layout)


def cpu_figure(res: Any, template: str | None = TEMPLATE) -> go.Figure:
    """Throughput versus CPU: CPU % per context (idle polls shaded), the rate as title."""
    return figure(cpu_spec(res), template)


def sweep_figure(key: str, points: Sequence[Any], results: Sequence[Any], base: Any = None,
                 template: str | None = TEMPLATE) -> go.Figure:
    """Packet rate and bottleneck CPU % against the swept values of ``key``."""
    return figure(sweep_spec(key, points, results, base), template)


def occupancy_figure(res: Any, template: str | None = TEMPLATE) -> go.Figure:
    """Entries in each xsk ring over emulated time."""
    return figure(occupancy_spec(res), template)


def profile_figure(res: Any, top: int = 15, template: str | None = TEMPLATE) -> go.Figure:
    """The emulated perf top as horizontal bars."""
    return figure(profile_spec(res, top), template)


#: The views of a single result, by name: spec builders (what the Explorer copies into its
#: FigureWidgets, without paying for plotly's validation) and figure builders.
SPECS = {"cpu": cpu_spec, "occupancy": occupancy_spec, "profile": profile_spec}
FIGURES = {"cpu": cpu_figure, "occupancy": occupancy_figure, "profile": profile_figure}


def figure_frame(fig: go.Figure) -> pd.DataFrame:
    """The plotted data of any figure in tidy form: one row per point of each trace."""
    rows = []
    for i, tr in enumerate(fig.data):
        name = tr.name if tr.name is not None else f"trace {i}"
        x, y = _array(tr.x), _array(tr.y)
        if x is None and y is None:
            continue
        n = max(len(x) if x is not None else 0, len(y) if y is not None else 0)
        text = getattr(tr, "text", None)
        text = text if isinstance(text, list | tuple) and len(text) == n else None
        for j in range(n):
            rows.append({"trace": name, "type": tr.type,
                         "x": _plain(x[j]) if x is not None else j,
                         "y": _plain(y[j]) if y is not None else j,
                         "text": text[j] if text is not None else ""})
    return pd.DataFrame(rows, columns=["trace", "type", "x", "y", "text"])


def _array(v: Any) -> Any:
    """A trace's data array; plotly's base64 typed-array form (``{"dtype", "bdata"}``,
    found in figures read back from JSON) decoded."""
    if isinstance(v, dict) and "bdata" in v:
        a = np.frombuffer(base64.b64decode(v["bdata"]), dtype=np.dtype(v["dtype"]))
        shape = v.get("shape")
        if shape:
            a = a.reshape([int(n) for n in str(shape).split(",")])
        return a
    return v


def _plain(v: Any) -> Any:
    """numpy scalars -> Python; ``"app<br>cpu0"`` -> ``"app cpu0"``."""
    if hasattr(v, "item"):
        v = v.item()
    if isinstance(v, str):
        v = v.replace("<br>", " ")
    return v
