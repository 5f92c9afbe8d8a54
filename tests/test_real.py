"""xskbench.real: the real kernel (AF_XDP copy mode on veth in namespaces).

Tests that touch the kernel skip only when this process is not root (with CAP_NET_ADMIN,
CAP_NET_RAW, CAP_BPF, CAP_SYS_ADMIN) or the kernel lacks AF_XDP/bpf(); the reason is the
one-line message ``xskbench measure`` itself would print.
"""
from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import struct
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest

from xskbench import stats
from xskbench.real import bpf, frames
from xskbench.real import environment as E
from xskbench.real import measure as M
from xskbench.real import result as R
from xskbench.real import topology as T
from xskbench.real.section import MeasureConfig
from xskbench.results import Result

REPO = Path(__file__).resolve().parent.parent
AVAILABLE, WHY = E.afxdp_available()
real = pytest.mark.skipif(not AVAILABLE, reason=WHY or "real AF_XDP unavailable")
# the xdp sender's BPF_PROG_RUN with live frames: some kernels refuse it where AF_XDP works
LIVE_WHY = E.live_frames() if AVAILABLE else WHY
live = pytest.mark.skipif(bool(LIVE_WHY), reason=f"no live frames here: {LIVE_WHY}")

CLI = "import sys, xskbench.real.cli; from xskbench.cli import main; sys.exit(main(sys.argv[1:]))"


def _cli(*args, **kw):
    return [sys.executable, "-c", CLI, "measure", *args]


def _wait(pred, timeout=10.0, step=0.05):
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if pred():
            return True
        time.sleep(step)
    return pred()


def _assert_clean(owner_pid: int | None = None):
    """No xskb- namespace (of ``owner_pid``, or at all), no xskbench XDP program loaded or
    attached anywhere.  Program release is deferred by the kernel (RCU), hence the wait."""
    with M.exclusive():
        prefix = T.PREFIX if owner_pid is None else f"{T.PREFIX}{owner_pid}-"
        assert _wait(lambda: not [n for n in T.xskb_namespaces() if n.startswith(prefix)]), \
            T.xskb_namespaces()
        assert _wait(lambda: not bpf.loaded_programs()), bpf.loaded_programs()
        assert T.xdp_attached_anywhere() == []


# --- no privileges needed -------------------------------------------------------------------

def test_not_root_message_is_one_clear_line():
    with pytest.raises(E.RealUnavailable) as e:
        E.check_environment(euid=1000, cap_eff=0, probe=False)
    msg = str(e.value)
    assert "\n" not in msg
    assert "needs root" in msg and "uid 1000" in msg
    for cap in ("CAP_NET_ADMIN", "CAP_BPF"):
        assert cap in msg
    # root without capabilities names what is missing
    with pytest.raises(E.RealUnavailable, match="running as root without CAP_NET_ADMIN"):
        E.check_environment(euid=0, cap_eff=0, probe=False)
    # CAP_SYS_ADMIN stands in for CAP_BPF (kernels before 5.8)
    caps = sum(1 << b for n, b in E.CAPS.items() if n != "CAP_BPF")
    E.check_environment(euid=0, cap_eff=caps, probe=False)


def test_config_checks():
    MeasureConfig().check()
    for bad, match in ((dict(ring=1000), "ring=1000: must be a power of two"),
                       (dict(batch=4096), "batch=4096: must be <= ring=2048"),
                       (dict(packet_size=9000), "packet_size=9000: must be an int in"),
                       (dict(mode="udp", workload="l2fwd"), "l2fwd needs an AF_XDP"),
                       (dict(device="tun", sender="xdp"), "does not apply to a tun"),
                       (dict(rate_pps=1e6, workload="txonly"), "only the xdp sender"),
                       (dict(device="nic"), "device='nic': must be one of 'veth', 'tun'")):
        with pytest.raises(ValueError, match=match):
            MeasureConfig(**bad)
    with pytest.raises(ValueError, match="app_cpu=4095: not one of this process's CPUs"):
        MeasureConfig(app_cpu=4095).check()
    cfg = MeasureConfig(ring=512, device="tun", rate_pps=None)
    d = cfg.to_dict()
    assert d["xsk"]["fill_size"] == 1024 and d["workload"]["kind"] == "rxdrop"
    assert MeasureConfig.from_dict(d) == cfg
    assert MeasureConfig.from_dict({**d, "device": "tap", "real": {**d["real"],
                                                                   "sender": "tap"}}) == cfg


def test_cli_options_come_from_the_fields():
    from xskbench.cli import build_parser
    from xskbench.real.cli import config_from_args
    p = build_parser()
    args = p.parse_args(["measure", "--batch", "32", "--no-need-wakeup", "--device", "tap",
                         "--set", "rate_pps=none", "ring=512"])
    assert config_from_args(args) == MeasureConfig(batch=32, need_wakeup=False, device="tun",
                                                   ring=512)
    with pytest.raises(ValueError, match=r"measure.ring=1000: must be a power of two"):
        config_from_args(p.parse_args(["measure", "--ring", "1000"]))
    with pytest.raises(ValueError, match="unknown field measure.rings"):
        config_from_args(p.parse_args(["measure", "--set", "rings=64"]))


def test_udp_frame_is_valid_ipv4_udp():
    f = frames.udp_frame("02:00:00:00:00:02", "02:00:00:00:00:01", "198.18.0.1", "198.18.0.2",
                         64)
    assert len(f) == 64 and f[12:14] == b"\x08\x00"
    ip = f[14:34]
    assert frames.csum(ip) == 0  # header checksum verifies
    assert socket.inet_ntoa(ip[12:16]) == "198.18.0.1"
    assert socket.inet_ntoa(ip[16:20]) == "198.18.0.2"
    assert struct.unpack("!H", f[38:40])[0] == 64 - 34  # UDP length


def test_xdp_programs_assemble():
    assert len(bpf.prog_xsk_redirect(5)) == 6 * 8  # ld_imm64 takes two slots
    assert len(bpf.prog_action(bpf.XDP_DROP)) == 2 * 8
    assert bpf.prog_redirect(3)[-8:] == bpf.exit_()


def test_counter_names_are_the_stats_tables():
    from xskbench.real import xsk
    cycles = {"loop_cycles", "idle_cycles", "sleep_cycles"}
    assert set(xsk.CTR_NAMES) - cycles <= set(stats.NAMES)
    assert xsk.CTR_NAMES[xsk.C_CYC] == "loop_cycles" and xsk.CTR_NAMES[xsk.C_XS] == "rx_dropped"


def _window(pps, cpu, window_s=1.0):
    counters = {"rx_packets": int(pps * window_s), "rx_bytes": int(64 * pps * window_s),
                "tx_packets": 0, "tx_bytes": 0}
    return R.make(MeasureConfig(repeats=2), 2.6e9, window_s, cpu,
                  {"app": 1, "peer": 0, "ksoftirqd/0": 0}, {"app": 10.0}, counters,
                  {"offered_pps": pps})


def test_a_measured_window_is_a_result():
    r = _window(2e6, {"app": 50.0, "peer": 95.0, "ksoftirqd/0": 1.0})
    assert isinstance(r, Result)
    assert r.pps == {"rx": 2e6, "tx": 0.0} and r.cpu["peer"] == pytest.approx(95.0)
    assert r.bottleneck == "peer" and r.saturated  # Result's own logic
    assert r.cpu_per_cpu == pytest.approx({"cpu0": 96.0, "cpu1": 50.0})
    frame = r.to_frame()
    assert list(frame.context) == ["app", "peer", "ksoftirqd/0"]
    assert frame.loc[frame.context == "app", "idle_poll_pct"].item() == pytest.approx(10.0)
    d = json.loads(r.to_json_text())
    assert d["seed"] == 1 and d["source"] == "measured" and d["label_cpu"]["peer"] == 0
    back = R.from_json(d)
    assert back.to_json() == d


def test_aggregate_mean_and_spread():
    runs = [_window(v, {"app": 50.0, "peer": c, "ksoftirqd/0": 0.0})
            for v, c in ((1e6, 80.0), (3e6, 40.0))]
    agg = R.aggregate(MeasureConfig(repeats=2), runs, {})
    assert agg.pps["rx"] == 2e6 and agg.counters["rx_packets"] == 4_000_000
    assert agg.cpu["peer"] == pytest.approx(60.0) and agg.window_s == 2.0
    s = agg.extra["spread"]["pps"]["rx"]
    assert (s["min"], s["max"], s["n"]) == (1e6, 3e6, 2) and s["cv"] == pytest.approx(0.5)
    assert [r["pps"]["rx"] for r in agg.extra["runs"]] == [1e6, 3e6]
    assert {"version", "seed", "config", "pps", "bps", "cpu", "counters", "spread",
            "bottleneck", "saturated"} <= set(agg.to_json())


def test_stored_measurements_are_results():
    files = sorted((REPO / "data" / "measurements").glob("*.json"))
    sweeps = [f for f in files if "points" in json.loads(f.read_text())]
    assert len(sweeps) >= 3, "data/measurements/ holds the stored real measurements"
    for f in sweeps:
        data = json.loads(f.read_text())
        m = data["machine"]
        assert m["cpu_model"] and m["kernel"] and m["cpus"] >= 1
        for p in data["points"]:
            r = p["result"]
            assert {"pps", "bps", "cpu", "counters", "config", "version", "seed",
                    "spread", "bottleneck", "saturated", "label_cpu"} <= set(r)
            assert set(r["counters"]) <= set(stats.NAMES)
            res = R.from_json(r)
            assert res.bottleneck == r["bottleneck"]
            assert res.pps["rx"] == pytest.approx(r["pps"]["rx"], rel=1e-5)


# --- as root, on the real kernel --------------------------------------------------------------

@pytest.fixture(scope="module")
def compiled():
    if AVAILABLE:
        from xskbench.real import xsk
        xsk.compile_all()


@real
def test_veth_copy_rxdrop_brief_run(compiled):
    fds = sorted(os.listdir("/proc/self/fd"))
    res = M.measure(MeasureConfig(duration=1.5, warmup=0.5, repeats=1))
    assert isinstance(res, Result)
    assert res.pps["rx"] > 0 and res.bps["rx"] > 0
    assert res.counters["rx_packets"] > 0
    assert res.counters["rx_bytes"] == 64 * res.counters["rx_packets"]
    cpu = res.cpu
    assert cpu["app"] > 0 and cpu["peer"] > 0 and "softirq_pct" in res.extra
    for c in ("cpu0", "cpu1"):
        assert {"usr", "sys", "softirq", "idle"} <= set(res.extra["cpu_split"][c])
    assert res.extra["kernel"]["ethtool"]["vb"]["rx_queue_0_xdp_redirect"] > 0
    # auto's sender: xdp, or xsk where the kernel refuses live frames (the report says why)
    assert res.config.resolved_sender() == ("xsk" if LIVE_WHY else "xdp")
    assert ("sender_note" in res.extra["real"]) == bool(LIVE_WHY)
    assert ("xdp refused" in res.report()) == bool(LIVE_WHY)  # and the kernel's answer:
    assert LIVE_WHY in res.report()  # ("" where live frames work)
    assert set(res.counters) <= set(stats.NAMES)
    assert res.extra["real"]["cpu_mhz"] > 0
    json.loads(res.to_json_text())
    _assert_clean(os.getpid())
    assert _wait(lambda: sorted(os.listdir("/proc/self/fd")) == fds), \
        (fds, sorted(os.listdir("/proc/self/fd")))


@real
def test_tun_rxdrop_is_fed_through_the_tap_fd(compiled):
    res = M.measure(MeasureConfig(device="tun", xdp_mode="skb", duration=0.5, warmup=0.2,
                                  repeats=1))
    assert res.pps["rx"] > 0 and res.extra["real"]["app"]["dev"] == "tap0"
    # every frame the app received was written by the peer into the tap fd
    assert res.extra["offered_pps"] >= res.pps["rx"] * 0.99
    _assert_clean(os.getpid())


@real
@live
def test_rate_pps_paces_the_sender(compiled):
    res = M.measure(MeasureConfig(rate_pps=2e5, duration=1.0, warmup=0.3, repeats=1))
    assert res.extra["offered_pps"] == pytest.approx(2e5, rel=0.15)
    assert res.pps["rx"] == pytest.approx(2e5, rel=0.15)
    assert not res.saturated  # the app polls mostly empty rings
    _assert_clean(os.getpid())


@pytest.mark.parametrize("refused", ["", "[Errno 1] BPF_PROG_RUN(live frames): Operation not "
                                               "permitted"])
def test_sender_falls_back_where_live_frames_are_refused(monkeypatch, refused):
    monkeypatch.setattr(M, "live_frames", lambda: refused)
    auto = M.sender_here(MeasureConfig())
    assert auto.resolved_sender() == ("xsk" if refused else "xdp")
    for cfg in (MeasureConfig(workload="txonly"), MeasureConfig(device="tun", xdp_mode="skb"),
                MeasureConfig(sender="udp")):  # no live frames needed: as they are
        assert M.sender_here(cfg) == cfg
    for cfg, what in ((MeasureConfig(sender="xdp"), "sender=xdp"),
                      (MeasureConfig(rate_pps=2e5), "rate_pps=200000")):
        if refused:
            with pytest.raises(E.MeasureError, match=f"{what}.*refuses.*Operation not permitted"):
                M.sender_here(cfg)
        else:
            assert M.sender_here(cfg) == cfg


@real
def test_zerocopy_gets_the_kernels_answer(compiled):
    with pytest.raises(E.MeasureError, match="zero-copy refused by the kernel.*EOPNOTSUPP"):
        M.measure(MeasureConfig(mode="zerocopy", duration=0.5, warmup=0, repeats=1))
    _assert_clean(os.getpid())


@real
@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT])
def test_killed_midway_leaves_nothing(sig, compiled):
    p = subprocess.Popen(_cli("--duration", "60", "--warmup", "1", "--repeats", "1"),
                         cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        mine = f"{T.PREFIX}{p.pid}-"
        assert _wait(lambda: any(n.startswith(mine) for n in T.xskb_namespaces())
                     and bpf.loaded_programs() or p.poll() is not None, timeout=180)
        assert p.poll() is None, p.communicate()
        time.sleep(2.0)  # well inside the run: XDP attached, traffic flowing
        p.send_signal(sig)
        out, err = p.communicate(timeout=60)
    finally:
        if p.poll() is None:
            p.kill()
            p.wait()
    assert p.returncode == (143 if sig == signal.SIGTERM else 130), err
    assert "Traceback" not in err and "removed" in err
    _assert_clean(p.pid)


@pytest.mark.skipif(os.geteuid() != 0 or not shutil.which("setpriv"),
                    reason="needs root and setpriv to drop the capabilities")
def test_cli_without_capabilities_exits_2_with_one_line():
    home = tempfile.mkdtemp(prefix="xskb-nobody-")  # that user needs a writable numba cache
    os.chmod(home, 0o777)
    env = {**os.environ, "HOME": home, "NUMBA_CACHE_DIR": os.path.join(home, "numba")}
    try:
        # The unprivileged user keeps CAP_DAC_READ_SEARCH (nothing AF_XDP needs) so that it
        # can read the checkout and the venv wherever they live (a fresh clone in a mode-700
        # directory included).
        for drop in (["--inh-caps=-all", "--bounding-set=-all"],
                     ["--reuid=65534", "--regid=65534", "--clear-groups",
                      "--inh-caps=-all,+dac_read_search", "--ambient-caps=+dac_read_search"]):
            p = subprocess.run(["setpriv", *drop, *_cli("--duration", "1")], cwd=REPO,
                               env=env, capture_output=True, text=True, timeout=120)
            assert p.returncode == 2, (p.stdout, p.stderr)
            lines = p.stderr.strip().splitlines()
            assert len(lines) == 1 and "Traceback" not in p.stderr
            assert lines[0].startswith("xskbench: error: xskbench measure needs root")
    finally:
        shutil.rmtree(home, ignore_errors=True)
