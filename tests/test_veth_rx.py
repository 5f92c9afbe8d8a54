"""The measured veth pair (veth.peer=xdp_drop): AF_XDP copy-mode receive from the peer's
live-frames sender, and transmit into the peer's XDP_DROP program. The books balance, and
the mechanics go the way the kernel does."""
from functools import cache

import pytest

from xskbench import ops
from xskbench.config import RunConfig
from xskbench.run import run

BASE = ["veth.peer=xdp_drop", "veth.app_cpu=1", "veth.napi_cpu=0",
        "workload.duration_s=0.004", "testbed.cpu_ghz=2.6"]


@cache
def _run(kind, *sets):
    cfg = RunConfig(device="veth", mode="copy").override(BASE + [f"workload.kind={kind}",
                                                                 *sets])
    return run(cfg)


def _cpu(res, label):
    return res.cpu.get(label, 0.0)


@pytest.mark.parametrize("kind", ["rxdrop", "l2fwd", "txonly"])
def test_the_books_balance_with_every_drop_named(kind):
    res = _run(kind)
    inv = res.invariants
    assert inv["balanced"]
    frames = inv["frames"]
    assert sum(frames.values()) == inv["umem_frames"]
    p = inv["packets"]
    assert p["offered"] == p["delivered"] + sum(p["dropped"].values()) + p["in_flight"]
    assert p["delivered"] > 1000
    c = res.counters
    if kind == "txonly":
        assert c["rx_packets"] == 0 and c["tx_packets"] > 0
    else:  # frames really came through the sender and the receiving veth's NAPI
        assert c["rx_packets"] > 0 and c["offered_packets"] >= c["rx_packets"]
        assert _cpu(res, "sender") > 0 and _cpu(res, "rx_napi") > 0
    if kind != "rxdrop":  # the peer's NAPI runs on the sending (the app's) CPU
        assert res.label_cpu[res.labels.index("napi")] == 1 and _cpu(res, "napi") > 0


def test_bigger_packets_give_fewer_packets_per_second_in_copy_mode():
    small, big = _run("rxdrop", "workload.packet_size=64"), _run("rxdrop",
                                                                 "workload.packet_size=1500")
    assert big.pps["rx"] < small.pps["rx"]
    tx_small = _run("txonly", "workload.packet_size=64")
    tx_big = _run("txonly", "workload.packet_size=1500")
    assert tx_big.pps["tx"] < tx_small.pps["tx"]


def test_a_slower_app_overflows_the_rx_ring():
    """rxdrop's app keeps up with the sender; l2fwd's app also transmits every frame (sendto,
    and the peer's XDP_DROP NAPI on its CPU), so it is slower and the RX ring fills: the
    frames veth_poll cannot place are dropped as "rx queue full"."""
    fast, slow = _run("rxdrop"), _run("l2fwd")
    assert slow.pps["rx"] < fast.pps["rx"]
    assert slow.counters["rx_ring_full"] > 0.1 * slow.counters["offered_packets"]
    assert fast.counters["rx_ring_full"] < slow.counters["rx_ring_full"]
    assert slow.invariants["balanced"]


def test_a_small_xdp_ring_drops_at_the_sender():
    """A ring of 2 cannot hold a 64-frame bulk: veth_xdp_xmit returns the frames it could not
    produce (counted as the ptr_ring being full), and the books still balance."""
    res = _run("rxdrop", "veth.ptr_ring_size=2")
    assert res.counters["veth_xdp_ring_full"] > 0
    assert res.invariants["balanced"]


def test_generic_xdp_costs_the_skb_and_the_stack_per_frame():
    """veth.xdp_mode=skb: an skb per frame, GRO and the receive core before the program, a
    flush per packet: fewer packets per second than native XDP, the same books."""
    native, skb = _run("rxdrop"), _run("rxdrop", "veth.xdp_mode=skb")
    assert skb.invariants["balanced"]
    assert skb.pps["rx"] < 0.8 * native.pps["rx"]
    calls = dict(zip(ops.NAMES, skb.op_calls.sum(axis=0), strict=True))
    assert calls["do_xdp_generic"] == calls["__xdp_build_skb_from_frame"] > 0
    # a flush per frame (both counted in the receiving NAPI: the app's rx_packets of the
    # same window count frames flushed before it began)
    assert calls["xdp_do_flush"] >= calls["do_xdp_generic"]


@pytest.mark.parametrize("sets, word", [
    (["veth.peer=bridge", "workload.kind=rxdrop"], "veth.peer='xdp_drop'"),
    (["mode=zerocopy"], "mode='zerocopy'"),
    (["xsk.busy_poll=true", "workload.kind=rxdrop"], "xsk.busy_poll"),
    (["veth.xdp_mode=skb", "workload.kind=txonly"], "veth.xdp_mode='skb'"),
])
def test_combinations_the_model_lacks_are_refused_in_one_line(sets, word):
    with pytest.raises(ValueError, match="veth") as err:
        run(RunConfig(device="veth", mode="copy").override(BASE + sets))
    assert word in str(err.value) and "\n" not in str(err.value)
