"""The emulated counterpart of a veth pair measured on the real kernel (``xskbench measure``).

The measured pair is the emulated veth with ``veth.peer = "xdp_drop"`` (kernel.py): rxdrop and
l2fwd receive in copy mode from the peer's live-frames sender (``real.sender = "xdp"``),
txonly sends into the peer's XDP_DROP program; ``real.xdp_mode`` (native or skb: generic XDP)
is ``veth.xdp_mode``. The peer's CPU (``real.peer_cpu``) runs the
sender and the receiving veth's NAPI (``veth.napi_cpu``); the app's CPU (``real.app_cpu``)
runs the app and, as the kernel schedules it from sendto, the peer's NAPI.
"""
from xskbench.measured import DURATION_S, xsk_fields

VETH_RING = 256       # VETH_RING_SIZE: the receiving veth's ptr_ring
# l2fwd: RX runs ahead of TX until the TX and completion rings fill (2048 entries at ~0.5 Mpps:
# ~4 ms), so its emulated window starts after that, as the real one starts after warm-up
L2FWD_WARMUP_S, L2FWD_DURATION_S = 0.008, 0.012


def counterpart(mcfg):
    """The emulated config of a measured veth config (a dict), or a string saying why none."""
    real, wl = mcfg.get("real", {}), mcfg["workload"]
    if mcfg["mode"] != "copy":
        return f"mode={mcfg['mode']}: only veth copy mode has a counterpart"
    sender = real.get("sender", "xdp")
    if wl["kind"] != "txonly" and sender != "xdp":
        return f"sender={sender}: only the live-frames sender (xdp) is modelled"
    wait = real.get("wait", "spin")
    if wait != "spin":
        return f"wait={wait}: the emulated xdpsock loop spins (no poll(), no busy poll on veth)"
    if wl.get("rate_pps"):
        return "rate_pps set: the sender spins between packets, its CPU is not per-packet work"
    xsk = xsk_fields(mcfg)
    workload = {"kind": wl["kind"], "packet_size": wl["packet_size"],
                "seed": wl.get("seed", 1), "duration_s": DURATION_S}
    if wl["kind"] == "l2fwd":
        workload.update(warmup_s=L2FWD_WARMUP_S, duration_s=L2FWD_DURATION_S)
    veth = {"peer": "xdp_drop", "app_cpu": int(real.get("app_cpu", 1)),
            "napi_cpu": int(real.get("peer_cpu", 0)), "ptr_ring_size": VETH_RING,
            "napi_budget": 64}
    if wl["kind"] != "txonly":  # the receiving socket's program (txonly attaches none)
        veth["xdp_mode"] = real.get("xdp_mode", "native")
    return {"device": "veth", "mode": "copy", "workload": workload, "xsk": xsk, "veth": veth}
