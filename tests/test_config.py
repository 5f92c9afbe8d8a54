"""Config sections, field validation, RunConfig assembly, (de)serialisation and overrides."""

import dataclasses
import json
import math
import pickle

import numpy as np
import pytest

from xskbench.config import DEVICE_MODES, RunConfig, check_combination, load, override, replace
from xskbench.devices import DEVICES
from xskbench.fields import FieldInfo, coerce, fmt, iter_fields
from xskbench.sections import SECTIONS, section_class

ALL_FIELDS = [info for cls in SECTIONS.values() for info in iter_fields(cls)]

# --- metadata ------------------------------------------------------------------------------


def test_sections_are_registered_under_their_name():
    assert list(SECTIONS)[:4] == ["xsk", "workload", "testbed", "null"]
    assert {"virtio", "tun", "veth"} <= set(SECTIONS)
    for name, cls in SECTIONS.items():
        assert cls.SECTION == name
        assert dataclasses.is_dataclass(cls) and cls.__dataclass_params__.frozen
        assert cls.__doc__ and section_class(name) is cls


@pytest.mark.parametrize("info", ALL_FIELDS, ids=lambda f: f.path)
def test_field_metadata_is_complete(info: FieldInfo):
    assert info.doc and "\n" not in info.doc
    assert info.default is not dataclasses.MISSING
    assert info.check(info.default) == info.default  # defaults are valid
    for bound in (info.lo, info.hi):
        if bound is not None:
            assert info.check(info.base(bound)) == bound  # bounds are inclusive
    for choice in info.choices or ():
        assert info.check(choice) == choice


# --- every field rejects bad values ----------------------------------------------------------

_WRONG_TYPES = {
    bool: [1, 0, "true", None, 1.0],
    int: [1.5, True, "64", None, 64.0],
    float: [True, "1.0", None, math.nan, math.inf],
    str: [3, None, b"x"],
}


def _bad_values(info: FieldInfo) -> list:
    """Values ``info`` must reject, derived from its metadata."""
    bad = [v for v in _WRONG_TYPES[info.base] if not (v is None and info.optional)]
    if info.choices:
        bad.append("bogus" if info.base is str else max(info.choices) + 1)
    if info.lo is not None:
        bad.append(info.base(info.lo - 1))
    if info.hi is not None:
        bad.append(info.base(info.hi + 1))
    if info.pow2:
        bad.append(next(n for n in range(max(3, info.lo), info.hi) if n & (n - 1)))
    if info.pattern:
        bad += ["two words", "", "-leading-dash"]
    return bad


BAD_CASES = [(info, value) for info in ALL_FIELDS for value in _bad_values(info)]


@pytest.mark.parametrize(("info", "value"), BAD_CASES,
                         ids=[f"{i.path}={v!r}" for i, v in BAD_CASES])
def test_every_field_rejects_bad_values(info: FieldInfo, value):
    cls = SECTIONS[info.section]
    with pytest.raises(ValueError) as exc:
        cls(**{info.name: value})
    msg = str(exc.value)
    assert "\n" not in msg
    assert msg.startswith(f"{info.path}={value!r}: must be ")
    for choice in info.choices or ():
        assert repr(choice) in msg
    for bound in (info.lo, info.hi):
        if bound is not None:
            assert fmt(bound) in msg
    if info.pow2:
        assert "power of two" in msg
    if info.optional:
        assert msg.endswith("or none")


@pytest.mark.parametrize(("section", "kwargs", "message"), [
    ("xsk", {"tx_size": 1000}, "xsk.tx_size=1000: must be a power of two in [32, 32768]"),
    ("xsk", {"need_wakeup": 1}, "xsk.need_wakeup=1: must be a bool (true/false)"),
    ("xsk", {"frame_size": 3000}, "xsk.frame_size=3000: must be one of 2048, 4096"),
    ("xsk", {"headroom": 1025}, "xsk.headroom=1025: must be an int in [0, 1024]"),
    ("workload", {"kind": "tx"},
     "workload.kind='tx': must be one of 'txonly', 'rxdrop', 'l2fwd'"),
    ("workload", {"rate_pps": 0},
     "workload.rate_pps=0: must be a number in [1, 1e9] or none"),
    ("workload", {"packet_size": 41}, "workload.packet_size=41: must be an int in [42, 9000]"),
    ("workload", {"seed": -1}, "workload.seed=-1: must be an int in [0, 4294967295]"),
    ("testbed", {"cpu_ghz": 7}, "testbed.cpu_ghz=7: must be a number in [0.5, 6] or none"),
    ("null", {"ring_size": 100}, "null.ring_size=100: must be a power of two in [64, 8192]"),
    ("null", {"line_rate_pps": 2e9},
     "null.line_rate_pps=2000000000.0: must be a number in [1000, 1e9]"),
])
def test_explicit_messages(section, kwargs, message):
    with pytest.raises(ValueError) as exc:
        SECTIONS[section](**kwargs)
    assert str(exc.value) == message


def test_numeric_values_are_normalised():
    w = section_class("workload")(duration_s=1, rate_pps=np.float32(1e6), seed=np.int64(7))
    assert type(w.duration_s) is float and type(w.rate_pps) is float and type(w.seed) is int
    assert w == section_class("workload")(duration_s=1.0, rate_pps=1e6, seed=7)


def test_profile_choices_come_from_data_costs(tmp_path, monkeypatch):
    testbed = section_class("testbed")
    monkeypatch.setattr("xskbench.sections.afxdp.COSTS_DIR", tmp_path)
    assert testbed(profile="any_name-1.2").profile == "any_name-1.2"  # no profiles yet
    for stem in ("xeon", "epyc"):
        (tmp_path / f"{stem}.json").write_text("{}")
    assert testbed(profile="xeon").profile == "xeon"
    with pytest.raises(ValueError, match=r"^testbed.profile='other': must be one of 'epyc', "
                                         r"'xeon' or none$"):
        testbed(profile="other")


# --- coerce ----------------------------------------------------------------------------------

@pytest.mark.parametrize(("section", "name", "text", "value"), [
    ("xsk", "need_wakeup", "true", True),
    ("xsk", "need_wakeup", "No", False),
    ("xsk", "busy_poll", "1", True),
    ("xsk", "busy_poll", "off", False),
    ("xsk", "tx_size", "512", 512),
    ("xsk", "umem_frames", "1.6384e4", 16384),
    ("workload", "rate_pps", "1e6", 1e6),
    ("workload", "rate_pps", "unbounded", None),
    ("workload", "rate_pps", "None", None),
    ("workload", "duration_s", "2", 2.0),
    ("workload", "kind", " l2fwd ", "l2fwd"),
    ("testbed", "cpu_ghz", "none", None),
])
def test_coerce(section, name, text, value):
    got = coerce(section_class(section), name, text)
    assert got == value and type(got) is type(value)


@pytest.mark.parametrize(("section", "name", "text", "message"), [
    ("xsk", "need_wakeup", "maybe", "xsk.need_wakeup='maybe': must be a bool (true/false)"),
    ("xsk", "tx_size", "1.5", "xsk.tx_size='1.5': must be a power of two in [32, 32768]"),
    ("xsk", "tx_size", "1000", "xsk.tx_size=1000: must be a power of two in [32, 32768]"),
    ("workload", "duration_s", "fast", "workload.duration_s='fast': must be a number in "
                                       "[0.0001, 60]"),
    ("workload", "duration_s", "none", "workload.duration_s='none': must be a number in "
                                       "[0.0001, 60]"),
    ("workload", "rate_pps", "0", "workload.rate_pps=0.0: must be a number in [1, 1e9] or none"),
    ("xsk", "nope", "1", "unknown field xsk.nope; allowed: fill_size, comp_size"),
])
def test_coerce_errors(section, name, text, message):
    with pytest.raises(ValueError) as exc:
        coerce(section_class(section), name, text)
    assert str(exc.value).startswith(message)


# --- RunConfig -------------------------------------------------------------------------------

def test_runconfig_has_every_section_with_defaults():
    cfg = RunConfig()
    assert (cfg.device, cfg.mode) == ("null", "zerocopy")
    for name, cls in SECTIONS.items():
        assert getattr(cfg, name) == cls()
    with pytest.raises(dataclasses.FrozenInstanceError):
        cfg.device = "veth"


@pytest.mark.parametrize(("device", "mode"),
                         [(d, m) for d, modes in DEVICE_MODES.items() for m in modes])
def test_every_device_mode_pair_is_accepted(device, mode):
    assert RunConfig(device=device, mode=mode).mode == mode


def test_bad_device_and_mode():
    with pytest.raises(ValueError) as exc:
        RunConfig(mode="pmd")
    assert str(exc.value) == "mode='pmd': device 'null' supports 'zerocopy', 'copy'"
    with pytest.raises(ValueError) as exc:
        RunConfig(device="e1000")
    assert str(exc.value) == "device='e1000': must be one of 'null', 'virtio-net', 'tun', 'veth'"
    with pytest.raises(ValueError, match=r"^xsk=\{\}: must be a XskConfig$"):
        RunConfig(xsk={})


def _with(**changes) -> RunConfig:
    return replace(RunConfig(), **changes)


@pytest.mark.parametrize(("changes", "fragments"), [
    ({"xsk.batch_size": 128, "xsk.tx_size": 64}, ["xsk.batch_size=128", "xsk.tx_size=64"]),
    ({"xsk.batch_size": 128, "xsk.fill_size": 64, "xsk.umem_frames": 64},
     ["xsk.batch_size=128", "xsk.fill_size=64"]),
    ({"workload.packet_size": 3841},
     ["workload.packet_size=3841", "xsk.frame_size", "xsk.headroom", "XDP_PACKET_HEADROOM",
      "= 3840"]),
    ({"xsk.frame_size": 2048, "xsk.headroom": 256, "workload.packet_size": 1537},
     ["workload.packet_size=1537", "= 1536"]),
    ({"workload.warmup_s": 0.01}, ["workload.warmup_s=0.01", "workload.duration_s=0.01"]),
    ({"xsk.umem_frames": 1024}, ["xsk.umem_frames=1024", "xsk.fill_size=2048", "fill ring"]),
])
def test_cross_checks(changes, fragments):
    with pytest.raises(ValueError) as exc:
        _with(**changes)
    for fragment in fragments:
        assert fragment in str(exc.value)


def test_cross_check_limits_are_inclusive_and_reported_together():
    cfg = _with(**{"xsk.batch_size": 2048, "workload.packet_size": 3840,
                   "xsk.umem_frames": 2048, "workload.warmup_s": 0.0099})
    check_combination(cfg)
    with pytest.raises(ValueError) as exc:
        _with(**{"xsk.tx_size": 32, "workload.warmup_s": 1.0})
    assert "xsk.tx_size=32" in str(exc.value) and "workload.warmup_s=1" in str(exc.value)


def test_device_check_runs_on_construction(monkeypatch):
    def no_copy_on_veth(cfg):
        if cfg.mode == "copy":
            raise ValueError("mode='copy': not on veth in this test")

    monkeypatch.setitem(DEVICES, "veth", dataclasses.replace(DEVICES["veth"],
                                                              check=no_copy_on_veth))
    RunConfig(device="veth", mode="udp")
    with pytest.raises(ValueError, match="not on veth"):
        RunConfig(device="veth", mode="copy")


# --- serialisation ---------------------------------------------------------------------------

CUSTOM = _with(device="veth", mode="udp", **{
    "xsk.tx_size": 512, "xsk.need_wakeup": False, "workload.kind": "txonly",
    "workload.rate_pps": 2.5e6, "workload.duration_s": 0.5, "testbed.cpu_ghz": 2.1,
    "null.irq_delay_ns": 0.0})


@pytest.mark.parametrize("cfg", [RunConfig(), CUSTOM], ids=["default", "custom"])
def test_round_trips(cfg):
    assert RunConfig.from_json(cfg.to_json()) == cfg
    assert RunConfig.from_dict(cfg.to_dict()) == cfg
    assert RunConfig.from_json(cfg.to_json(indent=None)).to_json() == cfg.to_json()
    assert pickle.loads(pickle.dumps(cfg)) == cfg
    assert hash(RunConfig.from_json(cfg.to_json())) == hash(cfg)


def test_to_dict_shape_and_stable_json():
    d = CUSTOM.to_dict()
    assert list(d) == ["device", "mode", *SECTIONS]
    assert d["xsk"]["tx_size"] == 512 and d["workload"]["rate_pps"] == 2.5e6
    text = CUSTOM.to_json()
    assert text == json.dumps(json.loads(text), sort_keys=True, indent=1)


def test_from_dict_fills_defaults():
    cfg = RunConfig.from_dict({"xsk": {"tx_size": 512}, "mode": "copy"})
    assert cfg == _with(mode="copy", **{"xsk.tx_size": 512})
    assert RunConfig.from_dict({}) == RunConfig()


@pytest.mark.parametrize(("data", "fragments"), [
    ({"devcie": "null"}, ["unknown key 'devcie'", "'device'", "'mode'", "'xsk'", "'veth'"]),
    ({"xks": {}}, ["unknown key 'xks'", "'xsk'", "'workload'"]),
    ({"xsk": {"tx_ring": 512}}, ["unknown field xsk.tx_ring", "tx_size", "fill_size"]),
    ({"xsk": 512}, ["xsk must be a mapping"]),
    ([1, 2], ["config must be a mapping"]),
    ({"xsk": {"tx_size": "512"}}, ["xsk.tx_size='512'"]),  # JSON is typed: no string parsing
])
def test_from_dict_rejects(data, fragments):
    with pytest.raises(ValueError) as exc:
        RunConfig.from_dict(data)
    for fragment in fragments:
        assert fragment in str(exc.value)


def test_from_json_malformed():
    with pytest.raises(ValueError, match="^malformed JSON"):
        RunConfig.from_json("{'xsk': }")


# --- replace / override ----------------------------------------------------------------------

def test_override_applies_all_changes_at_once():
    # Either assignment alone would break a cross check or the device/mode pairing.
    cfg = override(RunConfig(), ["xsk.umem_frames=64", "xsk.fill_size=64", "mode=udp",
                                 "device=veth", "workload.rate_pps=unbounded",
                                 "workload.duration_s=1e-2"])
    assert (cfg.xsk.umem_frames, cfg.xsk.fill_size, cfg.device, cfg.mode) == (64, 64, "veth",
                                                                            "udp")
    assert cfg.workload.rate_pps is None
    assert RunConfig().override([]) == RunConfig()


@pytest.mark.parametrize(("items", "fragment"), [
    (["xsk.tx_size"], "xsk.tx_size='': must be a power of two"),
    (["tx_size=512"], "expected SECTION.FIELD=VALUE"),
    (["xsk=1"], "expected SECTION.FIELD=VALUE"),
    (["unknown.x=1"], "unknown section 'unknown'; allowed: xsk, workload, testbed, null"),
    (["xsk.x=1"], "unknown field xsk.x; allowed: fill_size"),
    (["xsk.tx_size=big"], "xsk.tx_size='big': must be a power of two in [32, 32768]"),
    (["device=virtio"], "device='virtio': must be one of 'null', 'virtio-net'"),
])
def test_override_errors(items, fragment):
    with pytest.raises(ValueError) as exc:
        override(RunConfig(), items)
    assert fragment in str(exc.value)


def test_replace():
    cfg = replace(RunConfig(), **{"xsk.tx_size": 512}, device="tun", mode="copy")
    assert (cfg.xsk.tx_size, cfg.device) == (512, "tun")
    new_xsk = section_class("xsk")(rx_size=64)
    assert cfg.replace(xsk=new_xsk, **{"xsk.tx_size": 128}).xsk == dataclasses.replace(
        new_xsk, tx_size=128)
    with pytest.raises(ValueError, match="unknown key 'colour'"):
        cfg.replace(colour="red")
    with pytest.raises(ValueError, match="unknown field null.speed"):
        cfg.replace(**{"null.speed": 1})


# --- files -----------------------------------------------------------------------------------

def test_load_yaml_json_and_partial(tmp_path):
    yml = tmp_path / "run.yaml"
    yml.write_text("device: veth\nmode: udp\nxsk:\n  tx_size: 512\n  need_wakeup: no\n"
                   "workload:\n  rate_pps: 1e6   # YAML reads this as a string\n")
    cfg = load(yml)
    assert (cfg.device, cfg.xsk.tx_size, cfg.xsk.need_wakeup) == ("veth", 512, False)
    assert cfg.workload.rate_pps == 1e6
    js = tmp_path / "run.json"
    js.write_text(CUSTOM.to_json())
    assert load(js) == CUSTOM
    (tmp_path / "empty.yml").write_text("# nothing\n")
    assert load(tmp_path / "empty.yml") == RunConfig()


@pytest.mark.parametrize(("name", "text", "fragments"), [
    ("bad.yaml", "xsk: [1, 2\n", ["bad.yaml: malformed YAML"]),
    ("bad.yml", "xsk:\n  tx_size: 512\n bad indent: 1\n", ["bad.yml: malformed YAML"]),
    ("bad.json", '{"xsk": {"tx_size": 512,}}', ["bad.json: malformed JSON"]),
    ("unsafe.yaml", "!!python/object/apply:os.system ['true']\n", ["malformed YAML"]),
    ("list.yaml", "- 1\n- 2\n", ["list.yaml: config must be a mapping"]),
    ("field.yaml", "xsk:\n  tx_size: 1000\n", ["field.yaml: xsk.tx_size=1000: must be"]),
    ("unknown.yaml", "colour: red\n", ["unknown.yaml: unknown key 'colour'"]),
    ("run.toml", "", ["unknown config format '.toml'"]),
])
def test_load_errors(tmp_path, name, text, fragments):
    path = tmp_path / name
    path.write_text(text)
    with pytest.raises(ValueError) as exc:
        load(path)
    msg = str(exc.value)
    assert "\n" not in msg
    for fragment in fragments:
        assert fragment in msg


def test_load_missing_file(tmp_path):
    with pytest.raises(ValueError, match="cannot read .*missing.yaml"):
        load(tmp_path / "missing.yaml")


def test_a_field_lookup_resolves_only_that_fields_choices():
    # a callable's choices are looked up anew (the cost profiles glob data/costs): resolving
    # every field before the one wanted made each config several directory scans
    from xskbench.fields import Section, field_info, fld

    looked = []

    @dataclasses.dataclass(frozen=True)
    class Toy(Section):
        SECTION = "toy"
        a: str = fld("x", "a", choices=lambda: looked.append("a") or ("x", "y"))
        b: int = fld(1, "b", lo=0, hi=2)

    assert field_info(Toy, "b").hi == 2 and looked == []
    assert field_info(Toy, "a").choices == ("x", "y") and looked == ["a"]
    assert [f.choices for f in iter_fields(Toy)] == [("x", "y"), None]


def test_to_dict_gives_each_sections_values_as_they_are():
    cfg = RunConfig(device="tun").replace(**{"workload.rate_pps": 2e6, "tun.tx_queue_len": 64})
    d = cfg.to_dict()
    assert d["workload"]["rate_pps"] == 2e6 and d["tun"]["tx_queue_len"] == 64
    assert d == json.loads(cfg.to_json()) and RunConfig.from_dict(d) == cfg
    for name in SECTIONS:
        assert d[name] == dataclasses.asdict(getattr(cfg, name))
