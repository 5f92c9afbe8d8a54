"""What one idle poll of the virtio-net host PMD costs the emulator, part by part (issue #17).

    .venv/bin/python benchmarks/quantum_parts.py              # 1e6 calls per part, best of 5
    .venv/bin/python benchmarks/quantum_parts.py --calls 100000 --trials 3

The arena is a real one: virtio-net zero-copy txonly (bench.py's configuration) after 0.5 ms
emulated. A jitted loop then runs the host's quantum on it again and again from the same start,
each line one more of its steps (the books a quantum opens with and its poll's charge, the
avail read, the interrupt check, its next change, the horizon, the idle-spin replay, the
wake-up), and prints CPU nanoseconds per call and what the step added. The replay is of a
steady idle poll up to a far bound, as between two of the guest's descriptors. ``perf``
cannot say this much (a flat profile, few samples on this VM): see README, *Where the time
goes*.
"""
import argparse
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

from xskbench import ops  # noqa: E402
from xskbench.devices.virtio_net import kernel as K  # noqa: E402
from xskbench.kernels import engine  # noqa: E402
from xskbench.kernels.jit import njit  # noqa: E402

PARTS = ("_open + vhost_user_poll charge", "vq_dev_avail", "_host_interrupts",
         "_host_next_change", "horizon", "spin_until", "wake")
FAR = 10**12  # the replay's bound (millicycles): far past the quantum


@njit(cache=True)
def _polls(m, cc, cb, n, upto):
    """``n`` idle host quanta from the same start, each running its first ``upto`` parts."""
    t, q, s = m[engine.H_NOW], m[K.D_TXQ], 0
    for _ in range(n):
        engine._open(m, K.HOST, t)
        engine.charge(m, cc, cb, ops.VHOST_USER_POLL, 1, 0)
        if upto > 1:
            s += K.vq.vq_dev_avail(m, q, engine.now(m), 32)
        if upto > 2:
            K._host_interrupts(m, cc, cb)
        if upto > 3:
            s += K._host_next_change(m)
        if upto > 4:
            s += engine.horizon(m, K.HOST)
        if upto > 5:
            s += engine.spin_until(m, cc, cb, t + FAR, t + FAR)
        if upto > 6:
            engine.wake(m, K.HOST, engine.now(m))
    return s


def arena():
    """virtio-net zero-copy txonly's arena after 0.5 ms emulated, and its cost arrays."""
    sys.path.insert(0, str(REPO / "benchmarks"))
    from bench import _config, arenas

    machs, cc, cb = arenas(_config("virtio-net", "zerocopy", "txonly", 0.0005))
    return machs[0].m, cc, cb


def measure(calls=1_000_000, trials=5):
    """[(part, ns per call with every part up to it)], best of ``trials`` on fresh copies."""
    m, cc, cb = arena()
    out = []
    for upto, part in enumerate(PARTS, 1):
        _polls(m.copy(), cc, cb, 10, upto)  # compile or load
        best = float("inf")
        for _ in range(trials):
            mm = m.copy()
            c0 = time.process_time()
            _polls(mm, cc, cb, calls, upto)
            best = min(best, time.process_time() - c0)
        out.append((part, best / calls * 1e9))
    return out


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--calls", type=int, default=1_000_000, help="quanta per trial (1e6)")
    ap.add_argument("--trials", type=int, default=5, help="trials per part; the best counts")
    args = ap.parse_args(argv)
    print(f"{'one idle virtio-net host PMD quantum, up to':46}{'ns/call':>9}{'added':>8}")
    last = 0.0
    for part, ns in measure(args.calls, args.trials):
        print(f"{'+ ' + part if last else part:46}{ns:9.1f}{ns - last:8.1f}")
        last = ns


if __name__ == "__main__":
    main()
