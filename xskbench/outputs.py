"""Output files: checked before the work that fills them, written atomically after it."""
from __future__ import annotations

import os
import tempfile
from collections.abc import Callable
from pathlib import Path


def check_writable(path: str | Path, option: str) -> None:
    """ValueError (naming ``option`` and the path) unless ``path`` can be written: its
    directory exists or can be created, and a file can be created there; ``path`` itself,
    if it exists, must be a regular file."""
    path = Path(path)
    if path.exists() and not path.is_file():
        raise ValueError(f"{option} {path}: exists and is not a regular file")
    parent = path.parent
    try:
        parent.mkdir(parents=True, exist_ok=True)
        fd, probe = tempfile.mkstemp(dir=parent, prefix=f".{path.name}.", suffix=".probe")
        os.close(fd)
        os.unlink(probe)
    except OSError as err:
        raise ValueError(f"{option} {path}: cannot write there ({err.strerror})") from None


def write_atomically(path: str | Path, write: Callable[[Path], None]) -> None:
    """``write(tmp)`` into a temporary file beside ``path``, then rename it over ``path``:
    readers see the old file or the whole new one, never half of it."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    os.close(fd)
    try:
        write(Path(tmp))
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
