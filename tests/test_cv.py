"""Leave-one-source-out machinery: ties, unstated clocks, row kinds, holdout, `reproduce --cv`."""
import json

import numpy as np
import pytest

from xskbench import calibrate, costs, measured, ops, published, reproduce
from xskbench.cli import main

SUBSET = ("xdp-paper", "measured:veth_copy_rxdrop_2026-12-02")


@pytest.fixture(scope="module")
def par():
    return calibrate.Parameters(costs.read_priors())


def test_a_tie_is_one_parameter_across_ops(par):
    n = ops.N_OPS
    col = lambda op, part: np.flatnonzero(par.T[ops.INDEX[op] + (n if part == "byte" else 0)])  # noqa: E731
    assert col("memcpy", "byte") == col("__xsk_rcv", "byte") == col("skb_store_bits", "byte")
    assert col("__sys_sendto", "call") == col("__sys_recvfrom", "call")
    k = col("kfree_skb", "call")[0]
    assert par.T[ops.INDEX["kfree_skb"], k] == pytest.approx(0.444)
    assert col("kfree_skb", "call") == col("sock_alloc_send_skb", "call")
    call, byte = par.costs(par.start())  # the priors come back through the ties
    assert byte[ops.INDEX["memcpy"]] == pytest.approx(costs.read_priors()["memcpy"][1])


def test_an_op_that_does_a_ties_work_and_more_never_costs_less(par):
    """own=yes in data/op_ties.csv: the single-descriptor TX peek is the batched peek's
    per-descriptor work plus its own, so no fit can price it below the batch."""
    alone, batch = ops.INDEX["xsk_tx_peek_desc"], ops.INDEX["xsk_tx_peek_release_desc_batch"]
    shared = set(np.flatnonzero(par.T[batch]))
    assert len(shared) == 1 and shared < set(np.flatnonzero(par.T[alone]))
    assert len(np.flatnonzero(par.T[alone])) == 2
    call, _ = par.costs(par.start())  # its own prior on top: 8 + 32 = its prior of 40
    assert call[alone] == pytest.approx(costs.read_priors()["xsk_tx_peek_desc"][0])
    for name in published.testbeds():
        prof = costs.load(name)
        assert prof.call["xsk_tx_peek_desc"] >= prof.call["xsk_tx_peek_release_desc_batch"]


def test_unstated_clocks_are_parameters_and_stated_ones_are_not(par):
    beds = published.testbeds()
    assert set(par.clocks) == {tb for tb, s in beds.items() if not s["cpu_stated"]}
    assert "xeon-8163" not in par.clocks
    for tb in par.clocks:
        lo, hi = beds[tb]["cpu_ghz_range"]
        assert lo <= beds[tb]["cpu_ghz"] <= hi
    p = par.start()
    p[len(par.names) + par.clocks.index("tun-ovs")] = 1.5
    assert par.ghz(p)["tun-ovs"] == pytest.approx(1.5 * beds["tun-ovs"]["cpu_ghz"])


def test_identity_rows_say_why_and_share_identities_restate_their_prior():
    priors = costs.read_priors()
    rows = published.read_rows()
    assert all(r["seed"] for r in rows)
    for r in rows:
        # an identity says what it restates; a published row kept out of the fit may say why
        assert (r["kind"] != "identity" or r["why"]) and (
            not r["why"] or r["kind"] in ("identity", "predict")), r["id"]
        if r["metric"] == "share" and r["kind"] in ("predict", "identity"):
            written_from_it = "perf top" in priors[r["context"].split(":")[1]][2]
            assert written_from_it == (r["kind"] == "identity"), r["id"]


def test_holdout_leaves_out_exactly_one_source_and_names_unknown_ones():
    rows = calibrate.calibration_rows()
    for src in ("004", "measured:veth_copy_rxdrop_2026-12-02"):
        kept = calibrate.fit_rows(rows, holdout=src)
        assert kept and all(calibrate.source_of(r) != src for r in kept)
        assert len(kept) + sum(calibrate.source_of(r) == src and r["kind"] == "fit"
                               for r in rows) == len(calibrate.fit_rows(rows))
    with pytest.raises(ValueError, match="--holdout 'nope': no such source; have: 000"):
        calibrate.holdout("nope")


def test_a_held_out_clock_returns_to_its_assumption(par):
    rows = [r for r in calibrate.calibration_rows() if calibrate.source_of(r) in SUBSET]
    run = reproduce.Runner(rows)
    results = {r["scenario"]: run(r["scenario"]) for r in calibrate.fit_rows(rows)}
    x = np.concatenate(par.costs(par.start()))
    a, b = calibrate.system(calibrate.fit_rows(rows), results, par, x)
    k = len(par.names) + par.clocks.index("default")
    paper = [i for i, r in enumerate(calibrate.fit_rows(rows)) if r["seed"] == "xdp-paper"]
    assert a[paper, k] == [-1.0] and b[paper] == [0.0]  # its clock moved to the left side
    _, _, ghz_all = calibrate.loo_costs(rows, results, par, x, "measured:none")
    _, _, ghz_loo = calibrate.loo_costs(rows, results, par, x, "xdp-paper")
    assert ghz_loo["default"] == pytest.approx(3.0, rel=1e-3)  # nothing else constrains it
    assert ghz_all["default"] != pytest.approx(3.0, rel=1e-3)


def test_reproduce_cv_prints_fitted_and_left_out_errors(capsys):
    main(["reproduce", "--cv", "--no-bands", "--sources", ",".join(SUBSET)])
    out = capsys.readouterr().out
    header, *lines = out.splitlines()
    assert "error" in header and "loo" in header
    row = next(ln for ln in lines if ln.startswith("xdp-afxdp-rxdrop"))
    assert row.count("%") >= 3  # fitted error, left-out error, tolerance
    assert "leave-one-source-out |error|" in out and "median" in out and "worst" in out
    # the veth grid is emulated on the emulated veth pair: its distinct points are fitted
    veth = [ln for ln in lines if ln.startswith("veth_copy_rxdrop")]
    assert veth and all(" fitted " in ln for ln in veth)
    assert f"calibration set: {1 + len(veth)} fit rows" in out
    assert "measured comparisons" not in out
    assert main(["reproduce", "--sources", "nope"]) == 2


def test_a_clock_is_held_inside_its_plausible_range(par):
    """Rows that would need a clock 4x the assumed one get the range's upper end instead."""
    k = par.clocks.index("tun-ovs")
    a = np.zeros((1, par.size))
    a[0, len(par.names) + k] = 1.0
    p = calibrate.solve(a, np.array([4.0]), par)
    lo, hi = published.testbeds()["tun-ovs"]["cpu_ghz_range"]
    assert par.ghz(p)["tun-ovs"] == pytest.approx(hi)
    assert all(p[:len(par.names)] >= 0)


def test_measured_veth_points_are_fit_rows_of_the_emulated_pair():
    rows, skipped = calibrate.measured_rows()
    veth = [r for r in rows if r["point"]["result"]["config"]["device"] == "veth"]
    assert veth and all(r["kind"] == "fit" for r in veth)
    assert {r["config"]["device"] for r in veth} == {"veth"}
    assert {r["config"]["veth"]["peer"] for r in veth} == {"xdp_drop"}
    kinds = {r["config"]["workload"]["kind"] for r in veth}
    assert kinds == {"rxdrop", "l2fwd", "txonly"}
    assert any(r["config"]["veth"].get("xdp_mode") == "skb" for r in veth)
    fitted = [r for r in calibrate.fit_rows(calibrate.calibration_rows())
              if calibrate.source_of(r).startswith("measured:")]
    assert sum(r["config"]["device"] == "veth" for r in fitted) == len(veth)
    # every fitted measured row has a faithful counterpart (the same device: veth, the tap)
    assert all(r["config"]["device"] == r["point"]["result"]["config"]["device"]
               for r in fitted)
    # what has no counterpart says why: poll() and busy-poll loops, a paced sender
    whys = " ".join(w for _, w in skipped)
    assert "wait=poll" in whys and "wait=busy-poll" in whys and "rate_pps set" in whys


def test_this_machines_syscall_is_known_cycles_not_the_shared_parameter(par):
    """A row measured here carries the VM's syscall entry (microbench.json) on the right-hand
    side, so it cannot pull the bare-metal rows' shared syscall parameter."""
    fixed = measured.machine_ops()
    bench = costs.read_priors(here=True)["__sys_sendto"][0]
    assert fixed["__sys_sendto"] == fixed["__sys_recvfrom"] == bench and bench > 600
    # one memcpy per byte: this VM's measured 1500 B copy, for every op of the copy_byte tie
    per_byte = 1 / costs._bench_value(json.loads(costs.BENCH.read_text())["results"],
                                      "memcpy.1500B.bytes_per_cycle")[0]
    for o in ("memcpy", "__xsk_rcv", "skb_store_bits", "ip_generic_getfrag"):
        assert fixed[f"{o}:byte"] == pytest.approx(per_byte) and per_byte < 0.2
    row = next(r for r in calibrate.measured_rows()[0]
               if r["config"]["workload"]["kind"] == "txonly")
    assert row["fixed"] == fixed
    eq = np.zeros(2 * ops.N_OPS)
    eq[ops.INDEX["__sys_sendto"]], eq[ops.INDEX["app_pkt"]] = 0.001, 0.002
    a, b = calibrate._fixed(eq, 1.0, fixed)
    assert a[ops.INDEX["__sys_sendto"]] == 0 and a[ops.INDEX["app_pkt"]] == 0.002
    assert b == pytest.approx(1.0 - 0.001 * bench)
    col = np.flatnonzero(par.T[ops.INDEX["__sys_sendto"]])
    assert not (a @ par.T)[col].any()


def test_the_calibration_set_has_more_fit_rows_than_free_parameters():
    """As `reproduce --cv` counts them (calibrate.count at the fit's op counts), recorded by
    the last `xskbench calibrate` in each profile, for today's calibration rows."""
    conv = costs.load("default").meta["convergence"]
    assert conv["fit_rows"] == len(calibrate.fit_rows(calibrate.calibration_rows()))
    assert conv["fit_rows"] > conv["free_parameters"] > 0


def test_this_vms_microbenchmarks_are_priors_only_for_this_machine():
    shared, here = costs.read_priors(), costs.read_priors(here=True)
    assert shared["__sys_sendto"][0] == 500 and shared["__sys_sendto"][3] == ()
    assert "not a bare-metal prior" in shared["__sys_sendto"][2]
    assert here["__sys_sendto"][3] == ("call",) and here["__sys_sendto"][0] != 500
    # a cited bare-metal measurement (the SLUB pair, i7-4790K) holds for every testbed
    assert shared["__kmalloc"][:1] == (43.0,) and shared["__kmalloc"][3] == ("call",)
