"""Can real runs work here?  Root with the capabilities, AF_XDP, bpf() and iproute2."""
from __future__ import annotations

import errno
import functools
import os
import platform
import socket
import struct

from xskbench.real import bpf
from xskbench.real import topology as T


class MeasureError(RuntimeError):
    """A real run could not be made (one line, for the CLI)."""


class RealUnavailable(MeasureError):
    """Not root / missing capabilities / no AF_XDP in this kernel."""


CAPS = {"CAP_NET_ADMIN": 12, "CAP_NET_RAW": 13, "CAP_SYS_ADMIN": 21, "CAP_BPF": 39}


def _cap_eff() -> int:
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("CapEff:"):
                return int(line.split()[1], 16)
    return 0


def check_environment(euid: int | None = None, cap_eff: int | None = None,
                      probe: bool = True) -> None:
    """Raise :class:`RealUnavailable` with a one-line reason unless real runs can work.

    ``euid``/``cap_eff`` default to this process's; tests pass fake ones.  ``probe`` also
    asks the kernel (AF_XDP socket, bpf()) and looks for iproute2."""
    euid = os.geteuid() if euid is None else euid
    cap_eff = _cap_eff() if cap_eff is None else cap_eff
    missing = [n for n, bit in CAPS.items() if not cap_eff >> bit & 1]
    if "CAP_BPF" in missing and "CAP_SYS_ADMIN" not in missing:
        missing.remove("CAP_BPF")  # kernels before 5.8 - and CAP_SYS_ADMIN covers bpf()
    if missing:
        who = f"running as uid {euid}" if euid else "running as root"
        raise RealUnavailable(
            "xskbench measure needs root with CAP_NET_ADMIN, CAP_NET_RAW, CAP_BPF and "
            f"CAP_SYS_ADMIN (namespaces, XDP, AF_XDP): {who} without {', '.join(missing)}; "
            "run it as root (e.g. sudo), or use the stored measurements in data/measurements/")
    if not probe:
        return
    if platform.machine() not in ("x86_64", "aarch64"):
        raise RealUnavailable(f"real runs support x86_64 and aarch64, not {platform.machine()}")
    try:
        socket.socket(44, socket.SOCK_RAW, 0).close()
    except OSError as err:
        if err.errno in (errno.EAFNOSUPPORT, errno.EINVAL, errno.EPROTONOSUPPORT):
            raise RealUnavailable("this kernel has no XDP sockets (AF_XDP): "
                                  "CONFIG_XDP_SOCKETS is not set") from None
        raise RealUnavailable(f"cannot create an AF_XDP socket: {err.strerror}") from None
    try:
        bpf.bpf(bpf.BPF_PROG_GET_NEXT_ID, struct.pack("<I", 0xFFFFFFF0))
    except OSError as err:
        if err.errno == errno.ENOSYS:
            raise RealUnavailable("this kernel has no bpf() system call "
                                  "(CONFIG_BPF_SYSCALL is not set)") from None
        if err.errno == errno.EPERM:
            raise RealUnavailable("bpf() is not permitted here (CAP_BPF/CAP_SYS_ADMIN "
                                  "missing or kernel.unprivileged_bpf_disabled)") from None
    try:
        T.ip("-V")
    except T.TopologyError as err:
        raise RealUnavailable(str(err)) from None


def afxdp_available() -> tuple[bool, str]:
    """(ok, reason) - for tests that skip when real runs cannot work."""
    try:
        check_environment()
    except RealUnavailable as err:
        return False, str(err)
    return True, ""


@functools.cache
def live_frames() -> str:
    """Why ``BPF_PROG_RUN`` with live frames (the xdp sender: xdp-trafficgen's mechanism)
    cannot run here, or "" when it can.  Some kernels refuse it (EPERM) where AF_XDP and
    plain test runs work.  Probed once: an XDP_DROP program over one frame (nothing sent)."""
    try:
        with bpf.load_xdp(bpf.prog_action(bpf.XDP_DROP), "probe") as prog:
            bpf.LiveFrames(prog, bytes(64)).run(1)
    except OSError as err:
        return str(err)
    return ""
