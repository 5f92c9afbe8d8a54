"""``xskbench sweep GRID.yaml``: run a parameter sweep and write the tidy results to Parquet.

GRID.yaml holds ``base:`` (a partial config, as for ``xskbench run --config``) and ``grid:``
(field path -> list of values, or a ``sample:`` spec; see :mod:`xskbench.sweep`)::

    base:
      device: null
      workload: {duration_s: 0.002, warmup_s: 0.0005}
    grid:
      xsk.batch_size: [16, 64, 256]
      null.napi_budget: [32, 64]
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from xskbench.config import _one_line
from xskbench.estimate import LIMIT_S, gate
from xskbench.loading import load_document
from xskbench.outputs import check_writable, write_atomically
from xskbench.sweep import SchedulerError, SweepInterrupted, sweep, varying
from xskbench.sweep_plots import pareto

_KEYS = ("base", "grid")


def load_grid(path: str | Path) -> tuple[dict, Any]:
    """``(base, grid)`` from a GRID.yaml; ValueError (one line, naming the file) if bad."""
    path = Path(path)
    data = load_document(path, yaml_default=True)
    if not isinstance(data, dict):
        raise ValueError(f"{path}: expected a mapping with keys base: and grid:")
    unknown = sorted(set(map(str, data)) - set(_KEYS))
    if unknown:
        raise ValueError(f"{path}: unknown keys {unknown}; allowed: base, grid")
    if data.get("grid") is None:
        raise ValueError(f"{path}: missing grid: (field -> list of values, or a sample: spec)")
    base = data.get("base") or {}
    if not isinstance(base, dict):
        raise ValueError(f"{path}: base: must be a mapping (a partial config)")
    return base, data["grid"]


def _positive(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not an int") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"{value} must be >= 1")
    return value


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("grid", metavar="GRID.yaml", help="base: partial config; grid: the sweep")
    p.add_argument("--scheduler", metavar="ADDRESS",
                   help="a running Dask scheduler (tcp://HOST:8786), or 'serial' to run in "
                        "this process (default: a local cluster of --workers processes)")
    p.add_argument("--workers", type=_positive, metavar="N",
                   help="processes of the local cluster (default: the number of cores)")
    p.add_argument("--out", metavar="FILE",
                   help="Parquet file for the tidy results (default: the grid file's name "
                        "with .parquet, in the current directory)")
    p.add_argument("--no-cache", action="store_true",
                   help="neither read nor write the result cache")
    p.add_argument("--cache-dir", metavar="DIR",
                   help="result cache (default ~/.cache/xskbench/sweeps, or "
                        "$XSKBENCH_SWEEP_CACHE)")
    p.add_argument("--no-progress", action="store_true", help="no progress bar")
    p.add_argument("--top", type=_positive, default=10, metavar="N",
                   help="print at most N configurations of the Pareto front (default 10)")
    p.add_argument("--yes", action="store_true",
                   help="run even if the sweep is estimated to take longer than "
                        f"{LIMIT_S / 60:.0f} min")


def main(args: argparse.Namespace) -> int:
    base, grid = load_grid(args.grid)
    if args.no_cache and args.cache_dir:
        raise ValueError("--no-cache and --cache-dir exclude each other")
    if args.workers and args.scheduler:
        raise ValueError("--workers sizes the local cluster: not with --scheduler")
    out = Path(args.out) if args.out else Path(Path(args.grid).stem + ".parquet")
    if out.suffix.lower() != ".parquet":
        raise ValueError(f"--out {out}: expected a .parquet file")
    check_writable(out, "--out")  # before the work, not after it

    def confirm(seconds: float) -> None:
        line = gate(seconds, f"this sweep ({args.grid})", args.yes)
        if line:
            print(line, file=sys.stderr, flush=True)

    try:
        df = sweep(base, grid, scheduler=args.scheduler, workers=args.workers,
                   cache=False if args.no_cache else args.cache_dir,
                   progress=not args.no_progress, gate=confirm)
    except SchedulerError:
        raise
    except SweepInterrupted as err:
        print(f"xskbench: {err}", file=sys.stderr)
        return 130
    except KeyboardInterrupt:  # before any configuration ran
        print("xskbench: sweep interrupted before it started", file=sys.stderr)
        return 130
    except ValueError as err:
        raise ValueError(f"{args.grid}: {_one_line(err)}") from None
    write_atomically(out, lambda tmp: df.to_parquet(tmp, index=False))
    info = df.attrs["sweep"]
    print(f"{info['points']} configurations: {info['computed']} computed, {info['cached']} "
          f"cached, {info['errors']} failed, in {info['seconds']:.1f} s -> {out}")
    front = pareto(df)
    if info["errors"]:
        first = front.loc[front["error"].notna(), "error"].iloc[0]
        print(f"first error: {first}")
    ok = front[front["error"].isna()]
    if len(ok):
        cols = varying(front) + ["pps", "cpu_total", "bottleneck"]
        best = ok[ok["pareto"]].sort_values("cpu_total").head(args.top)
        print("Pareto front (pps versus total CPU %):")
        print(best[cols].to_string(index=False, na_rep="none",
                                    float_format=lambda v: f"{v:.4g}"))
    sys.stdout.flush()
    return 0 if len(ok) else 1
