"""AF_XDP sockets in pure Python: UMEM and rings registered with setsockopt, mmapped and
viewed as numpy arrays, and the hot loops (rxdrop, l2fwd, txonly, UDP, tap) jitted with
numba.  The loops make their system calls with an inline ``syscall`` instruction (no libc
call, so the compiled loops can be cached), read the kernel's ring producers with acquire
loads and publish their own indices with release stores, as libxdp does.

A loop runs until ``ctl[STOP]`` is set.  It counts into ``ctr`` (shared memory, read live by
the measuring process) and refreshes the socket's XDP_STATISTICS there whenever
``ctl[REQ] != ctl[ACK]``.
"""
from __future__ import annotations

import contextlib
import ctypes
import errno
import mmap
import os
import platform
import socket
import struct

import llvmlite.binding as _llb
import numpy as np
from llvmlite import ir
from numba import njit, types
from numba.core import cgutils
from numba.extending import intrinsic

from xskbench.real.bpf import libc

_llb.initialize_native_asmparser()  # numba does not; the inline syscall needs it

# --- kernel ABI ------------------------------------------------------------------------------

AF_XDP, SOL_XDP = 44, 283
XDP_MMAP_OFFSETS, XDP_RX_RING, XDP_TX_RING, XDP_UMEM_REG = 1, 2, 3, 4
XDP_UMEM_FILL_RING, XDP_UMEM_COMPLETION_RING, XDP_STATISTICS, XDP_OPTIONS = 5, 6, 7, 8
XDP_SHARED_UMEM, XDP_COPY, XDP_ZEROCOPY, XDP_USE_NEED_WAKEUP = 1, 2, 4, 8
XDP_RING_NEED_WAKEUP = 1
XDP_PGOFF_RX_RING, XDP_PGOFF_TX_RING = 0, 0x80000000
XDP_UMEM_PGOFF_FILL_RING, XDP_UMEM_PGOFF_COMPLETION_RING = 0x100000000, 0x180000000
SO_BUSY_POLL, SO_PREFER_BUSY_POLL, SO_BUSY_POLL_BUDGET = 46, 69, 70
MAP_POPULATE = getattr(mmap, "MAP_POPULATE", 0x8000)
MSG_DONTWAIT = 0x40
POLLIN, POLLOUT = 1, 4
#: XDP_STATISTICS fields, in struct xdp_statistics order.
XDP_STATS = ("rx_dropped", "rx_invalid_descs", "tx_invalid_descs", "rx_ring_full",
             "fill_ring_empty_descs", "tx_ring_empty_descs")

_NR = {
    "x86_64": dict(read=0, write=1, sendto=44, recvfrom=45, getsockopt=55, ppoll=271,
                   recvmmsg=299, sendmmsg=307),
    "aarch64": dict(read=63, write=64, sendto=206, recvfrom=207, getsockopt=209, ppoll=73,
                    recvmmsg=243, sendmmsg=269),
}
_ASM = {
    "x86_64": ("syscall",
               "={rax},{rax},{rdi},{rsi},{rdx},{r10},{r8},{r9},~{rcx},~{r11},~{memory}"),
    "aarch64": ("svc #0", "={x0},{x8},{x0},{x1},{x2},{x3},{x4},{x5},~{memory}"),
}
ARCH = platform.machine()
_nr = _NR.get(ARCH, _NR["x86_64"])
NR_READ, NR_WRITE, NR_SENDTO, NR_RECVFROM = _nr["read"], _nr["write"], _nr["sendto"], \
    _nr["recvfrom"]
NR_GETSOCKOPT, NR_PPOLL, NR_RECVMMSG, NR_SENDMMSG = _nr["getsockopt"], _nr["ppoll"], \
    _nr["recvmmsg"], _nr["sendmmsg"]
EAGAIN = errno.EAGAIN
M32 = 0xFFFFFFFF

# --- shared control / counter slots -----------------------------------------------------------

STOP, GO, REQ, ACK = 0, 1, 2, 3
N_CTL = 8

#: Counter slots of one worker; names are the stats-table names (xskbench/stats.py).
CTR_NAMES = ("rx_packets", "rx_bytes", "tx_packets", "tx_bytes", "tx_submitted",
             "sendto_calls", "poll_calls", "rx_empty_polls", "fill_fail_polls",
             "tx_full_polls", "tx_errors", "offered_packets") + XDP_STATS + (
                 "loop_cycles", "idle_cycles", "sleep_cycles")
C = {n: i for i, n in enumerate(CTR_NAMES)}
C_RX, C_RXB, C_TX, C_TXB, C_SUB = 0, 1, 2, 3, 4
C_SENDTO, C_POLLS, C_RX_EMPTY, C_FILL_FAIL, C_TX_FULL, C_TX_ERR, C_OFFERED = range(5, 12)
C_XS = 12
#: Cycle counter (TSC) totals of the loop: all, in iterations that moved nothing (the
#: emulator's idle polls), and asleep in poll() (not CPU time).
C_CYC, C_IDLE_CYC, C_SLEEP_CYC = 18, 19, 20
N_CTR = len(CTR_NAMES)

WAIT_POLL, WAIT_SPIN, WAIT_BUSY = 0, 1, 2
WAITS = {"poll": WAIT_POLL, "spin": WAIT_SPIN, "busy-poll": WAIT_BUSY}


# --- intrinsics: syscall, acquire/release ------------------------------------------------------

@intrinsic
def syscall6(typingctx, nr, a1, a2, a3, a4, a5, a6):
    """``syscall(nr, a1..a6)`` -> result, or -errno (no libc, no errno)."""
    sig = types.int64(*([types.int64] * 7))
    asm, constraints = _ASM.get(ARCH, _ASM["x86_64"])

    def codegen(context, builder, sig_, args):
        i64 = ir.IntType(64)
        vals = [context.cast(builder, a, t, types.int64) for a, t in zip(args, sig_.args,
                                                                         strict=True)]
        fnty = ir.FunctionType(i64, [i64] * 7)
        return builder.asm(fnty, asm, constraints, vals, side_effect=True)

    return sig, codegen


@intrinsic
def cycles(typingctx):
    """``llvm.readcyclecounter``: rdtsc on x86_64, cntvct on aarch64."""
    def codegen(context, builder, sig, args):
        fnty = ir.FunctionType(ir.IntType(64), [])
        fn = cgutils.get_or_insert_function(builder.module, fnty, "llvm.readcyclecounter")
        return builder.call(fn, [])
    return types.int64(), codegen


def _item_ptr(context, builder, aryty, ary, idx):
    arr = context.make_array(aryty)(context, builder, ary)
    return cgutils.get_item_pointer(context, builder, aryty, arr, [idx], wraparound=False)


@intrinsic
def load_acquire(typingctx, arr, idx):
    """``__atomic_load_n(&arr[idx], __ATOMIC_ACQUIRE)``."""
    def codegen(context, builder, sig, args):
        ptr = _item_ptr(context, builder, sig.args[0], args[0], args[1])
        return builder.load_atomic(ptr, "acquire", sig.args[0].dtype.bitwidth // 8)
    return arr.dtype(arr, idx), codegen


@intrinsic
def store_release(typingctx, arr, idx, val):
    """``__atomic_store_n(&arr[idx], val, __ATOMIC_RELEASE)``."""
    def codegen(context, builder, sig, args):
        aryty = sig.args[0]
        ptr = _item_ptr(context, builder, aryty, args[0], args[1])
        v = context.cast(builder, args[2], sig.args[2], aryty.dtype)
        builder.store_atomic(v, ptr, "release", aryty.dtype.bitwidth // 8)
        return context.get_dummy_value()
    return types.void(arr, idx, val), codegen


# --- ring and socket objects -----------------------------------------------------------------

class Ring:
    """One mmapped ring: ``prod``, ``cons``, ``flags`` (1-element u32 views) and ``desc``
    (u64: one per entry for fill/completion; two - addr, len|options<<32 - for rx/tx)."""

    def __init__(self, mm: mmap.mmap, offs: tuple, size: int, words: int):
        self.mm, self.size, self.mask = mm, size, size - 1
        u32 = lambda o: np.frombuffer(mm, np.uint32, 1, o)  # noqa: E731
        self.prod, self.cons, self.flags = u32(offs[0]), u32(offs[1]), u32(offs[3])
        self.desc = np.frombuffer(mm, np.uint64, size * words, offs[2])

    def parts(self):
        return self.prod, self.cons, self.flags, self.desc

    def close(self):
        self.prod = self.cons = self.flags = self.desc = None
        with contextlib.suppress(BufferError):  # a caller still holds a view: unmapped at GC
            self.mm.close()


class XskError(RuntimeError):
    """An AF_XDP socket the kernel refused; ``errno`` is the kernel's answer."""

    def __init__(self, errno_: int, msg: str):
        super().__init__(msg)
        self.errno = errno_


def _errname(e: int) -> str:
    return "EOPNOTSUPP" if e == errno.EOPNOTSUPP else errno.errorcode.get(e, str(e))


def _zerocopy_hint(err: int, skb_mode: bool) -> str:
    if skb_mode:
        return ("generic (skb-mode) XDP never supports zero-copy: the kernel refuses "
                "XDP_ZEROCOPY without a driver-level XDP program")
    if err == errno.EOPNOTSUPP:
        return ("the driver has no AF_XDP zero-copy support (veth and tap implement no XSK "
                "buffer pool: ndo_bpf(XDP_SETUP_XSK_POOL)), so only copy mode works here")
    return "zero-copy is not available on this device"


class XskSocket:
    """An AF_XDP socket with its own UMEM, bound to ``ifindex``/``queue``.

    ``rx``/``tx`` choose the rings; the fill ring is ``2 * ring`` (as xdpsock) and gets
    ``fill_frames`` frames before bind.  ``copy``/``zerocopy`` map to XDP_COPY/XDP_ZEROCOPY
    (neither: let the kernel choose).
    """

    def __init__(self, ifindex: int, queue: int = 0, *, rx: bool = True, tx: bool = False,
                 ring: int = 2048, frame_size: int = 4096, nframes: int | None = None,
                 zerocopy: bool = False, need_wakeup: bool = True, busy_poll: bool = False,
                 busy_budget: int = 64, skb_mode: bool = False, dev: str = "",
                 fill_frames: int | None = None):
        if ring & (ring - 1) or frame_size & (frame_size - 1):
            raise ValueError("ring and frame sizes must be powers of two")
        self.ring_size, self.frame_size = ring, frame_size
        self.frame_shift = frame_size.bit_length() - 1
        self.fill_size = 2 * ring
        self.nframes = nframes or max(4096, 4 * ring)
        self.need_wakeup = need_wakeup
        self.rx = self.tx = self.fq = self.cq = None
        self.sock = socket.socket(AF_XDP, socket.SOCK_RAW, 0)
        try:
            self._setup(ifindex, queue, rx, tx, zerocopy, busy_poll, busy_budget, skb_mode,
                        dev, fill_frames)
        except BaseException:
            self.close()
            raise

    def _setup(self, ifindex, queue, rx, tx, zerocopy, busy_poll, busy_budget, skb_mode,
               dev, fill_frames):
        s, fd = self.sock, self.sock.fileno()
        self.umem_mm = mmap.mmap(-1, self.nframes * self.frame_size,
                                 flags=mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS | MAP_POPULATE)
        self.umem = np.frombuffer(self.umem_mm, np.uint8)
        addr = self.umem.ctypes.data
        s.setsockopt(SOL_XDP, XDP_UMEM_REG,
                     struct.pack("<QQIIII", addr, len(self.umem_mm), self.frame_size, 0, 0, 0))
        rsize = self.ring_size
        s.setsockopt(SOL_XDP, XDP_UMEM_FILL_RING, struct.pack("<I", self.fill_size))
        s.setsockopt(SOL_XDP, XDP_UMEM_COMPLETION_RING, struct.pack("<I", rsize))
        if rx:
            s.setsockopt(SOL_XDP, XDP_RX_RING, struct.pack("<I", rsize))
        if tx:
            s.setsockopt(SOL_XDP, XDP_TX_RING, struct.pack("<I", rsize))
        offs = struct.unpack("<16Q", s.getsockopt(SOL_XDP, XDP_MMAP_OFFSETS, 128))
        o_rx, o_tx, o_fr, o_cr = offs[0:4], offs[4:8], offs[8:12], offs[12:16]

        def ring(o, n, words, pgoff):
            mm = mmap.mmap(fd, o[2] + n * 8 * words, mmap.MAP_SHARED | MAP_POPULATE,
                           mmap.PROT_READ | mmap.PROT_WRITE, offset=pgoff)
            return Ring(mm, o, n, words)

        self.fq = ring(o_fr, self.fill_size, 1, XDP_UMEM_PGOFF_FILL_RING)
        self.cq = ring(o_cr, rsize, 1, XDP_UMEM_PGOFF_COMPLETION_RING)
        if rx:
            self.rx = ring(o_rx, rsize, 2, XDP_PGOFF_RX_RING)
        if tx:
            self.tx = ring(o_tx, rsize, 2, XDP_PGOFF_TX_RING)
        nfill = self.fill_size if fill_frames is None else fill_frames
        if nfill:
            self.fq.desc[:nfill] = np.arange(nfill, dtype=np.uint64) << np.uint64(
                self.frame_shift)
            self.fq.prod[0] = nfill
        if busy_poll:
            for opt, val in ((SO_PREFER_BUSY_POLL, 1), (SO_BUSY_POLL, 20),
                             (SO_BUSY_POLL_BUDGET, busy_budget)):
                s.setsockopt(socket.SOL_SOCKET, opt, val)
        flags = (XDP_ZEROCOPY if zerocopy else XDP_COPY) | \
            (XDP_USE_NEED_WAKEUP if self.need_wakeup else 0)
        sxdp = struct.pack("<HHIII", AF_XDP, flags, ifindex, queue, 0)
        if libc.bind(fd, ctypes.c_char_p(sxdp), len(sxdp)) < 0:
            e = ctypes.get_errno()
            what = (f"bind(AF_XDP, {'XDP_ZEROCOPY' if zerocopy else 'XDP_COPY'}) on "
                    f"{dev or ifindex} queue {queue}")
            if zerocopy:
                raise XskError(e, f"zero-copy refused by the kernel: {what} failed with "
                               f"{_errname(e)} ({os.strerror(e)}): "
                               f"{_zerocopy_hint(e, skb_mode)}; use --mode copy")
            raise XskError(e, f"{what} failed with {_errname(e)} ({os.strerror(e)})")

    def fileno(self) -> int:
        return self.sock.fileno()

    @property
    def zerocopy(self) -> bool:
        return bool(struct.unpack("<I", self.sock.getsockopt(SOL_XDP, XDP_OPTIONS, 4))[0] & 1)

    def statistics(self) -> dict:
        vals = struct.unpack("<6Q", self.sock.getsockopt(SOL_XDP, XDP_STATISTICS, 48))
        return dict(zip(XDP_STATS, vals, strict=True))

    def write_frames(self, frame: bytes, n: int) -> None:
        """Copy ``frame`` into the first ``n`` UMEM frames (txonly)."""
        v = self.umem.reshape(-1, self.frame_size)
        v[:n, :len(frame)] = np.frombuffer(frame, np.uint8)

    def close(self) -> None:
        for name in ("rx", "tx", "fq", "cq"):
            r = getattr(self, name)
            if r is not None:
                r.close()
                setattr(self, name, None)
        self.umem = None
        if getattr(self, "umem_mm", None) is not None:
            with contextlib.suppress(BufferError):
                self.umem_mm.close()
            self.umem_mm = None
        self.sock.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


# --- helpers shared by the loops ---------------------------------------------------------------

def pollfd(fd: int, events: int) -> np.ndarray:
    """struct pollfd as two int32 (fd, events | revents << 16)."""
    return np.array([fd, events], dtype=np.int32)


def timespec(ms: float) -> np.ndarray:
    """A poll timeout for :func:`_ppoll`: the timespec, then its pristine copy (ppoll
    writes the time left back into the first one)."""
    sec, nsec = int(ms // 1000), int(ms % 1000 * 1e6)
    return np.array([sec, nsec, sec, nsec], dtype=np.int64)


@njit(cache=True, inline="always")
def _ppoll(pfd, ts, ctr):
    ts[0] = ts[2]
    ts[1] = ts[3]
    t = cycles()
    r = syscall6(NR_PPOLL, pfd.ctypes.data, 1, ts.ctypes.data, 0, 8, 0)
    ctr[C_SLEEP_CYC] += cycles() - t
    return r


@njit(cache=True, inline="always")
def _tick(ctr, t_prev, idle):
    """Account the previous iteration's cycles; returns the new timestamp."""
    t = cycles()
    ctr[C_CYC] += t - t_prev
    if idle:
        ctr[C_IDLE_CYC] += t - t_prev
    return t


@njit(cache=True, inline="always")
def _serve(ctl, ctr, fd, sbuf):
    """Refresh XDP_STATISTICS in ``ctr`` when the measuring process asks (fd < 0: none)."""
    req = load_acquire(ctl, REQ)
    if req != ctl[ACK]:
        if fd >= 0:
            sbuf[6] = 48
            if syscall6(NR_GETSOCKOPT, fd, SOL_XDP, XDP_STATISTICS, sbuf.ctypes.data,
                        sbuf.ctypes.data + 48, 0) == 0:
                for i in range(6):
                    ctr[C_XS + i] = sbuf[i]
        store_release(ctl, ACK, req)


@njit(cache=True, inline="always")
def _wait_empty(fd, wait, need_wakeup, fq_flags, pfd, ts, ctr):
    """Nothing to receive: sleep in poll(), or kick / busy-poll as xdpsock does."""
    if wait == WAIT_POLL:
        ctr[C_POLLS] += 1
        _ppoll(pfd, ts, ctr)
    elif wait == WAIT_BUSY:
        ctr[C_POLLS] += 1
        syscall6(NR_RECVFROM, fd, 0, 0, MSG_DONTWAIT, 0, 0)
    elif need_wakeup and (load_acquire(fq_flags, 0) & XDP_RING_NEED_WAKEUP):
        ctr[C_POLLS] += 1
        syscall6(NR_RECVFROM, fd, 0, 0, MSG_DONTWAIT, 0, 0)


@njit(cache=True, inline="always")
def _kick_tx(fd, tx_prod, tx_cons, ctr):
    """sendto() until the kernel has taken the TX ring (copy mode sends <= 32 per call)."""
    for _ in range(64):
        before = np.int64(load_acquire(tx_cons, 0))
        r = syscall6(NR_SENDTO, fd, 0, 0, MSG_DONTWAIT, 0, 0)
        ctr[C_SENDTO] += 1
        after = np.int64(load_acquire(tx_cons, 0))
        if after == np.int64(tx_prod[0]):
            return
        if r < 0 and after == before:
            ctr[C_TX_ERR] += 1
            return


@njit(cache=True, inline="always")
def _complete(cq_prod, cq_cons, cq_desc, cq_mask, ccons, flen, shift, ctr):
    """Reap the completion ring; returns (new consumer index, frames completed)."""
    c = (np.int64(load_acquire(cq_prod, 0)) - ccons) & M32
    if c:
        nb = 0
        for i in range(c):
            nb += flen[np.int64(cq_desc[(ccons + i) & cq_mask]) >> shift]
        ccons = (ccons + c) & M32
        store_release(cq_cons, 0, ccons)
        ctr[C_TX] += c
        ctr[C_TXB] += nb
    return ccons, c


# --- the loops -------------------------------------------------------------------------------

@njit(cache=True)
def rx_loop(rx, fq, ctl, ctr, fd, batch, wait, need_wakeup, chunk_mask, pfd, ts, sbuf):
    """xdpsock rxdrop: take up to ``batch`` descriptors, recycle them to the fill ring."""
    rx_prod, rx_cons, _rf, rx_desc = rx
    fq_prod, fq_cons, fq_flags, fq_desc = fq
    rmask = rx_desc.size // 2 - 1
    fsize = fq_desc.size
    fmask = fsize - 1
    cons = np.int64(rx_cons[0])
    fprod = np.int64(fq_prod[0])
    t, idle = cycles(), False
    while load_acquire(ctl, STOP) == 0:
        t = _tick(ctr, t, idle)
        idle = True
        _serve(ctl, ctr, fd, sbuf)
        n = (np.int64(load_acquire(rx_prod, 0)) - cons) & M32
        if n == 0:
            ctr[C_RX_EMPTY] += 1
            _wait_empty(fd, wait, need_wakeup, fq_flags, pfd, ts, ctr)
            continue
        if n > batch:
            n = batch
        if fsize - ((fprod - np.int64(load_acquire(fq_cons, 0))) & M32) < n:
            ctr[C_FILL_FAIL] += 1
            if need_wakeup and (load_acquire(fq_flags, 0) & XDP_RING_NEED_WAKEUP):
                syscall6(NR_RECVFROM, fd, 0, 0, MSG_DONTWAIT, 0, 0)
            continue
        nb = 0
        for i in range(n):
            j = 2 * ((cons + i) & rmask)
            fq_desc[(fprod + i) & fmask] = np.int64(rx_desc[j]) & chunk_mask
            nb += np.int64(rx_desc[j + 1]) & M32
        fprod = (fprod + n) & M32
        store_release(fq_prod, 0, fprod)
        cons = (cons + n) & M32
        store_release(rx_cons, 0, cons)
        ctr[C_RX] += n
        ctr[C_RXB] += nb
        idle = False
    _serve(ctl, ctr, fd, sbuf)


@njit(cache=True)
def l2fwd_loop(rx, fq, tx, cq, umem, flen, shift, ctl, ctr, fd, batch, wait, need_wakeup,
               pfd, ts, sbuf):
    """xdpsock l2fwd: swap the MAC addresses of each received frame and send it back out
    of the same socket; completed frames return to the fill ring."""
    rx_prod, rx_cons, _rf, rx_desc = rx
    fq_prod, fq_cons, fq_flags, fq_desc = fq
    tx_prod, tx_cons, tx_flags, tx_desc = tx
    cq_prod, cq_cons, _cf, cq_desc = cq
    rmask = rx_desc.size // 2 - 1
    tsize = tx_desc.size // 2
    tmask = tsize - 1
    fsize = fq_desc.size
    fmask = fsize - 1
    cmask = cq_desc.size - 1
    cons, fprod = np.int64(rx_cons[0]), np.int64(fq_prod[0])
    tprod, ccons = np.int64(tx_prod[0]), np.int64(cq_cons[0])
    outstanding = 0
    t, idle = cycles(), False
    while load_acquire(ctl, STOP) == 0:
        t = _tick(ctr, t, idle)
        _serve(ctl, ctr, fd, sbuf)
        # completed frames -> fill ring
        c = (np.int64(load_acquire(cq_prod, 0)) - ccons) & M32
        room = fsize - ((fprod - np.int64(load_acquire(fq_cons, 0))) & M32)
        if c > room:
            c = room
            ctr[C_FILL_FAIL] += 1
        if c:
            nb = 0
            for i in range(c):
                a = np.int64(cq_desc[(ccons + i) & cmask])
                fq_desc[(fprod + i) & fmask] = a
                nb += flen[a >> shift]
            fprod = (fprod + c) & M32
            store_release(fq_prod, 0, fprod)
            ccons = (ccons + c) & M32
            store_release(cq_cons, 0, ccons)
            outstanding -= c
            ctr[C_TX] += c
            ctr[C_TXB] += nb
        if outstanding and (not need_wakeup or load_acquire(tx_flags, 0) & XDP_RING_NEED_WAKEUP):
            if np.int64(load_acquire(tx_cons, 0)) != tprod:
                _kick_tx(fd, tx_prod, tx_cons, ctr)
        n = (np.int64(load_acquire(rx_prod, 0)) - cons) & M32
        idle = c == 0
        if n == 0:
            ctr[C_RX_EMPTY] += 1
            if outstanding == 0:
                _wait_empty(fd, wait, need_wakeup, fq_flags, pfd, ts, ctr)
            continue
        if n > batch:
            n = batch
        if tsize - ((tprod - np.int64(load_acquire(tx_cons, 0))) & M32) < n:
            ctr[C_TX_FULL] += 1
            _kick_tx(fd, tx_prod, tx_cons, ctr)
            continue
        nb = 0
        for i in range(n):
            j = 2 * ((cons + i) & rmask)
            a = np.int64(rx_desc[j])
            ln = np.int64(rx_desc[j + 1]) & M32
            for k in range(6):  # swap destination and source MAC
                t = umem[a + k]
                umem[a + k] = umem[a + 6 + k]
                umem[a + 6 + k] = t
            jt = 2 * ((tprod + i) & tmask)
            tx_desc[jt] = a
            tx_desc[jt + 1] = ln
            flen[a >> shift] = ln
            nb += ln
        tprod = (tprod + n) & M32
        store_release(tx_prod, 0, tprod)
        cons = (cons + n) & M32
        store_release(rx_cons, 0, cons)
        outstanding += n
        idle = False
        ctr[C_RX] += n
        ctr[C_RXB] += nb
        ctr[C_SUB] += n
        if not need_wakeup or load_acquire(tx_flags, 0) & XDP_RING_NEED_WAKEUP:
            _kick_tx(fd, tx_prod, tx_cons, ctr)
    _serve(ctl, ctr, fd, sbuf)


@njit(cache=True)
def tx_loop(tx, cq, flen, shift, nframes, pkt_len, ctl, ctr, fd, batch, wait, need_wakeup,
            pfd, ts, sbuf):
    """xdpsock txonly: submit ``batch`` prebuilt frames at a time, kick, reap completions."""
    tx_prod, tx_cons, tx_flags, tx_desc = tx
    cq_prod, cq_cons, _cf, cq_desc = cq
    tsize = tx_desc.size // 2
    tmask = tsize - 1
    cmask = cq_desc.size - 1
    tprod, ccons = np.int64(tx_prod[0]), np.int64(cq_cons[0])
    for i in range(nframes):
        flen[i] = pkt_len
    frame = 0
    outstanding = 0
    t, idle = cycles(), False
    while load_acquire(ctl, STOP) == 0:
        t = _tick(ctr, t, idle)
        _serve(ctl, ctr, fd, sbuf)
        ccons, c = _complete(cq_prod, cq_cons, cq_desc, cmask, ccons, flen, shift, ctr)
        outstanding -= c
        idle = c == 0
        n = tsize - ((tprod - np.int64(load_acquire(tx_cons, 0))) & M32)
        if n > nframes - outstanding:
            n = nframes - outstanding
        if n < batch:
            ctr[C_TX_FULL] += 1
            if not need_wakeup or load_acquire(tx_flags, 0) & XDP_RING_NEED_WAKEUP:
                _kick_tx(fd, tx_prod, tx_cons, ctr)
            if wait == WAIT_POLL:
                pfd[1] = POLLOUT
                ctr[C_POLLS] += 1
                _ppoll(pfd, ts, ctr)
            continue
        n = batch
        for i in range(n):
            jt = 2 * ((tprod + i) & tmask)
            tx_desc[jt] = frame << shift
            tx_desc[jt + 1] = pkt_len
            frame += 1
            if frame == nframes:
                frame = 0
        tprod = (tprod + n) & M32
        store_release(tx_prod, 0, tprod)
        outstanding += n
        idle = False
        ctr[C_SUB] += n
        if not need_wakeup or load_acquire(tx_flags, 0) & XDP_RING_NEED_WAKEUP:
            _kick_tx(fd, tx_prod, tx_cons, ctr)
    _serve(ctl, ctr, fd, sbuf)


@njit(cache=True)
def udp_rx_loop(fd, vec, vlen, hdr_bytes, ctl, ctr, wait, pfd, ts):
    """recvmmsg() receiver; bytes are counted as whole frames (payload + ``hdr_bytes``)."""
    lens = vec.view(np.uint32)
    t, idle = cycles(), False
    while load_acquire(ctl, STOP) == 0:
        t = _tick(ctr, t, idle)
        _serve(ctl, ctr, -1, vec)
        r = syscall6(NR_RECVMMSG, fd, vec.ctypes.data, vlen, MSG_DONTWAIT, 0, 0)
        idle = r <= 0
        if r <= 0:
            ctr[C_RX_EMPTY] += 1
            if wait != WAIT_SPIN:
                ctr[C_POLLS] += 1
                _ppoll(pfd, ts, ctr)
            continue
        nb = 0
        for i in range(r):
            nb += np.int64(lens[16 * i + 14]) + hdr_bytes
        ctr[C_RX] += r
        ctr[C_RXB] += nb
    _serve(ctl, ctr, -1, vec)


@njit(cache=True)
def udp_tx_loop(fd, vec, vlen, frame_len, ctl, ctr, pfd, ts, slot):
    """sendmmsg() sender on a connected socket; counts into ``slot`` (tx or offered)."""
    t, idle = cycles(), False
    while load_acquire(ctl, STOP) == 0:
        t = _tick(ctr, t, idle)
        _serve(ctl, ctr, -1, vec)
        r = syscall6(NR_SENDMMSG, fd, vec.ctypes.data, vlen, MSG_DONTWAIT, 0, 0)
        idle = r <= 0
        ctr[C_SENDTO] += 1
        if r <= 0:
            ctr[C_TX_ERR] += 1
            ctr[C_POLLS] += 1
            _ppoll(pfd, ts, ctr)
            continue
        ctr[slot] += r
        if slot == C_TX:
            ctr[C_TXB] += r * frame_len
            ctr[C_SUB] += r


@njit(cache=True)
def tap_loop(fd, frame, rbuf, ctl, ctr, batch, write, pfd, ts):
    """The far end of a tap: write ``frame`` ``batch`` times per round (non-blocking fd),
    then drain what the device transmitted (read until EAGAIN)."""
    flen = frame.size
    while load_acquire(ctl, STOP) == 0:
        _serve(ctl, ctr, -1, rbuf)
        if write:
            for _ in range(batch):
                r = syscall6(NR_WRITE, fd, frame.ctypes.data, flen, 0, 0, 0)
                if r == flen:
                    ctr[C_OFFERED] += 1
                else:
                    ctr[C_TX_ERR] += 1
        got = 0
        while got < 4 * batch:
            r = syscall6(NR_READ, fd, rbuf.ctypes.data, rbuf.size, 0, 0, 0)
            if r <= 0:
                break
            got += 1
            ctr[C_RXB] += r
        ctr[C_RX] += got
        if not write and got == 0:
            ctr[C_POLLS] += 1
            _ppoll(pfd, ts, ctr)


def compile_all() -> None:
    """Compile (or load from numba's cache) every loop in this process, so that forked
    workers start at once.  Each call returns immediately: ``ctl[STOP]`` is set."""
    ctl = np.zeros(N_CTL, np.int64)
    ctl[STOP] = 1
    ctr = np.zeros(N_CTR, np.int64)
    u32 = np.zeros(1, np.uint32)
    d = np.zeros(64, np.uint64)
    ring = (u32, u32, u32, d)
    pfd, ts, sbuf = pollfd(-1, POLLIN), timespec(1), np.zeros(8, np.uint64)
    umem = np.zeros(64, np.uint8)
    flen = np.zeros(4, np.int64)
    rx_loop(ring, ring, ctl, ctr, -1, 64, 0, True, -4096, pfd, ts, sbuf)
    l2fwd_loop(ring, ring, ring, ring, umem, flen, 12, ctl, ctr, -1, 64, 0, True, pfd, ts, sbuf)
    tx_loop(ring, ring, flen, 12, 4, 64, ctl, ctr, -1, 64, 0, True, pfd, ts, sbuf)
    udp_rx_loop(-1, d, 1, 42, ctl, ctr, 0, pfd, ts)
    udp_tx_loop(-1, d, 1, 64, ctl, ctr, pfd, ts, C_TX)
    tap_loop(-1, umem, umem, ctl, ctr, 1, True, pfd, ts)


# --- mmsghdr vectors ------------------------------------------------------------------------

class MsgVec:
    """``struct mmsghdr[n]`` (64 bytes each on LP64) over numpy buffers: every message has
    one iovec; ``shared`` points all of them at one buffer (a sender's frame)."""

    def __init__(self, n: int, bufsize: int, payload: bytes | None = None):
        self.n = n
        self.vec = np.zeros(8 * n, np.uint64)
        self.iov = np.zeros(2 * n, np.uint64)
        if payload is not None:
            self.buf = np.frombuffer(payload, np.uint8).copy()
            self.iov[0::2] = self.buf.ctypes.data
            self.iov[1::2] = len(payload)
        else:
            self.buf = np.zeros(n * bufsize, np.uint8)
            self.iov[0::2] = self.buf.ctypes.data + np.arange(n, dtype=np.uint64) * bufsize
            self.iov[1::2] = bufsize
        self.vec[2::8] = self.iov.ctypes.data + np.arange(n, dtype=np.uint64) * 16  # msg_iov
        self.vec[3::8] = 1                                                          # msg_iovlen
