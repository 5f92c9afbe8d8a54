"""The ``xskbench`` command line.

Subcommands are listed in :data:`COMMANDS`, one table: name -> the module that implements
it and the names of its two functions there (``add_arguments(parser)``, ``main(args)``),
imported only when that subcommand runs, so ``xskbench --help`` and ``xskbench fields``
stay quick and no module registers itself by being imported.  Every
error - bad option, bad value, bad config file - is one stderr line and exit status 2
(set ``XSKBENCH_DEBUG=1`` to get the traceback instead).
"""

import argparse
import importlib
import json
import os
import sys
from collections.abc import Callable, Sequence
from typing import NamedTuple

from xskbench import estimate
from xskbench.config import DEVICE_MODES, RunConfig, load
from xskbench.fields import field_info, fmt, iter_fields
from xskbench.run import run
from xskbench.sections import SECTIONS, section_class


class Command(NamedTuple):
    module: str                         # the module implementing the subcommand
    help: str
    add_arguments: str = "add_arguments"  # its ``add_arguments(parser)``
    main: str = "main"                  # its ``main(args)``: the exit status (None = 0)

    def load(self) -> tuple[Callable[[argparse.ArgumentParser], None],
                            Callable[[argparse.Namespace], int | None]]:
        module = importlib.import_module(self.module)
        return getattr(module, self.add_arguments), getattr(module, self.main)


#: Every subcommand: ``xskbench <name>``.
COMMANDS: dict[str, Command] = {
    "run": Command(__name__, "emulate one configuration and report", "_run_args", "_run"),
    "fields": Command(__name__, "list every config field", "_fields_args", "_fields"),
    "calibrate": Command("xskbench.calibrate_cli", "fit the op costs to the published rows; "
                         "write data/costs/*.json", "add_calibrate_arguments", "calibrate_main"),
    "reproduce": Command("xskbench.calibrate_cli", "every published number beside its "
                         "emulation", "add_reproduce_arguments", "reproduce_main"),
    "sweep": Command("xskbench.sweep_cli",
                     "run a parameter sweep (GRID.yaml) on Dask; write Parquet"),
    "measure": Command("xskbench.real.cli", "measure the real kernel (root): AF_XDP copy mode "
                       "or a UDP socket on veth/tap in namespaces xskbench builds"),
}


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
    p.add_argument("--yes", action="store_true",
                   help="run even if the run is estimated to take longer than "
                        f"{estimate.LIMIT_S / 60:.0f} min")


def config_from_args(args: argparse.Namespace) -> RunConfig:
    """Defaults < --config file < shortcut options < --set."""
    cfg = load(args.config) if args.config else RunConfig()
    shortcuts = [f"{key}={getattr(args, key)}" for key in RUN_SHORTCUTS.values()
                 if getattr(args, key) is not None]
    return cfg.override(shortcuts + args.assignments)


def _run(args: argparse.Namespace) -> None:
    cfg = config_from_args(args)
    line = estimate.gate(estimate.run_seconds(cfg), "this run", args.yes)
    if line:
        print(line, file=sys.stderr, flush=True)
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


def _fields(args: argparse.Namespace) -> None:
    classes = [section_class(args.section)] if args.section else SECTIONS.values()
    rows = [("FIELD", "TYPE", "DEFAULT", "ALLOWED", "UNIT", "DOC")]
    rows += [(f.path, f.type, fmt(f.default), f.allowed(), f.unit, f.doc)
             for cls in classes for f in iter_fields(cls)]
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]) - 1)]
    for row in rows:
        print("  ".join([c.ljust(w) for c, w in zip(row, widths, strict=False)] + [row[-1]]))


# --- entry point --------------------------------------------------------------------------

def build_parser(load: Sequence[str] | None = None) -> argparse.ArgumentParser:
    """The parser of every subcommand; only those named in ``load`` (default: all) get their
    options, which imports their modules."""
    parser = _Parser(prog="xskbench", description="Emulate Linux AF_XDP datapaths.")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for name, cmd in COMMANDS.items():
        p = sub.add_parser(name, help=cmd.help, description=cmd.help)
        if load is None or name in load:
            cmd.load()[0](p)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else list(argv)
    try:
        # the subcommand is the first word that is not an option: only its module loads
        name = next((a for a in argv if not a.startswith("-")), None)
        args = build_parser(load=[name] if name else []).parse_args(argv)
        return COMMANDS[args.command].load()[1](args) or 0
    except ValueError as err:
        if os.environ.get("XSKBENCH_DEBUG"):
            raise
        print("xskbench: error: " + _one_line(err), file=sys.stderr)
        return 2


def _one_line(err: Exception) -> str:
    """The message on one line; a ``name=value`` or quoted word is cut to 80 characters
    (any other word, e.g. a path, to 240)."""
    def cut(word: str) -> str:
        limit = 80 if "=" in word or word[:1] in "'\"" else 240
        return word if len(word) <= limit else word[:limit - 3] + "..."
    return " ".join(cut(w) for w in str(err).split())
