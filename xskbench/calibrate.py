"""Calibration: fit op costs to published results, and the only writer of cost profiles.

A published row says a context spends U % of a CPU at rate R on an f GHz testbed, i.e.
U·f/R cycles per packet. The emulation counts each op per packet in that context, so each
row is linear in the op costs: Σ calls/pkt · call_cost + bytes/pkt · byte_cost = U·f/R.
Rows are scaled to relative error; weak ridge rows keep every op near its documented prior
where the data say nothing. Non-negative least squares solves it; the scenarios are then
re-emulated with the new costs (counts depend on timing) until the costs stop moving.
One op table serves every testbed: a testbed adds only its CPU frequency.
"""
import csv
import json

import numpy as np
import yaml
from scipy.optimize import nnls

from . import costs, ops
from .paths import COSTS_DIR, DATA_DIR

RIDGE = 0.05        # weight of the priors against the published rows (relative units)
MAX_ITER = 12
CONVERGED = 0.005   # largest relative change of any cost that counts as settled


def read_rows(path=DATA_DIR / "published.csv"):
    with open(path, newline="") as f:
        return [r for r in csv.DictReader(f)]


def scenarios():
    return yaml.safe_load((DATA_DIR / "scenarios.yaml").read_text())


def testbeds():
    return yaml.safe_load((DATA_DIR / "testbeds.yaml").read_text())


def _emulate(name, prof):
    """Run a scenario with the given in-memory profile; returns the Result."""
    from .run import emulate

    return emulate(_cfg_unchecked(name), prof,
                   testbeds()[scenarios()[name]["testbed"]]["cpu_ghz"] * 1e9)


def scenario_config(name):
    """A scenario's config, with its testbed's cost profile."""
    from .config import RunConfig

    sc = scenarios()[name]
    d = json.loads(json.dumps(sc["config"]))
    d.setdefault("testbed", {})["profile"] = sc["testbed"]
    return RunConfig.from_dict(d)


def _cfg_unchecked(name):
    """The scenario's config without requiring its profile file to exist yet."""
    from .config import RunConfig

    d = json.loads(json.dumps(scenarios()[name]["config"]))
    return RunConfig.from_dict({k: v for k, v in d.items() if k != "testbed"})


def _per_packet(res, ctx):
    """Per-packet op calls and bytes of a context label, a CPU (``cpuN``) or all (empty)."""
    sel = [i for i, lab in enumerate(res.labels)
           if not ctx or lab == ctx or f"cpu{res.label_cpu[i]}" == ctx]
    if not sel:
        raise ValueError(f"no context {ctx!r} in {res.labels}")
    pkts = max(res.counters["rx_packets"], res.counters["tx_packets"], 1)
    return np.concatenate([res.op_calls[sel].sum(axis=0), res.op_bytes[sel].sum(axis=0)]) / pkts


def row_equation(row, res, x):
    """One published row as a linear equation ``a · costs = b`` scaled to relative error.

    pps / cpu: the context spends U·f/R cycles per packet (U = 100 % for a pps row, whose
    context is the bottleneck, unless the row gives its measured ``util``). share: an op's
    cycles are s % of its context's cycles.
    """
    metric = row["metric"]
    if metric in ("pps", "pps_rx", "pps_tx", "cpu"):
        rate = float(row["rate"] or row["value"])
        util = float(row["value"]) if metric == "cpu" else float(row.get("util") or 100.0)
        target = util / 100.0 * res.hz / rate
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


def _emulate_row(row, prof):
    """A row's run: its scenario from scenarios.yaml, or the ``config`` dict and ``cpu_ghz``
    the row carries itself (rows built from real measurements, see real_calibrate.py)."""
    if "config" not in row:
        return _emulate(row["scenario"], prof)
    from .config import RunConfig
    from .run import emulate

    d = {k: v for k, v in row["config"].items() if k != "testbed"}
    return emulate(RunConfig.from_dict(d), prof, float(row["cpu_ghz"]) * 1e9)


def _emulate_all(rows, prof):
    first = {}
    for r in rows:
        first.setdefault(r["scenario"], r)
    return {sc: _emulate_row(r, prof) for sc, r in first.items()}


def fit(rows=None, verbose=False):
    """Fit the shared op costs; returns (call costs, byte costs, priors)."""
    priors = costs.read_priors()
    rows = [r for r in (rows or read_rows()) if r["kind"] == "fit"]
    n = ops.N_OPS
    prior = np.array([priors[o][0] for o in ops.NAMES] + [priors[o][1] for o in ops.NAMES])
    free = prior > 0  # an op without a prior cost (e.g. no per-byte part) stays at zero
    ridge_a = np.diag(np.where(free, RIDGE / np.where(free, prior, 1.0), 1.0))
    ridge_b = RIDGE * free.astype(float)
    x = prior.copy()
    for it in range(MAX_ITER):
        results = _emulate_all(rows, _profile("fit", 1.0, x, priors))
        eqs = [row_equation(r, results[r["scenario"]], x) for r in rows]
        a = np.vstack([e[0] for e in eqs] + [ridge_a])
        b = np.concatenate([[e[1] for e in eqs], ridge_b])
        new, _ = nnls(a, b, maxiter=50 * a.shape[1])
        # relative change, with floors so that sub-cycle costs cannot keep the loop going
        floor = np.concatenate([np.full(n, 1.0), np.full(n, 0.01)])
        change = float(np.max(np.abs(new - x) / np.maximum(x, floor))) if rows else 0.0
        # counts depend on timing, so a fit can flip between two nearby solutions: from the
        # third round on, step halfway, which damps such 2-cycles out
        x = new if it < 2 else 0.5 * (x + new)
        if verbose:
            print(f"iteration {it + 1}: largest cost change {100 * change:.2f} %")
        if change < CONVERGED:
            break
    return x[:n], x[n:], priors


def _profile(name, ghz, x, priors):
    n = ops.N_OPS
    return costs.Profile(name, ghz, dict(zip(ops.NAMES, x[:n], strict=True)),
                         dict(zip(ops.NAMES, x[n:], strict=True)),
                         {o: priors[o][2] for o in ops.NAMES}, {})


def residuals(rows, call, byte, priors):
    """Re-emulate the rows with the given costs and compare them as `reproduce` does."""
    from .reproduce import error_of, metric_value

    results = _emulate_all(rows, _profile("fit", 1.0, np.concatenate([call, byte]), priors))
    out = []
    for r in rows:
        emulated = metric_value(r, lambda sc, seed=None: results[sc])
        err = error_of(r, emulated)
        out.append({"id": r["id"], "kind": r["kind"], "published": float(r["value"]),
                    "emulated": float(f"{emulated:.6g}"), "error": float(f"{err:.4g}"),
                    "tolerance": float(r["tolerance"]),
                    "within": bool(abs(err) <= float(r["tolerance"]))})
    return out


def calibrate(out_dir=COSTS_DIR, verbose=True):
    """Fit, check the fitted rows are within tolerance, write one profile per testbed."""
    rows = read_rows()
    call, byte, priors = fit(rows, verbose=verbose)
    fitted = [r for r in rows if r["kind"] == "fit"]
    res = residuals(fitted, call, byte, priors)
    bad = [r for r in res if not r["within"]]
    if bad:
        raise ValueError("fit residuals exceed tolerance, no profile written: " + ", ".join(
            f"{r['id']} published {r['published']:g} emulated {r['emulated']:g}" for r in bad))
    fitted_ids = {r["id"] for r in fitted}
    written = [write_profile(out_dir, tb, spec["cpu_ghz"], spec.get("about", ""), call, byte,
                             priors, fitted_ids, res, verbose)
               for tb, spec in testbeds().items()]
    return written


def write_profile(out_dir, testbed, cpu_ghz, about, call, byte, priors, fitted_ids, res,
                  verbose=True):
    """Write ``<out_dir>/<testbed>.json``: op costs with provenance, fitted rows, residuals
    and the inputs hash :func:`costs.load` checks. The one writer of cost profiles."""
    out_dir.mkdir(parents=True, exist_ok=True)
    doc = {"testbed": testbed, "cpu_ghz": cpu_ghz, "about": about,
           "ops": {o: {"call": round(float(call[i]), 4), "byte": round(float(byte[i]), 5),
                       "source": ("fitted to " + ", ".join(sorted(fitted_ids)) +
                                  "; prior: " + priors[o][2]) if fitted_ids
                       else "prior: " + priors[o][2]}
                   for i, o in enumerate(ops.NAMES)},
           "fit_rows": sorted(fitted_ids), "residuals": res}
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
