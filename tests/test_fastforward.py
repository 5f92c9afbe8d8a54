"""Fast-forward (the idle-spin replay, the parking of idle spinners and the folding of a
context's back-to-back quanta, kernels/engine.py spin_until / idle_spin / fold; null's
receive of a poll's packets at once, devices/null/kernel.py _rx_run) must only save
emulation time: with it on and off, every device and
mode gives byte-identical results, books, counters, latency and time series included."""
import sys

import ff_grid
import pytest
from bench import arenas, entries, quanta

from xskbench import RunConfig, costs, ops, queues, stats
from xskbench.devices import DEVICES
from xskbench.kernels import engine
from xskbench.kernels import layout as L
from xskbench.run import run

run_module = sys.modules["xskbench.run"]  # the package exports run(), the function

#: the settings a receive workload needs on a device (veth: the measured pair; tun: a
#: process on the tap fd)
RECEIVE = {"veth": {"veth.peer": "xdp_drop"}, "tun": {"tun.peer": "fd"}}


def _settings(name, mode, kind):
    extra = RECEIVE.get(name, {}) if kind != "txonly" else {}
    return {"workload.kind": kind, "workload.duration_s": 0.003, "workload.warmup_s": 0.0005,
            **extra}


def _modelled(name, mode, kind):
    try:
        RunConfig(device=name, mode=mode).replace(**_settings(name, mode, kind))
    except ValueError:
        return False
    return True


CASES = [(name, mode, kind) for name, dev in DEVICES.items() if dev.package.startswith("xskbench.")
         for mode in dev.modes for kind in dev.workloads if _modelled(name, mode, kind)]


def _same(cfg):
    return run(cfg).to_json_text() == run(cfg, fast_forward=False).to_json_text()


@pytest.mark.parametrize(("device", "mode", "kind"), CASES)
def test_fast_forward_on_and_off_give_the_same_bytes(device, mode, kind):
    assert _same(RunConfig(device=device, mode=mode).replace(**_settings(device, mode, kind)))


def test_fast_forward_is_exact_with_two_queues_and_faults():
    assert _same(RunConfig(device="null", mode="copy").replace(**{
        "mq.queues": 2, "faults.irq_lost_prob": 0.01, "faults.irq_late_prob": 0.1,
        "faults.irq_late_us": 5.0,
        "workload.duration_s": 0.003, "workload.warmup_s": 0.0005}))


@pytest.mark.parametrize("settings", [
    # a property-test configuration: fill-ring stop windows (the application's refill changes
    # at a window's edge by itself) and refreshes charged that tx NAPI made
    {"device": "null", "mode": "copy", "workload.kind": "l2fwd", "workload.duration_s": 0.001,
     "workload.warmup_s": 0.0, "xsk.fill_size": 512, "xsk.comp_size": 256,
     "xsk.rx_size": 8192, "xsk.umem_frames": 2048, "xsk.need_wakeup": False,
     "xsk.busy_budget": 1, "xsk.napi_defer_hard_irqs": 1, "xsk.tx_csum": "app",
     "xsk.multi_buffer": True, "xsk.batch_size": 386, "testbed.cpu_ghz": 6.0,
     "testbed.jitter": 0.5133045726689488, "null.link_gbps": 1.0, "null.ring_size": 64,
     "null.napi_budget": 1, "null.app_cpu": 63, "mq.pinning": "same-cpu",
     "mq.umem": "shared-pool", "faults.irq_late_prob": 0.0001,
     "faults.irq_late_us": 4.8759176794042975, "faults.spike_window_us": 141.0,
     "faults.spike_period_us": 282.0, "faults.fill_stop_us": 30.0,
     "faults.fill_stop_period_us": 200.0},
    {"device": "virtio-net", "mode": "zerocopy", "workload.kind": "rxdrop",
     "faults.fill_stop_us": 50.0, "faults.fill_stop_period_us": 300.0,
     "virtio.wakeup": "local", "xsk.need_wakeup": False, "virtio.app_cpu": 1},
    # vhost-net: its notification flags and sleep are state the guest's kicks read
    {"device": "virtio-net", "mode": "zerocopy", "workload.kind": "txonly",
     "virtio.host": "vhost-net", "virtio.wakeup": "local", "xsk.need_wakeup": False,
     "virtio.queue_size": 64, "workload.seed": 12},
    # a late interrupt keeps tx NAPI scheduled while the application's wakeups read it
    {"device": "virtio-net", "mode": "zerocopy", "workload.kind": "l2fwd",
     "virtio.host": "vhost-net", "virtio.wakeup": "ipi", "xsk.need_wakeup": False,
     "faults.irq_late_prob": 0.3, "faults.irq_late_us": 5.0},
    # an idle quantum too long to log came between two alike: the older log says nothing
    {"device": "virtio-net", "mode": "copy", "workload.kind": "l2fwd",
     "workload.rate_pps": 1e6, "workload.seed": 81, "virtio.wakeup": "local",
     "virtio.host": "vhost-net", "virtio.app_cpu": 1},
    # the xmit inside sendto reads the used entries vhost-net stamps ahead of the guest, and
    # leaves a ring refresh for the next poll to charge
    {"device": "virtio-net", "mode": "zerocopy", "workload.kind": "l2fwd",
     "virtio.wakeup": "inline", "virtio.host": "vhost-net"},
    # busy polling runs rx NAPI in the syscall: the host's used entries again
    {"device": "virtio-net", "mode": "zerocopy", "workload.kind": "rxdrop",
     "xsk.need_wakeup": False, "xsk.busy_poll": True, "workload.seed": 61,
     "virtio.queue_size": 64, "virtio.host": "vhost-net", "virtio.app_cpu": 2,
     "faults.irq_late_prob": 0.3, "faults.irq_late_us": 5.0},
    # multi-buffer packets hold the wire longer: the application's wakeup schedules NAPI from
    # idle when its interrupt is already due (no progress), and the next wakeup finds it
    # scheduled (engine.napi_schedule stirs)
    {"device": "null", "mode": "zerocopy", "workload.kind": "txonly", "xsk.multi_buffer": True,
     "workload.packet_size": 3000},
    # a slow link: NAPI's empty peeks leave ring refreshes for the application's next poll to
    # charge, a change to what the parked application reads (engine._moved)
    {"device": "null", "mode": "zerocopy", "workload.kind": "txonly",
     "workload.rate_pps": 1e4, "null.link_gbps": 0.01},
    # a NIC slower than the sender: NAPI polls again after a missed schedule, and the next
    # wakeup marks it missed anew (engine.napi_complete stirs)
    {"device": "null", "mode": "zerocopy", "workload.kind": "txonly",
     "null.line_rate_pps": 1e5},
    # a busy poll that re-arms the interrupt draws its delay anew each time: a later idle
    # poll can wake NAPI earlier than the one before did (engine.wake: not replayed)
    {"device": "null", "mode": "copy", "workload.kind": "l2fwd", "xsk.busy_poll": True,
     "xsk.napi_defer_hard_irqs": 0, "workload.rate_pps": 1e4},
    # vhost requeued after every packet (its weight): a quantum folded into the one before
    # reads that CPU's last quantum as finish would have left it (a context switch or not)
    {"device": "tun", "mode": "copy", "workload.kind": "txonly", "tun.weight_pkts": 1},
    # the guest's DPDK PMD spins while vhost-net's used entries trickle in, stamped ahead
    {"device": "virtio-net", "mode": "pmd", "workload.kind": "txonly",
     "virtio.host": "vhost-net"},
    {"device": "virtio-net", "mode": "pmd", "workload.kind": "l2fwd",
     "virtio.host": "vhost-net", "virtio.queue_size": 64, "faults.stall_context": "host",
     "faults.stall_us": 20.0, "faults.stall_period_us": 200.0},
    # a polling guest (tun.guest=pmd) parks: the application's horizon skips its polls until
    # vhost publishes, and the application's own lockstep runs beside it
    {"device": "tun", "mode": "zerocopy", "workload.kind": "txonly", "tun.guest": "pmd"},
    {"device": "tun", "mode": "zerocopy", "workload.kind": "txonly", "tun.guest": "pmd",
     "tun.zc_version": 2, "tun.guest_ring": 64, "faults.stall_context": "host",
     "faults.stall_us": 20.0, "faults.stall_period_us": 200.0},
    {"device": "tun", "mode": "copy", "workload.kind": "txonly", "tun.guest": "pmd",
     "workload.rate_pps": 1e6, "tun.pmd_burst": 32},
    # a busy-polling application reads the NIC, whose arrivals come by themselves: its idle
    # spin stops at the next one (null's _nic_next_change)
    {"device": "null", "mode": "copy", "workload.kind": "rxdrop", "xsk.busy_poll": True,
     "xsk.napi_defer_hard_irqs": 0, "workload.rate_pps": 1e4, "testbed.jitter": 0.0},
    # a NAPI poll that yields to the busy poller (its short refill returned the budget)
    # clears its scheduled flag, which the busy poller reads (afxdp.bp_yield stirs)
    {"device": "null", "mode": "zerocopy", "workload.kind": "rxdrop", "xsk.busy_poll": True,
     "xsk.need_wakeup": False, "workload.rate_pps": 1.0, "null.irq_delay_ns": 0.0,
     "xsk.fill_size": 64},
])
def test_fast_forward_is_exact_where_other_contexts_change_what_a_spinner_reads(settings):
    settings = dict(settings)
    cfg = RunConfig(device=settings.pop("device"), mode=settings.pop("mode"))
    assert _same(cfg.replace(**{"workload.duration_s": 0.002, "workload.warmup_s": 0.0003,
                                **settings}))  # each of these differed before the fixes


_GRID = ff_grid.grid  # benchmarks/ff_grid.py: the grids the hand-run check sweeps
GRID_STEP = 20  # every 20th configuration of each device's grid: a spread, in ~15 s


@pytest.mark.parametrize(("device", "index"), [
    (d, i) for d in ("virtio-net", "null", "tun", "veth")
    for i in range(0, len(_GRID(d)), GRID_STEP)])
def test_fast_forward_is_exact_across_a_sample_of_the_grids(device, index):
    """The grids found every case above; a sample of them keeps watch on the shortcuts."""
    assert _same(_GRID(device)[index])


def test_queues_on_cpus_of_their_own_run_ahead_of_one_another():
    """No queue waits for another it shares no CPU with (kernels/multiq.pick): two such queues
    take twice one queue's quanta, not the many more a common timeline cuts their idle spins
    into (1.75x as many before)."""
    cfg = RunConfig(device="virtio-net", mode="zerocopy").replace(**{
        "workload.duration_s": 0.002})
    one, two = quanta(cfg, True), quanta(cfg.replace(**{"mq.queues": 2}), True)
    assert two <= 2.02 * one, (one, two)


def test_queues_sharing_a_host_core_still_replay_on_their_own_cpus():
    """Eight virtio-net queues on one shared host core (mq.host=shared): their guest contexts
    sit on CPUs of their own, where other queues neither run nor write, so their folds and
    idle spins are bounded by their own queue only (engine.horizon). Quantum by quantum takes
    far more quanta; before, every queue's host polls bounded every guest context, and
    fast-forward saved none (the same count)."""
    cfg = RunConfig(device="virtio-net", mode="zerocopy").replace(**{
        "workload.duration_s": 0.002, "mq.queues": 8, "mq.host": "shared"})
    assert quanta(cfg, True) < 0.75 * quanta(cfg, False)


def test_two_spinners_waiting_on_each_other_are_parked():
    """virtio-net zero copy: the host PMD and the guest application both poll, each idle
    until the other (or a NAPI) moves; parked, each replays its idle spin past the other's
    polls, so far fewer quanta run, and the result is the same bytes."""
    cfg = RunConfig(device="virtio-net", mode="zerocopy").replace(**{
        "workload.kind": "l2fwd", "workload.duration_s": 0.002, "workload.warmup_s": 0.0005})
    assert quanta(cfg, True) < 0.75 * quanta(cfg, False)
    assert _same(cfg)


def test_an_idle_spin_replays_the_poll_that_looks_before_the_change():
    """null zero-copy rxdrop: the application spins until NAPI's RX entries become visible.
    Its poll looks at the time early (``H_QREAD``), so the poll that starts before the first
    entry's stamp and ends after it is still empty, and is replayed with the others instead
    of run: about 4 quanta per NAPI poll (one NAPI, a productive and two idle application
    polls), not the 6 of replaying only polls that end before the stamp."""
    cfg = RunConfig(device="null", mode="zerocopy").replace(**{
        "workload.kind": "rxdrop", "workload.duration_s": 0.002, "workload.warmup_s": 0.0005})
    m = arenas(cfg)[0][0].m
    assert m[L.H_SEQ] < 4.5 * m[m[L.H_CNT] + stats.NAPI_POLLS]
    assert _same(cfg)


def test_parking_is_exact_with_two_virtio_queues():
    assert _same(RunConfig(device="virtio-net", mode="zerocopy").replace(**{
        "workload.kind": "txonly", "mq.queues": 2,
        "workload.duration_s": 0.002, "workload.warmup_s": 0.0005}))


def test_fold_is_exact_through_host_stalls():
    """A stalled host PMD cannot run on: a fold stops at its stall window."""
    assert _same(RunConfig(device="virtio-net", mode="zerocopy").replace(**{
        "workload.kind": "l2fwd", "faults.stall_context": "host", "faults.stall_us": 3.0,
        "faults.stall_period_us": 40.0,
        "workload.duration_s": 0.002, "workload.warmup_s": 0.0005}))


def test_back_to_back_quanta_skip_the_scheduler():
    """tun + vhost-net zero copy: the vhost worker and the application each run many quanta
    before anyone else could; those are folded into one trip through the scheduler (the
    engine's pick), and the bytes stay the same (the tests above)."""
    cfg = RunConfig(device="tun", mode="zerocopy").replace(**{
        "workload.kind": "txonly", "workload.duration_s": 0.002, "workload.warmup_s": 0.0005})
    dev = DEVICES[cfg.device]
    prof = costs.for_config(cfg)
    cc, cb = prof.arrays(1.0)
    cfgs = queues.queue_configs(cfg)
    machs = [dev.impl.setup(c, 3e9, cc, cb) for c in cfgs]
    M, OFF = queues.arenas(machs, cfgs[0])
    picks = 0
    while (n := dev.kernel.run_chunk(M, OFF, cc, cb, 100_000)) == 100_000:
        picks += n
    picks += n
    assert picks < 0.2 * int(machs[0].m[L.H_SEQ])


@pytest.mark.parametrize(("mode", "kind", "share"), [
    ("zerocopy", "txonly", 0.08), ("zerocopy", "l2fwd", 0.4), ("copy", "txonly", 0.3)])
def test_the_host_pmd_runs_its_polls_between_a_guests_descriptors_at_once(mode, kind, share):
    """virtio-net zero-copy: the host PMD, just faster than the guest, polls twice per
    descriptor (txonly); after a poll that moved one, the polls the engine would fold run
    at once (virtio_net._host_lockstep; l2fwd: until the guest's RX asks for an interrupt):
    its quantum is entered for a fraction of its quanta, with the same quanta (the
    round-robin sequence) and bytes (the tests above). Copy mode: the guest's sendto adds a
    descriptor every few hundred ns, and the empty polls between are replayed there too."""
    cfg = RunConfig(device="virtio-net", mode=mode).replace(**{
        "workload.kind": kind, "workload.duration_s": 0.002, "workload.warmup_s": 0.0005})
    entered, ran, _ = entries(cfg)
    assert ran["host"] > 5_000 and entered["host"] < share * ran["host"]


def test_the_ovs_pmd_runs_its_polls_between_vhosts_completions_at_once():
    """tun zero-copy txonly: vhost completes one descriptor at a time, and the OVS PMD,
    waiting for room for its batch, reaps each in a poll of its own and replays the empty
    polls between; after a poll that reaped and sent nothing, the next plain ones run at
    once (tun._app_lockstep): the application's quantum is entered for a few of its quanta
    (all of them before), with the same quanta and bytes (the tests above)."""
    cfg = RunConfig(device="tun", mode="zerocopy").replace(**{
        "workload.duration_s": 0.002, "workload.warmup_s": 0.0005})
    entered, ran, _ = entries(cfg)
    assert ran["app"] > 10_000 and entered["app"] < 0.1 * ran["app"]


def test_a_polling_guest_parks_while_vhost_has_published_nothing_new():
    """tun.guest=pmd: the guest's testpmd and the host's OVS PMD both spin on CPUs of their
    own. The guest's empty poll reads only what vhost publishes, so it parks (engine.idle_spin,
    watching vhost alone): the application's horizon skips its polls, and each replays its
    idle spin up to the other's next change instead of one poll of the other at a time (each
    was entered 1.2 times per packet sent or received before; the same bytes, the tests
    above)."""
    cfg = RunConfig(device="tun", mode="zerocopy").replace(**{
        "tun.guest": "pmd", "workload.duration_s": 0.002, "workload.warmup_s": 0.0005})
    entered, _, packets = entries(cfg)  # sent and received
    assert packets > 10_000
    assert entered["guest"] < 0.1 * packets and entered["app"] < 0.1 * packets


def test_a_copy_mode_receiver_spins_past_the_hosts_used_rx_entries():
    """virtio-net copy rxdrop: the host fills guest RX buffers ahead of rx NAPI, each used
    entry stamped; the application's idle poll reads its own rings (no syscall runs rx NAPI
    without busy poll), so its replay does not stop at each of them (virtio_net
    _app_next_change). It was entered 3.6 times per packet, one poll at a time."""
    cfg = RunConfig(device="virtio-net", mode="copy").replace(**{
        "workload.kind": "rxdrop", "workload.duration_s": 0.002, "workload.warmup_s": 0.0005})
    entered, _, packets = entries(cfg)
    assert packets > 5_000 and entered["app"] < 0.3 * packets


def test_a_guest_pmd_replays_its_empty_bursts():
    """virtio-net pmd with vhost-net: testpmd io forwarding polls far faster than vhost-net
    fills its RX ring; an empty burst reads only the host's used entries (RX's: TX is cleaned
    up only when there is something to send), so it is replayed up to the next one stamped
    ahead. It was entered 4.8 times per packet sent or received, one burst at a time."""
    cfg = RunConfig(device="virtio-net", mode="pmd").replace(**{
        "workload.kind": "l2fwd", "virtio.host": "vhost-net", "workload.duration_s": 0.002,
        "workload.warmup_s": 0.0005})
    entered, _, packets = entries(cfg)
    assert packets > 5_000 and entered["pmd"] < packets


T0 = 10**9  # when the replayed poll starts (virtual time units)


def _spinner():
    """null's application context in a fresh arena past warm-up, and one poll's cycles."""
    cfg = RunConfig(device="null")
    cc, cb = costs.for_config(cfg).arrays(1.0)
    m = DEVICES["null"].impl.setup(queues.queue_configs(cfg)[0], 3e9, cc, cb).m
    m[L.H_SNAP_DONE] = 1
    return m, cc, cb, int(cc[ops.APP_LOOP])


def _replayed_polls(look_first, hzn=L.INF, seen=L.INF, warm=None):
    """Two identical idle polls of one APP_LOOP charge, looking at the time before or after
    it; the second (steady) is replayed: how many polls it then stands for."""
    m, cc, cb, q = _spinner()
    if warm is not None:
        m[L.H_SNAP_DONE], m[L.H_WARM] = 0, warm
    for t in (T0 - q, T0):
        engine._open(m, DEVICES["null"].kernel.APP, t)
        if look_first:
            engine.now(m)
        engine.charge(m, cc, cb, ops.APP_LOOP, 1, 0)
        if not look_first:
            engine.now(m)
        steady = engine.spin_until(m, cc, cb, hzn, seen)
    assert steady
    return m[L.H_QACC] // q



def test_a_replayed_poll_starts_before_the_horizon_and_looks_before_the_change():
    """engine.spin_until's three bounds, poll by poll (q: one poll's length, from T0): another
    context's start bounds where a replayed poll may *start* (the engine would run that poll
    first); the spinner's own view changing (a stamped entry) bounds where it may *look*,
    as far into the poll as the real one looked; the end of warm-up bounds where it *ends*."""
    _, _, _, q = _spinner()
    between = T0 + 2 * q + q // 2  # polls start at T0, T0 + q, T0 + 2q, T0 + 3q, ...
    assert _replayed_polls(True, hzn=between) == 3
    assert _replayed_polls(False, hzn=between) == 3
    assert _replayed_polls(True, seen=between) == 3   # looks at T0 + 2q, before the change
    assert _replayed_polls(False, seen=between) == 2  # looks at T0 + 3q: after it
    assert _replayed_polls(True, seen=T0 + q) == 1    # an entry stamped at a look is seen
    assert _replayed_polls(True, warm=between) == 2   # the poll from T0 + 2q ends after it
