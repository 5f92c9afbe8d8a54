"""A JupyterLab server and headless Debian chromium (Playwright) for the browser test, the
browser latency benchmark and the screenshots.

``with lab(root_dir, tmp) as base_url:`` starts JupyterLab on 127.0.0.1 (a token, a free
port, no autosave, no news) and always stops it by its PID; :func:`open_and_run` opens a
notebook and runs all its cells.  Debian's chromium is used, never a download.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
CHROMIUM = "/usr/bin/chromium"
ARGS = ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
        "--disable-background-networking", "--disable-component-update", "--disable-sync"]
TOKEN = "xskbench-browser"
# JupyterLab settings for this server only: no autosave (notebooks stay committed without
# outputs), no news toast, and the theme asked for.
SETTINGS = {
    "@jupyterlab/docmanager-extension/plugin.jupyterlab-settings": '{"autosave": false}',
    "@jupyterlab/apputils-extension/notification.jupyterlab-settings":
        '{"fetchNews": "false", "checkForUpdates": false}',
}
THEMES = {"light": "JupyterLab Light", "dark": "JupyterLab Dark"}

JS_RUN_ALL = """async () => {
    const panel = window.jupyterapp.shell.currentWidget;
    await panel.context.ready;
    await panel.sessionContext.ready;
    await panel.revealed;
    await window.jupyterapp.commands.execute('notebook:run-all-cells');
}"""
JS_CELLS_STARTED = r"""() => Array.from(
    document.querySelectorAll('.jp-CodeCell .jp-InputArea-prompt'))
    .some(e => /\[(\*|\d+)\]/.test(e.textContent))"""
JS_CELLS_DONE = """() => {
    const p = Array.from(document.querySelectorAll('.jp-CodeCell .jp-InputArea-prompt'));
    return p.length > 0 && p.every(e => /\\[\\d+\\]/.test(e.textContent));
}"""


def chromium() -> str:
    path = CHROMIUM if Path(CHROMIUM).exists() else shutil.which("chromium")
    assert path, "Debian's chromium is needed: apt-get install -y chromium (or make chromium)"
    return path


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _wait_port(port: int, proc: subprocess.Popen, timeout: float) -> None:
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        assert proc.poll() is None, "jupyter lab exited early"
        try:
            socket.create_connection(("127.0.0.1", port), 0.5).close()
            return
        except OSError:
            time.sleep(0.2)
    raise TimeoutError(f"jupyter lab did not listen on {port}")


def _stop(proc: subprocess.Popen) -> None:
    if proc.poll() is None:
        os.kill(proc.pid, signal.SIGTERM)  # jupyter shuts its kernels down on SIGTERM
        try:
            proc.wait(20)
        except subprocess.TimeoutExpired:
            os.kill(proc.pid, signal.SIGKILL)
            proc.wait(10)


@contextlib.contextmanager
def lab(root_dir: Path, tmp: Path, theme: str = "light") -> Iterator[str]:
    """A JupyterLab server on ``root_dir`` (logs and settings under ``tmp``); yields its
    base URL ``http://127.0.0.1:PORT``."""
    settings = tmp / "settings"
    texts = dict(SETTINGS)
    texts["@jupyterlab/apputils-extension/themes.jupyterlab-settings"] = json.dumps(
        {"theme": THEMES[theme], "adaptive-theme": False})
    for name, text in texts.items():
        (settings / name).parent.mkdir(parents=True, exist_ok=True)
        (settings / name).write_text(text)
    port = _free_port()
    env = dict(os.environ, JUPYTER_PLATFORM_DIRS="1", PYDEVD_DISABLE_FILE_VALIDATION="1",
               PYTHONPATH=os.pathsep.join(p for p in (str(REPO), os.environ.get("PYTHONPATH"))
                                          if p))
    log = (tmp / "lab.log").open("w")
    proc = subprocess.Popen(
        [sys.executable, "-m", "jupyter", "lab", "--no-browser", "--allow-root",
         "--ip=127.0.0.1", f"--port={port}", f"--ServerApp.token={TOKEN}",
         f"--ServerApp.root_dir={root_dir}", "--LabApp.expose_app_in_browser=True",
         f"--LabApp.user_settings_dir={settings}",
         f"--LabApp.workspaces_dir={tmp / 'workspaces'}"],
        stdout=log, stderr=subprocess.STDOUT, env=env, cwd=root_dir)
    try:
        _wait_port(port, proc, 60)
        yield f"http://127.0.0.1:{port}"
    finally:
        _stop(proc)
        log.close()


def open_and_run(page, base_url: str, notebook: str) -> None:
    """Open ``notebook`` (relative to the server's root), run all cells and wait until the
    Explorer's figures are drawn and every cell has finished."""
    from playwright.sync_api import TimeoutError as PlaywrightTimeout

    # ?reset: a fresh workspace, so that this notebook is the only (and current) one
    page.goto(f"{base_url}/lab/tree/{notebook}?reset&token={TOKEN}", timeout=60_000)
    page.wait_for_function(
        "() => window.jupyterapp?.shell.currentWidget?.sessionContext?.session"
        "?.kernel?.status === 'idle'", timeout=90_000)
    for attempt in range(3):  # a run-all sent while the page still settles can be lost
        page.evaluate(JS_RUN_ALL)
        try:
            page.wait_for_function(JS_CELLS_STARTED, timeout=20_000)
            break
        except PlaywrightTimeout:
            print(f"run-all attempt {attempt + 1}: no cell started")
    page.wait_for_selector(".xsk-bottleneck b", state="attached", timeout=120_000)
    page.wait_for_selector(".xsk-fig-cpu .barlayer path", state="attached", timeout=60_000)
    page.wait_for_function(JS_CELLS_DONE, timeout=120_000)


def warm(devices: tuple[str, ...] = ("null",)) -> None:
    """Load (or compile) the devices' kernels into numba's on-disk cache, which the
    notebook's kernel shares, outside any timing."""
    import xskbench
    from xskbench.config import DEVICE_MODES

    for device in devices:
        cfg = xskbench.RunConfig(device=device, mode=DEVICE_MODES[device][0])
        xskbench.run(cfg.replace(**{"workload.duration_s": 0.0005, "workload.warmup_s": 0.0}))
