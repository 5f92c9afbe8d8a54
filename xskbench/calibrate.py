"""Calibration: fit op costs to published and measured rows, and the only writer of cost
profiles.

A row says a context spends U % of a CPU at rate R on an f GHz testbed, i.e. U·f/R cycles per
packet. The emulation counts each op per packet in that context, so each row is linear in the
op costs: Σ calls/pkt · call_cost + bytes/pkt · byte_cost = U·f/R. Rows are scaled to relative
error; weak ridge rows keep every free cost near its prior where the data say nothing.

Free parameters. Each op part (per call, per byte) with a prior is one parameter, except that
ties (data/op_ties.csv) make several op parts share one (one memcpy per byte, one syscall entry
everywhere). A testbed whose CPU is not stated adds one more: its clock, as a ratio to the
assumed one (the row then reads a·x/(U·f0/R) − g = 0, still linear), held near 1 with a
standard deviation of half its plausible range and hard-bounded to that range (a clock at a
bound is reported as such). A bounded linear least squares (op costs ≥ 0) solves it; the
scenarios are re-emulated with the new costs (counts depend on timing), damped, for at most
MAX_ITER rounds, and the profile records how much the last round still moved.

The calibration set: the fit rows of data/published.csv plus one row per measured point of
data/measurements/*.json that has an emulated counterpart (xskbench/real_calibrate.py), each
on the testbed of the measured VM (``this-vm``: its effective clock is one fitted parameter),
with that machine's own syscall entry and memcpy (measured.MACHINE_OPS, from its
microbenchmarks) as known cycles rather than the shared bare-metal parameters.
A measured point is a fit row only when its counterpart is the same device (the veth grids'
is the emulated veth pair, ``veth.peer = "xdp_drop"``); a stand-in device's point is a
``compare`` row: shown beside the emulation, never fitted.
``fit(holdout=SOURCE)`` leaves one seed or one measured grid
out; :func:`loo_costs` does the same from one set of equations (for ``reproduce --cv``).
"""
import csv
import json
import sys

import numpy as np
from scipy.optimize import lsq_linear

from . import costs, measured, ops, published
from .config import RunConfig
from .paths import COSTS_DIR, DATA_DIR
from .run import emulate

RIDGE = 0.05        # weight of the priors against the rows (relative units)
MEASURED = 1.0      # weight of a prior measured on this machine: as firm as one row
MAX_ITER = 12
CONVERGED = 0.005   # largest relative change of any cost that counts as settled
TIES = DATA_DIR / "op_ties.csv"
MEASUREMENTS = DATA_DIR / "measurements"
NOT_SWEEPS = ("microbench.json",)   # measurement files that are not grids of runs

read_rows, scenarios, testbeds = published.read_rows, published.scenarios, published.testbeds
scenario_config = published.scenario_config


# --- the calibration set ------------------------------------------------------------------

def source_of(row):
    """What a row is left out with: its seed (``seed`` column) or its measured grid."""
    return row.get("seed") or row.get("source", "")


def measured_rows(directory=MEASUREMENTS):
    """(rows, skipped): one fit row per measured point with an emulated counterpart, from every
    stored grid; each row's source is its grid, its clock the measured machine's."""
    rows, skipped = [], []
    for path in sorted(directory.glob("*.json")):
        if path.name in NOT_SWEEPS:
            continue
        try:
            doc = measured.load(path)
        except ValueError as err:  # a probe, not a grid of runs
            skipped.append((path.stem, str(err)))
            continue
        ghz, _ = measured._cpu_ghz(doc)
        got, why = measured.rows(doc, ghz)
        for r in got:
            r["seed"] = r["source"] = f"measured:{path.stem}"
            r["system"] = r["testbed"] = measured.MEASURED_BED
            measured_dev = r["point"]["result"]["config"]["device"]
            if measured_dev != r["config"]["device"]:  # a stand-in, not a faithful counterpart
                r["kind"] = "compare"
                r["why"] = f"counterpart: {r['config']['device']} stands in for {measured_dev}"
        rows += got
        skipped += [(f"{path.stem}:{label}", w) for label, w in why]
    return rows, skipped


def calibration_rows():
    """Every row the table shows: the published rows, then the measured rows."""
    return read_rows() + measured_rows()[0]


def testbed_of(row):
    """A row's testbed name: a published row's scenario's, a measured row's machine's."""
    return row["testbed"] if "config" in row else scenarios()[row["scenario"]]["testbed"]


# --- parameters: op costs with ties, and unstated clocks -----------------------------------

def read_ties(path=TIES):
    """[(tie, op, part, scale, own)] from data/op_ties.csv (own: the op part keeps a parameter
    of its own on top of the tie's)."""
    with open(path, newline="") as f:
        rows = [r for r in csv.DictReader(f) if r["tie"] and not r["tie"].startswith("#")]
    unknown = sorted({r["op"] for r in rows} - set(ops.NAMES))
    if unknown:
        raise ValueError(f"{path.name}: unknown ops {unknown}")
    return [(r["tie"], r["op"], r["part"], float(r["scale"]), (r.get("own") or "") == "yes")
            for r in rows]


class Parameters:
    """The fit's unknowns: op-cost parameters θ (costs x = T·θ) and one clock ratio per testbed
    whose CPU is not stated (appended after θ)."""

    def __init__(self, priors, ties=None, beds=None):
        n = ops.N_OPS
        self.priors = priors
        prior = np.array([priors[o][0] for o in ops.NAMES] + [priors[o][1] for o in ops.NAMES])
        self.prior_x = prior
        cols, names, theta0, measured = {}, [], [], []

        def is_measured(i):  # measured on this machine (costs.read_priors' fourth field)
            pr = priors[ops.NAMES[i % n]]
            return len(pr) > 3 and ("byte" if i >= n else "call") in pr[3]

        def own(i, value):  # an op part's own parameter (its prior: ``value``)
            cols.setdefault(i, []).append((len(names), 1.0))
            names.append(ops.NAMES[i % n] + (":byte" if i >= n else ""))
            theta0.append(value)
            measured.append(is_measured(i))

        for tie, op, part, scale, plus_own in (read_ties() if ties is None else ties):
            i = ops.INDEX[op] + (n if part == "byte" else 0)
            if tie not in cols:  # the first op of a tie gives its prior
                cols[tie] = len(names)
                names.append(tie)
                theta0.append(prior[i] / scale)
                measured.append(is_measured(i))
            cols[i] = [(cols[tie], scale)]
            if plus_own:  # the tie's work and more of its own: its cost stays ≥ the tie's
                own(i, max(prior[i] - scale * theta0[cols[tie]], 0.0))
        for i in range(2 * n):
            if i not in cols and prior[i] > 0:
                own(i, prior[i])
        self.measured = np.array(measured, dtype=bool)
        self.T = np.zeros((2 * n, len(names)))
        for i, parts in cols.items():
            if isinstance(i, int):
                for c, scale in parts:
                    self.T[i, c] = scale
        self.names, self.theta0 = names, np.array(theta0)
        beds = testbeds() if beds is None else beds
        self.clocks = [tb for tb, spec in beds.items() if not spec.get("cpu_stated", True)]
        self.ghz0 = {tb: float(spec["cpu_ghz"]) for tb, spec in beds.items()}
        # a clock's prior sd: half its plausible range, relative to the assumed clock
        self.clock_sd = np.array([(beds[tb]["cpu_ghz_range"][1] - beds[tb]["cpu_ghz_range"][0])
                                  / 2 / self.ghz0[tb] for tb in self.clocks])
        self.ratio_range = np.array([[g / self.ghz0[tb] for g in beds[tb]["cpu_ghz_range"]]
                                     for tb in self.clocks]).reshape(-1, 2)

    def bounds(self):
        """(lower, upper) of every parameter: op parameters non-negative, clock ratios within
        their testbed's plausible range."""
        lo = np.concatenate([np.zeros(len(self.names)), self.ratio_range[:, 0]])
        hi = np.concatenate([np.full(len(self.names), np.inf), self.ratio_range[:, 1]])
        return lo, hi

    @property
    def size(self):
        return len(self.names) + len(self.clocks)

    def start(self):
        return np.concatenate([self.theta0, np.ones(len(self.clocks))])

    def costs(self, p):
        """(call, byte) op costs of a parameter vector."""
        x = self.T @ p[:len(self.names)]
        return x[:ops.N_OPS], x[ops.N_OPS:]

    def ghz(self, p):
        """Every testbed's clock under ``p`` (stated clocks as stated)."""
        out = dict(self.ghz0)
        for k, tb in enumerate(self.clocks):
            out[tb] = self.ghz0[tb] * float(p[len(self.names) + k])
        return out

    def ridge(self):
        """Weak rows holding each parameter near its prior (relative units)."""
        # RIDGE holds an op with a sd of ~100 % of its prior; a clock with its own sd
        w = np.concatenate([np.where(self.measured, MEASURED, RIDGE), RIDGE / self.clock_sd])
        a = np.diag(w / np.concatenate([self.theta0, np.ones(len(self.clocks))]))
        return a, w


# --- equations ------------------------------------------------------------------------------

def _per_packet(res, ctx):
    """Per-packet op calls and bytes of a context label, a CPU (``cpuN``) or all (empty)."""
    sel = [i for i, lab in enumerate(res.labels)
           if not ctx or lab == ctx or f"cpu{res.label_cpu[i]}" == ctx]
    if not sel:
        raise ValueError(f"no context {ctx!r} in {res.labels}")
    pkts = max(res.counters["rx_packets"], res.counters["tx_packets"], 1)
    return np.concatenate([res.op_calls[sel].sum(axis=0), res.op_bytes[sel].sum(axis=0)]) / pkts


def row_equation(row, res, x, hz=None):
    """One row as a linear equation ``a · costs = b`` scaled to relative error, with the
    target read at ``hz`` (default: the clock the run used).

    pps / cpu: the context spends U·f/R cycles per packet (U = 100 % for a pps row, whose
    context is the bottleneck, unless the row gives its measured ``util``). share: an op's
    cycles are s % of its context's cycles.
    """
    metric = row["metric"]
    if metric in ("pps", "pps_rx", "pps_tx", "cpu"):
        rate = float(row["rate"] or row["value"])
        util = float(row["value"]) if metric == "cpu" else float(row.get("util") or 100.0)
        target = util / 100.0 * (hz or res.hz) / rate
        return _per_packet(res, row["context"]) / target, 1.0
    if metric == "share":
        label, op_name = row["context"].split(":")
        whole = _per_packet(res, label)
        part = np.zeros_like(whole)
        k = ops.INDEX[op_name]
        part[k], part[k + ops.N_OPS] = whole[k], whole[k + ops.N_OPS]
        scale = max(float(whole @ x), 1e-9)
        return (part - float(row["value"]) / 100.0 * whole) / scale, 0.0
    raise ValueError(f"published row {row['id']}: metric {metric!r} cannot be fitted")


def _fixed(eq, rhs, fixed):
    """A measured row's equation with the measuring machine's own op costs (measured.
    MACHINE_OPS: op or op:byte -> cycles) moved to the right side as known cycles."""
    eq = eq.copy()
    for name, cycles in fixed.items():
        op, _, part = name.partition(":")
        i = ops.INDEX[op] + (ops.N_OPS if part == "byte" else 0)
        rhs -= eq[i] * cycles
        eq[i] = 0.0
    return eq, rhs


def system(rows, results, par, x):
    """The rows' equations in the parameters (op parameters, then clock ratios), linearised at
    the op costs ``x`` (call costs, then byte costs) and the op counts of ``results``."""
    a = np.zeros((len(rows), par.size))
    b = np.zeros(len(rows))
    for k, r in enumerate(rows):
        tb = testbed_of(r)
        free = tb in par.clocks
        eq, rhs = row_equation(r, results[r["scenario"]], x,
                               par.ghz0[tb] * 1e9 if free else None)
        if r.get("fixed"):
            eq, rhs = _fixed(eq, rhs, r["fixed"])
        a[k, :len(par.names)] = eq @ par.T
        if free and rhs:  # a·x / target(f0) = g: the clock ratio moves to the left side
            a[k, len(par.names) + par.clocks.index(tb)] = -rhs
            rhs = 0.0
        b[k] = rhs
    return a, b


def solve(a, b, par):
    """Bounded least squares of the rows with the ridge rows: op parameters ≥ 0, each clock
    ratio inside its plausible range."""
    ra, rb = par.ridge()
    lo, hi = par.bounds()
    return lsq_linear(np.vstack([a, ra]), np.concatenate([b, rb]), bounds=(lo, hi),
                      method="bvls").x


# --- emulation --------------------------------------------------------------------------------

def _profile(name, ghz, call, byte, priors):
    return costs.Profile(name, ghz, dict(zip(ops.NAMES, call, strict=True)),
                         dict(zip(ops.NAMES, byte, strict=True)),
                         {o: priors[o][2] for o in ops.NAMES}, {})


def emulate_row(row, call, byte, priors, ghz, seed=None):
    """A row's run with the given costs: its scenario at its testbed's clock (``ghz``: testbed
    -> GHz), or the ``config`` and ``cpu_ghz`` a measured row carries."""

    if "config" in row:
        d = {k: v for k, v in row["config"].items() if k != "testbed"}
    else:
        d = published.scenario_dict(row["scenario"])
    hz = ghz[testbed_of(row)]
    if seed is not None:
        d.setdefault("workload", {})["seed"] = seed
    prof = _profile("fit", 1.0, call, byte, priors)
    if row.get("fixed"):  # measured at the nominal clock: as many cycles of the fitted one
        prof = measured.with_machine_ops(prof, row["fixed"], hz / float(row["cpu_ghz"]))
    return emulate(RunConfig.from_dict(d), prof, hz * 1e9)


def _emulate_all(rows, par, p):
    call, byte = par.costs(p)
    first = {}
    for r in rows:
        first.setdefault(r["scenario"], r)
    return {sc: emulate_row(r, call, byte, par.priors, par.ghz(p)) for sc, r in first.items()}


def fit_rows(rows, holdout=None):
    """The rows a fit uses: kind ``fit``, without the held-out source's."""
    return [r for r in rows if r["kind"] == "fit" and source_of(r) != holdout]


def fit(rows=None, verbose=False, holdout=None, par=None, report=None):
    """Fit the shared costs; returns (call costs, byte costs, priors, testbed clocks).
    ``holdout``: a source (seed or measured grid) whose rows are left out. ``report`` (a dict)
    receives the rounds run and the last round's largest relative change."""
    par = par or Parameters(costs.read_priors())
    rows = fit_rows(rows or calibration_rows(), holdout)
    p = par.start()
    change = 0.0
    for it in range(MAX_ITER):
        x = np.concatenate(par.costs(p))
        results = _emulate_all(rows, par, p)
        new = solve(*system(rows, results, par, x), par)
        # relative change, with floors so that sub-cycle costs cannot keep the loop going
        floor = np.maximum(par.start() * 0.01, 0.01)
        change = float(np.max(np.abs(new - p) / np.maximum(p, floor))) if rows else 0.0
        # counts depend on timing, so a fit can flip between two nearby solutions: from the
        # third round on, step halfway, which damps such 2-cycles out
        p = new if it < 2 else 0.5 * (p + new)
        if verbose:
            print(f"iteration {it + 1}: largest change {100 * change:.2f} %")
        if change < CONVERGED:
            break
    else:
        if rows:
            print(f"warning: the fit did not settle in {MAX_ITER} rounds (last change "
                  f"{100 * change:.1f} %): op counts still move with the costs", file=sys.stderr)
    if report is not None:
        report.update(rounds=it + 1, last_change=round(change, 5),
                      settled=change < CONVERGED or not rows)
        if rows:  # rows against the free parameters they touch, at the last round's counts
            n_rows, used = count(rows, results, par, np.concatenate(par.costs(p)))
            report.update(fit_rows=n_rows, free_parameters=len(used))
    call, byte = par.costs(p)
    return call, byte, par.priors, par.ghz(p)


def loo_costs(rows, results, par, x, source):
    """Leave-one-source-out costs from one linearisation: the equations of the other sources'
    fit rows at the op counts of ``results`` (the full fit's runs) and costs ``x``, solved
    once. Returns (call, byte, testbed clocks)."""
    keep = fit_rows(rows, holdout=source)
    q = solve(*system(keep, results, par, x), par)
    call, byte = par.costs(q)
    return call, byte, par.ghz(q)


def count(rows, results, par, x, share=0.02):
    """(fit rows, the free parameters they touch): a parameter counts when it carries more
    than ``share`` of some fit row's cycles at the costs ``x`` (each unstated clock counts)."""
    rows = fit_rows(rows)
    a, _ = system(rows, results, par, x)
    theta = np.linalg.lstsq(par.T, x, rcond=None)[0]  # the parameters behind x
    contrib = np.abs(a * np.concatenate([theta, np.ones(len(par.clocks))]))
    used = {par.names[c] if c < len(par.names) else "clock:" + par.clocks[c - len(par.names)]
            for k in range(len(rows))
            for c in np.flatnonzero(contrib[k] > share * max(contrib[k].sum(), 1e-12))}
    return len(rows), sorted(used)


def profile_clocks():
    """Each testbed's clock as its profile has it (fitted if unstated); the assumed clock where
    no profile is written yet."""
    return {tb: costs.load(tb).cpu_ghz if (costs.COSTS_DIR / f"{tb}.json").exists()
            else float(spec["cpu_ghz"]) for tb, spec in testbeds().items()}


def residuals(rows, call, byte, priors, ghz=None):
    """Re-emulate the rows with the given costs and compare them as `reproduce` does, each
    published row at its testbed's clock in ``ghz`` (default: the written profiles')."""
    ghz = ghz or profile_clocks()
    cache = {}

    def run(sc, seed=None):
        if (sc, seed) not in cache:
            row = next(r for r in rows if r["scenario"] == sc)
            cache[sc, seed] = emulate_row(row, call, byte, priors, ghz, seed)
        return cache[sc, seed]

    out = []
    for r in rows:
        emulated = published.metric_value(r, run)
        err = published.error_of(r, emulated)
        out.append({"id": r["id"], "kind": r["kind"], "unit": r["unit"],
                    "published": float(r["value"]),
                    "emulated": float(f"{emulated:.6g}"), "error": float(f"{err:.4g}"),
                    "tolerance": float(r["tolerance"]),
                    "within": bool(abs(err) <= float(r["tolerance"]))})
    return out


# --- writing profiles -----------------------------------------------------------------------

def holdout(source, verbose=True):
    """Fit without ``source``; the fitted rows' errors and the held-out rows' prediction
    errors (nothing written)."""
    rows = calibration_rows()
    if source not in {source_of(r) for r in rows}:
        have = ", ".join(sorted({source_of(r) for r in rows}))
        raise ValueError(f"--holdout {source!r}: no such source; have: {have}")
    call, byte, priors, ghz = fit(rows, verbose=verbose, holdout=source)
    judged = [r for r in rows if r["kind"] in ("fit", "predict", "identity")
              and r["metric"] != "pps_cv"]
    return {"source": source, "ghz": ghz,
            "fitted": residuals(fit_rows(rows, source), call, byte, priors, ghz),
            "held_out": residuals([r for r in judged if source_of(r) == source],
                                  call, byte, priors, ghz)}


def render_holdout(h):
    lines = [f"fit without {h['source']}; clocks: " +
             ", ".join(f"{tb} {g:.2f} GHz" for tb, g in h["ghz"].items()), ""]
    for title, part in (("fitted rows", h["fitted"]), (f"held out: {h['source']}",
                                                         h["held_out"])):
        lines.append(f"{title}")
        for r in part:
            lines.append(f"  {r['id'][:38]:38} {r['published']:>14.6g} {r['emulated']:>14.6g} "
                         f"{_err(r):>8}  {r['kind']:8} {'yes' if r['within'] else 'NO'}")
    return "\n".join(lines)


def _err(r):
    return f"{r['error']:+.1f}pt" if r["unit"] == "%" else f"{100 * r['error']:+.1f}%"


def calibrate(out_dir=COSTS_DIR, verbose=True):
    """Fit and write one profile per testbed (each with the testbed's stated or fitted clock);
    fitted rows outside tolerance are named on stderr and recorded in the residuals."""
    rows = calibration_rows()
    report = {}
    call, byte, priors, ghz = fit(rows, verbose=verbose, report=report)
    fitted = fit_rows(rows)
    res = residuals(fitted, call, byte, priors, ghz)
    missed = [r for r in res if not r["within"]]
    if missed:  # an honest fit that misses says so (residuals, stderr, reproduce's NO)
        print("fitted rows outside tolerance (recorded in the profiles' residuals): " +
              ", ".join(f"{r['id']} {_err(r)}" for r in missed), file=sys.stderr)
    fitted_ids = {r["id"] for r in fitted}
    beds = testbeds()
    written = []
    for tb, spec in beds.items():
        about = spec.get("about", "")
        if not spec.get("cpu_stated", True):
            lo, hi = spec["cpu_ghz_range"]
            at = " low" if ghz[tb] <= lo * 1.001 else " high" if ghz[tb] >= hi * 0.999 else ""
            about += (f"; clock fitted: {ghz[tb]:.3g} GHz (assumed {spec['cpu_ghz']:g}, "
                      f"plausible {lo:g}-{hi:g}{f', AT ITS{at.upper()} BOUND' if at else ''})")
        written.append(write_profile(out_dir, tb, round(ghz[tb], 4), about, call, byte, priors,
                                     fitted_ids, res, verbose, report))
    return written


def write_profile(out_dir, testbed, cpu_ghz, about, call, byte, priors, fitted_ids, res,
                  verbose=True, report=None):
    """Write ``<out_dir>/<testbed>.json``: op costs with provenance, fitted rows, residuals
    and the inputs hash :func:`costs.load` checks. The one writer of cost profiles."""
    out_dir.mkdir(parents=True, exist_ok=True)
    doc = {"testbed": testbed, "cpu_ghz": cpu_ghz, "about": about,
           "ops": {o: {"call": round(float(call[i]), 4), "byte": round(float(byte[i]), 5),
                       "source": ("fitted to " + ", ".join(sorted(fitted_ids)) +
                                  "; prior: " + priors[o][2]) if fitted_ids
                       else "prior: " + priors[o][2]}
                   for i, o in enumerate(ops.NAMES)},
           "fit_rows": sorted(fitted_ids), "residuals": res, "convergence": report or {}}
    doc["inputs_hash"] = costs.inputs_hash(doc)
    path = out_dir / f"{testbed}.json"
    path.write_text(json.dumps(doc, indent=1, sort_keys=True) + "\n")
    if verbose:
        try:
            shown = path.relative_to(DATA_DIR.parent)
        except ValueError:
            shown = path
        print(f"wrote {shown}")
    return path
