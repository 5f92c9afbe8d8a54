"""Bad input beyond the per-field cases of test_config.py: unknown names, wrong types at the
JSON level, incompatible combinations, hostile config files and how the CLI reports them.

Policy for fields of another device (``tun.zc_version`` on a null run) and for fields a mode
does not use (``tun.zc_version`` in copy mode, ``virtio.desc_cache_threshold`` with the cache
off): allowed and ignored. Every RunConfig carries every section, so a default cannot be told
from a value given on purpose, and sweeps across devices/modes keep one config shape.
"""

import json
import subprocess
import sys
from pathlib import Path

import pytest

from xskbench.config import RunConfig, load

ROOT = Path(__file__).resolve().parents[1]


def _with(**changes):
    """RunConfig with dotted changes applied in one go (cross checks see the final combo)."""
    top = {k: v for k, v in changes.items() if "." not in k}
    nested = {k: v for k, v in changes.items() if "." in k}
    return RunConfig(**top).replace(**nested) if nested else RunConfig(**top)


# --- unknown names and wrong types at the JSON level ------------------------------------------

STRUCTURE = [
    # (builder, argument, fragments the one-line message must contain)
    ("dict", {"bogus": {}}, ["unknown key 'bogus'", "'device'", "'xsk'", "'veth'"]),
    ("dict", {"Device": "null"}, ["unknown key 'Device'", "'device'", "'mode'"]),
    ("dict", {"xsk": {"bogus": 1}}, ["unknown field xsk.bogus", "fill_size", "batch_size"]),
    ("dict", {"virtio": {"queue": 256}}, ["unknown field virtio.queue", "queue_size"]),
    ("dict", {"veth": {"batchsize": True}}, ["unknown field veth.batchsize", "batch"]),
    ("dict", {"tun": {"zc": 2}}, ["unknown field tun.zc", "zc_version"]),
    ("dict", {"null": {"ring": 1}}, ["unknown field null.ring", "ring_size"]),
    ("dict", [], ["config must be a mapping, not list"]),
    ("dict", "device: null", ["config must be a mapping, not str"]),
    ("dict", None, ["config must be a mapping, not NoneType"]),
    ("dict", {"xsk": [1, 2]}, ["xsk must be a mapping, not list"]),
    ("dict", {"workload": None}, ["workload must be a mapping, not NoneType"]),
    ("dict", {"testbed": "default"}, ["testbed must be a mapping, not str"]),
    ("dict", {"device": 3}, ["device=3", "'null'", "'virtio-net'", "'tun'", "'veth'"]),
    ("dict", {"device": None}, ["device=None", "'null'", "'veth'"]),
    ("dict", {"device": "virtio"}, ["device='virtio'", "'virtio-net'"]),
    ("dict", {"mode": ["zerocopy"]}, ["mode=['zerocopy']", "'zerocopy'", "'copy'"]),
    ("dict", {"device": "null", "mode": "pmd"}, ["mode='pmd'", "'null'", "'zerocopy'", "'copy'"]),
    ("dict", {"device": "tun", "mode": "udp"}, ["mode='udp'", "'tun'", "'copy'", "'zerocopy'"]),
    ("dict", {"device": "veth", "mode": "pmd"}, ["mode='pmd'", "'veth'", "'udp'"]),
    ("json", '{"xsk": {"tx_size": "512"}}', ["xsk.tx_size='512'", "a power of two in [32, 32768]"]),
    ("json", '{"xsk": {"tx_size": 512.0}}', ["xsk.tx_size=512.0", "a power of two"]),
    ("json", '{"xsk": {"need_wakeup": "yes"}}', ["xsk.need_wakeup='yes'", "a bool (true/false)"]),
    ("json", '{"xsk": {"need_wakeup": 1}}', ["xsk.need_wakeup=1", "a bool"]),
    ("json", '{"workload": {"rate_pps": "1e6"}}', ["workload.rate_pps='1e6'", "in [1, 1e9]"]),
    ("json", '{"workload": {"rate_pps": 0}}', ["workload.rate_pps=0", "in [1, 1e9] or none"]),
    ("json", '{"workload": {"rate_pps": -5e5}}', ["workload.rate_pps=-500000.0", "in [1, 1e9]"]),
    ("json", '{"workload": {"rate_pps": NaN}}', ["workload.rate_pps=nan", "a number"]),
    ("json", '{"workload": {"duration_s": 1e400}}', ["workload.duration_s=inf", "in [0.0001, 60]"]),
    ("json", '{"workload": {"duration_s": 5e-5}}', ["workload.duration_s=5e-05", "[0.0001, 60]"]),
    ("json", '{"workload": {"seed": -1}}', ["workload.seed=-1", "an int in [0, 4294967295]"]),
    ("json", '{"xsk": {"umem_frames": 123456789012345678901234567890}}',
     ["xsk.umem_frames=123456789012345678901234567890", "a power of two in [64, 262144]"]),
    ("json", '{"workload": {"kind": ["txonly"]}}', ["workload.kind=['txonly']", "'rxdrop'"]),
    ("json", '{"testbed": {"profile": 7}}', ["testbed.profile=7", "'default'"]),
    ("json", '{"veth": {"batch": null}}', ["veth.batch=None", "a bool"]),
    ("json", "[1, 2]", ["config must be a mapping, not list"]),
    ("json", "NaN", ["config must be a mapping, not float"]),
    ("json", '"xsk"', ["config must be a mapping, not str"]),
    ("json", '{"xsk": {"tx_size": 512}', ["malformed JSON"]),
    ("json", "", ["malformed JSON"]),
]


@pytest.mark.parametrize(("how", "arg", "fragments"), STRUCTURE,
                         ids=[f"{h}:{a!r}"[:60] for h, a, _ in STRUCTURE])
def test_structure_and_types_are_rejected(how, arg, fragments):
    with pytest.raises(ValueError) as exc:
        RunConfig.from_dict(arg) if how == "dict" else RunConfig.from_json(arg)
    msg = str(exc.value)
    assert "\n" not in msg
    for fragment in fragments:
        assert fragment in msg, msg


@pytest.mark.parametrize(("assignment", "fragments"), [
    ("bogus.x=1", ["unknown section 'bogus'", "xsk", "workload", "veth"]),
    ("xsk.bogus=1", ["unknown field xsk.bogus", "tx_size"]),
    ("devicee=null", ["'devicee=null'", "SECTION.FIELD=VALUE"]),
    ("xsk.tx_size", ["xsk.tx_size=''", "a power of two in [32, 32768]"]),
    ("workload.rate_pps=fast", ["workload.rate_pps='fast'", "or none"]),
])
def test_bad_assignments(assignment, fragments):
    with pytest.raises(ValueError) as exc:
        RunConfig().override([assignment])
    for fragment in fragments:
        assert fragment in str(exc.value)


# --- incompatible combinations ----------------------------------------------------------------

COMBOS = {
    "batch>tx ring": ({"xsk.batch_size": 64, "xsk.tx_size": 32},
                      ["xsk.batch_size=64", "<= xsk.tx_size=32"]),
    "batch>fill ring": ({"xsk.batch_size": 2048, "xsk.fill_size": 1024},
                        ["xsk.batch_size=2048", "<= xsk.fill_size=1024"]),
    "packet>frame-256": ({"xsk.frame_size": 2048, "workload.packet_size": 1793},
                         ["workload.packet_size=1793", "xsk.frame_size - xsk.headroom - 256",
                          "= 1792"]),
    "packet>frame-headroom-256": ({"xsk.frame_size": 2048, "xsk.headroom": 1024,
                                   "workload.packet_size": 769},
                                  ["workload.packet_size=769", "= 768"]),
    "jumbo packet": ({"workload.packet_size": 9000}, ["workload.packet_size=9000", "= 3840"]),
    "warmup=duration": ({"workload.warmup_s": 0.002, "workload.duration_s": 0.002},
                        ["workload.warmup_s=0.002", "< workload.duration_s=0.002"]),
    "warmup>duration": ({"workload.warmup_s": 0.01, "workload.duration_s": 0.0005},
                        ["workload.warmup_s=0.01", "< workload.duration_s=0.0005"]),
    "fill>umem": ({"xsk.fill_size": 8192, "xsk.umem_frames": 4096},
                  ["xsk.umem_frames=4096", ">= xsk.fill_size=8192"]),
    "virtio queue>fill": ({"device": "virtio-net", "xsk.fill_size": 64, "xsk.batch_size": 64,
                           "virtio.queue_size": 128},
                          ["virtio.queue_size=128", "<= xsk.fill_size=64"]),
    "virtio desc cache without indirect": (
        {"device": "virtio-net", "virtio.desc_cache": True, "virtio.indirect": False},
        ["virtio.desc_cache=true", "virtio.indirect=true", "virtio.desc_cache=false"]),
    "virtio desc cache without indirect (copy)": (
        {"device": "virtio-net", "mode": "copy", "virtio.desc_cache": True,
         "virtio.indirect": False}, ["virtio.desc_cache=true", "virtio.indirect=true"]),
    "veth batch in copy mode": ({"device": "veth", "mode": "copy", "veth.batch": True},
                                ["veth.batch=true", "mode=zerocopy", "mode='copy'"]),
    "veth batch in udp mode": ({"device": "veth", "mode": "udp", "veth.batch": True},
                               ["veth.batch=true", "mode=zerocopy", "mode='udp'"]),
    "tun rxdrop": ({"device": "tun", "workload.kind": "rxdrop"},
                   ["workload.kind='rxdrop'", "'tun'", "'txonly'"]),
    "tun l2fwd": ({"device": "tun", "mode": "zerocopy", "workload.kind": "l2fwd"},
                  ["workload.kind='l2fwd'", "'txonly'"]),
    # faults (issue #10): unlike other devices' fields, a fault that cannot act is refused
    "stall without period": ({"faults.stall_us": 50.0},
                             ["faults.stall_period_us=0 must be > faults.stall_us=50"]),
    "stall period = length": ({"faults.stall_us": 50.0, "faults.stall_period_us": 50.0},
                              ["faults.stall_period_us=50 must be > faults.stall_us=50"]),
    "fill stop period < length": ({"device": "null", "workload.kind": "rxdrop",
                                   "faults.fill_stop_us": 20.0,
                                   "faults.fill_stop_period_us": 10.0},
                                  ["faults.fill_stop_period_us=10", "> faults.fill_stop_us=20"]),
    "spike without window": ({"faults.spike_us": 5.0},
                             ["faults.spike_us=5 needs faults.spike_window_us > 0"]),
    "spike window without period": ({"faults.spike_us": 5.0, "faults.spike_window_us": 10.0},
                                    ["faults.spike_period_us=0", "> faults.spike_window_us=10"]),
    "burst without length": ({"faults.burst_factor": 2.0},
                             ["faults.burst_factor=2 needs faults.burst_us > 0"]),
    "burst unpaced": ({"faults.burst_factor": 2.0, "faults.burst_us": 10.0,
                       "faults.burst_period_us": 100.0},
                      ["faults.burst_factor=2", "unpaced", "workload.rate_pps"]),
    "burst on virtio rxdrop": ({"device": "virtio-net", "workload.kind": "rxdrop",
                                "workload.rate_pps": 1e6, "faults.burst_factor": 2.0,
                                "faults.burst_us": 10.0, "faults.burst_period_us": 100.0},
                               ["faults.burst_factor=2", "'virtio-net'", "'rxdrop'"]),
    "fill stop on txonly": ({"faults.fill_stop_us": 10.0, "faults.fill_stop_period_us": 100.0},
                            ["faults.fill_stop_us=10", "'txonly'", "rxdrop or l2fwd"]),
    "fill stop in pmd": ({"device": "virtio-net", "mode": "pmd", "workload.kind": "rxdrop",
                          "faults.fill_stop_us": 10.0, "faults.fill_stop_period_us": 100.0},
                         ["faults.fill_stop_us=10", "mode 'pmd'", "not mode pmd"]),
    "lost irq on veth": ({"device": "veth", "mode": "copy", "faults.irq_lost_prob": 0.1},
                         ["faults.irq_lost_prob/irq_late_prob", "'veth'", "no interrupt"]),
    "spike on veth": ({"device": "veth", "faults.spike_us": 5.0, "faults.spike_window_us": 10.0,
                       "faults.spike_period_us": 100.0}, ["faults.spike_us", "'veth'"]),
    "late irq on vhost-user pmd": ({"device": "virtio-net", "mode": "pmd",
                                    "faults.irq_late_prob": 0.5, "faults.irq_late_us": 1.0},
                                   ["faults.irq_lost_prob/irq_late_prob", "mode 'pmd'",
                                    "virtio.host='vhost-net'"]),
}


@pytest.mark.parametrize("name", COMBOS)
def test_incompatible_combinations(name):
    changes, fragments = COMBOS[name]
    with pytest.raises(ValueError) as exc:
        _with(**changes)
    msg = str(exc.value)
    assert "\n" not in msg
    for fragment in fragments:
        assert fragment in msg, msg


def test_several_problems_are_reported_together():
    with pytest.raises(ValueError) as exc:
        _with(**{"xsk.batch_size": 64, "xsk.tx_size": 32, "workload.warmup_s": 0.02})
    assert "xsk.batch_size=64" in str(exc.value) and "workload.warmup_s=0.02" in str(exc.value)


@pytest.mark.parametrize("kind", ["rxdrop", "l2fwd"])
def test_veth_receive_workloads_are_rejected_at_validation(kind):
    try:
        _with(device="veth", **{"workload.kind": kind})
    except ValueError as err:
        assert "workload.kind" in str(err)
    else:
        raise AssertionError(f"veth accepts workload.kind={kind!r} at validation")


@pytest.mark.parametrize("kind", ["rxdrop", "l2fwd"])
def test_veth_receive_workloads_are_refused_before_emulating(kind):
    from xskbench.run import run

    with pytest.raises(ValueError, match=f"workload.kind='{kind}'.*txonly"):
        run(_with(device="veth", **{"workload.kind": kind, "workload.duration_s": 0.002}))


# --- fields of other devices / unused by the mode: allowed and ignored --------------------------

# (faults are the exception: one that cannot act on the run is refused, see COMBOS)
IGNORED = {"tun.zc_version": 2, "virtio.desc_cache_threshold": 1, "veth.batch": True,
           "null.ring_size": 64}


@pytest.mark.parametrize(("device", "mode", "ignored"), [
    ("null", "zerocopy", ["tun.zc_version", "virtio.desc_cache_threshold", "veth.batch"]),
    ("tun", "copy", ["tun.zc_version", "null.ring_size"]),
    ("virtio-net", "zerocopy", ["virtio.desc_cache_threshold", "tun.zc_version"]),
])
def test_fields_a_run_does_not_use_are_ignored(device, mode, ignored):
    from xskbench.run import run

    base = {"device": device, "mode": mode, "workload.duration_s": 0.0005,
            "workload.warmup_s": 0.0001}
    plain = run(_with(**base)).to_json()
    other = run(_with(**base, **{k: IGNORED[k] for k in ignored})).to_json()
    plain.pop("config"), other.pop("config")
    assert plain == other


# --- the CLI: one line, exit status 2 ---------------------------------------------------------

@pytest.mark.parametrize("args", [
    ["--set", "xsk.batch_size=64", "xsk.tx_size=32"],
    ["--set", "workload.warmup_s=0.02"],
    ["--device", "veth", "--mode", "copy", "--set", "veth.batch=true"],
    ["--device", "tun", "--workload", "rxdrop"],
    ["--device", "virtio-net", "--set", "virtio.desc_cache=true", "virtio.indirect=false"],
    ["--set", "bogus.field=1"],
    ["--rate", "0"],
    ["--set", "faults.stall_us=50"],
    ["--device", "tun", "--set", "faults.stall_us=50", "faults.stall_period_us=500",
     "faults.stall_context=bogus"],
])
def test_cli_reports_one_line_and_exits_2(args):
    proc = subprocess.run([sys.executable, "-m", "xskbench", "run", *args], cwd=ROOT,
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 2, proc.stderr
    assert proc.stdout == ""
    lines = proc.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("xskbench: error: "), proc.stderr


# --- hostile and malformed config files -------------------------------------------------------

HOSTILE = {
    "python-object-apply.yaml": ("!!python/object/apply:os.system ['touch {marker}']\n",
                                 ["malformed YAML", "python/object/apply"]),
    "python-object.yaml": ("xsk: !!python/object:xskbench.config.RunConfig {}\n",
                           ["malformed YAML", "python/object"]),
    "python-name.yaml": ("device: !!python/name:os.system\n", ["malformed YAML"]),
    "python-tag-inside.yaml": ("workload:\n  kind: !!python/object/new:os.system "
                               "['touch {marker}']\n", ["malformed YAML"]),
    "list.yaml": ("- device: null\n- mode: copy\n", ["config must be a mapping, not list"]),
    "scalar.yaml": ("42\n", ["config must be a mapping, not int"]),
    "string.yaml": ("just some words\n", ["config must be a mapping, not str"]),
    "two-docs.yaml": ("device: null\n---\nmode: copy\n", ["malformed YAML"]),
    "bad-indent.yaml": ("xsk:\n  tx_size: 512\n fill_size: 64\n", ["malformed YAML"]),
    "huge-int.yaml": ("xsk: {umem_frames: 999999999999999999999999999999999}\n",
                      ["xsk.umem_frames=999999999999999999999999999999999", "power of two"]),
    "huge-float.yaml": ("workload: {duration_s: 1e999}\n", ["workload.duration_s=inf"]),
    "inf.yaml": ("workload: {duration_s: .inf}\n", ["workload.duration_s=inf", "[0.0001, 60]"]),
    "nan.yaml": ("workload: {rate_pps: .nan}\n", ["workload.rate_pps=nan"]),
    "aliases.yaml": ("a: &a [x, x, x, x, x, x, x, x]\nb: &b [*a, *a, *a, *a, *a, *a, *a, *a]\n"
                     "c: &c [*b, *b, *b, *b, *b, *b, *b, *b]\nd: [*c, *c, *c, *c, *c, *c]\n",
                     ["malformed YAML", "aliases (*name) are not allowed"]),
    "bomb.yaml": ("".join(f"{c}: &{c} [{', '.join([f'*{p}' if p else 'lol'] * 9)}]\n"
                          for p, c in zip([None, *"abcdefg"], "abcdefgh", strict=True))
                  + "device: [*h, *h, *h, *h, *h, *h, *h, *h, *h]\n",
                  ["malformed YAML", "aliases (*name) are not allowed (line 2)"]),
    "deep.json": ("[" * 100_000 + "]" * 100_000, ["malformed JSON", "nested deeper than"]),
    "deep.yaml": ("a:\n" + "".join("  " * i + "- \n" for i in range(1, 200)),
                  ["malformed YAML", "nested deeper than"]),
    "deep-flow.yaml": ("[" * 10_000 + "]" * 10_000, ["malformed YAML", "nested deeper than"]),
    "int-in-float.json": ('{"workload": {"duration_s": 1' + "0" * 400 + "}}",
                          ["workload.duration_s=<int of about 401 digits>", "[0.0001, 60]"]),
    "int-5000-digits.json": ('{"workload": {"seed": 1' + "0" * 5000 + "}}",
                             ["malformed JSON", "4300"]),
    "long-string.json": ('{"testbed": {"profile": "' + "x" * 10_000 + '"}}',
                         ["testbed.profile='xxxx", "...: a string of 10000 characters"]),
    "list-device.json": ('{"device": [' + ",".join(["1"] * 100_000) + "]}",
                         ["device=<list of 100000 items>: a list; allowed: one value"]),
    "dict-field.yaml": ("xsk: {tx_size: {a: 1}}\n", ["xsk.tx_size={'a': 1}: a dict"]),
    "date.yaml": ("workload: {seed: 2024-01-01}\n", ["workload.seed=datetime.date(2024, 1, 1)"]),
    "section-list.yaml": ("xsk:\n  - tx_size\n", ["xsk must be a mapping, not list"]),
    "combo.yaml": ("device: veth\nmode: udp\nveth: {batch: true}\n", ["veth.batch=true"]),
    "list.json": ("[]", ["config must be a mapping, not list"]),
    "trailing.json": ('{"device": "null"} x', ["malformed JSON"]),
    "config.toml": ("device = 'null'\n", ["unknown config format '.toml'"]),
}


@pytest.mark.parametrize("name", HOSTILE)
def test_hostile_config_files(tmp_path, name):
    marker = tmp_path / "pwned"
    text, fragments = HOSTILE[name]
    path = tmp_path / name
    path.write_text(text.replace("{marker}", str(marker)))
    with pytest.raises(ValueError) as exc:
        load(path)
    msg = str(exc.value)
    assert "\n" not in msg and msg.startswith(str(path))
    for fragment in fragments:
        assert fragment in msg, msg
    assert not marker.exists()  # no code ran


def test_hostile_messages_are_short(tmp_path):
    """A value is quoted with at most ~80 characters, whatever its size."""
    for name, (text, _) in HOSTILE.items():
        path = tmp_path / name
        path.write_text(text)
        with pytest.raises(ValueError) as exc:
            load(path)
        assert len(str(exc.value)) < 300 + len(str(path)), (name, str(exc.value)[:400])


def test_special_and_oversized_files_are_refused(tmp_path):
    import os

    fifo = tmp_path / "fifo.yaml"
    os.mkfifo(fifo)  # opening it for reading would block until a writer comes
    zero = tmp_path / "zero.yaml"
    zero.symlink_to("/dev/zero")  # endless
    for path in (fifo, zero):
        with pytest.raises(ValueError, match="not a regular file"):
            load(path)
    big = tmp_path / "big.yaml"
    big.write_text("# padding\n" * 200_000)
    with pytest.raises(ValueError, match=r"big.yaml: 2000000 bytes; allowed: at most 1048576"):
        load(big)


def test_cli_hostile_files_are_one_line_fast_and_small(tmp_path):
    """Each hostile file: exit 2, one stderr line, within 5 s of wall time and 500 MB."""
    import resource

    paths = []
    for name in ("bomb.yaml", "deep.json", "list-device.json", "int-in-float.json"):
        paths.append(tmp_path / name)
        paths[-1].write_text(HOSTILE[name][0])
    os_fifo = tmp_path / "fifo.yaml"
    import os
    os.mkfifo(os_fifo)
    paths.append(os_fifo)
    script = ("import sys, time, resource; from xskbench.cli import main\n"
              "for p in sys.argv[1:]:\n"
              "    t = time.monotonic(); rc = main(['run', '--config', p])\n"
              "    assert rc == 2 and time.monotonic() - t < 5, (p, rc)\n")
    proc = subprocess.run([sys.executable, "-c", script, *map(str, paths)], cwd=ROOT,
                          capture_output=True, text=True, timeout=120,
                          preexec_fn=lambda: resource.setrlimit(
                              resource.RLIMIT_AS, (2 << 30, 2 << 30)))
    assert proc.returncode == 0, proc.stderr[-2000:]
    lines = proc.stderr.splitlines()
    assert len(lines) == len(paths) and all(len(line) < 300 + len(str(tmp_path)) + 30
                                            for line in lines), proc.stderr[:2000]
    assert all(line.startswith("xskbench: error: ") for line in lines)


def test_unreadable_config_files(tmp_path):
    with pytest.raises(ValueError, match="cannot read"):
        load(tmp_path / "missing.yaml")
    (tmp_path / "dir.json").mkdir()
    with pytest.raises(ValueError, match="cannot read"):
        load(tmp_path / "dir.json")
    binary = tmp_path / "binary.yaml"
    binary.write_bytes(b"\xff\xfe\x00garbage")
    with pytest.raises(ValueError):  # UnicodeDecodeError is a ValueError
        load(binary)


def test_cli_hostile_config_is_one_line(tmp_path):
    marker = tmp_path / "pwned"
    path = tmp_path / "evil.yaml"
    path.write_text(f"!!python/object/apply:os.system ['touch {marker}']\n")
    proc = subprocess.run([sys.executable, "-m", "xskbench", "run", "--config", str(path)],
                          cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 2 and proc.stdout == ""
    assert proc.stderr.count("\n") == 1 and proc.stderr.startswith("xskbench: error: ")
    assert not marker.exists()


def test_json_round_trip_rejects_what_validation_rejects():
    data = json.loads(RunConfig().to_json())
    data["xsk"]["batch_size"] = 4096
    with pytest.raises(ValueError, match=r"xsk.batch_size=4096: must be an int in \[1, 2048\]"):
        RunConfig.from_json(json.dumps(data))


# --- odd but valid input: a correct result or one clear error (issue #18) --------------------

def test_zero_throughput_run_is_idle_and_says_why():
    """100 pps in a 4 ms window offers 0.4 packets: the app polls empty the whole window
    (the quantum straddling warm-up counts as idle as well as busy), nothing is named the
    bottleneck, and a warning says why nothing moved."""
    from xskbench.run import run

    res = run(RunConfig().override(["workload.rate_pps=100", "workload.duration_s=0.005"]))
    assert res.pps == {"rx": 0.0, "tx": 0.0}
    assert res.cpu["app"] == pytest.approx(res.idle_poll["app"], abs=1e-9)
    assert res.useful_cpu["app"] == pytest.approx(0.0, abs=1e-9) and not res.saturated
    assert len(res.warnings) == 1 and "workload.rate_pps=100 offers 0.4 packets" in \
        res.warnings[0]
    assert res.to_json()["warnings"] == res.warnings
    busy = run(RunConfig().override(["workload.duration_s=0.002"]))
    assert busy.pps["tx"] > 0 and busy.warnings == []


def test_every_seed_has_a_positive_cost_factor():
    """Seed 986200 draws -5.6 sigma: at the largest spread that was a negative cost factor
    (a run that never ends); the draw is truncated at SPREAD_SIGMAS."""
    from xskbench.run import SPREAD_SIGMAS, run, run_speed

    cfg = RunConfig().override(["workload.seed=986200", "testbed.run_spread=0.2",
                                "workload.duration_s=0.002"])
    assert 1 - 0.2 * SPREAD_SIGMAS <= run_speed(cfg) <= 1 + 0.2 * SPREAD_SIGMAS
    assert min(run_speed(cfg.replace(**{"workload.seed": s})) for s in range(2000)) > 0.3
    res = run(cfg)
    assert res.pps["tx"] > 0 and res.invariants["balanced"]


def test_virtio_pmd_rx_queue_must_hold_a_burst():
    """The guest PMD rearms its rx virtqueue 32 descriptors at a time: a queue of 16 never
    receives (0 pps, no error before): refused, naming the field."""
    with pytest.raises(ValueError, match=r"virtio\.queue_size=16 .*32"):
        RunConfig(device="virtio-net", mode="pmd").override(
            ["workload.kind=rxdrop", "virtio.queue_size=16"])
    RunConfig(device="virtio-net", mode="pmd").override(["virtio.queue_size=16"])  # txonly


def test_skew_within_its_range():
    RunConfig().override(["mq.skew=1"])  # one queue: nothing to skew, nothing to refuse
    with pytest.raises(ValueError, match=r"mq\.skew=1 leaves queues 1\.\.3 with 0 pps of "
                                         r"workload\.rate_pps=1e6; allowed: "
                                         r"mq\.skew <= 0\.999996"):
        RunConfig().override(["mq.skew=1", "mq.queues=4", "workload.rate_pps=1e6"])
    with pytest.raises(ValueError, match=r"mq\.skew=0\.5 with mq\.queues=2 .* "
                                         r"workload\.rate_pps is none"):
        RunConfig().override(["mq.skew=0.5", "mq.queues=2"])


@pytest.mark.parametrize("sets,match", [
    (["faults.fill_stop_us=1e-9", "faults.fill_stop_period_us=2e-9"],
     r"faults\.fill_stop_us=1e-09 is below the engine's time resolution.*>= 0\.1"),
    (["faults.stall_us=0.1", "faults.stall_period_us=0.2", "workload.duration_s=60"],
     r"faults\.stall_period_us=0\.2 gives 3e\+08 stall windows .* at most 200000 "
     r"\(faults\.stall_period_us >= 300\)"),
])
def test_fault_windows_the_engine_cannot_honour(sets, match):
    with pytest.raises(ValueError, match=match):
        RunConfig().override(["workload.kind=rxdrop", *sets])


def _measurement_cases(tmp_path):
    good = json.loads((ROOT / "data/measurements/veth_copy_rxdrop.json").read_text())
    point = good["points"][0]
    cases = {"dir.json": (None, "a directory"), "bad.json": ("{", "malformed JSON"),
             "list.json": ("[]", "no 'points' list"),
             "deep.json": ("[" * 100_000 + "]" * 100_000, "nested too deeply")}
    broken = [({**point, "result": {**point["result"], "config": {}}},
               "points[0]: missing result.config.device"),
              ({**point, "result": {**point["result"], "pps": {"rx": "fast"}}},
               "result.pps must map directions to numbers"),
              ({**point, "result": {**point["result"], "cpu_per_cpu": []}},
               "result.cpu_per_cpu is a list, not a dict"),
              ("point", "points[0]: a str, not a mapping")]
    for i, (p, why) in enumerate(broken):
        cases[f"broken{i}.json"] = (json.dumps({**good, "points": [p]}), why)
    for name, (text, _) in cases.items():
        if text is None:
            (tmp_path / name).mkdir()
        else:
            (tmp_path / name).write_text(text)
    return {tmp_path / name: why for name, (_, why) in cases.items()}


def test_calibrate_from_malformed_measurements_is_one_line(tmp_path, capsys):
    from xskbench.cli import main

    for path, why in _measurement_cases(tmp_path).items():
        assert main(["calibrate", "--from-measurements", str(path)]) == 2
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and why in err and str(path) in err, err
