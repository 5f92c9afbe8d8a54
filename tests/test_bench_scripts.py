"""The speed scripts in benchmarks/ (issue #17): bench.py measures a real run and reports it;
perf_profile.py names numba's jitted functions from their mangled symbols; ff_grid.py's
random sweep saves the configurations whose fast-forward differs; ab.py and ab_inproc.py
compare two trees; quantum_parts.py times the steps of an idle host poll on a real arena;
entries_grid.py counts each context's engine entries per packet over a grid;
access_profile.py counts the arena words each kernel function reads and writes;
browser_latency.py reads the kernel's part of a change from the Explorer's status line."""
import json
import os
import subprocess
import sys

import ab
import ab_inproc
import bench
import browser_latency
import entries_grid
import ff_grid
import numpy as np
import perf_profile
import periodicity
import pytest
import quantum_parts


def test_bench_measures_a_run_and_renders_its_row():
    row = bench.throughput("null", "zerocopy", "txonly", 0.001, 1)
    assert row["packets"] > 1000  # 0.001 s at ~100 Mpps, received + transmitted
    assert row["real_time_factor"] == row["emulated_s"] / row["cpu_s"]
    assert row["packets_per_cpu_s"] == row["packets"] / row["cpu_s"]
    assert 0 < row["quanta_per_packet"] < 1  # a quantum moves a batch of descriptors
    doc = {"version": "x", "cpus": 2, "python": "3", "duration_s": 0.001, "repeat": 1,
           "target_real_time_factor": bench.TARGET_RTF, "cases": [row], "load_average": 0.0,
           "yardstick_ns": [2.5, 3.75],
           "in_process": {"import_s": 0.1, "first_run_s": 0.2}, "startup": {}}
    text = bench.render(doc)
    assert "null zerocopy txonly" in text
    rtf_ok = row["real_time_factor"] >= bench.TARGET_RTF
    assert f"{int(rtf_ok)} of 1 cases at or above real time" in text
    # a multi-queue row is shown, outside #17's count (two senders, each under its wire share)
    two = bench.throughput("null", "zerocopy", "txonly", 0.001, 1, queues=2)
    assert two["queues"] == 2 and two["packets"] > row["packets"]
    text = bench.render({**doc, "mq_cases": [two]})
    assert "null zerocopy txonly x2" in text and "of 1 cases at or above" in text
    assert "yardstick 2.50 → 3.75 ns per iteration" in text
    assert "around the kernels" not in text  # not measured: no line
    text = bench.render({**doc, "overhead_ms": {"null": 1.25, "veth": 0.5}})
    assert "around the kernels (CPU ms of a 0.1 ms run): null 1.25, veth 0.50" in text


def test_overhead_times_each_devices_shortest_run():
    ms = bench.overhead(1)
    assert list(ms) == list(dict.fromkeys(case[0] for case in bench.CASES))
    assert all(0 < v < 1000 for v in ms.values())  # ~1 ms on the development VM


def test_yardstick_times_its_loop_per_iteration():
    ns = bench.yardstick(trials=1)
    assert 0.05 < ns < 100  # ~2-4 ns on the development VM: a few loads and stores


def test_perf_profile_names_engine_device_and_wrapper_symbols():
    d = perf_profile.demangle
    assert d("_ZN8xskbench7kernels5afxdp10app_txonlyB3v53B40c8tJTIeFIjxB2IKSgI4CrvSCKg1MMVCE"
             "5ArrayIxLi1E1C7mutable7alignedE") == "afxdp.app_txonly"
    assert d("_ZN7cpython8xskbench7kernels6engine5_openB3v31B40c8tJTIeFIjxB2E") == "engine._open"
    # a device's kernel module is named by its device
    assert d("_ZN8xskbench7devices10virtio_net6kernel12host_quantumB3v9E") == \
        "virtio_net.host_quantum"
    assert d("0x7f3a2c01d2e0") == "unresolved"  # JIT code outside numba's functions
    assert d("PyArg_UnpackTuple") == "PyArg_UnpackTuple"


def test_ff_grid_random_sweep_saves_the_configurations_that_differ(tmp_path, capsys):
    out = tmp_path / "differ.json"
    ff_grid.random_sweep(3, 0, out)
    saved = json.loads(out.read_text())  # each a RunConfig's JSON
    assert f"{len(saved)} of 3 random configurations differ" in capsys.readouterr().out


def test_entries_grid_counts_every_contexts_entries_of_the_engines_quanta():
    cfgs = list(entries_grid.configs("null"))
    assert {(c.mode, c.workload.kind) for c, _ in cfgs} == {
        (mode, kind) for mode in ("zerocopy", "copy") for kind in ("txonly", "rxdrop", "l2fwd")}
    cfg = cfgs[0][0].replace(**{"workload.duration_s": 0.0003, "workload.warmup_s": 0.0})
    entered, ran, packets = bench.entries(cfg)
    assert set(entered) == {"app", "napi"} and packets > 1_000
    assert sum(ran.values()) == bench.quanta(cfg)  # the quanta run_chunk runs, counted apart
    assert entered == ran  # null runs no polls of its own at once (a lockstep): one each


def test_periodicity_finds_a_period_only_where_the_increments_repeat():
    ramp = np.arange(30)[:, None] * np.array([[5, 0, 1]])  # clocks and counters, linear
    pattern = np.array([0, 2, 7])[np.arange(30) % 3][:, None]  # a state of period 3
    S = np.hstack([ramp, pattern])
    assert periodicity.repeats(S, 3).all() and not periodicity.repeats(S, 2).any()
    assert periodicity.longest_run(periodicity.repeats(S, 6)) == 30 - 12
    S[20, 3] += 1  # one disturbance breaks the windows that span it
    ok = periodicity.repeats(S, 3)
    assert not ok[[14, 17, 20]].any() and periodicity.longest_run(ok) == 14


def test_periodicity_samples_the_books_and_finds_null_txonly_quasi_periodic(capsys):
    # the README's finding (Performance): the application's loop, NAPI's poll and the wire
    # do not share a period; a whole-machine fast-forward would jump a few periods at most
    periodicity.main(["--skip", "300", "--entries", "400"])
    out = capsys.readouterr().out
    assert "400 entries of 'app' sampled" in out
    rows = [line.split() for line in out.splitlines()[2:]]
    assert [int(r[0]) for r in rows] == [lag for lag in periodicity.LAGS if 2 * lag < 400]
    assert all(int(r[2]) < 50 for r in rows)  # longest runs of repeating windows


def test_access_profile_counts_the_words_of_the_run_the_compiled_kernels_make():
    out = subprocess.run([sys.executable, str(bench.REPO / "benchmarks" / "access_profile.py"),
                          "--case", "null", "zerocopy", "txonly", "--duration", "0.0002"],
                         capture_output=True, text=True, check=True).stdout
    head, parts, funcs = out.split("\n\n")
    words, packets = float(head.split()[3]), int(head.split("(")[1].split()[0])
    # plain Python moved what the compiled kernels move (the same run, counted)
    _, _, compiled = bench.entries(bench._config("null", "zerocopy", "txonly", 0.0002))
    assert packets == compiled > 1000
    # rows: part, words, share %, written
    per_part = {" ".join(r.split()[:-4]): float(r.split()[-4]) for r in parts.splitlines()[1:]}
    assert abs(sum(per_part.values()) - words) < 0.5 and {"engine", "afxdp"} <= set(per_part)
    written = sum(float(r.split()[-1]) for r in parts.splitlines()[1:])
    assert 0 < written < words and abs(written - float(head.split()[8])) < 0.5
    assert 10 < words < 200  # a batch of 64 descriptors per quantum: tens of words each
    rows = {r.split()[0]: r.split() for r in funcs.splitlines()[1:]}
    assert rows["app_txonly"][-1] == "afxdp" and rows["book"][-1] == "engine"


def test_ab_compares_two_trees_case_by_case(capsys):
    ab.main([str(bench.REPO), "--rounds", "1", "--runs", "1", "--case", "null", "copy",
             "txonly"])
    row = capsys.readouterr().out.splitlines()[-1].split()
    assert row[:3] == ["null", "copy", "txonly"]
    old_ms, new_ms, speedup = map(float, row[3:])
    assert old_ms > 0 and new_ms > 0 and speedup == pytest.approx(old_ms / new_ms, rel=0.01)


def test_ab_runs_the_tree_it_is_given_not_this_one(tmp_path):
    """bench.py puts this repository first on sys.path: the old side of an A/B must still
    import the old tree (a stub here), and ab refuses a tree it did not import."""
    (tmp_path / "xskbench").mkdir()
    (tmp_path / "xskbench" / "__init__.py").write_text("run = 'the old tree'\n")
    probe = ("import sys; sys.path.insert(0, sys.argv[1]); import ab, bench; "
             "print(ab._load(sys.argv[2]))")
    bench_dir = str(bench.REPO / "benchmarks")
    out = subprocess.run([sys.executable, "-c", probe, bench_dir, str(tmp_path)],
                         capture_output=True, text=True, check=True).stdout
    assert out.strip() == "the old tree"
    (tmp_path / "elsewhere").mkdir()
    bad = subprocess.run([sys.executable, "-c", probe, bench_dir, str(tmp_path / "elsewhere")],
                         capture_output=True, text=True)
    assert bad.returncode != 0 and "imported xskbench from" in bad.stderr


def test_ab_inproc_keeps_the_copies_used_last(tmp_path):
    for age, name in enumerate(["newest", "new", "old", "oldest"]):
        (tmp_path / name / "xskbench_b").mkdir(parents=True)
        os.utime(tmp_path / name, (1e9 - age, 1e9 - age))
    (tmp_path / "numba").mkdir()  # not a copy: left alone
    os.utime(tmp_path / "numba", (1, 1))
    ab_inproc.prune(tmp_path, 2)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["new", "newest", "numba"]


def test_ab_inproc_imports_the_other_tree_renamed_beside_this_one(tmp_path):
    """The other tree's package, every ``xskbench`` in it renamed, imports next to this one:
    its modules are its own (a stub here), with its data beside them."""
    tree = tmp_path / "old"
    (tree / "xskbench").mkdir(parents=True)
    (tree / "data").mkdir()
    (tree / "data" / "costs.yaml").write_text("x: 1\n")
    (tree / "xskbench" / "__init__.py").write_text(
        "from xskbench.core import run\nimport xskbench.core as core\n")
    (tree / "xskbench" / "core.py").write_text("run = 'the old tree, ' + __name__\n")
    probe = ("import sys; sys.path.insert(0, sys.argv[1]); import ab_inproc, xskbench; "
             "b = ab_inproc.other(sys.argv[2], sys.argv[3]); "
             "print(b.run, b.core.__file__.startswith(sys.argv[3]), xskbench.run is not b.run)")
    out = subprocess.run([sys.executable, "-c", probe, str(bench.REPO / "benchmarks"),
                          str(tree), str(tmp_path / "copy")],
                         capture_output=True, text=True, check=True).stdout
    assert out.split() == ["the", "old", "tree,", "xskbench_b.core", "True", "True"]
    assert (tmp_path / "copy" / "data" / "costs.yaml").read_text() == "x: 1\n"


def test_quantum_parts_times_each_step_of_an_idle_host_poll(capsys):
    m, cc, cb = quantum_parts.arena()
    one = m.copy()
    quantum_parts._polls(one, cc, cb, 1, len(quantum_parts.PARTS) - 2)  # up to the horizon
    spun = m.copy()
    quantum_parts._polls(spun, cc, cb, 1, len(quantum_parts.PARTS) - 1)  # + the replay
    poll = one[quantum_parts.engine.H_QACC]
    assert poll > 0 and spun[quantum_parts.engine.H_QACC] > 1000 * poll  # a steady idle spin
    quantum_parts.main(["--calls", "1000", "--trials", "1"])
    rows = capsys.readouterr().out.splitlines()[1:]
    assert [r.split()[-3] for r in rows][1:] == list(quantum_parts.PARTS[1:])
    assert all(float(r.split()[-2]) > 0 for r in rows)  # ns per call with the parts so far


def test_browser_latency_reads_the_kernel_callback_from_the_explorer_status():
    """``browser_latency.py --breakdown`` takes the kernel's part from the status line."""
    from xskbench.widgets import Explorer

    ex = Explorer(sweep_key=None)
    ex.controls["xsk.batch_size"].value = 32
    ran, drawn = map(int, browser_latency.STATUS_MS.search(ex.status.value).groups())
    assert abs(ran + drawn - ex.last_update_s * 1e3) <= 2  # each rounded to a ms
