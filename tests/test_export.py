"""xskbench.export: real pictures (PNG, SVG, PDF), offline HTML, CSV, JSON and a text block of
at most 72 columns."""

from __future__ import annotations

import json
import re
import struct
import xml.etree.ElementTree as ET
import zlib

import numpy as np
import pandas as pd
import plotly.graph_objects as go
import pytest
from numba import njit

import xskbench
from xskbench import export as export_mod
from xskbench import plotting
from xskbench.widgets import run_sweep, sweep_points

PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"


@pytest.fixture(scope="module")
def res():
    cfg = xskbench.RunConfig().replace(**{"workload.duration_s": 0.002,
                                          "workload.warmup_s": 0.0005})
    return xskbench.run(cfg)


@pytest.fixture(scope="module")
def written(res, tmp_path_factory):
    stem = tmp_path_factory.mktemp("export") / "null-zc"
    return xskbench.export(res, stem)


# --- a PNG decoder (no Pillow needed) ------------------------------------------------------
@njit(cache=False)
def _unfilter(raw, h, stride, bpp):  # pragma: no cover - numba
    out = np.zeros((h, stride), np.uint8)
    pos = 0
    for y in range(h):
        ft = raw[pos]
        pos += 1
        for x in range(stride):
            a = np.int32(out[y, x - bpp]) if x >= bpp else 0
            b = np.int32(out[y - 1, x]) if y > 0 else 0
            c = np.int32(out[y - 1, x - bpp]) if (x >= bpp and y > 0) else 0
            v = np.int32(raw[pos + x])
            if ft == 1:
                v += a
            elif ft == 2:
                v += b
            elif ft == 3:
                v += (a + b) // 2
            elif ft == 4:
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                v += a if (pa <= pb and pa <= pc) else (b if pb <= pc else c)
            out[y, x] = v & 0xFF
        pos += stride
    return out


def decode_png(data: bytes) -> np.ndarray:
    """An 8-bit, non-interlaced PNG as an (h, w, channels) array."""
    assert data[:8] == PNG_SIGNATURE
    pos, idat = 8, []
    while pos < len(data):
        (n,) = struct.unpack(">I", data[pos:pos + 4])
        kind, body = data[pos + 4:pos + 8], data[pos + 8:pos + 8 + n]
        pos += 12 + n
        if kind == b"IHDR":
            w, h, depth, ctype, _, _, interlace = struct.unpack(">IIBBBBB", body)
        elif kind == b"IDAT":
            idat.append(body)
        elif kind == b"IEND":
            break
    assert depth == 8 and interlace == 0, (depth, interlace)
    ch = {0: 1, 2: 3, 4: 2, 6: 4}[ctype]
    raw = np.frombuffer(zlib.decompress(b"".join(idat)), np.uint8)
    return _unfilter(raw, h, w * ch, ch).reshape(h, w, ch)


# --- the files ------------------------------------------------------------------------------
def test_all_files(written):
    assert set(written) == set(export_mod.FORMATS)
    for path in written.values():
        assert path.exists() and path.stat().st_size > 0, path


def test_png_is_a_real_picture(written):
    data = written["png"].read_bytes()
    assert data[:8] == PNG_SIGNATURE
    assert len(data) > 20_000
    img = decode_png(data)
    h, w, _ = img.shape
    assert (w, h) == (export_mod.WIDTH * export_mod.PNG_SCALE,
                      plotting.HEIGHT * export_mod.PNG_SCALE)
    rgb = img[:, :, :3].reshape(-1, 3)
    colours, counts = np.unique(rgb, axis=0, return_counts=True)
    assert len(colours) > 50, "a picture, not a blank"
    assert counts.max() < 0.97 * len(rgb), "not (almost) a single colour"


def test_svg_parses(written):
    root = ET.parse(written["svg"]).getroot()
    assert root.tag.endswith("svg")
    text = written["svg"].read_text()
    assert "ksoftirqd" in text or "app" in text


def test_pdf_has_pages(written):
    data = written["pdf"].read_bytes()
    assert data.startswith(b"%PDF")
    assert re.search(rb"/Type\s*/Page\b", data)
    assert b"%%EOF" in data[-1024:]


def test_html_is_offline(written):
    text = written["html"].read_text()
    assert not re.search(r"<script[^>]*\bsrc\s*=\s*[\"']?https?:", text, re.I)
    assert len(text) > 1_000_000  # plotly.js inlined
    assert "Plotly.newPlot" in text


def test_text_block(written, res):
    text = written["txt"].read_text()
    lines = text.splitlines()
    assert all(len(line) <= 72 for line in lines), max(lines, key=len)
    assert f"xskbench {xskbench.__version__}, seed {res.config.workload.seed}" in text
    assert "bottleneck" in text and "Overhead" in text
    assert res.report().splitlines()[0].strip() in text


def test_json_and_csv(written, res):
    doc = json.loads(written["json"].read_text())
    assert doc["xskbench_version"] == xskbench.__version__
    assert doc["seed"] == res.config.workload.seed
    assert doc["config"] == json.loads(res.config.to_json())
    assert doc["result"]["bottleneck"] == res.bottleneck
    df = pd.read_csv(written["csv"])
    assert list(df.columns) == ["trace", "type", "x", "y", "text"]
    assert len(df) == 2 * sum(1 for lab in res.labels if res.cpu[lab] > 0)
    assert set(df["trace"]) == {"useful work", "idle polls"}


def test_export_a_figure(tmp_path, res):
    """A figure alone (here a sweep, with invalid points) keeps its config in layout.meta,
    and its text is the plotted data as a table."""
    info = next(i for i in xskbench.widgets.numeric_fields() if i.path == "xsk.tx_size")
    points = sweep_points(info, 64, n=5)
    results = run_sweep(res.config, "xsk.tx_size", points)
    assert any(isinstance(r, str) for r in results)  # tx_size 16/32 < batch_size 64
    fig = plotting.sweep_figure("xsk.tx_size", points, results, base=res.config)
    paths = xskbench.export(fig, tmp_path / "sweep", formats=("html", "csv", "json", "txt"))
    doc = json.loads(paths["json"].read_text())
    assert doc["config"] == res.config.to_dict() and doc["sweep"]["points"] == points
    text = paths["txt"].read_text()
    assert all(len(line) <= 72 for line in text.splitlines())
    assert "tx_size" in text and "bottleneck" in text
    rows = [line for line in text.splitlines() if re.match(r"\s+\d+\s", line)]
    assert len(rows) == len(points)


def test_export_a_figurewidget_with_result(tmp_path, res):
    fw = go.FigureWidget(plotting.profile_figure(res))
    paths = xskbench.export(fw, tmp_path / "prof", result=res, formats=("svg", "txt"))
    ET.parse(paths["svg"])
    text = paths["txt"].read_text()
    assert "Overhead" in text and all(len(line) <= 72 for line in text.splitlines())


def test_text_block_wraps_long_lines():
    fig = go.Figure([go.Scatter(name="n" * 100, x=[1, 2], y=[3, 4])],
                    layout=dict(title=dict(text="t" * 200)))
    text = export_mod.text_block(fig)
    assert all(len(line) <= 72 for line in text.splitlines())


def test_export_rejects_other_things(tmp_path):
    with pytest.raises(TypeError):
        xskbench.export("not a figure", tmp_path / "x")
    with pytest.raises(ValueError):
        xskbench.export(go.Figure(), tmp_path / "x", formats=("eps",))


def test_explorer_export_button(tmp_path):
    from xskbench.widgets import Explorer

    ex = Explorer(sweep_key="xsk.tx_size")
    ex.export_stem.value = str(tmp_path / "ex")
    tag = export_mod.config_tag(ex.config)
    for view in ("cpu", "sweep"):
        ex.export_view.value = view
        ex.export_button.click()
        assert "wrote" in ex.export_out.value, ex.export_out.value
        for fmt in export_mod.FORMATS:  # unique names: the config's hash
            assert (tmp_path / f"ex-{view}-{tag}.{fmt}").stat().st_size > 0
    text = (tmp_path / f"ex-cpu-{tag}.txt").read_text()
    assert "bottleneck" in text and all(len(line) <= 72 for line in text.splitlines())
    ex.sweep_data = None
    assert ex.export("sweep", tmp_path / "none") == {}
    assert "export failed" in ex.export_out.value


def test_export_json_loads_back(written, res):
    assert xskbench.load(written["json"]) == res.config


# --- without a browser: a one-line error at once, never a hang ------------------------------
_NO_BROWSER = """
import sys, time, xskbench
res = xskbench.run(xskbench.RunConfig().replace(
    **{"workload.duration_s": 0.0005, "workload.warmup_s": 0.0}))
export = xskbench.export  # the module loads first: the call is what must not hang
t0 = time.monotonic()
try:
    export(res, sys.argv[1], formats=("png", "txt"))
except RuntimeError as err:
    print(f"{time.monotonic() - t0:.3f}")
    print(err)
"""


@pytest.mark.parametrize(("browser", "limit_s"), [("/nonexistent/chromium", 2.0),
                                                   ("/bin/false", 10.0)],
                         ids=["missing", "dies-at-start"])
def test_export_without_a_browser_fails_fast(tmp_path, browser, limit_s):
    """No browser: a one-line RuntimeError within 2 s.  A browser that exits at once
    (kaleido's server thread then dies, and every later call used to wait forever): the same
    error once kaleido has noticed (it waits for the browser's first answer)."""
    import os
    import subprocess
    import sys

    env = dict(os.environ, BROWSER_PATH=browser)
    out = subprocess.run([sys.executable, "-c", _NO_BROWSER, str(tmp_path / "x")], env=env,
                         capture_output=True, text=True, timeout=120)
    lines = out.stdout.splitlines()
    assert len(lines) == 2, (out.stdout, out.stderr[-2000:])
    assert float(lines[0]) < limit_s, lines
    assert "needs Chrome or Chromium" in lines[1] and browser in lines[1]
    assert not (tmp_path / "x.png").exists()
