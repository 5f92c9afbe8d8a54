"""Section `mq`: queue pairs, where they run, what they share and how traffic spreads."""

from dataclasses import dataclass

from xskbench.fields import Section, fld


@dataclass(frozen=True)
class MqConfig(Section):
    """Multi-queue: N queue pairs, each with its own xsk socket, application thread and
    NAPI contexts (or vhost worker / veth NAPI)."""

    SECTION = "mq"

    queues: int = fld(1, "queue pairs, one xsk socket and application thread each",
                      unit="queues", lo=1, hi=16)
    pinning: str = fld("spread", "spread: each queue on its own CPUs, laid out as the device's "
                       "*_cpu fields (app and NAPI on sibling CPUs); same-cpu: queue q's app "
                       "and NAPI all on CPU q; one-cpu: every queue on the configured CPUs",
                       choices=("spread", "same-cpu", "one-cpu"))
    host: str = fld("per-queue", "host backend (virtio host, tun vhost worker): one core or "
                    "worker per queue, or one shared by all queues",
                    choices=("per-queue", "shared"))
    umem: str = fld("private", "private: a UMEM per socket; shared: XDP_SHARED_UMEM across "
                    "queues (a pool and fill/completion rings per queue, the frames split "
                    "between them); shared-pool: the sockets share one pool, so the batched "
                    "TX peek falls back to one desc at a time (xsk.c)",
                    choices=("private", "shared", "shared-pool"))
    skew: float = fld(0.0, "RSS skew: queue 0 (an elephant flow) gets 1/N + skew·(1 - 1/N) "
                      "of the offered rate, the others share the rest; needs a rate",
                      lo=0.0, hi=1.0)
