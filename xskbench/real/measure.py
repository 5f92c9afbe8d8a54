"""Measure the real kernel: one run = two pinned workers (roles.py) in namespaces xskbench
builds (topology.py), a warm-up, then a steady window bracketed by two snapshots
(snapshot.py) read into a Result (result.py); stop, reap, detach (the BPF links die with the
workers); ``repeats`` runs are aggregated into one Result with their spread."""
from __future__ import annotations

import contextlib
import fcntl
import os
import time

from xskbench.real import result as R
from xskbench.real import topology as T
from xskbench.real import xsk
from xskbench.real.environment import MeasureError, check_environment, live_frames
from xskbench.real.machine_info import machine_info
from xskbench.real.procstat import ksoftirqd_pids
from xskbench.real.roles import app_udp, app_xsk, peer
from xskbench.real.section import MeasureConfig
from xskbench.real.snapshot import snapshot
from xskbench.real.workers import READY_TIMEOUT, Role, Worker, shared, watch


def run_once(cfg: MeasureConfig, topo, hz: float) -> R.Measured:
    roles = {"app": Role("app", topo.app[0], cfg.app_cpu,
                         app_udp if cfg.mode == "udp" else app_xsk),
             "peer": Role("peer", topo.peer[0], cfg.peer_cpu, peer)}
    if cfg.device == "veth":
        # frames from ndo_xdp_xmit need the receiving veth's NAPI, which only native XDP or
        # GRO turn on: without a native program, GRO on (as `ethtool -K vb gro on`)
        T.set_gro(topo.sock(topo.app[0]), topo.app[1], cfg.resolved_sender() == "xdp" and (
            cfg.mode == "udp" or cfg.xdp_mode == "skb"))
    workers: dict[str, Worker] = {}
    try:
        for name, role in roles.items():  # app first: the receiver is ready before traffic
            workers[name] = Worker(role, cfg, topo, shared(xsk.N_CTL), shared(xsk.N_CTR))
            info = workers[name].expect("ready", READY_TIMEOUT)
            if name == "app" and info.get("zerocopy") is False and cfg.mode == "zerocopy":
                raise MeasureError("zero-copy requested but the kernel bound in copy mode")
        for w in workers.values():
            w.ctl[xsk.GO] = 1
        kthreads = ksoftirqd_pids()
        watch(workers, cfg.warmup)
        s1 = snapshot(workers, topo, kthreads)
        watch(workers, cfg.duration)
        s2 = snapshot(workers, topo, kthreads)
        for w in workers.values():
            w.ctl[xsk.STOP] = 1
        final = {name: w.expect("done", 10.0) for name, w in workers.items()}
        res = R.window(cfg, s1, s2, topo, hz)
        if final["app"].get("xdp_statistics"):
            res.extra["kernel"]["xdp_statistics_total"] = final["app"]["xdp_statistics"]
        return res
    finally:
        for w in workers.values():
            w.ctl[xsk.STOP] = 1
        for w in workers.values():
            w.close()


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


def measure(cfg: MeasureConfig, progress=None) -> R.Measured:
    """Check, build the topology, run ``cfg.repeats`` windows, tear down, aggregate."""
    check_environment()
    cfg.check()
    asked, cfg = cfg, sender_here(cfg)
    xsk.compile_all()  # before forking: the workers start compiled
    runs = []
    with exclusive(), T.signals_as_exceptions(), T.Topology(cfg.device) as topo:
        meta = {**machine_info(), "namespaces": list(topo.namespaces),
                "loadavg_before": [round(x, 2) for x in os.getloadavg()],
                "app": {"netns": topo.app[0], "dev": topo.app[1], "ip": topo.app[2]},
                "peer": {"netns": topo.peer[0], "dev": topo.peer[1], "ip": topo.peer[2]}}
        hz = (meta["cpu_mhz"] or 1000.0) * 1e6
        if cfg.sender != asked.sender:  # auto's xdp sender refused: the report says why
            meta["sender_note"] = f"auto, xdp refused: {live_frames()}"
        for i in range(cfg.repeats):
            runs.append(run_once(cfg, topo, hz))
            if progress:
                progress(i, runs[-1])
        meta["loadavg_after"] = [round(x, 2) for x in os.getloadavg()]
    return R.aggregate(cfg, runs, meta)


def sender_here(cfg: MeasureConfig) -> MeasureConfig:
    """``cfg`` with a sender this kernel runs.  The xdp sender needs ``BPF_PROG_RUN`` with
    live frames, which some kernels refuse where AF_XDP works: there ``auto`` sends with
    AF_XDP instead (xsk, copy-mode txonly; the result's config says so), and an explicit
    xdp sender, or a rate only it paces, is an error that says why."""
    if cfg.resolved_sender() != "xdp" or cfg.workload == "txonly":
        return cfg
    why = live_frames()
    if not why:
        return cfg
    if cfg.sender == "xdp" or cfg.rate_pps is not None:
        what = ("sender=xdp" if cfg.sender == "xdp"
                else f"rate_pps={cfg.rate_pps:g} (only the xdp sender paces)")
        raise MeasureError(f"{what}: this kernel refuses BPF_PROG_RUN with live frames "
                           f"({why}); use sender=xsk or sender=udp")
    return cfg.replace(sender="xsk")


#: ``xskbench measure --sweep``'s set: one axis varied at a time around the options given.
SWEEP = {
    "batch": [16, 64, 256],
    "ring": [256, 2048, 4096],
    "need_wakeup": [True, False],
    "packet_size": [64, 512, 1300],
    "wait": ["spin", "poll"],
}


def sweep(base: MeasureConfig, axes: dict | None = None, progress=None) -> dict:
    """Vary one field at a time around ``base``; {"base", "axes", "points": [{"axis",
    "value", "result": Measured.to_json()}], "machine"}.  The base point is measured once
    and listed on every axis.  (The emulator's sweep engine, sweep.py, does grids over
    RunConfigs; this is the one-axis-at-a-time loop for MeasureConfigs.)"""
    axes = SWEEP if axes is None else axes
    done, points = {}, []
    load0 = os.getloadavg()
    for field, values in axes.items():
        for v in values:
            cfg = base.replace(**{field: v})
            if cfg not in done:
                done[cfg] = measure(cfg).to_json()
                if progress:
                    progress(field, v, done[cfg])
            points.append({"axis": field, "value": v, "result": done[cfg]})
    machine = {**machine_info(), "loadavg_before": [round(x, 2) for x in load0]}
    return {"base": base.to_dict(), "axes": axes, "points": points, "machine": machine,
            "created": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}
