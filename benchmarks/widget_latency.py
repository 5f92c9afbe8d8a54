#!/usr/bin/env python3
"""Kernel-side latency of the Explorer: a slider change -> the figures updated.

Measures, for the Explorer's default scenario (null device, zero-copy, 2 ms emulated), the
time of the observer callback that a slider change triggers: building the config from the
controls, ``xskbench.run`` and the ``batch_update`` of every figure.  The browser's redraw
is not included (benchmarks/browser_latency.py measures it end to end).  Prints the median
over ~20 changes (target: <= 150 ms).

    .venv/bin/python benchmarks/widget_latency.py [--changes 20] [--knob xsk.batch_size]
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

TARGET_MS = 150.0


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--changes", type=int, default=20)
    ap.add_argument("--knob", default="xsk.batch_size",
                    help="a slider or checkbox of the Explorer (default xsk.batch_size)")
    args = ap.parse_args(argv)

    from xskbench.widgets import Explorer

    t0 = time.perf_counter()
    ex = Explorer()  # the default scenario, as in the quick-start notebook
    print(f"Explorer built in {time.perf_counter() - t0:.2f} s (first run and sweep "
          "included; numba cache warm)" if ex.error == "" else ex.error)
    ctrl = ex.controls[args.knob]
    w = ctrl.value_widget
    if hasattr(w, "options"):
        values = [v for _, v in w.options]
    elif isinstance(w.value, bool):  # a checkbox (an offload, need_wakeup): toggle it
        values = [False, True]
    else:
        values = list(range(int(w.min), int(w.max) + 1))
    start = values.index(ctrl.value)
    # walk up and down around the current value, one step at a time, like a user would
    walk = [values[min(max(start + d, 0), len(values) - 1)]
            for d in [1, 2, 3, 4, 5, 4, 3, 2, 1, 0, -1, -2, -3, -2, -1, 0] * 4]
    walk = [v for i, v in enumerate(walk) if i == 0 or v != walk[i - 1]]
    w.value = walk[0]  # warm-up (first batch_update of each figure)
    times, runs = [], []
    for v in walk[1:args.changes + 1]:
        t = time.perf_counter()
        w.value = v  # the observer runs synchronously: run + batch_update
        times.append(time.perf_counter() - t)
        runs.append(ex.last_update_s)
        assert ex.error == "", ex.error
    ms = sorted(1e3 * t for t in times)
    med = statistics.median(ms)
    print(f"{args.knob}: {len(ms)} changes, callback median {med:.1f} ms "
          f"(min {ms[0]:.1f}, p90 {ms[int(0.9 * (len(ms) - 1))]:.1f}, max {ms[-1]:.1f})")
    t = time.perf_counter()
    import xskbench

    for _ in range(5):
        xskbench.run(ex.config)
    run_ms = 1e3 * (time.perf_counter() - t) / 5
    print(f"of which xskbench.run alone: {run_ms:.1f} ms; load average "
          f"{os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs")
    print(f"target <= {TARGET_MS:.0f} ms: {'met' if med <= TARGET_MS else 'MISSED'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
