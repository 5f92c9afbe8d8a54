"""Plots of sweeps (plotly): the throughput-versus-CPU Pareto front and sensitivity tornadoes.

- :func:`pareto` / :func:`pareto_figure`: every configuration of a sweep as total CPU (% of
  one CPU, all contexts) against pps; the non-dominated ones - no other configuration moves
  as many packets with less CPU - are highlighted and joined; hovering shows the config.
- :func:`sensitivity` (from :mod:`xskbench.sweep`) / :func:`tornado_figure`: how pps and each
  context's CPU move when each knob alone goes to its lower and upper neighbour.
"""
from __future__ import annotations

import numpy as np
import pandas as pd
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from .fields import fmt
from .sweep import sensitivity, summarize, varying

LOW, HIGH, DOMINATED = "#4c78a8", "#e45756", "#b8b8b8"


def pareto(df: pd.DataFrame, x: str = "cpu_total", y: str = "pps") -> pd.DataFrame:
    """:func:`summarize` of a sweep with a ``pareto`` column: True for the configurations no
    other one dominates (as much or more ``y`` for as little or less ``x``, one strictly).
    Failed configurations are kept with ``pareto`` False."""
    summ = summarize(df) if "cpu_total" not in df.columns else df.copy()
    summ["pareto"] = False
    ok = summ[summ[y].notna() & summ[x].notna()]
    best = -np.inf
    # Ascending cost, then descending gain: a point is on the front if it beats every
    # cheaper one.  Ties in cost: only the best gain can be on the front.
    for idx in ok.sort_values([x, y], ascending=[True, False], kind="stable").index:
        if ok.at[idx, y] > best:
            summ.at[idx, "pareto"] = True
            best = ok.at[idx, y]
    return summ


def _hover(summ: pd.DataFrame, fields: list[str]) -> list[str]:
    cpu_cols = [c for c in summ.columns if c.startswith("cpu:")]
    out = []
    for _, row in summ.iterrows():
        lines = [f"<b>{c}</b>={_fmt(row[c])}" for c in fields]
        if row.get("error") is not None:
            lines.append(f"error: {row['error']}")
        else:
            lines.append(f"pps={row['pps']:.4g}  cpu_total={row['cpu_total']:.1f}%")
            lines.append(f"bottleneck: {row['bottleneck']}")
            lines.append("  ".join(f"{c[4:]} {row[c]:.1f}%" for c in cpu_cols
                                   if pd.notna(row[c])))
        lines.append(f"config_hash {row['config_hash']}")
        out.append("<br>".join(lines))
    return out


def _fmt(value) -> str:
    if isinstance(value, float) and np.isnan(value):
        return "none"
    if isinstance(value, np.generic):
        value = value.item()
    return fmt(value)


def pareto_figure(df: pd.DataFrame, x: str = "cpu_total", y: str = "pps",
                  title: str | None = None, fields: list[str] | None = None) -> go.Figure:
    """Scatter of a sweep (tidy frame from :func:`xskbench.sweep.sweep`): ``x`` = total CPU
    %, ``y`` = pps; the Pareto front in colour, joined by a line; hover shows the config
    (the fields that vary across the sweep, or ``fields``)."""
    full = pareto(df, x, y)
    fields = list(fields) if fields is not None else varying(full)
    n_err = int(full["error"].notna().sum())
    summ = full[full[y].notna() & full[x].notna()]
    front = summ[summ["pareto"]].sort_values(x)
    rest = summ[~summ["pareto"]]
    fig = go.Figure()
    fig.add_trace(go.Scatter(
        x=rest[x], y=rest[y], mode="markers", name="dominated",
        marker={"color": DOMINATED, "size": 7}, hovertext=_hover(rest, fields),
        hoverinfo="text"))
    fig.add_trace(go.Scatter(
        x=front[x], y=front[y], mode="markers+lines", name="Pareto front",
        line={"color": HIGH, "shape": "hv", "width": 1.5},
        marker={"color": HIGH, "size": 10, "line": {"color": "black", "width": 1}},
        hovertext=_hover(front, fields), hoverinfo="text"))
    sub = f"{len(summ)} configurations" + (f", {n_err} failed" if n_err else "")
    fig.update_layout(
        title=(title or "Throughput versus CPU") + f"<br><sup>{sub}; hover for the config</sup>",
        xaxis_title="total CPU (% of one CPU, all contexts)" if x == "cpu_total" else x,
        yaxis_title="packets per second" if y == "pps" else y,
        template="plotly_white", hovermode="closest", legend={"x": 0.01, "y": 0.99})
    return fig


def tornado_figure(frame: pd.DataFrame, title: str | None = None,
                   metrics: list[str] | None = None) -> go.Figure:
    """Tornado chart of a :func:`sensitivity` frame: one panel per metric (pps in % change,
    each context's CPU in percentage points), one row per knob sorted by its effect on pps,
    bars for the lower (blue) and upper (red) neighbour."""
    metrics = metrics or list(dict.fromkeys(frame["metric"]))
    size = frame.assign(size=np.where(frame["metric"] == "pps", frame["rel_pct"],
                                      frame["delta"]))
    size["size"] = size["size"].abs().fillna(0.0)
    per = size.groupby(["field", "metric"], sort=False)["size"].max().unstack("metric")
    # Sort by the effect on the first metric (pps), then by the sum of the others.
    first, others = per[metrics[0]], per.drop(columns=[metrics[0]]).sum(axis=1)
    order = pd.DataFrame({"a": first, "b": others}).sort_values(["a", "b"], kind="stable")
    fields = list(order.index)
    titles = [("pps: % change" if m == "pps" else f"{m[4:]} CPU: Δ pp") for m in metrics]
    fig = make_subplots(rows=1, cols=len(metrics), shared_yaxes=True,
                        subplot_titles=titles, horizontal_spacing=0.02)
    for col, metric in enumerate(metrics, start=1):
        sub = frame[frame["metric"] == metric]
        value = "rel_pct" if metric == "pps" else "delta"
        for direction, colour in (("low", LOW), ("high", HIGH)):
            part = sub[sub["direction"] == direction].set_index("field").reindex(fields)
            text = [("" if pd.isna(v) else f"{f} = {_fmt(v)}<br>")
                    + ("" if pd.isna(r) else f"{metric} {r:.4g} (base {b:.4g})")
                    + ("" if e is None or (isinstance(e, float) and np.isnan(e))
                       else f"<br>error: {e}")
                    for f, v, r, b, e in zip(fields, part["value"], part["result"],
                                             part["base"], part["error"], strict=True)]
            fig.add_trace(go.Bar(
                y=fields, x=part[value], orientation="h", marker_color=colour,
                name=f"{direction} neighbour", legendgroup=direction, showlegend=col == 1,
                hovertext=text, hoverinfo="text"), row=1, col=col)
    fig.update_layout(barmode="group", bargap=0.25, template="plotly_white",
                      title=title or "Sensitivity around the base configuration",
                      height=max(300, 22 * len(fields) + 140),
                      legend={"orientation": "h", "y": -0.08})
    fig.update_xaxes(zeroline=True, zerolinecolor="black")
    return fig


__all__ = ["pareto", "pareto_figure", "sensitivity", "tornado_figure"]
