"""What machine a measurement came from: CPU model and clock, kernel, CPUs, load."""
from __future__ import annotations

import contextlib
import gzip
import os
import platform
import statistics


def machine_info() -> dict:
    un = os.uname()
    return {"kernel": un.release, "machine": un.machine, "cpus": os.cpu_count(),
            "cpu_model": cpu_model(), "cpu_mhz": cpu_mhz(), "python": platform.python_version(),
            "loadavg": [round(x, 2) for x in os.getloadavg()],
            "cpu_accounting": {True: "irq_time", False: "tick", None: "unknown"}[
                irq_time_accounting()],
            "note": "per-process times include softirq served on their stack unless "
                    "cpu_accounting is irq_time; 'softirq_pct' is the /proc/stat share of all "
                    "CPUs (percent of one CPU), already inside the contexts' CPU"}


def cpu_model() -> str:
    with contextlib.suppress(OSError), open("/proc/cpuinfo") as f:
        for line in f:
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    return platform.processor()


def cpu_mhz() -> float | None:
    """Mean of /proc/cpuinfo's "cpu MHz" (the current clock of each CPU)."""
    mhz = []
    with contextlib.suppress(OSError), open("/proc/cpuinfo") as f:
        mhz = [float(ln.split(":", 1)[1]) for ln in f if ln.startswith("cpu MHz")]
    return round(statistics.fmean(mhz), 1) if mhz else None


def irq_time_accounting() -> bool | None:
    try:
        with gzip.open("/proc/config.gz", "rt") as f:
            return "CONFIG_IRQ_TIME_ACCOUNTING=y" in f.read()
    except OSError:
        return None
