"""Field metadata and the generic validation shared by every config section.

A section is a frozen dataclass deriving from :class:`Section` whose fields carry
:func:`meta` metadata.  Everything else - validation, CLI parsing (:func:`coerce`), the
``xskbench fields`` table and the notebook widgets - is derived from that metadata, so a new
section needs no code beyond its field declarations.
"""

import dataclasses
import functools
import math
import numbers
import re
import types
import typing
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any, ClassVar

from .loading import MAX_INT, quote

_BOOL_WORDS = {"true": True, "false": False, "yes": True, "no": False,
               "on": True, "off": False, "1": True, "0": False}
_NONE_WORDS = {"none", "null", "unbounded"}


def meta(doc: str, unit: str = "", lo: float | None = None, hi: float | None = None,
         choices: tuple | Callable[[], tuple] | None = None, pow2: bool = False,
         step: float | None = None, widget: str | None = None,
         pattern: str | None = None) -> dict:
    """Metadata for ``dataclasses.field``.

    ``choices`` may be a callable evaluated at validation time (e.g. the cost profiles on
    disk); an empty result means "unconstrained".  ``pattern`` is a regex a str must match in
    full.  ``step`` and ``widget`` are hints for the notebook widgets only.
    """
    return {"doc": doc, "unit": unit, "lo": lo, "hi": hi, "choices": choices, "pow2": pow2,
            "step": step, "widget": widget, "pattern": pattern}


def fld(default: Any, doc: str, **kw: Any) -> Any:
    """A dataclass field with a default and :func:`meta` metadata."""
    return field(default=default, metadata=meta(doc, **kw))


def fmt(value: Any) -> str:
    """Short human form of a value, as accepted back by :func:`coerce`."""
    if value is None:
        return "none"
    if isinstance(value, bool):
        return str(value).lower()
    if isinstance(value, float):
        short = f"{value:g}"
        if float(short) != value:  # never lose precision: 148809523.0 stays exact
            return repr(value)
        return short.replace("e+0", "e").replace("e+", "e")  # "1e+09" -> "1e9"
    return str(value)


@dataclass(frozen=True)
class FieldInfo:
    """One field of a section with its metadata resolved (choices evaluated)."""

    section: str
    name: str
    type: str  # e.g. "int", "float|None"
    default: Any
    doc: str
    unit: str
    lo: float | None
    hi: float | None
    choices: tuple | None
    pow2: bool
    step: float | None
    widget: str | None
    pattern: str | None
    base: type  # bool, int, float or str
    optional: bool

    @property
    def path(self) -> str:
        return f"{self.section}.{self.name}"

    def allowed(self) -> str:
        """What the field accepts, e.g. ``a power of two in [32, 32768]``."""
        if self.choices:
            text = "one of " + ", ".join(map(repr, self.choices))
        else:
            text = "a power of two" if self.pow2 else {
                bool: "a bool (true/false)", int: "an int", float: "a number", str: "a string",
            }[self.base]
            if self.lo is not None and self.hi is not None:
                text += f" in [{fmt(self.lo)}, {fmt(self.hi)}]"
            elif self.lo is not None:
                text += f" >= {fmt(self.lo)}"
            elif self.hi is not None:
                text += f" <= {fmt(self.hi)}"
            if self.pattern:
                text += f" matching {self.pattern}"
        return text + (" or none" if self.optional else "")

    def error(self, value: Any) -> ValueError:
        return ValueError(f"{self.path}={quote(value)}: must be {self.allowed()}")

    def check(self, value: Any) -> Any:
        """Return ``value`` normalised to the field's type (numpy ints -> int, int -> float
        for float fields), or raise ValueError naming the field and what is allowed."""
        if value is None and self.optional:
            return None
        if self.base is bool:
            ok = isinstance(value, bool)
        elif self.base is int:
            ok = isinstance(value, numbers.Integral) and not isinstance(value, bool)
        elif self.base is float:
            ok = isinstance(value, numbers.Real) and not isinstance(value, bool)
            # a huge int is out of any float field's range (and would overflow float())
            ok = ok and (abs(value) < MAX_INT if isinstance(value, numbers.Integral)
                         else math.isfinite(value))
        else:
            ok = isinstance(value, str)
        if not ok:
            raise self.error(value)
        norm = self.base(value)
        if ((self.choices and norm not in self.choices)
                or (self.lo is not None and norm < self.lo)
                or (self.hi is not None and norm > self.hi)
                or (self.pow2 and (norm <= 0 or norm & (norm - 1)))
                or (self.pattern and not re.fullmatch(self.pattern, norm))):
            raise self.error(value)
        return norm

    def parse(self, text: str) -> Any:
        """Parse a command-line string into a valid value for this field."""
        word = text.strip().lower()
        if self.optional and word in _NONE_WORDS:
            return None
        try:
            if self.base is bool:
                value = _BOOL_WORDS[word]
            elif self.base is int:
                # Accept "1e6" for ints as long as it is integral.
                try:
                    value = int(word)
                except ValueError:
                    as_float = float(word)
                    if not as_float.is_integer():
                        raise
                    value = int(as_float)
            elif self.base is float:
                value = float(word)
            else:
                value = text.strip()
        except (KeyError, ValueError):
            raise self.error(text) from None
        return self.check(value)


def _split_type(hint: Any) -> tuple[type, bool]:
    """``int`` -> (int, False); ``float | None`` -> (float, True)."""
    if typing.get_origin(hint) in (typing.Union, types.UnionType):
        args = [a for a in typing.get_args(hint) if a is not type(None)]
        if len(args) != 1 or len(typing.get_args(hint)) != 2:
            raise TypeError(f"unsupported field type {hint!r}")
        return args[0], True
    if hint not in (bool, int, float, str):
        raise TypeError(f"unsupported field type {hint!r}")
    return hint, False


@functools.cache
def _static_fields(cls: type) -> tuple[FieldInfo, ...]:
    hints = typing.get_type_hints(cls)
    out = []
    for f in dataclasses.fields(cls):
        base, optional = _split_type(hints[f.name])
        md = {**meta(""), **f.metadata}
        type_name = base.__name__ + ("|None" if optional else "")
        out.append(FieldInfo(cls.SECTION, f.name, type_name, f.default, base=base,
                             optional=optional, **md))
    return tuple(out)


def _resolved(info: FieldInfo) -> FieldInfo:
    """``info`` with its choices resolved now (a callable looks them up: cost profiles)."""
    if callable(info.choices):
        return dataclasses.replace(info, choices=tuple(info.choices()) or None)
    return info


def iter_fields(section_cls: type) -> Iterator[FieldInfo]:
    """The fields of a section class, in declaration order, with choices resolved now."""
    for info in _static_fields(section_cls):
        yield _resolved(info)


def field_info(section_cls: type, name: str) -> FieldInfo:
    """One field by name; ValueError listing the section's fields if unknown."""
    for info in _static_fields(section_cls):
        if info.name == name:
            return _resolved(info)  # only this one's choices: a lookup may glob a directory
    names = ", ".join(f.name for f in _static_fields(section_cls)) or "(none)"
    raise ValueError(f"unknown field {section_cls.SECTION}.{name}; allowed: {names}")


def coerce(section_cls: type, name: str, text: str) -> Any:
    """Parse ``text`` (from the CLI) into a valid value of ``section_cls.name``."""
    return field_info(section_cls, name).parse(text)


def validate_section(obj: Any) -> None:
    """Check every field of a section instance; normalise numeric types in place."""
    for info in iter_fields(type(obj)):
        value = getattr(obj, info.name)
        norm = info.check(value)
        if type(norm) is not type(value):
            object.__setattr__(obj, info.name, norm)  # frozen: only during __post_init__


class Section:
    """Base of the config sections (frozen dataclasses), validated on construction."""

    SECTION: ClassVar[str] = ""

    def __post_init__(self) -> None:
        validate_section(self)
