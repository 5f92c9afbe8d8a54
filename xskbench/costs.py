"""Cost profiles: cycles per call and per byte for every op, per testbed.

A profile (``data/costs/<testbed>.json``) is written only by :mod:`xskbench.calibrate`; it
records the frequency, each op's costs with where they come from, the rows it was fitted to
and a hash of the fit inputs, so an edit by hand is detected.
"""
import csv
import hashlib
import json
from dataclasses import dataclass

import numpy as np
import yaml

from . import ops
from .kernels.layout import MC
from .paths import COSTS_DIR, DATA_DIR

PRIORS = DATA_DIR / "op_priors.csv"
BENCH = DATA_DIR / "measurements" / "microbench.json"   # microbenchmarks of this machine


@dataclass(frozen=True)
class Profile:
    name: str
    cpu_ghz: float
    call: dict      # op name -> cycles per call
    byte: dict      # op name -> cycles per byte
    source: dict    # op name -> provenance
    meta: dict      # the whole JSON document

    def arrays(self, scale=1.0):
        """The cost arrays the kernels take: int64 millicycles per call and per byte."""
        k = MC * scale
        cc = np.array([round(self.call.get(n, 0.0) * k) for n in ops.NAMES], dtype=np.int64)
        cb = np.array([round(self.byte.get(n, 0.0) * k) for n in ops.NAMES], dtype=np.int64)
        return cc, cb


def read_priors(path=PRIORS, bench_path=BENCH, here=False):
    """op -> (call, byte, source, measured parts) from the prior table (literature values and
    stated estimates). A ``bench`` entry (``key.path`` into data/measurements/microbench.json,
    ``*factor`` optional) names a microbenchmark of *this* machine, a VM: a ``bytes_per_cycle``
    gives the per-byte cost 1/value, anything else cycles per call. It replaces the estimate
    only with ``here`` (a profile of this machine, real_calibrate), where that part is then
    measured (held as firmly as a row); the published testbeds are bare metal (a syscall costs
    620 cycles here, several times bare metal), so for them it is only noted in the source.
    An entry with a ``source`` is a cited bare-metal measurement (the SLUB pair): it is held
    firmly for every testbed."""
    with open(path, newline="") as f:
        rows = [r for r in csv.DictReader(f) if r["op"] and not r["op"].startswith("#")]
    unknown = sorted({r["op"] for r in rows} - set(ops.NAMES))
    if unknown:
        raise ValueError(f"{path.name}: unknown ops {unknown}")
    bench = json.loads(bench_path.read_text())["results"] if bench_path.exists() else {}
    out = {}
    for r in rows:
        call, byte, source, measured = float(r["call"]), float(r["byte"]), r["source"], ()
        if r.get("bench") and (got := _bench_value(bench, r["bench"])) is not None:
            value, per_byte = got
            seen = f"microbench.json {r['bench']} = {value:.4g}"
            cited = bench[r["bench"].split(".")[0]].get("source")
            if not (cited or here):
                source += f"; this VM measured {seen} (not a bare-metal prior)"
            else:
                if per_byte:
                    byte, measured = 1.0 / value, ("byte",)
                else:
                    call, measured = value, ("call",)
                source = (f"cited bare-metal measurement: {seen} ({cited[:60]})" if cited
                          else f"measured here: {seen}") + f" (was: {source})"
        out[r["op"]] = (call, byte, source, measured)
    return {o: out[o] for o in ops.NAMES if o in out}  # in op order, as the cost arrays


def _bench_value(bench, spec):
    """(value, is it bytes per cycle) of ``key.path[*factor]`` in the microbenchmarks, or None."""
    path, _, factor = spec.partition("*")
    node = bench
    for key in path.split("."):
        if not isinstance(node, dict) or key not in node:
            return None
        node = node[key]
    per_byte = path.endswith("bytes_per_cycle")
    return float(node) * (float(factor) if factor and not per_byte else 1.0), per_byte


def inputs_hash(doc):
    """Hash of what a fit consumed (priors, rows, op costs) — a hand edit changes it."""
    body = {k: doc[k] for k in ("testbed", "cpu_ghz", "ops", "fit_rows")}
    return hashlib.sha256(json.dumps(body, sort_keys=True).encode()).hexdigest()


_PARSED = {}  # path -> ((mtime_ns, size), parsed): a widget change reruns without re-parsing


def _parsed(path, parse):
    """``parse(text)`` of ``path``, kept while the file is unchanged (calibrate rewrites it)."""
    st = path.stat()
    key = (st.st_mtime_ns, st.st_size)
    hit = _PARSED.get(path)
    if hit is None or hit[0] != key:
        hit = _PARSED[path] = (key, parse(path.read_text()))
    return hit[1]


def reference_testbed(device):
    """The testbed a device's runs use when the config names none (data/testbeds.yaml)."""
    beds = _parsed(DATA_DIR / "testbeds.yaml", yaml.safe_load)
    for name, spec in beds.items():
        if device in spec.get("reference_for", ()):
            return name
    return "default"


def for_config(cfg):
    """The profile a run of ``cfg`` uses."""
    return load(cfg.testbed.profile or reference_testbed(cfg.device))


def load(name):
    path = COSTS_DIR / f"{name}.json"
    if not path.exists():
        have = ", ".join(sorted(p.stem for p in COSTS_DIR.glob("*.json"))) or "none"
        raise ValueError(f"testbed.profile={name!r}: no cost profile {path.name}; have: {have}")
    return _parsed(path, lambda text: _profile(name, path, json.loads(text)))


def _profile(name, path, doc):
    if doc.get("inputs_hash") != inputs_hash(doc):
        raise ValueError(f"cost profile {path.name} was edited by hand (its hash does not "
                         f"match); rerun `xskbench calibrate`")
    missing = [n for n in ops.NAMES if n not in doc["ops"]]
    if missing:  # fitted before these ops existed: its scenarios' counts are stale too
        raise ValueError(f"cost profile {path.name} lacks ops {missing}; rerun calibrate")
    return Profile(name, float(doc["cpu_ghz"]),
                   {k: v["call"] for k, v in doc["ops"].items()},
                   {k: v["byte"] for k, v in doc["ops"].items()},
                   {k: v["source"] for k, v in doc["ops"].items()}, doc)
