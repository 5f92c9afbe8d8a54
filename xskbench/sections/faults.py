"""Section `faults`: fault injection (issue #10). Every default is off.

Periodic faults act in windows [k·period, k·period + length) for k = 1, 2, ... (the run
starts healthy). Cross-field checks (a length needs a longer period, a fault must apply to the
device and workload): :func:`check`, which RunConfig calls.
"""

from dataclasses import dataclass

from xskbench.devices import DEVICES
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


# A window shorter than this cannot be honoured: the engine charges whole ops of tens of
# cycles, so a context sees a window only between two of them.
MIN_WINDOW_US = 0.1
# Each window is a row of the fault report (with its recovery time): a bounded number per run.
MAX_WINDOWS = 200_000

# (kind, length field, period field): the periodic faults, whose windows get recovery times
WINDOWS = (("stall", "stall_us", "stall_period_us"),
           ("spike", "spike_window_us", "spike_period_us"),
           ("fill_stop", "fill_stop_us", "fill_stop_period_us"),
           ("burst", "burst_us", "burst_period_us"))


def _fmt(x):
    return f"{x:g}"


def active(f):
    """The fault kinds a FaultsConfig switches on."""
    on = [kind for kind, length, _ in WINDOWS if getattr(f, length) > 0]
    if f.spike_us == 0 and "spike" in on:
        on.remove("spike")
    if f.burst_factor == 1 and "burst" in on:
        on.remove("burst")
    if f.irq_lost_prob > 0 or (f.irq_late_prob > 0 and f.irq_late_us > 0):
        on.append("irq")
    return on


def notifying_devices():
    """The devices whose model delivers notifications in at least one mode (from the
    registry's ``notifies`` on each mode, the other fields at their defaults)."""
    return ", ".join(d.name + (f" ({d.notify_note})" if d.notify_note else "")
                     for d in DEVICES.values() if d.notifies_in_some_mode())


def stall_context_problem(cfg, names):
    """Why ``faults.stall_context`` names no context of a run whose contexts are ``names``
    ('host' is the one the device marks as its backend), or None when it names one."""
    f = cfg.faults
    if f.stall_context == "host" or f.stall_context in names:
        return None
    names = ", ".join(repr(n) for n in dict.fromkeys(names) if n != "host")
    return (f"faults.stall_context={f.stall_context!r}: device {cfg.device!r} mode "
            f"{cfg.mode!r} has the contexts 'host', {names}")


def check(cfg, device):
    """Cross-field checks of the faults section for ``cfg`` on ``device`` (a Device record)."""
    f = cfg.faults
    problems = []
    run_us = cfg.workload.duration_s * 1e6
    for kind, length, period in WINDOWS:
        d, p = getattr(f, length), getattr(f, period)
        if d > 0 and p <= d:
            problems.append(f"faults.{period}={_fmt(p)} must be > faults.{length}={_fmt(d)} "
                            f"(the {kind} windows [k·period, k·period + length), k >= 1)")
        elif 0 < d < MIN_WINDOW_US:
            problems.append(f"faults.{length}={_fmt(d)} is below the engine's time resolution "
                            f"for a window; allowed: 0 (off) or >= {_fmt(MIN_WINDOW_US)}")
        elif d > 0 and run_us / p > MAX_WINDOWS:
            problems.append(f"faults.{period}={_fmt(p)} gives {run_us / p:.3g} {kind} windows "
                            f"in workload.duration_s={_fmt(cfg.workload.duration_s)}; allowed: "
                            f"at most {MAX_WINDOWS} (faults.{period} >= "
                            f"{_fmt(run_us / MAX_WINDOWS)})")
    if f.spike_us > 0 and f.spike_window_us == 0:
        problems.append(f"faults.spike_us={_fmt(f.spike_us)} needs faults.spike_window_us > 0")
    if f.burst_factor > 1 and f.burst_us == 0:
        problems.append(f"faults.burst_factor={_fmt(f.burst_factor)} needs faults.burst_us > 0")
    on = active(f)
    where = f"device {cfg.device!r} mode {cfg.mode!r} workload {cfg.workload.kind!r}"
    if ("irq" in on or "spike" in on) and not device.notifies(cfg):
        name = "faults.irq_lost_prob/irq_late_prob" if "irq" in on else "faults.spike_us"
        problems.append(f"{name}: {where} has no interrupt, IPI or wakeup delivery to fault "
                        f"(allowed: {name}=0 here, or a device and mode that notifies: "
                        f"{notifying_devices()})")
    if "fill_stop" in on and (cfg.workload.kind == "txonly" or cfg.mode == "pmd"):
        problems.append(f"faults.fill_stop_us={_fmt(f.fill_stop_us)}: {where} does not refill "
                        "a fill ring (allowed: workload rxdrop or l2fwd, not mode pmd)")
    if "burst" in on and not device.paced(cfg):
        problems.append(f"faults.burst_factor={_fmt(f.burst_factor)}: {where} offers unpaced "
                        "traffic (allowed: a set workload.rate_pps with txonly, not mode pmd; "
                        "or the null NIC's receive arrivals)")
    if f.stall_us > 0 and device.contexts is not None:
        problem = stall_context_problem(cfg, device.contexts(cfg))
        if problem:
            problems.append(problem)
    if problems:
        raise ValueError("; ".join(problems))
