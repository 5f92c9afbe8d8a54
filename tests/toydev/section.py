"""Section `toy`: the loopback NIC's NAPI placement, budget and interrupt delay."""
from dataclasses import dataclass

from xskbench.fields import Section, fld


@dataclass(frozen=True)
class ToyConfig(Section):
    """Toy loopback NIC: NAPI takes TX descriptors and completes them at once."""

    SECTION = "toy"

    app_cpu: int = fld(0, "CPU running the application", lo=0, hi=63)
    napi_cpu: int = fld(1, "CPU running NAPI (softirq)", lo=0, hi=63)
    napi_budget: int = fld(64, "descriptors per NAPI poll", unit="descs", lo=1, hi=1024)
    irq_delay_ns: float = fld(1000.0, "interrupt delivery delay", unit="ns", lo=0.0, hi=1e6)
