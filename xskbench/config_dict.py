"""Configs as plain data: nested dicts, flat ``{"section.field": value}`` dicts and columns.

A sweep, a table row and a notebook's loop all speak in field paths (``"xsk.batch_size"``,
``"device"``); this is the one place that turns them into nested config dicts and back,
so that nothing else re-implements :meth:`RunConfig.replace` on dicts.
"""
from __future__ import annotations

import copy
import math
from collections.abc import Mapping
from typing import Any

import numpy as np

from .fields import FieldInfo, field_info, iter_fields
from .sections import SECTIONS, section_class

SCALARS = ("device", "mode")


def field_of(path: str) -> FieldInfo | None:
    """The FieldInfo of ``"section.name"`` (None for ``device`` / ``mode``); ValueError if
    the path names no field."""
    if path in SCALARS:
        return None
    section, dot, name = path.partition(".")
    if not dot:
        raise ValueError(f"unknown field {path!r}: expected SECTION.FIELD, device or mode")
    return field_info(section_class(section), name)


def paths() -> list[str]:
    """Every config path, in config order: the columns a tidy table has for its config."""
    return list(SCALARS) + [f"{name}.{f.name}" for name, cls in SECTIONS.items()
                            for f in iter_fields(cls)]


def path_types() -> dict[str, str]:
    """Path -> the name of its base type (``"int"``, ``"float"``, ``"bool"``, ``"str"``)."""
    return dict.fromkeys(SCALARS, "str") | {
        f"{name}.{f.name}": f.base.__name__ for name, cls in SECTIONS.items()
        for f in iter_fields(cls)}


def plain(value: Any) -> Any:
    """numpy scalars -> Python scalars (lists and dicts pass through)."""
    return value.item() if isinstance(value, np.generic) else value


def flatten(nested: Mapping, prefix: str = "") -> dict[str, Any]:
    """``{"xsk": {"tx_size": 512}, "device": "null"}`` -> ``{"xsk.tx_size": 512, ...}``."""
    out = {}
    for key, value in nested.items():
        if isinstance(value, Mapping):
            out.update(flatten(value, f"{prefix}{key}."))
        else:
            out[f"{prefix}{key}"] = value
    return out


def unflatten(flat: Mapping[str, Any], *, nan_is_none: bool = False) -> dict[str, Any]:
    """The inverse of :func:`flatten` for config paths (other keys are ignored); with
    ``nan_is_none`` a NaN (a table's missing value) reads as None."""
    nested: dict[str, Any] = {}
    for path in paths():
        if path not in flat:
            continue
        value = plain(flat[path])
        if nan_is_none and isinstance(value, float) and math.isnan(value):
            value = None
        _put(nested, path, value)
    return nested


def _put(nested: dict, path: str, value: Any) -> None:
    section, dot, name = path.partition(".")
    if dot:
        nested.setdefault(section, {})[name] = value
    else:
        nested[path] = value


def flatten_partial(data: Mapping, what: str = "base") -> dict[str, Any]:
    """A partial nested config -> flat changes; ValueError for unknown keys or a section
    that is not a mapping (a None section is skipped)."""
    out = {}
    for key, value in data.items():
        if key in SCALARS:
            out[key] = value
        elif key in SECTIONS:
            if value is None:
                continue
            if not isinstance(value, Mapping):
                raise ValueError(f"{what}: {key} must be a mapping, not {type(value).__name__}")
            for name, v in value.items():
                out[f"{key}.{name}"] = v
        else:
            allowed = ", ".join(map(repr, SCALARS + tuple(SECTIONS)))
            raise ValueError(f"{what}: unknown key {key!r}; allowed: {allowed}")
    return out


def normalise(path: str, value: Any) -> Any:
    """A value as the config would hold it: YAML strings parsed ("1e9", "none"), numpy
    scalars unwrapped, ints of float fields made floats.  Invalid values are returned
    unchanged: building the config then reports them."""
    value = plain(value)
    info = field_of(path)
    if info is None:
        # YAML reads an unquoted `device: null` as None; no device is called None.
        return "null" if path == "device" and value is None else value
    try:
        if isinstance(value, str) and info.base is not str:
            return info.parse(value)
        return info.check(value)
    except ValueError:
        return value


def apply(nested: Mapping, changes: Mapping[str, Any]) -> dict:
    """A copy of the nested config dict with ``{path: value}`` changes (normalised)."""
    out = copy.deepcopy(dict(nested))
    for path, value in changes.items():
        field_of(path)  # unknown paths -> ValueError
        _put(out, path, normalise(path, value))
    return out
