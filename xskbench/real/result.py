"""Real windows as :class:`xskbench.results.Result`: the same rates, CPU per context,
bottleneck, saturation, ``to_json`` and ``to_frame`` as an emulated run.

The mapping: the contexts (labels) are the app worker, the peer worker and each CPU's
ksoftirqd, on their CPUs; a context's busy cycles are its /proc/PID/stat time x the CPU
clock (/proc/cpuinfo), its idle cycles the share of the app's loop iterations that moved
nothing (its cycle counter); counters are the app's, named by the stats table.  Nothing is
charged to ops (a real kernel has no op table), so the op arrays, latency histogram and
ring occupancy are empty.  What only a real run has goes into ``extra`` and hence into
``to_json``: the offered rate, CPU outside the measured contexts (other processes, which on a
shared machine includes other people's load), /proc/stat per CPU, the kernel's own counters
and, over repeats, the spread and one line per run.
"""
from __future__ import annotations

import statistics

import numpy as np
import pandas as pd

from xskbench import ops, stats
from xskbench.kernels import layout as L
from xskbench.machine import RING_NAMES
from xskbench.real import procstat as P
from xskbench.real import xsk
from xskbench.real.report import render
from xskbench.real.section import MeasureConfig
from xskbench.real.snapshot import delta
from xskbench.results import Result, _round


class Measured(Result):
    """A Result measured on the real kernel (``config`` is a :class:`MeasureConfig`)."""

    @property
    def seed(self):
        return self.config.seed

    def report(self, style="real"):
        return render(self)


def make(cfg: MeasureConfig, hz: float, window_s: float, cpu: dict, label_cpu: dict,
         idle: dict, counters: dict, extra: dict) -> Measured:
    """A Measured from CPU percentages per context (``cpu``, ``idle``: % of one CPU)."""
    labels = tuple(cpu)
    cyc = lambda pct: np.array([pct.get(k, 0.0) / 100.0 * window_s * hz for k in labels])  # noqa: E731
    zeros = np.zeros((len(labels), ops.N_OPS))
    occupancy = pd.DataFrame(columns=["time_us", *RING_NAMES])
    return Measured(cfg, labels, tuple(label_cpu[k] for k in labels), hz, window_s,
                    cyc(cpu), cyc(idle), zeros, zeros, zeros, counters, counters,
                    np.zeros(L.LAT_BINS, np.int64), occupancy, {}, "real",
                    {"source": "measured", "label_cpu": dict(label_cpu), **extra})


def window(cfg: MeasureConfig, s1, s2, topo, hz: float) -> Measured:
    """Rates, CPU and counters of one steady window between two snapshots."""
    w = s2.t - s1.t
    app = dict(zip(xsk.CTR_NAMES, (s2.app - s1.app).tolist(), strict=True))
    peer = dict(zip(xsk.CTR_NAMES, (s2.peer - s1.peer).tolist(), strict=True))
    split, busy = P.cpu_split(s1.stat, s2.stat)
    per_proc = {}
    for name, t2 in s2.procs.items():
        t1 = s1.procs.get(name)
        if t1 and t2:
            per_proc[name] = {"usr": 100.0 * (t2[0] - t1[0]) / P.USER_HZ / w,
                              "sys": 100.0 * (t2[1] - t1[1]) / P.USER_HZ / w}
    cpu = {k: v["usr"] + v["sys"] for k, v in per_proc.items()}
    label_cpu = {"app": cfg.app_cpu, "peer": cfg.peer_cpu}
    label_cpu.update({k: int(k.split("/")[1]) for k in cpu if k.startswith("ksoftirqd/")})
    cpu = {k: cpu[k] for k in label_cpu if k in cpu}
    # counters, named as in xskbench/stats.py
    eth = {dev: delta(s1.ethtool.get(dev, {}), v) for dev, v in s2.ethtool.items()}
    eth = {k: v for k, v in eth.items() if v}
    (_, app_dev, _, _), (_, peer_dev, _, _) = topo.app, topo.peer
    sent = peer["offered_packets"] + peer["tx_packets"]
    if cfg.workload != "txonly" and cfg.resolved_sender() == "xdp":
        sent = sum(v for k, v in eth.get(peer_dev, {}).items()
                   if k.startswith("tx_queue_") and k.endswith(("_xdp_xmit", "_xdp_xmit_errors")))
    counters = {k: app[k] for k in xsk.CTR_NAMES if k in stats.INDEX and k != "offered_packets"}
    counters["offered_packets"] = sent if cfg.workload != "txonly" else app["tx_submitted"]
    devs = {dev: delta(s1.dev.get(dev, {}), v) for dev, v in s2.dev.items()}
    softnet = delta(s1.softnet, s2.softnet)
    counters["backlog_dropped"] = softnet.get("dropped", 0)
    if cfg.device == "veth":
        txdev = peer_dev if cfg.workload != "txonly" else app_dev
        counters["veth_xdp_ring_full"] = (
            eth.get(txdev, {}).get("tx_queue_0_xdp_xmit_errors", 0)
            + devs.get(txdev, {}).get("tx_dropped", 0))
    else:
        counters["tun_tx_dropped"] = devs.get(app_dev, {}).get("tx_dropped", 0)
    extra = {
        "offered_pps": counters["offered_packets"] / w,
        "cpu_other": max(0.0, sum(busy.values()) - sum(cpu.values())),
        "softirq_pct": sum(v["softirq"] for v in split.values()),
        "cpu_busy": busy, "cpu_split": split, "cpu_detail": per_proc,
        "peer_counters": {k: v for k, v in peer.items() if v},
        "kernel": {"ethtool": eth, "dev": {k: v for k, v in devs.items() if v},
                   "softnet": softnet, "snmp": delta(s1.udp, s2.udp)},
    }
    if cfg.workload == "l2fwd" and cfg.device == "veth":
        extra["returned_pps"] = eth.get(peer_dev, {}).get("rx_queue_0_xdp_drops", 0) / w
    elif cfg.device == "tun" and peer["rx_packets"]:
        extra["returned_pps"] = peer["rx_packets"] / w
    # the app's CPU in iterations that moved nothing (from its cycle counter), as the
    # emulator's idle_poll; sleeping in poll() is not CPU time and is left out
    awake = app["loop_cycles"] - app["sleep_cycles"]
    share = min(1.0, max(0.0, (app["idle_cycles"] - app["sleep_cycles"]) / awake)) \
        if awake > 0 else 0.0
    return make(cfg, hz, w, cpu, label_cpu, {"app": cpu.get("app", 0.0) * share}, counters,
                extra)


def spread(values: list[float]) -> dict:
    m = statistics.fmean(values)
    sd = statistics.pstdev(values) if len(values) > 1 else 0.0
    r = _round
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
    return round(m) if all(isinstance(i, int) for i in items) else _round(m)


def aggregate(cfg: MeasureConfig, runs: list[Measured], meta: dict) -> Measured:
    """The repeats as one Result over their windows together (rates = all packets / all
    time, CPU = all busy cycles / all time), with the spread over runs and one line per run."""
    labels = list(dict.fromkeys(k for r in runs for k in r.labels))
    label_cpu = {k: c for r in runs for k, c in zip(r.labels, r.label_cpu, strict=True)}
    window_s = sum(r.window_s for r in runs)
    total = lambda prop: {k: sum(getattr(r, prop).get(k, 0.0) * r.window_s  # noqa: E731
                                 for r in runs) / window_s for k in labels}
    counters = {k: sum(r.counters.get(k, 0) for r in runs)
                for k in dict.fromkeys(k for r in runs for k in r.counters)}
    skip = {"source", "label_cpu", "spread", "runs", "repeats", "real"}
    extra = _mean_tree([{k: v for k, v in r.extra.items() if k not in skip} for r in runs])
    extra["spread"] = {
        "pps": {k: spread([r.pps[k] for r in runs]) for k in ("rx", "tx")},
        "bps": {k: spread([r.bps[k] for r in runs]) for k in ("rx", "tx")},
        "cpu": {k: spread([r.cpu.get(k, 0.0) for r in runs]) for k in labels},
        "offered_pps": spread([r.extra["offered_pps"] for r in runs]),
    }
    extra["runs"] = [{**r.summary(), "window_s": _round(r.window_s),
                      "offered_pps": _round(r.extra["offered_pps"])} for r in runs]
    extra.update(repeats=len(runs), real=meta)
    return make(cfg, runs[0].hz, window_s, total("cpu"), label_cpu, total("idle_poll"),
                counters, extra)


def from_json(d: dict) -> Measured:
    """A stored point's result (``Measured.to_json()``) back as a Measured."""
    cfg = MeasureConfig.from_dict(d["config"])
    mhz = (d.get("real") or {}).get("cpu_mhz")
    hz = mhz * 1e6 if mhz else 1e9  # cancels: CPU % is stored, cycles are derived
    known = set(Result.__dataclass_fields__) | {
        "version", "seed", "config", "profile_name", "window_s", "pps", "bps", "cpu",
        "cpu_per_cpu", "idle_poll", "bottleneck", "saturated", "counters", "latency_us",
        "profile", "invariants"}
    extra = {k: v for k, v in d.items() if k not in known}
    return make(cfg, hz, d["window_s"], d["cpu"], d["label_cpu"], d["idle_poll"],
                d["counters"], extra)
