"""RunConfig: a device, its mode and one instance of every section in ``SECTIONS``.

The class is assembled from :data:`xskbench.sections.SECTIONS`, so a new section shows up here
(fields, JSON, overrides) without edits to this module.
"""

import dataclasses
import json
import os
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from xskbench import loading, queues
from xskbench.config_dict import apply, flatten_partial
from xskbench.devices import DEVICES
from xskbench.devices import get as get_device
from xskbench.fields import coerce, field_info, fmt
from xskbench.sections import SECTIONS, section_class
from xskbench.sections import faults as faults_section
from xskbench.umem import XDP_PACKET_HEADROOM, descs_per_packet, rx_frame_size

#: Device -> supported modes (the first is the device's default): a view of the registry.
DEVICE_MODES: dict[str, tuple[str, ...]] = {name: d.modes for name, d in DEVICES.items()}


_SCALARS = ("device", "mode")


def _listing(names: Iterable[Any]) -> str:
    return ", ".join(map(repr, names))


def _one_line(err: Exception) -> str:
    return " ".join(str(err).split())


def check_combination(cfg: Any) -> None:
    """Cross-field checks: the AF_XDP core's (all reported at once), then the device's own,
    multi-buffer's (where the device models it), the faults section's and the multi-queue
    plan's."""
    x, w = cfg.xsk, cfg.workload
    room = rx_frame_size(x)
    problems = [msg for bad, msg in (
        (x.batch_size > x.tx_size,
         f"xsk.batch_size={x.batch_size} must be <= xsk.tx_size={x.tx_size}"),
        (x.batch_size > x.fill_size,
         f"xsk.batch_size={x.batch_size} must be <= xsk.fill_size={x.fill_size}"),
        (w.packet_size > room and not x.multi_buffer,
         f"workload.packet_size={w.packet_size} must be <= xsk.frame_size - xsk.headroom - "
         f"{XDP_PACKET_HEADROOM} (XDP_PACKET_HEADROOM) = {room} with xsk.frame_size="
         f"{x.frame_size}, or set xsk.multi_buffer=true (XDP_USE_SG)"),
        (w.warmup_s >= w.duration_s,
         f"workload.warmup_s={fmt(w.warmup_s)} must be < workload.duration_s={fmt(w.duration_s)}"),
        (x.umem_frames < x.fill_size,
         f"xsk.umem_frames={x.umem_frames} must be >= xsk.fill_size={x.fill_size} "
         "so that the fill ring can be filled"),
    ) if bad]
    if problems:
        raise ValueError("; ".join(problems))
    device = get_device(cfg.device)
    device.validate(cfg)  # first: a device that refuses the flag itself says why
    nseg = descs_per_packet(x, w.packet_size)
    if nseg > 1 and cfg.mode not in device.multi_buffer_modes:
        where = ", ".join(f"{d.name} {'/'.join(d.multi_buffer_modes)}"
                          for d in DEVICES.values() if d.multi_buffer_modes)
        raise ValueError(
            f"xsk.multi_buffer=true with workload.packet_size={w.packet_size} > {room} "
            f"({nseg} descriptors a packet): device {cfg.device!r} in mode {cfg.mode!r} does "
            f"not model multi-buffer frames (modelled: {where}); allowed: "
            f"workload.packet_size <= {room}")
    if nseg * x.batch_size > x.tx_size:  # xdpsock reserves a whole batch of descriptors
        raise ValueError(f"xsk.batch_size={x.batch_size} x {nseg} descriptors a packet must "
                         f"be <= xsk.tx_size={x.tx_size} (workload.packet_size="
                         f"{w.packet_size}, xsk.multi_buffer=true)")
    faults_section.check(cfg, device)
    queues.check(cfg)


class _RunConfigMethods:
    """Behaviour of RunConfig; the fields are added by ``make_dataclass`` below."""

    def __post_init__(self) -> None:
        get_device(self.device).check_mode(self.mode)  # before the sections: names first
        for name, cls in SECTIONS.items():
            if not isinstance(getattr(self, name), cls):
                raise ValueError(f"{name}={getattr(self, name)!r}: must be a {cls.__name__}")
        check_combination(self)

    def to_dict(self) -> dict[str, Any]:
        """Nested plain dict: ``{"device", "mode", "xsk": {...}, ...}``."""
        return {name: getattr(self, name) for name in _SCALARS} | {
            name: _values(getattr(self, name)) for name in SECTIONS}

    def to_json(self, indent: int | None = 1) -> str:
        """Stable JSON (sorted keys)."""
        return json.dumps(self.to_dict(), sort_keys=True, indent=indent)

    @classmethod
    def from_dict(cls, data: Any, *, parse_strings: bool = False) -> "RunConfig":
        """Build from a (partial) nested dict; missing keys take their defaults.

        With ``parse_strings``, string values of non-str fields are parsed as on the command
        line - YAML reads ``1e9`` or ``unbounded`` as strings.
        """
        if not isinstance(data, dict):
            raise ValueError(f"config must be a mapping, not {type(data).__name__}")
        kwargs = {}
        for key, value in data.items():
            if key in _SCALARS:
                kwargs[key] = value
            elif key in SECTIONS:
                kwargs[key] = _section_from_dict(SECTIONS[key], value, parse_strings)
            else:
                raise ValueError(f"unknown key {key!r}; allowed: {_listing(_keys())}")
        return cls(**kwargs)

    @classmethod
    def from_json(cls, text: str) -> "RunConfig":
        try:
            data = json.loads(text)
        except json.JSONDecodeError as err:
            raise ValueError(f"malformed JSON: {err}") from None
        return cls.from_dict(data)

    def replace(self, **changes: Any) -> "RunConfig":
        """Copy with changes: ``cfg.replace(mode="copy", **{"xsk.tx_size": 512})``.

        All changes are applied at once, so the cross checks only see the final combination.
        """
        top: dict[str, Any] = {}
        nested: dict[str, dict[str, Any]] = {}
        for key, value in changes.items():
            section, dot, name = key.partition(".")
            if dot:
                field_info(section_class(section), name)  # unknown names -> ValueError
                nested.setdefault(section, {})[name] = value
            elif key in _keys():
                top[key] = value
            else:
                raise ValueError(f"unknown key {key!r}; allowed: {_listing(_keys())}")
        for section, values in nested.items():
            top[section] = dataclasses.replace(top.get(section, getattr(self, section)), **values)
        return dataclasses.replace(self, **top)

    def override(self, assignments: Iterable[str]) -> "RunConfig":
        """Copy with command-line assignments ``["xsk.tx_size=512", "mode=copy", ...]``."""
        changes = {}
        for item in assignments:
            key, eq, text = item.partition("=")
            key = key.strip()
            section, dot, name = key.partition(".")
            if dot:
                changes[key] = coerce(section_class(section), name, text)
            elif eq and key in _SCALARS:
                changes[key] = text.strip()
            else:
                raise ValueError(f"{item!r}: expected SECTION.FIELD=VALUE, device=... or mode=...")
        return self.replace(**changes)


def _keys() -> tuple[str, ...]:
    return _SCALARS + tuple(SECTIONS)


def _values(section: Any) -> dict[str, Any]:
    """A section's fields by name: validated scalars, read as they are (dataclasses.asdict
    deep-copies each value, which cost a short sweep point as much as its run)."""
    return {f.name: getattr(section, f.name) for f in dataclasses.fields(section)}


def _section_from_dict(cls: type, data: Any, parse_strings: bool) -> Any:
    if not isinstance(data, dict):
        raise ValueError(f"{cls.SECTION} must be a mapping, not {type(data).__name__}")
    for name in data:
        field_info(cls, name)  # unknown names -> ValueError listing the allowed ones
    if parse_strings:
        data = {k: coerce(cls, k, v) if isinstance(v, str) else v for k, v in data.items()}
    return cls(**data)


RunConfig = dataclasses.make_dataclass(
    "RunConfig",
    [("device", str, dataclasses.field(default="null")),
     ("mode", str, dataclasses.field(default="zerocopy"))]
    + [(name, cls, dataclasses.field(default_factory=cls)) for name, cls in SECTIONS.items()],
    bases=(_RunConfigMethods,),
    frozen=True,
    # Keep it importable (pickle, multiprocessing) as xskbench.config.RunConfig.
    namespace={"__module__": __name__,
               "__doc__": "Everything that defines one emulated run (frozen, validated)."},
)

from_dict = RunConfig.from_dict
from_json = RunConfig.from_json
replace = RunConfig.replace
override = RunConfig.override


def load(path: str | Path) -> "RunConfig":
    """Read a .json or .yaml/.yml config (partial configs take defaults), within the limits
    of :mod:`xskbench.loading`; the JSON that :mod:`xskbench.export` writes loads too."""
    path = Path(path)
    json_file = loading.is_json(path)
    data = loading.load_document(path)
    if isinstance(data, dict) and "xskbench_version" in data and "config" in data:
        data = data["config"]  # the JSON that xskbench.export writes beside a figure
    try:
        if isinstance(data, dict):
            _check_scalar_fields(data)
        # An empty YAML file means "all defaults".
        return RunConfig.from_dict({} if data is None else data, parse_strings=not json_file)
    except (ValueError, TypeError) as err:
        raise ValueError(f"{path}: {loading.one_line(err)}") from None


def _check_scalar_fields(data: dict) -> None:
    """A list or mapping where one value belongs (``device: [..]``, ``xsk: {tx_size: {..}}``)
    is named here, briefly, before the config's own checks would repr all of it."""
    for key, value in data.items():
        values = value.items() if key in SECTIONS and isinstance(value, dict) else \
            [(None, value)] if key in ("device", "mode") else []
        for name, v in values:
            if isinstance(v, list | dict):
                where = f"{key}.{name}" if name is not None else key
                raise ValueError(f"{where}={loading.quote(v)}: a {type(v).__name__}; allowed: "
                                 "one value (see `xskbench fields`)")


def full_dict(base: Any) -> dict[str, Any]:
    """A base - a RunConfig, a partial config dict, a config file path or None (defaults) -
    as a full nested config dict (not validated as a combination)."""
    if base is None:
        return RunConfig().to_dict()
    if isinstance(base, RunConfig):
        return base.to_dict()
    if isinstance(base, str | os.PathLike):
        return load(base).to_dict()
    if not isinstance(base, Mapping):
        raise ValueError(f"base must be a RunConfig, a (partial) config dict or a path, "
                         f"not {type(base).__name__}")
    return apply(RunConfig().to_dict(), flatten_partial(base))
