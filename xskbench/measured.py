"""Measured points (data/measurements/*.json, written by ``xskbench measure``) read as rows
for the calibration: each point's emulated counterpart, the measuring machine's clock, and
one row per point with a rate to compare or fit."""
import json
from pathlib import Path

from . import costs
from .devices import DEVICES
from .loading import read_text
from .sections.afxdp import XskConfig

TESTBED = "this-machine"  # the default name of a profile fitted to one grid alone
MEASURED_BED = "this-vm"  # the testbed (data/testbeds.yaml) of the grids in data/measurements
TOLERANCE = 0.15      # relative; the emulation has no cache-footprint effect of ring size
DURATION_S = 0.004    # emulated time of each counterpart run (as the published scenarios)
_XSK_FIELDS = ("fill_size", "comp_size", "rx_size", "tx_size", "frame_size", "headroom",
               "umem_frames", "need_wakeup", "busy_poll", "busy_budget", "batch_size")


# Costs of this machine, held at its microbenchmarks (data/measurements/microbench.json) for
# the rows measured here instead of being fitted, so that these rows cannot bend the shared
# bare-metal parameters through them: this machine is a VM, whose syscall entry/exit (getppid
# round trip, ~620 cycles) pays for paravirtualised mitigations, and whose memcpy was measured
# (1500 B, cache hot: ~10.9 bytes/cycle). "op" is a per-call cost, "op:byte" a per-byte one
# (the copy_byte tie's ops: one memcpy per byte). A measured row's equation carries them as
# known cycles; what its rows need beyond them is left to the other ops (and the residuals).
MACHINE_OPS = {"__sys_sendto": "syscall_getppid.cycles",
               "__sys_recvfrom": "syscall_getppid.cycles",
               **{f"{op}:byte": "memcpy.1500B.bytes_per_cycle"
                  for op in ("memcpy", "skb_store_bits", "__xsk_rcv", "ip_generic_getfrag")}}


def machine_ops(bench_path=None):
    """op (or op:byte) -> cycles measured on this machine (MACHINE_OPS); {} without the file."""
    path = bench_path or costs.BENCH
    if not path.exists():
        return {}
    bench = json.loads(path.read_text())["results"]
    out = {}
    for op, spec in MACHINE_OPS.items():
        got = costs._bench_value(bench, spec)
        if got is not None and got[1] == op.endswith(":byte"):
            out[op] = 1.0 / float(got[0]) if got[1] else float(got[0])
    return out


def with_machine_ops(prof, fixed, ratio=1.0):
    """``prof`` with the measured machine's own costs ``fixed`` (MACHINE_OPS' keys), measured
    in cycles of its nominal clock, run at ``ratio`` times that clock (a fitted clock)."""
    call = {**prof.call, **{o: c * ratio for o, c in fixed.items() if ":" not in o}}
    byte = {**prof.byte, **{o.split(":")[0]: c * ratio for o, c in fixed.items() if ":" in o}}
    return costs.Profile(prof.name, prof.cpu_ghz, call, byte,
                         {**prof.source, **{o.split(":")[0]: "measured here (MACHINE_OPS)"
                                            for o in fixed}}, prof.meta)


MAX_SWEEP_BYTES = 64 << 20  # a stored sweep of a few hundred points is well under 1 MB

# What fit() reads of each point: (path in the point, the type it must have)
_POINT_SCHEMA = (("result", dict), ("result.config", dict), ("result.config.device", str),
                 ("result.config.mode", str), ("result.config.workload", dict),
                 ("result.config.workload.kind", str),
                 ("result.config.workload.packet_size", int), ("result.config.xsk", dict),
                 ("result.pps", dict))


def load(path):
    """A stored sweep (the JSON written by ``xskbench measure --sweep``); ValueError (one
    line naming the file and the first bad entry) if it is not one."""
    text = read_text(path, max_bytes=MAX_SWEEP_BYTES)
    try:
        doc = json.loads(text)
    except RecursionError:
        raise ValueError(f"{path}: malformed JSON: nested too deeply") from None
    except ValueError as err:
        raise ValueError(f"{path}: malformed JSON: {' '.join(str(err).split())[:200]}") from None
    if not isinstance(doc, dict) or not isinstance(doc.get("points"), list):
        raise ValueError(f"{path}: not a measurement sweep (no 'points' list)")
    for i, point in enumerate(doc["points"]):
        problem = _point_problem(point)
        if problem:
            raise ValueError(f"{path}: points[{i}]: {problem}; not a measurement sweep of "
                             "`xskbench measure --sweep`")
    doc.setdefault("name", Path(path).stem)
    if not isinstance(doc["name"], str):
        raise ValueError(f"{path}: name must be a string")
    return doc


def _point_problem(point):
    """What is missing or of the wrong type in one stored point (None if it is usable)."""
    if not isinstance(point, dict):
        return f"a {type(point).__name__}, not a mapping"
    for where, kind in _POINT_SCHEMA:
        value = point
        for key in where.split("."):
            if not isinstance(value, dict) or key not in value:
                return f"missing {where}"
            value = value[key]
        if not isinstance(value, kind) or isinstance(value, bool):
            return f"{where} is a {type(value).__name__}, not a {kind.__name__}"
    for where in ("result.config.real", "result.cpu_per_cpu"):  # optional, but mappings
        section, _, key = where.rpartition(".")
        holder = point["result"]["config"] if section == "result.config" else point["result"]
        if key in holder and not isinstance(holder[key], dict):
            return f"{where} is a {type(holder[key]).__name__}, not a dict"
    pps = point["result"]["pps"]
    if not pps or not all(isinstance(v, int | float) and not isinstance(v, bool)
                          for v in pps.values()):
        return "result.pps must map directions to numbers"
    return None


def counterpart(mcfg):
    """The emulated config (a dict for RunConfig.from_dict) of a measured config, or a
    string saying why there is none (the measured device's ``counterpart.py``)."""
    if mcfg["device"] not in DEVICES:
        return f"{mcfg['device']}: not an emulated device"
    return DEVICES[mcfg["device"]].counterpart(mcfg)


def xsk_fields(mcfg):
    """The measured config's xsk settings the emulation has (busy-poll from ``real.wait``)."""
    have = set(XskConfig.__dataclass_fields__)
    xsk = {k: v for k, v in mcfg["xsk"].items() if k in _XSK_FIELDS and k in have}
    xsk["busy_poll"] = mcfg.get("real", {}).get("wait") == "busy-poll" or bool(xsk.get("busy_poll"))
    return xsk


def _cpu_ghz(doc):
    """(GHz, where it comes from): the measurement's, else this machine's if the measured CPU
    model is this one's, else 3 GHz."""
    real = doc["points"][0]["result"].get("real", {}) if doc["points"] else {}
    if real.get("cpu_mhz"):
        return float(real["cpu_mhz"]) / 1000.0, "measurement"
    try:
        info = Path("/proc/cpuinfo").read_text().splitlines()
        model = next(ln.split(":", 1)[1].strip() for ln in info if ln.startswith("model name"))
        mhz = next(float(ln.split(":", 1)[1]) for ln in info if ln.startswith("cpu MHz"))
        if model == real.get("cpu_model"):
            return round(mhz / 1000.0, 3), "/proc/cpuinfo (same CPU model as measured)"
    except (OSError, StopIteration, ValueError):
        pass
    return 3.0, "assumed (the measurement names no frequency)"


def _label(point):
    v = point.get("value")
    return f"{point.get('axis', 'point')}={str(v).lower() if isinstance(v, bool) else v}"


def rows(doc, cpu_ghz, tolerance=TOLERANCE):
    """(fit rows, skipped points with why): one row per distinct emulated configuration."""
    out, seen, skipped = [], {}, []
    fixed = machine_ops()
    for p in doc["points"]:
        res, label = p["result"], _label(p)
        cfg = counterpart(res["config"])
        if isinstance(cfg, str):
            skipped.append((label, cfg))
            continue
        key = json.dumps(cfg, sort_keys=True)
        if key in seen:
            skipped.append((label, f"same configuration as {seen[key]}"))
            continue
        rid = f"{doc['name']}:{label}"
        seen[key] = rid
        bott = res.get("bottleneck", "peer")
        cpus = cfg[cfg["device"]]
        cpu = cpus["app_cpu"] if bott == "app" else cpus["napi_cpu"]
        # the whole CPU's busy share (/proc/stat), as fitted so far; the measured contexts'
        # own share is Result.cpu_per_cpu (lower on a shared machine: cpu_other is the rest)
        busy = res.get("cpu_busy", res.get("cpu_per_cpu", {}))
        util = float(busy.get(f"cpu{cpu}", 100.0)) or 100.0
        out.append({"id": rid, "kind": "fit", "scenario": rid, "metric": "pps",
                    "context": f"cpu{cpu}", "rate": "", "value": str(max(res["pps"].values())),
                    "util": str(util), "unit": "pps", "tolerance": str(tolerance),
                    "config": cfg, "cpu_ghz": cpu_ghz, "testbed": MEASURED_BED,
                    "fixed": fixed, "point": p})
    return out, skipped
