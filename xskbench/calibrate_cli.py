"""``xskbench calibrate`` and ``xskbench reproduce`` (listed in :data:`xskbench.cli.COMMANDS`):
the cost fit, from the published rows or from real measurements, and every published number
beside its emulation."""
import argparse
import os

from xskbench import calibrate, real_calibrate, reproduce


def add_calibrate_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--quiet", action="store_true", help="print only errors")
    p.add_argument("--from-measurements", metavar="FILE",
                   help="fit a profile for this machine from real runs (the JSON of "
                        "`xskbench measure --sweep`); prints the fit and its residuals")
    p.add_argument("--testbed", metavar="NAME",
                   help="with --from-measurements: the profile's name (default this-machine)")
    p.add_argument("--cpu-ghz", type=float, metavar="GHZ",
                   help="with --from-measurements: the measured CPU's clock (default: "
                        "this machine's if it is the measured CPU model, else 3)")
    p.add_argument("--write", action="store_true",
                   help="with --from-measurements: also write data/costs/NAME.json")
    p.add_argument("--holdout", metavar="SOURCE",
                   help="fit without one source (a seed: 000, 001, 002, 004, xdp-paper; or a "
                        "measured grid: measured:NAME) and print the held-out rows' errors; "
                        "writes nothing")


def calibrate_main(args: argparse.Namespace) -> None:
    if args.holdout is not None:
        print(calibrate.render_holdout(calibrate.holdout(args.holdout,
                                                         verbose=not args.quiet)))
        return
    if args.from_measurements is None:
        given = [o for o, v in (("--testbed", args.testbed), ("--cpu-ghz", args.cpu_ghz),
                                ("--write", args.write)) if v]
        if given:
            raise ValueError(f"{', '.join(given)}: only with --from-measurements")
        calibrate.calibrate(verbose=not args.quiet)
        return
    if not os.path.exists(args.from_measurements):
        raise ValueError(f"--from-measurements {args.from_measurements}: no such file")
    if args.write:
        real_calibrate.check_testbed(args.testbed or real_calibrate.TESTBED)
    fit = real_calibrate.fit(args.from_measurements, cpu_ghz=args.cpu_ghz)
    if not args.quiet:
        print(real_calibrate.render(fit))
    if args.write:
        real_calibrate.write(fit, args.testbed or real_calibrate.TESTBED,
                             verbose=not args.quiet)


def add_reproduce_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--json", action="store_true", help="print the rows as JSON")
    p.add_argument("--out", metavar="DIR", help="also write CSV, Markdown and figures here")
    p.add_argument("--cv", action="store_true",
                   help="add each row's leave-one-source-out error (fit without its seed or "
                        "measured grid)")
    p.add_argument("--sources", metavar="S,S",
                   help="only these sources' rows (seeds 000, 001, 002, 004, xdp-paper, or "
                        "measured:NAME); with --cv each is left out of a fit on the others")
    p.add_argument("--no-bands", action="store_true",
                   help="skip the runs across assumed knobs' ranges")


def reproduce_main(args: argparse.Namespace) -> int:
    rows = calibrate.calibration_rows()
    if args.sources:
        wanted = args.sources.split(",")  # the table, and the calibration set of --cv
        have = {calibrate.source_of(r) for r in rows}
        if unknown := [s for s in wanted if s not in have]:
            raise ValueError(f"--sources {','.join(unknown)}: no such source; have: "
                             f"{', '.join(sorted(have))}")
        rows = [r for r in rows if calibrate.source_of(r) in wanted]
    runner = reproduce.Runner(rows)
    df = reproduce.reproduce(rows, runner, bands=not args.no_bands)
    loo, count = reproduce.cross_validate(rows, runner) if args.cv else (None, None)
    print(reproduce.to_json(df, loo) if args.json else reproduce.render(df, loo, count))
    if args.out:
        reproduce.write(df, args.out)
    return 0 if all(w for w in df.within if w is not None) else 1
