"""Builds the arena for a run: the parts every device has (xsk rings, UMEM, contexts,
counters, time series) from a config. Device modules add their own objects and slots.
"""
from dataclasses import dataclass

import numpy as np

from . import faults, ops, stats
from .kernels import layout as L
from .kernels.afxdp import app_fill
from .kernels.engine import wake
from .kernels.xsk_ring import NEED_WAKEUP, R_FLAGS, ring_init, ring_words
from .umem import descs_per_packet, rx_frame_size

TS_POINTS = 200  # ring-occupancy samples per run: memory stays flat however long the run
RING_NAMES = ("fill", "completion", "rx", "tx")
SOFTIRQ_RESTARTS = 10  # MAX_SOFTIRQ_RESTART in kernel/softirq.c


@dataclass(frozen=True)
class Context:
    """An execution context: who runs, where, and which labels its cycles go to."""

    name: str            # label of its cycles ("app", "napi_tx", "vhost", ...)
    cpu: int
    softirq: bool = False
    ksoftirqd: str = ""  # label used once its softirq work moves to ksoftirqd
    host: bool = False   # the device's backend / peer side (faults.stall_context = "host")


@dataclass
class Machine:
    m: np.ndarray
    arena: L.Arena
    labels: tuple
    label_cpu: tuple
    contexts: tuple
    hz: float
    rings: dict

    def label(self, name):
        return self.labels.index(name)


def start_index(seed):
    """Ring indices start near the u32 wrap, so every run exercises the wrap-around."""
    return (2**32 - 1024 * (1 + seed % 7)) & L.M32


def build(cfg, hz, contexts, extra_labels=None, dev_words=None):
    """Allocate the core of the arena and fill the core header slots.

    ``contexts``: Context list (index = context id). ``extra_labels``: label -> CPU for labels
    charged only by switching (e.g. {"sys": app_cpu} for the app's syscalls).
    ``dev_words``: name -> words the device needs, allocated here so one arena holds all.
    """
    x, w = cfg.xsk, cfg.workload
    label_cpu = {}
    for c in contexts:
        for name in (c.name, c.ksoftirqd):
            if name:
                label_cpu.setdefault(name, c.cpu)
    for name, cpu in (extra_labels or {}).items():
        label_cpu.setdefault(name, cpu)
    labels = list(label_cpu)
    assert len(labels) <= L.LOG_LABEL_LIMIT, "more labels than a quantum log entry holds"
    a = L.Arena()
    nl, no, ns, ncpu = len(labels), ops.N_OPS, stats.N_STATS, max(c.cpu for c in contexts) + 1
    off = {
        L.H_CLK: a.alloc("clk", ncpu), L.H_CTX: a.alloc("ctx", len(contexts) * L.CX_N),
        L.H_OPS: a.alloc("ops", nl * no), L.H_OPB: a.alloc("opb", nl * no),
        L.H_BUSY: a.alloc("busy", nl), L.H_CNT: a.alloc("cnt", ns),
        L.H_IDLE: a.alloc("idle", nl), L.H_BASE_IDLE: a.alloc("base_idle", nl),
        L.H_OVER: a.alloc("over", nl), L.H_QBUSY0: a.alloc("qbusy0", nl),
        L.H_BASE_LAT: a.alloc("base_lat", L.LAT_BINS), L.H_CPULAB: a.alloc("cpulab", ncpu),
        L.H_CPULAST: a.alloc("cpulast", ncpu), L.H_CPUQ: a.alloc("cpuq", ncpu),
        L.H_BASE_OPS: a.alloc("base_ops", nl * no), L.H_BASE_OPB: a.alloc("base_opb", nl * no),
        L.H_BASE_BUSY: a.alloc("base_busy", nl), L.H_BASE_CNT: a.alloc("base_cnt", ns),
        L.H_OWN: a.alloc("own", x.umem_frames), L.H_FTS: a.alloc("fts", x.umem_frames),
        L.H_FLEN: a.alloc("flen", x.umem_frames), L.H_APPSTK: a.alloc("appstk", x.umem_frames),
        L.H_POOL: a.alloc("pool", x.umem_frames), L.H_SCR: a.alloc("scr", L.SCR_WORDS),
        L.H_LAT: a.alloc("lat", L.LAT_BINS), L.H_QLOG: a.alloc("qlog", L.QLOG_LEN),
        L.H_IDLELOG: a.alloc("idlelog", len(contexts) * L.IDLELOG_WORDS),
        L.H_TS: a.alloc("ts", TS_POINTS * (1 + len(RING_NAMES))),
        L.H_TS_RINGS: a.alloc("ts_rings", len(RING_NAMES)),
    }
    sizes = {"fill": x.fill_size, "completion": x.comp_size, "rx": x.rx_size, "tx": x.tx_size}
    ring_slot = {"fill": L.H_FQ, "completion": L.H_CQ, "rx": L.H_RX, "tx": L.H_TX}
    rings = {n: a.alloc(f"ring_{n}", ring_words(sizes[n])) for n in RING_NAMES}
    dev = {n: a.alloc(n, words) for n, words in (dev_words or {}).items()}
    fault_off = a.alloc("faults", faults.words(TS_POINTS))
    m = a.build()
    for slot, o in off.items():
        m[slot] = o
    start = start_index(w.seed)
    for n, o in rings.items():
        ring_init(m, o, sizes[n], start)
        m[ring_slot[n]] = o
    if x.need_wakeup:  # "Tx needs to be explicitly woken up the first time" (xsk_bind)
        m[rings["tx"] + R_FLAGS] = NEED_WAKEUP
    for i, n in enumerate(RING_NAMES):
        m[m[L.H_TS_RINGS] + i] = rings[n]
    mc_per_s = hz * L.MC
    m[L.H_NCPU], m[L.H_NCTX], m[L.H_NLABEL] = ncpu, len(contexts), nl
    m[L.H_NOPS], m[L.H_NCNT] = no, ns
    # charges made before any quantum (a device's set-up) go to label 0 (engine.set_label)
    m[L.H_LOPS], m[L.H_LOPB], m[L.H_LBUSY] = m[L.H_OPS], m[L.H_OPB], m[L.H_BUSY]
    m[L.H_END] = round(w.duration_s * mc_per_s)
    m[L.H_WARM] = round(w.warmup_s * mc_per_s)
    m[L.H_NFRAMES], m[L.H_FRAME], m[L.H_HEADROOM] = x.umem_frames, x.frame_size, x.headroom
    m[L.H_FRAME_SHIFT] = x.frame_size.bit_length() - 1  # a power of two (its choices)
    m[L.H_BATCH], m[L.H_NEEDWAKE] = x.batch_size, int(x.need_wakeup)
    m[L.H_TXFULL_DROP] = int(x.tx_full == "drop")
    m[L.H_BUSYPOLL], m[L.H_BUSYBUDGET] = int(x.busy_poll), x.busy_budget
    m[L.H_TXCSUM] = ("none", "app", "offload").index(x.tx_csum)
    m[L.H_ZC] = int(cfg.mode == "zerocopy")
    m[L.H_WORKLOAD] = L.WORKLOADS.index(w.kind)
    m[L.H_PKTLEN] = w.packet_size
    m[L.H_SEGLEN] = rx_frame_size(x)
    m[L.H_NSEG] = descs_per_packet(x, w.packet_size)
    m[L.H_GAP] = 0 if w.rate_pps is None else round(mc_per_s / w.rate_pps)
    m[L.H_ARR_END] = m[L.H_END]
    m[L.H_TS_CAP], m[L.H_TS_NRINGS] = TS_POINTS, len(RING_NAMES)
    m[L.H_TS_DT] = max(1, m[L.H_END] // TS_POINTS)
    m[L.H_SOFT_LIMIT] = SOFTIRQ_RESTARTS
    m[L.H_SNAP_DONE] = int(m[L.H_WARM] == 0)
    m[L.H_SEED] = w.seed  # the key of the arena's stream (kernels/rng.py; queues.arenas)
    m[L.H_JITTER_PPM] = round(cfg.testbed.jitter * 1e6)
    m[L.H_EXT_HZN] = L.INF  # no other queue until kernels/multiq.py says so
    m[L.H_CAND_C] = L.STALE  # kernels/multiq.pick finds its candidate
    for i, c in enumerate(contexts):
        base = m[L.H_CTX] + i * L.CX_N
        m[base + L.CX_CPU] = c.cpu
        m[base + L.CX_PRIO] = L.PRIO_SOFTIRQ if c.softirq else L.PRIO_THREAD
        m[base + L.CX_LABEL] = labels.index(c.name)
        m[base + L.CX_KLABEL] = labels.index(c.ksoftirqd) if c.softirq and c.ksoftirqd else -1
        m[base + L.CX_READY] = L.INF
        m[base + L.CX_WATCH] = -1
    faults.install(m, fault_off, cfg, contexts, mc_per_s)
    n, stk, own = x.umem_frames, m[L.H_APPSTK], m[L.H_OWN]
    m[stk:stk + n] = np.arange(n) * x.frame_size  # every frame starts with the application
    m[own:own + n] = L.OWN_APP
    m[L.H_APPSTK_N] = n
    return Machine(m, a, tuple(labels), tuple(label_cpu.values()), tuple(contexts), hz,
                   {**rings, **dev})


def start_app(mach, cfg, cc, cb, app_ctx, rx_ctx):
    """xdpsock's start: the app spins from t=0; for receive workloads it first populates the
    fill ring and the driver's first poll (``rx_ctx``) posts RX buffers; txonly sees no
    arrivals."""
    m = mach.m
    wake(m, app_ctx, 0)
    if cfg.workload.kind == "txonly":
        m[L.H_ARR_END] = 0
    else:
        app_fill(m, cc, cb)
        wake(m, rx_ctx, 0)
