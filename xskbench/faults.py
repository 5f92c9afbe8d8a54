"""Fault injection (issue #10): the config checks, the arena block the kernels read
(``kernels/faults.py``) and the recovery times a run reports.

A recovery time is measured per fault window that ends inside the measured window: from the
window's end until the delivered rate (rx + tx packets over a sliding interval of at least
``RECOVERY_SAMPLES`` time-series steps and ``RECOVERY_PACKETS`` packets at the pre-fault rate,
since packets complete in batches) is back within ``RECOVERY_TOL`` of the rate before the
window; None ("not recovered") if that does not happen before the next window or the run's
end.
"""
import numpy as np

from .kernels import faults as kf
from .kernels import layout as L
from .sections.faults import WINDOWS, active, stall_context_problem

RECOVERY_TOL = 0.10
RECOVERY_SAMPLES = 4
RECOVERY_PACKETS = 500
def words(ts_points):
    """Size of the fault block: parameters and counts, then the delivered-packets column."""
    return kf.F_TS + ts_points


def install(m, off, cfg, contexts, mc_per_s):
    """Fill the fault block at ``off`` and the stalled contexts' windows; ValueError if
    ``faults.stall_context`` names no context of this run."""
    f = cfg.faults
    mc = lambda us: round(us * 1e-6 * mc_per_s)  # noqa: E731

    def window(length, period):  # in virtual time, still 0 < length < period after rounding
        p = max(2, mc(period))
        return min(max(1, mc(length)), p - 1), p

    m[L.H_FAULT] = off
    if f.stall_us > 0:
        # "host": the context the device marks as its backend / peer side (Context.host)
        hit = [i for i, c in enumerate(contexts)
               if (c.host if f.stall_context == "host" else c.name == f.stall_context)]
        if not hit:  # the config checked it when the device names its contexts
            raise ValueError(stall_context_problem(cfg, [c.name for c in contexts])
                             or f"faults.stall_context='host': device {cfg.device!r} marks "
                             "no context as its host side")
        for i in hit:
            base = m[L.H_CTX] + i * L.CX_N
            m[base + L.CX_STALL], m[base + L.CX_STALL_PER] = window(f.stall_us, f.stall_period_us)
    on = active(f)
    if "irq" in on or "spike" in on:
        m[off + kf.F_NOTIFY] = 1
        m[off + kf.F_LOST_PPM] = round(f.irq_lost_prob * 1e6)
        m[off + kf.F_LATE_PPM] = round(f.irq_late_prob * 1e6) if f.irq_late_us > 0 else 0
        m[off + kf.F_LATE] = mc(f.irq_late_us)
    if "spike" in on:
        m[off + kf.F_SPIKE] = mc(f.spike_us)
        m[off + kf.F_SPIKE_LEN], m[off + kf.F_SPIKE_PER] = window(f.spike_window_us,
                                                                  f.spike_period_us)
    if "fill_stop" in on:
        m[off + kf.F_FILL_LEN], m[off + kf.F_FILL_PER] = window(f.fill_stop_us,
                                                                f.fill_stop_period_us)
    if "burst" in on:
        m[off + kf.F_BURST_X] = round((f.burst_factor - 1) * kf.X_SCALE)
        m[off + kf.F_BURST_LEN], m[off + kf.F_BURST_PER] = window(f.burst_us, f.burst_period_us)


# --- after the run: recovery times -----------------------------------------------------------
def _rate(t, d, i, j):
    return (d[j] - d[i]) / (t[j] - t[i]) if t[j] > t[i] else None


def recovery(t, d, start, end, next_start, pre_from):
    """Recovery after one window (times in µs, ``d`` cumulative delivered packets): the time
    from ``end`` until the rate over RECOVERY_SAMPLES steps is within RECOVERY_TOL of the rate
    over [pre_from, start]; (pre-fault rate, recovery) — recovery None if not recovered."""
    i0, i1 = np.searchsorted(t, pre_from), np.searchsorted(t, start, side="right") - 1
    pre = _rate(t, d, i0, i1) if i1 > i0 else None
    if not pre:
        return pre, None
    step = (t[-1] - t[0]) / max(len(t) - 1, 1)
    w = max(RECOVERY_SAMPLES, int(np.ceil(RECOVERY_PACKETS / (pre * step))))
    for i in range(int(np.searchsorted(t, end)), len(t) - w):
        if t[i + w] > next_start:
            break
        r = _rate(t, d, i, i + w)
        if r is not None and abs(r - pre) <= RECOVERY_TOL * pre:
            return pre, float(t[i] - end)
    return pre, None


def report(cfg, mach):
    """The run's fault summary (None when no fault is on): notification counts and, for each
    window ending inside the measured window, its recovery time."""
    f = cfg.faults
    on = active(f)
    if not on:
        return None
    m = mach.m
    off = int(m[L.H_FAULT])
    us = lambda x: float(x) / (mach.hz * L.MC) * 1e6  # noqa: E731
    n = int(m[L.H_TS_N])
    t = np.array([us(m[m[L.H_TS] + i * (1 + int(m[L.H_TS_NRINGS]))]) for i in range(n)])
    d = m[off + kf.F_TS:off + kf.F_TS + n].astype(float)
    warm = us(m[L.H_WARM]) if m[L.H_SNAP_DONE] else 0.0
    run_end = us(m[L.H_END])
    windows = []
    for kind, length, period in WINDOWS:
        if kind not in on:
            continue
        dur, per = getattr(f, length), getattr(f, period)
        k = 1
        while k * per + dur <= run_end:
            start, end = k * per, k * per + dur
            if end >= warm:
                pre, rec = recovery(t, d, start, end, (k + 1) * per,
                                    max(0.0, start - (per - dur) / 2))
                windows.append({"fault": kind, "start_us": round(start, 3),
                                "end_us": round(end, 3),
                                "pre_pps": None if pre is None else round(pre * 1e6),
                                "recovery_us": None if rec is None else round(rec, 3)})
            k += 1
    return {"active": on, "windows": windows,
            "notifications": {"lost": int(m[off + kf.F_N_LOST]),
                              "late": int(m[off + kf.F_N_LATE]),
                              "spiked": int(m[off + kf.F_N_SPIKED])},
            "fill_refills_skipped": int(m[off + kf.F_N_FILL_SKIPS])}


def lines(res):
    """The fault part of the text report (empty without faults)."""
    rep = res.faults
    if not rep:
        return []
    out = ["", f" faults: {', '.join(rep['active'])}"]
    n = rep["notifications"]
    if any(n.values()):
        out.append(f" notifications lost {n['lost']:,}  late {n['late']:,}  "
                   f"spiked {n['spiked']:,}")
    if rep["fill_refills_skipped"]:
        out.append(f" fill refills skipped {rep['fill_refills_skipped']:,}")
    for kind in dict.fromkeys(w["fault"] for w in rep["windows"]):
        ws = [w for w in rep["windows"] if w["fault"] == kind]
        rec = [w["recovery_us"] for w in ws if w["recovery_us"] is not None]
        text = (f"recovery median {np.median(rec):.1f} us, max {max(rec):.1f} us"
                if rec else "no recovery")
        out.append(f" {kind:10} {len(ws):>4} windows  {text}"
                   + (f"  ({len(ws) - len(rec)} not recovered)" if len(rec) < len(ws) else ""))
    return out
