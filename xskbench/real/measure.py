"""Measure the real kernel: traffic between two pinned worker processes in namespaces that
xskbench builds, CPU per context from /proc, drops with the kernel's own counter names.

One run:

1. The *app* worker (namespace ``-b``, pinned to ``app_cpu``) runs the workload under test
   on ``vb``/``tap0``: an AF_XDP socket (rxdrop, l2fwd, txonly) or a UDP socket (rxdrop,
   txonly).
2. The *peer* worker (namespace ``-a``, pinned to ``peer_cpu``) is the far end: a sender
   (rxdrop, l2fwd) or a sink (txonly).  Senders: ``xdp`` - BPF_PROG_RUN with live frames
   redirected into ``va`` (the xdp-trafficgen mechanism, the only one fast enough to load a
   copy-mode receiver), ``xsk`` - AF_XDP txonly in copy mode, ``udp`` - sendmmsg(), ``tap``
   - non-blocking write() into the tap fd (the tap's only sender).  Sinks: an XDP_DROP
   program (veth) or read() of the tap fd.
3. Warm-up, then a steady window bracketed by two snapshots of the workers' counters (shared
   memory), the socket's XDP_STATISTICS, /proc/stat, /proc/PID/stat of the workers and of
   ksoftirqd, ethtool -S of the devices, /proc/net/dev, softnet_stat and the UDP MIB.
4. Stop, reap, detach (the BPF links die with the workers), next repeat.
"""
from __future__ import annotations

import contextlib
import dataclasses
import errno
import fcntl
import gzip
import json
import mmap
import os
import platform
import select
import signal
import socket
import statistics
import struct
import time
import traceback
from dataclasses import dataclass

import numpy as np

from xskbench import stats
from xskbench.real import topology as T

# --- configuration ----------------------------------------------------------------------------

DEVICES = ("veth", "tap")
MODES = ("copy", "udp", "zerocopy")
WORKLOADS = ("rxdrop", "txonly", "l2fwd")
SENDERS = ("auto", "xdp", "xsk", "udp", "tap")
PRIORITIES = ("normal", "high", "rt")
UDP_PORT = 9  # discard
ETH_IP_UDP = 42


@dataclass(frozen=True)
class MeasureConfig:
    """One real measurement (field names follow the emulator's config where they exist)."""

    device: str = "veth"
    mode: str = "copy"
    workload: str = "rxdrop"
    packet_size: int = 64          # Ethernet frame without FCS, as the XSK descriptor's len
    batch: int = 64
    ring: int = 2048               # rx/tx/completion ring; the fill ring is 2 * ring
    frame_size: int = 4096
    need_wakeup: bool = True
    wait: str = "spin"             # spin (xdpsock's default) | poll | busy-poll
    xdp_mode: str = "native"       # native | skb
    sender: str = "auto"
    duration: float = 3.0          # steady window, s
    warmup: float = 1.0
    repeats: int = 1
    app_cpu: int = 1
    peer_cpu: int = 0
    priority: str = "high"         # normal | high (own autogroup, nice -20) | rt (FIFO 1)
    seed: int = 1

    def resolved_sender(self) -> str:
        if self.sender != "auto":
            return self.sender
        if self.device == "tap":
            return "tap"
        return "xdp"

    def check(self) -> None:
        """ValueError naming every bad or unsupported combination."""
        bad = []
        for name, allowed in (("device", DEVICES), ("mode", MODES), ("workload", WORKLOADS),
                              ("sender", SENDERS), ("wait", ("poll", "spin", "busy-poll")),
                              ("xdp_mode", ("native", "skb")),
                              ("priority", PRIORITIES)):
            if getattr(self, name) not in allowed:
                bad.append(f"{name}={getattr(self, name)!r}: one of {', '.join(allowed)}")
        if bad:
            raise ValueError("; ".join(bad))
        s = self.resolved_sender()
        pow2 = lambda v: v > 0 and v & (v - 1) == 0  # noqa: E731
        bad += [msg for cond, msg in (
            (not pow2(self.ring) or not 64 <= self.ring <= 16384,
             f"ring={self.ring}: a power of two in 64..16384"),
            (not 1 <= self.batch <= self.ring, f"batch={self.batch}: 1..ring ({self.ring})"),
            (self.frame_size not in (2048, 4096), f"frame_size={self.frame_size}: 2048 or 4096"),
            (not ETH_IP_UDP <= self.packet_size <= 1514,
             f"packet_size={self.packet_size}: {ETH_IP_UDP}..1514 bytes (Ethernet frame "
             "without FCS; no jumbo frames)"),
            (self.packet_size > self.frame_size - 256 - 64,
             f"packet_size={self.packet_size} does not fit a {self.frame_size} B frame"),
            (not 0.2 <= self.duration <= 600, f"duration={self.duration}: 0.2..600 s"),
            (not 0 <= self.warmup <= 60, f"warmup={self.warmup}: 0..60 s"),
            (not 1 <= self.repeats <= 100, f"repeats={self.repeats}: 1..100"),
            (self.mode == "udp" and self.workload == "l2fwd",
             "workload l2fwd needs an AF_XDP socket: use --mode copy"),
            (self.device == "tap" and s != "tap",
             f"sender {s!r} does not apply to a tap: its far end is the tap fd (--sender tap)"),
            (self.device == "veth" and s == "tap", "sender 'tap' needs --device tap"),
        ) if cond]
        cpus = os.sched_getaffinity(0)
        for name in ("app_cpu", "peer_cpu"):
            if getattr(self, name) not in cpus:
                bad.append(f"{name}={getattr(self, name)}: not one of this process's CPUs "
                           f"{sorted(cpus)}")
        if bad:
            raise ValueError("; ".join(bad))

    def to_dict(self) -> dict:
        """Shaped like the emulator's RunConfig (device, mode, xsk, workload) plus ``real``."""
        return {
            "device": self.device, "mode": self.mode,
            "xsk": {"rx_size": self.ring, "tx_size": self.ring, "comp_size": self.ring,
                    "fill_size": 2 * self.ring, "frame_size": self.frame_size,
                    "umem_frames": max(4096, 4 * self.ring), "headroom": 0,
                    "need_wakeup": self.need_wakeup, "busy_poll": self.wait == "busy-poll",
                    "busy_budget": self.batch, "batch_size": self.batch},
            "workload": {"kind": self.workload, "packet_size": self.packet_size,
                         "rate_pps": None, "duration_s": self.duration,
                         "warmup_s": self.warmup, "seed": self.seed},
            "real": {"sender": self.resolved_sender(), "wait": self.wait,
                     "xdp_mode": self.xdp_mode, "repeats": self.repeats,
                     "app_cpu": self.app_cpu, "peer_cpu": self.peer_cpu,
                     "priority": self.priority},
        }


class MeasureError(RuntimeError):
    """A real run could not be made (one line, for the CLI)."""


class RealUnavailable(MeasureError):
    """Not root / missing capabilities / no AF_XDP in this kernel."""


# --- environment check ------------------------------------------------------------------------

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
    from xskbench.real import bpf
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


# --- frames ------------------------------------------------------------------------------------

def _csum(b: bytes) -> int:
    s = sum(struct.unpack(f"!{len(b) // 2}H", b))
    while s >> 16:
        s = (s & 0xFFFF) + (s >> 16)
    return ~s & 0xFFFF


def udp_frame(dst_mac: str, src_mac: str, src_ip: str, dst_ip: str, size: int,
              seed: int = 1, port: int = UDP_PORT) -> bytes:
    """An Ethernet/IPv4/UDP frame of ``size`` bytes (no FCS); payload from ``seed``."""
    payload = np.random.default_rng(seed).integers(0, 256, size - ETH_IP_UDP, np.uint8).tobytes()
    udp = struct.pack("!HHHH", port, port, 8 + len(payload), 0) + payload
    iph = struct.pack("!BBHHHBBH4s4s", 0x45, 0, 20 + len(udp), 0, 0x4000, 64, 17, 0,
                      socket.inet_aton(src_ip), socket.inet_aton(dst_ip))
    iph = iph[:10] + struct.pack("!H", _csum(iph)) + iph[12:]
    return T.mac_bytes(dst_mac) + T.mac_bytes(src_mac) + b"\x08\x00" + iph + udp


# --- workers -----------------------------------------------------------------------------------

PR_SET_PDEATHSIG = 1
READY_TIMEOUT = 120.0


@dataclass
class Role:
    """What a worker does: ``fn(ctx)`` sets up, ``ctx.ready(info)``, ``ctx.wait_go()``, runs
    its loop until ``ctl[STOP]`` and returns its final report."""

    name: str
    ns: str
    cpu: int
    fn: object


class WorkerCtx:
    def __init__(self, cfg, topo, ctl, ctr, wfd):
        self.cfg, self.topo, self.ctl, self.ctr, self._wfd = cfg, topo, ctl, ctr, wfd

    def send(self, **msg) -> None:
        os.write(self._wfd, (json.dumps(msg) + "\n").encode())

    def ready(self, **info) -> None:
        self.send(ready=info)

    def wait_go(self) -> None:
        from xskbench.real.xsk import GO, STOP
        while not self.ctl[GO] and not self.ctl[STOP]:
            time.sleep(0.0005)

    def serve_python(self) -> None:
        """For loops written in Python: acknowledge snapshot requests."""
        from xskbench.real.xsk import ACK, REQ
        self.ctl[ACK] = self.ctl[REQ]


class Worker:
    """A forked, pinned process in a namespace, talking JSON lines over a pipe."""

    def __init__(self, role: Role, cfg, topo, ctl, ctr):
        self.role, self.ctl, self.ctr = role, ctl, ctr
        self.buf = b""
        r, w = os.pipe()
        parent = os.getpid()
        pid = os.fork()
        if pid == 0:  # --- child ---
            code = 0
            try:
                os.close(r)
                signal.signal(signal.SIGINT, signal.SIG_IGN)  # the parent coordinates
                for s in (signal.SIGTERM, signal.SIGHUP):
                    signal.signal(s, signal.SIG_DFL)
                T.libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
                if os.getppid() != parent:
                    os._exit(1)
                ctx = WorkerCtx(cfg, topo, ctl, ctr, w)
                try:
                    T.setns(role.ns)
                    os.sched_setaffinity(0, {role.cpu})
                    _set_priority(cfg.priority)
                    final = role.fn(ctx)
                    ctx.send(done=final or {})
                except BaseException as err:  # noqa: BLE001 - reported to the parent
                    code = 1
                    msg = " ".join(str(err).split()) or type(err).__name__
                    if os.environ.get("XSKBENCH_DEBUG"):
                        msg += " | " + " ".join(traceback.format_exc().split())
                    ctx.send(error=f"{role.name}: {msg}")
            finally:
                os._exit(code)
        os.close(w)
        self.pid, self.rfd = pid, r
        self.status = None

    def recv(self, timeout: float) -> dict | None:
        """Next message, or None on timeout; EOF (the worker died) is a MeasureError."""
        end = time.monotonic() + timeout
        while b"\n" not in self.buf:
            left = max(0.0, end - time.monotonic())
            ready, _, _ = select.select([self.rfd], [], [], left)
            if not ready:
                return None
            chunk = os.read(self.rfd, 65536)
            if not chunk:
                self.reap(0.5)
                raise MeasureError(f"{self.role.name} worker exited unexpectedly "
                                   f"(status {self.status})")
            self.buf += chunk
        line, self.buf = self.buf.split(b"\n", 1)
        msg = json.loads(line)
        if "error" in msg:
            raise MeasureError(msg["error"])
        return msg

    def expect(self, key: str, timeout: float) -> dict:
        msg = self.recv(timeout)
        if msg is None:
            raise MeasureError(f"{self.role.name} worker: no {key!r} within {timeout:.0f} s")
        if key not in msg:
            raise MeasureError(f"{self.role.name} worker: expected {key!r}, got {msg}")
        return msg[key]

    def alive(self) -> bool:
        if self.status is not None:
            return False
        pid, st = os.waitpid(self.pid, os.WNOHANG)
        if pid:
            self.status = st
            return False
        return True

    def reap(self, timeout: float) -> None:
        """Wait for the worker to exit; SIGKILL it after ``timeout``."""
        end = time.monotonic() + timeout
        while self.alive():
            if time.monotonic() > end:
                with contextlib.suppress(ProcessLookupError):
                    os.kill(self.pid, signal.SIGKILL)
                _, self.status = os.waitpid(self.pid, 0)
                break
            time.sleep(0.005)

    def close(self) -> None:
        if self.status is None:
            self.reap(3.0)
        if self.rfd >= 0:
            os.close(self.rfd)
            self.rfd = -1


def _set_priority(priority: str) -> None:
    """high: a session (so an autogroup) of its own at nice -20 - with autogroups, CFS
    shares a CPU between sessions first, so a plain nice would not help against other
    sessions' load; kernel threads still run.  rt: SCHED_FIFO 1 (only RT throttling's 5 %
    is left to everything else on that CPU)."""
    if priority == "high":
        os.setsid()
        with contextlib.suppress(OSError), open("/proc/self/autogroup", "w") as f:
            f.write("-20")
        os.setpriority(os.PRIO_PROCESS, 0, -20)
    elif priority == "rt":
        os.sched_setscheduler(0, os.SCHED_FIFO, os.sched_param(1))


# --- roles -------------------------------------------------------------------------------------

def _frame_for(ctx, towards_app: bool) -> bytes:
    cfg, topo = ctx.cfg, ctx.topo
    (_, _, ip_b, mac_b), (_, _, ip_a, mac_a) = topo.app, topo.peer
    if towards_app:
        return udp_frame(mac_b, mac_a, ip_a, ip_b, cfg.packet_size, cfg.seed)
    return udp_frame(mac_a, mac_b, ip_b, ip_a, cfg.packet_size, cfg.seed)


def _xdp_link(ifindex: int, code: bytes, name: str, skb: bool):
    from xskbench.real import bpf
    prog = bpf.load_xdp(code, name)
    try:
        link = bpf.link_xdp(prog, ifindex, skb_mode=skb)
    except OSError:
        prog.close()
        raise
    return prog, link


def _loop_args(ctx, fd: int, events: int):
    from xskbench.real import xsk
    return xsk.pollfd(fd, events), xsk.timespec(10), np.zeros(8, np.uint64)


def app_xsk(ctx) -> dict:
    """The AF_XDP application on vb/tap0: rxdrop, l2fwd or txonly."""
    from xskbench.real import bpf, xsk
    cfg = ctx.cfg
    ns, dev, _, _ = ctx.topo.app
    ifindex = socket.if_nametoindex(dev)
    skb = cfg.xdp_mode == "skb"
    wait = xsk.WAITS[cfg.wait]
    objs = []
    try:
        rx = cfg.workload != "txonly"
        if rx:
            xmap = bpf.xskmap(64)
            objs.append(xmap)
            prog, link = _xdp_link(ifindex, bpf.prog_xsk_redirect(xmap.fileno()), "xsk_redir",
                                   skb)
            objs += [prog, link]
        s = xsk.XskSocket(ifindex, 0, rx=rx, tx=cfg.workload != "rxdrop", ring=cfg.ring,
                          frame_size=cfg.frame_size, zerocopy=cfg.mode == "zerocopy",
                          need_wakeup=cfg.need_wakeup, busy_poll=cfg.wait == "busy-poll",
                          busy_budget=cfg.batch, skb_mode=skb, dev=dev,
                          fill_frames=None if rx else 0)
        objs.append(s)
        if rx:
            bpf.map_update_u32(xmap, 0, s.fileno())
        pfd, ts, sbuf = _loop_args(ctx, s.fileno(), xsk.POLLIN)
        flen = np.zeros(s.nframes, np.int64)
        info = {"zerocopy": s.zerocopy, "nframes": s.nframes, "ifindex": ifindex}
        if cfg.workload == "txonly":
            s.write_frames(_frame_for(ctx, towards_app=False), s.nframes)
        ctx.ready(**info)
        ctx.wait_go()
        if cfg.workload == "rxdrop":
            xsk.rx_loop(s.rx.parts(), s.fq.parts(), ctx.ctl, ctx.ctr, s.fileno(), cfg.batch,
                        wait, cfg.need_wakeup, -cfg.frame_size, pfd, ts, sbuf)
        elif cfg.workload == "l2fwd":
            xsk.l2fwd_loop(s.rx.parts(), s.fq.parts(), s.tx.parts(), s.cq.parts(), s.umem,
                           flen, s.frame_shift, ctx.ctl, ctx.ctr, s.fileno(), cfg.batch, wait,
                           cfg.need_wakeup, pfd, ts, sbuf)
        else:
            xsk.tx_loop(s.tx.parts(), s.cq.parts(), flen, s.frame_shift, s.nframes,
                        cfg.packet_size, ctx.ctl, ctx.ctr, s.fileno(), cfg.batch, wait,
                        cfg.need_wakeup, pfd, ts, sbuf)
        info["xdp_statistics"] = s.statistics()
        return info
    finally:
        for o in reversed(objs):
            o.close()


def _udp_socket(bind_ip: str, port: int, connect_to: str | None = None) -> socket.socket:
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    with contextlib.suppress(OSError):  # SO_RCVBUFFORCE/SO_SNDBUFFORCE: 8 MiB
        s.setsockopt(socket.SOL_SOCKET, 33, 8 << 20)
        s.setsockopt(socket.SOL_SOCKET, 32, 8 << 20)
    s.bind((bind_ip, port))
    if connect_to:
        s.connect((connect_to, port))
    return s


def app_udp(ctx) -> dict:
    """The kernel-socket baseline: recvmmsg() receiver or sendmmsg() sender."""
    from xskbench.real import xsk
    cfg = ctx.cfg
    _, _, ip_b, _ = ctx.topo.app
    _, _, ip_a, _ = ctx.topo.peer
    with contextlib.ExitStack() as stack:
        if cfg.workload == "rxdrop":
            s = stack.enter_context(_udp_socket(ip_b, UDP_PORT))
            vec = xsk.MsgVec(cfg.batch, 2048)
            pfd, ts, _ = _loop_args(ctx, s.fileno(), xsk.POLLIN)
            ctx.ready()
            ctx.wait_go()
            xsk.udp_rx_loop(s.fileno(), vec.vec, cfg.batch, ETH_IP_UDP, ctx.ctl, ctx.ctr,
                            xsk.WAITS[cfg.wait], pfd, ts)
        else:
            s = stack.enter_context(_udp_socket(ip_b, UDP_PORT, connect_to=ip_a))
            vec = xsk.MsgVec(cfg.batch, 0, payload=bytes(cfg.packet_size - ETH_IP_UDP))
            pfd, ts, _ = _loop_args(ctx, s.fileno(), xsk.POLLOUT)
            ctx.ready()
            ctx.wait_go()
            xsk.udp_tx_loop(s.fileno(), vec.vec, cfg.batch, cfg.packet_size, ctx.ctl,
                            ctx.ctr, pfd, ts, xsk.C_TX)
    return {}


def peer(ctx) -> dict:
    """The far end: a sender (rxdrop, l2fwd), a sink (txonly) or both (l2fwd)."""
    from xskbench.real import bpf, xsk
    cfg = ctx.cfg
    ns, dev, _, _ = ctx.topo.peer
    sender = cfg.resolved_sender()
    if sender == "tap":
        return _peer_tap(ctx, write=cfg.workload != "txonly")
    ifindex = socket.if_nametoindex(dev)
    with contextlib.ExitStack() as stack:
        if cfg.workload != "rxdrop":  # something comes back: drop it at the door
            for o in _xdp_link(ifindex, bpf.prog_action(bpf.XDP_DROP), "sink", False):
                stack.callback(o.close)
        if cfg.workload == "txonly":
            ctx.ready(role="sink")
            ctx.wait_go()
            while not ctx.ctl[xsk.STOP]:
                ctx.serve_python()
                time.sleep(0.0005)
            ctx.serve_python()
            return {}
        frame = _frame_for(ctx, towards_app=True)
        if sender == "xdp":
            prog = bpf.load_xdp(bpf.prog_redirect(ifindex), "tgen")
            stack.callback(prog.close)
            return _peer_live(ctx, bpf.LiveFrames(prog, frame, batch=64))
        if sender == "xsk":
            s = stack.enter_context(xsk.XskSocket(ifindex, 0, rx=False, tx=True, ring=2048,
                                                  frame_size=cfg.frame_size, dev=dev,
                                                  fill_frames=0))
            s.write_frames(frame, s.nframes)
            pfd, ts, sbuf = _loop_args(ctx, s.fileno(), xsk.POLLOUT)
            flen = np.zeros(s.nframes, np.int64)
            ctx.ready(role="xsk txonly sender")
            ctx.wait_go()
            xsk.tx_loop(s.tx.parts(), s.cq.parts(), flen, s.frame_shift, s.nframes,
                        cfg.packet_size, ctx.ctl, ctx.ctr, s.fileno(), 64, xsk.WAIT_SPIN, True,
                        pfd, ts, sbuf)
            # tx_loop counted completions as tx; for a peer they are what it offered
            return {}
        _, _, ip_b, _ = ctx.topo.app
        _, _, ip_a, _ = ctx.topo.peer
        s = stack.enter_context(_udp_socket(ip_a, UDP_PORT, connect_to=ip_b))
        vec = xsk.MsgVec(64, 0, payload=frame[ETH_IP_UDP:])
        pfd, ts, _ = _loop_args(ctx, s.fileno(), xsk.POLLOUT)
        ctx.ready(role="udp sender")
        ctx.wait_go()
        xsk.udp_tx_loop(s.fileno(), vec.vec, 64, cfg.packet_size, ctx.ctl, ctx.ctr, pfd, ts,
                        xsk.C_OFFERED)
        return {}


LIVE_CALL_S = 0.25


def _peer_live(ctx, live) -> dict:
    """BPF_PROG_RUN live-frame sender.  Each call sets up and tears down a page pool and
    waits for an RCU grace period (tens of ms on a busy machine), so calls are long
    (about LIVE_CALL_S); the offered count of the window comes from the kernel's
    ``tx_queue_*_xdp_xmit`` counters of the sending veth, not from these coarse steps."""
    from xskbench.real import xsk
    ctx.ready(role="xdp live-frames sender")
    ctx.wait_go()
    repeat = 65536
    ctl, ctr = ctx.ctl, ctx.ctr
    while not ctl[xsk.STOP]:
        ctx.serve_python()
        t = time.perf_counter()
        live.run(repeat)
        ctr[xsk.C_OFFERED] += repeat
        dt = time.perf_counter() - t
        repeat = int(min(1 << 26, max(4096, repeat * LIVE_CALL_S / max(dt, 1e-6))))
    ctx.serve_python()
    return {}


TUNSETIFF, IFF_TAP, IFF_NO_PI = 0x400454CA, 0x0002, 0x1000


def _peer_tap(ctx, write: bool) -> dict:
    from xskbench.real import xsk
    cfg = ctx.cfg
    fd = os.open("/dev/net/tun", os.O_RDWR | os.O_NONBLOCK | os.O_CLOEXEC)
    try:
        fcntl.ioctl(fd, TUNSETIFF, struct.pack("16sH", b"tap0", IFF_TAP | IFF_NO_PI))
        frame = np.frombuffer(_frame_for(ctx, towards_app=True), np.uint8).copy()
        rbuf = np.zeros(2048, np.uint8)
        pfd, ts, _ = _loop_args(ctx, fd, xsk.POLLIN)
        ctx.ready(role="tap writer" if write else "tap reader")
        ctx.wait_go()
        xsk.tap_loop(fd, frame, rbuf, ctx.ctl, ctx.ctr, cfg.batch, write, pfd, ts)
    finally:
        os.close(fd)
    return {}


# --- /proc accounting --------------------------------------------------------------------------

USER_HZ = os.sysconf("SC_CLK_TCK")
_CPU_FIELDS = ("user", "nice", "system", "idle", "iowait", "irq", "softirq", "steal")


def read_proc_stat() -> dict[str, list[int]]:
    out = {}
    with open("/proc/stat") as f:
        for line in f:
            if line.startswith("cpu") and line[3:4].isdigit():
                name, *vals = line.split()
                out[name] = [int(v) for v in vals[:8]]
    return out


def read_pid_times(pid: int) -> tuple[int, int] | None:
    try:
        with open(f"/proc/{pid}/stat") as f:
            rest = f.read().rsplit(")", 1)[1].split()
    except (FileNotFoundError, ProcessLookupError):
        return None
    return int(rest[11]), int(rest[12])


def ksoftirqd_pids() -> dict[str, int]:
    out = {}
    for d in os.listdir("/proc"):
        if d.isdigit():
            try:
                with open(f"/proc/{d}/comm") as f:
                    comm = f.read().strip()
            except OSError:
                continue
            if comm.startswith("ksoftirqd/"):
                out[comm] = int(d)
    return out


def read_softnet() -> dict[str, int]:
    tot = {"processed": 0, "dropped": 0, "time_squeeze": 0}
    with open("/proc/net/softnet_stat") as f:
        for line in f:
            v = [int(x, 16) for x in line.split()]
            tot["processed"] += v[0]
            tot["dropped"] += v[1]
            tot["time_squeeze"] += v[2]
    return tot


def read_udp_mib(pid: int) -> dict[str, int]:
    try:
        with open(f"/proc/{pid}/net/snmp") as f:
            lines = [ln.split() for ln in f if ln.startswith("Udp:")]
    except OSError:
        return {}
    if len(lines) < 2:
        return {}
    return {f"Udp{k}": int(v) for k, v in zip(lines[0][1:], lines[1][1:], strict=False)}


def irq_time_accounting() -> bool | None:
    try:
        with gzip.open("/proc/config.gz", "rt") as f:
            return "CONFIG_IRQ_TIME_ACCOUNTING=y" in f.read()
    except OSError:
        return None


@dataclass
class Snapshot:
    t: float
    app: np.ndarray
    peer: np.ndarray
    stat: dict
    procs: dict
    ethtool: dict
    dev: dict
    softnet: dict
    udp: dict


def _request_stats(workers, timeout: float = 0.5) -> None:
    from xskbench.real.xsk import ACK, REQ
    for w in workers:
        w.ctl[REQ] += 1
    end = time.monotonic() + timeout
    for w in workers:
        while w.ctl[ACK] != w.ctl[REQ] and time.monotonic() < end:
            time.sleep(0.0002)


def snapshot(workers: dict, topo, kthreads: dict) -> Snapshot:
    _request_stats([workers["app"]])  # its XDP_STATISTICS; the rest is live in shared memory
    app, peer_ = workers["app"].ctr.copy(), workers["peer"].ctr.copy()
    t = time.monotonic()
    stat = read_proc_stat()
    procs = {name: read_pid_times(w.pid) for name, w in workers.items()}
    procs.update({k: read_pid_times(p) for k, p in kthreads.items()})
    devs = {}
    eth = {}
    for ns, dev, _, _ in {topo.app, topo.peer}:
        eth[dev] = topo.ethtool(ns, dev)
    for name in workers:
        with contextlib.suppress(OSError):
            for dev, vals in T.read_dev_stats(workers[name].pid).items():
                if dev != "lo":
                    devs[dev] = vals
    return Snapshot(t, app, peer_, stat, procs, eth, devs, read_softnet(),
                    read_udp_mib(workers["app"].pid))


def _delta(a: dict, b: dict) -> dict:
    return {k: b[k] - a.get(k, 0) for k in b if b[k] - a.get(k, 0)}


def window_result(cfg: MeasureConfig, s1: Snapshot, s2: Snapshot, topo) -> dict:
    """Rates, CPU and counters of one steady window."""
    from xskbench.real import xsk
    w = s2.t - s1.t
    app = dict(zip(xsk.CTR_NAMES, (s2.app - s1.app).tolist(), strict=True))
    peer_ = dict(zip(xsk.CTR_NAMES, (s2.peer - s1.peer).tolist(), strict=True))
    # CPU: per CPU from /proc/stat, per process from /proc/PID/stat (percent of one CPU)
    split, busy = {}, {}
    for cpu in sorted(s2.stat):
        d = [b - a for a, b in zip(s1.stat[cpu], s2.stat[cpu], strict=True)]
        tot = sum(d) or 1
        f = dict(zip(_CPU_FIELDS, d, strict=True))
        split[cpu] = {k: round(100.0 * v / tot, 2) for k, v in (
            ("usr", f["user"] + f["nice"]), ("sys", f["system"]), ("softirq", f["softirq"]),
            ("irq", f["irq"]), ("idle", f["idle"] + f["iowait"]), ("steal", f["steal"]))}
        busy[cpu] = round(100.0 - split[cpu]["idle"] - split[cpu]["steal"], 2)
    per_proc = {}
    for name, t2 in s2.procs.items():
        t1 = s1.procs.get(name)
        if t1 and t2:
            per_proc[name] = {"usr": 100.0 * (t2[0] - t1[0]) / USER_HZ / w,
                              "sys": 100.0 * (t2[1] - t1[1]) / USER_HZ / w}
    cpu = {k: per_proc[k]["usr"] + per_proc[k]["sys"] for k in ("app", "peer") if k in per_proc}
    cpu["ksoftirqd"] = sum(v["usr"] + v["sys"] for k, v in per_proc.items()
                           if k.startswith("ksoftirqd/"))
    cpu["other"] = max(0.0, sum(busy.values()) - sum(cpu.values()))
    cpu["softirq"] = sum(v["softirq"] for v in split.values())  # included in the others
    # counters, named as in xskbench/stats.py
    eth = {dev: _delta(s1.ethtool.get(dev, {}), v) for dev, v in s2.ethtool.items()}
    eth = {k: v for k, v in eth.items() if v}
    (_, app_dev, _, _), (_, peer_dev, _, _) = topo.app, topo.peer
    sent = peer_["offered_packets"] + peer_["tx_packets"]
    if cfg.workload != "txonly" and cfg.resolved_sender() == "xdp":
        sent = sum(v for k, v in eth.get(peer_dev, {}).items()
                   if k.startswith("tx_queue_") and k.endswith(("_xdp_xmit", "_xdp_xmit_errors")))
    counters = {k: app[k] for k in xsk.CTR_NAMES
                if k in stats.INDEX and k != "offered_packets"}
    counters["offered_packets"] = sent if cfg.workload != "txonly" else app["tx_submitted"]
    devs = {dev: _delta(s1.dev.get(dev, {}), v) for dev, v in s2.dev.items()}
    softnet = _delta(s1.softnet, s2.softnet)
    udp = _delta(s1.udp, s2.udp)
    counters["backlog_dropped"] = softnet.get("dropped", 0)
    if cfg.device == "veth":
        txdev = peer_dev if cfg.workload != "txonly" else app_dev
        counters["veth_xdp_ring_full"] = (
            eth.get(txdev, {}).get("tx_queue_0_xdp_xmit_errors", 0)
            + devs.get(txdev, {}).get("tx_dropped", 0))
    else:
        counters["tun_tx_dropped"] = devs.get(app_dev, {}).get("tx_dropped", 0)
    r = lambda x: float(f"{x:.6g}")  # noqa: E731
    out = {
        "window_s": r(w),
        "pps": {"rx": r(app["rx_packets"] / w), "tx": r(app["tx_packets"] / w)},
        "bps": {"rx": r(8 * app["rx_bytes"] / w), "tx": r(8 * app["tx_bytes"] / w)},
        "offered_pps": r(counters["offered_packets"] / w),
        "cpu": {k: r(v) for k, v in cpu.items()},
        "cpu_detail": {k: {kk: r(vv) for kk, vv in v.items()} for k, v in per_proc.items()},
        "cpu_split": split,
        "cpu_per_cpu": busy,
        "counters": counters,
        "peer_counters": {k: v for k, v in peer_.items() if v},
        "kernel": {"ethtool": eth, "dev": {k: v for k, v in devs.items() if v},
                   "softnet": softnet, "snmp": udp},
    }
    if cfg.workload == "l2fwd" and cfg.device == "veth":
        out["returned_pps"] = r(eth.get(peer_dev, {}).get("rx_queue_0_xdp_drops", 0) / w)
    elif cfg.device == "tap" and peer_["rx_packets"]:
        out["returned_pps"] = r(peer_["rx_packets"] / w)
    if cfg.workload == "txonly" and cfg.device == "tap":
        out["pps"]["delivered"] = r(peer_["rx_packets"] / w)
    # the app's CPU in iterations that moved nothing (from its cycle counter), as the
    # emulator's idle_poll; sleeping in poll() is not CPU time and is left out
    awake = app["loop_cycles"] - app["sleep_cycles"]
    share = min(1.0, max(0.0, (app["idle_cycles"] - app["sleep_cycles"]) / awake)) \
        if awake > 0 else 0.0
    out["idle_poll"] = {"app": r(cpu.get("app", 0.0) * share)}
    out["bottleneck"] = _bottleneck(out["cpu"], out["idle_poll"])
    return out


def _bottleneck(cpu: dict, idle_poll: dict) -> str:
    """The context doing the most useful work (CPU minus empty polls), as the emulator."""
    useful = {k: cpu[k] - idle_poll.get(k, 0.0) for k in ("app", "peer", "ksoftirqd")
              if k in cpu}
    return max(useful, key=useful.get)


# --- one run, repeats, sweeps ------------------------------------------------------------------

def _shared(n: int) -> np.ndarray:
    mm = mmap.mmap(-1, 8 * n, flags=mmap.MAP_SHARED | mmap.MAP_ANONYMOUS)
    return np.frombuffer(mm, np.int64)


def run_once(cfg: MeasureConfig, topo, progress=None) -> dict:
    from xskbench.real import xsk
    app_fn = app_udp if cfg.mode == "udp" else app_xsk
    ns_app, ns_peer = topo.app[0], topo.peer[0]
    roles = {"app": Role("app", ns_app, cfg.app_cpu, app_fn),
             "peer": Role("peer", ns_peer, cfg.peer_cpu, peer)}
    if cfg.device == "veth":
        # frames from ndo_xdp_xmit need the receiving veth's NAPI, which only native XDP or
        # GRO turn on: without a native program, GRO on (as `ethtool -K vb gro on`)
        T.set_gro(topo.sock(ns_app), topo.app[1], cfg.resolved_sender() == "xdp" and (
            cfg.mode == "udp" or cfg.xdp_mode == "skb"))
    workers: dict[str, Worker] = {}
    try:
        for name, role in roles.items():  # app first: the receiver is ready before traffic
            ctl, ctr = _shared(xsk.N_CTL), _shared(xsk.N_CTR)
            workers[name] = Worker(role, cfg, topo, ctl, ctr)
            info = workers[name].expect("ready", READY_TIMEOUT)
            if name == "app" and info.get("zerocopy") is False and cfg.mode == "zerocopy":
                raise MeasureError("zero-copy requested but the kernel bound in copy mode")
        for w in workers.values():
            w.ctl[xsk.GO] = 1
        kthreads = ksoftirqd_pids()
        _watch(workers, cfg.warmup)
        s1 = snapshot(workers, topo, kthreads)
        _watch(workers, cfg.duration)
        s2 = snapshot(workers, topo, kthreads)
        for w in workers.values():
            w.ctl[xsk.STOP] = 1
        final = {name: w.expect("done", 10.0) for name, w in workers.items()}
        res = window_result(cfg, s1, s2, topo)
        xs = final["app"].get("xdp_statistics")
        if xs:
            res["kernel"]["xdp_statistics_total"] = xs
        return res
    finally:
        for w in workers.values():
            w.ctl[xsk.STOP] = 1
        for w in workers.values():
            w.close()


def _watch(workers: dict, seconds: float) -> None:
    """Sleep, but fail at once if a worker reports an error or dies."""
    end = time.monotonic() + seconds
    while (left := end - time.monotonic()) > 0:
        for w in workers.values():
            msg = w.recv(0)
            if msg is not None:
                raise MeasureError(f"{w.role.name} worker: unexpected message {msg}")
        time.sleep(min(left, 0.05))


LOCK_PATH = "/run/xskbench-measure.lock"


@contextlib.contextmanager
def exclusive(timeout: float = 600.0):
    """One real measurement at a time on a machine (they would share its CPUs)."""
    fd = os.open(LOCK_PATH, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
    try:
        end = time.monotonic() + timeout
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if time.monotonic() > end:
                    raise MeasureError(f"another real measurement holds {LOCK_PATH}") from None
                time.sleep(0.1)
        yield
    finally:
        os.close(fd)


def _stats(values: list[float]) -> dict:
    m = statistics.fmean(values)
    sd = statistics.pstdev(values) if len(values) > 1 else 0.0
    r = lambda x: float(f"{x:.6g}")  # noqa: E731
    return {"mean": r(m), "std": r(sd), "min": r(min(values)), "max": r(max(values)),
            "cv": r(sd / m) if m else 0.0, "n": len(values)}


def _mean_tree(items: list):
    """Mean of nested dicts of numbers (ints stay ints)."""
    first = items[0]
    if isinstance(first, dict):
        keys = {k for it in items for k in it}
        return {k: _mean_tree([it.get(k, 0) for it in items]) for k in sorted(keys)}
    if isinstance(first, bool) or not isinstance(first, int | float):
        return first
    m = statistics.fmean(items)
    return round(m) if all(isinstance(i, int) for i in items) else float(f"{m:.6g}")


def aggregate(cfg: MeasureConfig, runs: list[dict], meta: dict) -> dict:
    """Mean over repeats with the same keys as ``xskbench run --json``, plus the spread."""
    from xskbench import __version__
    mean = _mean_tree([{k: v for k, v in r.items() if k != "bottleneck"} for r in runs])
    spread = {
        "pps": {k: _stats([r["pps"][k] for r in runs]) for k in runs[0]["pps"]},
        "bps": {k: _stats([r["bps"][k] for r in runs]) for k in runs[0]["bps"]},
        "cpu": {k: _stats([r["cpu"][k] for r in runs]) for k in runs[0]["cpu"]},
        "offered_pps": _stats([r["offered_pps"] for r in runs]),
    }
    return {
        "version": __version__, "seed": cfg.seed, "config": cfg.to_dict(),
        "profile_name": "real", "source": "measured",
        **mean,
        "bottleneck": _bottleneck(mean["cpu"], mean.get("idle_poll", {})),
        "spread": spread, "repeats": len(runs), "runs": runs, "real": meta,
    }


def machine_info() -> dict:
    un = os.uname()
    return {"kernel": un.release, "machine": un.machine, "cpus": os.cpu_count(),
            "cpu_model": _cpu_model(), "python": platform.python_version(),
            "cpu_accounting": {True: "irq_time", False: "tick", None: "unknown"}[
                irq_time_accounting()],
            "note": "per-process times include softirq served on their stack unless "
                    "cpu_accounting is irq_time; 'softirq' is the /proc/stat share of all "
                    "CPUs (percent of one CPU), already inside the other contexts"}


def _cpu_model() -> str:
    with contextlib.suppress(OSError), open("/proc/cpuinfo") as f:
        for line in f:
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    return platform.processor()


def measure(cfg: MeasureConfig, progress=None) -> dict:
    """Check, build the topology, run ``cfg.repeats`` windows, tear down, aggregate."""
    check_environment()
    cfg.check()
    from xskbench.real import xsk
    xsk.compile_all()  # before forking: the workers start compiled
    runs = []
    with exclusive(), T.signals_as_exceptions(), T.Topology(cfg.device) as topo:
        meta = {**machine_info(), "namespaces": list(topo.namespaces),
                "loadavg_before": [round(x, 2) for x in os.getloadavg()],
                "app": {"netns": topo.app[0], "dev": topo.app[1], "ip": topo.app[2]},
                "peer": {"netns": topo.peer[0], "dev": topo.peer[1], "ip": topo.peer[2]}}
        for i in range(cfg.repeats):
            res = run_once(cfg, topo)
            runs.append(res)
            if progress:
                progress(i, res)
        meta["loadavg_after"] = [round(x, 2) for x in os.getloadavg()]
    return aggregate(cfg, runs, meta)


#: The stored set (data/measurements/): veth copy rxdrop, one axis varied at a time.
SWEEP = {
    "batch": [16, 64, 256],
    "ring": [256, 2048, 4096],
    "need_wakeup": [True, False],
    "packet_size": [64, 512, 1300],
    "wait": ["spin", "poll"],
}


def sweep(base: MeasureConfig, axes: dict | None = None, progress=None) -> dict:
    """Vary one field at a time around ``base``; returns {"base", "points": [...]}."""
    axes = SWEEP if axes is None else axes
    points, done = [], {}
    for field, values in axes.items():
        for v in values:
            cfg = dataclasses.replace(base, **{field: v})
            if cfg not in done:  # the base point is measured once, listed on every axis
                done[cfg] = measure(cfg)
                if progress:
                    progress(field, v, done[cfg])
            points.append({"axis": field, "value": v, "result": done[cfg]})
    return {"base": base.to_dict(), "axes": axes, "points": points,
            "created": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}
