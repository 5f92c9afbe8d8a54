"""``xskbench measure``: the real kernel beside the emulation (``add_arguments`` and ``main``,
listed in :data:`xskbench.cli.COMMANDS`)."""
from __future__ import annotations

import argparse
import json
import sys


def add_arguments(p: argparse.ArgumentParser) -> None:
    from xskbench.real import measure as M
    d = M.MeasureConfig()
    p.add_argument("--device", choices=M.DEVICES, default=d.device,
                   help="veth pair across two namespaces, or a tap device (default veth)")
    p.add_argument("--mode", choices=M.MODES, default=d.mode,
                   help="copy: AF_XDP copy mode; udp: a kernel UDP socket (the baseline); "
                        "zerocopy: asks the kernel, which refuses it on veth/tap (default copy)")
    p.add_argument("--workload", choices=M.WORKLOADS, default=d.workload,
                   help="what the measured socket does (default rxdrop)")
    p.add_argument("--packet-size", type=int, default=d.packet_size, metavar="N",
                   help=f"Ethernet frame length without FCS, bytes (default {d.packet_size})")
    p.add_argument("--batch", type=int, default=d.batch, metavar="N",
                   help=f"descriptors per batch, as xdpsock -b (default {d.batch})")
    p.add_argument("--ring", type=int, default=d.ring, metavar="N",
                   help=f"rx/tx/completion ring size; fill ring 2x (default {d.ring})")
    p.add_argument("--frame-size", type=int, choices=(2048, 4096), default=d.frame_size,
                   help=f"UMEM frame size (default {d.frame_size})")
    p.add_argument("--no-need-wakeup", dest="need_wakeup", action="store_false",
                   help="bind without XDP_USE_NEED_WAKEUP")
    p.add_argument("--wait", choices=("poll", "spin", "busy-poll"), default=d.wait,
                   help="when the ring is empty: spin (xdpsock's default; kicks only when "
                        "the kernel asks), sleep in poll(), or SO_PREFER_BUSY_POLL + recvfrom "
                        f"(default {d.wait})")
    p.add_argument("--xdp-mode", choices=("native", "skb"), default=d.xdp_mode,
                   help="XDP attach mode of the redirect program (default native)")
    p.add_argument("--sender", choices=M.SENDERS, default=d.sender,
                   help="traffic for rxdrop/l2fwd: xdp = BPF_PROG_RUN live frames, xsk = "
                        "AF_XDP txonly (copy), udp = sendmmsg, tap = write() into the tap fd "
                        "(auto: xdp on veth, tap on tap)")
    p.add_argument("--repeats", type=int, default=3, metavar="N",
                   help="runs to average; the spread is reported (default 3)")
    p.add_argument("--duration", type=float, default=d.duration, metavar="S",
                   help=f"steady window per run, seconds (default {d.duration:g})")
    p.add_argument("--warmup", type=float, default=d.warmup, metavar="S",
                   help=f"warm-up before the window, seconds (default {d.warmup:g})")
    p.add_argument("--app-cpu", type=int, default=d.app_cpu, metavar="CPU",
                   help=f"CPU of the measured application (default {d.app_cpu})")
    p.add_argument("--peer-cpu", type=int, default=d.peer_cpu, metavar="CPU",
                   help=f"CPU of the sender/sink (default {d.peer_cpu})")
    p.add_argument("--priority", choices=M.PRIORITIES, default=d.priority,
                   help="worker scheduling: normal; high = a session of its own at nice -20 "
                        "(other sessions' load cannot take the pinned CPUs); rt = SCHED_FIFO 1 "
                        f"(default {d.priority})")
    p.add_argument("--seed", type=int, default=d.seed, help="payload bytes (default 1)")
    p.add_argument("--json", action="store_true", help="print the result as JSON")
    p.add_argument("--sweep", metavar="FILE",
                   help="instead: measure the stored set (batch, ring, need_wakeup, packet "
                        "size, one at a time around the other options) and write it to FILE")


def config_from_args(args: argparse.Namespace):
    from xskbench.real.measure import MeasureConfig
    return MeasureConfig(
        device=args.device, mode=args.mode, workload=args.workload,
        packet_size=args.packet_size, batch=args.batch, ring=args.ring,
        frame_size=args.frame_size, need_wakeup=args.need_wakeup, wait=args.wait,
        xdp_mode=args.xdp_mode, sender=args.sender, duration=args.duration,
        warmup=args.warmup, repeats=args.repeats, app_cpu=args.app_cpu,
        peer_cpu=args.peer_cpu, priority=args.priority, seed=args.seed)


def _fmt_rate(pps: float) -> str:
    return f"{pps / 1e6:.3f} Mpps"


def report(res: dict) -> str:
    """Human-readable summary of a :func:`measure` result."""
    c = res["config"]
    x, w, r = c["xsk"], c["workload"], c["real"]
    lines = [
        f"real {c['device']} {c['mode']} {w['kind']}: {w['packet_size']} B frames, batch "
        f"{x['batch_size']}, ring {x['rx_size']} (fill {x['fill_size']}), need_wakeup "
        f"{'on' if x['need_wakeup'] else 'off'}, wait {r['wait']}, {r['xdp_mode']} XDP; "
        f"sender {r['sender']} on cpu{r['peer_cpu']}, app on cpu{r['app_cpu']}; "
        f"{res['repeats']} x {w['duration_s']:g} s after {w['warmup_s']:g} s warm-up",
    ]
    sp = res["spread"]
    for k in res["pps"]:
        s = sp["pps"][k]
        if k != "rx" and not s["max"]:
            continue
        bps = res["bps"].get(k)
        lines.append(
            f"  {k:<9} {_fmt_rate(s['mean'])}  (min {s['min'] / 1e6:.3f}, max "
            f"{s['max'] / 1e6:.3f}, cv {100 * s['cv']:.1f}%)"
            + (f"  {bps / 1e9:.3f} Gbit/s" if bps is not None else ""))
    lines.append(f"  offered   {_fmt_rate(res['offered_pps'])}"
                 + (f"   returned {_fmt_rate(res['returned_pps'])}"
                    if "returned_pps" in res else ""))
    cpu = res["cpu"]
    lines.append("  CPU (% of one CPU): " + "  ".join(
        f"{k} {cpu[k]:.1f}" for k in ("app", "peer", "ksoftirqd", "other") if k in cpu)
        + f"   [softirq {cpu.get('softirq', 0):.1f}, inside those; app idle polls "
        f"{res.get('idle_poll', {}).get('app', 0):.1f}]")
    for name, s in res["cpu_split"].items():
        lines.append(f"  {name}: " + "  ".join(
            f"{k} {s[k]:.1f}%" for k in ("usr", "sys", "softirq", "irq", "idle", "steal")))
    win = res["window_s"] or 1
    drops = {k: v for k, v in res["counters"].items()
             if v and k in ("rx_dropped", "rx_ring_full", "fill_ring_empty_descs",
                            "tx_ring_empty_descs", "rx_invalid_descs", "tx_invalid_descs",
                            "tx_errors", "veth_xdp_ring_full", "backlog_dropped",
                            "tun_tx_dropped")}
    lines.append("  drops/events per s: " + (", ".join(
        f"{k} {v / win:,.0f}" for k, v in drops.items()) or "none"))
    lines.append(f"  bottleneck: {res['bottleneck']}   (kernel {res['real']['kernel']}, "
                 f"{res['real']['cpus']} CPUs)")
    return "\n".join(lines)


def main(args: argparse.Namespace) -> int:
    from xskbench.real import measure as M
    from xskbench.real.bpf import BpfError
    from xskbench.real.topology import Terminated, TopologyError
    from xskbench.real.xsk import XskError
    try:
        cfg = config_from_args(args)
        if args.sweep:
            M.check_environment()
            cfg.check()
            out = M.sweep(cfg, progress=lambda f, v, res: print(
                f"{f}={v}: rx {res['pps']['rx'] / 1e6:.3f} Mpps", file=sys.stderr, flush=True))
            with open(args.sweep, "w") as f:
                json.dump(out, f, indent=1, sort_keys=True)
                f.write("\n")
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
    except (M.MeasureError, TopologyError, BpfError, XskError, OSError) as err:
        raise ValueError(str(err)) from None
    if args.json:
        print(json.dumps(res, sort_keys=True, indent=1))
    else:
        print(report(res))
    return 0
