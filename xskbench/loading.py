"""Reading config and grid files with limits: hostile or odd input is one clear ValueError.

A config file is small, flat and plain, so anything else is refused before it can cost
memory or time: files that are not regular (``/dev/zero``, a FIFO) or larger than
:data:`MAX_BYTES`, YAML aliases (an alias bomb expands a few hundred bytes into gigabytes),
nesting deeper than :data:`MAX_DEPTH` and strings longer than :data:`MAX_STR`; the fields
check numbers before converting them (an int beyond :data:`MAX_INT` is out of every range).
Messages quote at most :data:`QUOTE` characters of a value.
"""
from __future__ import annotations

import json
import os
import stat
from pathlib import Path
from typing import Any

import yaml

MAX_BYTES = 1 << 20   # a config or grid file is a few kB
MAX_DEPTH = 16        # a grid's sample spec is 4 levels deep
MAX_STR = 4096        # no field takes a longer string
MAX_INT = 1 << 63     # every int field fits in 64 bits; floats are read as floats
QUOTE = 80            # characters of a value an error message shows


def quote(value: Any, limit: int = QUOTE) -> str:
    """``repr(value)`` cut to ``limit`` characters (containers are cut before they are
    rendered, so a huge value never costs memory here)."""
    if isinstance(value, list | tuple | dict | set) and len(value) > limit:
        return f"<{type(value).__name__} of {len(value)} items>"
    if isinstance(value, int) and value.bit_length() > 3 * limit:  # > limit digits
        return f"<int of about {int(value.bit_length() * 0.30103) + 1} digits>"
    if isinstance(value, str) and len(value) > limit:
        value = value[:limit]
    text = repr(value)
    return text if len(text) <= limit else text[:limit - 3] + "..."


def one_line(err: BaseException) -> str:
    return " ".join(str(err).split())


def read_text(path: str | Path, max_bytes: int = MAX_BYTES) -> str:
    """The UTF-8 text of a regular file of at most ``max_bytes``; ValueError naming the
    file."""
    path = Path(path)
    try:
        st = os.stat(path)
    except OSError as err:
        raise ValueError(f"cannot read {path}: {err.strerror}") from None
    if not stat.S_ISREG(st.st_mode):
        kind = "a directory" if stat.S_ISDIR(st.st_mode) else "not a regular file"
        raise ValueError(f"cannot read {path}: {kind}")
    if st.st_size > max_bytes:
        raise ValueError(f"{path}: {st.st_size} bytes; allowed: at most {max_bytes}")
    try:
        # O_NONBLOCK: a file swapped for a FIFO after the stat cannot hang the open.
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
        with os.fdopen(fd, "rb") as f:
            data = f.read(max_bytes + 1)
    except OSError as err:
        raise ValueError(f"cannot read {path}: {err.strerror}") from None
    if len(data) > max_bytes:
        raise ValueError(f"{path}: more than {max_bytes} bytes")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as err:
        raise ValueError(f"{path}: not UTF-8 text ({err.reason} at byte {err.start})") from None


class _NoAliasLoader(yaml.SafeLoader):
    """The safe loader without aliases (``*name``) and with a nesting limit."""

    _depth = 0

    def compose_node(self, parent, index):
        if self.check_event(yaml.AliasEvent):
            mark = self.peek_event().start_mark
            raise yaml.YAMLError(f"YAML aliases (*name) are not allowed (line {mark.line + 1})")
        self._depth += 1
        try:
            if self._depth > MAX_DEPTH:
                mark = self.peek_event().start_mark
                raise yaml.YAMLError(f"nested deeper than {MAX_DEPTH} levels "
                                     f"(line {mark.line + 1})")
            return super().compose_node(parent, index)
        finally:
            self._depth -= 1


def parse(text: str, json_text: bool) -> Any:
    """The document in ``text`` (JSON or YAML), checked by :func:`check_plain`."""
    kind = "JSON" if json_text else "YAML"
    try:
        data = json.loads(text) if json_text else yaml.load(text, Loader=_NoAliasLoader)  # noqa: S506 - a SafeLoader
    except RecursionError:
        raise ValueError(f"malformed {kind}: nested deeper than {MAX_DEPTH} levels") from None
    except (json.JSONDecodeError, yaml.YAMLError) as err:
        raise ValueError(f"malformed {kind}: {one_line(err)[:200]}") from None
    except ValueError as err:  # e.g. an integer of more than 4300 digits
        raise ValueError(f"malformed {kind}: {one_line(err)[:200]}") from None
    check_plain(data)
    return data


def check_plain(data: Any, where: str = "") -> None:
    """Refuse what no config holds: nesting beyond MAX_DEPTH, strings beyond MAX_STR, and
    values of other types than JSON's (YAML dates, binary)."""
    stack = [(data, where, 0)]
    while stack:
        value, path, depth = stack.pop()
        if depth > MAX_DEPTH:
            raise ValueError(f"{path or 'document'}: nested deeper than {MAX_DEPTH} levels")
        if isinstance(value, dict):
            for key, item in value.items():
                if not isinstance(key, str | int | float | bool) and key is not None:
                    raise ValueError(f"{path or 'document'}: key {quote(key)} is not a scalar")
                stack.append((item, f"{path}.{key}" if path else str(key), depth + 1))
        elif isinstance(value, list | tuple):
            stack.extend((item, f"{path}[{i}]", depth + 1) for i, item in enumerate(value))
        elif value is None or isinstance(value, bool | int | float):
            continue  # the fields check ranges (huge ints included)
        elif isinstance(value, str):
            if len(value) > MAX_STR:
                raise ValueError(f"{path or 'value'}={quote(value)}: a string of {len(value)} "
                                 f"characters; allowed: at most {MAX_STR}")
        else:  # YAML dates, binary, sets: no field takes them
            raise ValueError(f"{path or 'value'}={quote(value)}: a {type(value).__name__}; "
                             "allowed: numbers, strings, booleans, null, lists and mappings")


def is_json(path: Path) -> bool:
    """True for JSON, False for YAML (by suffix)."""
    suffix = path.suffix.lower()
    if suffix not in (".json", ".yaml", ".yml"):
        raise ValueError(f"{path}: unknown config format {suffix!r}; use .json, .yaml or .yml")
    return suffix == ".json"


def load_document(path: str | Path, *, yaml_default: bool = False) -> Any:
    """The parsed, checked document of a .json/.yaml/.yml file (``yaml_default``: any other
    suffix is read as YAML); ValueError names the file."""
    path = Path(path)
    json_file = path.suffix.lower() == ".json" if yaml_default else is_json(path)
    text = read_text(path)
    try:
        return parse(text, json_file)
    except ValueError as err:
        raise ValueError(f"{path}: {err}") from None
