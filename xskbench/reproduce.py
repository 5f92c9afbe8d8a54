"""``xskbench reproduce``: every published number beside its emulation.

Each row of ``data/published.csv`` names a scenario (``data/scenarios.yaml``), a metric and a
tolerance. The scenario runs once with its testbed's profile; the row's metric is read off the
result and compared. Rows marked ``fit`` were used by the calibration; ``predict`` rows never
were — they are what makes the model credible.
"""
import json

import pandas as pd

from . import calibrate

COLUMNS = ("seed", "scenario", "metric", "context", "published", "emulated", "unit", "error",
           "tolerance", "within", "kind")


def _context_sum(res, ctx, table):
    """A label's value, or a CPU's (``cpuN``: the sum of the labels running there)."""
    if ctx in table:
        return table[ctx]
    return sum(v for i, (lab, v) in enumerate(table.items()) if f"cpu{res.label_cpu[i]}" == ctx)


def metric_value(row, res):
    """The emulated value of a published row's metric, in the row's unit."""
    metric, ctx = row["metric"], row["context"]
    if metric == "pps":
        return max(res.pps.values())
    if metric in ("pps_rx", "pps_tx", "bps_rx", "bps_tx"):
        kind, d = metric.split("_")
        return getattr(res, kind)[d]
    if metric == "cpu":
        return _context_sum(res, ctx, res.cpu)
    if metric == "share":  # context "label:op" (or ":op" over all contexts): perf-top share
        label, op = ctx.split(":")
        prof = res.profile(label or None)
        return float(prof.loc[prof.op == op, "share"].sum())
    if metric in ("errors", "tx_errors"):
        return res.counters["tx_errors"] / res.window_s
    raise ValueError(f"published row {row['id']}: unknown metric {metric!r}")


def error_of(row, emulated):
    """Relative error for rates, absolute points for percentages."""
    published = float(row["value"])
    if row["unit"] == "%":
        return emulated - published
    return emulated / published - 1.0 if published else emulated


def reproduce(rows=None, runner=None):
    """Run every scenario once; returns the table as a DataFrame (one row per published
    number)."""
    rows = rows or calibrate.read_rows()
    runner = runner or _run_scenario
    results = {}
    out = []
    for r in rows:
        if r["scenario"] not in results:
            results[r["scenario"]] = runner(r["scenario"])
        emulated = metric_value(r, results[r["scenario"]])
        err = error_of(r, emulated)
        tol = float(r["tolerance"])
        out.append({"seed": r["source"], "id": r["id"], "scenario": r["scenario"],
                    "metric": r["metric"], "context": r["context"],
                    "published": float(r["value"]), "emulated": emulated, "unit": r["unit"],
                    "error": err, "tolerance": tol, "within": abs(err) <= tol,
                    "kind": "fitted" if r["kind"] == "fit" else "predicted",
                    "quote": r["quote"]})
    return pd.DataFrame(out)


def _run_scenario(name):
    from .run import run

    return run(calibrate.scenario_config(name))


def render(df):
    """The table as text, like the seeds' own tables."""
    lines = [f"{'id':22} {'metric':7} {'published':>12} {'emulated':>12} {'error':>8} "
             f"{'tol':>6}  {'kind':9} ok"]
    for r in df.itertuples():
        pct = r.unit == "%"
        fmt = (lambda v: f"{v:.1f} %") if pct else (lambda v: f"{v:,.0f}")
        err = f"{r.error:+.1f}pt" if pct else f"{100 * r.error:+.1f}%"
        tol = f"{r.tolerance:g}pt" if pct else f"{100 * r.tolerance:g}%"
        lines.append(f"{r.id[:22]:22} {r.metric[:7]:7} {fmt(r.published):>12} "
                     f"{fmt(r.emulated):>12} {err:>8} {tol:>6}  {r.kind:9} "
                     f"{'yes' if r.within else 'NO'}")
    n, bad = len(df), int((~df.within).sum())
    pred = int((df.kind == "predicted").sum())
    lines.append(f"{n} rows, {pred} predicted, {n - bad} within tolerance, {bad} outside")
    return "\n".join(lines)


def to_json(df):
    keys = ["seed", "id", "scenario", "metric", "context", "published", "emulated", "unit",
            "error", "tolerance", "within", "kind"]
    return json.dumps(df[keys].to_dict("records"), indent=1)


def write(df, out_dir):
    """CSV and Markdown of the table, plus one figure per seed (PNG, SVG, offline HTML)."""
    from pathlib import Path

    import plotly.graph_objects as go

    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    df.to_csv(out / "reproduce.csv", index=False)
    (out / "reproduce.md").write_text(df.drop(columns=["quote"]).to_markdown(index=False)
                                      if _has_tabulate() else render(df))
    for seed, part in df.groupby("seed"):
        labels = [f"{r.id} ({r.unit})" for r in part.itertuples()]
        fig = go.Figure([go.Bar(name="published", x=labels, y=part.published),
                         go.Bar(name="emulated", x=labels, y=part.emulated)],
                        layout=dict(title=str(seed)[:80], barmode="group"))
        stem = out / ("seed-" + "".join(c if c.isalnum() else "-" for c in str(seed))[:40])
        fig.write_html(f"{stem}.html", include_plotlyjs=True)
        for ext in ("png", "svg"):
            fig.write_image(f"{stem}.{ext}")


def _has_tabulate():
    try:
        import tabulate  # noqa: F401
    except ImportError:
        return False
    return True
