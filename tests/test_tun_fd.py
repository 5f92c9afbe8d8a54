"""tun.peer=fd: a process on the tap fd, as the measured tap in a namespace. Its write() runs
the receive path (XDP, the copy into the socket) on its own CPU; its read() drains what the
socket sent; books balance; bigger frames and generic XDP are slower; bad combinations are
refused in one line; the measured tun grids map onto this config."""
import json

import pytest

from xskbench import calibrate, ops
from xskbench.config import RunConfig
from xskbench.devices.tun.counterpart import counterpart
from xskbench.paths import DATA_DIR
from xskbench.run import run

FD = ["mode=copy", "tun.peer=fd", "tun.app_cpu=1", "tun.napi_cpu=0",
      "workload.duration_s=0.002", "workload.warmup_s=0.0005", "testbed.profile=tun-ovs"]


def _run(*sets):
    return run(RunConfig(device="tun").override([*FD, *sets]))


def _calls(res, label, name):
    return int(res.op_calls[res.labels.index(label), ops.INDEX[name]])


def _books(res):
    inv = res.invariants
    assert inv["balanced"]
    assert sum(inv["frames"].values()) == inv["umem_frames"]
    p = inv["packets"]
    assert p["offered"] == p["delivered"] + sum(p["dropped"].values()) + p["in_flight"]
    return p


@pytest.mark.parametrize("kind", ["rxdrop", "l2fwd", "txonly"])
@pytest.mark.parametrize("xdp_mode", ["native", "skb"])
def test_books_balance(kind, xdp_mode):
    res = _run(f"workload.kind={kind}", f"tun.xdp_mode={xdp_mode}")
    p = _books(res)
    assert p["delivered"] > 1000
    if kind != "txonly":  # every write is offered, and lands in the socket or a drop counter
        assert res.counters["offered_packets"] == _calls(res, "peer", "ksys_write")


def test_a_full_ptr_ring_drops_under_tuns_counter_and_books_balance():
    res = _run("workload.kind=txonly", "tun.tx_queue_len=4", "tun.fd_batch=1")
    p = _books(res)
    assert p["dropped"]["tun_tx_dropped"] > 0
    assert set(k for k, v in p["dropped"].items() if v) == {"tun_tx_dropped"}
    # skb_orphan completed every descriptor that reached tun_net_xmit, dropped or not
    assert res.counters["tx_packets"] + res.counters["tun_tx_dropped"] == \
        _calls(res, "sys", "tun_net_xmit")


def test_an_empty_fill_ring_drops_in_the_writers_redirect():
    """The application stops refilling for 100 of every 200 us: __xsk_rcv finds no buffer."""
    res = _run("workload.kind=rxdrop", "xsk.fill_size=64", "xsk.batch_size=64",
               "faults.fill_stop_us=100", "faults.fill_stop_period_us=200")
    p = _books(res)
    assert p["dropped"]["rx_dropped"] > 0


def test_the_receive_path_runs_on_the_writers_cpu():
    res = _run("workload.kind=rxdrop", "tun.xdp_mode=skb")
    n = res.counters["offered_packets"]
    for name in ("ksys_write", "tun_build_skb", "do_xdp_generic", "bpf_prog_run_xdp",
                 "__xsk_rcv", "xdp_do_flush"):
        assert _calls(res, "peer", name) == n, name
        assert _calls(res, "app", name) == 0 and _calls(res, "sys", name) == 0, name
    assert res.label_cpu[res.labels.index("peer")] == 0
    assert res.bottleneck == "peer"  # the writer does all the kernel work


def test_native_xdp_skips_the_skb():
    res = _run("workload.kind=rxdrop", "tun.xdp_mode=native")
    for name in ("do_xdp_generic", "__netif_receive_skb", "kfree_skb", "tun_get_user"):
        assert _calls(res, "peer", name) == 0, name


def test_txonly_reader_reads_what_the_socket_sent():
    res = _run("workload.kind=txonly")
    read = _calls(res, "peer", "tun_do_read")
    assert read > 1000 and _calls(res, "peer", "ksys_write") == 0
    assert _calls(res, "peer", "ksys_read") >= read  # plus the -EAGAIN reads
    # the window reads what was sent in it, plus what the ptr_ring (500) held at its start
    assert read <= _calls(res, "sys", "tun_net_xmit") + 500


def test_bigger_frames_and_generic_xdp_are_slower():
    pps = {(size, mode): max(_run("workload.kind=rxdrop", f"workload.packet_size={size}",
                                  f"tun.xdp_mode={mode}").pps.values())
           for size in (64, 1500) for mode in ("native", "skb")}
    assert pps[1500, "native"] < pps[64, "native"]
    assert pps[1500, "skb"] < pps[64, "skb"]
    assert pps[64, "skb"] < pps[64, "native"]


@pytest.mark.parametrize(("sets", "fragments"), [
    (["mode=zerocopy", "tun.peer=fd"], ["mode='zerocopy'", "tun.peer='fd'", "mode='copy'"]),
    (["mode=copy", "tun.peer=fd", "mq.queues=2"], ["mq.queues=2", "tun.peer='fd'"]),
    (["mode=copy", "tun.peer=fd", "workload.kind=rxdrop", "workload.rate_pps=1e5"],
     ["workload.rate_pps=100000", "rxdrop", "workload.rate_pps=none"]),
    (["mode=copy", "tun.peer=fd", "tun.napi_cpu=0", "tun.app_cpu=0"],
     ["tun.napi_cpu=0", "tun.app_cpu"]),
    (["mode=copy", "workload.kind=l2fwd"], ["workload.kind='l2fwd'", "tun.peer='fd'"]),
])
def test_bad_combinations_are_one_line(sets, fragments):
    with pytest.raises(ValueError) as exc:
        RunConfig(device="tun").override(sets)
    msg = str(exc.value)
    assert "\n" not in msg
    for f in fragments:
        assert f in msg, msg


def _points(name):
    return json.loads((DATA_DIR / "measurements" / f"{name}.json").read_text())["points"]


def test_measured_tun_points_map_to_the_fd_peer():
    for name in ("tun_copy_rxdrop", "tun_copy_txonly", "tun_copy_l2fwd"):
        for p in _points(name):
            mcfg = p["result"]["config"]
            cfg = counterpart(mcfg)
            assert cfg["tun"]["peer"] == "fd" and cfg["mode"] == "copy"
            assert cfg["tun"]["app_cpu"] == mcfg["real"]["app_cpu"]
            assert cfg["tun"]["napi_cpu"] == mcfg["real"]["peer_cpu"]
            assert cfg["tun"]["xdp_mode"] == mcfg["real"]["xdp_mode"]
            assert cfg["tun"]["fd_batch"] == cfg["xsk"]["batch_size"] == \
                mcfg["xsk"]["batch_size"]
            assert cfg["workload"]["packet_size"] == mcfg["workload"]["packet_size"]
            RunConfig.from_dict(cfg)  # a valid emulated config


def test_unmodelled_measured_setups_say_why():
    mcfg = _points("tun_copy_rxdrop")[0]["result"]["config"]
    for change, word in ((("real", "wait", "poll"), "poll"), (("real", "sender", "xdp"), "sender"),
                         ((None, "mode", "zerocopy"), "zero-copy")):
        m = json.loads(json.dumps(mcfg))
        sec, key, value = change
        (m[sec] if sec else m)[key] = value
        why = counterpart(m)
        assert isinstance(why, str) and word in why


def test_measured_tun_rows_are_fit_rows():
    rows, _ = calibrate.measured_rows()
    tun = [r for r in rows if r["source"].startswith("measured:tun")]
    assert len(tun) == 19  # 27 points, 8 repeat a grid's base configuration
    assert {r["kind"] for r in tun} == {"fit"}
