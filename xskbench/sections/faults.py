"""Section `faults`: fault injection (issue #10). Every default is off.

Periodic faults act in windows [k·period, k·period + length) for k = 1, 2, ... (the run
starts healthy). Cross-field checks (a length needs a longer period, a fault must apply to the
device and workload) are in ``xskbench/faults.py``.
"""

from dataclasses import dataclass

from xskbench.fields import Section, fld


def _us(doc: str) -> float:
    return fld(0.0, doc, unit="us", lo=0.0, hi=1e6)


def _prob(doc: str) -> float:
    return fld(0.0, doc, lo=0.0, hi=1.0)


@dataclass(frozen=True)
class FaultsConfig(Section):
    """Faults: descheduled contexts, lost/late/spiked notifications, fill starvation, bursts."""

    SECTION = "faults"

    stall_context: str = fld("host", "context descheduled by the stall windows: 'host' = the "
                             "device's host side (virtio host, tun vhost, null napi; veth: "
                             "the peer's NAPI, i.e. napi / napi_tx in zerocopy / backlog in "
                             "udp) or any context name of the run (app, napi_rx, guest, ...)",
                             pattern=r"[a-z][a-z0-9_]*")
    stall_us: float = _us("length of each stall window: the context cannot run (charges "
                          "nothing); 0 = off")
    stall_period_us: float = _us("stall windows repeat every this long (> stall_us)")
    irq_lost_prob: float = _prob("probability an interrupt / IPI / wakeup / kick is lost (the "
                                 "target is not scheduled; a later notification recovers it)")
    irq_late_prob: float = _prob("probability a delivered notification is late by irq_late_us")
    irq_late_us: float = _us("extra delay of a late notification")
    spike_us: float = _us("extra delay of every notification issued in a spike window")
    spike_window_us: float = _us("length of each spike window; 0 = off")
    spike_period_us: float = _us("spike windows repeat every this long (> spike_window_us)")
    fill_stop_us: float = _us("length of each window in which the application does not refill "
                              "the fill ring (receive workloads); 0 = off")
    fill_stop_period_us: float = _us("fill-stop windows repeat every this long "
                                     "(> fill_stop_us)")
    burst_factor: float = fld(1.0, "offered rate multiplier inside burst windows; 1 = off",
                              unit="x", lo=1.0, hi=100.0)
    burst_us: float = _us("length of each burst window")
    burst_period_us: float = _us("burst windows repeat every this long (> burst_us)")
