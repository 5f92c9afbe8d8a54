"""Priors from independent sources: microbenchmarks of this machine (not fitted to any
target) written to data/measurements/microbench.json with the machine description.

* memcpy: numba-jitted copies of small buffers (64..1500 B, one slice copy each, the way
  the kernel copies a frame) and of large ones (numpy copy of 1 MiB..64 MiB) -> bytes/cycle.
* syscall round trip: getppid() through libc from a jitted loop (the cheapest syscall).
* eventfd write+read in one thread: two syscalls on the object a wakeup is signalled on.
* wake: two threads pinned to different CPUs ping-pong through two eventfds (blocking
  read): one wake = half the round trip (futex/eventfd wakeup + schedule-in).
* UDP sendto into a veth whose peer is down (veth_xmit drops the skb: the /dev/null of
  the stack; no dummy driver in this kernel) in a network namespace of its own: one skb
  alloc + IP/UDP output + neighbour + dev_queue_xmit + free per call.
* SLUB alloc+free: not measurable from user space; cited (see SLUB_CITED).

Cycles are nanoseconds x the CPU clock from /proc/cpuinfo.  The machine is shared with other
sessions, so the single-thread numbers are this thread's CPU time (thread_time: time slices
lost to other processes do not count) and every thread runs pinned at SCHED_FIFO 1 (the
wake test is wall time: it is a latency); each number is the median of REPEATS runs, with
min and max.
Usage (root for the UDP part): python benchmarks/microbench.py [OUT.json]
"""
import ctypes
import json
import os
import statistics
import subprocess
import sys
import threading
import time

import numba
import numpy as np

from xskbench.real.machine_info import machine_info

REPEATS = 7
OUT = os.path.join(os.path.dirname(__file__), "..", "data", "measurements", "microbench.json")
SLUB_CITED = {
    "cycles_alloc_free": 43, "ns": 10.8, "cpu": "Intel i7-4790K @ 4.00GHz",
    "bulk16_cycles_per_object": 17,
    "source": "Jesper Dangaard Brouer, commit fbd02630c6e3 'slub: initial bulk free "
              "implementation' (Linux 4.4): 'Baseline normal fastpath (alloc+free cost): "
              "43 cycles(tsc) 10.834 ns', bulk of 16: 17 cycles(tsc); measured with "
              "prototype-kernel slab_bulk_test01 (kernel module, not runnable from user space)",
}

libc = ctypes.CDLL(None, use_errno=True)
_getppid = libc.getppid
_getppid.restype, _getppid.argtypes = ctypes.c_int, []
_read = libc.read
_read.restype, _read.argtypes = ctypes.c_ssize_t, [ctypes.c_int, ctypes.c_void_p, ctypes.c_size_t]
_write = libc.write
_write.restype, _write.argtypes = ctypes.c_ssize_t, [ctypes.c_int, ctypes.c_void_p,
                                                      ctypes.c_size_t]
_sendto = libc.sendto
_sendto.restype = ctypes.c_ssize_t
_sendto.argtypes = [ctypes.c_int, ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int,
                    ctypes.c_void_p, ctypes.c_uint32]
_memcpy = libc.memcpy
_memcpy.restype = ctypes.c_void_p
_memcpy.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_size_t]


def _realtime(cpu):
    """Pin the calling thread and make it SCHED_FIFO 1: other sessions' load cannot
    preempt it (what it measures is then the CPU's, not the scheduler's)."""
    os.sched_setaffinity(0, {cpu})
    os.sched_setscheduler(0, os.SCHED_FIFO, os.sched_param(1))


@numba.njit(nogil=True)
def _copy_small(src, dst, size, n):
    nslots = dst.size // size
    for i in range(n):
        off = (i % nslots) * size
        _memcpy(dst.ctypes.data + off, src.ctypes.data + off, size)
    return dst[0]


@numba.njit(nogil=True)
def _getppid_loop(n):
    s = 0
    for _ in range(n):
        s += _getppid()
    return s


@numba.njit(nogil=True)
def _eventfd_loop(fd, buf, n):
    for _ in range(n):
        _write(fd, buf.ctypes.data, 8)
        _read(fd, buf.ctypes.data, 8)
    return buf[0]


@numba.njit(nogil=True)
def _pingpong(rfd, wfd, buf, n, first):
    for _ in range(n):
        if first:
            _write(wfd, buf.ctypes.data, 8)
            _read(rfd, buf.ctypes.data, 8)
        else:
            _read(rfd, buf.ctypes.data, 8)
            _write(wfd, buf.ctypes.data, 8)
    return 0


@numba.njit(nogil=True)
def _sendto_loop(fd, payload, addr, n):
    bad = 0
    for _ in range(n):
        if _sendto(fd, payload.ctypes.data, payload.size, 0, addr.ctypes.data, 16) < 0:
            bad += 1
    return bad


def _timed(fn, n, *args):
    """Median/min/max ns of this thread's CPU time per iteration over REPEATS runs of
    ``fn(*args, n)``."""
    fn(*args, 100)  # compile / warm
    per = []
    for _ in range(REPEATS):
        t = time.thread_time_ns()
        fn(*args, n)
        per.append((time.thread_time_ns() - t) / n)
    return {"ns_median": statistics.median(per), "ns_min": min(per), "ns_max": max(per),
            "iterations": n, "repeats": REPEATS}


def memcpy(ghz):
    out = {}
    for size in (64, 256, 1500):
        src = np.random.default_rng(1).integers(0, 256, 1 << 20, np.uint8)  # 1 MiB: in L2/L3
        dst = np.zeros_like(src)
        t = _timed(lambda s, d, k, n: _copy_small(s, d, k, n), 2_000_000, src, dst, size)
        out[f"{size}B"] = {**t, "cycles": t["ns_median"] * ghz,
                           "bytes_per_cycle": size / (t["ns_median"] * ghz)}
    for mib in (1, 64):
        src = np.ones(mib << 20, np.uint8)
        dst = np.empty_like(src)
        t = _timed(lambda s, d, n: [np.copyto(d, s) for _ in range(n)], 20, src, dst)
        out[f"{mib}MiB"] = {**t, "bytes_per_cycle": (mib << 20) / (t["ns_median"] * ghz)}
    return out


def eventfd_wake(cpus):
    """Half a ping-pong round trip between two threads pinned to different CPUs."""
    a, b = os.eventfd(0), os.eventfd(0)
    n = 20000
    buf1, buf2 = np.ones(1, np.uint64), np.ones(1, np.uint64)
    per = []
    try:
        for _ in range(REPEATS):
            def peer():
                _realtime(cpus[1])
                _pingpong(a, b, buf2, n, False)
            _realtime(cpus[0])
            th = threading.Thread(target=peer)
            th.start()
            t = time.perf_counter_ns()
            _pingpong(b, a, buf1, n, True)
            per.append((time.perf_counter_ns() - t) / n / 2)
            th.join()
    finally:
        os.sched_setscheduler(0, os.SCHED_OTHER, os.sched_param(0))
        os.sched_setaffinity(0, set(cpus))
        os.close(a)
        os.close(b)
    return {"ns_median": statistics.median(per), "ns_min": min(per), "ns_max": max(per),
            "iterations": n, "repeats": REPEATS, "cpus": list(cpus)}


def udp_sendto_dummy(cpu, size=64):
    """sendto() of a UDP datagram into a veth with its peer down, in a namespace of its own
    (a child process)."""
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:
        code = 1
        try:
            os.close(r)
            if libc.unshare(0x40000000):  # CLONE_NEWNET
                raise OSError(ctypes.get_errno(), "unshare(CLONE_NEWNET)")
            for cmd in (["ip", "link", "set", "lo", "up"],
                        ["ip", "link", "add", "va", "type", "veth", "peer", "name", "vb"],
                        ["ip", "addr", "add", "198.18.9.1/24", "dev", "va"],
                        ["ip", "link", "set", "va", "up"],
                        ["ip", "neigh", "replace", "198.18.9.2", "lladdr",
                         "02:00:00:00:00:02", "nud", "permanent", "dev", "va"]):
                subprocess.run(cmd, check=True, capture_output=True)
            import socket
            _realtime(cpu)
            s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
            s.bind(("198.18.9.1", 9))
            addr = np.frombuffer(b"\x02\x00\x00\x09" + socket.inet_aton("198.18.9.2")
                                 + bytes(8), np.uint8).copy()
            payload = np.zeros(size - 42, np.uint8)
            res = _timed(lambda f, p, a, n: _sendto_loop(f, p, a, n), 200_000,
                         s.fileno(), payload, addr)
            os.write(w, json.dumps(res).encode())
            code = 0
        except BaseException as err:  # noqa: BLE001 - reported to the parent
            os.write(w, json.dumps({"error": str(err)}).encode())
        finally:
            os._exit(code)
    os.close(w)
    with os.fdopen(r) as f:
        text = f.read()
    os.waitpid(pid, 0)
    return {**json.loads(text), "frame_bytes": size}


def main(out=OUT):
    info = machine_info()
    ghz = info["cpu_mhz"] / 1000.0
    load0 = os.getloadavg()
    cpus = sorted(os.sched_getaffinity(0))[:2]
    _realtime(cpus[-1])
    res = {"memcpy": memcpy(ghz)}
    t = _timed(_getppid_loop, 1_000_000)
    res["syscall_getppid"] = {**t, "cycles": t["ns_median"] * ghz}
    efd = os.eventfd(0)
    t = _timed(lambda fd, b, n: _eventfd_loop(fd, b, n), 500_000, efd, np.ones(1, np.uint64))
    os.close(efd)
    res["eventfd_write_read"] = {**t, "cycles": t["ns_median"] * ghz}
    if len(cpus) == 2:
        t = eventfd_wake(cpus)
        res["eventfd_wake_cross_cpu"] = {**t, "cycles": t["ns_median"] * ghz}
    t = udp_sendto_dummy(cpus[-1])
    if "ns_median" in t:
        t["cycles"] = t["ns_median"] * ghz
    res["udp_sendto_dummy"] = t
    res["slub_alloc_free_cited"] = SLUB_CITED
    doc = {"machine": {**info, "nproc": os.cpu_count(),
                       "loadavg_before": [round(x, 2) for x in load0],
                       "loadavg_after": [round(x, 2) for x in os.getloadavg()],
                       "shared": "other sessions compiled and ran numba code on this machine "
                                 "meanwhile: thread CPU time, pinned at SCHED_FIFO 1, medians "
                                 "of REPEATS runs, min/max kept"},
           "cycles_from": "ns x cpu_mhz (/proc/cpuinfo); ns are thread CPU time except the "
                           "wake (wall time)",
           "created": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), "results": res}
    with open(out, "w") as f:
        json.dump(doc, f, indent=1, sort_keys=True, default=float)
        f.write("\n")
    for k, v in res.items():
        if "ns_median" in v:
            print(f"{k:<24} {v['ns_median']:8.1f} ns  {v.get('cycles', 0):7.0f} cycles  "
                  f"(min {v['ns_min']:.1f}, max {v['ns_max']:.1f})")
    for k, v in res["memcpy"].items():
        print(f"memcpy {k:<10} {v['ns_median']:10.1f} ns  {v['bytes_per_cycle']:6.2f} B/cycle")
    print(f"wrote {out}")


if __name__ == "__main__":
    main(*sys.argv[1:])
