#!/usr/bin/env python3
"""Screenshots of the Explorer in JupyterLab, light and dark theme, 1440 px wide with the
file browser open: ``docs/img/explorer-{light,dark}.png``.

Runs a two-cell notebook (the Explorer with its defaults and a sweep) in a temporary
folder through tools/labdriver.py (JupyterLab + headless Debian chromium), pins a run and
switches the mode to copy so that the delta table shows, and keeps the PNGs small
(a 1440 × 1000 view of the Explorer's figures; the README shows the light one).

    .venv/bin/python tools/screenshots.py [--out docs/img] [--theme light dark]
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "tools"))
import labdriver  # noqa: E402

WIDTH, HEIGHT = 1440, 1000


def _notebook(path: Path) -> None:
    import nbformat

    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell("from xskbench.widgets import Explorer"),
                nbformat.v4.new_code_cell("ex = Explorer()\nex")]
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3",
                                 "language": "python"}
    nbformat.write(nb, path)


def shoot(theme: str, out: Path) -> Path:
    from playwright.sync_api import sync_playwright

    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        _notebook(tmp / "explorer.ipynb")
        with labdriver.lab(tmp, tmp, theme=theme) as base_url, sync_playwright() as p:
            browser = p.chromium.launch(executable_path=labdriver.chromium(),
                                        headless=True, args=labdriver.ARGS)
            try:
                page = browser.new_page(viewport={"width": WIDTH, "height": HEIGHT})
                labdriver.open_and_run(page, base_url, "explorer.ipynb")
                page.click(".xsk-pin")
                page.select_option(".xsk-field-mode select", "copy")
                page.wait_for_function(
                    "() => /copy/.test(document.querySelector('.xsk-fig-cpu .gtitle')"
                    "?.textContent || '')", timeout=60_000)
                page.wait_for_selector(".xsk-compare .xsk-delta", timeout=30_000)
                page.wait_for_timeout(1500)  # the last redraws and the width report
                # the 2×2 figures from the bottleneck line down
                page.evaluate("() => document.querySelector('.xsk-bottleneck')"
                              ".scrollIntoView({block: 'start'})")
                path = out / f"explorer-{theme}.png"
                page.screenshot(path=str(path))
            finally:
                browser.close()
    return path


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", type=Path, default=REPO / "docs" / "img")
    ap.add_argument("--theme", nargs="+", default=["light", "dark"],
                    choices=sorted(labdriver.THEMES))
    args = ap.parse_args(argv)
    args.out.mkdir(parents=True, exist_ok=True)
    labdriver.warm()
    for theme in args.theme:
        path = shoot(theme, args.out)
        print(f"{path}: {path.stat().st_size / 1024:.0f} KB")
    return 0


if __name__ == "__main__":
    sys.exit(main())
