"""Arena words read and written per emulated packet, by kernel function: a profile that does
not depend on the machine's phase (issue #17).

    .venv/bin/python benchmarks/access_profile.py --case virtio-net zerocopy l2fwd
    .venv/bin/python benchmarks/access_profile.py --case null zerocopy txonly --top 12

The kernels run as plain Python (``NUMBA_DISABLE_JIT=1``: the same bytes as compiled,
tests/test_plain_python.py) on an arena that counts its element reads and writes, each
against the function that made it (an ``inline="always"`` helper counts as itself). The
compiled code makes the same loads and stores, less the header words it can keep in a
register (in a stretch without stores: a store to the arena might change any of them). The
stores are what costs: on 7 Dec, cutting a quarter of virtio-net l2fwd's words, most of them
writes (the books of each charge), made it 1.2x faster; another tenth, reads of header
words, 1.03x. The counts are exact where an A/B of CPU time (``ab_inproc.py``) reads the
VM's noise. The cost table's reads and the engine's pick across queues (``loop.pick``,
outside the arena's slice) are not counted. Packets as in ``bench.entries``: received +
transmitted, warm-up included.
"""
import os

os.environ["NUMBA_DISABLE_JIT"] = "1"  # before numba is imported

import argparse  # noqa: E402
import sys  # noqa: E402
from collections import Counter  # noqa: E402
from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent))
import bench  # noqa: E402

# where a function lives, for the totals by part (the package's folders and modules)
PARTS = (("kernels/engine.py", "engine"), ("kernels/loop.py", "engine"),
         ("kernels/afxdp.py", "afxdp"), ("kernels/xsk_ring.py", "xsk rings"),
         ("kernels/ptr_ring.py", "ptr_ring"), ("kernels/faults.py", "faults"),
         ("devices/", "device"))


class Counted(np.ndarray):
    """An arena whose element reads and writes are tallied by the calling function."""

    tally = writes = None  # Counters of (file, function) -> words, set by ``profile``

    def __getitem__(self, i):
        if Counted.tally is not None and not isinstance(i, slice):
            code = sys._getframe(1).f_code
            Counted.tally[(code.co_filename, code.co_name)] += 1
        return super().__getitem__(i)

    def __setitem__(self, i, v):
        if Counted.tally is not None and not isinstance(i, slice):
            code = sys._getframe(1).f_code
            Counted.tally[(code.co_filename, code.co_name)] += 1
            Counted.writes[(code.co_filename, code.co_name)] += 1
        super().__setitem__(i, v)


def profile(cfg):
    """(Counters of (file, function) -> arena words read or written, and written; packets
    moved) for ``cfg``."""
    from xskbench import queues

    arenas = queues.arenas
    tally, writes = Counter(), Counter()

    def counted(machs, cfg0):
        M, OFF = arenas(machs, cfg0)
        return M.view(Counted), OFF

    queues.arenas = counted
    Counted.tally, Counted.writes = tally, writes
    try:
        _, _, packets = bench.entries(cfg)
    finally:
        queues.arenas, Counted.tally, Counted.writes = arenas, None, None
    return tally, writes, packets


def part(path):
    return next((name for key, name in PARTS if key in path.replace(os.sep, "/")), "other")


def render(tally, writes, packets, top):
    """The words per packet (of them written) in all, by part and by function."""
    total = sum(tally.values())
    lines = [f"{total / packets:.1f} arena words per packet, {sum(writes.values()) / packets:.1f}"
             f" of them written ({packets} packets, {total} words)", "",
             f"{'by part:':26}{'words':>6}{'share':>8}{'written':>9}"]
    parts, pw = Counter(), Counter()
    for (path, _), n in tally.items():
        parts[part(path)] += n
    for (path, _), n in writes.items():
        pw[part(path)] += n
    lines += [f"  {name:24}{n / packets:6.1f}{100 * n / total:6.1f} %{pw[name] / packets:9.1f}"
              for name, n in parts.most_common()]
    lines += ["", f"{'by function:':26}{'words':>6}{'share':>8}{'written':>9}  part"]
    lines += [f"  {name:24}{n / packets:6.1f}{100 * n / total:6.1f} %"
              f"{writes[(path, name)] / packets:9.1f}  {part(path)}"
              for (path, name), n in tally.most_common(top)]
    return "\n".join(lines)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--case", nargs=3, metavar=("DEVICE", "MODE", "WORKLOAD"),
                    default=("virtio-net", "zerocopy", "l2fwd"))
    ap.add_argument("--duration", type=float, default=0.0005, help="emulated seconds")
    ap.add_argument("--top", type=int, default=20, help="functions listed")
    a = ap.parse_args(argv)
    tally, writes, packets = profile(bench._config(*a.case, a.duration))
    print(" ".join(a.case) + ":", render(tally, writes, packets, a.top))


if __name__ == "__main__":
    main()
