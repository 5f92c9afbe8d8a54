"""The ``xskbench`` command line.

Subcommands live in :data:`COMMANDS`; add one with the :func:`command` decorator.  Every
error - bad option, bad value, bad config file - is one stderr line and exit status 2
(set ``XSKBENCH_DEBUG=1`` to get the traceback instead).
"""

import argparse
import json
import os
import sys
from collections.abc import Callable, Sequence
from typing import NamedTuple

from xskbench.config import DEVICE_MODES, RunConfig, load
from xskbench.fields import field_info, fmt, iter_fields
from xskbench.sections import SECTIONS, section_class


class Command(NamedTuple):
    help: str
    add_args: Callable[[argparse.ArgumentParser], None]
    handler: Callable[[argparse.Namespace], int | None]  # returns the exit status (None = 0)


#: name -> Command.  Planned: calibrate, reproduce, sweep, measure.
COMMANDS: dict[str, Command] = {}


def command(name: str, help: str, add_args: Callable[[argparse.ArgumentParser], None]):
    """Decorator registering ``handler(args)`` as ``xskbench <name>``."""
    def register(handler):
        COMMANDS[name] = Command(help, add_args, handler)
        return handler
    return register


class _Parser(argparse.ArgumentParser):
    def error(self, message: str):
        raise ValueError(message)  # reported by main() as a single line


# --- run ----------------------------------------------------------------------------------

#: Shortcut options of ``run`` -> the config key they set (parsed exactly like --set).
RUN_SHORTCUTS = {
    "--device": "device",
    "--mode": "mode",
    "--workload": "workload.kind",
    "--packet-size": "workload.packet_size",
    "--rate": "workload.rate_pps",
    "--duration": "workload.duration_s",
    "--seed": "workload.seed",
    "--testbed": "testbed.profile",
}


def _key_help(key: str) -> str:
    if key == "device":
        return f"one of {', '.join(DEVICE_MODES)} (default null)"
    if key == "mode":
        return "; ".join(f"{d}: {', '.join(m)}" for d, m in DEVICE_MODES.items()) + \
            " (default zerocopy)"
    section, _, name = key.partition(".")
    info = field_info(section_class(section), name)
    unit = f", {info.unit}" if info.unit else ""
    return f"{info.doc}: {info.allowed()}{unit}. Default {fmt(info.default)}; sets {key}."


def _run_args(p: argparse.ArgumentParser) -> None:
    for option, key in RUN_SHORTCUTS.items():
        p.add_argument(option, dest=key, metavar=option[2:].upper().replace("-", "_"),
                       help=_key_help(key).replace("%", "%%"))
    p.add_argument("--set", dest="assignments", action="extend", nargs="+", default=[],
                   metavar="SECTION.FIELD=VALUE",
                   help="set any field (see `xskbench fields`); applied last")
    p.add_argument("--config", metavar="FILE",
                   help=".json/.yaml config; the options above override it")
    p.add_argument("--json", action="store_true", help="print the result as JSON")
    p.add_argument("--report", choices=("xdpsock", "testpmd", "profile"), default="xdpsock",
                   help="text report style (default xdpsock)")


def config_from_args(args: argparse.Namespace) -> RunConfig:
    """Defaults < --config file < shortcut options < --set."""
    cfg = load(args.config) if args.config else RunConfig()
    shortcuts = [f"{key}={getattr(args, key)}" for key in RUN_SHORTCUTS.values()
                 if getattr(args, key) is not None]
    return cfg.override(shortcuts + args.assignments)


@command("run", "emulate one configuration and report", _run_args)
def _run(args: argparse.Namespace) -> None:
    cfg = config_from_args(args)
    from xskbench.run import run  # lazy: compiling the kernels is slow

    try:
        result = run(cfg, progress=True)
    except KeyboardInterrupt:  # lands between two kernel chunks (kernels/loop.py)
        print("xskbench: interrupted", file=sys.stderr)
        raise SystemExit(130) from None
    if args.json:
        print(json.dumps(result.to_json(), sort_keys=True, indent=1))
    else:
        print(result.report(style=args.report))


# --- fields -------------------------------------------------------------------------------

def _fields_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("--section", help=f"only this section: {', '.join(SECTIONS)}")


@command("fields", "list every config field", _fields_args)
def _fields(args: argparse.Namespace) -> None:
    classes = [section_class(args.section)] if args.section else SECTIONS.values()
    rows = [("FIELD", "TYPE", "DEFAULT", "ALLOWED", "UNIT", "DOC")]
    rows += [(f.path, f.type, fmt(f.default), f.allowed(), f.unit, f.doc)
             for cls in classes for f in iter_fields(cls)]
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]) - 1)]
    for row in rows:
        print("  ".join([c.ljust(w) for c, w in zip(row, widths, strict=False)] + [row[-1]]))


# --- calibrate / reproduce ----------------------------------------------------------------

def _calibrate_args(p: argparse.ArgumentParser) -> None:
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


@command("calibrate", "fit the op costs to the published rows; write data/costs/*.json",
         _calibrate_args)
def _calibrate(args: argparse.Namespace) -> None:
    if args.from_measurements is None:
        given = [o for o, v in (("--testbed", args.testbed), ("--cpu-ghz", args.cpu_ghz),
                                ("--write", args.write)) if v]
        if given:
            raise ValueError(f"{', '.join(given)}: only with --from-measurements")
        from xskbench.calibrate import calibrate

        calibrate(verbose=not args.quiet)
        return
    from xskbench import real_calibrate

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


def _reproduce_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("--json", action="store_true", help="print the rows as JSON")
    p.add_argument("--out", metavar="DIR", help="also write CSV, Markdown and figures here")


@command("reproduce", "every published number beside its emulation", _reproduce_args)
def _reproduce(args: argparse.Namespace) -> int:
    from xskbench import reproduce

    df = reproduce.reproduce()
    print(reproduce.to_json(df) if args.json else reproduce.render(df))
    if args.out:
        reproduce.write(df, args.out)
    return 0 if all(w for w in df.within if w is not None) else 1


# --- entry point --------------------------------------------------------------------------

def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="xskbench", description="Emulate Linux AF_XDP datapaths.")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for name, cmd in COMMANDS.items():
        cmd.add_args(sub.add_parser(name, help=cmd.help, description=cmd.help))
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    try:
        args = build_parser().parse_args(argv)
        return COMMANDS[args.command].handler(args) or 0
    except ValueError as err:
        if os.environ.get("XSKBENCH_DEBUG"):
            raise
        print("xskbench: error: " + " ".join(str(err).split()), file=sys.stderr)
        return 2


# Commands defined in their own modules register themselves on import.
from xskbench import sweep_cli  # noqa: E402,F401 - `xskbench sweep`
from xskbench.real import cli as _real_cli  # noqa: E402,F401 - `xskbench measure`
