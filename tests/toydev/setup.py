"""The toy loopback NIC's arena: the AF_XDP core plus three device slots."""
from xskbench.devices import in_order
from xskbench.kernels.layout import MC
from xskbench.machine import Context, build, start_app

from . import kernel as k


def setup(cfg, hz, cc, cb):
    t = cfg.toy
    contexts = in_order(k.CONTEXTS, [
        Context("app", t.app_cpu),
        Context("napi", t.napi_cpu, softirq=True, ksoftirqd="ksoftirqd", host=True)])
    mach = build(cfg, hz, contexts, extra_labels={"sys": t.app_cpu})
    m = mach.m
    m[k.D_BUDGET] = t.napi_budget
    m[k.D_IRQ_DELAY] = round(t.irq_delay_ns * 1e-9 * hz * MC)
    m[k.D_L_SYS] = mach.label("sys")
    start_app(mach, cfg, cc, cb, k.APP, k.NAPI)
    return mach


def packets_in_flight(mach):
    """Nothing stays inside a loopback NIC: every peeked descriptor completes at once."""
    return 0
