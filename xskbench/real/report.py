"""The text report of a measured Result (``xskbench measure``)."""
from __future__ import annotations

# the counters the report lists as drops and events per second
DROP_COUNTERS = ("rx_dropped", "rx_ring_full", "fill_ring_empty_descs", "tx_ring_empty_descs",
                 "rx_invalid_descs", "tx_invalid_descs", "tx_errors", "veth_xdp_ring_full",
                 "backlog_dropped", "tun_tx_dropped")



def _mpps(pps: float) -> str:
    return f"{pps / 1e6:.3f} Mpps"


def render(res) -> str:
    c, x = res.config, res.extra
    # the peer sends rxdrop's and l2fwd's traffic; in txonly it is the sink
    peer = "sink" if c.workload == "txonly" else f"sender {c.resolved_sender()}"
    if "sender_note" in x.get("real", {}):
        peer += f" [{x['real']['sender_note']}]"
    lines = [
        f"real {c.device} {c.mode} {c.workload}: {c.packet_size} B frames, batch {c.batch}, "
        f"ring {c.ring} (fill {2 * c.ring}), need_wakeup {'on' if c.need_wakeup else 'off'}, "
        f"wait {c.wait}, {c.xdp_mode} XDP; {peer} on cpu{c.peer_cpu}, "
        f"app on cpu{c.app_cpu}; {x['repeats']} x {c.duration:g} s after {c.warmup:g} s "
        "warm-up",
    ]
    for k, pps in res.pps.items():
        s = x["spread"]["pps"][k]
        if k != "rx" and not s["max"]:
            continue
        lines.append(f"  {k:<9} {_mpps(pps)}  (min {s['min'] / 1e6:.3f}, max "
                     f"{s['max'] / 1e6:.3f}, cv {100 * s['cv']:.1f}%)  "
                     f"{res.bps[k] / 1e9:.3f} Gbit/s")
    lines.append(f"  offered   {_mpps(x['offered_pps'])}"
                 + (f"   returned {_mpps(x['returned_pps'])}" if "returned_pps" in x else ""))
    cpu, idle = res.cpu, res.idle_poll
    lines.append("  CPU (% of one CPU): " + "  ".join(
        f"{k} {v:.1f}" for k, v in cpu.items()) + f"  other {x['cpu_other']:.1f}"
        f"   [softirq {x['softirq_pct']:.1f}, inside those; app idle polls "
        f"{idle.get('app', 0.0):.1f}]")
    for name, s in x["cpu_split"].items():
        lines.append(f"  {name}: " + "  ".join(
            f"{k} {s[k]:.1f}%" for k in ("usr", "sys", "softirq", "irq", "idle", "steal")))
    drops = {k: v for k, v in res.counters.items() if v and k in DROP_COUNTERS}
    lines.append("  drops/events per s: " + (", ".join(
        f"{k} {v / res.window_s:,.0f}" for k, v in drops.items()) or "none"))
    lines.append(f"  bottleneck: {res.bottleneck}{' (saturated)' if res.saturated else ''}   "
                 f"(kernel {x['real']['kernel']}, {x['real']['cpus']} CPUs, "
                 f"{x['real']['cpu_model']} at {x['real']['cpu_mhz']} MHz)")
    return "\n".join(lines)
