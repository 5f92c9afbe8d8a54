"""The Device record: everything the layers above the kernels need to know about a device.

A record imports no numba: its ``setup`` module (arena building) and kernel load on the first
run, so that configs, the CLI, widgets and sweeps stay quick to import.
"""
import importlib
from collections.abc import Callable
from dataclasses import dataclass
from types import SimpleNamespace
from typing import Any

from xskbench.kernels.layout import WORKLOADS  # the kernels' numbering (no numba there)


def _paced_by_rate(cfg: Any) -> bool:
    """A set rate on a txonly sender paces the offered traffic."""
    return cfg.workload.rate_pps is not None and cfg.workload.kind == "txonly"


def _always(cfg: Any) -> bool:
    return True


def _no_check(cfg: Any) -> None:
    return None


def in_order(declared: tuple[str, ...], contexts: Any) -> tuple:
    """``contexts`` (machine.Context records) in the order of the kernel's ``CONTEXTS``
    names, so a context's position - its id in the kernel - comes from one place.
    ValueError if the names differ."""
    by_name = {c.name: c for c in contexts}
    if sorted(by_name) != sorted(declared):
        raise ValueError(f"contexts {sorted(by_name)} do not match the kernel's CONTEXTS "
                         f"{list(declared)}")
    return tuple(by_name[name] for name in declared)


def declared_contexts(kernel: Any, mode: str) -> tuple[str, ...]:
    """A kernel's context names for ``mode``: its ``CONTEXTS`` tuple, or ``CONTEXTS[mode]``
    when its modes run different contexts (virtio-net's pmd)."""
    declared = kernel.CONTEXTS
    return declared[mode] if isinstance(declared, dict) else declared


@dataclass(frozen=True)
class Device:
    """One emulated device (see README "Add a device")."""

    name: str                   # the config's ``device`` value
    package: str                # its folder as a module: ``setup`` and ``kernel`` live there
    section: type               # its config section (a fields.Section subclass)
    modes: tuple[str, ...]      # the first is the device's default
    workloads: tuple[str, ...] = WORKLOADS
    about: str = ""
    check: Callable[[Any], None] = _no_check  # device-only cross-field rules: raise ValueError
    host_cpu_fields: tuple[str, ...] = ()     # backend CPUs: per queue or shared (mq.host)
    host_cpus_apart: bool = False             # host CPUs numbered apart from the guest's
    wire_field: str | tuple[str, ...] | None = None  # rates every queue shares (fair shares)
    # faults: whether a run has interrupts / IPIs / wakeups to delay or lose, and whether its
    # offered traffic is paced (so that a burst fault has something to burst)
    notifies: Callable[[Any], bool] = _always
    paced: Callable[[Any], bool] = _paced_by_rate
    notify_note: str = ""  # when ``notifies`` depends on more than the mode, say how
    # modes whose driver passes packets longer than one UMEM buffer (xsk.multi_buffer)
    multi_buffer_modes: tuple[str, ...] = ()
    # the names of a run's contexts for a config (its kernel's ids, in order), so that the
    # config can check faults.stall_context; None: checked when the run builds them
    contexts: Callable[[Any], tuple[str, ...]] | None = None

    @property
    def section_name(self) -> str:
        return self.section.SECTION

    @property
    def impl(self) -> Any:
        """The device's ``setup`` module: ``setup(cfg, hz, cc, cb)``, ``packets_in_flight``."""
        return importlib.import_module(f"{self.package}.setup")

    def counterpart(self, mcfg: dict) -> dict | str:
        """The emulated config (a dict for RunConfig.from_dict) of a configuration measured on
        the real kernel (``xskbench measure``), or a string saying why there is none: the
        device folder's ``counterpart.py`` decides (measured.py reads it)."""
        try:
            module = importlib.import_module(f"{self.package}.counterpart")
        except ModuleNotFoundError:
            return f"{self.name}: no emulated counterpart of this real setup yet"
        return module.counterpart(mcfg)

    @property
    def kernel(self) -> Any:
        """The device's numba kernel module: ``simulate(M, OFF, cc, cb)``."""
        return importlib.import_module(f"{self.package}.kernel")

    def notifies_in_some_mode(self) -> bool:
        """Whether ``notifies`` holds in any mode with the section's defaults."""
        return any(self.notifies(SimpleNamespace(mode=mode, **{self.section_name: self.section()}))
                   for mode in self.modes)

    def check_mode(self, mode: Any) -> None:
        if mode not in self.modes:
            raise ValueError(f"mode={mode!r}: device {self.name!r} supports "
                             f"{', '.join(map(repr, self.modes))}")

    def validate(self, cfg: Any) -> None:
        """The device's own rules for ``cfg`` (mode, workload, then ``check``)."""
        self.check_mode(cfg.mode)
        if cfg.workload.kind not in self.workloads:
            raise ValueError(f"workload.kind={cfg.workload.kind!r}: device {self.name!r} "
                             f"models {', '.join(map(repr, self.workloads))}"
                             f"{' (' + self.about + ')' if self.about else ''}")
        self.check(cfg)
