"""``xskbench measure``: the real kernel beside the emulation (``add_arguments`` and ``main``,
listed in :data:`xskbench.cli.COMMANDS`).  Its options come from the
field metadata of :class:`xskbench.real.section.MeasureConfig`, parsed like ``run --set``."""
from __future__ import annotations

import argparse
import json
import sys

from xskbench.fields import coerce, fmt, iter_fields
from xskbench.outputs import check_writable, write_atomically
from xskbench.real import measure as M
from xskbench.real.bpf import BpfError
from xskbench.real.environment import MeasureError, check_environment
from xskbench.real.section import DEVICE_ALIASES, MeasureConfig
from xskbench.real.topology import Terminated, TopologyError
from xskbench.real.xsk import XskError


def _option(name: str) -> str:
    return "--" + name.replace("_", "-")


def add_arguments(p: argparse.ArgumentParser) -> None:
    for info in iter_fields(MeasureConfig):
        unit = f", {info.unit}" if info.unit else ""
        p.add_argument(_option(info.name), dest=info.name, metavar=info.name.upper(),
                       help=f"{info.doc}: {info.allowed()}{unit} (default "
                            f"{fmt(info.default)})".replace("%", "%%"))
    p.add_argument("--no-need-wakeup", dest="need_wakeup", action="store_const",
                   const="false", help="as --need-wakeup false")
    p.add_argument("--set", dest="assignments", action="extend", nargs="+", default=[],
                   metavar="FIELD=VALUE", help="set any field above by name; applied last")
    p.add_argument("--json", action="store_true", help="print the result as JSON")
    p.add_argument("--sweep", metavar="FILE",
                   help="instead: measure the stored set (batch, ring, need_wakeup, packet "
                        "size, wait; one at a time around the other options) into FILE")


def config_from_args(args: argparse.Namespace) -> MeasureConfig:
    """Defaults < options < --set; every value parsed by the field's metadata."""
    given = {info.name: getattr(args, info.name) for info in iter_fields(MeasureConfig)
             if getattr(args, info.name) is not None}
    for item in args.assignments:
        name, eq, text = item.partition("=")
        if not eq:
            raise ValueError(f"--set {item!r}: expected FIELD=VALUE")
        given[name.strip()] = text
    if given.get("device", "").strip() in DEVICE_ALIASES:
        old = given["device"].strip()
        print(f"xskbench: device {old!r} is now called {DEVICE_ALIASES[old]!r}",
              file=sys.stderr)
        given["device"] = DEVICE_ALIASES[old]
    return MeasureConfig(**{name: coerce(MeasureConfig, name, text)
                            for name, text in given.items()})


def main(args: argparse.Namespace) -> int:
    try:
        cfg = config_from_args(args)
        if args.sweep:
            check_writable(args.sweep, "--sweep")  # before minutes of measuring
            check_environment()
            cfg.check()
            out = M.sweep(cfg, progress=lambda f, v, res: print(
                f"{f}={v}: rx {res['pps']['rx'] / 1e6:.3f} Mpps", file=sys.stderr, flush=True))
            write_atomically(args.sweep, lambda tmp: tmp.write_text(
                json.dumps(out, indent=1, sort_keys=True) + "\n"))
            print(f"wrote {len(out['points'])} points to {args.sweep}")
            return 0
        res = M.measure(cfg)
    except KeyboardInterrupt:
        print("xskbench: measure interrupted; namespaces and XDP programs removed",
              file=sys.stderr)
        return 130
    except Terminated as sig:
        print(f"xskbench: measure stopped by {sig}; namespaces and XDP programs removed",
              file=sys.stderr)
        return 143
    except (MeasureError, TopologyError, BpfError, XskError, OSError) as err:
        raise ValueError(str(err)) from None
    print(res.to_json_text() if args.json else res.report())
    return 0
