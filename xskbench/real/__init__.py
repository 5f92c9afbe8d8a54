"""The real kernel beside the emulation: pure-Python AF_XDP (bpf() through ctypes, a
hand-assembled XDP program, UMEM and rings as numpy views, numba-jitted loops), topologies
of namespaces and veth/tap built and torn down by xskbench, and measurement from the
kernel's own counters and /proc.

Needs root (CAP_NET_ADMIN, CAP_NET_RAW, CAP_BPF, CAP_SYS_ADMIN) and a kernel with XDP
sockets.  Entry points: :func:`xskbench.real.measure.measure` and ``xskbench measure``
(registered by importing :mod:`xskbench.real.cli`).
"""

__all__ = ["bpf", "cli", "measure", "topology", "xsk"]
