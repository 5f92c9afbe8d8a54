"""Device-independent sections: the AF_XDP socket, the workload and the testbed."""

from dataclasses import dataclass

from xskbench.fields import Section, fld
from xskbench.paths import COSTS_DIR


def _ring(doc: str) -> int:
    return fld(2048, doc, unit="descs", lo=32, hi=32768, pow2=True)


def cost_profiles() -> tuple[str, ...]:
    """Names of the cost profiles in ``data/costs`` (looked up on each call)."""
    return tuple(sorted(p.stem for p in COSTS_DIR.glob("*.json")))


@dataclass(frozen=True)
class XskConfig(Section):
    """AF_XDP socket: rings and UMEM, as set up by xdpsock."""

    SECTION = "xsk"

    fill_size: int = _ring("fill ring size")
    comp_size: int = _ring("completion ring size")
    rx_size: int = _ring("RX ring size")
    tx_size: int = _ring("TX ring size")
    frame_size: int = fld(4096, "UMEM chunk size", unit="bytes", choices=(2048, 4096))
    headroom: int = fld(0, "user headroom in front of each frame", unit="bytes", lo=0, hi=1024)
    umem_frames: int = fld(4096, "number of UMEM frames", unit="frames", lo=64, hi=262144,
                           pow2=True)
    need_wakeup: bool = fld(True, "XDP_USE_NEED_WAKEUP: kick the kernel only when asked")
    busy_poll: bool = fld(False, "SO_PREFER_BUSY_POLL + SO_BUSY_POLL: the application's "
                          "recvfrom/sendto run napi_busy_loop on the socket's NAPI")
    busy_budget: int = fld(64, "SO_BUSY_POLL_BUDGET", unit="packets", lo=1, hi=1024)
    napi_defer_hard_irqs: int = fld(2, "netdev napi_defer_hard_irqs (sysfs): empty polls "
                                    "before the interrupt is re-enabled; with busy_poll only",
                                    unit="polls", lo=0, hi=1000)
    gro_flush_timeout_ns: float = fld(200000.0, "netdev gro_flush_timeout (sysfs): the "
                                      "napi_watchdog timer while interrupts are deferred; "
                                      "with busy_poll only", unit="ns", lo=0.0, hi=1e8)
    tx_csum: str = fld("none", "L4 checksum of sent frames: none (a fixed frame, as xdpsock "
                       "txonly), app (computed in user space per frame), offload "
                       "(XDP_TX_METADATA checksum request, Linux 6.8+)",
                       choices=("none", "app", "offload"))
    multi_buffer: bool = fld(False, "XDP_USE_SG (Linux 6.6+): a packet longer than one "
                             "buffer (frame_size - headroom - 256) spans ceil(len / buffer) "
                             "descriptors, XDP_PKT_CONTD on all but the last")
    batch_size: int = fld(64, "application batch as xdpsock -b", unit="descs", lo=1, hi=2048)
    tx_full: str = fld("retry", "l2fwd with TX full: retry (xdpsock) or drop the rest of the "
                       "burst (testpmd: TX-errors)", choices=("retry", "drop"))


@dataclass(frozen=True)
class WorkloadConfig(Section):
    """What the application does and for how long (emulated time)."""

    SECTION = "workload"

    kind: str = fld("txonly", "xdpsock mode", choices=("txonly", "rxdrop", "l2fwd"))
    packet_size: int = fld(64, "Ethernet frame length", unit="bytes", lo=42, hi=9000)
    rate_pps: float | None = fld(None, "offered packet rate; none = unbounded", unit="pps",
                                 lo=1.0, hi=1e9)
    duration_s: float = fld(0.01, "emulated time", unit="s", lo=1e-4, hi=60.0)
    warmup_s: float = fld(0.001, "emulated time excluded from the statistics", unit="s",
                          lo=0.0, hi=10.0)
    seed: int = fld(1, "random seed", lo=0, hi=2**32 - 1)


@dataclass(frozen=True)
class TestbedConfig(Section):
    """The machine whose costs are emulated."""

    __test__ = False  # not a pytest test class despite the name

    SECTION = "testbed"

    profile: str | None = fld(None, "cost profile (a data/costs/*.json stem); none = the "
                              "device's reference testbed", choices=cost_profiles,
                              pattern=r"[A-Za-z0-9][A-Za-z0-9_.-]*")
    cpu_ghz: float | None = fld(None, "CPU clock; none = the profile's frequency", unit="GHz",
                                lo=0.5, hi=6.0)
    jitter: float = fld(0.2, "relative spread of interrupt, IPI and wakeup delays (seeded)",
                        lo=0.0, hi=1.0)
    run_spread: float = fld(0.01, "run-to-run spread of the CPU's speed (std of one seeded "
                            "draw per run)", lo=0.0, hi=0.2)
    llc_mb: float = fld(32.0, "last-level cache shared by the queues: each queue's share is "
                        "llc_mb / mq.queues; packet bytes beyond it are read from memory "
                        "(tun, veth)", unit="MB", lo=0.001, hi=1024.0)
