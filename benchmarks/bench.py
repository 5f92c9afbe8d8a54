"""How fast xskbench emulates, per device x mode x workload (issue #17), and what starting up
costs (import + first run, with numba's cache warm and cold).

    .venv/bin/python benchmarks/bench.py            # or: make bench
    .venv/bin/python benchmarks/bench.py --json     # machine-readable
    .venv/bin/python benchmarks/bench.py --duration 0.05 --repeat 3 --no-cold

Each case runs ``--duration`` emulated seconds ``--repeat`` times in this process after a
first run has compiled (or loaded) the kernels; the best run counts. Reported per case: the
emulated packet rate, emulated packets per CPU-second of this process (every packet the run
moved, received + transmitted, warm-up included, as the CPU time is) and the real-time factor
(emulated seconds per CPU-second: >= 1 means faster than the machine it emulates), and
the engine's quanta per packet moved and CPU nanoseconds per quantum. Process
CPU time, not wall time: the machine may be shared, and CPU time is what other jobs distort
least.
A *yardstick* — a fixed jitted loop doing a ring's per-descriptor work — is timed before and
after the cases: this VM's speed drifts (phases 1.5x slower than others) and differs between
machines, so a table is read against it. Then each device's shortest run (0.1 ms emulated)
is timed: its CPU time is the set-up and collection around the kernels, which every run,
widget redraw and sweep point pays.
Start-up is measured in fresh subprocesses: one using this process's numba cache (warm: it
was just filled), one with an empty temporary ``NUMBA_CACHE_DIR`` (cold: compiles).
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))  # the working tree, even without an editable install

# (device, mode, workload): the table of issue #17
CASES = (("null", "zerocopy", "txonly"), ("null", "zerocopy", "rxdrop"),
         ("null", "copy", "txonly"), ("virtio-net", "zerocopy", "l2fwd"),
         ("virtio-net", "zerocopy", "txonly"), ("virtio-net", "copy", "txonly"),
         ("tun", "zerocopy", "txonly"), ("veth", "zerocopy", "txonly"))
TARGET_RTF = 1.0  # issue #17: every case at least as fast as real time
# multi-queue (device, mode, workload, queues), default spread pinning: N queues should cost
# N times one queue (README, Performance, "queues apart"); not in #17's table, nor its count
MQ_CASES = (("virtio-net", "zerocopy", "txonly", 8), ("tun", "zerocopy", "txonly", 8))
# the shortest run a config allows: its CPU time is the work around the kernels (set-up and
# collection), which every run, widget redraw and sweep point pays
OVERHEAD_S = 0.0001

# what a new process pays before its first result
PROBE = """
import json, time
t0 = time.perf_counter()
from xskbench import RunConfig, run
t1 = time.perf_counter()
run(RunConfig(device="null").replace(**{"workload.duration_s": 0.001, "workload.warmup_s": 0.0}))
t2 = time.perf_counter()
print(json.dumps({"import_s": t1 - t0, "first_run_s": t2 - t1}))
"""


def _config(device, mode, kind, duration, queues=1, pkg=None):
    """A case's configuration, built by ``pkg`` (another tree's package) or this xskbench."""
    if pkg is None:
        import xskbench as pkg

    return pkg.RunConfig(device=device, mode=mode).replace(**{
        "workload.kind": kind, "workload.duration_s": duration,
        "workload.warmup_s": min(0.001, duration / 10), "mq.queues": queues})


YARD_N = 10_000_000  # iterations of the yardstick loop per trial (~25-40 ms)


def yardstick(trials=5):
    """CPU nanoseconds per iteration of a fixed jitted loop (load an address, shift it to a
    frame index, store the frame's owner and a slot, advance a masked index: the kernels'
    per-descriptor work), best of ``trials``, each on a fresh array."""
    import numba
    import numpy as np

    @numba.njit
    def loop(a, n):
        mask = (len(a) >> 1) - 1
        s = 0
        for i in range(n):
            addr = a[(i * 7) & mask]
            f = (addr >> 6) & mask
            a[mask + 1 + f] = i
            a[f] = addr + 64
            s += f
        return s

    loop(np.arange(16, dtype=np.int64), 1)  # compile
    best = float("inf")
    for _ in range(trials):
        a = np.arange(1 << 13, dtype=np.int64)
        c0 = time.process_time()
        loop(a, YARD_N)
        best = min(best, time.process_time() - c0)
    return best / YARD_N * 1e9


def first_run():
    """Seconds for the first run in this process: numba compiles, or loads its cache."""
    t0 = time.perf_counter()
    from xskbench import run

    t1 = time.perf_counter()
    run(_config("null", "zerocopy", "txonly", 0.001))
    return {"import_s": t1 - t0, "first_run_s": time.perf_counter() - t1}


def throughput(device, mode, kind, duration, repeat, queues=1):
    from xskbench import run

    cfg = _config(device, mode, kind, duration, queues)
    run(_config(device, mode, kind, 0.001))  # compile or load this device's kernel
    walls, cpus = [], []
    for _ in range(repeat):
        t0, c0 = time.perf_counter(), time.process_time()
        res = run(cfg)
        walls.append(time.perf_counter() - t0)
        cpus.append(time.process_time() - c0)
    wall, cpu = min(walls), min(cpus)
    moved = res.totals["rx_packets"] + res.totals["tx_packets"]  # the same every run
    pps = res.pps["tx" if kind == "txonly" else "rx"]
    n = quanta(cfg)
    return {"device": device, "mode": mode, "kind": kind, "queues": queues, "emulated_s": duration,
            "emulated_pps": pps, "packets": moved, "wall_s": wall, "cpu_s": cpu,
            "packets_per_wall_s": moved / wall, "packets_per_cpu_s": moved / cpu,
            "real_time_factor": duration / cpu, "quanta": n, "quanta_per_packet": n / moved,
            "ns_per_quantum": cpu / n * 1e9}


def overhead(repeat):
    """CPU ms of an ``OVERHEAD_S`` run of each device (zero-copy txonly), best of ``repeat``."""
    devices = dict.fromkeys(case[0] for case in CASES)
    return {d: 1e3 * throughput(d, "zerocopy", "txonly", OVERHEAD_S, repeat)["cpu_s"]
            for d in devices}


def quanta(cfg, fast_forward=True):
    """How many quanta the engine ran for ``cfg`` (every queue's; the round-robin sequence
    counts them): the emulator's events, each a pick, a quantum and its books."""
    from xskbench.kernels.layout import H_SEQ

    machs, _, _ = arenas(cfg, fast_forward)
    return max(int(m.m[H_SEQ]) for m in machs)


def arenas(cfg, fast_forward=True):
    """``cfg`` emulated as ``run`` does, stopping short of the results: (each queue's machine,
    with its arena after the run; the cost arrays)."""
    dev, cfgs, hz, cc, cb = _setting(cfg)
    machs = sys.modules["xskbench.run"].simulate(dev, cfgs, hz, cc, cb,
                                                 fast_forward=fast_forward)
    return machs, cc, cb


def entries(cfg, before=None):
    """``cfg`` emulated as ``run_chunk`` runs it, its loop in Python: for each context, how
    often its quantum was entered and how many quanta it ran (the round-robin sequence counts
    them: a replayed idle spin adds none, a device's lockstep runs several per entry); and
    the packets every queue moved (received, transmitted, a guest's received; warm-up
    included). Returns ({context name: entries}, {context name: quanta}, packets).
    ``before(q, mach, name)``, if given, is called before each entry (the queue, its machine,
    the context's name); True from it stops the run there."""
    from collections import Counter

    from xskbench import queues, stats
    from xskbench.kernels import loop
    from xskbench.kernels.layout import H_CNT, H_SEQ

    dev, cfgs, hz, cc, cb = _setting(cfg)
    machs = [dev.impl.setup(c, hz, cc, cb) for c in cfgs]
    M, OFF = queues.arenas(machs, cfgs[0])
    entered, ran = Counter(), Counter()
    names = [c.name for c in machs[0].contexts]

    class Stopped(Exception):
        pass

    def enter(q, m, c):
        if before is not None and before(q, machs[q], names[c]):
            raise Stopped
        dev.kernel.quantum(m, cc, cb, c)
        entered[names[c]] += 1

    try:
        while (pick := loop.pick(M, OFF))[1] >= 0:
            q, c = pick
            m = M[OFF[q]:OFF[q + 1]]
            seq = int(m[H_SEQ])
            loop.begin(m, c)
            enter(q, m, c)
            hzn = loop.fold(m, c, -1)
            while hzn >= 0:
                enter(q, m, c)
                hzn = loop.fold(m, c, hzn)
            loop.finish(m, c)
            loop.sample(m)
            loop.share(M, OFF, q, c)
            ran[names[c]] += int(m[H_SEQ]) - seq
    except Stopped:  # ``before`` ended the run
        pass
    moved = (stats.RX_PACKETS, stats.TX_PACKETS, stats.GUEST_RX_PACKETS)
    packets = sum(int(mach.m[mach.m[H_CNT] + s]) for mach in machs for s in moved)
    return entered, ran, packets


def _setting(cfg):
    """What ``run`` emulates ``cfg`` with: (the device, the queues' configs, the CPU's Hz, the
    cost arrays at the run's speed)."""
    from xskbench import costs, queues
    from xskbench.devices import get

    prof = costs.for_config(cfg)
    cc, cb = prof.arrays(sys.modules["xskbench.run"].run_speed(cfg))
    hz = (cfg.testbed.cpu_ghz or prof.cpu_ghz) * 1e9
    return get(cfg.device), queues.queue_configs(cfg), hz, cc, cb


def startup(cache_dir=None):
    """Import + first run in a fresh interpreter; ``cache_dir`` replaces numba's cache."""
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(REPO), env.get("PYTHONPATH")) if p)
    if cache_dir is not None:
        env["NUMBA_CACHE_DIR"] = cache_dir
    # else: this process's, which importing xskbench set to the source-keyed cache it filled
    t0 = time.perf_counter()
    proc = subprocess.run([sys.executable, "-c", PROBE], cwd=REPO, env=env,
                          capture_output=True, text=True)
    if proc.returncode:
        raise SystemExit(f"bench: start-up probe failed:\n{proc.stderr}")
    out = json.loads(proc.stdout.splitlines()[-1])
    out["process_s"] = time.perf_counter() - t0  # interpreter start-up included
    return out


def measure(duration, repeat, cold):
    in_process = first_run()  # first: it times the import too
    import xskbench

    doc = {"version": xskbench.__version__, "cpus": os.cpu_count(),
           "python": sys.version.split()[0], "duration_s": duration, "repeat": repeat,
           "target_real_time_factor": TARGET_RTF, "in_process": in_process}
    doc["yardstick_ns"] = [yardstick()]
    doc["cases"] = [throughput(*case, duration, repeat) for case in CASES]
    doc["mq_cases"] = [throughput(*case[:3], duration, repeat, case[3]) for case in MQ_CASES]
    doc["yardstick_ns"].append(yardstick())
    doc["overhead_ms"] = overhead(max(repeat, 5))
    doc["load_average"] = os.getloadavg()[0]  # other jobs on the machine slow the wall clock
    doc["startup"] = {"warm": startup()}
    if cold:
        with tempfile.TemporaryDirectory(prefix="xskbench-numba-") as tmp:
            doc["startup"]["cold"] = startup(tmp)
    return doc


def render(doc):
    m = lambda x: f"{x / 1e6:,.2f} M"  # noqa: E731
    lines = [f"xskbench {doc['version']} on {doc['cpus']} CPUs (Python {doc['python']}): "
             f"{doc['duration_s']:g} s emulated per run, best of {doc['repeat']}, process CPU time",
             "",
             f"{'case':29}{'emulated pps':>13}{'packets':>10}{'cpu s':>8}"
             f"{'pkts/cpu-s':>12}{'real-time x':>13}{'quanta/pkt':>12}{'ns/quantum':>12}"]
    for c in doc["cases"] + doc.get("mq_cases", []):
        name = f"{c['device']} {c['mode']} {c['kind']}"
        name += f" x{c['queues']}" if c.get("queues", 1) > 1 else ""
        lines.append(f"{name:29}{m(c['emulated_pps']):>13}{m(c['packets']):>10}"
                     f"{c['cpu_s']:>8.3f}{m(c['packets_per_cpu_s']):>12}"
                     f"{c['real_time_factor']:>13.2f}{c['quanta_per_packet']:>12.3f}"
                     f"{c['ns_per_quantum']:>12.0f}")
    slow = [c for c in doc["cases"] if c["real_time_factor"] < doc["target_real_time_factor"]]
    lines += [f"{len(doc['cases']) - len(slow)} of {len(doc['cases'])} cases at or above real "
              f"time (load average {doc['load_average']:.1f} during the runs); yardstick "
              + " → ".join(f"{y:.2f}" for y in doc["yardstick_ns"])
              + " ns per iteration before → after"]
    if doc.get("overhead_ms"):
        lines.append(f"around the kernels (CPU ms of a {OVERHEAD_S * 1e3:g} ms run): " + ", ".join(
            f"{d} {ms:.2f}" for d, ms in doc["overhead_ms"].items()))
    lines += ["", f"{'start-up':34}{'import s':>10}{'first run s':>13}{'process s':>11}"]
    ip = doc["in_process"]
    lines.append(f"{'this process (before the above)':34}{ip['import_s']:>10.2f}"
                 f"{ip['first_run_s']:>13.2f}{'':>11}")
    for name, label in (("warm", "new process, warm numba cache"),
                        ("cold", "new process, empty numba cache")):
        s = doc["startup"].get(name)
        if s:
            lines.append(f"{label:34}{s['import_s']:>10.2f}{s['first_run_s']:>13.2f}"
                         f"{s['process_s']:>11.2f}")
    return "\n".join(lines)


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--json", action="store_true", help="print JSON instead of the table")
    p.add_argument("--duration", type=float, default=0.02, help="emulated s per run (0.02)")
    p.add_argument("--repeat", type=int, default=3, help="runs per case; the best counts (3)")
    p.add_argument("--no-cold", dest="cold", action="store_false",
                   help="skip the cold-cache start-up (it compiles for ~30 s)")
    args = p.parse_args(argv)
    doc = measure(args.duration, args.repeat, args.cold)
    print(json.dumps(doc, indent=1) if args.json else render(doc))


if __name__ == "__main__":
    main()
