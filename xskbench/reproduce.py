"""``xskbench reproduce``: every published number beside its emulation.

Each row of ``data/published.csv`` names a scenario (``data/scenarios.yaml``), a metric and a
tolerance. The scenario runs once with its testbed's profile; the row's metric is read off the
result and compared. Rows marked ``fit`` were used by the calibration; ``predict`` rows never
were — they are what makes the model credible.
"""
import json

import numpy as np
import pandas as pd

from . import calibrate

COLUMNS = ("seed", "scenario", "metric", "context", "published", "emulated", "unit", "error",
           "tolerance", "within", "kind")


def _context_sum(res, ctx, table):
    """A label's value, or a CPU's (``cpuN``: the sum of the labels running there)."""
    if ctx in table:
        return table[ctx]
    return sum(v for i, (lab, v) in enumerate(table.items()) if f"cpu{res.label_cpu[i]}" == ctx)


JUDGED = ("fit", "predict", "derived")  # quoted numbers and raw samples are shown, not judged
SPREAD_SEEDS = 10                         # runs behind an emulated run-to-run spread


def metric_value(row, run):
    """The emulated value of a published row's metric, in the row's unit. ``run(scenario,
    seed=None)`` returns a Result."""
    if not callable(run):  # a single Result serves every scenario
        res0 = run
        run = lambda sc, seed=None: res0  # noqa: E731
    metric, ctx, sc = row["metric"], row["context"], row["scenario"]
    if row["kind"] == "sample":  # sample i of a published series beside the run with seed i
        return max(run(sc, seed=int(row["id"].rsplit("-s", 1)[1])).pps.values())
    if metric == "pps_cv":
        xs = np.array([max(run(sc, seed=s).pps.values()) for s in range(1, SPREAD_SEEDS + 1)])
        return float(100.0 * xs.std(ddof=1) / xs.mean())
    if metric == "gain":  # this scenario's rate over the one named in ``context``, in %
        return 100.0 * (max(run(sc).pps.values()) / max(run(ctx).pps.values()) - 1.0)
    res = run(sc)
    if metric == "pps":
        return max(res.pps.values())
    if metric in ("pps_rx", "pps_tx", "bps_rx", "bps_tx"):
        kind, d = metric.split("_")
        return getattr(res, kind)[d]
    if metric == "cpu":
        return _context_sum(res, ctx, res.cpu)
    if metric == "share":  # context "label:op", "cpuN:op" or ":op": a perf-top share
        where, op = ctx.split(":")
        prof = res.profile(where or None)
        return float(prof.loc[prof.op == op, "share"].sum())
    if metric.startswith("testpmd:"):  # cumulative counters: the emulated window's own
        name = metric.split(":")[1]
        key = {"RX-packets": "rx_packets", "RX-bytes": "rx_bytes", "RX-missed": "rx_missed",
               "RX-errors": "rx_dropped", "RX-nombuf": "fill_ring_empty_descs",
               "TX-packets": "tx_packets", "TX-errors": "tx_errors", "TX-bytes": "tx_bytes"}
        return float(res.counters[key[name]])
    if metric == "rate":
        return float(res.config.workload.rate_pps or max(res.pps.values()))
    raise ValueError(f"published row {row['id']}: unknown metric {metric!r}")


def error_of(row, emulated):
    """Relative error for rates, absolute points for percentages."""
    published = float(row["value"])
    if row["unit"] == "%":
        return emulated - published
    return emulated / published - 1.0 if published else emulated


def reproduce(rows=None, runner=None):
    """Run every scenario (once per seed needed); returns the table as a DataFrame, one row
    per published number. ``within`` is None for numbers that are shown but not judged."""
    rows = rows or calibrate.read_rows()
    runner = runner or _run_scenario
    cache = {}

    def run(scenario, seed=None):
        if (scenario, seed) not in cache:
            cache[scenario, seed] = runner(scenario, seed)
        return cache[scenario, seed]

    out = []
    for r in rows:
        emulated = metric_value(r, run)
        judged = r["kind"] in JUDGED
        err = error_of(r, emulated) if judged else None
        tol = float(r["tolerance"]) if judged else None
        out.append({"seed": r["source"], "id": r["id"], "scenario": r["scenario"],
                    "metric": r["metric"], "context": r["context"],
                    "published": float(r["value"]), "emulated": emulated, "unit": r["unit"],
                    "error": err, "tolerance": tol,
                    "within": None if not judged else bool(abs(err) <= tol),
                    "kind": {"fit": "fitted", "predict": "predicted"}.get(r["kind"], r["kind"]),
                    "quote": r["quote"]})
    return pd.DataFrame(out)


def _run_scenario(name, seed=None):
    from .run import run

    cfg = calibrate.scenario_config(name)
    return run(cfg if seed is None else cfg.replace(**{"workload.seed": seed}))


def render(df):
    """The table as text, like the seeds' own tables."""
    lines = [f"{'id':32} {'metric':7} {'published':>14} {'emulated':>14} {'error':>8} "
             f"{'tol':>5}  {'kind':9} ok"]
    for r in df.itertuples():
        pct = r.unit == "%"
        fmt = (lambda v: f"{v:.2f} %") if pct else (lambda v: f"{v:,.0f}")
        if r.within is None:
            err = tol = ok = "-"
        else:
            err = f"{r.error:+.1f}pt" if pct else f"{100 * r.error:+.1f}%"
            tol = f"{r.tolerance:g}pt" if pct else f"{100 * r.tolerance:g}%"
            ok = "yes" if r.within else "NO"
        lines.append(f"{r.id[:32]:32} {r.metric[:7]:7} {fmt(r.published):>14} "
                     f"{fmt(r.emulated):>14} {err:>8} {tol:>5}  {r.kind:9} {ok}")
    judged = df[df.within.notna()]
    bad = int((judged.within == False).sum())  # noqa: E712 - a column of objects
    pred = int((judged.kind == "predicted").sum())
    lines.append(f"{len(df)} numbers, {len(judged)} compared ({pred} predicted, never fitted): "
                 f"{len(judged) - bad} within tolerance, {bad} outside")
    return "\n".join(lines)


def to_json(df):
    keys = ["seed", "id", "scenario", "metric", "context", "published", "emulated", "unit",
            "error", "tolerance", "within", "kind"]
    return json.dumps(df[keys].to_dict("records"), indent=1)


def write(df, out_dir):
    """CSV and Markdown of the table, plus one figure per seed (PNG, SVG, offline HTML)."""
    from pathlib import Path

    import plotly.graph_objects as go

    from .export import export

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
        export(fig, stem, formats=("png", "svg", "html"))


def _has_tabulate():
    try:
        import tabulate  # noqa: F401
    except ImportError:
        return False
    return True
