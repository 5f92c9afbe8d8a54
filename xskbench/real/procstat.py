"""/proc accounting: CPU per CPU and per process, ksoftirqd, softnet and the UDP MIB."""
from __future__ import annotations

import os

USER_HZ = os.sysconf("SC_CLK_TCK")
CPU_FIELDS = ("user", "nice", "system", "idle", "iowait", "irq", "softirq", "steal")


def read_proc_stat() -> dict[str, list[int]]:
    out = {}
    with open("/proc/stat") as f:
        for line in f:
            if line.startswith("cpu") and line[3:4].isdigit():
                name, *vals = line.split()
                out[name] = [int(v) for v in vals[:8]]
    return out


def read_pid_times(pid: int) -> tuple[int, int] | None:
    """(utime, stime) in USER_HZ ticks, or None if the process is gone."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            rest = f.read().rsplit(")", 1)[1].split()
    except (FileNotFoundError, ProcessLookupError):
        return None
    return int(rest[11]), int(rest[12])


def ksoftirqd_pids() -> dict[str, int]:
    out = {}
    for d in os.listdir("/proc"):
        if d.isdigit():
            try:
                with open(f"/proc/{d}/comm") as f:
                    comm = f.read().strip()
            except OSError:
                continue
            if comm.startswith("ksoftirqd/"):
                out[comm] = int(d)
    return out


def read_softnet() -> dict[str, int]:
    tot = {"processed": 0, "dropped": 0, "time_squeeze": 0}
    with open("/proc/net/softnet_stat") as f:
        for line in f:
            v = [int(x, 16) for x in line.split()]
            tot["processed"] += v[0]
            tot["dropped"] += v[1]
            tot["time_squeeze"] += v[2]
    return tot


def read_udp_mib(pid: int) -> dict[str, int]:
    try:
        with open(f"/proc/{pid}/net/snmp") as f:
            lines = [ln.split() for ln in f if ln.startswith("Udp:")]
    except OSError:
        return {}
    if len(lines) < 2:
        return {}
    return {f"Udp{k}": int(v) for k, v in zip(lines[0][1:], lines[1][1:], strict=False)}


def cpu_split(a: dict, b: dict) -> tuple[dict, dict]:
    """Per CPU between two :func:`read_proc_stat`: percent usr/sys/softirq/irq/idle/steal,
    and busy (100 - idle - steal)."""
    split, busy = {}, {}
    for cpu in sorted(b):
        d = [y - x for x, y in zip(a[cpu], b[cpu], strict=True)]
        tot = sum(d) or 1
        f = dict(zip(CPU_FIELDS, d, strict=True))
        split[cpu] = {k: round(100.0 * v / tot, 2) for k, v in (
            ("usr", f["user"] + f["nice"]), ("sys", f["system"]), ("softirq", f["softirq"]),
            ("irq", f["irq"]), ("idle", f["idle"] + f["iowait"]), ("steal", f["steal"]))}
        busy[cpu] = round(100.0 - split[cpu]["idle"] - split[cpu]["steal"], 2)
    return split, busy
