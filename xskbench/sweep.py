"""Parameter sweeps: many configurations on ``dask.distributed``, with a Parquet result cache.

``sweep(base, grid)`` expands ``grid`` around ``base`` into configurations, runs each one
(serially, on a local cluster or on an existing Dask scheduler) and returns one tidy frame,
one row per configuration x context (:meth:`Result.to_frame`), plus ``config_hash`` and
``error``.  A grid is one of

- ``{"xsk.batch_size": [16, 64], "null.napi_budget": [32, 64]}``: the cartesian product;
- ``{"sample": "lhs" | "random", "n": 50, "fields": [...], "seed": 1}``: a Latin-hypercube or
  uniform random sample inside the fields' metadata bounds (see :func:`sample_points`);
- ``[{"xsk.batch_size": 16}, {"mode": "copy"}, ...]``: explicit points.

It is the one sweep engine: :func:`points` gives a grid's RunConfigs, :func:`outcomes` a
runner's results for them in this process, :func:`each` is the loop (equal configs run once,
Ctrl-C stops it between two), :func:`one_at_a_time` builds sensitivity-style axes, and
``sweep(..., runner=...)`` runs another runner than the emulator (part of the cache key).

A configuration that cannot be built (an invalid combination) or that fails to run becomes
rows with ``error`` set; it never aborts the sweep.  A grid has at most :data:`MAX_POINTS`
points.  Results are cached under
``~/.cache/xskbench/sweeps/`` (one Parquet part per finished chunk) keyed by a hash of the
full config JSON, the xskbench version and the cost profile's ``inputs_hash``: a rerun
computes only what is new and an interrupted sweep resumes where it stopped.  A part that
does not match the result schema is moved to ``quarantine/`` and its configurations rerun.
"""
from __future__ import annotations

import hashlib
import itertools
import json
import logging
import math
import numbers
import os
import signal
import sys
import threading
import time
import types
import uuid
import warnings
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from . import __version__, costs
from .config import DEVICE_MODES, RunConfig, _one_line
from .config import full_dict as full
from .config_dict import apply as _apply
from .config_dict import field_of, flatten, normalise, path_types, paths, plain, unflatten
from .devices import DEVICES
from .estimate import sweep_seconds
from .fields import FieldInfo, iter_fields
from .loading import quote
from .run import run
from .sections import section_class

#: Default cache directory (``XSKBENCH_SWEEP_CACHE`` overrides it).
DEFAULT_CACHE = Path.home() / ".cache" / "xskbench" / "sweeps"

#: The columns :meth:`Result.to_frame` adds after the config, with their types; error rows
#: carry them empty.
RESULT_COLUMNS = {"context": "str", "cpu": "int", "cpu_pct": "float", "idle_poll_pct": "float",
                  "cycles_per_pkt": "float", "pps_rx": "float", "pps_tx": "float",
                  "bottleneck": "bool"}
_CACHE_FLAG = "_cacheable"
#: The most points a grid may expand to: each is a config dict in memory, planned and hashed
#: before the first run (a larger study is several sweeps).
MAX_POINTS = 100_000
POLL_S = 0.05  # how often a Dask sweep looks for finished chunks and Ctrl-C
_SENS_SKIP = ("workload.duration_s", "workload.warmup_s", "workload.seed")


# --- fields and paths -----------------------------------------------------------------------

def _all_modes() -> tuple[str, ...]:
    return tuple(dict.fromkeys(m for modes in DEVICE_MODES.values() for m in modes))


def _choices(path: str, info: FieldInfo | None) -> tuple | None:
    if info is None:
        return tuple(DEVICE_MODES) if path == "device" else _all_modes()
    if info.base is bool:
        return (False, True)
    return info.choices


def _column_types() -> dict[str, str]:
    return path_types() | RESULT_COLUMNS | {"config_hash": "str", "error": "str",
                                            _CACHE_FLAG: "bool"}


def _check_size(n: int, how: str) -> None:
    if n > MAX_POINTS:
        raise ValueError(f"grid: {how} = {n} points; allowed: at most {MAX_POINTS} per sweep "
                         "(split it, or sample it: sample: lhs, n: ...)")


def expand(grid: Any) -> list[dict[str, Any]]:
    """The points of a grid: a list of ``{path: value}`` changes to apply to the base."""
    if isinstance(grid, Mapping) and "sample" in grid:
        return sample_points(grid)
    if isinstance(grid, Mapping):
        if not grid:
            return [{}]
        axes = {}
        for path, values in grid.items():
            field_of(path)
            if isinstance(values, str) or not isinstance(values, Iterable):
                values = [values]
            values = list(itertools.islice(values, MAX_POINTS + 1))
            if not values:
                raise ValueError(f"grid: {path} has no values")
            axes[path] = values
        _check_size(math.prod(len(v) for v in axes.values()),
                    " x ".join(str(len(v)) for v in axes.values()))
        return [dict(zip(axes, combo, strict=True)) for combo in itertools.product(*axes.values())]
    if isinstance(grid, list | tuple):
        _check_size(len(grid), "explicit")
        points = []
        for i, point in enumerate(grid):
            if not isinstance(point, Mapping):
                raise ValueError(f"grid point {i} must be a mapping of field -> value")
            for path in point:
                field_of(path)
            points.append(dict(point))
        return points
    raise ValueError("grid must be a mapping (field -> values, or a sample spec) or a list of "
                     f"points, not {type(grid).__name__}")


# --- sampling -------------------------------------------------------------------------------

@dataclass(frozen=True)
class _Domain:
    """Where a sampled field's values come from: ``u`` in [0, 1) -> a value."""

    path: str
    kind: str                  # "choices", "int" or "float"
    values: tuple = ()         # for "choices" (pow2 fields: the powers of two in bounds)
    lo: float = 0.0
    hi: float = 0.0
    log: bool = False

    def value(self, u: float) -> Any:
        if self.kind == "choices":
            return self.values[min(int(u * len(self.values)), len(self.values) - 1)]
        if self.kind == "int":
            if self.log:
                v = math.floor(math.exp(math.log(self.lo)
                                        + u * (math.log(self.hi + 1) - math.log(self.lo))))
            else:
                v = int(self.lo) + math.floor(u * (self.hi - self.lo + 1))
            return int(min(max(v, self.lo), self.hi))
        if self.log:
            v = math.exp(math.log(self.lo) + u * (math.log(self.hi) - math.log(self.lo)))
        else:
            v = self.lo + u * (self.hi - self.lo)
        return float(min(max(v, self.lo), self.hi))


def _domain(path: str, spec: Any) -> _Domain:
    info = field_of(path)
    spec = {} if spec is None else spec
    if not isinstance(spec, Mapping) or set(spec) - {"lo", "hi", "choices", "log"}:
        raise ValueError(f"sample: {path}: expected null or a mapping with lo/hi/log or "
                         f"choices, got {spec!r}")
    if "choices" in spec:
        if not isinstance(spec["choices"], list | tuple):
            raise ValueError(f"sample: {path}: choices must be a list")
        values = [normalise(path, v) for v in spec["choices"]]
        if not values:
            raise ValueError(f"sample: {path}: empty choices")
        return _Domain(path, "choices", tuple(values))
    choices = _choices(path, info)
    if choices and not (set(spec) & {"lo", "hi"}):
        return _Domain(path, "choices", tuple(choices))
    if info is None or info.base not in (int, float):
        raise ValueError(f"sample: {path} is not numeric: give its choices")
    lo = spec.get("lo", info.lo)
    hi = spec.get("hi", info.hi)
    if lo is None or hi is None:
        raise ValueError(f"sample: {path} has no bounds in its metadata: give lo and hi")
    lo, hi = float(normalise(path, lo)), float(normalise(path, hi))
    if lo > hi:
        raise ValueError(f"sample: {path}: lo={lo:g} > hi={hi:g}")
    if info.pow2:
        exps = range(math.ceil(math.log2(max(lo, 1))), math.floor(math.log2(hi)) + 1)
        values = tuple(2 ** e for e in exps)
        if not values:
            raise ValueError(f"sample: {path}: no power of two in [{lo:g}, {hi:g}]")
        return _Domain(path, "choices", values)
    if info.choices:  # numeric choices narrowed by lo/hi
        values = tuple(c for c in info.choices if lo <= c <= hi)
        if not values:
            raise ValueError(f"sample: {path}: no choice in [{lo:g}, {hi:g}]")
        return _Domain(path, "choices", values)
    log = bool(spec.get("log", lo > 0 and hi / lo >= 100))
    if log and lo <= 0:
        raise ValueError(f"sample: {path}: log sampling needs lo > 0")
    kind = "int" if info.base is int else "float"
    if kind == "int":
        lo, hi = float(math.ceil(lo)), float(math.floor(hi))
    return _Domain(path, kind, (), lo, hi, log)


def sample_points(spec: Mapping[str, Any]) -> list[dict[str, Any]]:
    """Random (``"random"``) or Latin-hypercube (``"lhs"``) sample of ``spec["n"]`` points.

    ``spec["fields"]`` lists field paths, or maps each to ``null`` (its metadata bounds),
    ``{"lo": .., "hi": .., "log": bool}`` (narrower bounds) or ``{"choices": [...]}``.
    Choice and bool fields sample their choices, pow2 fields sample the powers of two in
    bounds, ints and floats are uniform (log-uniform when ``lo > 0`` and the bounds span two
    decades or more).  An optional field is never None unless None is one of its listed
    choices.  The same ``seed`` (default 0) gives the same points.
    """
    known = {"sample", "n", "fields", "seed"}
    if set(spec) - known:
        raise ValueError(f"sample: unknown keys {sorted(set(spec) - known)}; "
                         f"allowed: {sorted(known)}")
    method = spec.get("sample")
    if method not in ("random", "lhs"):
        raise ValueError(f"sample: {method!r}: must be 'random' or 'lhs'")
    n = plain(spec.get("n"))
    if not isinstance(n, int) or isinstance(n, bool) or not 1 <= n <= MAX_POINTS:
        raise ValueError(f"sample: n={quote(n)}: must be an int in [1, {MAX_POINTS}]")
    fields = spec.get("fields")
    if isinstance(fields, list | tuple):
        fields = dict.fromkeys(fields)
    if not isinstance(fields, Mapping) or not fields:
        raise ValueError("sample: fields must be a non-empty list of field paths or a mapping")
    seed = plain(spec.get("seed", 0))
    if not isinstance(seed, int) or isinstance(seed, bool) or seed < 0:
        raise ValueError(f"sample: seed={seed!r}: must be a non-negative int")
    domains = [_domain(path, sub) for path, sub in fields.items()]
    rng = np.random.default_rng(seed)
    columns = {}
    for d in domains:
        if method == "lhs":
            u = (rng.permutation(n) + rng.random(n)) / n
        else:
            u = rng.random(n)
        columns[d.path] = [d.value(float(x)) for x in u]
    return [{path: columns[path][i] for path in columns} for i in range(n)]


# --- planning: points -> tasks with their cache keys -----------------------------------------

@dataclass
class Task:
    """One configuration of a sweep."""

    point: int            # index in the (deduplicated) sweep order
    config: dict          # full nested config dict (normalised when valid)
    config_hash: str
    error: str | None     # set when the config itself is invalid
    device: str
    profile: str = ""     # "<cost profile>:<inputs_hash>" the run uses (part of the key)


def _profile_hash(cfg: RunConfig | None, nested: Mapping, memo: dict) -> str:
    """``"<profile>:<inputs_hash>"`` of the cost profile a run of the config uses (its
    testbed.profile, or the device's reference testbed), "" if there is none."""
    key = (nested["testbed"].get("profile"), nested.get("device"))
    if key not in memo:
        try:
            if cfg is not None and hasattr(costs, "for_config"):
                prof = costs.for_config(cfg)
            else:
                prof = costs.load(key[0])
            memo[key] = f"{prof.name}:{prof.meta['inputs_hash']}"
        except Exception:  # noqa: BLE001 - the run reports it as the config's error
            memo[key] = ""
    return memo[key]


def config_hash(config: Mapping, profile_hash: str, runner: str = "") -> str:
    """Cache key: the full config JSON + the xskbench version + the profile's inputs hash
    (+ the runner's name, for another runner than the emulator)."""
    key = {"config": config, "version": __version__, "costs": profile_hash}
    if runner:
        key["runner"] = runner
    body = json.dumps(key, sort_keys=True, default=repr)
    return hashlib.sha256(body.encode()).hexdigest()[:24]


def _task(base_nested: dict, changes: Mapping[str, Any], memo: dict, runner: str = "") -> Task:
    nested = _apply(base_nested, changes)
    cfg = None
    try:
        cfg = RunConfig.from_dict(nested)
        nested, error = cfg.to_dict(), None
    except (ValueError, TypeError) as err:  # TypeError: e.g. a list where a scalar belongs
        error = _one_line(err)
    profile = _profile_hash(cfg, nested, memo)
    return Task(-1, nested, config_hash(nested, profile, runner), error,
                str(nested.get("device")), profile)


def plan(base: Any, grid: Any, runner: str = "") -> list[Task]:
    """The sweep's configurations, deduplicated, in grid order (``runner``: the name of
    another runner than the emulator, part of the cache key)."""
    base_nested = full(base)
    memo: dict = {}
    tasks: list[Task] = []
    seen = set()
    for changes in expand(grid):
        task = _task(base_nested, changes, memo, runner)
        if task.config_hash in seen:
            continue
        seen.add(task.config_hash)
        task.point = len(tasks)
        tasks.append(task)
    return tasks


# --- rows and tables --------------------------------------------------------------------------

_PY_TYPES = {"bool": (bool,), "int": (numbers.Integral,), "float": (numbers.Real,),
             "str": (str,)}


def _cell(kind: str | None, value: Any) -> Any:
    """An error row's value, or None if it cannot live in the column's type."""
    value = plain(value)
    if value is None or kind is None:
        return value
    if kind != "bool" and isinstance(value, bool):
        return None
    if not isinstance(value, _PY_TYPES[kind]):
        return None
    return float(value) if kind == "float" else value


def _error_table(tasks: Iterable[Task], errors: Iterable[str], cacheable: bool):
    types = _column_types()
    cols = paths()
    rows = []
    for task, err in zip(tasks, errors, strict=True):
        flat = flatten(task.config)
        row = {c: _cell(types.get(c), flat.get(c)) for c in cols}
        row.update(dict.fromkeys(RESULT_COLUMNS))
        row.update({"config_hash": task.config_hash, "error": err, _CACHE_FLAG: cacheable})
        rows.append(row)
    return _canonical(_from_rows(rows))


def _from_rows(rows: list[dict]):
    import pyarrow as pa

    keys = list(dict.fromkeys(k for r in rows for k in r))
    return pa.Table.from_pydict({k: [r.get(k) for r in rows] for k in keys})


_ARROW = {"str": "string", "int": "int64", "float": "float64", "bool": "bool"}


def _canonical(table):
    """Known columns cast to their canonical Arrow types, schema metadata dropped, so that
    tables from any source (fresh, cached, error rows) concatenate to the same frame."""
    import pyarrow as pa

    types = _column_types()
    for i, name in enumerate(table.column_names):
        kind = types.get(name)
        if kind is None:
            continue
        target = pa.type_for_alias(_ARROW[kind])
        col = table.column(i)
        if col.type != target:
            try:
                table = table.set_column(i, name, col.cast(target))
            except (pa.ArrowInvalid, pa.ArrowNotImplementedError, pa.ArrowTypeError):
                pass
    return table.replace_schema_metadata(None)


def _emulator():
    return run


def _run_chunk(items: list[tuple[dict, str]], runner=None):
    """Worker side: run a chunk of valid configs -> one Arrow table (rows + error rows)."""
    run = runner or _emulator()
    frames, failed, failed_errors = [], [], []
    for item in items:
        _run_into(item, run, frames, failed, failed_errors)
    return _join(frames, failed, failed_errors)


def _run_into(item: tuple[dict, str], run, frames: list, failed: list, failed_errors: list):
    """Run one valid config: its rows go to ``frames`` (a Result's as dicts, made one table
    with the chunk's others by _join; another runner's as its frame), or its failure to the
    other two."""
    config, h = item
    try:
        cfg = RunConfig.from_dict(config)
        res = run(cfg)
        got = res.rows() if hasattr(res, "rows") else res.to_frame()
    except Exception as err:  # noqa: BLE001 - a failing config must not abort the sweep
        msg = _one_line(err)
        if not isinstance(err, ValueError):
            msg = f"{type(err).__name__}: {msg}"
        failed.append(Task(-1, config, h, msg, str(config.get("device"))))
        failed_errors.append(msg)
        return
    tag = {"config_hash": h, "error": None, _CACHE_FLAG: True}
    if isinstance(got, list):
        frames.append([{**row, **tag} for row in got])
        return
    for key, value in tag.items():
        got[key] = value
    frames.append(got)


def _join(frames, failed, failed_errors):
    """One Arrow table of a chunk: ``frames`` holds each run's rows (a Result's as a list of
    dicts, another runner's as its frame, _run_into), then the failures as error rows."""
    import pyarrow as pa

    tables = []
    rows = [row for f in frames if isinstance(f, list) for row in f]
    if rows:  # straight to Arrow: no frame per run (_canonical types every column)
        tables.append(_canonical(_from_rows(rows)))
    frames = [f for f in frames if not isinstance(f, list)]
    if frames:
        df = pd.concat(frames, ignore_index=True) if len(frames) > 1 else frames[0]
        tables.append(_canonical(pa.Table.from_pandas(df, preserve_index=False)))
    if failed:  # failures at run time may depend on the code: never cached
        tables.append(_error_table(failed, failed_errors, cacheable=False))
    return _concat(tables)


def _concat(tables):
    import pyarrow as pa

    tables = [t for t in tables if t is not None and t.num_rows]
    if not tables:
        return None
    if len(tables) == 1:
        return tables[0]
    return _canonical(pa.concat_tables(tables, promote_options="permissive"))


# --- the cache -------------------------------------------------------------------------------

def _cache_dir(cache: Any) -> Path | None:
    if cache is False:
        return None
    if cache is None or cache is True:
        return Path(os.environ.get("XSKBENCH_SWEEP_CACHE") or DEFAULT_CACHE)
    return Path(cache)


QUARANTINE = "quarantine"  # the cache's subdirectory for parts that fail validation


def _read_cache(directory: Path, wanted: set[str]) -> tuple[list, set[str]]:
    """Tables of the cached rows whose config_hash is in ``wanted`` (first part wins).

    A part that cannot be read or does not match the result schema (a missing column, a
    column of the wrong type) is moved to ``quarantine/`` with a warning; its configurations
    are then computed again."""
    import pyarrow as pa
    import pyarrow.compute as pc
    import pyarrow.parquet as pq

    tables, found = [], set()
    if not directory.is_dir() or not wanted:
        return tables, found
    for path in sorted(directory.glob("part-*.parquet")):
        todo = wanted - found
        if not todo:
            break
        try:
            hashes = set(pq.read_table(path, columns=["config_hash"])
                         .column(0).to_pylist())
            hit = hashes & todo
            if not hit:
                continue
            table = _canonical(pq.read_table(path))
            problem = _schema_problem(table)
        except Exception as err:  # noqa: BLE001 - a broken part is set aside, not fatal
            problem = f"unreadable: {_one_line(err)[:200]}"
        if problem:
            _quarantine(directory, path, problem)
            continue
        mask = pc.is_in(table.column("config_hash"), value_set=pa.array(sorted(hit)))
        tables.append(table.filter(mask))
        found |= hit
    return tables, found


def _schema_problem(table) -> str | None:
    """How a cached table departs from the result schema (None if it matches)."""
    import pyarrow as pa

    names = set(table.column_names)
    types = _column_types()
    missing = [c for c in types if c != _CACHE_FLAG and c not in names]
    if missing:
        return f"missing columns {', '.join(missing[:5])}" + (" ..." if len(missing) > 5 else "")
    for name, kind in types.items():
        if name in names:
            have = table.schema.field(name).type
            if have != pa.type_for_alias(_ARROW[kind]) and not pa.types.is_null(have):
                return f"column {name} is {have}, not {_ARROW[kind]}"
    return None


def _quarantine(directory: Path, path: Path, problem: str) -> None:
    target = directory / QUARANTINE / path.name
    try:
        target.parent.mkdir(exist_ok=True)
        os.replace(path, target)
        where = f"moved to {QUARANTINE}/"
    except OSError as err:
        where = f"left in place ({err.strerror})"
    warnings.warn(f"sweep cache: {path.name} {problem}; {where}, its configurations are "
                  "computed again", stacklevel=4)


def _write_part(directory: Path, table) -> None:
    import pyarrow.compute as pc
    import pyarrow.parquet as pq

    if table is None:
        return
    if _CACHE_FLAG in table.column_names:
        keep = table.filter(pc.equal(table.column(_CACHE_FLAG), True))
        keep = keep.drop_columns([_CACHE_FLAG])
    else:
        keep = table
    if not keep.num_rows:
        return
    directory.mkdir(parents=True, exist_ok=True)
    name = f"part-{time.time_ns():020d}-{uuid.uuid4().hex[:8]}.parquet"
    tmp = directory / f".{name}.tmp"
    pq.write_table(keep, tmp)
    os.replace(tmp, directory / name)  # atomic: a crash never leaves half a part


# --- executors -------------------------------------------------------------------------------

class SchedulerError(ValueError):
    """The Dask scheduler or its workers cannot run this sweep (unreachable, version skew)."""


def _chunks(items: list, size: int) -> list[list]:
    return [items[i:i + size] for i in range(0, len(items), size)]


def _warm(configs: list[dict]) -> dict:
    """Run on every worker before the sweep, with one config of the sweep per (cost profile,
    device): compile (or load) each device's kernels once with a very short run, and report
    the worker's version and profiles so the cache keys can be trusted."""
    memo: dict = {}
    profiles, warmed = [], set()
    for config in configs:
        cfg = RunConfig.from_dict(config)
        profiles.append(_profile_hash(cfg, config, memo))
        if cfg.device in warmed:
            continue
        warmed.add(cfg.device)
        try:
            run(cfg.replace(**{"workload.duration_s": 1e-4, "workload.warmup_s": 0.0}))
        except Exception:  # noqa: BLE001, S110 - the sweep itself reports failing configs
            pass
    return {"version": __version__, "profiles": profiles}


class _StopFlag:
    """Ctrl-C (SIGINT) during a sweep sets ``stop``: the sweep ends between two
    configurations, after caching what is done.  A second Ctrl-C interrupts at once."""

    def __init__(self) -> None:
        self.stop = False
        self._old: Any = None

    def __enter__(self) -> _StopFlag:
        if threading.current_thread() is threading.main_thread():
            self._old = signal.signal(signal.SIGINT, self._handler)
        return self

    def _handler(self, signum: int, frame: Any) -> None:
        self.stop = True
        signal.signal(signal.SIGINT, self._old)

    def __exit__(self, *exc: Any) -> None:
        if self._old is not None:
            signal.signal(signal.SIGINT, self._old)


def _serial(items, chunk_size, on_chunk, runner, flag):
    """One configuration at a time (so that Ctrl-C stops between two), joined into one Arrow
    table and cached per chunk (a table per configuration cost ~15 ms each, several times
    a short run)."""
    run = runner or _emulator()
    for chunk in _chunks(items, chunk_size):
        done, frames, failed, failed_errors = [], [], [], []
        try:
            for item in chunk:
                if flag.stop:
                    break
                _run_into(item, run, frames, failed, failed_errors)
                done.append(item)
        finally:  # what is done is cached, even when interrupted
            if done:
                on_chunk(done, _join(frames, failed, failed_errors))
        if flag.stop:
            raise KeyboardInterrupt


def _unless_stopped(call, flag):
    """``call()``'s result, waited for in a daemon thread so that Ctrl-C (``flag.stop``) ends
    the wait: compiling the kernels on the workers can take minutes."""
    out: dict[str, Any] = {}

    def target():
        try:
            out["value"] = call()
        except BaseException as err:  # noqa: BLE001 - re-raised in the caller's thread
            out["error"] = err

    thread = threading.Thread(target=target, daemon=True)
    thread.start()
    while thread.is_alive():
        if flag.stop:
            raise KeyboardInterrupt
        thread.join(POLL_S)
    if "error" in out:
        raise out["error"]
    return out["value"]


def _kill_workers(cluster):
    """SIGKILL to the local cluster's worker processes: a worker inside a numba kernel holds
    the GIL and would finish its chunk (minutes, maybe) before it heard a request to stop."""
    for nanny in cluster.workers.values():
        process = getattr(getattr(nanny, "process", None), "process", None)
        if process is not None:
            process.kill()


def _dask(items, scheduler, workers, chunk_size, on_chunk, reps, timings, status, runner,
          flag):
    from dask.distributed import Client, LocalCluster, as_completed

    cluster = None
    t0 = time.perf_counter()
    if isinstance(scheduler, Client):
        client = scheduler
    elif scheduler is None:
        n = workers or os.cpu_count() or 1
        # Ctrl-C on a terminal signals the whole process group: the workers ignore SIGINT
        # from birth (inherited while the cluster starts; a press in those few seconds is
        # lost) and after a restart (sweep_worker), so only this process stops, in one line
        old = signal.signal(signal.SIGINT, signal.SIG_IGN)
        try:
            cluster = LocalCluster(n_workers=n, threads_per_worker=1, processes=True,
                                   dashboard_address=None, silence_logs=logging.CRITICAL,
                                   preload=["xskbench.sweep_worker"])
        finally:
            signal.signal(signal.SIGINT, old)
        client = Client(cluster)
    else:
        try:
            client = Client(scheduler, timeout="20s")
        except OSError as err:
            raise SchedulerError(f"cannot reach the Dask scheduler {scheduler}: "
                                 f"{_one_line(err)}") from None
    try:
        slots = max(1, sum(client.nthreads().values()))
        if reps:
            status("sweep: compiling on the workers")
            expected = [t.profile for t in reps]
            reports = _unless_stopped(lambda: client.run(_warm, [t.config for t in reps]),
                                      flag)
            for addr, rep in reports.items():
                if rep["version"] != __version__ or rep["profiles"] != expected:
                    raise SchedulerError(
                        f"worker {addr} runs xskbench {rep['version']} with cost profiles "
                        f"{rep['profiles']}; this client has {__version__} with {expected}: "
                        "install the same xskbench (and data/costs) on every worker")
        timings["startup_s"] = time.perf_counter() - t0
        status("sweep")
        size = chunk_size or max(1, min(64, math.ceil(len(items) / (4 * slots))))
        chunks = _chunks(items, size)
        futures = {client.submit(_run_chunk, chunk, runner, pure=False,
                                 key=f"xskbench-sweep-{i}-{uuid.uuid4().hex[:8]}"): chunk
                   for i, chunk in enumerate(chunks)}
        done = as_completed(futures)
        while not done.is_empty():
            if flag.stop:  # the chunks still running are dropped, not waited for
                client.cancel(list(futures))
                raise KeyboardInterrupt
            if not done.has_ready():
                time.sleep(POLL_S)  # a short wait, so that Ctrl-C is seen while chunks run
                continue
            for fut in done.next_batch(block=False):
                chunk = futures.pop(fut)
                try:
                    table = fut.result()
                except Exception as err:  # noqa: BLE001 - e.g. a worker died: error rows
                    msg = f"{type(err).__name__}: {_one_line(err)}"
                    tasks = [Task(-1, c, h, msg, "") for c, h in chunk]
                    table = _error_table(tasks, [msg] * len(tasks), cacheable=False)
                on_chunk(chunk, table)
    finally:
        if cluster is not None:
            # killed workers leave the in-process scheduler's comms to log their closing (an
            # INFO line and a traceback, on a loaded machine): not for the one-line stop
            log = logging.getLogger("distributed")
            level = log.level
            if flag.stop:
                log.setLevel(logging.CRITICAL)
            try:
                client.close()
                if flag.stop:
                    _kill_workers(cluster)
                cluster.close()
            finally:
                log.setLevel(level)
        elif not isinstance(scheduler, Client):
            client.close()


# --- the sweep ---------------------------------------------------------------------------------

def _assemble(tables, order: dict[str, int]) -> pd.DataFrame:
    table = _concat(tables)
    if table is None:
        cols = paths() + list(RESULT_COLUMNS) + ["config_hash", "error"]
        return pd.DataFrame(columns=cols)
    if _CACHE_FLAG in table.column_names:
        table = table.drop_columns([_CACHE_FLAG])
    df = table.to_pandas()
    key = df["config_hash"].map(order).to_numpy()
    df = df.iloc[np.argsort(key, kind="stable")].reset_index(drop=True)
    df["error"] = df["error"].astype(object).where(df["error"].notna(), None)
    config = [c for c in paths() if c in df.columns]
    tail = ["config_hash", "error"]
    rest = [c for c in df.columns if c not in config and c not in tail]
    return df[config + rest + tail]


class SweepInterrupted(KeyboardInterrupt):
    """Ctrl-C during a sweep: its message says how much is done (and cached)."""


def runner_name(runner: Callable | None) -> str:
    """The cache-key name of a runner ("" for the emulator)."""
    if runner is None:
        return ""
    return f"{getattr(runner, '__module__', '?')}.{getattr(runner, '__qualname__', repr(runner))}"


def sweep(base: Any, grid: Any, *, scheduler: Any = None, workers: int | None = None,
          cache: Any = None, progress: bool = True, chunk_size: int | None = None,
          runner: Callable[[RunConfig], Any] | None = None,
          gate: Callable[[float], None] | None = None) -> pd.DataFrame:
    """Run every configuration of ``grid`` around ``base``; one row per config x context.

    ``base``: a RunConfig, a partial config dict, a config file path or None (defaults).
    ``grid``: see the module docstring.  ``scheduler``: None for a ``LocalCluster`` of
    ``workers`` processes (default: the number of cores), a scheduler address
    (``"tcp://host:8786"``) or a ``distributed.Client``, or ``"serial"`` to run in this
    process.  ``cache``: None for ``~/.cache/xskbench/sweeps`` (``XSKBENCH_SWEEP_CACHE``),
    a directory, or False.  ``progress``: a progress bar (a widget in notebooks).
    ``runner``: ``runner(cfg)`` returns something with ``to_frame()`` like a Result
    (default: the emulator, :func:`xskbench.run`); another runner is part of the cache key
    and must be picklable for Dask.  ``gate``: called with the estimated wall seconds of the
    work left (see :mod:`xskbench.estimate`) before any of it starts; it may raise.

    The frame's ``attrs["sweep"]`` counts the configurations ``computed``, read from the
    ``cached`` results and failed (``errors``), with timings.  Ctrl-C raises
    :class:`SweepInterrupted` (a KeyboardInterrupt); the chunks finished so far are cached,
    so a rerun resumes.
    """
    t0 = time.perf_counter()
    if workers is not None and (not isinstance(workers, int) or workers < 1):
        raise ValueError(f"workers={workers!r}: must be a positive int")
    if chunk_size is not None and (not isinstance(chunk_size, int) or chunk_size < 1):
        raise ValueError(f"chunk_size={chunk_size!r}: must be a positive int")
    tasks = plan(base, grid, runner_name(runner))
    order = {t.config_hash: t.point for t in tasks}
    directory = _cache_dir(cache)
    tables, found = _read_cache(directory, set(order)) if directory else ([], set())
    todo = [t for t in tasks if t.config_hash not in found]
    invalid = [t for t in todo if t.error is not None]
    valid = [t for t in todo if t.error is None]
    if gate is not None:
        slots = 1 if scheduler is not None else workers or os.cpu_count() or 1
        gate(sweep_seconds([t.config for t in valid], slots))
    if invalid:  # invalid combinations are a function of the config alone: cacheable
        table = _error_table(invalid, [t.error for t in invalid], cacheable=True)
        if directory:
            _write_part(directory, table)
        tables.append(table)

    from tqdm.auto import tqdm

    bar = tqdm(total=len(tasks), initial=len(tasks) - len(valid), desc="sweep", unit="cfg",
               disable=not progress or not valid, leave=True)
    timings: dict[str, float] = {"startup_s": 0.0}
    done = [len(tasks) - len(valid)]

    def on_chunk(chunk, table):
        if directory:
            _write_part(directory, table)
        tables.append(table)
        bar.update(len(chunk))
        done[0] += len(chunk)

    items = [(t.config, t.config_hash) for t in valid]
    try:
        with _StopFlag() as flag:
            if not items:
                pass
            elif scheduler == "serial":
                _serial(items, chunk_size or 16, on_chunk, runner, flag)
            else:
                reps = [] if runner is not None else list(
                    {(t.config["testbed"].get("profile"), t.device): t
                     for t in reversed(valid)}.values())
                bar.set_description("sweep: starting the cluster")
                _dask(items, scheduler, workers, chunk_size, on_chunk, reps, timings,
                      bar.set_description, runner, flag)
    except KeyboardInterrupt:
        kept = f"; they are cached in {directory}, a rerun resumes" if directory else ""
        raise SweepInterrupted(f"sweep interrupted: {done[0]} of {len(tasks)} configurations "
                               f"done{kept}") from None
    finally:
        bar.close()
    df = _assemble(tables, order)
    n_err = int(df.groupby("config_hash", sort=False)["error"].first().notna().sum()) \
        if len(df) else 0
    df.attrs["sweep"] = {"points": len(tasks), "computed": len(valid), "cached": len(found),
                         "invalid": len(invalid), "errors": n_err,
                         "seconds": time.perf_counter() - t0, **timings}
    return df


# --- in-process sweeps: configurations, and a runner's outputs -----------------------------

def points(base: Any, grid: Any) -> list[RunConfig]:
    """The configurations of ``grid`` around ``base`` (see the module docstring), in grid
    order, one per grid point (not deduplicated); ValueError naming the first invalid
    point."""
    base_nested = full(base)
    out = []
    for i, changes in enumerate(expand(grid)):
        try:
            out.append(RunConfig.from_dict(_apply(base_nested, changes)))
        except (ValueError, TypeError) as err:
            raise ValueError(f"grid point {i} {_describe(changes)}: {_one_line(err)}") from None
    return out


def _describe(changes: Mapping[str, Any]) -> str:
    return "(" + ", ".join(f"{k}={quote(v, 40)}" for k, v in changes.items()) + ")"


def each(configs: Iterable[Any], runner: Callable[[Any], Any] | None = None, *,
         errors: tuple[type[BaseException], ...] = (ValueError,),
         on_result: Callable[[int, Any, Any], None] | None = None) -> list[Any]:
    """``runner(config)`` for each config, in order: the one loop behind a sweep in this
    process.  Equal (hashable) configs run once.  A config that raises one of ``errors``
    gives its one-line message instead of a result.  ``on_result(i, config, result)`` is
    called after each run (progress).  Ctrl-C raises :class:`SweepInterrupted`.  The
    default runner is the emulator."""
    run = runner or _emulator()
    configs = list(configs)
    memo: dict[Any, Any] = {}
    out: list[Any] = []
    try:
        for i, cfg in enumerate(configs):
            try:
                hash(cfg)
                key = cfg
            except TypeError:  # unhashable configs are simply not deduplicated
                key = None
            if key is not None and key in memo:
                res = memo[key]
            else:
                try:
                    res = run(cfg)
                except errors as err:
                    res = _one_line(err)
                if key is not None:
                    memo[key] = res
            out.append(res)
            if on_result is not None:
                on_result(i, cfg, res)
    except KeyboardInterrupt:
        raise SweepInterrupted(f"sweep interrupted: {len(out)} of {len(configs)} "
                               "configurations done") from None
    return out


def outcomes(base: Any, grid: Any, runner: Callable[[RunConfig], Any] | None = None,
             **kwargs: Any) -> list[Any]:
    """``runner(cfg)`` (default: the emulator's Result) at each grid point, in grid order;
    an invalid point (or a run raising ValueError) gives its one-line message.  ``kwargs``
    go to :func:`each`."""
    base_nested = full(base)
    configs: list[Any] = []
    for changes in expand(grid):
        try:
            configs.append(RunConfig.from_dict(_apply(base_nested, changes)))
        except (ValueError, TypeError) as err:
            configs.append(_Invalid(_one_line(err)))
    inner = runner or _emulator()

    def run(cfg):
        if isinstance(cfg, _Invalid):
            return cfg.message
        return inner(cfg)

    return each(configs, run, **kwargs)


@dataclass(frozen=True)
class _Invalid:
    message: str


def one_at_a_time(base: Any, axes: Mapping[str, Iterable[Any]],
                  replace: Callable[..., Any] | None = None) -> list[tuple[str, Any, Any]]:
    """``(axis, value, config)`` for each value of each axis with the other fields at
    ``base``: a sensitivity-style sweep.  ``replace(base, **{axis: value})`` builds a point
    (default: ``base.replace``, e.g. RunConfig.replace with field paths; pass
    ``dataclasses.replace`` for a plain dataclass such as the real runs' MeasureConfig)."""
    build = replace or (lambda b, **kw: b.replace(**kw))
    out = []
    for axis, values in axes.items():
        for v in values:
            out.append((axis, v, build(base, **{axis: v})))
    _check_size(len(out), "one-at-a-time")
    return out


# --- per-configuration summaries and sensitivity ---------------------------------------------

def summarize(df: pd.DataFrame) -> pd.DataFrame:
    """One row per configuration: its config columns, ``pps`` (the larger of pps_rx and
    pps_tx: what the workload moves), ``cpu_total`` (% of one CPU, all contexts),
    ``bottleneck`` (its context), ``cpu:<context>`` columns, ``config_hash`` and ``error``."""
    config = [c for c in paths() if c in df.columns]
    groups = df.groupby("config_hash", sort=False)
    first = groups.first()
    out = first[config].copy()
    out["pps"] = first[["pps_rx", "pps_tx"]].max(axis=1)
    out["pps_rx"], out["pps_tx"] = first["pps_rx"], first["pps_tx"]
    out["cpu_total"] = groups["cpu_pct"].sum(min_count=1)
    ok = df[df["context"].notna()]
    bott = ok[ok["bottleneck"].astype(bool)].groupby("config_hash", sort=False)["context"]
    out["bottleneck"] = bott.first().reindex(out.index).astype(object)
    if len(ok):
        wide = ok.pivot_table(index="config_hash", columns="context", values="cpu_pct",
                              aggfunc="first", sort=False)
        for ctx in wide.columns:
            out[f"cpu:{ctx}"] = wide[ctx].reindex(out.index)
    out["error"] = first["error"].astype(object).where(first["error"].notna(), None)
    return out.reset_index()


def varying(df: pd.DataFrame) -> list[str]:
    """The config columns that take more than one value in ``df``."""
    return [c for c in paths()
            if c in df.columns and df[c].astype(str).nunique(dropna=False) > 1]


def row_config(row: Mapping | pd.Series) -> RunConfig:
    """The RunConfig of one (summary or tidy) row; NaN in an optional field reads as None."""
    return RunConfig.from_dict(unflatten(dict(row), nan_is_none=True))


def _device_section(device: str) -> str | None:
    dev = DEVICES.get(device)
    return dev.section_name if dev else None


def default_knobs(base: RunConfig) -> list[str]:
    """The fields :func:`sensitivity` varies by default: the numeric, bool and numeric-choice
    fields of xsk, workload and the device's section, without duration/warm-up/seed, CPU
    placement (``*_cpu``) and fields that are None at the base."""
    sections = ["xsk", "workload"] + ([s] if (s := _device_section(base.device)) else [])
    out = []
    for section in sections:
        for f in iter_fields(section_class(section)):
            value = getattr(getattr(base, section), f.name)
            if (f.path in _SENS_SKIP or f.name.endswith("_cpu") or value is None
                    or f.base is str):
                continue
            out.append(f.path)
    return out


def neighbours(path: str, value: Any, factor: float = 2.0) -> dict[str, Any]:
    """``{"low": v, "high": v}`` around ``value``: the previous/next choice (a bool's flip),
    /factor and *factor for numbers (a power of two for pow2 fields), clipped to the bounds;
    a direction is missing where no distinct value exists (0 has no lower neighbour; its
    upper one is 1, or the field's step)."""
    info = field_of(path)
    choices = _choices(path, info)
    out: dict[str, Any] = {}
    if choices:
        choices = tuple(choices)
        if info is not None and info.base is bool:
            return {"high" if not value else "low": not value}
        if value in choices:
            i = choices.index(value)
            if i > 0:
                out["low"] = choices[i - 1]
            if i + 1 < len(choices):
                out["high"] = choices[i + 1]
        return out
    if info is None or info.base not in (int, float) or value is None:
        return out
    if info.pow2:
        factor = 2.0
    if value == 0:
        cand = {"high": info.step or 1}
    else:
        cand = {"low": value / factor, "high": value * factor}
    for direction, v in cand.items():
        if info.base is int:
            v = int(round(v))
        else:
            v = float(v)
        if info.lo is not None:
            v = max(v, info.base(info.lo))
        if info.hi is not None:
            v = min(v, info.base(info.hi))
        if v != value:
            out[direction] = v
    return out


def sensitivity(base: Any = None, fields: Iterable[str] | None = None, *, factor: float = 2.0,
                **sweep_kwargs: Any) -> pd.DataFrame:
    """Vary each knob alone around ``base`` (see :func:`neighbours`) and report how ``pps``
    and each context's CPU move: one row per field x direction x metric with ``value``,
    ``base_value``, ``metric`` (``pps`` or ``cpu:<context>``), ``base``, ``result``,
    ``delta`` (result - base: pps, or percentage points of CPU), ``rel_pct`` (delta in % of
    base) and ``error``.  ``sweep_kwargs`` go to :func:`sweep` (scheduler, cache, ...)."""
    base_cfg = RunConfig.from_dict(full(base))  # the base point must be valid
    nested = base_cfg.to_dict()
    fields = list(default_knobs(base_cfg) if fields is None else fields)
    flat = flatten(base_cfg.to_dict())
    points: list[dict] = [{}]
    meta: list[tuple[str, str, Any, Any]] = []
    for path in fields:
        field_of(path)
        for direction, v in neighbours(path, flat[path], factor).items():
            points.append({path: v})
            meta.append((path, direction, v, flat[path]))
    memo: dict = {}
    hashes = [_task(nested, changes, memo).config_hash for changes in points]
    df = sweep(base_cfg, points, **sweep_kwargs)
    summ = summarize(df).set_index("config_hash")
    metrics = ["pps"] + [c for c in summ.columns if c.startswith("cpu:")]
    base_row = summ.loc[hashes[0]]
    rows = []
    for (path, direction, v, bv), h in zip(meta, hashes[1:], strict=True):
        row = summ.loc[h] if h in summ.index else None
        for m in metrics:
            b = float(base_row[m]) if pd.notna(base_row[m]) else math.nan
            r = float(row[m]) if row is not None and pd.notna(row[m]) else math.nan
            if m.startswith("cpu:") and row is not None and row["error"] is None \
                    and math.isnan(r):
                r = 0.0  # the context does not exist in this variant
            rows.append({"field": path, "direction": direction, "value": v, "base_value": bv,
                         "metric": m, "base": b, "result": r, "delta": r - b,
                         "rel_pct": 100.0 * (r - b) / b if b else math.nan,
                         "error": None if row is None else row["error"]})
    out = pd.DataFrame(rows, columns=["field", "direction", "value", "base_value", "metric",
                                      "base", "result", "delta", "rel_pct", "error"])
    out.attrs["sweep"] = df.attrs.get("sweep", {})
    return out


__all__ = ["DEFAULT_CACHE", "MAX_POINTS", "SchedulerError", "SweepInterrupted", "Task",
           "config_hash", "default_knobs", "each", "expand", "neighbours", "one_at_a_time",
           "outcomes", "plan", "points", "row_config", "sample_points", "sensitivity",
           "summarize", "sweep", "varying"]


class _CallableModule(types.ModuleType):
    """``xskbench.sweep(base, grid, ...)`` calls :func:`sweep`, while ``xskbench.sweep`` stays
    the module (``xskbench.sweep.summarize``, ``import xskbench.sweep as m``)."""

    def __call__(self, *args: Any, **kwargs: Any) -> pd.DataFrame:
        return sweep(*args, **kwargs)


sys.modules[__name__].__class__ = _CallableModule
