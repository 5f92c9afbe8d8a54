"""Where the emulator's own cycles go: a ``perf`` profile of the jitted kernels, per function.

    .venv/bin/python benchmarks/perf_profile.py                       # every case of bench.py
    .venv/bin/python benchmarks/perf_profile.py --case virtio-net zerocopy l2fwd --top 15

Needs Linux ``perf`` (``apt install linux-perf``) and permission to use it. perf cannot name
JIT code by itself; numba's functions are named through a ``/tmp/perf-<pid>.map`` that this
script writes from the object code numba compiled. Only code compiled in this process has it
(a cached function has no object code left), so each case runs in a child process with an
empty ``NUMBA_CACHE_DIR``: it compiles (~30-70 s per device), then runs ``--duration``
emulated seconds under ``perf record``. Shares are of the samples in jitted code only (the
compiler's and Python's samples are left out); ``unresolved`` is JIT code outside numba's
compiled functions (numba's reference-count helpers).
"""
import argparse
import os
import re
import subprocess
import sys
import tempfile
from collections import Counter
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "benchmarks"))
from bench import CASES, _config  # noqa: E402

CHILD = "XSKBENCH_PROFILE_CHILD"


def _perf_map():
    """Name every function numba compiled in this process: ``/tmp/perf-<pid>.map``."""
    from numba.core.registry import CPUDispatcher

    rows, seen = [], set()
    for name, mod in list(sys.modules.items()):
        if not name.startswith("xskbench"):
            continue
        for disp in [v for v in vars(mod).values() if isinstance(v, CPUDispatcher)]:
            for cres in disp.overloads.values():
                lib = cres.library
                if id(lib) not in seen:
                    seen.add(id(lib))
                    rows += _symbols(lib)
    with open(f"/tmp/perf-{os.getpid()}.map", "w") as fh:
        for addr, size, sym in sorted(set(rows)):
            fh.write(f"{addr:x} {size:x} {sym}\n")
    return len(rows)


def _symbols(lib):
    """(address, size, name) of the functions in one numba library: ``nm`` of its object
    code, placed by one symbol the execution engine resolves."""
    with tempfile.NamedTemporaryFile(suffix=".o") as obj:
        obj.write(lib._get_compiled_object())
        obj.flush()
        out = subprocess.run(["nm", "-S", "--defined-only", obj.name], check=True,
                             capture_output=True, text=True).stdout
    syms = [(int(p[0], 16), int(p[1], 16), p[3]) for p in map(str.split, out.splitlines())
            if len(p) == 4 and p[2] in "Tt"]
    for off, _, sym in syms:
        try:
            base = lib.get_pointer_to_function(sym) - off
        except Exception:  # noqa: BLE001 - not exported: try the next one
            continue
        return [(base + o, size, s) for o, size, s in syms]
    return []


def child(case, duration):
    from xskbench import run

    run(_config(*case, 0.002))  # compiles: the object code the map is made of
    n = _perf_map()
    print(f"profile: {n} functions named", file=sys.stderr)
    run(_config(*case, duration))


def demangle(sym):
    """``_ZN8xskbench7kernels5afxdp10app_txonlyB3v53...`` -> ``afxdp.app_txonly``."""
    m = re.match(r"_ZN(?:7cpython)?((?:\d+\w+?)+?)(?:B\d|E)", sym)
    if not m:
        return "unresolved" if sym.startswith("0x") else sym
    parts, rest = [], m.group(1)
    while rest and rest[0].isdigit():
        n = re.match(r"\d+", rest).group()
        parts.append(rest[len(n):len(n) + int(n)])
        rest = rest[len(n) + int(n):]
    if len(parts) >= 3 and parts[-2] == "kernel":  # a device's kernel: name the device
        return f"{parts[-3]}.{parts[-1]}"
    return ".".join(parts[-2:])


def profile(case, duration):
    """Shares of the JIT samples per function for one case, largest first."""
    with tempfile.TemporaryDirectory(prefix="xskbench-prof-") as tmp:
        data = Path(tmp) / "perf.data"
        env = dict(os.environ, NUMBA_CACHE_DIR=str(Path(tmp) / "numba"), **{CHILD: "1"})
        env["PYTHONPATH"] = os.pathsep.join(p for p in (str(REPO), env.get("PYTHONPATH")) if p)
        subprocess.run(["perf", "record", "-q", "-F", "5000", "-o", str(data), sys.executable,
                        __file__, "--case", *case, "--duration", str(duration)],
                       check=True, env=env, cwd=REPO)
        out = subprocess.run(["perf", "report", "-i", str(data), "--stdio", "--no-children",
                              "--sort", "dso,symbol"], check=True, capture_output=True,
                             text=True).stdout
    shares = Counter()
    for line in out.splitlines():
        p = line.split()
        if len(p) >= 5 and p[0].endswith("%") and p[1] == "[JIT]" and "[.]" in p:
            shares[demangle(p[p.index("[.]") + 1])] += float(p[0][:-1])
    total = sum(shares.values()) or 1.0
    return [(sym, 100 * v / total) for sym, v in shares.most_common()]


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--case", nargs=3, metavar=("DEVICE", "MODE", "WORKLOAD"))
    ap.add_argument("--duration", type=float, default=0.2, help="emulated s profiled (0.2)")
    ap.add_argument("--top", type=int, default=10, help="functions shown per case (10)")
    args = ap.parse_args(argv)
    if os.environ.get(CHILD):
        return child(tuple(args.case), args.duration)
    for case in [tuple(args.case)] if args.case else CASES:
        rows = profile(case, args.duration)
        engine = sum(v for s, v in rows if s.split(".")[0] in ("engine", "multiq", "loop")
                     or s.endswith(".run_chunk") or s.endswith(".quantum"))
        print(f"\n{' '.join(case)}: engine (pick, begin/finish, replay, dispatch) "
              f"{engine:.0f} %, the rest the modelled datapath")
        for sym, v in rows[:args.top]:
            print(f"  {v:5.1f} %  {sym}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
