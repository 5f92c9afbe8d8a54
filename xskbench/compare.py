"""Two runs side by side: the Explorer's "pin this run" delta table and a cover-letter block.

- :func:`delta_rows`: packet rates and CPU % per context, before (pinned) and after, with the
  difference; :func:`profile_diff`: the perf-top shares of both, as ``perf diff`` prints
  them (baseline share, then the change in percentage points).
- :func:`cover_letter`: both configurations over N seeds (``workload.seed`` = 1 .. N), as a
  plain-text block for a patch's cover letter: mean ± sd before and after, and the gain.
"""

from __future__ import annotations

import statistics
from collections.abc import Sequence
from typing import Any

import xskbench
from xskbench import __version__
from xskbench.export import _wrap, config_changes
from xskbench.fields import fmt


def _rate(res: Any) -> float:
    return max(res.pps.values())


def delta_rows(before: Any, after: Any) -> list[tuple[str, float, float, float]]:
    """``(what, before, after, after - before)``: tx and rx pps, then CPU % of every context
    that ran in either (0 where a context did not exist)."""
    rows = [(f"{d} pps", before.pps[d], after.pps[d], after.pps[d] - before.pps[d])
            for d in ("tx", "rx") if before.pps[d] or after.pps[d]]
    for lab in dict.fromkeys([*before.labels, *after.labels]):
        b, a = before.cpu.get(lab, 0.0), after.cpu.get(lab, 0.0)
        if b or a:
            rows.append((f"{lab} CPU %", b, a, a - b))
    return rows


def profile_diff(before: Any, after: Any, top: int = 12) -> list[tuple[str, float, float]]:
    """``(symbol [context], baseline share %, delta pp)`` for the ``top`` symbols of either
    run by share, largest baseline first - ``perf diff``'s Baseline and Delta columns."""
    def shares(res: Any) -> dict[str, float]:
        df = res.profile()
        return {f"{op} [{ctx}]": float(s)
                for op, ctx, s in zip(df["op"], df["context"], df["share"], strict=True)}

    b, a = shares(before), shares(after)
    keys = sorted(set(b) | set(a), key=lambda k: -max(b.get(k, 0.0), a.get(k, 0.0)))[:top]
    rows = [(k, b.get(k, 0.0), a.get(k, 0.0) - b.get(k, 0.0)) for k in keys]
    return sorted(rows, key=lambda r: -r[1])


def changed_keys(before: Any, after: Any) -> list[str]:
    """``["mode=copy", "veth.csum_offload=false"]``: the settings of RunConfig ``after``
    that differ from ``before``'s (a field set back to its default included)."""
    old = dict(p.split("=", 1) for p in config_changes(before.to_dict()))
    new = dict(p.split("=", 1) for p in config_changes(after.to_dict()))
    out = [f"{k}={v}" for k, v in new.items() if old.get(k) != v]
    for key in old.keys() - new.keys():  # back to the default
        section, name = key.split(".", 1)
        out.append(f"{key}={fmt(getattr(getattr(after, section), name))}")
    return out


def seeds_runs(cfg: Any, n: int) -> list[Any]:
    """``cfg`` run with ``workload.seed`` = 1 .. n."""
    return [xskbench.run(cfg.replace(**{"workload.seed": s})) for s in range(1, n + 1)]


def _mean_sd(values: Sequence[float]) -> tuple[float, float]:
    return statistics.fmean(values), statistics.stdev(values) if len(values) > 1 else 0.0


def cover_letter(before: Any, after: Any, n: int = 5) -> str:
    """A block of at most 72 columns comparing config ``before`` and ``after`` (RunConfigs)
    over ``n`` seeds each: rate and the bottleneck's CPU as mean ± sd, and the gain in %."""
    if n < 1:
        raise ValueError(f"n={n}: must be an int >= 1 (seeds per config)")
    runs = {"before": seeds_runs(before, n), "after": seeds_runs(after, n)}
    lines = [f"xskbench {__version__} (emulated), {n} seeds each, "
             f"{before.workload.duration_s * 1e3:g} ms per run",
             "before: " + " ".join(config_changes(before.to_dict())),
             "after:  " + (" ".join(changed_keys(before, after)) or "(same config)"), ""]
    head = f"{'':18}{'before':>18}{'after':>18}{'gain':>9}"
    lines.append(head)

    def row(name: str, get: Any, unit: str, scale: float = 1.0) -> None:
        b = _mean_sd([get(r) / scale for r in runs["before"]])
        a = _mean_sd([get(r) / scale for r in runs["after"]])
        gain = f"{100.0 * (a[0] - b[0]) / b[0]:+.1f} %" if b[0] else "-"
        lines.append(f"{name:18}{b[0]:>10.3f} ± {b[1]:<5.3f}{a[0]:>10.3f} ± {a[1]:<5.3f}"
                     f"{gain:>9}  {unit}".rstrip())

    row("rate", _rate, "Mpps", 1e6)
    for lab in dict.fromkeys([*runs["before"][0].labels, *runs["after"][0].labels]):
        if any(r.cpu.get(lab, 0.0) for r in runs["before"] + runs["after"]):
            row(f"{lab} CPU %", lambda r, lab=lab: r.cpu.get(lab, 0.0), "")
    row("pps per CPU %", lambda r: _rate(r) / max(sum(r.cpu.values()), 1e-9), "kpps", 1e3)
    return "\n".join(_wrap(lines)) + "\n"
