"""Forked, pinned worker processes in namespaces, talking JSON lines over a pipe; their
counters and control words live in shared memory (see xsk.py's CTL/CTR layout)."""
from __future__ import annotations

import contextlib
import json
import mmap
import os
import select
import signal
import time
import traceback
from dataclasses import dataclass

import numpy as np

from xskbench.real import topology as T
from xskbench.real.environment import MeasureError
from xskbench.real.xsk import ACK, GO, REQ, STOP

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
        while not self.ctl[GO] and not self.ctl[STOP]:
            time.sleep(0.0005)

    def serve_python(self) -> None:
        """For loops written in Python: acknowledge snapshot requests."""
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
                    set_priority(cfg.priority)
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


def set_priority(priority: str) -> None:
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


def shared(n: int) -> np.ndarray:
    """``n`` int64 words of memory shared with the workers forked later."""
    mm = mmap.mmap(-1, 8 * n, flags=mmap.MAP_SHARED | mmap.MAP_ANONYMOUS)
    return np.frombuffer(mm, np.int64)


def watch(workers: dict, seconds: float) -> None:
    """Sleep, but fail at once if a worker reports an error or dies."""
    end = time.monotonic() + seconds
    while (left := end - time.monotonic()) > 0:
        for w in workers.values():
            msg = w.recv(0)
            if msg is not None:
                raise MeasureError(f"{w.role.name} worker: unexpected message {msg}")
        time.sleep(min(left, 0.05))
