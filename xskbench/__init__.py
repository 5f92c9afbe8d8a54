"""xskbench: an emulation workbench for the AF_XDP datapaths of virtual devices."""
import hashlib
import os
from pathlib import Path

__version__ = "0.1.0"


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
