"""Multi-queue runs: one arena per queue pair, run on one timeline (kernels/multiq.py).

``queue_configs`` turns a config with ``mq.queues = N`` into N single-queue configs: CPUs by the
pinning policy, the host backend per queue or shared, the offered rate spread RSS-like, the
UMEM private or split. ``combine`` merges the per-queue results into one whose context labels
are ``q<i>/<context>``, with the per-queue results kept beside it.
"""
from dataclasses import fields

import numpy as np
import pandas as pd

from .devices import DEVICES
from .fields import fmt
from .kernels import layout as L
from .results import Result

MAX_CPU = 63
LINE = 64  # bytes per cache line


def packet_bytes(cfg, buffers):
    """Cache lines of packet data a queue keeps cycling through: every UMEM frame in
    circulation plus ``buffers`` device-side buffers, each touched for one packet."""
    lines = -(-cfg.workload.packet_size // LINE)
    return (cfg.xsk.umem_frames + buffers) * lines * LINE


def llc_miss_ppm(cfg, working_set):
    """Share (per million) of a queue's packet bytes read from memory: a working set larger
    than the queue's part of the LLC (``testbed.llc_mb``; with N queues, 1/N of it each, see
    ``queue_configs``) hits it in proportion llc / working set (random replacement)."""
    llc = cfg.testbed.llc_mb * 2**20
    return 0 if working_set <= llc else round(1e6 * (1.0 - llc / working_set))


def traffic_shares(n, skew):
    """RSS: queue 0 carries 1/n + skew·(1 - 1/n) of the offered rate, the rest split evenly."""
    if n == 1:
        return [1.0]
    hot = 1.0 / n + skew * (1.0 - 1.0 / n)
    return [hot] + [(1.0 - hot) / (n - 1)] * (n - 1)


def _cpu_plan(cfg):
    """{field: [cpu of queue 0, 1, ...]} for the device section's CPU fields."""
    mq, dev, n = cfg.mq, DEVICES[cfg.device], cfg.mq.queues
    sec = getattr(cfg, dev.section_name)
    host = dev.host_cpu_fields
    cpu_fields = [f.name for f in fields(sec) if f.name.endswith("_cpu")]
    apart = dev.host_cpus_apart
    stride = max(getattr(sec, f) for f in cpu_fields if not (apart and f in host)) + 1
    plan = {}
    for f in cpu_fields:
        cpu = getattr(sec, f)
        if f in host and (mq.host == "shared" or mq.pinning == "one-cpu"):
            plan[f] = [cpu] * n                   # one core, or per-queue workers on one core
        elif f in host and apart:
            plan[f] = [cpu + q for q in range(n)]  # a host core per queue
        elif mq.pinning == "spread":
            plan[f] = [cpu + q * stride for q in range(n)]
        elif mq.pinning == "same-cpu":
            plan[f] = [n + q if f in host else q for q in range(n)]
        else:
            plan[f] = [cpu] * n
    return plan


def check(cfg):
    """Multi-queue requests that cannot be laid out: named field, value and what is allowed."""
    mq = cfg.mq
    if mq.queues == 1:
        return  # one queue carries everything, whatever the skew
    rate, n = cfg.workload.rate_pps, mq.queues
    if mq.skew > 0 and rate is None:
        raise ValueError(f"mq.skew={mq.skew:g} with mq.queues={n} skews an offered rate, but "
                         "workload.rate_pps is none (every queue runs flat out); allowed: "
                         "mq.skew=0, or set workload.rate_pps")
    cold = traffic_shares(n, mq.skew)[-1] * rate if rate is not None else None
    if cold is not None and cold < 1:  # the generator offers at least 1 pps per queue
        cold_queues = "queue 1" if n == 2 else f"queues 1..{n - 1}"
        raise ValueError(f"mq.skew={mq.skew:g} leaves {cold_queues} with {cold:.3g} pps of "
                         f"workload.rate_pps={fmt(rate)}; allowed: mq.skew <= "
                         f"{max(0.0, 1 - n / rate):.6g} (at least 1 pps per queue)")
    for f, cpus in _cpu_plan(cfg).items():
        if max(cpus) > MAX_CPU:
            raise ValueError(f"mq.queues={mq.queues} with mq.pinning={mq.pinning!r} puts "
                             f"{DEVICES[cfg.device].section_name}.{f} on CPU {max(cpus)}; allowed: "
                             f"CPUs 0..{MAX_CPU} (fewer queues or another pinning)")
    if mq.umem == "shared" and cfg.xsk.umem_frames // mq.queues < cfg.xsk.fill_size:
        raise ValueError(f"mq.umem='shared' splits xsk.umem_frames={cfg.xsk.umem_frames} over "
                         f"mq.queues={mq.queues} ({cfg.xsk.umem_frames // mq.queues} each); "
                         f"allowed: at least xsk.fill_size={cfg.xsk.fill_size} per queue")
    try:
        queue_configs(cfg)
    except ValueError as err:  # a per-queue share leaves its field's range
        raise ValueError(f"mq.queues={mq.queues} gives each queue {err}") from None



def queue_configs(cfg):
    """The single-queue config of each queue pair."""
    mq = cfg.mq
    if mq.queues == 1:
        return [cfg]
    dev = DEVICES[cfg.device]
    section = dev.section_name
    plan = _cpu_plan(cfg)
    rate = cfg.workload.rate_pps
    out = []
    for q, share in enumerate(traffic_shares(mq.queues, mq.skew)):
        changes = {f"{section}.{f}": cpus[q] for f, cpus in plan.items()}
        changes["workload.rate_pps"] = None if rate is None else rate * share
        wires = dev.wire_field or ()
        for wire in (wires,) if isinstance(wires, str) else wires:
            # the queues' fair shares of a rate they all pass through
            changes[f"{section}.{wire}"] = getattr(getattr(cfg, section), wire) / mq.queues
        # the queues' working sets compete for one LLC: each keeps an equal part of it
        changes["testbed.llc_mb"] = cfg.testbed.llc_mb / mq.queues
        if mq.umem == "shared":  # XDP_SHARED_UMEM across queues: the frames split
            changes["xsk.umem_frames"] = cfg.xsk.umem_frames // mq.queues
        # each queue's own config is single-queue (the pool's sockets: see arenas)
        changes.update({"mq.queues": 1, "mq.skew": 0.0,
                        "mq.umem": "shared-pool" if mq.umem == "shared-pool" else "private"})
        out.append(cfg.replace(**changes))
    return out


def arenas(machs, cfg):
    """The queues' arenas end to end (``M``, ``OFF``); each machine then views its part.
    With ``mq.umem = shared-pool`` every socket knows how many share its pool."""
    if cfg.mq.umem == "shared-pool":
        for mc in machs:
            mc.m[L.H_SHARED_POOL] = len(machs)
    if len(machs) == 1:
        m = machs[0].m
        return m, np.array([0, len(m)], dtype=np.int64)
    # the queues each queue meets, on each of its CPUs and on any (kernels/multiq.pick, share);
    # each queue draws its own seeded stream (kernels/rng.py: the queue in the key's high word)
    cpus = [{c.cpu for c in mc.contexts} for mc in machs]
    for q, mc in enumerate(machs):
        for cpu in cpus[q]:
            mc.m[mc.m[L.H_CPUQ] + cpu] = sum(1 << o for o in range(len(machs))
                                             if o != q and cpu in cpus[o])
            mc.m[L.H_QSHARE] |= mc.m[mc.m[L.H_CPUQ] + cpu]
        mc.m[L.H_SEED] += q << 32
    off = np.concatenate([[0], np.cumsum([len(mc.m) for mc in machs])]).astype(np.int64)
    big = np.concatenate([mc.m for mc in machs])
    for q, mc in enumerate(machs):
        mc.m = big[off[q]:off[q + 1]]
    return big, off


def _sum_tree(items):
    """Sum dicts of numbers (nested) key by key; booleans combine with all()."""
    first = items[0]
    if isinstance(first, dict):
        return {k: _sum_tree([it[k] for it in items]) for k in first}
    if isinstance(first, bool):
        return all(items)
    return sum(items)


def combine(cfg, results):
    """One Result for the whole machine: labels ``q<i>/<ctx>``, op tables stacked, counters
    and books summed; the per-queue results are kept in ``queues``."""
    if len(results) == 1:
        return results[0]
    r0 = results[0]
    labels = tuple(f"q{q}/{lab}" for q, r in enumerate(results) for lab in r.labels)
    label_cpu = tuple(c for r in results for c in r.label_cpu)
    stack = lambda name: np.concatenate([getattr(r, name) for r in results])  # noqa: E731
    occ = pd.concat([r.occupancy for r in results]).groupby("time_us", as_index=False).sum()
    inv = _sum_tree([r.invariants for r in results])
    inv["per_queue"] = [r.invariants for r in results]
    res = Result(cfg, labels, label_cpu, r0.hz, r0.window_s, stack("busy"), stack("idle"),
                 stack("op_calls"), stack("op_bytes"), stack("op_cycles"),
                 _sum_tree([r.counters for r in results]),
                 _sum_tree([r.totals for r in results]),
                 sum(r.latency_hist for r in results),
                 occ, inv, r0.profile_name, dict(r0.extra), queues=list(results))
    return res
