"""Plain-text reports of a result, at most 72 columns, to paste into a review."""
import textwrap

from . import faults, stats


def _n(x):
    return f"{x:,.0f}"


def xdpsock(res):
    c = res.config
    lines = [f" sock0@{c.device}:0 {c.workload.kind} {c.mode} "
             f"({c.workload.packet_size} B, {res.window_s * 1e3:.3g} ms emulated)",
             f" {'':10}{'pps':>16}{'pkts':>16}{'Gbit/s':>12}"]
    for d in ("rx", "tx"):
        lines.append(f" {d:10}{_n(res.pps[d]):>16}{_n(res.counters[stats.XDPSOCK[d]]):>16}"
                     f"{res.bps[d] / 1e9:>12.3f}")
    for q, qr in enumerate(res.queues):  # xdpsock prints one block per socket
        lines.append(f" sock{q:<6}{_n(qr.pps['rx']):>16} rx{_n(qr.pps['tx']):>14} tx"
                     f"  {qr.bottleneck}")
    lines.append("")
    lines.append(f" {'context':14}{'cpu':>5}{'cpu %':>9}{'idle poll %':>13}")
    for i, lab in enumerate(res.labels):
        if res.cpu[lab] < 0.05:  # contexts that never ran (e.g. ksoftirqd of an idle CPU)
            continue
        mark = ""
        if lab == res.bottleneck:
            mark = "  <- bottleneck" if res.saturated else "  <- busiest"
        lines.append(f" {lab[:14]:14}{res.label_cpu[i]:>5}{res.cpu[lab]:>9.1f}"
                     f"{res.idle_poll[lab]:>13.1f}{mark}")
    lat = res.latency_us
    if lat["p50"] is not None:
        lines.append(f" latency p50 {lat['p50']:.2f} us  p99 {lat['p99']:.2f} us")
    lines.append("")
    shown = [s for s in stats.TABLE if res.counters[s.name]]
    for s in shown:
        lines.append(f" {s.name:28}{_n(res.counters[s.name]):>16} {s.unit}")
    lines += faults.lines(res)
    for w in res.warnings:  # wrapped: the report stays within 72 columns
        lines += textwrap.wrap(w, 72, initial_indent=" warning: ", subsequent_indent="   ")
    return "\n".join(lines)


def profile(res, top=20):
    lines = [" Overhead  Context      Symbol"]
    for row in res.profile().head(top).itertuples():
        lines.append(f" {row.share:7.2f}%  {row.context:12} [k] {row.op}"[:72])
    return "\n".join(lines)


def testpmd(res):
    """testpmd ``show port stats all``: counters over the measured window (each field the
    counter stats.TESTPMD names), then rates."""
    c = {field: res.counters[name] for field, name in stats.TESTPMD.items()}
    w = res.window_s
    rule = " " + "#" * 24 + " NIC statistics for port 0 " + "#" * 20
    return "\n".join([
        rule,
        f" RX-packets: {c['RX-packets']:<12} RX-missed: {c['RX-missed']:<8}"
        f" RX-bytes: {c['RX-bytes']}",
        f" RX-errors: {c['RX-errors']}",
        f" RX-nombuf: {c['RX-nombuf']}",
        f" TX-packets: {c['TX-packets']:<12} TX-errors: {c['TX-errors']:<8}"
        f" TX-bytes: {c['TX-bytes']}",
        "",
        " Throughput (since last show)",
        f" Rx-pps: {round(c['RX-packets'] / w):>12}          Rx-bps: {round(res.bps['rx']):>12}",
        f" Tx-pps: {round(c['TX-packets'] / w):>12}          Tx-bps: {round(res.bps['tx']):>12}",
        " " + "#" * 71,
    ])


def side_by_side(left, right, titles=("published", "emulated"), gap=3):
    """Two text blocks next to each other (e.g. a seed's testpmd block and the emulated one)."""
    a, b = left.splitlines(), right.splitlines()
    width = max(map(len, a + [titles[0]]))
    rows = [(titles[0], titles[1]), ("-" * len(titles[0]), "-" * len(titles[1]))]
    rows += [(a[i] if i < len(a) else "", b[i] if i < len(b) else "")
             for i in range(max(len(a), len(b)))]
    return "\n".join(f"{x:<{width}}{' ' * gap}{y}".rstrip() for x, y in rows)


STYLES = {"xdpsock": xdpsock, "testpmd": testpmd, "profile": profile}


def render(res, style):
    try:
        return STYLES[style](res)
    except KeyError:
        raise ValueError(f"report={style!r}: must be one of {', '.join(STYLES)}") from None
