"""The null device: an ideal NIC that sinks TX and sources RX at line rate."""

from dataclasses import dataclass

from xskbench.fields import Section, fld


@dataclass(frozen=True)
class NullConfig(Section):
    """Null NIC: a wire rate, one descriptor ring, NAPI and IRQ placement."""

    SECTION = "null"

    line_rate_pps: float = fld(148_809_523.0, "the NIC's packet-rate limit (on top of the "
                               "bit rate)", unit="pps", lo=1e3, hi=1e9)
    link_gbps: float = fld(100.0, "wire bit rate: a frame occupies its length + 4 B FCS + "
                           "20 B preamble and inter-frame gap", unit="Gbit/s", lo=0.001,
                           hi=1000.0)
    ring_size: int = fld(1024, "hardware descriptor ring", unit="descs", lo=64, hi=8192,
                         pow2=True)
    napi_budget: int = fld(64, "packets per NAPI poll", unit="packets", lo=1, hi=1024)
    app_cpu: int = fld(0, "CPU running the application", lo=0, hi=63)
    napi_cpu: int = fld(1, "CPU running NAPI (softirq)", lo=0, hi=63)
    irq_delay_ns: float = fld(1000.0, "interrupt delivery delay", unit="ns", lo=0.0, hi=1e6)
