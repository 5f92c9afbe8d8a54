"""Multi-queue: queue pairs on their own or shared CPUs, a host core per queue or shared,
private or shared UMEM, RSS skew. Short emulated runs (1-2 ms)."""
from functools import cache

import pytest

from xskbench import calibrate
from xskbench.config import RunConfig
from xskbench.queues import queue_configs, traffic_shares
from xskbench.run import run

SHORT = ["workload.duration_s=0.002"]
# the null NIC's wire (packet and bit rate), shared by its queues, out of reach
FAST_WIRE = ["null.line_rate_pps=1e9", "null.link_gbps=1000"]


@cache
def _run(device, mode, *sets):
    wire = FAST_WIRE if device == "null" else []
    res = run(RunConfig(device=device, mode=mode).override(SHORT + wire + list(sets)))
    assert res.invariants["balanced"]
    return res


@cache
def _pmd(*sets):
    res = run(calibrate.scenario_config("virtio-pmd-l2fwd").override(SHORT + list(sets)))
    assert res.invariants["balanced"]
    return res


@pytest.mark.parametrize("device,mode", [("null", "zerocopy"), ("null", "copy"),
                                         ("tun", "zerocopy"), ("veth", "zerocopy")])
def test_independent_queues_scale_linearly(device, mode):
    """Own CPUs per queue, own host worker, private UMEM: nothing shared, N × one queue."""
    one = _run(device, mode).pps["tx"]
    for n in (2, 4):
        got = _run(device, mode, f"mq.queues={n}").pps["tx"]
        assert got == pytest.approx(n * one, rel=0.05), (n, got, one)


def test_virtio_pmd_per_queue_host_scales_and_shared_host_plateaus():
    one = _pmd().pps["rx"]
    four = _pmd("mq.queues=4").pps["rx"]
    assert four == pytest.approx(4 * one, rel=0.05)
    shared = [_pmd(f"mq.queues={n}", "mq.host=shared").pps["rx"] for n in (2, 3, 4)]
    assert max(shared) < 2.2 * one                        # far below 3-4 × one queue
    assert shared[2] == pytest.approx(shared[1], rel=0.05)  # plateau: the host core's rate
    res = _pmd("mq.queues=4", "mq.host=shared")
    host_cpu = res.label_cpu[res.labels.index("q0/host")]
    assert res.cpu_per_cpu[f"cpu{host_cpu}"] > 99         # one core serves all four
    assert res.bottleneck.endswith("/host") and res.saturated


def test_shared_pool_falls_back_to_per_desc_peek_and_costs_throughput():
    """Sockets sharing a pool: xsk_tx_peek_release_desc_batch → xsk_tx_peek_release_fallback
    (net/xdp/xsk.c), one xsk_tx_peek_desc per descriptor plus a walk of the pool's socket
    list; the tx NAPI, the bottleneck here, pays it."""
    private = _run("null", "zerocopy", "mq.queues=2")
    shared = _run("null", "zerocopy", "mq.queues=2", "mq.umem=shared-pool")
    ops_p, ops_s = set(private.profile()["op"]), set(shared.profile()["op"])
    assert "xsk_tx_peek_release_desc_batch" in ops_p and "xsk_tx_peek_desc" not in ops_p
    assert "xsk_tx_peek_desc" in ops_s and "xsk_tx_peek_release_desc_batch" not in ops_s
    # a loss, not its size: that follows the fitted xsk_tx_peek_desc, which the veth batch
    # CPU row (one peek per desc there) has pulled down to the batched per-desc cost
    assert shared.pps["tx"] < 0.995 * private.pps["tx"]


def test_shared_umem_splits_the_frames():
    res = _run("null", "zerocopy", "xsk.umem_frames=8192", "xsk.fill_size=2048",
               "mq.queues=4", "mq.umem=shared")
    assert [q.invariants["umem_frames"] for q in res.queues] == [2048] * 4
    assert res.invariants["umem_frames"] == 8192


def test_skew_makes_the_hot_queue_the_named_bottleneck():
    sets = ("workload.kind=rxdrop", "workload.rate_pps=40000000", "mq.queues=4")
    even = _run("null", "zerocopy", *sets)
    skew = _run("null", "zerocopy", *sets, "mq.skew=0.6")
    assert not even.saturated
    assert skew.bottleneck.startswith("q0/") and skew.saturated
    hot, cold = skew.queues[0], skew.queues[1]
    assert hot.pps["rx"] > 3 * cold.pps["rx"]
    assert sum(traffic_shares(4, 0.6)) == pytest.approx(1.0)


def test_one_cpu_pinning_shares_the_cpu():
    """Every queue's app and NAPI on the same two CPUs: no more than one queue's rate."""
    one = _run("null", "zerocopy").pps["tx"]
    res = _run("null", "zerocopy", "mq.queues=4", "mq.pinning=one-cpu")
    assert res.pps["tx"] <= 1.05 * one
    assert set(res.label_cpu) == {0, 1}
    same = _run("null", "zerocopy", "mq.queues=2", "mq.pinning=same-cpu")
    assert {c for lab, c in zip(same.labels, same.label_cpu, strict=True)
            if lab.startswith("q1/")} == {1}


def test_per_queue_results_add_up():
    res = _run("veth", "copy", "mq.queues=3")
    assert len(res.queues) == 3
    assert sum(q.pps["tx"] for q in res.queues) == pytest.approx(res.pps["tx"])
    assert sum(q.counters["tx_packets"] for q in res.queues) == res.counters["tx_packets"]
    assert len(res.to_json()["queues"]) == 3
    assert set(res.profile("q2")["context"]) <= {lab for lab in res.labels
                                                 if lab.startswith("q2/")}
    assert "sock2" in res.report()


@pytest.mark.parametrize("device,mode,workload", [
    ("null", "zerocopy", "l2fwd"), ("virtio-net", "zerocopy", "l2fwd"),
    ("virtio-net", "pmd", "l2fwd"), ("tun", "copy", "txonly"), ("veth", "udp", "txonly")])
@pytest.mark.parametrize("n", [1, 2, 5])
def test_books_and_determinism_for_every_queue_count(device, mode, workload, n):
    sets = ["workload.duration_s=0.0015", f"workload.kind={workload}", f"mq.queues={n}",
            "mq.host=shared"]
    cfg = RunConfig(device=device, mode=mode).override(sets)
    a, b = run(cfg), run(cfg)
    assert a.invariants["balanced"] and len(a.invariants.get("per_queue", [0])) == n
    assert a.to_json_text() == b.to_json_text()


def test_the_null_wire_is_shared():
    """Up to the shared resource: the null NIC's 148.8 Mpps wire is split between queues."""
    cfg = RunConfig(device="null", mode="zerocopy").override(SHORT)
    assert run(cfg.override(["mq.queues=4"])).pps["tx"] <= 148_809_523 * 1.001


def test_sixteen_queues():
    res = _run("null", "zerocopy", "mq.queues=16", "mq.pinning=same-cpu")
    assert len(res.queues) == 16 and res.invariants["balanced"]


@pytest.mark.parametrize("sets,field", [
    (["mq.skew=0.5", "mq.queues=2"], "mq.skew"),
    (["mq.skew=1", "mq.queues=4", "workload.rate_pps=1e6"], "mq.skew"),
    (["mq.queues=16", "null.app_cpu=8"], "mq.queues"),
    (["xsk.umem_frames=4096", "xsk.fill_size=2048", "mq.queues=4", "mq.umem=shared"],
     "mq.umem"),
    (["mq.queues=17"], "mq.queues"),
    (["mq.pinning=numa"], "mq.pinning"),
])
def test_bad_multiqueue_requests_name_the_field(sets, field):
    with pytest.raises(ValueError, match=field.replace(".", r"\.")) as err:
        RunConfig(device="null", mode="zerocopy").override(sets)
    assert "allowed" in str(err.value) or "must be" in str(err.value)


def test_faults_hit_every_queue_and_keep_the_books():
    """A fill-ring stop on a 2-queue rxdrop run: every queue starves, drops with its kernel
    name, keeps its books, and reports its fault windows."""
    sets = ["workload.kind=rxdrop", "workload.duration_s=0.004", "mq.queues=2",
            "faults.fill_stop_us=200", "faults.fill_stop_period_us=1500"]
    res = run(RunConfig(device="null", mode="zerocopy").override(sets))
    assert res.invariants["balanced"]
    for q in res.queues:
        assert q.counters["fill_ring_empty_descs"] > 0
        assert q.faults is not None and q.faults["windows"]
    assert res.faults == res.queues[0].faults


@pytest.mark.parametrize("device,mode,workload", [
    ("virtio-net", "zerocopy", "l2fwd"), ("null", "zerocopy", "txonly"),
    ("tun", "zerocopy", "txonly")])
def test_a_queue_on_cpus_of_its_own_runs_as_it_would_alone(device, mode, workload):
    """Queues meet only on CPUs they share (kernels/multiq.pick) and each draws its own
    seeded stream (kernels/rng.py): with the default spread pinning, queue 0 of three gives
    the bytes a run of its config alone gives, interrupt jitter included."""
    cfg = RunConfig(device=device, mode=mode).override(SHORT + [f"workload.kind={workload}",
                                                                "mq.queues=3"])
    res = run(cfg)
    assert res.queues[0].to_json_text() == run(queue_configs(cfg)[0]).to_json_text()
