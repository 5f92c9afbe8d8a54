"""The configuration of one real measurement: a section (field metadata drives validation,
``xskbench measure``'s options and its ``--set``).  Field names follow the emulator's config
where they exist; :meth:`MeasureConfig.to_dict` is shaped like ``RunConfig.to_dict``."""
from __future__ import annotations

import dataclasses
import os
from dataclasses import dataclass

from xskbench.fields import Section, fld, fmt

DEVICES = ("veth", "tun")
DEVICE_ALIASES = {"tap": "tun"}  # earlier name of the tun device (in tap mode) here
MODES = ("copy", "udp", "zerocopy")
WORKLOADS = ("rxdrop", "txonly", "l2fwd")
SENDERS = ("auto", "xdp", "xsk", "udp", "tun")
WAITS = ("spin", "poll", "busy-poll")
PRIORITIES = ("normal", "high", "rt")
ETH_IP_UDP = 42  # Ethernet + IPv4 + UDP headers: the smallest frame


@dataclass(frozen=True)
class MeasureConfig(Section):
    """One real measurement: traffic between two pinned workers in namespaces."""

    SECTION = "measure"

    device: str = fld("veth", "veth pair across two namespaces, or a tun device in tap mode",
                      choices=DEVICES)
    mode: str = fld("copy", "copy: AF_XDP copy mode; udp: a kernel UDP socket (the baseline); "
                    "zerocopy: asks the kernel, which refuses it on veth/tun", choices=MODES)
    workload: str = fld("rxdrop", "what the measured socket does", choices=WORKLOADS)
    packet_size: int = fld(64, "Ethernet frame length without FCS, as the descriptor's len",
                           unit="bytes", lo=ETH_IP_UDP, hi=1514)
    batch: int = fld(64, "descriptors per batch, as xdpsock -b", unit="descs", lo=1, hi=16384)
    ring: int = fld(2048, "rx/tx/completion ring size; the fill ring is 2x", unit="descs",
                    lo=64, hi=16384, pow2=True)
    frame_size: int = fld(4096, "UMEM frame size", unit="bytes", choices=(2048, 4096))
    need_wakeup: bool = fld(True, "bind with XDP_USE_NEED_WAKEUP")
    wait: str = fld("spin", "when the ring is empty: spin (xdpsock's default; kicks only when "
                    "the kernel asks), sleep in poll(), or SO_PREFER_BUSY_POLL + recvfrom",
                    choices=WAITS)
    xdp_mode: str = fld("native", "XDP attach mode of the redirect program",
                        choices=("native", "skb"))
    sender: str = fld("auto", "traffic for rxdrop/l2fwd: xdp = BPF_PROG_RUN live frames, "
                      "xsk = AF_XDP txonly (copy), udp = sendmmsg, tun = write() into the tap "
                      "fd (auto: xdp on veth, or xsk where the kernel refuses live "
                      "frames; tun on tun)", choices=SENDERS)
    rate_pps: float | None = fld(None, "offered rate of the xdp sender, paced per 0.25 s "
                                 "(bursts at full speed); none = as fast as it goes",
                                 unit="pps", lo=1.0, hi=1e8)
    duration: float = fld(3.0, "steady window per run", unit="s", lo=0.2, hi=600.0)
    warmup: float = fld(1.0, "warm-up before the window", unit="s", lo=0.0, hi=60.0)
    repeats: int = fld(3, "runs to average; the spread is reported", lo=1, hi=100)
    app_cpu: int = fld(1, "CPU of the measured application", lo=0, hi=4095)
    peer_cpu: int = fld(0, "CPU of the sender/sink", lo=0, hi=4095)
    priority: str = fld("high", "worker scheduling: normal; high = a session of its own at "
                        "nice -20 (other sessions' load cannot take the pinned CPUs); rt = "
                        "SCHED_FIFO 1", choices=PRIORITIES)
    seed: int = fld(1, "payload bytes", lo=0, hi=2**32 - 1)

    def __post_init__(self) -> None:
        super().__post_init__()
        s = self.resolved_sender()
        bad = [msg for cond, msg in (
            (self.batch > self.ring, f"batch={self.batch}: must be <= ring={self.ring}"),
            (self.packet_size > self.frame_size - 256 - 64,
             f"packet_size={self.packet_size}: does not fit a {self.frame_size} B frame"),
            (self.rate_pps is not None and (s != "xdp" or self.workload == "txonly"),
             f"rate_pps={fmt(self.rate_pps)}: only the xdp sender (veth rxdrop/l2fwd) paces"),
            (self.mode == "udp" and self.workload == "l2fwd",
             "workload=l2fwd needs an AF_XDP socket: use mode=copy"),
            (self.device == "tun" and s != "tun",
             f"sender={s!r} does not apply to a tun: its far end is the tap fd (sender=tun)"),
            (self.device == "veth" and s == "tun", "sender='tun' needs device=tun"),
        ) if cond]
        if bad:
            raise ValueError("; ".join(bad))

    def resolved_sender(self) -> str:
        if self.sender != "auto":
            return self.sender
        return "tun" if self.device == "tun" else "xdp"

    def check(self) -> None:
        """What depends on this process: the pinned CPUs must be ours."""
        cpus = os.sched_getaffinity(0)
        bad = [f"{name}={getattr(self, name)}: not one of this process's CPUs {sorted(cpus)}"
               for name in ("app_cpu", "peer_cpu") if getattr(self, name) not in cpus]
        if bad:
            raise ValueError("; ".join(bad))

    def replace(self, **changes) -> MeasureConfig:
        return dataclasses.replace(self, **changes)

    def to_dict(self) -> dict:
        """Shaped like the emulator's RunConfig (device, mode, xsk, workload) plus ``real``."""
        return {
            "device": self.device, "mode": self.mode,
            "xsk": {"rx_size": self.ring, "tx_size": self.ring, "comp_size": self.ring,
                    "fill_size": 2 * self.ring, "frame_size": self.frame_size,
                    "umem_frames": max(4096, 4 * self.ring), "headroom": 0,
                    "need_wakeup": self.need_wakeup, "busy_poll": self.wait == "busy-poll",
                    "busy_budget": self.batch, "batch_size": self.batch},
            "workload": {"kind": self.workload, "packet_size": self.packet_size,
                         "rate_pps": self.rate_pps, "duration_s": self.duration,
                         "warmup_s": self.warmup, "seed": self.seed},
            "real": {"sender": self.resolved_sender(), "wait": self.wait,
                     "xdp_mode": self.xdp_mode, "repeats": self.repeats,
                     "app_cpu": self.app_cpu, "peer_cpu": self.peer_cpu,
                     "priority": self.priority},
        }

    @classmethod
    def from_dict(cls, d: dict) -> MeasureConfig:
        """Inverse of :meth:`to_dict` (stored measurements; 'tap' is read as 'tun')."""
        x, w, r = d["xsk"], d["workload"], d.get("real", {})
        device = DEVICE_ALIASES.get(d["device"], d["device"])
        sender = DEVICE_ALIASES.get(r.get("sender", "auto"), r.get("sender", "auto"))
        if sender == ("tun" if device == "tun" else "xdp"):  # what auto resolves to
            sender = "auto"
        return cls(device=device, mode=d["mode"], workload=w["kind"],
                   packet_size=w["packet_size"], batch=x["batch_size"], ring=x["rx_size"],
                   frame_size=x["frame_size"], need_wakeup=x["need_wakeup"],
                   wait=r.get("wait", "busy-poll" if x.get("busy_poll") else "spin"),
                   xdp_mode=r.get("xdp_mode", "native"), sender=sender,
                   rate_pps=w.get("rate_pps"), duration=w["duration_s"],
                   warmup=w["warmup_s"], repeats=r.get("repeats", 1),
                   app_cpu=r.get("app_cpu", 1), peer_cpu=r.get("peer_cpu", 0),
                   priority=r.get("priority", "high"), seed=w.get("seed", 1))
