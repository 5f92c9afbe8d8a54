"""Calibrate a cost profile for *this machine* from real measurements.

``xskbench measure --sweep FILE`` stores real runs (one per point of a sweep over batch size,
ring size, need_wakeup, packet size, wait mode). Each measured point becomes one fit row for
:func:`xskbench.calibrate.fit`, exactly like a published row: the emulated counterpart of the
measured configuration (a ``config`` the row carries, run at ``cpu_ghz``), metric ``pps`` with
the measured bottleneck's CPU at its measured utilisation (``util``). The NNLS fit, its ridge to
the priors, the iteration and the profile writer are calibrate.py's; this module only builds
rows and chooses the counterpart.

The emulated counterpart is the measured device's (devices/<name>/counterpart.py). A veth
point is the emulated veth with ``veth.peer = "xdp_drop"``, the measured pair itself: for
rxdrop and l2fwd the peer's live-frames sender (BPF_PROG_RUN, XDP_REDIRECT, veth_xdp_xmit into
the receiving veth's ptr_ring) and the receiving veth's NAPI (veth_poll, XDP_REDIRECT into the
socket, the copy into a fill-ring frame) on the peer's CPU, the app on its own; for txonly the
app's copy-mode sendto into the peer's XDP_DROP program, whose NAPI runs on the app's CPU.
Generic XDP (``xdp_mode=skb``) is ``veth.xdp_mode=skb``. Points measured with ``wait=poll``
or busy poll have no emulated counterpart and are left out, and so are points at a set rate
(the real sender spins between packets, so its CPU is not per-packet work); points repeating
a configuration are fitted once. This machine's syscall entry is held at its microbenchmark
(measured.MACHINE_OPS), not fitted.
"""
import json
import sys
from pathlib import Path

import numpy as np
import pandas as pd

from . import calibrate, costs, ops, published
from .config import RunConfig
from .measured import (
    MEASURED_BED,
    TESTBED,
    TOLERANCE,
    _cpu_ghz,
    counterpart,
    load,
    rows,
)
from .run import emulate


def fit(path, cpu_ghz=None, tolerance=TOLERANCE, verbose=False):
    """Fit the op costs to a stored sweep (a path, or the dict ``measure.sweep`` returns)
    with calibrate.fit; returns a dict with the costs, the rows, their residuals and the
    skipped points."""
    doc = {"name": "live", **path} if isinstance(path, dict) else load(path)
    path = doc["name"] if isinstance(path, dict) else path
    ghz, ghz_source = (float(cpu_ghz), "given") if cpu_ghz else _cpu_ghz(doc)
    fit_rows, skipped = rows(doc, ghz, tolerance)
    if not fit_rows:
        raise ValueError(f"{path}: no measured point has an emulated counterpart")

    # this machine's profile: its own microbenchmarks are its priors (costs.read_priors),
    # its clock the measured one (not the shared fit's effective clock of this-vm)
    stated = {MEASURED_BED: {"cpu_ghz": ghz, "cpu_stated": True}}
    par = calibrate.Parameters(costs.read_priors(here=True), beds=stated)
    call, byte, priors, clocks = calibrate.fit(fit_rows, verbose=verbose, par=par)
    res = calibrate.residuals(fit_rows, call, byte, priors, clocks)
    return {"source": str(path), "name": doc["name"], "cpu_ghz": ghz, "ghz_source": ghz_source,
            "call": call, "byte": byte, "priors": priors, "rows": fit_rows,
            "residuals": res, "skipped": skipped}


def profile(f, name=TESTBED):
    """The fitted costs as an in-memory Profile (nothing written)."""
    return costs.Profile(name, f["cpu_ghz"], dict(zip(ops.NAMES, f["call"], strict=True)),
                         dict(zip(ops.NAMES, f["byte"], strict=True)),
                         {o: "fitted to " + f["name"] for o in ops.NAMES}, {})


def render(f):
    """The fit as text: the ops that moved off their priors, then every row's residual."""
    lines = [f"fit to {f['source']} at {f['cpu_ghz']:g} GHz ({f['ghz_source']}); "
             f"counterpart: the measured device's (see xskbench/real_calibrate.py)",
             "", f"{'op':34s} {'prior':>9s} {'fitted':>9s}   per call, cycles (per byte)"]
    for i, o in enumerate(ops.NAMES):
        pc, pb = f["priors"][o][:2]
        c, b = float(f["call"][i]), float(f["byte"][i])
        if abs(c - pc) > 0.005 * max(pc, 1.0) or abs(b - pb) > 0.005 * max(pb, 0.01):
            extra = f"   ({pb:.3f} -> {b:.3f})" if pb or b else ""
            lines.append(f"{o:34s} {pc:9.1f} {c:9.1f}{extra}")
    lines += ["", f"{'row':40s} {'measured':>10s} {'emulated':>10s} {'error':>8s}  within"]
    for r in f["residuals"]:
        lines.append(f"{r['id']:40s} {r['published']:10.4g} {r['emulated']:10.4g} "
                     f"{100 * r['error']:+7.1f}%  {'yes' if r['within'] else 'NO'} "
                     f"(±{100 * r['tolerance']:g}%)")
    for label, why in f["skipped"]:
        lines.append(f"not fitted: {label}: {why}")
    return "\n".join(lines)


def check_testbed(testbed):
    """A name for a profile of this machine: not a published testbed, a plain file stem."""
    if testbed in published.testbeds():
        raise ValueError(f"--testbed {testbed}: a published testbed (data/testbeds.yaml); "
                         "its profile is written only by `xskbench calibrate`")
    if not testbed or not testbed[0].isalnum() or \
            not all(ch.isalnum() or ch in "_.-" for ch in testbed):
        raise ValueError(f"--testbed {testbed!r}: letters, digits, '_', '.', '-' only")


def write(f, testbed=TESTBED, out_dir=None, verbose=True):
    """Write ``data/costs/<testbed>.json`` through calibrate's writer; a published testbed's
    profile is never overwritten. Unlike the published fit, rows outside tolerance do not
    stop the write (real runs carry effects the emulation lacks, e.g. the ring-size cache
    footprint): they are named on stderr and recorded in the profile's residuals."""
    check_testbed(testbed)
    bad = [r for r in f["residuals"] if not r["within"]]
    if bad and verbose:
        print("warning: rows outside tolerance (kept in the profile's residuals): " +
              ", ".join(f"{r['id']} {100 * r['error']:+.1f}%" for r in bad), file=sys.stderr)
    about = (f"fitted to real measurements {f['source']} (each point emulated by its "
             f"device's counterpart); {f['cpu_ghz']:g} GHz: {f['ghz_source']}")

    return calibrate.write_profile(Path(out_dir or costs.COSTS_DIR), testbed, f["cpu_ghz"],
                                   about, f["call"], f["byte"], f["priors"],
                                   {r["id"] for r in f["rows"]}, f["residuals"], verbose)


# --- measured beside emulated (notebook 06) ----------------------------------------------

def side_by_side(doc, prof, hz=None):
    """One row per measured point: measured pps and CPU beside the counterpart's emulation
    with ``prof`` (points without a counterpart get NaN)."""

    hz = hz or prof.cpu_ghz * 1e9
    cache, out = {}, []
    for p in doc["points"]:
        res = p["result"]
        cfg = counterpart(res["config"])
        emu = np.nan
        if not isinstance(cfg, str):
            key = json.dumps(cfg, sort_keys=True)
            if key not in cache:
                cache[key] = max(emulate(RunConfig.from_dict(cfg), prof, hz).pps.values())
            emu = cache[key]
        out.append({"axis": p.get("axis"), "value": p.get("value"),
                    "measured_pps": max(res["pps"].values()), "emulated_pps": emu,
                    "measured_cv": _cv(res),
                    "bottleneck": res.get("bottleneck"),
                    "note": cfg if isinstance(cfg, str) else ""})
    return pd.DataFrame(out)


def _cv(res):
    """Run-to-run coefficient of variation of the measured receive rate (NaN if unknown)."""
    try:
        return float(res["spread"]["pps"]["rx"]["cv"])
    except (KeyError, TypeError, ValueError):
        return np.nan


def direction(values, rates, flat=0.03):
    """'up', 'down' or 'flat' for the rate from the first to the last value of a knob
    (relative change within ±flat counts as flat); 'n/a' without two rates."""
    pts = [(v, r) for v, r in zip(values, rates, strict=True) if np.isfinite(r)]
    if len(pts) < 2:
        return "n/a"
    change = pts[-1][1] / pts[0][1] - 1.0
    return "flat" if abs(change) <= flat else ("up" if change > 0 else "down")


def directions(table, flat=0.03):
    """Per knob: the measured and emulated direction of the rate and whether they agree."""
    out = []
    for axis, g in table.groupby("axis", sort=False):
        g = g.sort_values("value", key=lambda s: s.map(_order))
        m = direction(list(g.value), list(g.measured_pps), flat)
        e = direction(list(g.value), list(g.emulated_pps), flat)
        span = f"{_fmt(g.value.iloc[0])} → {_fmt(g.value.iloc[-1])}"
        out.append({"knob": axis, "from → to": span, "measured": m, "emulated": e,
                    "agree": "n/a" if "n/a" in (m, e) else ("yes" if m == e else "no")})
    return pd.DataFrame(out)


def _order(v):
    if isinstance(v, bool):  # need_wakeup: on first, as xdpsock's default
        return 0 if v else 1
    if isinstance(v, str):
        return ("spin", "busy-poll", "poll").index(v) if v in ("spin", "busy-poll", "poll") else 9
    return v


def _fmt(v):
    return str(v).lower() if isinstance(v, bool) else str(v)
