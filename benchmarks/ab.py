"""A/B speed of two trees of xskbench on a drifting machine: the old tree (e.g. a git worktree
of an earlier commit) and this one run *at the same time*, one per core, swapping cores each
round, so both see the same phase of the machine; per case, the best CPU time of all runs.

    git worktree add /tmp/old HEAD~3
    .venv/bin/python benchmarks/ab.py /tmp/old --rounds 4 --runs 6
    .venv/bin/python benchmarks/ab.py /tmp/old --case virtio-net zerocopy l2fwd
    .venv/bin/python benchmarks/ab.py /tmp/old --new /tmp/newer   # two other trees

Each case is ``bench.py``'s configuration at 10 ms emulated (a first run loads the kernels).
"""
import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
CHILD = "XSKBENCH_AB_CHILD"


def _child(tree, runs, cases):
    """In a child process: import ``tree``'s xskbench, print each case's best CPU seconds."""
    sys.path.insert(0, str(REPO / "benchmarks"))
    from bench import _config

    run = _load(tree)
    best = {}
    for dev, mode, kind in cases:
        run(_config(dev, mode, kind, 0.001))
        cfg = _config(dev, mode, kind, 0.01)
        times = []
        for _ in range(runs):
            c0 = time.process_time()
            run(cfg)
            times.append(time.process_time() - c0)
        best[f"{dev} {mode} {kind}"] = min(times)
    print(json.dumps(best))


def _load(tree):
    """``tree``'s ``xskbench.run``, ``tree`` put first on ``sys.path`` after ``bench``, which
    puts this repository there (before 7 Dec it came after, and both sides of an A/B ran this
    repository's tree); refuses to go on with another tree's."""
    sys.path.insert(0, str(tree))
    import xskbench

    got = Path(xskbench.__file__).resolve().parent.parent
    if got != Path(tree).resolve():
        raise SystemExit(f"ab: asked for the tree {tree}, imported xskbench from {got}")
    return xskbench.run


def _spawn(tree, cpu, runs, cases):
    env = dict(os.environ, **{CHILD: json.dumps([tree, runs, cases])})
    return subprocess.Popen([sys.executable, __file__], env=env, stdout=subprocess.PIPE,
                            text=True, preexec_fn=lambda: os.sched_setaffinity(0, {cpu}))


def main(argv=None):
    from bench import CASES

    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("old", help="the other tree (a checkout of xskbench)")
    ap.add_argument("--new", default=str(REPO), help="the tree to compare (default: this one)")
    ap.add_argument("--case", nargs=3, action="append", metavar=("DEVICE", "MODE", "WORKLOAD"))
    ap.add_argument("--rounds", type=int, default=3, help="rounds, each on both core orders")
    ap.add_argument("--runs", type=int, default=5, help="runs per case per process")
    args = ap.parse_args(argv)
    cases = [tuple(c) for c in args.case] if args.case else list(CASES)
    best = {"old": {}, "new": {}}
    for _ in range(args.rounds):
        for cpus in ((0, 1), (1, 0)):
            procs = {"old": _spawn(args.old, cpus[0], args.runs, cases),
                     "new": _spawn(args.new, cpus[1], args.runs, cases)}
            for side, proc in procs.items():
                out, _ = proc.communicate()
                if proc.returncode:
                    raise SystemExit(f"ab: the {side} tree's run failed")
                for case, t in json.loads(out.splitlines()[-1]).items():
                    best[side][case] = min(t, best[side].get(case, t))
    print(f"{'case':30}{'old ms':>9}{'new ms':>9}{'speed-up':>10}   (CPU per 10 ms emulated)")
    for case, t_old in best["old"].items():
        t_new = best["new"][case]
        print(f"{case:30}{t_old * 1e3:>9.2f}{t_new * 1e3:>9.2f}{t_old / t_new:>10.3f}")


if __name__ == "__main__":
    if CHILD in os.environ:
        _child(*json.loads(os.environ[CHILD]))
    else:
        sys.path.insert(0, str(REPO / "benchmarks"))
        main()
