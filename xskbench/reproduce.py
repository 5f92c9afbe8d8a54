"""``xskbench reproduce``: every published and measured number beside its emulation.

Each row of ``data/published.csv`` names a scenario (``data/scenarios.yaml``), a metric and a
tolerance; each measured point of ``data/measurements/`` with an emulated counterpart is a row
too. The scenario runs once with its testbed's profile; the row's metric is read off the result
and compared. ``fitted`` rows were used by the calibration; ``predicted`` rows never were and
depend on costs no row of theirs tuned; ``identity`` rows restate another row or a prior (their
``why`` says which); ``compare`` rows are measured points whose counterpart is another device
(``why``: which stands in for which): their error is shown, never fitted nor judged.
A scenario with assumed knobs (``assumed`` in scenarios.yaml, or an
unstated testbed clock) also gets a band: the row's value at each end of each knob's plausible
range. ``cv`` adds each row's leave-one-source-out error.
"""
import json
from pathlib import Path

import numpy as np
import pandas as pd

from . import calibrate, costs, measured, ops, published
from .config import RunConfig
from .export import export
from .published import JUDGED, error_of, metric_value  # noqa: F401 - the table's API
from .run import emulate, run

COLUMNS = ("seed", "scenario", "metric", "context", "published", "emulated", "unit", "error",
           "tolerance", "within", "kind")
KINDS = {"fit": "fitted", "predict": "predicted"}
MEASURED_PROFILE = "default"  # op costs are shared: any published profile's, at the row's clock


class Runner:
    """Runs a row's scenario once per (scenario, seed, overrides): published scenarios with
    their testbed's profile, measured rows' counterparts at their machine's clock."""

    def __init__(self, rows):
        self.rows = {r["scenario"]: r for r in rows}
        self.cache = {}
        self.clocks = calibrate.profile_clocks()

    def config(self, scenario, seed=None, overrides=()):
        row = self.rows.get(scenario, {})
        if "config" in row:  # at its testbed's (fitted) clock
            d = {k: v for k, v in row["config"].items() if k != "testbed"}
            d["testbed"] = {"profile": MEASURED_PROFILE,
                            "cpu_ghz": self.clocks[calibrate.testbed_of(row)]}
            cfg = RunConfig.from_dict(d)
        else:
            cfg = published.scenario_config(scenario)
        if seed is not None:
            cfg = cfg.replace(**{"workload.seed": seed})
        return cfg.replace(**dict(overrides)) if overrides else cfg

    def __call__(self, scenario, seed=None, overrides=()):
        key = (scenario, seed, tuple(overrides))
        if key not in self.cache:
            cfg = self.config(scenario, seed, overrides)
            # a measured row: this machine's own costs of measured.MACHINE_OPS
            row = self.rows.get(scenario, {})
            fixed = row.get("fixed")
            ratio = cfg.testbed.cpu_ghz / float(row["cpu_ghz"]) if fixed else 1.0
            self.cache[key] = emulate(
                cfg, measured.with_machine_ops(costs.for_config(cfg), fixed, ratio),
                cfg.testbed.cpu_ghz * 1e9) if fixed else run(cfg)
        return self.cache[key]


def reproduce(rows=None, runner=None, bands=True):
    """Run every scenario (once per seed needed); returns the table as a DataFrame, one row
    per number. ``within`` is None for numbers that are shown but not judged."""
    rows = rows or calibrate.calibration_rows()
    run = runner or Runner(rows)
    out = []
    for r in rows:
        emulated = metric_value(r, run)
        judged = r["kind"] in JUDGED
        shown = judged or r["kind"] == "compare"
        err = error_of(r, emulated) if shown else None
        tol = float(r["tolerance"]) if shown else None
        lo, hi = band(r, run) if bands and judged else (None, None)
        out.append({"seed": r.get("seed") or r["source"], "id": r["id"],
                    "scenario": r["scenario"], "metric": r["metric"], "context": r["context"],
                    "published": float(r["value"]), "emulated": emulated, "unit": r["unit"],
                    "error": err, "tolerance": tol,
                    "within": None if not judged else bool(abs(err) <= tol),
                    "kind": KINDS.get(r["kind"], r["kind"]), "why": r.get("why", ""),
                    "band_lo": lo, "band_hi": hi, "quote": r.get("quote", "")})
    return pd.DataFrame(out)


def assumptions(row):
    """[(field, (lo, hi))]: the assumed knobs of a row's scenario and its testbed's clock
    when the testbed does not state it."""
    if "config" in row or row["metric"] in ("pps_cv",) or row["kind"] == "sample":
        return []
    sc = published.scenarios()[row["scenario"]]
    out = [(k, tuple(v)) for k, v in sc.get("assumed", {}).items()]
    spec = published.testbeds()[sc["testbed"]]
    if not spec.get("cpu_stated", True):
        out.append(("testbed.cpu_ghz", tuple(spec["cpu_ghz_range"])))
    return out


def band(row, run):
    """(lo, hi) of the row's value over each assumed knob's range, one knob at a time with the
    others as the scenario has them; (None, None) without assumptions."""
    vals = []
    for field, ends in assumptions(row):
        for v in ends:
            def at(sc, seed=None, _f=field, _v=v):
                return run(sc, seed, ((_f, _v),))
            vals.append(metric_value(row, at))
    return (min(vals), max(vals)) if vals else (None, None)


def cross_validate(rows=None, runner=None, sources=None):
    """Leave-one-source-out: for each source (a seed or a measured grid) the costs fitted
    without its rows (one linear solve at the full fit's op counts, calibrate.loo_costs),
    then its judged rows re-emulated with those costs. Returns (rows' LOO errors by id,
    count: (fit rows, free parameters they touch))."""
    rows = rows or calibrate.calibration_rows()
    run = runner or Runner(rows)
    par = calibrate.Parameters(costs.read_priors())
    prof = costs.load(MEASURED_PROFILE)
    x = np.array([prof.call[o] for o in _names()] + [prof.byte[o] for o in _names()])
    fitted = calibrate.fit_rows(rows)
    results = {r["scenario"]: run(r["scenario"]) for r in fitted}
    wanted = sources or sorted({calibrate.source_of(r) for r in fitted})
    errors = {}
    for src in wanted:
        call, byte, ghz = calibrate.loo_costs(rows, results, par, x, src)
        cache = {}

        def loo_run(sc, seed=None, _c=cache, _call=call, _byte=byte, _ghz=ghz):
            if (sc, seed) not in _c:
                _c[sc, seed] = calibrate.emulate_row(run.rows[sc], _call, _byte, par.priors,
                                                     _ghz, seed)
            return _c[sc, seed]

        for r in rows:
            if calibrate.source_of(r) == src and r["kind"] in JUDGED and r["metric"] != "pps_cv":
                errors[r["id"]] = error_of(r, metric_value(r, loo_run))
    n_rows, used = calibrate.count(rows, results, par, x)
    return errors, (n_rows, len(used))


def _names():
    return ops.NAMES


def _fmt_err(err, pct):
    if err is None or (isinstance(err, float) and np.isnan(err)):
        return "-"
    return f"{err:+.1f}pt" if pct else f"{100 * err:+.1f}%"


def render(df, loo=None, count=None):
    """The table as text, like the seeds' own tables; with ``loo`` (id -> error) a column of
    leave-one-source-out errors."""
    cv = loo is not None
    lines = [f"{'id':32} {'metric':7} {'published':>14} {'emulated':>14} {'error':>8} "
             + (f"{'loo':>8} " if cv else "") + f"{'tol':>5}  {'kind':9} ok  band"]
    for r in df.itertuples():
        pct = r.unit == "%"
        fmt = (lambda v: f"{v:.2f} %") if pct else (lambda v: f"{v:,.0f}")
        if r.within is None and r.kind != "compare":
            err = tol = ok = "-"
        else:
            err = _fmt_err(r.error, pct)
            tol = f"{r.tolerance:g}pt" if pct else f"{100 * r.tolerance:g}%"
            ok = "-" if r.within is None else "yes" if r.within else "NO"
        bnd = "" if r.band_lo is None or pd.isna(r.band_lo) else \
            f"{fmt(r.band_lo)} .. {fmt(r.band_hi)}"
        lines.append(f"{r.id[:32]:32} {r.metric[:7]:7} {fmt(r.published):>14} "
                     f"{fmt(r.emulated):>14} {err:>8} "
                     + (f"{_fmt_err(_loo(r, loo), pct):>8} " if cv else "")
                     + f"{tol:>5}  {r.kind:9} {ok:3} {bnd}")
    judged = df[df.within.notna()]
    bad = int((judged.within == False).sum())  # noqa: E712 - a column of objects
    n = {k: int((judged.kind == k).sum()) for k in ("fitted", "predicted", "identity")}
    lines.append(f"{len(df)} numbers, {len(judged)} compared ({n['fitted']} fitted, "
                 f"{n['predicted']} predicted, {n['identity']} identities): "
                 f"{len(judged) - bad} within tolerance, {bad} outside")
    cmp = df[df.kind == "compare"]
    if len(cmp):
        errs = 100 * cmp.error.abs()
        lines.append(f"{len(cmp)} measured comparisons, not fitted (" +
                     "; ".join(sorted(set(cmp.why))) + f"): median |error| "
                     f"{errs.median():.1f}%, worst {errs.max():.1f}%")
    if cv:
        lines.append(loo_summary(df, loo))
    if count:
        lines.append(f"calibration set: {count[0]} fit rows, {count[1]} free parameters "
                     f"carrying > 2 % of some fit row's cycles")
    return "\n".join(lines)


def _loo(r, loo):
    """A row's left-out error: a compare row was never fitted, so its error already is."""
    return r.error if r.kind == "compare" else loo.get(r.id)


def loo_summary(df, loo):
    """Median and worst leave-one-source-out error, rates (relative) and percentages (points)
    apart, over the fitted and predicted rows."""
    out = []
    for pct, unit in ((False, "%"), (True, "pt")):
        errs = [abs(loo[r.id]) * (1 if pct else 100) for r in df.itertuples()
                if r.id in loo and (r.unit == "%") == pct and r.kind in ("fitted", "predicted")]
        if errs:
            worst = max(errs)
            out.append(f"{'CPU shares and percentages' if pct else 'rates'}: median "
                       f"{np.median(errs):.1f}{unit}, worst {worst:.1f}{unit} over {len(errs)}")
    return "leave-one-source-out |error| (fitted and predicted rows): " + "; ".join(out)


def to_json(df, loo=None):
    keys = ["seed", "id", "scenario", "metric", "context", "published", "emulated", "unit",
            "error", "tolerance", "within", "kind", "band_lo", "band_hi"]
    recs = df[keys].to_dict("records")
    if loo is not None:
        for r in recs:
            r["loo_error"] = loo.get(r["id"])
    return json.dumps(recs, indent=1)


def write(df, out_dir):
    """CSV and Markdown of the table, plus one figure per seed (PNG, SVG, offline HTML)."""
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
        export(fig, stem, formats=("png", "svg", "html"))


def _has_tabulate():
    try:
        import tabulate  # noqa: F401
    except ImportError:
        return False
    return True
