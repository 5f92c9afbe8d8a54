"""tun: a host application's AF_XDP socket on a tun queue; on the other side vhost-net copies
the packets into a guest (tun.peer=vhost), or a process writes and reads the tap fd
(tun.peer=fd)."""
from ..record import Device
from .section import TunConfig

CONTEXTS = ("app", "vhost", "guest")  # context ids in this order (setup builds them by name)
FD_CONTEXTS = ("app", "peer")  # tun.peer=fd: the process on the tap fd takes vhost's id


def check(cfg):
    t, kind = cfg.tun, cfg.workload.kind
    if t.peer == "vhost" and kind != "txonly":
        raise ValueError(f"workload.kind={kind!r} on device 'tun' with tun.peer='vhost': "
                         "vhost-net only "
                         "receives what the host application sends (no guest TX is modelled); "
                         "allowed: workload.kind='txonly', or tun.peer='fd'")
    if t.peer != "fd":
        return
    if cfg.mode != "copy":
        raise ValueError(f"mode={cfg.mode!r} with tun.peer='fd': a tap has no zero-copy "
                         "AF_XDP (no ndo_xsk_wakeup, bind(XDP_ZEROCOPY) fails); allowed: "
                         "mode='copy'")
    if cfg.mq.queues != 1:
        raise ValueError(f"mq.queues={cfg.mq.queues} with tun.peer='fd': one process on one "
                         "tfile is modelled; allowed: mq.queues=1")
    if cfg.workload.rate_pps is not None and kind != "txonly":
        raise ValueError(f"workload.rate_pps={cfg.workload.rate_pps:g} with tun.peer='fd' and "
                         f"workload.kind={kind!r}: the writer writes as fast as write() "
                         "returns (no paced writer); allowed: workload.rate_pps=none")
    if t.napi_cpu == t.app_cpu:
        raise ValueError(f"tun.napi_cpu={t.napi_cpu} equals tun.app_cpu: the spinning "
                         "application and the process on the fd are modelled on two CPUs; "
                         "allowed: tun.napi_cpu != tun.app_cpu")


DEVICE = Device(
    name="tun", package=__name__, section=TunConfig, modes=("copy", "zerocopy"),
    workloads=("txonly", "rxdrop", "l2fwd"), check=check,
    about="rxdrop and l2fwd with tun.peer='fd' (a process writing the tap fd)",
    host_cpu_fields=("vhost_cpu",),
    contexts=lambda cfg: FD_CONTEXTS if cfg.tun.peer == "fd" else CONTEXTS,
)
