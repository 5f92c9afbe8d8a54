"""Soak: the property of tests/test_properties.py over many random valid configurations.

Every device/mode/workload combination in turn, each config drawn by the same hypothesis
strategy, each run short (0.5-2 ms emulated) and run twice (determinism). Failures are
printed with the config that reproduces them and never stop the soak; a run that hangs longer
than ``--hang`` seconds aborts with a traceback, its config is in ``--current``.

    .venv/bin/python benchmarks/soak.py              # 10,000 configurations (make soak)
    .venv/bin/python benchmarks/soak.py -n 500 --seed 3
"""

import argparse
import faulthandler
import json
import sys
import time
import traceback
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "tests")]

from hypothesis import HealthCheck, Phase, given, seed, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402
from test_properties import COMBOS, check_run, configs  # noqa: E402

from xskbench.run import run  # noqa: E402


def draw_configs(n, seed_, visit):
    """Call ``visit(combo, cfg)`` for ``n`` configurations drawn by the property tests'
    strategy, every device/mode/workload combination in turn (hypothesis seed ``seed_``)."""
    drawn = [0]

    @seed(seed_)
    @settings(max_examples=n, deadline=None, database=None, phases=[Phase.generate],
              suppress_health_check=list(HealthCheck))
    @given(data=st.data())
    def each(data):
        combo = COMBOS[drawn[0] % len(COMBOS)]
        cfg = data.draw(configs((combo,)))
        drawn[0] += 1
        visit(combo, cfg)

    each()


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("-n", type=int, default=10_000, help="configurations (default 10000)")
    ap.add_argument("--seed", type=int, default=0, help="hypothesis seed (default 0)")
    ap.add_argument("--hang", type=float, default=300.0, help="seconds before a run is a hang")
    ap.add_argument("--current", default="soak-current.json",
                    help="where the config being run is written (for hangs)")
    ap.add_argument("--json", action="store_true", help="print the summary as JSON")
    args = ap.parse_args(argv)

    done, failures = [0], []
    per_combo = {"/".join(c): 0 for c in COMBOS}
    current = Path(args.current)
    t0 = time.perf_counter()

    def soak(combo, cfg):
        done[0] += 1
        per_combo["/".join(combo)] += 1
        current.write_text(cfg.to_json())
        faulthandler.dump_traceback_later(args.hang, exit=True)
        try:
            res = check_run(cfg)
            again = run(cfg)
            if again.to_json_text() != res.to_json_text():
                raise AssertionError("not deterministic: two runs differ")
        except Exception as err:  # noqa: BLE001 - every failure is recorded, none stops us
            failures.append({"config": json.loads(cfg.to_json()),
                             "error": f"{type(err).__name__}: {err}"})
            print(f"FAIL #{len(failures)} {type(err).__name__}: {err}\n  config: "
                  f"{cfg.to_json(indent=None)}", flush=True)
            traceback.print_exc(limit=3)
        finally:
            faulthandler.cancel_dump_traceback_later()
        if done[0] % 500 == 0:
            print(f"{done[0]} configurations, {len(failures)} failures, "
                  f"{time.perf_counter() - t0:.0f} s", flush=True)

    draw_configs(args.n, args.seed, soak)
    current.unlink(missing_ok=True)
    wall = time.perf_counter() - t0
    summary = {"configurations": done[0], "failures": len(failures), "wall_s": round(wall, 1),
               "seed": args.seed, "per_combination": per_combo,
               "failed_configs": failures}
    if args.json:
        print(json.dumps(summary, indent=1))
    else:
        print(f"soak: {done[0]} configurations (each run twice), {len(failures)} failures, "
              f"{wall:.0f} s wall ({wall / max(done[0], 1) * 1e3:.0f} ms per configuration)")
        for name, n in per_combo.items():
            print(f"  {name:28s} {n}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
