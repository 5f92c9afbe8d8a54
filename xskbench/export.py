"""``xskbench.export(fig_or_result, stem)``: a figure for a paper, a review or a mailing list.

Writes, next to each other:

- ``stem.png``, ``stem.svg``, ``stem.pdf``: static images (kaleido with the system's
  Chromium; one warm browser is kept for the whole process);
- ``stem.html``: a standalone interactive page with plotly.js inlined (works offline);
- ``stem.csv``: the plotted data, one row per point of each trace;
- ``stem.json``: the config, xskbench version and seed (and a summary of the run);
- ``stem.txt``: a plain-text block of at most 72 columns to paste into a review: the
  pps/CPU table and the perf-top list in the styles of ``Result.report()``.

A Result exports its CPU figure plus its text; a figure (``go.Figure`` or the Explorer's
``FigureWidget``) exports itself, with ``result=`` adding that run's report to the text.
"""

from __future__ import annotations

import atexit
import hashlib
import json
import os
import shlex
import shutil
import sys
import textwrap
import threading
import time
import types
import warnings
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import plotly.graph_objects as go
import plotly.io as pio
from plotly.basedatatypes import BaseFigure

from xskbench import __version__, plotting, report
from xskbench.config import RunConfig
from xskbench.fields import fmt

FORMATS = ("png", "svg", "pdf", "html", "csv", "json", "txt")
IMAGE_FORMATS = ("png", "svg", "pdf")
COLS = 72
WIDTH = 900  # px of the static images; the height is the figure's
PNG_SCALE = 2

_kaleido_lock = threading.Lock()
# None = not tried; True = warm server; a str = why images cannot be made in this process
_kaleido_state: dict[str, Any] = {"server": None}
#: How long one image may take before export gives up (a browser that hangs).
IMAGE_TIMEOUT_S = 120.0
NO_BROWSER = ("PNG/SVG/PDF export needs Chrome or Chromium for kaleido: {why}; install "
              "Debian's chromium (apt-get install -y chromium) or set BROWSER_PATH "
              "(html, csv, json and txt need no browser)")


def find_browser() -> str | None:
    """The browser kaleido would start: ``BROWSER_PATH`` if set, else Debian's chromium on
    PATH, else what choreographer finds (a Chrome downloaded by ``plotly_get_chrome``,
    typical install paths); None if there is none."""
    if "BROWSER_PATH" in os.environ:
        return os.environ["BROWSER_PATH"]
    found = shutil.which("chromium") or shutil.which("chromium-browser")
    if found:
        return found
    from choreographer.browsers.chromium import Chromium

    return Chromium.find_browser(skip_local=False)


def _warm_kaleido() -> None:
    """Start one kaleido browser for the process (0.2-0.3 s per image instead of 3-4 s);
    raise at once (one line) if there is no browser to start."""
    with _kaleido_lock:
        state = _kaleido_state["server"]
        if isinstance(state, str):
            raise RuntimeError(state)
        if state is not None:
            return
        browser = find_browser()
        if not browser or not os.access(browser, os.X_OK):
            why = (f"BROWSER_PATH={browser} is not an executable" if browser
                   else "none found")
            _kaleido_state["server"] = NO_BROWSER.format(why=why)
            raise RuntimeError(_kaleido_state["server"])
        os.environ["BROWSER_PATH"] = browser
        import kaleido

        kaleido.start_sync_server(silence_warnings=True)
        _kaleido_state["server"] = True
        atexit.register(_stop_kaleido)


def _server_thread() -> threading.Thread | None:
    from kaleido import _global_server

    return getattr(_global_server, "_thread", None)


def _write_image(fig: Any, path: Path, **kw: Any) -> None:
    """``pio.write_image`` through the warm server, watched: kaleido starts its browser in a
    thread, and if that fails every later call waits forever, so the call runs in a worker
    and a dead server (or no answer in IMAGE_TIMEOUT_S) becomes a one-line error.  A first
    failure is retried once: on a loaded machine kaleido's page can be asked to render
    before its scripts have loaded."""
    for attempt in (1, 2):
        box: dict[str, Any] = {}

        def work(box: dict = box) -> None:
            try:
                pio.write_image(fig, path, **kw)
            except Exception as err:  # noqa: BLE001 - reported below
                box["error"] = err
            box["done"] = True

        worker = threading.Thread(target=work, daemon=True, name="xskbench-export")
        worker.start()
        server = _server_thread()
        end = time.monotonic() + IMAGE_TIMEOUT_S
        while not box.get("done"):
            worker.join(0.05)
            if box.get("done"):
                break
            if server is not None and not server.is_alive():
                browser = os.environ.get("BROWSER_PATH", "?")
                _fail_kaleido(NO_BROWSER.format(
                    why=f"the browser {browser} closed right after starting"))
            if time.monotonic() > end:
                _fail_kaleido(f"kaleido made no image in {IMAGE_TIMEOUT_S:.0f} s "
                              f"(browser {os.environ.get('BROWSER_PATH', '?')})")
        if "error" not in box:
            return
        if attempt == 2:
            raise box["error"]


def _fail_kaleido(message: str) -> None:
    """Mark images as impossible in this process (the stuck worker is a daemon thread) and
    raise ``message``."""
    with _kaleido_lock:
        _kaleido_state["server"] = message
        from kaleido import _global_server

        _global_server._initialized = False  # its thread is dead or stuck: never join it
    raise RuntimeError(message)


def _stop_kaleido() -> None:
    with _kaleido_lock:
        if _kaleido_state["server"] is True:
            import kaleido

            try:
                kaleido.stop_sync_server(silence_warnings=True)
            except Exception:  # noqa: BLE001, S110 - shutting down anyway
                pass
            _kaleido_state["server"] = None


def _is_result(obj: Any) -> bool:
    return all(hasattr(obj, a) for a in ("report", "profile", "config", "labels"))


def _meta(fig: go.Figure) -> dict:
    m = fig.layout.meta
    return dict(m.get("xskbench", {})) if isinstance(m, dict) else {}


# --- the text block -----------------------------------------------------------------------
def _wrap(lines: Iterable[str], cols: int = COLS) -> list[str]:
    out: list[str] = []
    for line in lines:
        line = line.rstrip()
        if len(line) <= cols:
            out.append(line)
            continue
        indent = " " * (len(line) - len(line.lstrip()))
        out.extend(textwrap.wrap(line, cols, initial_indent="", subsequent_indent=indent + "  ",
                                 break_long_words=True, break_on_hyphens=False)
                   or [line[:cols]])
    return out


def config_changes(config: dict | None, swept: str = "") -> list[str]:
    """``["device=null", "mode=zerocopy", "workload.duration_s=0.002"]``: device, mode and
    the fields that differ from the defaults (the ``swept`` key left out)."""
    if not config:
        return []

    default = RunConfig().to_dict()
    parts = [f"device={config.get('device')}", f"mode={config.get('mode')}"]
    for section, values in config.items():
        if not isinstance(values, dict):
            continue
        for name, value in values.items():
            if (default.get(section, {}).get(name, object()) != value
                    and f"{section}.{name}" != swept):
                parts.append(f"{section}.{name}={fmt(value)}")
    return parts


def _config_changes(config: dict | None, swept: str = "") -> str:
    return " ".join(config_changes(config, swept)) or "(config unknown)"


def cli_line(cfg: Any) -> str:
    """The ``xskbench run`` command line that runs ``cfg`` (a RunConfig)."""
    parts = config_changes(cfg.to_dict())
    line = f"xskbench run --device {cfg.device} --mode {cfg.mode}"
    sets = [shlex.quote(p) for p in parts[2:]]
    return line + (" --set " + " ".join(sets) if sets else "")


def config_tag(cfg: Any) -> str:
    """8 hex digits of the config's JSON: unique, stable names for exported files."""
    return hashlib.sha256(cfg.to_json().encode()).hexdigest()[:8]


def _num(v: Any) -> str:
    if v is None:
        return "-"
    if isinstance(v, bool) or not isinstance(v, int | float):
        return str(v).replace("<br>", " ")
    if v != v:  # NaN
        return "-"
    if abs(v) >= 1e4:
        return f"{v:,.0f}"
    return f"{v:.4g}"


def _table(header: list[str], rows: list[list[str]], cols: int = COLS) -> list[str]:
    """Right-aligned columns (the first left-aligned), narrowed to fit ``cols``."""
    width = [max(len(h), *(len(r[i]) for r in rows)) if rows else len(h)
             for i, h in enumerate(header)]
    width[0] = min(width[0], max(12, cols - sum(w + 2 for w in width[1:]) - 1))

    def line(cells: list[str]) -> str:
        first = cells[0][:width[0]]
        return (" " + first.ljust(width[0])
                + "".join(f"  {c:>{w}}" for c, w in zip(cells[1:], width[1:], strict=True)))

    return [line(header)] + [line(r) for r in rows]


def _figure_table(fig: go.Figure, max_rows: int = 30) -> list[str]:
    """The plotted data as a table: one row per x value, one column per trace."""
    meta = _meta(fig)
    if "sweep" in meta:  # a sweep: the knob, both rates and the bottleneck
        key = meta["sweep"]["key"]
        by = {tr.name: tr for tr in fig.data}
        tx, rx, cpu = by.get("tx pps"), by.get("rx pps"), by.get("bottleneck CPU %")
        rows = []
        for j, x in enumerate(meta["sweep"]["points"]):
            name = cpu.text[j] if cpu is not None and cpu.text is not None else ""
            rows.append([_num(x), _num(tx.y[j]) if tx is not None else "-",
                         _num(rx.y[j]) if rx is not None else "-", name or "-",
                         _num(cpu.y[j]) if cpu is not None else "-"])
        return _table([key.split(".")[-1], "tx pps", "rx pps", "bottleneck", "cpu %"], rows)
    traces = [tr for tr in fig.data if getattr(tr, "x", None) is not None
              and getattr(tr, "y", None) is not None]
    if not traces:
        return [" (no data)"]
    horizontal = [getattr(tr, "orientation", None) == "h" for tr in traces]
    keys: list[Any] = []
    cols: list[dict] = []
    for tr, h in zip(traces, horizontal, strict=True):
        tx, ty = plotting._array(tr.x), plotting._array(tr.y)
        xs, ys = (ty, tx) if h else (tx, ty)
        col = {}
        for xv, yv in zip(xs, ys, strict=False):
            k = plotting._plain(xv)
            if k not in col and k not in keys:
                keys.append(k)
            col[k] = plotting._plain(yv)
        cols.append(col)
    step = max(1, -(-len(keys) // max_rows))
    rows = [[_num(k)] + [_num(c.get(k)) for c in cols] for k in keys[::step]]
    names = [str(tr.name or f"trace {i}") for i, tr in enumerate(traces)]
    xtitle = (fig.layout.yaxis.title.text if all(horizontal)
              else fig.layout.xaxis.title.text) or "x"
    note = [f" (every {step}th of {len(keys)} rows)"] if step > 1 else []
    return _table([str(xtitle)] + names, rows) + note


def text_block(fig: go.Figure | None = None, result: Any = None, cols: int = COLS,
               top: int = 12) -> str:
    """Plain text of at most ``cols`` columns: what ran, then the pps/CPU table and the
    perf-top list of ``result`` (or, for a figure without a result, its data as a table)."""
    meta = _meta(fig) if fig is not None else {}
    config = result.config.to_dict() if result is not None else meta.get("config")
    seed = result.config.workload.seed if result is not None else meta.get("seed")
    profile = (result.profile_name if result is not None
               else (config or {}).get("testbed", {}).get("profile", "?"))
    sweep = meta.get("sweep")
    swept = sweep["key"] if sweep else ""
    lines = [f" xskbench {__version__}, seed {seed}, cost profile {profile}",
             " config: " + _config_changes(config, swept)]
    if sweep:
        lines.append(f" sweep: {swept} = " + ", ".join(_num(p) for p in sweep["points"]))
    if fig is not None and fig.layout.title.text:
        lines.append(" figure: " + fig.layout.title.text.replace("<br>", " "))
    lines.append("")
    if result is not None:
        lines += result.report("xdpsock").splitlines()
        lines += ["", " perf top (emulated):"]
        lines += report.profile(result, top=top).splitlines()
    if fig is not None and (result is None or "sweep" in meta):
        if result is not None:
            lines.append("")
        lines += _figure_table(fig)
    return "\n".join(_wrap(lines, cols)) + "\n"


# --- export -------------------------------------------------------------------------------
def _summary(result: Any) -> dict:
    r = lambda x: float(f"{x:.6g}")  # noqa: E731
    return {"pps": {k: r(v) for k, v in result.pps.items()},
            "cpu_pct": {k: r(v) for k, v in result.cpu.items()},
            "idle_poll_pct": {k: r(v) for k, v in result.idle_poll.items()},
            "bottleneck": result.bottleneck, "window_s": r(result.window_s),
            "profile_name": result.profile_name}


def export(obj: Any, stem: str | os.PathLike, *, result: Any = None,
           formats: Iterable[str] = FORMATS, width: int = WIDTH,
           scale: float = PNG_SCALE) -> dict[str, Path]:
    """Write ``stem.{png,svg,pdf,html,csv,json,txt}`` for a Result (its CPU figure and its
    report) or a figure (plus ``result``'s report if given).  Returns format -> path."""
    if _is_result(obj):
        result = obj
        fig = plotting.cpu_figure(obj)
    elif isinstance(obj, BaseFigure):  # go.Figure or a FigureWidget, used as it is
        fig = obj
    else:
        raise TypeError(f"export() takes a Result or a plotly figure, not "
                        f"{type(obj).__name__}")
    formats = tuple(formats)
    unknown = set(formats) - set(FORMATS)
    if unknown:
        raise ValueError(f"formats {sorted(unknown)}: must be among {', '.join(FORMATS)}")
    stem = Path(stem)
    stem.parent.mkdir(parents=True, exist_ok=True)
    paths = {f: stem.with_name(f"{stem.name}.{f}") for f in formats}

    images = [f for f in formats if f in IMAGE_FORMATS]
    if images:
        _warm_kaleido()
        height = fig.layout.height or plotting.HEIGHT
        with warnings.catch_warnings():
            # plotly's note that kaleido options are ignored with a warm server
            warnings.filterwarnings("ignore", message="The kopts argument is ignored")
            for f in images:
                _write_image(fig, paths[f], format=f, width=width, height=height,
                             scale=scale if f == "png" else 1)
    if "html" in paths:
        fig.write_html(paths["html"], include_plotlyjs=True, full_html=True,
                       include_mathjax=False, config={"displaylogo": False})
    if "csv" in paths:
        plotting.figure_frame(fig).to_csv(paths["csv"], index=False)
    if "json" in paths:
        meta = _meta(fig)
        doc = {"xskbench_version": __version__,
               "seed": result.config.workload.seed if result is not None else meta.get("seed"),
               "config": result.config.to_dict() if result is not None else meta.get("config"),
               "figure": {"title": fig.layout.title.text,
                          "files": sorted(p.name for p in paths.values())}}
        if "sweep" in meta:
            doc["sweep"] = meta["sweep"]
        if result is not None:
            doc["result"] = _summary(result)
        paths["json"].write_text(json.dumps(doc, indent=1, sort_keys=True, default=str) + "\n")
    if "txt" in paths:
        paths["txt"].write_text(text_block(fig, result))
    return paths


class _CallableModule(types.ModuleType):
    """``xskbench.export(...)`` works although ``xskbench.export`` is this module."""

    def __call__(self, *args: Any, **kwargs: Any) -> dict[str, Path]:
        return export(*args, **kwargs)


sys.modules[__name__].__class__ = _CallableModule
