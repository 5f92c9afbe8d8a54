"""AF_XDP multi-buffer (xsk.multi_buffer, XDP_USE_SG): a packet longer than one UMEM buffer
spans ceil(len / buffer) descriptors on every ring, the books stay whole, and a jumbo
packet's extra descriptors cost the contexts that handle them; refusals name the knobs."""
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from xskbench import ops
from xskbench.config import RunConfig
from xskbench.run import run

SHORT = ["workload.duration_s=0.002", "workload.warmup_s=0.0005"]


def cfg(*sets, device="null"):
    return RunConfig.from_dict({"device": device}).override([*SHORT, *sets])


def calls(r, op):
    return int(r.op_calls[:, op].sum())


def jumbo(mode, kind, size=9000, frame=4096):
    return run(cfg(f"mode={mode}", f"workload.kind={kind}", f"workload.packet_size={size}",
                   f"xsk.frame_size={frame}", "xsk.multi_buffer=true"))


@pytest.mark.parametrize("mode", ["zerocopy", "copy"])
@pytest.mark.parametrize("kind", ["txonly", "rxdrop", "l2fwd"])
def test_jumbo_frames_balance_the_books(mode, kind):
    r = jumbo(mode, kind)
    inv = r.invariants
    assert inv["balanced"]
    assert sum(inv["frames"].values()) == inv["umem_frames"]
    delivered = r.counters["rx_packets" if kind == "rxdrop" else "tx_packets"]
    assert delivered > 100
    nbytes = r.counters["rx_bytes" if kind == "rxdrop" else "tx_bytes"]
    assert nbytes == 9000 * delivered  # every packet whole: its buffers add up to its length


@pytest.mark.parametrize(("frame", "size", "nseg"),
                         [(4096, 9000, 3), (2048, 9000, 6), (4096, 3841, 2), (2048, 1793, 2)])
def test_a_packet_takes_ceil_len_over_buffer_descriptors(frame, size, nseg):
    # buffer = frame_size - XDP_PACKET_HEADROOM (256): 3840 or 1792 bytes
    tx = jumbo("zerocopy", "txonly", size, frame)
    # every TX descriptor is peeked, posted and reaped; packets complete whole
    assert calls(tx, ops.NULL_CLEAN_TX) == nseg * tx.counters["tx_packets"]
    assert calls(tx, ops.APP_DESC_CONTD) == (nseg - 1) * calls(tx, ops.APP_PKT)
    rx = jumbo("zerocopy", "rxdrop", size, frame)
    assert calls(rx, ops.APP_DESC_CONTD) == (nseg - 1) * calls(rx, ops.APP_PKT)
    packets = calls(rx, ops.XSK_BUFF_ADD_FRAG) // (nseg - 1)  # polled, one chain each
    assert calls(rx, ops.XSK_RCV_ZC) == nseg * (packets - rx.counters["rx_ring_full"])
    cp = jumbo("copy", "rxdrop", size, frame)
    assert calls(cp, ops.XSK_RCV_COPY) == nseg * calls(cp, ops.BPF_PROG_RUN_XDP) - nseg * (
        cp.counters["rx_dropped"] + cp.counters["rx_ring_full"])


def test_a_packet_that_fits_one_buffer_takes_one_descriptor_with_multi_buffer():
    base = run(cfg("mode=zerocopy", "workload.kind=txonly", "workload.packet_size=3840"))
    sg = run(cfg("mode=zerocopy", "workload.kind=txonly", "workload.packet_size=3840",
                 "xsk.multi_buffer=true"))
    assert calls(sg, ops.APP_DESC_CONTD) == 0
    assert sg.counters == base.counters


def test_copy_tx_builds_one_skb_per_packet_with_a_frag_per_extra_descriptor():
    r = jumbo("copy", "txonly")
    skbs = calls(r, ops.SOCK_ALLOC_SEND_SKB)
    assert calls(r, ops.XSK_GENERIC_XMIT) == 3 * skbs
    assert calls(r, ops.XSK_BUILD_SKB_FRAG) == 2 * skbs
    assert calls(r, ops.DEV_DIRECT_XMIT) == skbs
    # the frags are built in the sendto (the application's CPU), not in NAPI
    sys_label = r.labels.index("sys")
    assert r.op_calls[sys_label, ops.XSK_BUILD_SKB_FRAG] == 2 * skbs


@pytest.mark.parametrize("indirect", [True, False])
def test_virtio_copy_jumbo_tx_is_one_chain_per_packet(indirect):
    """xmit_skb puts the header and a sg per descriptor into one buffer (an indirect table
    or a chain); the used entry completes the skb's three descriptors."""
    r = run(cfg("mode=copy", "workload.kind=txonly", "workload.packet_size=9000",
                "xsk.multi_buffer=true", f"virtio.indirect={str(indirect).lower()}",
                device="virtio-net"))
    assert r.invariants["balanced"]
    pkts = r.counters["tx_packets"]
    assert pkts > 100 and r.counters["tx_bytes"] == 9000 * pkts
    assert calls(r, ops.XSK_GENERIC_XMIT) == 3 * calls(r, ops.SOCK_ALLOC_SEND_SKB)
    assert calls(r, ops.VIRTQUEUE_ADD_OUTBUF) == calls(r, ops.START_XMIT)
    assert calls(r, ops.FREE_OLD_XMIT_PTR) == pkts  # one used entry per packet


def test_jumbo_frames_cost_less_per_byte_than_small_ones():
    """Per-packet work (syscalls, skbs, NAPI) is shared by three buffers' bytes."""
    def kernel_cycles_per_byte(size, mb):
        r = run(cfg("mode=copy", "workload.kind=txonly", f"workload.packet_size={size}",
                    f"xsk.multi_buffer={str(mb).lower()}", "null.link_gbps=1000"))
        return r.op_cycles[[r.labels.index("sys"), r.labels.index("napi")]].sum() / (
            r.counters["tx_bytes"])
    assert kernel_cycles_per_byte(9000, True) < kernel_cycles_per_byte(3000, False)


@pytest.mark.parametrize(("sets", "device", "fragments"), [
    (["workload.packet_size=9000"], "null",
     ["workload.packet_size=9000", "xsk.frame_size=4096", "xsk.multi_buffer=true"]),
    (["workload.packet_size=9000", "xsk.multi_buffer=true", "xsk.batch_size=1024",
      "xsk.tx_size=2048"], "null", ["xsk.batch_size=1024", "3 descriptors", "xsk.tx_size"]),
    (["mode=zerocopy", "xsk.multi_buffer=true"], "virtio-net",
     ["xsk.multi_buffer=true", "xdp_zc_max_segs", "EOPNOTSUPP"]),
    (["mode=zerocopy", "workload.packet_size=9000", "xsk.multi_buffer=true"], "virtio-net",
     ["xsk.multi_buffer=true", "EOPNOTSUPP"]),
    (["mode=copy", "workload.kind=rxdrop", "workload.packet_size=9000",
      "xsk.multi_buffer=true"], "virtio-net",
     ["workload.packet_size=9000", "mergeable RX buffers is not modelled"]),
    (["mode=pmd", "workload.packet_size=9000", "xsk.multi_buffer=true"], "virtio-net",
     ["workload.packet_size=9000", "does not model multi-buffer", "virtio-net copy"]),
])
def test_refusals_name_the_knobs(sets, device, fragments):
    with pytest.raises(ValueError) as exc:
        cfg(*sets, device=device)
    msg = str(exc.value)
    assert "\n" not in msg
    for f in fragments:
        assert f in msg, (f, msg)


@settings(max_examples=12, derandomize=True, deadline=None, database=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])
@given(data=st.data())
def test_random_multi_buffer_configs_balance(data):
    """Jumbo frames under small rings, short batches, ring-full drops, busy poll and no
    need_wakeup: every frame in one place, every packet whole."""
    d = data.draw
    frame = d(st.sampled_from([2048, 4096]))
    headroom = d(st.sampled_from([0, 256]))
    room = frame - headroom - 256
    size = d(st.integers(room + 1, 9000))
    ring = d(st.sampled_from([64, 256, 2048]))
    sets = {"mode": d(st.sampled_from(["zerocopy", "copy"])),
            "workload.kind": d(st.sampled_from(["txonly", "rxdrop", "l2fwd"])),
            "workload.packet_size": size, "xsk.frame_size": frame, "xsk.headroom": headroom,
            "xsk.multi_buffer": True, "xsk.batch_size": d(st.sampled_from([1, 7, 16])),
            "xsk.tx_size": ring, "xsk.rx_size": ring, "xsk.comp_size": ring,
            "xsk.need_wakeup": d(st.booleans()), "xsk.busy_poll": d(st.booleans()),
            "xsk.tx_full": d(st.sampled_from(["retry", "drop"])),
            "null.ring_size": d(st.sampled_from([64, 1024])),
            "null.link_gbps": d(st.sampled_from([10.0, 1000.0])),
            "workload.duration_s": 0.001, "workload.warmup_s": 0.0002}
    try:
        c = RunConfig.from_dict({"device": "null"}).replace(**sets)
    except ValueError:
        assume(False)
    r = run(c)
    inv = r.invariants
    assert inv["balanced"] and sum(inv["frames"].values()) == inv["umem_frames"]
    kind = sets["workload.kind"]
    got = r.counters["rx_packets" if kind == "rxdrop" else "tx_packets"]
    assert r.counters["rx_bytes" if kind == "rxdrop" else "tx_bytes"] == size * got
