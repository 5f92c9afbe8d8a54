#!/usr/bin/env python3
"""Strip outputs, execution counts and widget state from notebooks, in place.

Usage:
    python tools/strip_notebooks.py [--check] [NOTEBOOK ...]

With no paths, every ``notebooks/*.ipynb`` is processed. ``--check`` changes nothing and
exits 1 if any notebook would be modified (for CI / ``make lint``).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import nbformat

REPO = Path(__file__).resolve().parent.parent
# Notebook-level metadata that only an executed notebook carries.
VOLATILE_NB_METADATA = ("widgets", "papermill")
VOLATILE_CELL_METADATA = ("execution", "collapsed", "scrolled", "papermill", "ExecuteTime")


def strip(nb: nbformat.NotebookNode) -> bool:
    """Strip ``nb`` in place; return True if anything changed."""
    changed = False
    for key in VOLATILE_NB_METADATA:
        if key in nb.metadata:
            del nb.metadata[key]
            changed = True
    for cell in nb.cells:
        for key in VOLATILE_CELL_METADATA:
            if key in cell.metadata:
                del cell.metadata[key]
                changed = True
        if cell.cell_type != "code":
            continue
        if cell.get("outputs"):
            cell.outputs = []
            changed = True
        if cell.get("execution_count") is not None:
            cell.execution_count = None
            changed = True
    return changed


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("paths", nargs="*", type=Path)
    ap.add_argument("--check", action="store_true", help="report only; exit 1 if dirty")
    args = ap.parse_args(argv)
    paths = args.paths or sorted((REPO / "notebooks").glob("*.ipynb"))
    dirty = []
    for path in paths:
        nb = nbformat.read(path, as_version=4)
        if strip(nb):
            dirty.append(path)
            if not args.check:
                nbformat.write(nb, path)
    verb = "would strip" if args.check else "stripped"
    for path in dirty:
        print(f"{verb}: {path}")
    return 1 if (args.check and dirty) else 0


if __name__ == "__main__":
    sys.exit(main())
