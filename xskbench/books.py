"""The books of a run: where every UMEM frame is, and what became of every packet.

Each frame's owner is tracked as it moves; here the owners are counted and checked against
the rings' own indices (what each ring structurally holds), and packets offered are
balanced against delivered + dropped (by reason) + in flight. A run that breaks either
raises :class:`BooksError` — the emulation never loses anything silently.
"""
import numpy as np

from . import stats
from .kernels import layout as L
from .kernels.xsk_ring import R_CCCONS, R_PROD


class BooksError(AssertionError):
    pass


def _held(m, o):
    """Entries a ring holds for its consumer: published and not yet taken by it."""
    return int((m[o + R_PROD] - m[o + R_CCCONS]) & L.M32)


def balance(mach, counters, in_flight_dev):
    """The invariants object; raises BooksError if any does not hold."""
    m = mach.m
    nf = int(m[L.H_NFRAMES])
    owners = np.bincount(m[m[L.H_OWN]:m[L.H_OWN] + nf], minlength=len(L.OWNER_NAMES))
    frames = {name: int(owners[i]) for i, name in enumerate(L.OWNER_NAMES)}
    expect = {"app": int(m[L.H_APPSTK_N]), "pool_free": int(m[L.H_POOL_N]),
              "fill": _held(m, m[L.H_FQ]), "rx": _held(m, m[L.H_RX]),
              "tx": _held(m, m[L.H_TX]), "completion": _held(m, m[L.H_CQ])}
    errors = [f"{k}: {frames[k]} frames owned, ring/list holds {v}"
              for k, v in expect.items() if frames[k] != v]
    if sum(frames.values()) != nf:
        errors.append(f"{sum(frames.values())} frames accounted of {nf}")
    kind = L.WORKLOADS[int(m[L.H_WORKLOAD])]
    offered = counters["tx_submitted"] if kind == "txonly" else counters["offered_packets"]
    delivered = counters["rx_packets"] if kind == "rxdrop" else counters["tx_packets"]
    dropped = {r: counters[r] for r in stats.DROP_REASONS}
    # in flight: on the socket's rings (RX unless nothing is received, TX unless nothing is
    # sent; a multi-buffer packet holds H_NSEG frames) or inside the device, which counts
    # its own
    nseg = int(m[L.H_NSEG])
    in_flight = (in_flight_dev + (kind != "txonly") * frames["rx"] // nseg
                 + (kind != "rxdrop") * frames["tx"] // nseg)
    if offered != delivered + sum(dropped.values()) + in_flight:
        errors.append(f"packets: offered {offered} != delivered {delivered} + dropped "
                      f"{sum(dropped.values())} + in flight {in_flight}")
    inv = {"umem_frames": nf, "frames": frames, "packets": {
        "offered": offered, "delivered": delivered, "dropped": dropped,
        "in_flight": in_flight}, "balanced": not errors}
    if errors:
        raise BooksError("books do not balance: " + "; ".join(errors))
    return inv
