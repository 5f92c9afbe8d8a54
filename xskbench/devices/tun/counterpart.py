"""The emulated counterpart of a tap measured on the real kernel (``xskbench measure`` with
``real.sender = 'tun'``): a process writes frames into the tap fd on ``peer_cpu`` (rxdrop,
l2fwd) and reads what the socket sent (l2fwd, txonly), the AF_XDP copy-mode application
spins on ``app_cpu``: the emulated tun with ``tun.peer = 'fd'``, the same placement, sizes,
batch and XDP mode (xskbench/real/roles.py _peer_tap, xsk.tap_loop)."""
from xskbench.measured import DURATION_S, xsk_fields


def counterpart(mcfg):
    """The emulated config of a measured tun config (a dict), or a string saying why none."""
    real, wl = mcfg.get("real", {}), mcfg["workload"]
    sender = real.get("sender", "tun")
    app_cpu, peer_cpu = int(real.get("app_cpu", 1)), int(real.get("peer_cpu", 0))
    unmodelled = (  # (whether the measured setup has it, why the emulation has no counterpart)
        (sender != "tun", f"real.sender={sender!r} on a tun device: only the tap fd peer "
                          "(sender 'tun') is modelled"),
        (mcfg["mode"] != "copy", f"mode={mcfg['mode']}: a tap has no zero-copy AF_XDP; only "
                                 "copy mode is modelled"),
        (real.get("wait", "spin") == "poll", "wait=poll: the emulated xdpsock loop spins "
                                             "(no poll() mode)"),
        (bool(wl.get("rate_pps")) and wl["kind"] != "txonly",
         "rate_pps set: the tap writer writes as fast as write() returns (not paced)"),
        (app_cpu == peer_cpu, f"app_cpu = peer_cpu = {app_cpu}: the emulation keeps the two "
                              "on two CPUs"),
    )
    for present, why in unmodelled:
        if present:
            return why
    xsk = xsk_fields(mcfg)
    workload = {"kind": wl["kind"], "packet_size": wl["packet_size"],
                "rate_pps": wl.get("rate_pps") if wl["kind"] == "txonly" else None,
                "seed": wl.get("seed", 1), "duration_s": DURATION_S}
    return {"device": "tun", "mode": "copy", "workload": workload, "xsk": xsk,
            "tun": {"peer": "fd", "xdp_mode": real.get("xdp_mode", "native"),
                    "fd_batch": int(xsk["batch_size"]), "app_cpu": app_cpu,
                    "napi_cpu": peer_cpu}}
