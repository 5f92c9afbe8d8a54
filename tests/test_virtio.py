"""virtio-net: the seeds' headline numbers, the direction of every knob, books in every mode.

Runs are short (2-4 ms emulated). Scenario configs come from data/scenarios.yaml, so the
tests check exactly what calibration fitted (or predicts).
"""
import json

import pytest

from xskbench import calibrate, cli
from xskbench.config import RunConfig
from xskbench.run import run

# Seeds 000 and 004 put the same guest TX ops on a CPU at 100 %: ~395 cycles/packet at a stated
# 2.5 GHz against >= 746 at any plausible clock; one op table cannot give both (README,
# "Calibration and reproduction", state). Strict: a fix that brings them in must drop the mark.
KNOWN_MISS = ("seed 004 (2021, CPU unstated) is compared, not fitted: one cost table cannot give "
              "it and seed 000 (README calibration state)")


def scenario(name, *sets, duration=0.003):
    sc = calibrate.scenarios()[name]
    d = json.loads(json.dumps(sc["config"]))
    d.setdefault("testbed", {})["profile"] = sc["testbed"]
    d["workload"]["duration_s"] = duration
    return RunConfig.from_dict(d).override(list(sets))


def within(x, target, rel):
    return abs(x / target - 1) <= rel


# --- seed 000: PMD and AF_XDP zero copy l2fwd -----------------------------------------------
def test_pmd_l2fwd_reaches_the_seed_rate():
    r = run(scenario("virtio-pmd-l2fwd"))
    assert within(r.pps["rx"], 8.86e6, 0.05), r.pps
    assert within(r.pps["tx"], 8.86e6, 0.05), r.pps
    assert r.invariants["balanced"]
    assert r.counters["offered_packets"] > 0 and r.counters["kicks"] == 0  # polling host


def test_zerocopy_l2fwd_rate_and_napi_cpu():
    r = run(scenario("virtio-zc-l2fwd"))
    assert within(r.pps["rx"], 6.33e6, 0.05), r.pps
    assert within(r.pps["tx"], 6.33e6, 0.05), r.pps
    cpu = r.cpu_per_cpu
    assert abs(cpu["cpu1"] - 100) <= 5, cpu  # tx NAPI (stays scheduled on full budgets)
    assert abs(cpu["cpu2"] - 86) <= 5, cpu   # rx NAPI
    assert r.invariants["balanced"]


def test_guest_cpus_past_31_do_not_share_the_host_core():
    """Host CPUs are numbered apart from the guest's: a guest on CPUs 32-34 (every guest CPU
    field goes to 63) runs as on CPUs 0-2, its host PMD on a core of its own."""
    sets = {"workload.kind": "l2fwd", "workload.duration_s": 0.002}
    low = run(RunConfig(device="virtio-net", mode="zerocopy").replace(**sets))
    high = run(RunConfig(device="virtio-net", mode="zerocopy").replace(**sets, **{
        "virtio.app_cpu": 32, "virtio.tx_napi_cpu": 33, "virtio.rx_napi_cpu": 34}))
    cpu = dict(zip(high.labels, high.label_cpu, strict=True))
    assert cpu.pop("host") not in cpu.values()
    assert high.totals == low.totals


def test_pmd_is_faster_than_zerocopy():
    assert run(scenario("virtio-pmd-l2fwd")).pps["rx"] > run(scenario("virtio-zc-l2fwd")).pps["rx"]


# --- seed 004: desc cache ---------------------------------------------------------------------
SEED_PROFILE = {"virtqueue_add": 27.46, "detach_buf_split": 16.66, "virtnet_xsk_xmit": 16.51,
                "virtqueue_add_outbuf": 14.04, "__kmalloc": 5.18, "kfree": 4.08,
                "virtqueue_get_buf_ctx": 2.80, "xsk_tx_peek_release_desc_batch": 2.22,
                "memset_erms": 2.08, "virtqueue_kick_prepare": 0.83, "virtnet_xsk_run": 0.76,
                "__free_old_xmit_ptr": 0.62, "vring_map_one_sg": 0.60, "kmalloc_slab": 0.41}


def _cpu_profile(r, cpu):
    sel = [i for i, c in enumerate(r.label_cpu) if c == cpu]
    cyc = r.op_cycles[sel].sum(axis=0)
    from xskbench import ops
    return {ops.NAMES[j]: 100 * cyc[j] / cyc.sum() for j in range(len(cyc))}


@pytest.mark.xfail(strict=True, reason=KNOWN_MISS)
def test_desc_cache_gain_and_profile():
    off = run(scenario("virtio-desc-nocache"))
    on = run(scenario("virtio-desc-cache"))
    assert within(off.pps["tx"], 2.68e6, 0.05), off.pps
    assert within(on.pps["tx"], 3.11e6, 0.05), on.pps
    gain = on.pps["tx"] / off.pps["tx"] - 1
    assert abs(gain - 0.16) <= 0.03, gain
    assert abs(off.cpu_per_cpu["cpu1"] - 100) <= 2
    prof = _cpu_profile(off, 1)
    # the seed's xsk_tx_peek_desc is the batch peek in the modelled (merged) driver
    bad = {k: (round(prof[k], 2), v) for k, v in SEED_PROFILE.items() if abs(prof[k] - v) > 3}
    assert not bad, bad
    assert on.op_calls[:, _op("__kmalloc")].sum() == 0
    assert off.op_calls[:, _op("virtqueue_desc_cache_get")].sum() == 0


def _op(name):
    from xskbench import ops
    return ops.INDEX[name]


def test_desc_cache_threshold_below_sg_count_falls_back_to_kmalloc():
    below = run(scenario("virtio-desc-cache", "virtio.desc_cache_threshold=1", duration=0.002))
    at = run(scenario("virtio-desc-cache", "virtio.desc_cache_threshold=2", duration=0.002))
    assert below.op_calls[:, _op("__kmalloc")].sum() > 0
    assert at.op_calls[:, _op("__kmalloc")].sum() == 0
    assert at.pps["tx"] > below.pps["tx"]


# --- knobs ------------------------------------------------------------------------------------
def test_indirect_off_skips_the_table_allocation():
    on = run(scenario("virtio-desc-nocache", duration=0.002))
    off = run(scenario("virtio-desc-nocache", "virtio.indirect=false", duration=0.002))
    assert off.op_calls[:, _op("__kmalloc")].sum() == 0
    assert off.pps["tx"] > on.pps["tx"]  # MST's suggestion: no indirect for XDP


def test_the_host_copies_the_payload_with_and_without_indirect_tables():
    """A chained buffer's head is the 12-byte vnet header; the device reads the payload
    from its last sg, as it does from an indirect table's."""
    per_pkt = {}
    for indirect in ("true", "false"):
        res = run(scenario("virtio-desc-nocache", f"virtio.indirect={indirect}",
                           "workload.packet_size=1500", duration=0.002))
        i = _op("rte_vhost_dequeue_burst")
        per_pkt[indirect] = res.op_bytes[:, i].sum() / res.op_calls[:, i].sum()
    assert per_pkt["true"] == per_pkt["false"] == 1500


def test_smaller_budget_costs_more_per_packet():
    big = run(scenario("virtio-zc-l2fwd", duration=0.002))
    small = run(scenario("virtio-zc-l2fwd", "virtio.napi_budget=8", duration=0.002))
    assert small.pps["tx"] < big.pps["tx"]


def test_small_queue_limits_the_batch():
    big = run(scenario("virtio-desc-nocache", duration=0.002))
    small = run(scenario("virtio-desc-nocache", "virtio.queue_size=16", duration=0.002))
    assert small.pps["tx"] < big.pps["tx"]


def test_wakeup_strategies():
    ipi = run(scenario("virtio-zc-l2fwd", duration=0.002))
    local = run(scenario("virtio-zc-l2fwd", "virtio.wakeup=local", duration=0.002))
    inline = run(scenario("virtio-zc-l2fwd", "virtio.wakeup=inline", duration=0.002))
    # local: tx NAPI runs on the application's CPU (cpu0) and competes with it
    assert local.cpu_per_cpu["cpu0"] >= 99 and local.cpu_per_cpu.get("cpu1", 0) < 50
    assert local.pps["tx"] < ipi.pps["tx"]
    # ipi: tx NAPI stays on cpu1
    assert ipi.cpu_per_cpu["cpu1"] > 90
    # inline: the xmit runs inside sendto, charged to the syscall
    assert inline.cpu["sys"] > ipi.cpu["sys"]
    assert inline.op_calls[inline.labels.index("sys"), _op("virtqueue_add")] > 0


def test_event_idx_off_still_suppresses_kicks_for_a_polling_host():
    r = run(scenario("virtio-zc-l2fwd", "virtio.event_idx=false", duration=0.002))
    assert r.counters["kicks"] == 0 and r.pps["tx"] > 1e6


def test_vhost_net_host_is_kicked():
    r = run(scenario("virtio-desc-nocache", "virtio.host=vhost-net", duration=0.002))
    assert r.counters["kicks"] > 0 and r.pps["tx"] > 0


# --- books in every mode ------------------------------------------------------------------------
@pytest.mark.parametrize("mode", ["zerocopy", "copy", "pmd"])
@pytest.mark.parametrize("kind", ["txonly", "rxdrop", "l2fwd"])
def test_books_balance(mode, kind):
    cfg = scenario("virtio-zc-l2fwd", f"mode={mode}", f"workload.kind={kind}", duration=0.002)
    r = run(cfg)
    assert r.invariants["balanced"]
    assert r.pps["tx"] > 0 or r.pps["rx"] > 0


# --- CLI ----------------------------------------------------------------------------------------
def test_cli_set_desc_cache(capsys):
    rc = cli.main(["run", "--device", "virtio-net", "--mode", "zerocopy", "--workload", "txonly",
                   "--duration", "0.002", "--set", "virtio.desc_cache=true",
                   "virtio.desc_cache_threshold=4", "testbed.profile=xeon-8163", "--json"])
    assert rc in (0, None)
    out = json.loads(capsys.readouterr().out)
    assert out["config"]["virtio"]["desc_cache"] is True
    assert out["pps"]["tx"] > 0


def test_bad_queue_size_is_rejected():
    with pytest.raises(ValueError):
        RunConfig(device="virtio-net").override(["virtio.queue_size=300"])
