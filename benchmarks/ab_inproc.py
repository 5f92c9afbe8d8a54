"""A/B of two trees in one process: the other tree's package, copied under another name
(``xskbench_b``), and this one run alternately, run by run, so that both see the same phase
of a drifting machine on the same core (``ab.py``'s two processes share the phase, not the
core). For a change to one kernel the most reliable reading on the development VM.

    git worktree add /tmp/old HEAD~1
    .venv/bin/python benchmarks/ab_inproc.py /tmp/old --case virtio-net zerocopy txonly
    .venv/bin/python benchmarks/ab_inproc.py /tmp/old --reps 12 --duration 0.005

Per case: the best CPU time of each side and their ratio, and the median of the run-by-run
ratios (old / new: above 1, this tree is faster); the two sides take turns to run first. The
copy is kept under ``~/.cache/xskbench_b/<hash of its sources and data>`` (the ``KEEP`` used
last; older ones are removed), but its compiled
kernels go where this process's numba cache is (``NUMBA_CACHE_DIR``, keyed by this tree's
sources, set by the first ``import xskbench``): after an edit here, both sides compile again.
"""
import argparse
import hashlib
import importlib
import re
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
NAME = "xskbench_b"
KEEP = 4  # copies kept under ~/.cache/NAME: the ones used last


def other(tree, into=None):
    """``tree``'s package copied into ``into`` as ``NAME`` (every ``xskbench`` renamed, its
    data beside it) and imported. By default ``into`` is kept, keyed by a hash of the tree's
    sources and data (copied once), beside the ``KEEP - 1`` other copies used last."""
    src = Path(tree) / "xskbench"
    cached = into is None
    if cached:
        h = hashlib.sha1()
        for p in sorted([*src.rglob("*.py"), *(Path(tree) / "data").rglob("*.*")]):
            h.update(p.read_bytes())
        into = Path.home() / ".cache" / NAME / h.hexdigest()[:16]
    into = Path(into)
    if not (into / NAME).is_dir():
        into.parent.mkdir(parents=True, exist_ok=True)
        tmp = Path(tempfile.mkdtemp(dir=into.parent))
        shutil.copytree(src, tmp / NAME)
        shutil.copytree(Path(tree) / "data", tmp / "data")
        for p in (tmp / NAME).rglob("*.py"):
            p.write_text(re.sub(r"\bxskbench\b", NAME, p.read_text()))
        tmp.rename(into)  # whole or not at all
    if cached:
        into.touch()  # used now: the last to go
        prune(into.parent, KEEP)
    sys.path.insert(0, str(into))
    return importlib.import_module(NAME)


def prune(root, keep):
    """Remove all but the ``keep`` copies under ``root`` used last (their directories' times;
    half-made ones too, left by an interrupted copy: ``tmp*``); nothing else there."""
    if not root.is_dir():
        return
    copies = sorted((p for p in root.iterdir() if (p / NAME).is_dir() or p.name.startswith("tmp")),
                    key=lambda p: p.stat().st_mtime)
    for p in copies[:max(len(copies) - keep, 0)]:
        shutil.rmtree(p, ignore_errors=True)


def compare(old, new, cases, duration, reps):
    """Per case: (old best s, new best s, median of old/new run by run)."""
    from bench import _config

    out = {}
    for case in cases:
        cfgs = [_config(*case, duration, pkg=p) for p in (old, new)]
        for p in (old, new):
            p.run(_config(*case, 0.001, pkg=p))  # compile or load the kernels
        times = ([], [])
        for rep in range(reps):
            for side in (0, 1) if rep % 2 == 0 else (1, 0):  # who runs first, in turn
                p = (old, new)[side]
                t0 = time.process_time()
                p.run(cfgs[side])
                times[side].append(time.process_time() - t0)
        ratios = [a / b for a, b in zip(*times, strict=True)]
        out[case] = (min(times[0]), min(times[1]), statistics.median(ratios))
    return out


def main(argv=None):
    from bench import CASES

    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("old", help="the other tree (a checkout of xskbench)")
    ap.add_argument("--case", nargs=3, action="append", metavar=("DEVICE", "MODE", "WORKLOAD"))
    ap.add_argument("--reps", type=int, default=8, help="runs per side per case")
    ap.add_argument("--duration", type=float, default=0.01, help="emulated seconds per run")
    args = ap.parse_args(argv)
    cases = [tuple(c) for c in args.case] if args.case else list(CASES)
    import xskbench

    res = compare(other(args.old), xskbench, cases, args.duration, args.reps)
    print(f"{'case':30}{'old ms':>9}{'new ms':>9}{'best':>8}{'median':>8}   (old / new)")
    for case, (a, b, med) in res.items():
        print(f"{' '.join(case):30}{a * 1e3:>9.2f}{b * 1e3:>9.2f}{a / b:>8.3f}{med:>8.3f}")


if __name__ == "__main__":
    sys.path.insert(0, str(REPO / "benchmarks"))
    main()
