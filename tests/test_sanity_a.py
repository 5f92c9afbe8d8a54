"""Sanity: the direction a kernel engineer expects from the AF_XDP knobs (batch, copy vs zero
copy, busy poll, need_wakeup), the wire's bit rate, vhost-net's worker and checksum offload.

Each test compares runs that differ in one knob; the numbers come from the counted ops, so a
test fails when a mechanism stops doing what the kernel does.
"""
import pytest

from xskbench.config import RunConfig
from xskbench.run import run

SHORT = 0.002


def cfg(device, *sets, duration=SHORT):
    return RunConfig.from_dict({"device": device}).override(
        [f"workload.duration_s={duration}", "workload.warmup_s=0.0005", *sets])


def per_packet(r, counter):
    pkts = r.counters["tx_packets"] + r.counters["rx_packets"]
    return r.counters[counter] / pkts


def syscalls_per_packet(r):
    pkts = r.counters["tx_packets"] + r.counters["rx_packets"]
    return (r.counters["sendto_calls"] + r.counters["poll_calls"]) / pkts


# --- batching ------------------------------------------------------------------------------
@pytest.mark.parametrize("device", ["null", "virtio-net", "tun", "veth"])
def test_bigger_batches_cost_fewer_syscalls_per_packet(device):
    """Copy-mode TX: one sendto per application batch (xsk_generic_xmit takes ≤ 32 per call)."""
    sc = [syscalls_per_packet(run(cfg(device, "mode=copy", "workload.kind=txonly",
                                      f"xsk.batch_size={b}")))
          for b in (1, 16, 64)]
    assert sc[0] > sc[1] > sc[2], sc
    assert sc[0] >= 0.9  # batch 1: about one sendto per packet


# --- copy vs zero copy ----------------------------------------------------------------------
@pytest.mark.parametrize("device", ["null", "virtio-net"])
def test_zero_copy_is_flat_with_packet_size_and_copy_falls(device):
    """rxdrop: zero copy only moves descriptors; copy mode memcpys each packet into UMEM. On
    virtio-net the host backend still copies every packet into guest memory (and may limit
    the rate at 1500 B), so there the receiving guest's cycles per packet are compared."""
    wide = ["null.link_gbps=1000", "null.line_rate_pps=1e9"] if device == "null" else []

    def per_pkt(mode, size):
        r = run(cfg(device, f"mode={mode}", "workload.kind=rxdrop",
                    f"workload.packet_size={size}", *wide))
        if device == "null":
            return 1 / r.pps["rx"]
        rx_cpu = r.config.virtio.rx_napi_cpu  # its rx NAPI, in softirq or ksoftirqd
        busy = sum(b for b, c in zip(r.busy, r.label_cpu, strict=True) if c == rx_cpu)
        return busy / r.counters["rx_packets"]

    zc_small, zc_big = per_pkt("zerocopy", 64), per_pkt("zerocopy", 1500)
    cp_small, cp_big = per_pkt("copy", 64), per_pkt("copy", 1500)
    assert abs(zc_big / zc_small - 1) < 0.05, (zc_small, zc_big)
    assert cp_big > 1.05 * cp_small, (cp_small, cp_big)
    assert zc_big < cp_big


# --- busy poll --------------------------------------------------------------------------------
@pytest.mark.parametrize("shared", [True, False])
def test_busy_poll_cuts_interrupts_on_null(shared):
    """Below line rate NAPI completes between packets, so each burst costs an interrupt;
    busy polling with deferral keeps the interrupt masked while the app polls."""
    sets = ["mode=zerocopy", "workload.kind=rxdrop", "workload.rate_pps=5e6", "null.app_cpu=0",
            f"null.napi_cpu={0 if shared else 1}"]
    base = run(cfg("null", *sets))
    busy = run(cfg("null", *sets, "xsk.busy_poll=true"))
    assert base.counters["interrupts"] > 100
    assert busy.counters["interrupts"] < 0.01 * base.counters["interrupts"], busy.counters
    assert busy.counters["busy_polls"] > 0
    assert busy.pps["rx"] == pytest.approx(base.pps["rx"], rel=0.02)
    assert busy.invariants["balanced"]
    if not shared:  # the NAPI work moved into the application's syscalls
        assert busy.cpu_per_cpu.get("cpu1", 0.0) < 1.0, busy.cpu_per_cpu


def test_busy_poll_takes_over_a_running_softirq():
    """SO_PREFER_BUSY_POLL: a softirq NAPI that finds the busy poller waiting yields after
    its poll (NAPI_STATE_PREFER_BUSY_POLL) and the application drives NAPI from then on."""
    sets = ["mode=zerocopy", "workload.kind=l2fwd", "null.app_cpu=0", "null.napi_cpu=0"]
    busy = run(cfg("null", *sets, "xsk.busy_poll=true"))
    napi = busy.labels.index("napi")
    assert busy.counters["busy_polls"] > 0
    assert busy.op_calls[napi].sum() == 0  # no softirq poll in the window
    assert busy.invariants["balanced"]


def test_busy_poll_without_deferral_keeps_interrupts():
    """napi_defer_hard_irqs=0: busy_poll_stop re-enables the interrupt after each pass."""
    sets = ["mode=zerocopy", "workload.kind=rxdrop", "workload.rate_pps=5e6",
            "xsk.busy_poll=true", "null.app_cpu=0", "null.napi_cpu=1"]
    deferred = run(cfg("null", *sets))
    armed = run(cfg("null", *sets, "xsk.napi_defer_hard_irqs=0"))
    assert armed.counters["interrupts"] > 10 * max(1, deferred.counters["interrupts"])


def test_busy_poll_watchdog_polls_when_the_app_stops():
    """Overload: the app finds RX non-empty and stops calling recvfrom; once it has not
    busy-polled for gro_flush_timeout the napi_watchdog timer schedules softirq polls."""
    r = run(cfg("null", "mode=zerocopy", "workload.kind=rxdrop", "xsk.busy_poll=true",
                "xsk.gro_flush_timeout_ns=1000", "null.app_cpu=0", "null.napi_cpu=1"))
    assert r.counters["watchdog_polls"] > 0 and r.counters["busy_polls"] > 0
    assert r.invariants["balanced"]


@pytest.mark.parametrize("mode", ["zerocopy", "copy"])
def test_busy_poll_moves_rx_napi_into_the_syscall_on_virtio(mode):
    """The host fills every guest buffer (rx NAPI never completes, so no interrupts to cut):
    busy polling moves rx NAPI's work from its CPU (cpu2) into the app's recvfrom."""
    sets = [f"mode={mode}", "workload.kind=rxdrop", "testbed.profile=xeon-8163"]
    base = run(cfg("virtio-net", *sets))
    busy = run(cfg("virtio-net", *sets, "xsk.busy_poll=true"))
    assert base.cpu_per_cpu["cpu2"] > 50
    assert busy.cpu_per_cpu.get("cpu2", 0.0) < 1.0, busy.cpu_per_cpu
    assert busy.counters["busy_polls"] > 0 and busy.pps["rx"] > 0.5 * base.pps["rx"]
    assert busy.invariants["balanced"]


@pytest.mark.parametrize("device", ["tun", "veth"])
def test_busy_poll_is_a_no_op_without_a_napi_id(device):
    """A copy-mode TX-only socket never marks a NAPI id (tun without IFF_NAPI registers 0):
    sk_busy_loop returns at once and the run is the same."""
    a = run(cfg(device, "mode=copy", "workload.kind=txonly"))
    b = run(cfg(device, "mode=copy", "workload.kind=txonly", "xsk.busy_poll=true"))
    assert a.counters == b.counters


def test_virtio_zero_copy_busy_poll_txonly_is_refused():
    with pytest.raises(ValueError, match="xsk.busy_poll=true"):
        cfg("virtio-net", "mode=zerocopy", "workload.kind=txonly", "xsk.busy_poll=true")


# --- need_wakeup ------------------------------------------------------------------------------
def test_need_wakeup_off_costs_syscalls_on_separate_cores():
    """Without XDP_USE_NEED_WAKEUP xdpsock calls sendto on every iteration with TX
    outstanding, and each one runs ndo_xsk_wakeup even while NAPI is already polling (with
    it the driver clears the flag while it polls, and the app does not call)."""
    sets = ["mode=zerocopy", "workload.kind=txonly", "null.app_cpu=0", "null.napi_cpu=1"]
    on = run(cfg("null", *sets))
    off = run(cfg("null", *sets, "xsk.need_wakeup=false"))
    assert per_packet(off, "sendto_calls") > 10 * max(per_packet(on, "sendto_calls"), 1e-4), (
        on.counters, off.counters)
    assert per_packet(off, "wakeups") > per_packet(on, "wakeups")


def test_need_wakeup_off_costs_throughput_on_a_shared_core():
    """l2fwd with app and NAPI on one CPU: the sendtos the flag would have saved come out of
    the CPU both share. (txonly on a shared core sees no difference: softirq NAPI always
    completes before the app runs again, so the flag is set at every app iteration.)"""
    sets = ["mode=zerocopy", "workload.kind=l2fwd", "null.app_cpu=0", "null.napi_cpu=0"]
    on = run(cfg("null", *sets))
    off = run(cfg("null", *sets, "xsk.need_wakeup=false"))
    assert off.counters["sendto_calls"] > on.counters["sendto_calls"] + 100
    assert off.pps["rx"] < on.pps["rx"]


def test_need_wakeup_off_rx_never_calls_recvfrom():
    """xdpsock rx_drop only calls recvfrom when the fill ring asks (or busy polling)."""
    r = run(cfg("null", "mode=zerocopy", "workload.kind=rxdrop", "xsk.need_wakeup=false"))
    assert r.counters["poll_calls"] == 0 and r.pps["rx"] > 0 and r.invariants["balanced"]


# --- the wire ---------------------------------------------------------------------------------
@pytest.mark.parametrize("gbps", [10.0, 100.0])
def test_wire_bound_throughput_is_the_bit_rate(gbps):
    """1500 B zero-copy txonly is wire bound: each frame takes (1500 + 4 FCS + 20) bytes."""
    r = run(cfg("null", "mode=zerocopy", "workload.kind=txonly", "workload.packet_size=1500",
                f"null.link_gbps={gbps}"))
    on_wire = r.pps["tx"] * (1500 + 24) * 8
    assert abs(on_wire / (gbps * 1e9) - 1) < 0.02, on_wire
    assert r.bps["tx"] < gbps * 1e9


def test_small_frames_hit_the_packet_rate_limit():
    r = run(cfg("null", "mode=zerocopy", "workload.kind=txonly", "workload.packet_size=64",
                "null.link_gbps=1000", "null.line_rate_pps=2e6"))
    assert abs(r.pps["tx"] / 2e6 - 1) < 0.02, r.pps


# --- vhost-net ----------------------------------------------------------------------------------
def _vhost(*sets):
    return run(cfg("virtio-net", "mode=zerocopy", "workload.kind=txonly",
                   "testbed.profile=xeon-8163", "virtio.host=vhost-net", *sets))


def test_vhost_net_worker_runs_handle_tx_per_kick():
    """Below its capacity the worker sleeps between packets: each guest kick wakes it."""
    r = _vhost("workload.rate_pps=2e5")
    host = r.labels.index("host")
    from xskbench import ops
    calls = r.op_calls[host]
    assert calls[ops.HANDLE_TX] > 0
    # per guest TX packet: one descriptor, one tun_get_user, one copy out of guest memory
    for name in ("VHOST_GET_VQ_DESC", "TUN_GET_USER", "COPY_FROM_ITER", "NETIF_RECEIVE_SKB",
                 "BR_HANDLE_FRAME", "KFREE_SKB"):
        assert calls[getattr(ops, name)] == pytest.approx(calls[ops.VHOST_GET_VQ_DESC], rel=0.01)
    assert r.counters["kicks"] > 0 and r.counters["vhost_wakeups"] > 0
    assert r.op_calls[:, ops.VHOST_USER_POLL].sum() == 0  # not the vhost-user PMD's ops
    assert r.invariants["balanced"]


def test_vhost_net_busyloop_saves_wakeups():
    sleepy = _vhost("workload.rate_pps=2e5")
    spinning = _vhost("workload.rate_pps=2e5", "virtio.vhost_busyloop_us=50")
    assert spinning.counters["vhost_wakeups"] < 0.5 * sleepy.counters["vhost_wakeups"]
    assert spinning.counters["kicks"] < sleepy.counters["kicks"]


@pytest.mark.parametrize("kind", ["rxdrop", "l2fwd"])
def test_vhost_net_receive_direction(kind):
    r = run(cfg("virtio-net", "mode=zerocopy", f"workload.kind={kind}",
                "testbed.profile=xeon-8163", "virtio.host=vhost-net"))
    from xskbench import ops
    host = r.labels.index("host")
    assert r.op_calls[host, ops.COPY_TO_ITER] > 0 and r.pps["rx"] > 0
    assert r.invariants["balanced"]


# --- checksum offload ---------------------------------------------------------------------------
def test_app_checksum_costs_per_byte_and_offload_does_not():
    def app_cycles_per_packet(csum, size):
        r = run(cfg("null", "mode=zerocopy", "workload.kind=txonly", f"xsk.tx_csum={csum}",
                    f"workload.packet_size={size}", "null.link_gbps=1000",
                    "null.line_rate_pps=1e9", "null.app_cpu=0", "null.napi_cpu=1"))
        app = r.labels.index("app")
        return r.op_cycles[app].sum() / r.counters["tx_packets"]

    assert app_cycles_per_packet("app", 1500) > app_cycles_per_packet("app", 64) + 500
    off_small = app_cycles_per_packet("offload", 64)
    off_big = app_cycles_per_packet("offload", 1500)
    assert abs(off_big / off_small - 1) < 0.1


def test_virtio_copy_offload_without_f_csum_sums_in_the_guest():
    from xskbench import ops
    sets = ["mode=copy", "workload.kind=txonly", "testbed.profile=xeon-8163",
            "xsk.tx_csum=offload"]
    with_f = run(cfg("virtio-net", *sets))
    without = run(cfg("virtio-net", *sets, "virtio.csum=false"))
    assert with_f.op_calls[:, ops.CSUM_PARTIAL].sum() == 0
    assert without.op_calls[:, ops.CSUM_PARTIAL].sum() > 0
    assert without.pps["tx"] <= with_f.pps["tx"]
