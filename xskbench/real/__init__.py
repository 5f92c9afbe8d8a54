"""The real kernel beside the emulation: pure-Python AF_XDP (bpf() through ctypes, a
hand-assembled XDP program, UMEM and rings as numpy views, numba-jitted loops), topologies
of namespaces and veth/tun built and torn down by xskbench, and measurement from the
kernel's own counters and /proc into :class:`xskbench.results.Result` s.

Needs root (CAP_NET_ADMIN, CAP_NET_RAW, CAP_BPF, CAP_SYS_ADMIN) and a kernel with XDP
sockets.  Modules: section (MeasureConfig), environment (can it run here), topology,
bpf, xsk (sockets and jitted loops), frames, workers (forked pinned processes), roles
(what they run), procstat and snapshot (what a window is read from), result (windows as
Results), report, machine_info, measure (runs, repeats, sweeps) and cli (``xskbench
measure``).
"""

__all__ = ["bpf", "cli", "environment", "frames", "machine_info", "measure", "procstat",
           "report", "result", "roles", "section", "snapshot", "topology", "workers", "xsk"]
