"""The ``xskbench`` command line (everything short of actually running the emulator)."""

import subprocess
import sys
from pathlib import Path

import pytest

import xskbench.cli as cli
from xskbench.cli import build_parser, config_from_args, main
from xskbench.config import RunConfig
from xskbench.fields import iter_fields
from xskbench.sections import SECTIONS

REPO = Path(__file__).resolve().parent.parent


def _main(capsys, *argv) -> tuple[int, str, str]:
    status = main(list(argv))
    out, err = capsys.readouterr()
    return status, out, err


def test_fields_lists_every_field(capsys):
    status, out, err = _main(capsys, "fields")
    assert status == 0 and not err
    lines = out.splitlines()
    assert lines[0].split() == ["FIELD", "TYPE", "DEFAULT", "ALLOWED", "UNIT", "DOC"]
    rows = {line.split()[0]: line for line in lines[1:]}
    infos = [f for cls in SECTIONS.values() for f in iter_fields(cls)]
    assert list(rows) == [f.path for f in infos]
    for f in infos:
        assert f.allowed() in rows[f.path] and rows[f.path].endswith(f.doc)
    assert "a power of two in [32, 32768]" in rows["xsk.tx_size"]


def test_fields_single_section(capsys):
    status, out, _ = _main(capsys, "fields", "--section", "null")
    assert status == 0
    assert {line.split()[0] for line in out.splitlines()[1:]} == {
        f.path for f in iter_fields(SECTIONS["null"])}


@pytest.mark.parametrize(("argv", "fragment"), [
    (["run", "--set", "xsk.tx_size=1000"], "xsk.tx_size=1000: must be a power of two"),
    (["run", "--set", "xsk.tx_size"], "xsk.tx_size='': must be"),
    (["run", "--set", "unknown.x=1"], "unknown section 'unknown'; allowed: xsk"),
    (["run", "--set", "xsk.nope=1"], "unknown field xsk.nope; allowed: fill_size"),
    (["run", "--rate", "0"], "workload.rate_pps=0.0"),
    (["run", "--packet-size", "big"], "workload.packet_size='big'"),
    (["run", "--mode", "pmd"], "mode='pmd': device 'null' supports 'zerocopy', 'copy'"),
    (["run", "--device", "e1000"], "device='e1000': must be one of"),
    (["run", "--workload", "tx"], "workload.kind='tx': must be one of"),
    (["run", "--packet-size", "4000"], "XDP_PACKET_HEADROOM"),
    (["run", "--config", "/nonexistent/run.yaml"], "cannot read /nonexistent/run.yaml"),
    (["run", "--report", "html"], "invalid choice: 'html'"),
    (["run", "--bogus"], "unrecognized arguments: --bogus"),
    (["fields", "--section", "nope"], "unknown section 'nope'"),
    (["frobnicate"], "invalid choice: 'frobnicate'"),
    ([], "required: COMMAND"),
])
def test_errors_are_one_line_and_exit_2(capsys, argv, fragment):
    status, out, err = _main(capsys, *argv)
    assert status == 2 and not out
    assert err.count("\n") == 1 and err.startswith("xskbench: error: ")
    assert fragment in err


def test_config_precedence(tmp_path):
    path = tmp_path / "run.yml"
    path.write_text("device: veth\nmode: udp\nworkload: {packet_size: 128, seed: 5}\n"
                    "xsk: {tx_size: 512}\n")
    args = build_parser().parse_args([
        "run", "--config", str(path), "--packet-size", "256", "--rate", "unbounded",
        "--duration", "1e-3", "--seed", "9",
        "--set", "workload.packet_size=512", "xsk.need_wakeup=false",
        "--set", "workload.warmup_s=0"])
    cfg = config_from_args(args)
    assert (cfg.device, cfg.mode, cfg.xsk.tx_size) == ("veth", "udp", 512)  # from the file
    assert cfg.workload.packet_size == 512  # --set beats --packet-size beats the file
    assert (cfg.workload.seed, cfg.workload.duration_s, cfg.workload.rate_pps) == (9, 1e-3, None)
    assert cfg.xsk.need_wakeup is False and cfg.workload.warmup_s == 0.0


def test_run_defaults_to_the_default_config():
    assert config_from_args(build_parser().parse_args(["run"])) == RunConfig()


def _hello_args(p):
    p.add_argument("--name", default="xsk")


def _hello(args):
    print(f"hello {args.name}")
    return 3


def test_a_command_is_one_row_of_the_table(monkeypatch, capsys):
    monkeypatch.setitem(cli.COMMANDS, "hello",
                        cli.Command(__name__, "say hello", "_hello_args", "_hello"))
    assert _main(capsys, "hello", "--name", "veth") == (3, "hello veth\n", "")


def test_only_the_chosen_command_loads(capsys):
    # `xskbench fields` imports neither the sweep nor the real-kernel command modules
    code = ("import sys; from xskbench.cli import main; main(['fields', '--section', 'xsk']); "
            "print(sorted(m for m in ('xskbench.sweep_cli', 'xskbench.real.cli', "
            "'xskbench.sweep', 'xskbench.real.measure') if m in sys.modules))")
    proc = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True,
                          text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.splitlines()[-1] == "[]"


def test_python_dash_m():
    proc = subprocess.run([sys.executable, "-m", "xskbench", "run", "--set", "unknown.x=1"],
                          cwd=REPO, capture_output=True, text=True, timeout=60)
    assert proc.returncode == 2 and proc.stdout == ""
    assert proc.stderr.splitlines() == [
        "xskbench: error: unknown section 'unknown'; allowed: " + ", ".join(SECTIONS)]
    proc = subprocess.run([sys.executable, "-m", "xskbench", "fields", "--section", "xsk"],
                          cwd=REPO, capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0 and "xsk.batch_size" in proc.stdout
