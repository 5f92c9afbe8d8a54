"""The bpf() syscall through ctypes: XSKMAP, hand-assembled XDP programs, BPF links and
``BPF_PROG_RUN`` with live frames.  No compiler, no libbpf, no bpffs.

Every kernel object is an :class:`Fd` (closed exactly once, also by the garbage collector).
An XDP program attached through :func:`link_xdp` stays attached only while the link fd is
open: closing it - or the process exiting, however it exits - detaches the program.
"""
from __future__ import annotations

import ctypes
import ctypes.util
import os
import platform
import struct

# --- syscall plumbing -----------------------------------------------------------------------

_NR_BPF = {"x86_64": 321, "aarch64": 280}

libc = ctypes.CDLL(ctypes.util.find_library("c") or None, use_errno=True)
libc.syscall.restype = ctypes.c_long

BPF_MAP_CREATE, BPF_MAP_UPDATE_ELEM = 0, 2
BPF_PROG_LOAD, BPF_PROG_TEST_RUN = 5, 10
BPF_PROG_GET_NEXT_ID, BPF_PROG_GET_FD_BY_ID, BPF_OBJ_GET_INFO_BY_FD = 11, 13, 15
BPF_LINK_CREATE = 28

BPF_MAP_TYPE_XSKMAP = 17
BPF_PROG_TYPE_XDP = 6
BPF_XDP = 37                           # attach type

XDP_ABORTED, XDP_DROP, XDP_PASS, XDP_TX, XDP_REDIRECT = range(5)
XDP_FLAGS_SKB_MODE, XDP_FLAGS_DRV_MODE = 1 << 1, 1 << 2
BPF_F_TEST_XDP_LIVE_FRAMES = 1 << 1

HELPER_REDIRECT, HELPER_REDIRECT_MAP = 23, 51

#: Name prefix of every program xskbench loads (how leftovers are recognised).
PROG_PREFIX = "xskb_"

_ATTR_SIZE = 144


class BpfError(OSError):
    """A failed bpf() call; ``log`` holds the verifier log for BPF_PROG_LOAD."""

    def __init__(self, errno_: int, what: str, log: str = ""):
        super().__init__(errno_, f"{what}: {os.strerror(errno_)}")
        self.log = log


def _nr_bpf() -> int:
    try:
        return _NR_BPF[platform.machine()]
    except KeyError:
        raise OSError(95, f"bpf(): unsupported architecture {platform.machine()}") from None


def bpf(cmd: int, attr: bytes, what: str = "") -> tuple[int, ctypes.Array]:
    """``bpf(cmd, &attr, sizeof attr)``; returns (result, the attr buffer as the kernel left it)."""
    buf = ctypes.create_string_buffer(attr, _ATTR_SIZE)
    r = libc.syscall(_nr_bpf(), cmd, buf, _ATTR_SIZE)
    if r < 0:
        e = ctypes.get_errno()
        raise BpfError(e, what or f"bpf(cmd={cmd})")
    return r, buf


class Fd:
    """An owned file descriptor: ``close()`` is idempotent and runs at garbage collection."""

    def __init__(self, fd: int, what: str):
        self.fd, self.what = fd, what

    def fileno(self) -> int:
        if self.fd < 0:
            raise ValueError(f"{self.what}: fd already closed")
        return self.fd

    def close(self) -> None:
        fd, self.fd = self.fd, -1
        if fd >= 0:
            os.close(fd)

    __del__ = close

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def __repr__(self):
        return f"Fd({self.what}, {self.fd})"


# --- a tiny eBPF assembler ------------------------------------------------------------------

def insn(code: int, dst: int = 0, src: int = 0, off: int = 0, imm: int = 0) -> bytes:
    """One 8-byte eBPF instruction."""
    return struct.pack("<BBhi", code, (src << 4) | dst, off, imm)


def mov64_imm(dst: int, imm: int) -> bytes:
    return insn(0xb7, dst=dst, imm=imm)          # BPF_ALU64 | BPF_MOV | BPF_K


def ldx_w(dst: int, src: int, off: int) -> bytes:
    return insn(0x61, dst=dst, src=src, off=off)  # BPF_LDX | BPF_MEM | BPF_W


def ld_map_fd(dst: int, map_fd: int) -> bytes:
    """``ld_imm64 dst, map`` with BPF_PSEUDO_MAP_FD: two instruction slots."""
    return insn(0x18, dst=dst, src=1, imm=map_fd) + insn(0)


def call(helper: int) -> bytes:
    return insn(0x85, imm=helper)


def exit_() -> bytes:
    return insn(0x95)


XDP_MD_RX_QUEUE_INDEX = 16   # offsetof(struct xdp_md, rx_queue_index)


def prog_xsk_redirect(map_fd: int, fallback: int = XDP_DROP) -> bytes:
    """``return bpf_redirect_map(&xsks, ctx->rx_queue_index, fallback);``"""
    return b"".join([
        ldx_w(2, 1, XDP_MD_RX_QUEUE_INDEX),   # r2 = ctx->rx_queue_index
        ld_map_fd(1, map_fd),                 # r1 = &xsks
        mov64_imm(3, fallback),               # r3 = action when the slot is empty
        call(HELPER_REDIRECT_MAP),
        exit_(),
    ])


def prog_action(action: int) -> bytes:
    """``return action;`` (an XDP_DROP sink, an XDP_PASS that turns on veth's NAPI path)."""
    return mov64_imm(0, action) + exit_()


def prog_redirect(ifindex: int) -> bytes:
    """``return bpf_redirect(ifindex, 0);`` - the traffic generator run by BPF_PROG_RUN."""
    return mov64_imm(1, ifindex) + mov64_imm(2, 0) + call(HELPER_REDIRECT) + exit_()


# --- objects --------------------------------------------------------------------------------

def _name(name: str) -> bytes:
    return (PROG_PREFIX + name).encode()[:15]


def xskmap(entries: int = 64) -> Fd:
    """An XSKMAP keyed by queue index."""
    attr = struct.pack("<IIIIIII16s", BPF_MAP_TYPE_XSKMAP, 4, 4, entries, 0, 0, 0,
                       _name("xsks"))
    fd, _ = bpf(BPF_MAP_CREATE, attr, "BPF_MAP_CREATE(XSKMAP)")
    return Fd(fd, "xskmap")


def map_update_u32(map_fd: Fd, key: int, value: int) -> None:
    k, v = ctypes.c_uint32(key), ctypes.c_uint32(value)
    attr = struct.pack("<IIQQQ", map_fd.fileno(), 0, ctypes.addressof(k),
                       ctypes.addressof(v), 0)
    bpf(BPF_MAP_UPDATE_ELEM, attr, "BPF_MAP_UPDATE_ELEM")


def load_xdp(code: bytes, name: str, attach_type: int = BPF_XDP) -> Fd:
    """BPF_PROG_LOAD an XDP program; the verifier log is in the error if it refuses."""
    insns = ctypes.create_string_buffer(code, len(code))
    lic = ctypes.create_string_buffer(b"GPL")
    log = ctypes.create_string_buffer(1 << 16)
    attr = struct.pack("<IIQQIIQII16sII", BPF_PROG_TYPE_XDP, len(code) // 8,
                       ctypes.addressof(insns), ctypes.addressof(lic), 1, len(log),
                       ctypes.addressof(log), 0, 0, _name(name), 0, attach_type)
    try:
        fd, _ = bpf(BPF_PROG_LOAD, attr)
    except BpfError as err:
        text = log.value.decode(errors="replace").strip()
        raise BpfError(err.errno, f"BPF_PROG_LOAD({name})", text) from None
    return Fd(fd, f"prog {name}")


def link_xdp(prog: Fd, ifindex: int, skb_mode: bool = False) -> Fd:
    """BPF_LINK_CREATE(BPF_XDP): attached until the returned fd is closed."""
    flags = XDP_FLAGS_SKB_MODE if skb_mode else XDP_FLAGS_DRV_MODE
    attr = struct.pack("<IIII", prog.fileno(), ifindex, BPF_XDP, flags)
    fd, _ = bpf(BPF_LINK_CREATE, attr,
                f"BPF_LINK_CREATE(XDP, {'skb' if skb_mode else 'native'} mode, "
                f"ifindex {ifindex})")
    return Fd(fd, f"xdp link ifindex {ifindex}")


class LiveFrames:
    """``BPF_PROG_RUN`` with BPF_F_TEST_XDP_LIVE_FRAMES: the kernel runs ``prog`` over
    ``repeat`` copies of ``frame`` and really transmits what it redirects (the mechanism of
    xdp-trafficgen).  Runs in the caller's process context, in the caller's netns."""

    def __init__(self, prog: Fd, frame: bytes, batch: int = 64):
        self.prog = prog
        self.data = ctypes.create_string_buffer(frame, len(frame))
        self.size = len(frame)
        self.batch = batch

    def run(self, repeat: int) -> int:
        """Run once; returns the kernel-measured duration in ns (per repeat)."""
        attr = struct.pack("<IIIIQQIIIIQQIII", self.prog.fileno(), 0, self.size, 0,
                           ctypes.addressof(self.data), 0, repeat, 0, 0, 0, 0, 0,
                           BPF_F_TEST_XDP_LIVE_FRAMES, 0, self.batch)
        _, buf = bpf(BPF_PROG_TEST_RUN, attr, "BPF_PROG_RUN(live frames)")
        return struct.unpack_from("<I", buf, 36)[0]


# --- introspection (leftover checks) --------------------------------------------------------

def loaded_programs(prefix: str = PROG_PREFIX) -> list[tuple[int, int, str]]:
    """(id, type, name) of every loaded BPF program whose name starts with ``prefix``."""
    out, start = [], 0
    while True:
        try:
            _, buf = bpf(BPF_PROG_GET_NEXT_ID, struct.pack("<I", start))
        except BpfError:
            return out  # ENOENT: no more
        start = struct.unpack_from("<I", buf, 4)[0]
        try:
            fd, _ = bpf(BPF_PROG_GET_FD_BY_ID, struct.pack("<I", start))
        except BpfError:
            continue  # went away meanwhile
        try:
            info = ctypes.create_string_buffer(256)
            bpf(BPF_OBJ_GET_INFO_BY_FD,
                struct.pack("<IIQ", fd, len(info), ctypes.addressof(info)))
            ptype, pid = struct.unpack_from("<II", info, 0)
            name = info.raw[64:80].split(b"\0", 1)[0].decode(errors="replace")
        finally:
            os.close(fd)
        if name.startswith(prefix):
            out.append((pid, ptype, name))
