"""Shared pytest setup: keep it minimal.

- The repo root is importable both in this process and in subprocesses (notebook kernels,
  CLI runs), so the tests use the working tree even without an editable install.
- Jupyter noise that has nothing to do with xskbench is silenced.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent

if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))
# the scripts in benchmarks/ are importable by name (bench, ff_grid, perf_profile): their tests
sys.path.insert(1, str(REPO / "benchmarks"))
_pp = os.environ.get("PYTHONPATH", "")
if str(REPO) not in _pp.split(os.pathsep):
    os.environ["PYTHONPATH"] = os.pathsep.join(p for p in (str(REPO), _pp) if p)

# jupyter_core's platformdirs migration DeprecationWarning.
os.environ.setdefault("JUPYTER_PLATFORM_DIRS", "1")
# debugpy's "frozen modules" warning printed by every ipykernel start.
os.environ.setdefault("PYDEVD_DISABLE_FILE_VALIDATION", "1")
