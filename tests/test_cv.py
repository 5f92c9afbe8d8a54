"""Leave-one-source-out machinery: ties, unstated clocks, row kinds, holdout, `reproduce --cv`."""
import numpy as np
import pytest

from xskbench import calibrate, costs, ops, published, reproduce
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
    # the veth grid is emulated on the null device: compared, never fitted
    assert "calibration set: 1 fit rows" in out
    assert "measured comparisons, not fitted (counterpart: null stands in for veth)" in out
    assert all(" compare " in ln for ln in lines if ln.startswith("veth_copy_rxdrop"))
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


def test_a_measured_point_on_a_stand_in_device_is_compared_not_fitted():
    rows, _ = calibrate.measured_rows()
    veth = [r for r in rows if r["point"]["result"]["config"]["device"] == "veth"]
    assert veth and all(r["kind"] == "compare" for r in veth)
    assert {r["why"] for r in veth} == {"counterpart: null stands in for veth"}
    # the measured rows that are fitted have a faithful counterpart (the tap: tun.peer=fd)
    fitted = [r for r in calibrate.fit_rows(calibrate.calibration_rows())
              if calibrate.source_of(r).startswith("measured:")]
    assert all(r["config"]["device"] == r["point"]["result"]["config"]["device"]
               for r in fitted)


def test_this_vms_microbenchmarks_are_priors_only_for_this_machine():
    shared, here = costs.read_priors(), costs.read_priors(here=True)
    assert shared["__sys_sendto"][0] == 500 and shared["__sys_sendto"][3] == ()
    assert "not a bare-metal prior" in shared["__sys_sendto"][2]
    assert here["__sys_sendto"][3] == ("call",) and here["__sys_sendto"][0] != 500
    # a cited bare-metal measurement (the SLUB pair, i7-4790K) holds for every testbed
    assert shared["__kmalloc"][:1] == (43.0,) and shared["__kmalloc"][3] == ("call",)
