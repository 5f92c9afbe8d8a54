"""The AF_XDP core on the null device, end to end through ``xskbench.run``.

- the books: every UMEM frame and every packet is accounted for, in every mode × workload,
  and the books really do catch a corrupted arena;
- directions: each knob moves the numbers the way the kernel's mechanics imply;
- causality and the u32 ring wrap, through the real engine;
- the outputs (DataFrame, profile, reports) are tidy.

Runs are short (3 ms emulated, 1 ms warm-up) and cached per configuration; results are
shared between tests and must not be modified.
"""
import functools
import importlib
import inspect
from dataclasses import dataclass

import pytest

from xskbench import RunConfig, machine, run
from xskbench.books import BooksError, balance
from xskbench.kernels import layout as L
from xskbench.kernels.xsk_ring import R_PROD
from xskbench.machine import start_index

MODES = ("zerocopy", "copy")
WORKLOADS = ("txonly", "rxdrop", "l2fwd")
SHORT = {"workload.duration_s": 0.003, "workload.warmup_s": 0.001}
KERNEL = ("napi", "ksoftirqd", "sys")  # the null device's kernel labels (app = user space)


def config(mode="zerocopy", kind="txonly", **changes):
    """A short null-device run; ``changes`` as for ``RunConfig.replace``."""
    return RunConfig(device="null", mode=mode).replace(
        **{**SHORT, "workload.kind": kind, **changes})


@functools.cache
def _cached(mode, kind, items):
    return run(config(mode, kind, **dict(items)))


def result(mode="zerocopy", kind="txonly", **changes):
    return _cached(mode, kind, tuple(sorted(changes.items())))


@dataclass
class Finished:
    """A run taken apart: what ``run()`` handed to ``results.collect`` (the finished
    machine among it), so that a test can inspect the arena and collect again."""

    res: object
    args: dict  # collect's arguments by name: cfg, mach, profile, cc, cb, in_flight_dev, ...

    @property
    def mach(self):
        return self.args["mach"]

    def collect(self):
        return _RUN.collect(**self.args)


_RUN = importlib.import_module("xskbench.run")  # the module (``xskbench.run`` is the function)


def finished(cfg):
    """``run(cfg)``, keeping what it passed to ``collect`` (run.py stays the one recipe)."""
    real, seen = _RUN.collect, []

    def spy(*args, **kwargs):
        seen.append(inspect.signature(real).bind(*args, **kwargs).arguments)
        return real(*args, **kwargs)

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(_RUN, "collect", spy)
        res = run(cfg)
    (args,) = seen
    return Finished(res, dict(args))


def packets(res):
    return res.counters["rx_packets"] + res.counters["tx_packets"]


def kernel_cycles_per_packet(res):
    """Cycles the kernel contexts spent per packet moved (the app's spinning excluded)."""
    busy = sum(res.busy[res.labels.index(lab)] for lab in KERNEL if lab in res.labels)
    return busy / packets(res)


def kernel_cpu(res):
    return sum(res.cpu.get(lab, 0.0) for lab in KERNEL if lab != "sys")


def _flat(d, prefix=""):
    out = {}
    for k, v in d.items():
        out.update(_flat(v, f"{prefix}{k}.") if isinstance(v, dict) else {f"{prefix}{k}": v})
    return out


# --- the books ------------------------------------------------------------------------------
@pytest.mark.parametrize("kind", WORKLOADS)
@pytest.mark.parametrize("mode", MODES)
def test_books_balance(mode, kind):
    res = result(mode, kind)
    inv = res.invariants
    assert inv["balanced"] is True
    frames = inv["frames"]
    assert inv["umem_frames"] == res.config.xsk.umem_frames == sum(frames.values())
    assert min(frames.values()) >= 0
    p = inv["packets"]
    assert p["offered"] == p["delivered"] + sum(p["dropped"].values()) + p["in_flight"]
    assert p["delivered"] > 0 and min(p["dropped"].values()) >= 0
    assert 0 <= p["in_flight"] <= res.config.xsk.umem_frames + res.config.null.ring_size

    # the counters cover the window after warm-up, the books the whole run
    assert all(0 <= n <= res.totals[name] for name, n in res.counters.items())
    size = res.config.workload.packet_size
    for d in ("rx", "tx"):
        assert res.totals[f"{d}_bytes"] == size * res.totals[f"{d}_packets"]
    t = res.totals
    if kind == "txonly":
        assert t["rx_packets"] == 0 and 0 < t["tx_packets"] <= t["tx_submitted"]
        assert p["offered"] == t["tx_submitted"] and p["delivered"] == t["tx_packets"]
    elif kind == "rxdrop":
        assert t["tx_packets"] == t["tx_submitted"] == 0 and t["rx_packets"] > 0
        assert p["offered"] == t["offered_packets"] and p["delivered"] == t["rx_packets"]
    else:  # l2fwd sends back only what it received
        assert 0 < t["tx_packets"] <= t["tx_submitted"] <= t["rx_packets"]
        assert p["delivered"] == t["tx_packets"]


def test_books_catch_a_corrupted_arena():
    f = finished(config("zerocopy", "rxdrop"))
    res = f.collect()
    assert res.invariants == f.res.invariants and res.invariants["balanced"]
    m, nf = f.mach.m, res.config.xsk.umem_frames
    own = m[m[L.H_OWN]:m[L.H_OWN] + nf]  # a view into the arena

    # one frame changes owner without moving: the rings/lists no longer match the owners
    was = int(own[0])
    own[0] = L.OWN_CQ if was == L.OWN_APP else L.OWN_APP
    with pytest.raises(BooksError, match="frames owned"):
        f.collect()
    # one frame owned by nobody known: lost
    own[0] = len(L.OWNER_NAMES) + 3
    with pytest.raises(BooksError, match=f"accounted of {nf}"):
        f.collect()
    own[0] = was
    assert f.collect().invariants == res.invariants  # restored: balanced again

    # one packet too many offered, or one fewer in flight, does not balance either
    totals, in_flight = dict(res.totals), f.args["in_flight_dev"]
    with pytest.raises(BooksError, match="packets: offered"):
        balance(f.mach, {**totals, "offered_packets": totals["offered_packets"] + 1}, in_flight)
    with pytest.raises(BooksError, match="packets: offered"):
        balance(f.mach, totals, in_flight + 1)


# --- directions -------------------------------------------------------------------------------
def test_need_wakeup_saves_sendtos_when_the_app_is_the_bottleneck():
    """Zero-copy txonly, app and NAPI on different CPUs, a batch small enough that the
    app's side costs about as much as the driver's: with need_wakeup the busy NAPI keeps
    the flag clear and the app never kicks; without it every loop pays a sendto."""
    knobs = {"xsk.batch_size": 16, "null.app_cpu": 0, "null.napi_cpu": 1}
    on = result("zerocopy", "txonly", **{"xsk.need_wakeup": True}, **knobs)
    off = result("zerocopy", "txonly", **{"xsk.need_wakeup": False}, **knobs)
    per_pkt = [r.counters["sendto_calls"] / r.counters["tx_packets"] for r in (on, off)]
    assert per_pkt[1] > 2 * per_pkt[0]
    assert off.counters["sendto_calls"] > 0
    assert off.pps["tx"] < 0.9 * on.pps["tx"]
    assert off.cpu["sys"] > on.cpu["sys"]


@pytest.mark.parametrize(("mode", "factor"), [("zerocopy", 0.25), ("copy", 0.75)])
def test_batch_of_one_is_much_slower(mode, factor):
    one = result(mode, "txonly", **{"xsk.batch_size": 1})
    full = result(mode, "txonly", **{"xsk.batch_size": 64})
    assert one.pps["tx"] < factor * full.pps["tx"]
    assert one.counters["sendto_calls"] / one.counters["tx_packets"] > \
        full.counters["sendto_calls"] / full.counters["tx_packets"]


@pytest.mark.parametrize("mode", MODES)
def test_tiny_fill_ring_starves_rx_at_line_rate(mode):
    knobs = {"xsk.batch_size": 32}
    tiny = result(mode, "rxdrop", **{"xsk.fill_size": 32}, **knobs)
    big = result(mode, "rxdrop", **{"xsk.fill_size": 2048}, **knobs)
    assert big.config.workload.rate_pps is None  # offered at line rate
    assert tiny.counters["fill_ring_empty_descs"] > big.counters["fill_ring_empty_descs"]
    assert tiny.pps["rx"] < big.pps["rx"]
    drops = lambda r: sum(r.counters[k] for k in ("rx_dropped", "rx_missed", "rx_ring_full"))  # noqa: E731
    assert drops(tiny) > drops(big)


def test_small_tx_ring_costs_throughput():
    knobs = {"xsk.batch_size": 32}
    small = result("zerocopy", "txonly", **{"xsk.tx_size": 32}, **knobs)
    big = result("zerocopy", "txonly", **{"xsk.tx_size": 2048}, **knobs)
    assert (small.pps["tx"] < big.pps["tx"]
            or small.counters["tx_full_polls"] > big.counters["tx_full_polls"])


@pytest.mark.parametrize("kind", ("txonly", "rxdrop"))
def test_copy_mode_costs_more_cpu_per_packet(kind):
    zc, copy = result("zerocopy", kind), result("copy", kind)
    assert kernel_cycles_per_packet(copy) > 1.2 * kernel_cycles_per_packet(zc)
    # and it is the copy that costs: bytes are charged in copy mode only
    assert copy.op_bytes.sum() > 0 and zc.op_bytes.sum() == 0


@pytest.mark.parametrize("kind", ("txonly", "rxdrop"))
@pytest.mark.parametrize("mode", MODES)
def test_bounded_rate_is_met_and_cheaper(mode, kind):
    rate = 1e6
    bounded = result(mode, kind, **{"workload.rate_pps": rate})
    free = result(mode, kind)
    d = "tx" if kind == "txonly" else "rx"
    assert bounded.pps[d] == pytest.approx(rate, rel=0.02)
    assert free.pps[d] > 2 * rate
    assert kernel_cpu(bounded) < 0.8 * kernel_cpu(free)
    assert bounded.invariants["balanced"]


@pytest.mark.parametrize("mode", MODES)
def test_interrupt_driven_napi_stays_in_softirq(mode):
    res = result(mode, "rxdrop", **{"workload.rate_pps": 1e6})
    assert res.counters["interrupts"] > 0  # NAPI went idle and was woken by the NIC
    assert res.totals["ksoftirqd_handoffs"] == 0
    assert res.cpu["ksoftirqd"] == 0.0 and res.cpu["napi"] > 0


@pytest.mark.parametrize(("mode", "kind", "changes"), [
    ("zerocopy", "txonly", {"xsk.batch_size": 1}),
    ("zerocopy", "txonly", {"workload.rate_pps": 1e6}),
    ("zerocopy", "rxdrop", {"xsk.need_wakeup": False, "xsk.batch_size": 16}),
    ("zerocopy", "rxdrop", {"xsk.fill_size": 32, "xsk.batch_size": 32}),
    ("zerocopy", "l2fwd", {"xsk.fill_size": 32, "xsk.batch_size": 32}),
    ("copy", "l2fwd", {"xsk.batch_size": 1}),
])
def test_every_napi_schedule_from_idle_is_followed_by_a_poll(mode, kind, changes):
    """napi_schedule from idle sets SCHED; only a poll's napi_complete clears it, so there are
    never two schedules from idle without a poll between them."""
    t = result(mode, kind, **changes).totals
    assert t["napi_polls"] > 0
    assert t["napi_schedules"] <= t["napi_polls"] + 1
    assert t["interrupts"] <= t["napi_polls"]


@pytest.mark.parametrize(("mode", "kind"), [("zerocopy", "rxdrop"), ("copy", "txonly"),
                                           ("copy", "rxdrop")])
def test_the_spinning_app_fills_its_cpu(mode, kind):
    """xdpsock spins from t=0 to the end: its CPU is busy for the whole window."""
    res = result(mode, kind)
    cpu = res.label_cpu[res.labels.index("app")]
    assert res.cpu_per_cpu[f"cpu{cpu}"] == pytest.approx(100.0, abs=0.01)


def test_cpu_is_at_most_one_cpu():
    """Per-CPU load stays within 100 % (up to one quantum straddling the window edges)."""
    for mode in MODES:
        for kind in WORKLOADS:
            res = result(mode, kind)
            assert all(0 <= pct <= 101 for pct in res.cpu_per_cpu.values()), (mode, kind)


# --- causality and the ring wrap --------------------------------------------------------------
@pytest.mark.parametrize("rate", (None, 1e6))
@pytest.mark.parametrize("mode", MODES)
def test_nothing_is_received_before_it_arrived(mode, rate):
    res = result(mode, "rxdrop", **{"workload.rate_pps": rate})
    h = res.latency_hist
    assert h.sum() > 0
    assert h[0] == 0  # bin 0: less than one cycle (or negative) from arrival to the app
    assert res.latency_us["p50"] > 0
    assert res.latency_us["p99"] >= res.latency_us["p50"]


def test_latency_grows_with_a_full_nic_ring():
    """At line rate the NIC ring is always full of waiting packets; at 1 Mpps it is not."""
    slow = result("zerocopy", "rxdrop", **{"workload.rate_pps": 1e6})
    fast = result("zerocopy", "rxdrop")
    assert fast.latency_us["p50"] > 5 * slow.latency_us["p50"]


def test_latency_covers_the_window():
    res = result("zerocopy", "rxdrop", **{"workload.rate_pps": 1e6})
    assert res.latency_hist.sum() == res.counters["rx_packets"]


@pytest.mark.parametrize(("mode", "seed"), [("zerocopy", 1), ("zerocopy", 6), ("copy", 3)])
def test_ring_indices_wrap_past_2_to_the_32(mode, seed):
    cfg = config(mode, "txonly", **{"workload.seed": seed, "workload.duration_s": 0.005})
    f = finished(cfg)
    res = f.res
    assert res.invariants["balanced"]
    start = start_index(seed)
    assert 2**32 - 8 * 1024 <= start < 2**32
    m = f.mach.m
    tx_prod = int(m[f.mach.rings["tx"] + R_PROD])
    cq_prod = int(m[f.mach.rings["completion"] + R_PROD])
    submitted, completed = res.totals["tx_submitted"], res.totals["tx_packets"]
    assert completed > 2**32 - start  # long enough to go past the wrap
    assert 0 <= tx_prod < start and 0 <= cq_prod < start  # u32: wrapped to small numbers
    assert tx_prod == (start + submitted) & L.M32
    assert cq_prod == (start + completed) & L.M32


@pytest.mark.parametrize(("mode", "kind"), [("zerocopy", "l2fwd"), ("copy", "l2fwd"),
                                           ("zerocopy", "rxdrop")])
def test_where_the_indices_start_is_invisible(monkeypatch, mode, kind):
    """Free-running u32 indices: starting at 0, just below the wrap or anywhere else moves
    no packet, cycle or latency sample (same seed, only the ring start differs)."""
    cfg = config(mode, kind, **{"xsk.fill_size": 64, "xsk.batch_size": 32})
    outcomes = []
    for start in (0, 2**32 - 3, 2**31 + 5, 2**32 - 1):
        monkeypatch.setattr(machine, "start_index", lambda seed, s=start: s)
        res = finished(cfg).res
        outcomes.append((res.totals, res.busy.tolist(), res.latency_hist.tolist(),
                         res.invariants))
    assert all(o == outcomes[0] for o in outcomes[1:])


# --- outputs --------------------------------------------------------------------------------
def test_to_frame_is_tidy():
    res = result("zerocopy", "l2fwd")
    df = res.to_frame()
    assert len(df) == len(res.labels)
    assert df["context"].tolist() == list(res.labels)
    assert df["cpu"].tolist() == list(res.label_cpu)
    assert df["cpu_pct"].tolist() == pytest.approx([res.cpu[lab] for lab in res.labels])
    flat = _flat(res.config.to_dict())
    for key, value in flat.items():
        assert df[key].tolist() == [value] * len(df), key
    assert {"device", "mode", "workload.kind", "xsk.batch_size", "null.napi_budget",
            "pps_rx", "pps_tx", "cycles_per_pkt", "bottleneck"} <= set(df.columns)
    assert not any(isinstance(v, dict | list | tuple) for v in df.iloc[0])
    assert df["bottleneck"].sum() == 1
    assert df.loc[df["bottleneck"], "context"].item() == res.bottleneck


@pytest.mark.parametrize("mode", MODES)
def test_profile_shares(mode):
    res = result(mode, "l2fwd")
    prof = res.profile()
    assert list(prof.columns) == ["context", "op", "calls", "cycles", "share"]
    assert prof["share"].sum() == pytest.approx(100.0, abs=0.1)
    assert (prof["calls"] > 0).all() and (prof["cycles"] > 0).all()
    assert prof["share"].is_monotonic_decreasing
    assert set(prof["context"]) <= set(res.labels)
    for lab in set(prof["context"]):
        assert res.profile(lab)["share"].sum() == pytest.approx(100.0, abs=0.1)
    # the profile is the op table's view of the cycles the contexts were charged (the
    # window's busy cycles cut the quanta straddling its edges; ops count whole quanta)
    assert prof["cycles"].sum() == pytest.approx(res.busy.sum(), rel=0.01)


def test_ring_refreshes_are_charged():
    res = result("zerocopy", "txonly")
    prof = res.profile()
    assert (prof["op"] == "xsk_ring_refresh").any()


@pytest.mark.parametrize("kind", WORKLOADS)
@pytest.mark.parametrize("mode", MODES)
def test_reports_fit_72_columns(mode, kind):
    res = result(mode, kind)
    text = res.report()
    assert text == res.report("xdpsock")
    assert f"{kind} {mode}" in text.splitlines()[0]
    prof = res.report("profile")
    lines = prof.splitlines()
    assert lines[0].split() == ["Overhead", "Context", "Symbol"]
    assert len(lines) > 1 and all("%" in line and "[k]" in line for line in lines[1:])
    assert res.profile()["op"].iloc[0] in lines[1]
    for line in text.splitlines() + lines:
        assert len(line) <= 72, line


def test_a_forwarder_that_drops_on_a_full_tx_ring_counts_tx_errors():
    """xdpsock l2fwd waits for TX room; testpmd frees the rest of the burst (TX-errors).
    (In copy mode each sendto empties TX itself, so only zero copy fills it.)"""
    mode = "zerocopy"
    small = {"xsk.tx_size": 32, "xsk.batch_size": 32}
    retry = result(mode, "l2fwd", **small)
    drop = result(mode, "l2fwd", **small, **{"xsk.tx_full": "drop"})
    assert retry.counters["tx_errors"] == 0
    assert drop.counters["tx_errors"] > 0
    assert drop.invariants["balanced"] and drop.invariants["packets"]["dropped"]["tx_errors"] > 0
