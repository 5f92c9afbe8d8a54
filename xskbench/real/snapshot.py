"""A snapshot of everything a window is measured from: the workers' counters (shared
memory), the socket's XDP_STATISTICS, /proc/stat, /proc/PID/stat of the workers and of
ksoftirqd, ethtool -S of the devices, /proc/net/dev, softnet_stat and the UDP MIB."""
from __future__ import annotations

import contextlib
import time
from dataclasses import dataclass

import numpy as np

from xskbench.real import procstat as P
from xskbench.real import topology as T
from xskbench.real.xsk import ACK, REQ


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
    for w in workers:
        w.ctl[REQ] += 1
    end = time.monotonic() + timeout
    for w in workers:
        while w.ctl[ACK] != w.ctl[REQ] and time.monotonic() < end:
            time.sleep(0.0002)


def snapshot(workers: dict, topo, kthreads: dict) -> Snapshot:
    _request_stats([workers["app"]])  # its XDP_STATISTICS; the rest is live in shared memory
    app, peer = workers["app"].ctr.copy(), workers["peer"].ctr.copy()
    t = time.monotonic()
    stat = P.read_proc_stat()
    procs = {name: P.read_pid_times(w.pid) for name, w in workers.items()}
    procs.update({k: P.read_pid_times(p) for k, p in kthreads.items()})
    eth = {dev: topo.ethtool(ns, dev) for ns, dev, _, _ in {topo.app, topo.peer}}
    devs = {}
    for w in workers.values():
        with contextlib.suppress(OSError):
            devs.update({dev: v for dev, v in T.read_dev_stats(w.pid).items() if dev != "lo"})
    return Snapshot(t, app, peer, stat, procs, eth, devs, P.read_softnet(),
                    P.read_udp_mib(workers["app"].pid))


def delta(a: dict, b: dict) -> dict:
    """The counters of ``b`` that moved since ``a``."""
    return {k: b[k] - a.get(k, 0) for k in b if b[k] - a.get(k, 0)}
