"""Fuzz the front door (issue #18): config documents (JSON and YAML files) and ``--set``
strings through ``xskbench run``.  Every input ends in exit 0 with balanced books, or exit 2
with one stderr line under 300 characters; each within 5 s, all within a memory budget.

Valid inputs run on the null device for 0.5 ms of emulated time (its kernel is the one the
rest of the suite compiles first); the fuzzed part is everything the file or ``--set`` says.
Derandomized, so that a failure reproduces and the test costs the same on every run.
"""
import json
import resource
import time

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from xskbench.cli import main
from xskbench.fields import fmt, iter_fields
from xskbench.sections import SECTIONS

PATHS = ["device", "mode"] + [f.path for cls in SECTIONS.values() for f in iter_fields(cls)]
SHORT = ["--device", "null", "--duration", "0.0005", "--set", "workload.warmup_s=0"]
MAX_S = 5.0
MAX_GROWTH_MB = 500
SETTINGS = settings(max_examples=100, deadline=None, derandomize=True, database=None,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large,
                                           HealthCheck.function_scoped_fixture])

WORDS = ["none", "null", "unbounded", "true", "no", "1e9", "1e400", "-1e400", "nan", "inf",
         "-0", "0x10", "1_000", " 64 ", "", "64.0", "2048", "9" * 5000, "é", "\x00",
         "zerocopy", "copy", "txonly", "rxdrop", "l2fwd", "host", "spread", "shared"]
scalars = st.one_of(
    st.none(), st.booleans(), st.integers(-2**70, 2**70),
    st.sampled_from([0, 1, 16, 32, 64, 256, 2048, 4096, 10**400, -1]),
    st.floats(allow_nan=True, allow_infinity=True),
    st.sampled_from(WORDS), st.text(max_size=20))
values = st.recursive(scalars, lambda inner: st.one_of(
    st.lists(inner, max_size=4), st.dictionaries(st.text(max_size=8), inner, max_size=4)),
    max_leaves=12)


@st.composite
def documents(draw):
    """Mostly real sections and fields (so that many documents are valid), some junk."""
    doc = {}
    for _ in range(draw(st.integers(0, 6))):
        path = draw(st.one_of(st.sampled_from(PATHS), st.text(max_size=12)))
        section, dot, name = path.partition(".")
        value = draw(st.one_of(values, st.sampled_from(OWN.get(path, WORDS))))
        if dot:
            sub = doc.setdefault(section, {})
            if isinstance(sub, dict):
                sub[name] = value
        else:
            doc[path] = value
    return draw(st.one_of(st.just(doc), values)) if draw(st.integers(0, 9)) == 0 else doc


def _own_words(info):
    """Values a field takes (its default, choices, bounds) and their neighbours."""
    out = {fmt(info.default)}
    out |= {fmt(c) for c in info.choices or ()}
    for bound in (info.lo, info.hi):
        if bound is not None:
            out |= {fmt(bound), fmt(bound * 2), fmt(bound / 2), fmt(bound - 1)}
    return sorted(out)


OWN = {f.path: _own_words(f) for cls in SECTIONS.values() for f in iter_fields(cls)}
OWN |= {"device": ["null", "virtio-net", "e1000"], "mode": ["zerocopy", "copy", "pmd"]}


@st.composite
def assignments(draw):
    if draw(st.booleans()):  # a field and one of its own values: mostly valid
        path = draw(st.sampled_from(PATHS))
        return f"{path}={draw(st.sampled_from(OWN[path]))}"
    path = draw(st.one_of(st.sampled_from(PATHS), st.text(max_size=12)))
    text = draw(st.one_of(st.sampled_from(WORDS), st.text(max_size=20),
                          st.integers(-2**70, 2**70).map(str),
                          st.floats(allow_nan=True).map(repr)))
    return draw(st.sampled_from([f"{path}={text}", path, f"{path}=={text}", f" {path} = {text}"]))


def _peak_mb():
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def _check(capsys, argv):
    t0 = time.monotonic()
    status = main(argv)
    elapsed = time.monotonic() - t0
    out, err = capsys.readouterr()
    assert elapsed < MAX_S, (argv, elapsed)
    if status == 0:
        doc = json.loads(out)
        assert doc["invariants"]["balanced"], argv
        assert err == "" or err.startswith("xskbench: "), err  # at most an estimate line
    else:
        assert status == 2, (argv, status, err[:300])
        assert err.count("\n") == 1 and err.startswith("xskbench: error: "), err[:600]
        assert len(err) < 300, err


@pytest.fixture(scope="module")
def baseline():
    """Peak memory (MB) after the null kernel is compiled or loaded."""
    assert main(["run", *SHORT, "--json"]) == 0
    return _peak_mb()


def test_fuzz_config_documents(baseline, tmp_path_factory, capsys):
    @SETTINGS
    @given(doc=documents(), as_json=st.booleans())
    def fuzz(doc, as_json):
        path = tmp_path_factory.mktemp("fuzz") / ("c.json" if as_json else "c.yaml")
        try:
            text = json.dumps(doc) if as_json else yaml.safe_dump(doc, allow_unicode=True)
        except (ValueError, OverflowError):  # not representable in that format
            return
        path.write_text(text, encoding="utf-8", errors="surrogatepass")
        _check(capsys, ["run", "--config", str(path), *SHORT, "--json"])

    capsys.readouterr()
    fuzz()
    assert _peak_mb() - baseline < MAX_GROWTH_MB


def test_fuzz_set_strings(baseline, capsys):
    @SETTINGS
    @given(sets=st.lists(assignments(), min_size=1, max_size=4))
    def fuzz(sets):
        _check(capsys, ["run", *SHORT, "--json", "--set", *sets])

    capsys.readouterr()
    fuzz()
    assert _peak_mb() - baseline < MAX_GROWTH_MB
