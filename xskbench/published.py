"""The published data: rows (data/published.csv), scenarios (data/scenarios.yaml), testbeds
(data/testbeds.yaml), and how a row's metric is read off an emulated Result and compared.

Both the fit (calibrate.py) and the table (reproduce.py) read these; neither imports the other
for them.

Row kinds: ``fit`` rows enter the calibration; ``predict`` rows never do and depend on op costs
the fit did not tune to them; ``identity`` rows are compared but follow from another row by a
published identity (tx = rx, bps = pps × size, a bottleneck's 100 %) or restate a prior written
from the same source (their ``why`` column says which); ``derived`` rows are computed from
other rows; ``quoted`` numbers and raw ``sample``s are shown, not judged; ``compare`` rows
(measured points whose emulated counterpart is another device, calibrate.measured_rows) get an
error but are neither fitted nor judged.
"""
import csv
import json

import numpy as np
import yaml

from .config import RunConfig
from .paths import DATA_DIR

PUBLISHED = DATA_DIR / "published.csv"
JUDGED = ("fit", "predict", "identity", "derived")
SPREAD_SEEDS = 10   # runs behind an emulated run-to-run spread


def read_rows(path=PUBLISHED):
    with open(path, newline="") as f:
        return [r for r in csv.DictReader(f)]


def scenarios():
    return yaml.safe_load((DATA_DIR / "scenarios.yaml").read_text())


def testbeds():
    return yaml.safe_load((DATA_DIR / "testbeds.yaml").read_text())


def scenario_dict(name):
    """A scenario's config overrides as a fresh dict (without its testbed)."""
    d = json.loads(json.dumps(scenarios()[name]["config"]))
    d.pop("testbed", None)
    return d


def scenario_config(name):
    """A scenario's config, with its testbed's cost profile."""
    d = scenario_dict(name)
    d["testbed"] = {"profile": scenarios()[name]["testbed"]}
    return RunConfig.from_dict(d)


def _context_sum(res, ctx, table):
    """A label's value, or a CPU's (``cpuN``: the sum of the labels running there)."""
    if ctx in table:
        return table[ctx]
    return sum(v for i, (lab, v) in enumerate(table.items()) if f"cpu{res.label_cpu[i]}" == ctx)


def metric_value(row, run):
    """The emulated value of a published row's metric, in the row's unit. ``run(scenario,
    seed=None)`` returns a Result."""
    if not callable(run):  # a single Result serves every scenario
        res0 = run
        run = lambda sc, seed=None: res0  # noqa: E731
    metric, ctx, sc = row["metric"], row["context"], row["scenario"]
    if row["kind"] == "sample":  # sample i of a published series beside the run with seed i
        return max(run(sc, seed=int(row["id"].rsplit("-s", 1)[1])).pps.values())
    if metric == "pps_cv":
        xs = np.array([max(run(sc, seed=s).pps.values()) for s in range(1, SPREAD_SEEDS + 1)])
        return float(100.0 * xs.std(ddof=1) / xs.mean())
    if metric == "gain":  # this scenario's rate over the one named in ``context``, in %
        return 100.0 * (max(run(sc).pps.values()) / max(run(ctx).pps.values()) - 1.0)
    res = run(sc)
    if metric == "pps":
        return max(res.pps.values())
    if metric in ("pps_rx", "pps_tx", "bps_rx", "bps_tx"):
        kind, d = metric.split("_")
        return getattr(res, kind)[d]
    if metric == "cpu":
        return _context_sum(res, ctx, res.cpu)
    if metric == "share":  # context "label:op", "cpuN:op" or ":op": a perf-top share
        where, op = ctx.split(":")
        prof = res.profile(where or None)
        return float(prof.loc[prof.op == op, "share"].sum())
    if metric.startswith("testpmd:"):  # cumulative counters: the emulated window's own
        name = metric.split(":")[1]
        key = {"RX-packets": "rx_packets", "RX-bytes": "rx_bytes", "RX-missed": "rx_missed",
               "RX-errors": "rx_dropped", "RX-nombuf": "fill_ring_empty_descs",
               "TX-packets": "tx_packets", "TX-errors": "tx_errors", "TX-bytes": "tx_bytes"}
        return float(res.counters[key[name]])
    if metric == "rate":
        return float(res.config.workload.rate_pps or max(res.pps.values()))
    raise ValueError(f"published row {row['id']}: unknown metric {metric!r}")


def error_of(row, emulated):
    """Relative error for rates, absolute points for percentages."""
    published = float(row["value"])
    if row["unit"] == "%":
        return emulated - published
    return emulated / published - 1.0 if published else emulated
