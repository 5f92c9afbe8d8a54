"""The veth device: seed 002 (RFC "Optimizing veth xsk performance" v2) and the directions
its mechanics must follow. Short emulated runs (4 ms; the seed scenarios 20 ms) on the
``veth-rfc`` profile."""

import csv
import subprocess
import sys
from functools import cache
from pathlib import Path

import pytest

from xskbench import calibrate, reproduce
from xskbench.config import RunConfig
from xskbench.run import run

REPO = Path(__file__).resolve().parent.parent
BASE = ["workload.packet_size=1342", "workload.duration_s=0.004", "testbed.profile=veth-rfc",
        "veth.app_cpu=0", "veth.napi_cpu=1"]


@cache
def _run(mode, *sets):
    cfg = RunConfig(device="veth", mode=mode).override(BASE + list(sets))
    res = run(cfg)
    assert res.invariants["balanced"]
    return res


def _per_pkt(res, label):
    """Cycles per delivered packet charged to a context label."""
    return res.busy[res.labels.index(label)] / max(res.counters["tx_packets"], 1)


@cache
def _scenario(name):
    res = run(calibrate.scenario_config(name))
    assert res.invariants["balanced"]
    return res


def _veth_rows():
    with open(REPO / "data" / "published.csv", newline="") as f:
        return [r for r in csv.DictReader(f) if r["system"] == "veth"]


def test_rows_not_fitted_are_identities_that_say_why():
    rows = _veth_rows()
    assert len(rows) == 6
    assert all(r["kind"] == "fit" or (r["kind"] == "identity" and r["why"]) for r in rows)


@pytest.mark.parametrize("row", _veth_rows(), ids=lambda r: r["id"])
def test_published_row(row):
    """Every seed-002 row, fitted or predicted, within its tolerance (as `reproduce`)."""
    got = reproduce.metric_value(row, _scenario(row["scenario"]))
    err = reproduce.error_of(row, got)
    assert abs(err) <= float(row["tolerance"]), (row["id"], got, row["value"])


def test_batch_ksoftirqd_is_a_small_share():
    """The batch path's softirq stays far from saturation (published: 15 %)."""
    assert 10 < _scenario("veth-rfc-zc-batch").cpu_per_cpu["cpu1"] < 25


def test_bottlenecks_match_the_seed():
    udp, copy = _scenario("veth-rfc-udp"), _scenario("veth-rfc-copy")
    batch = _scenario("veth-rfc-zc-batch")
    assert udp.cpu_per_cpu["cpu0"] > 95 and udp.cpu_per_cpu.get("cpu1", 0) < 1
    assert copy.cpu_per_cpu["cpu1"] > 95                 # the peer's softirq saturates
    assert copy.counters["veth_xdp_ring_full"] > 0         # the sender outruns it: drops
    assert batch.cpu["app"] > 95                          # the user-space sender limits
    assert batch.bottleneck == "app" and batch.saturated   # ... and the result names it
    assert udp.saturated and udp.bottleneck in ("sys", "backlog")  # the sending CPU is full
    assert batch.counters["veth_xdp_ring_full"] == 0


def test_zerocopy_without_batch_between_copy_and_batch():
    """A prediction (no published row): above copy mode (no skb built in sendto, no ptr_ring
    hop), far below batching: the copy and the non-batch paths both pay the per-skb stack past
    the peer once per packet on the NAPI CPU; only aggregation amortises it."""
    copy = _scenario("veth-rfc-copy").pps["tx"]
    zc = _scenario("veth-rfc-zc").pps["tx"]
    batch = _scenario("veth-rfc-zc-batch").pps["tx"]
    assert 1.05 * copy < zc < 0.5 * batch


def test_csum_offload_off_costs_in_the_computing_context():
    on, off = _run("udp"), _run("udp", "veth.csum_offload=false")
    assert _per_pkt(off, "sys") > _per_pkt(on, "sys") + 400    # csum_and_copy_from_user
    assert _per_pkt(off, "backlog") == pytest.approx(_per_pkt(on, "backlog"), rel=0.02)
    assert off.pps["tx"] < on.pps["tx"]
    on = _run("zerocopy", "veth.batch=true", "xsk.batch_size=32")
    off = _run("zerocopy", "veth.batch=true", "xsk.batch_size=32", "veth.csum_offload=false")
    assert _per_pkt(off, "app") > _per_pkt(on, "app") + 400    # libxudp computes it
    assert _per_pkt(off, "napi_tx") == pytest.approx(_per_pkt(on, "napi_tx"), rel=0.1)


def test_need_wakeup_off_adds_a_sendto_per_batch():
    """Tx NAPI saturated (no batching): with need_wakeup it stays scheduled and the sender
    never kicks; without, every loop of the sender is a sendto (wakeup on a running NAPI)."""
    on = _run("zerocopy", "xsk.batch_size=32")
    off = _run("zerocopy", "xsk.batch_size=32", "xsk.need_wakeup=false")
    assert off.counters["sendto_calls"] >= off.counters["tx_submitted"] / 32
    assert on.counters["sendto_calls"] * 10 < off.counters["sendto_calls"]
    assert off.cpu.get("sys", 0) > on.cpu.get("sys", 0) + 0.5  # ~1 sendto per 32 packets


def test_small_ptr_ring_drops_under_bursts():
    """Sender and peer NAPI on one CPU: each sendto pushes a burst of 32 skbs before the
    softirq can drain; 256 slots absorb it, 16 do not."""
    one_cpu = ("veth.napi_cpu=0", "xsk.batch_size=32")
    big = _run("copy", *one_cpu)
    small = _run("copy", *one_cpu, "veth.ptr_ring_size=16")
    assert big.counters["veth_xdp_ring_full"] == 0
    assert small.counters["veth_xdp_ring_full"] > 0


def test_larger_packets_cost_more_only_where_data_is_copied():
    """1342 vs 342 byte frames: cycles per packet added by the 1000 extra bytes."""
    def extra(mode, labels, *sets):
        small = _run(mode, *sets, "workload.packet_size=342")
        big = _run(mode, *sets)
        return sum(_per_pkt(big, lab) - _per_pkt(small, lab) for lab in labels)

    assert extra("udp", ["sys"]) > 80                          # copy from user
    assert extra("copy", ["sys"]) > 80                         # skb_store_bits
    assert extra("zerocopy", ["napi_tx", "ksoftirqd/1"], "xsk.batch_size=32") > 80  # memcpy
    batch = ("veth.batch=true", "xsk.batch_size=32")
    assert abs(extra("zerocopy", ["napi_tx", "ksoftirqd/1"], *batch)) < 20  # UMEM frags
    assert abs(extra("zerocopy", ["app", "sys"], *batch)) < 20


def test_batch_needs_zerocopy():
    with pytest.raises(ValueError, match="veth.batch"):
        RunConfig(device="veth", mode="copy").override(["veth.batch=true"])


def test_cli_runs_every_mode():
    for mode, extra in (("udp", []), ("copy", []), ("zerocopy", ["--set", "veth.batch=true"])):
        out = subprocess.run(
            [sys.executable, "-m", "xskbench", "run", "--device", "veth", "--mode", mode,
             "--packet-size", "1342", "--duration", "0.003", "--testbed", "veth-rfc", *extra],
            capture_output=True, text=True, cwd=REPO, timeout=300)
        assert out.returncode == 0, out.stderr
