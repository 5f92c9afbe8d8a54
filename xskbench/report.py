"""Plain-text reports of a result, at most 72 columns, to paste into a review."""
from . import stats


def _n(x):
    return f"{x:,.0f}"


def xdpsock(res):
    c = res.config
    lines = [f" sock0@{c.device}:0 {c.workload.kind} {c.mode} "
             f"({c.workload.packet_size} B, {res.window_s * 1e3:.3g} ms emulated)",
             f" {'':10}{'pps':>16}{'pkts':>16}{'Gbit/s':>12}"]
    for d in ("rx", "tx"):
        lines.append(f" {d:10}{_n(res.pps[d]):>16}{_n(res.counters[d + '_packets']):>16}"
                     f"{res.bps[d] / 1e9:>12.3f}")
    lines.append("")
    lines.append(f" {'context':12}{'cpu':>5}{'cpu %':>9}{'idle poll %':>13}")
    for i, lab in enumerate(res.labels):
        mark = ""
        if lab == res.bottleneck:
            mark = "  <- bottleneck" if res.saturated else "  <- busiest"
        lines.append(f" {lab:12}{res.label_cpu[i]:>5}{res.cpu[lab]:>9.1f}"
                     f"{res.idle_poll[lab]:>13.1f}{mark}")
    lat = res.latency_us
    if lat["p50"] is not None:
        lines.append(f" latency p50 {lat['p50']:.2f} us  p99 {lat['p99']:.2f} us")
    lines.append("")
    shown = [s for s in stats.TABLE if res.counters[s.name]]
    for s in shown:
        lines.append(f" {s.name:28}{_n(res.counters[s.name]):>16} {s.unit}")
    return "\n".join(lines)


def profile(res, top=20):
    lines = [" Overhead  Context      Symbol"]
    for row in res.profile().head(top).itertuples():
        lines.append(f" {row.share:7.2f}%  {row.context:12} [k] {row.op}"[:72])
    return "\n".join(lines)


STYLES = {"xdpsock": xdpsock, "profile": profile}


def render(res, style):
    try:
        return STYLES[style](res)
    except KeyError:
        raise ValueError(f"report={style!r}: must be one of {', '.join(STYLES)}") from None
