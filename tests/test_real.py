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
from xskbench.real import bpf
from xskbench.real import measure as M
from xskbench.real import topology as T

REPO = Path(__file__).resolve().parent.parent
AVAILABLE, WHY = M.afxdp_available()
real = pytest.mark.skipif(not AVAILABLE, reason=WHY or "real AF_XDP unavailable")

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
    with pytest.raises(M.RealUnavailable) as e:
        M.check_environment(euid=1000, cap_eff=0, probe=False)
    msg = str(e.value)
    assert "\n" not in msg
    assert "needs root" in msg and "uid 1000" in msg
    for cap in ("CAP_NET_ADMIN", "CAP_BPF"):
        assert cap in msg
    # root without capabilities names what is missing
    with pytest.raises(M.RealUnavailable, match="running as root without CAP_NET_ADMIN"):
        M.check_environment(euid=0, cap_eff=0, probe=False)
    # CAP_SYS_ADMIN stands in for CAP_BPF (kernels before 5.8)
    caps = sum(1 << b for n, b in M.CAPS.items() if n != "CAP_BPF")
    M.check_environment(euid=0, cap_eff=caps, probe=False)


def test_config_checks():
    M.MeasureConfig().check()
    for bad, match in ((dict(ring=1000), "ring=1000"), (dict(batch=4096), "batch=4096"),
                       (dict(packet_size=9000), "packet_size=9000"),
                       (dict(mode="udp", workload="l2fwd"), "l2fwd needs an AF_XDP"),
                       (dict(device="tap", sender="xdp"), "does not apply to a tap"),
                       (dict(device="nic"), "device='nic'")):
        with pytest.raises(ValueError, match=match):
            M.MeasureConfig(**bad).check()
    d = M.MeasureConfig(ring=512).to_dict()
    assert d["xsk"]["fill_size"] == 1024 and d["workload"]["kind"] == "rxdrop"


def test_udp_frame_is_valid_ipv4_udp():
    f = M.udp_frame("02:00:00:00:00:02", "02:00:00:00:00:01", "198.18.0.1", "198.18.0.2", 64)
    assert len(f) == 64 and f[12:14] == b"\x08\x00"
    ip = f[14:34]
    assert M._csum(ip) == 0  # header checksum verifies
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


def test_aggregate_mean_and_spread():
    runs = [{"window_s": 1.0, "pps": {"rx": v, "tx": 0.0}, "bps": {"rx": 8 * v, "tx": 0.0},
             "offered_pps": v, "cpu": {"app": 50.0, "peer": 90.0, "ksoftirqd": 0.0},
             "counters": {"rx_packets": int(v)}, "bottleneck": "peer"} for v in (1e6, 3e6)]
    agg = M.aggregate(M.MeasureConfig(repeats=2), runs, {})
    assert agg["pps"]["rx"] == 2e6 and agg["counters"]["rx_packets"] == 2_000_000
    s = agg["spread"]["pps"]["rx"]
    assert (s["min"], s["max"], s["n"]) == (1e6, 3e6, 2) and s["cv"] == pytest.approx(0.5)
    assert {"version", "seed", "config", "pps", "bps", "cpu", "counters"} <= set(agg)


def test_stored_measurements_have_the_run_keys():
    files = sorted((REPO / "data" / "measurements").glob("*.json"))
    assert files, "data/measurements/ holds the stored real measurements"
    for f in files:
        data = json.loads(f.read_text())
        for p in data["points"]:
            r = p["result"]
            assert {"pps", "bps", "cpu", "counters", "config", "version", "seed",
                    "spread"} <= set(r)
            assert set(r["counters"]) <= set(stats.NAMES)


# --- as root, on the real kernel --------------------------------------------------------------

@pytest.fixture(scope="module")
def compiled():
    if AVAILABLE:
        from xskbench.real import xsk
        xsk.compile_all()


@real
def test_veth_copy_rxdrop_brief_run(compiled):
    fds = sorted(os.listdir("/proc/self/fd"))
    res = M.measure(M.MeasureConfig(duration=1.5, warmup=0.5, repeats=1))
    assert res["pps"]["rx"] > 0 and res["bps"]["rx"] > 0
    assert res["counters"]["rx_packets"] > 0
    assert res["counters"]["rx_bytes"] == 64 * res["counters"]["rx_packets"]
    cpu = res["cpu"]
    assert cpu["app"] > 0 and cpu["peer"] > 0 and "softirq" in cpu
    for c in ("cpu0", "cpu1"):
        assert {"usr", "sys", "softirq", "idle"} <= set(res["cpu_split"][c])
    assert res["kernel"]["ethtool"]["vb"]["rx_queue_0_xdp_redirect"] > 0
    assert set(res["counters"]) <= set(stats.NAMES)
    json.dumps(res)
    _assert_clean(os.getpid())
    assert _wait(lambda: sorted(os.listdir("/proc/self/fd")) == fds), \
        (fds, sorted(os.listdir("/proc/self/fd")))


@real
def test_zerocopy_gets_the_kernels_answer(compiled):
    with pytest.raises(M.MeasureError, match="zero-copy refused by the kernel.*EOPNOTSUPP"):
        M.measure(M.MeasureConfig(mode="zerocopy", duration=0.5, warmup=0))
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
