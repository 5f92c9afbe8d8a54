"""xskbench: an emulation workbench for the AF_XDP datapaths of virtual devices."""
import hashlib
import importlib
import os
from pathlib import Path

from .version import __version__


def _numba_cache_dir():
    """numba checks only a function's own file for staleness, not the kernels it calls, so
    key the cache by a hash of every source file of the package."""
    h = hashlib.sha256()
    for p in sorted(Path(__file__).parent.rglob("*.py")):
        h.update(p.read_bytes())
    return Path.home() / ".cache" / "xskbench" / "numba" / h.hexdigest()[:16]


os.environ.setdefault("NUMBA_CACHE_DIR", str(_numba_cache_dir()))

from .config import RunConfig, load  # noqa: E402
from .run import run  # noqa: E402

__all__ = ["RunConfig", "__version__", "load", "run"]

# Imported on first use, so that ``import xskbench`` stays light (no plotly, no ipywidgets):
# ``xskbench.widgets.Explorer()``, ``xskbench.plotting.cpu_figure(res)``,
# ``xskbench.export(fig_or_result, stem)`` (the module is callable).
_LAZY = ("widgets", "plotting", "export")


def __getattr__(name):
    if name in _LAZY:
        return importlib.import_module(f"{__name__}.{name}")
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
