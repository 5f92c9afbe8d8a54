"""Does the emulated machine settle into a period? (issue #17's whole-machine fast-forward)

A fast-forward of whole periods is exact only where the machine's state repeats: every
clock and counter grows by the same amount each period, every context is in the same state
relative to the clock (frames may be permuted: a jump would apply the permutation). This
samples the state at each entry of one context (the application's loop by default), after
``--skip`` entries of start-up, and asks for each lag L whether the state's increments over
entries i..i+L and i+L..i+2L are equal — a necessary condition for a period of L entries.
Only the timing and the books are compared (the header and device words, CPU clocks,
contexts, the op, cycle, stat and latency counters): where they do not repeat, the whole
state does not either.

    .venv/bin/python benchmarks/periodicity.py                                # null txonly
    .venv/bin/python benchmarks/periodicity.py --case virtio-net zerocopy l2fwd
    .venv/bin/python benchmarks/periodicity.py --set testbed.jitter=0

Per lag: the share of windows that repeat, and the longest run of consecutive ones (a
fast-forward could have jumped at most that many periods there). On 7 Dec both rows of the
table far from real time are quasi-periodic: their contexts' periods (the wire's time per
batch, the application's loop, NAPI's poll, the host's burst) do not divide one another,
so the phase between them drifts and the state never repeats for long (README, Performance).
"""
import argparse
import json
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench import _config, entries  # noqa: E402  (it puts the working tree first on sys.path)

from xskbench.kernels.layout import HDR  # noqa: E402

LAGS = (1, 2, 3, 4, 6, 8, 12, 16, 24, 32, 48, 64)
BOOKS = ("clk", "ctx", "ops", "opb", "busy", "idle", "cnt", "lat")  # arena regions compared


def _words(arena):
    """Indices of the arena words compared: the header, then the regions in ``BOOKS``."""
    offs = sorted(arena.names.values()) + [arena.size]
    ends = {o: e for o, e in zip(offs, offs[1:], strict=False)}
    parts = [np.arange(HDR)] + [np.arange(o, ends[o]) for o in
                                 (arena.names[n] for n in BOOKS)]
    return np.concatenate(parts)


def samples(cfg, context="app", skip=1000, n=2000):
    """The compared words at each of ``n`` entries of ``context`` (the first queue's), after
    ``skip`` entries: an (n, words) array, fewer rows if the run ends first."""
    rows, seen, idx = [], 0, None

    def before(q, mach, name):
        nonlocal seen, idx
        if q or name != context:
            return False
        if idx is None:
            idx = _words(mach.arena)
        seen += 1
        if seen > skip:
            rows.append(mach.m[idx])
        return len(rows) >= n

    entries(cfg, before)
    return np.array(rows)


def repeats(S, lag):
    """Per window i: do the increments over rows i..i+lag and i+lag..i+2*lag agree?"""
    if len(S) <= 2 * lag:
        return np.zeros(0, dtype=bool)
    return ~(S[2 * lag:] - 2 * S[lag:-lag] + S[:-2 * lag]).any(axis=1)


def longest_run(ok):
    best = run = 0
    for o in ok:
        run = run + 1 if o else 0
        best = max(best, run)
    return best


def table(S, lags=LAGS):
    """[(lag, share of windows that repeat, longest run of consecutive ones)]"""
    out = []
    for lag in lags:
        ok = repeats(S, lag)
        if len(ok):
            out.append((lag, float(ok.mean()), longest_run(ok)))
    return out


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--case", nargs=3, metavar=("DEVICE", "MODE", "WORKLOAD"),
                    default=("null", "zerocopy", "txonly"))
    ap.add_argument("--set", action="append", default=[], metavar="FIELD=JSON",
                    help="a config field, e.g. testbed.jitter=0 (repeatable)")
    ap.add_argument("--context", default="app", help="the context whose entries sample")
    ap.add_argument("--skip", type=int, default=1000, help="entries left out at the start")
    ap.add_argument("--entries", type=int, default=2000, help="entries sampled")
    args = ap.parse_args(argv)
    cfg = _config(*args.case, 0.05).replace(**{
        k: json.loads(v) for k, v in (s.split("=", 1) for s in args.set)})
    S = samples(cfg, args.context, args.skip, args.entries)
    print(f"{' '.join(args.case)} {' '.join(args.set)}: {len(S)} entries of {args.context!r} "
          f"sampled, {S.shape[1] if S.size else 0} words each")
    print(f"{'lag':>5} {'repeating':>10} {'longest run':>12}")
    for lag, share, run in table(S):
        print(f"{lag:>5} {share:>10.1%} {run:>12}")


if __name__ == "__main__":
    main()
