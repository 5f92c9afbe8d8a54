"""What a run returns: rates, CPU per context and per CPU, counters named by the stats
table, latency, ring occupancy over time, an emulated perf-top profile and the books.
"""
import json
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from . import ops, stats
from .books import balance
from .config_dict import flatten
from .kernels import layout as L
from .machine import RING_NAMES
from .report import render
from .version import __version__

SATURATED_PCT = 90.0  # useful CPU % at which a context is taken to limit the rate


@dataclass
class Result:
    config: object
    labels: tuple
    label_cpu: tuple
    hz: float
    window_s: float
    busy: np.ndarray            # cycles per label in the window
    idle: np.ndarray            # of which in polls that moved nothing
    op_calls: np.ndarray        # label x op
    op_bytes: np.ndarray
    op_cycles: np.ndarray
    counters: dict              # window
    totals: dict                # whole run (what the books balance)
    latency_hist: np.ndarray
    occupancy: pd.DataFrame
    invariants: dict
    profile_name: str
    extra: dict = field(default_factory=dict)
    queues: list = field(default_factory=list)  # per-queue Results (mq.queues > 1)

    @property
    def seed(self):
        return self.config.workload.seed

    # --- rates and CPU ----------------------------------------------------------------
    @property
    def pps(self):
        return {"rx": self.counters["rx_packets"] / self.window_s,
                "tx": self.counters["tx_packets"] / self.window_s}

    @property
    def bps(self):
        return {"rx": 8 * self.counters["rx_bytes"] / self.window_s,
                "tx": 8 * self.counters["tx_bytes"] / self.window_s}

    @property
    def cpu(self):
        """Percent of one CPU each context label used in the window."""
        return {lab: float(100.0 * self.busy[i] / (self.window_s * self.hz))
                for i, lab in enumerate(self.labels)}

    @property
    def cpu_per_cpu(self):
        out = {}
        for lab, pct in self.cpu.items():
            cpu = self.label_cpu[self.labels.index(lab)]
            out[f"cpu{cpu}"] = out.get(f"cpu{cpu}", 0.0) + pct
        return out

    @property
    def idle_poll(self):
        """Percent of one CPU each label spent in polls that moved nothing (a PMD's idle
        cycles, as testpmd --record-core-cycles separates them)."""
        return {lab: float(100.0 * self.idle[i] / (self.window_s * self.hz))
                for i, lab in enumerate(self.labels)}

    @property
    def bottleneck(self):
        """The context doing the most useful work (busy minus empty polls): the one that
        limits the rate when it nears 100 %. A CPU that several queues' contexts share (one
        host core for all queues) is loaded by all of them: each counts with their sum."""
        load = dict(self.useful_cpu)
        if self.queues:
            per_cpu = self._useful_per_cpu()
            for lab, cpu in zip(self.labels, self.label_cpu, strict=True):
                if len({other.split("/")[0] for other in self._on_cpu(cpu)}) > 1:
                    load[lab] = per_cpu[cpu]
        return max(load, key=load.get)

    @property
    def useful_cpu(self):
        """CPU % per label minus its empty polls: the work that moved packets."""
        return {lab: self.cpu[lab] - self.idle_poll[lab] for lab in self.labels}

    @property
    def saturated(self):
        """Whether the bottleneck context is (nearly) out of CPU — its CPU's useful work,
        whoever else runs there, nears 100 % — else the offered load is simply served and
        nothing limits it."""
        cpu = self.label_cpu[self.labels.index(self.bottleneck)]
        return self._useful_per_cpu()[cpu] >= SATURATED_PCT

    def _on_cpu(self, cpu):
        return [lab for lab, c in zip(self.labels, self.label_cpu, strict=True) if c == cpu]

    def _useful_per_cpu(self):
        useful = self.useful_cpu
        return {cpu: sum(useful[lab] for lab in self._on_cpu(cpu))
                for cpu in set(self.label_cpu)}

    @property
    def warnings(self):
        """Why the numbers may mislead: a run that moved no packet in its window says why."""
        c = self.counters
        if c["rx_packets"] + c["tx_packets"]:
            return []
        w = self.config.workload
        window = f"{self.window_s * 1e3:.3g} ms window"
        if w.rate_pps is not None and w.rate_pps * self.window_s < 1:
            return [f"no packet in the {window}: workload.rate_pps={w.rate_pps:g} offers "
                    f"{w.rate_pps * self.window_s:.2g} packets in it; raise the rate or "
                    "workload.duration_s"]
        busy = sorted((n for n in stats.NAMES if c[n]), key=lambda n: -c[n])[:3]
        seen = ", ".join(f"{n}={c[n]}" for n in busy) or "every counter is 0"
        return [f"no packet in the {window} ({seen}): nothing completed; check ring sizes "
                "against batch and burst sizes"]

    @property
    def latency_us(self):
        h = self.latency_hist
        n = h.sum()
        if n == 0:
            return {"p50": None, "p99": None}
        cdf = np.cumsum(h) / n
        # bin b holds cycles in [2^((b-1)/4), 2^(b/4)); report its geometric middle
        mid = lambda b: 2 ** ((b - 0.5) / 4) if b else 0.5  # noqa: E731
        return {q: mid(int(np.searchsorted(cdf, p))) / self.hz * 1e6
                for q, p in (("p50", 0.5), ("p99", 0.99))}

    def profile(self, context=None):
        """perf top: share of cycles per op — over every context, over one context label,
        over one CPU (``"cpuN"``: what ``perf top -C N`` shows) or over one queue (``"qN"``)."""
        sel = [i for i, lab in enumerate(self.labels)
               if context is None or lab == context or f"cpu{self.label_cpu[i]}" == context
               or lab.startswith(f"{context}/")]
        denom = self.op_cycles[sel].sum()
        rows = []
        for i in sel:
            for j, name in enumerate(ops.NAMES):
                cyc = self.op_cycles[i, j]
                if cyc > 0:
                    rows.append({"context": self.labels[i], "op": name,
                                 "calls": int(self.op_calls[i, j]),
                                 "cycles": float(cyc), "share": 100.0 * cyc / denom})
        df = pd.DataFrame(rows, columns=["context", "op", "calls", "cycles", "share"])
        return df.sort_values("share", ascending=False, kind="stable").reset_index(drop=True)

    # --- tidy output ----------------------------------------------------------------------
    def to_frame(self):
        """One row per context: the run's config columns, its rates and the context's CPU."""
        return pd.DataFrame(self.rows())

    def rows(self):
        """:meth:`to_frame`'s rows as dicts (a sweep makes one table of many runs' rows:
        a frame per run cost more than a short run)."""
        cfg = flatten(self.config.to_dict())
        pps, cpu = self.pps, self.cpu
        pkts = max(self.counters["rx_packets"] + self.counters["tx_packets"], 1)
        idle = self.idle_poll
        return [{**cfg, "context": lab, "cpu": self.label_cpu[i], "cpu_pct": cpu[lab],
                 "idle_poll_pct": idle[lab],
                 "cycles_per_pkt": self.busy[i] / pkts, "pps_rx": pps["rx"],
                 "pps_tx": pps["tx"], "bottleneck": lab == self.bottleneck}
                for i, lab in enumerate(self.labels)]

    def to_json(self):
        r = _round
        lat = self.latency_us
        return {
            "version": __version__, "seed": self.seed,
            "config": self.config.to_dict(), "profile_name": self.profile_name,
            "window_s": r(self.window_s),
            "pps": {k: r(v) for k, v in self.pps.items()},
            "bps": {k: r(v) for k, v in self.bps.items()},
            "cpu": {k: r(v) for k, v in self.cpu.items()},
            "cpu_per_cpu": {k: r(v) for k, v in self.cpu_per_cpu.items()},
            "idle_poll": {k: r(v) for k, v in self.idle_poll.items()},
            "bottleneck": self.bottleneck, "saturated": self.saturated,
            "counters": self.counters,
            "latency_us": {k: None if v is None else r(v) for k, v in lat.items()},
            "profile": [{k: (r(v) if isinstance(v, float) else v) for k, v in row.items()}
                        for row in self.profile().head(30).to_dict("records")],
            "invariants": self.invariants, "warnings": self.warnings,
            **({"queues": [q.summary() for q in self.queues]} if self.queues else {}),
            **self.extra,
        }

    def summary(self):
        """Rates, CPU per context and the bottleneck: one queue's line in a multi-queue run."""
        r = _round
        return {"pps": {k: r(v) for k, v in self.pps.items()},
                "cpu": {k: r(v) for k, v in self.cpu.items()},
                "bottleneck": self.bottleneck, "saturated": self.saturated}

    def to_json_text(self):
        return json.dumps(self.to_json(), sort_keys=True, indent=1)

    @property
    def faults(self):
        """The fault windows with their recovery times, and notification counts (see
        xskbench/faults.py); None when the run had no fault."""
        return self.extra.get("faults")

    def report(self, style="xdpsock"):
        return render(self, style)


def _round(x):
    """Stable, readable numbers for JSON."""
    return float(f"{x:.6g}")


def collect(cfg, mach, profile, cc, cb, in_flight_dev, extra=None):
    """Read a finished arena into a Result (window = after warm-up) and check the books."""
    m, nl, no = mach.m, len(mach.labels), ops.N_OPS

    def window(slot, base, n):
        cur = m[m[slot]:m[slot] + n].astype(np.int64)
        return cur - m[m[base]:m[base] + n] if m[L.H_SNAP_DONE] and m[L.H_WARM] else cur

    calls = window(L.H_OPS, L.H_BASE_OPS, nl * no).reshape(nl, no)
    nbytes = window(L.H_OPB, L.H_BASE_OPB, nl * no).reshape(nl, no)
    cycles = (calls * cc[None, :] + nbytes * cb[None, :]) / L.MC
    over = m[m[L.H_OVER]:m[L.H_OVER] + nl]
    busy = (window(L.H_BUSY, L.H_BASE_BUSY, nl) - over) / L.MC
    idle = window(L.H_IDLE, L.H_BASE_IDLE, nl) / L.MC
    cnt = window(L.H_CNT, L.H_BASE_CNT, stats.N_STATS)
    counters = {n: int(cnt[i]) for i, n in enumerate(stats.NAMES)}
    tot = m[m[L.H_CNT]:m[L.H_CNT] + stats.N_STATS]
    totals = {n: int(tot[i]) for i, n in enumerate(stats.NAMES)}
    window_s = (m[L.H_END] - (m[L.H_WARM] if m[L.H_SNAP_DONE] else 0)) / (mach.hz * L.MC)
    nr = int(m[L.H_TS_NRINGS])
    ts = m[m[L.H_TS]:m[L.H_TS] + int(m[L.H_TS_N]) * (1 + nr)].reshape(-1, 1 + nr)
    occ = pd.DataFrame({"time_us": ts[:, 0] / (mach.hz * L.MC) * 1e6,
                        **{n: ts[:, 1 + i] for i, n in enumerate(RING_NAMES)}})
    lat = window(L.H_LAT, L.H_BASE_LAT, L.LAT_BINS)
    inv = balance(mach, totals, in_flight_dev)
    return Result(cfg, mach.labels, mach.label_cpu, mach.hz, window_s, busy, idle, calls, nbytes,
                  cycles, counters, totals, lat, occ, inv, profile.name, extra or {})
