"""The emulated counterpart of a veth pair measured on the real kernel (``xskbench measure``).

The rxdrop and l2fwd runs are AF_XDP receive on a veth pair in copy mode; the emulated veth
models only the sending side, so the counterpart is the null device in copy mode (see
xskbench/real_calibrate.py): a stand-in, whose rows calibrate.measured_rows marks ``compare``.
"""
from xskbench.measured import DURATION_S, xsk_fields

VETH_RING = 256       # VETH_RING_SIZE: the receiving veth's ptr_ring


def counterpart(mcfg):
    """The emulated config of a measured veth config (a dict), or a string saying why none."""
    real, wl = mcfg.get("real", {}), mcfg["workload"]
    if wl["kind"] not in ("rxdrop", "l2fwd"):
        return (f"veth {wl['kind']}: no emulated counterpart (the emulated veth sends into "
                "the RFC's bridge to mlx5, which the measured pair lacks)")
    if real.get("xdp_mode", "native") != "native":
        return (f"xdp_mode={real['xdp_mode']}: generic XDP builds the skb first; the "
                "counterpart runs native XDP")
    if mcfg["mode"] != "copy":
        return f"mode={mcfg['mode']}: only veth copy mode has a counterpart"
    if real.get("wait", "spin") == "poll":
        return "wait=poll: the emulated xdpsock loop spins (no poll() mode)"
    if wl.get("rate_pps"):
        return "rate_pps set: the sender spins between packets, its CPU is not per-packet work"
    xsk = xsk_fields(mcfg)
    cpus = {"app_cpu": int(real.get("app_cpu", 1)), "napi_cpu": int(real.get("peer_cpu", 0))}
    workload = {"kind": wl["kind"], "packet_size": wl["packet_size"],
                "seed": wl.get("seed", 1), "duration_s": DURATION_S}
    return {"device": "null", "mode": "copy", "workload": workload, "xsk": xsk,
            "null": {**cpus, "ring_size": VETH_RING, "napi_budget": 64}}
