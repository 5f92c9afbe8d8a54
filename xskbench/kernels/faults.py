"""Fault injection (issue #10): timing and availability only, never a cost of its own.

Every periodic fault is a window ``[k·P, k·P + D)`` for k ≥ 1 (the run starts healthy, so a
pre-fault rate exists). Parameters live in a block at ``m[H_FAULT]`` (``F_*`` words, filled by
``xskbench/faults.py``); a context's descheduling window lives in its ``CX_STALL`` words. With
everything at 0 each helper returns its input unchanged and draws no random number, so runs
without faults are bit-identical to runs of a build without this module.
"""
import numpy as np

from .. import stats as st
from .jit import ix, njit
from .layout import (
    CX_N,
    CX_STALL,
    CX_STALL_PER,
    H_APPSTK_N,
    H_CNT,
    H_CTX,
    H_FAULT,
    H_NOW,
    H_QACC,
    INF,
)
from .rng import draw
from .steady import unsteady

(
    F_NOTIFY, F_LATE_PPM, F_LATE, F_LOST_PPM, F_SPIKE, F_SPIKE_LEN, F_SPIKE_PER, F_FILL_LEN,
    F_FILL_PER, F_BURST_X, F_BURST_LEN, F_BURST_PER, F_N_LOST, F_N_LATE, F_N_SPIKED,
    F_N_FILL_SKIPS,
) = range(16)
F_TS = 16  # then the delivered-packets column of the time series, one word per sample
X_SCALE = 1_000_000  # burst_factor - 1, in millionths


@njit(cache=True, inline="always")
def window_end(t, dur, per):
    """The end of the fault window holding ``t``, or 0 when no window does."""
    if dur <= 0 or t < per:
        return 0
    s = t - t % per
    return s + dur if t < s + dur else 0


@njit(cache=True)
def stall_end(m, c, t):
    """When context ``c`` can start if it could at ``t``: a descheduled context (in its stall
    window) waits for the window's end and charges nothing meanwhile."""
    base = m[H_CTX] + c * CX_N
    e = window_end(t, m[ix(base + CX_STALL)], m[ix(base + CX_STALL_PER)])
    return e if e else t


@njit(cache=True)
def stall_next(m, c, t):
    """The start of context ``c``'s first stall window after ``t`` (INF: none): an idle
    spin replayed past it would poll while the context is descheduled."""
    base = m[H_CTX] + c * CX_N
    dur, per = m[ix(base + CX_STALL)], m[ix(base + CX_STALL_PER)]
    if dur <= 0:
        return INF
    return (t // per + 1) * per


@njit(cache=True)
def notify_at(m, t):
    """An interrupt, IPI or wakeup issued now for delivery at ``t``: its delivery time with
    the faults applied (spike window at issue, then lost or late by the seeded draw). INF
    means lost: the caller leaves the target as if nothing had been sent."""
    f = m[H_FAULT]
    if f == 0 or m[ix(f + F_NOTIFY)] == 0:
        return t
    unsteady(m)  # its draws and tallies: not a quantum to replay (spin_until)
    if window_end(m[H_NOW] + m[H_QACC], m[ix(f + F_SPIKE_LEN)], m[ix(f + F_SPIKE_PER)]):
        t += m[ix(f + F_SPIKE)]
        m[ix(f + F_N_SPIKED)] += 1
    if m[ix(f + F_LOST_PPM)] and draw(m) * 1e6 < m[ix(f + F_LOST_PPM)]:
        m[ix(f + F_N_LOST)] += 1
        return INF
    if m[ix(f + F_LATE_PPM)] and draw(m) * 1e6 < m[ix(f + F_LATE_PPM)]:
        m[ix(f + F_N_LATE)] += 1
        t += m[ix(f + F_LATE)]
    return t


@njit(cache=True)
def fill_stopped(m, t):
    """Fill-ring starvation: the application does not refill inside a stop window."""
    f = m[H_FAULT]
    if f == 0 or window_end(t, m[ix(f + F_FILL_LEN)], m[ix(f + F_FILL_PER)]) == 0:
        return False
    m[ix(f + F_N_FILL_SKIPS)] += 1
    unsteady(m)  # a tally spin_until would not repeat: no replay
    return True


@njit(cache=True)
def fill_held(m):
    """The application holds frames a stop window kept from the fill ring: it refills them on
    its next loop (xdpsock refills only after a receive, which may never come otherwise)."""
    f = m[H_FAULT]
    return f != 0 and m[ix(f + F_FILL_LEN)] > 0 and m[H_APPSTK_N] > 0


@njit(cache=True)
def fill_edge(m, t):
    """The next start or end of a fill-ring stop window after ``t`` while the application
    holds frames (INF otherwise): its refill attempts change there by themselves."""
    f = m[H_FAULT]
    if f == 0 or m[ix(f + F_FILL_LEN)] <= 0 or m[H_APPSTK_N] == 0:
        return INF
    e = window_end(t, m[ix(f + F_FILL_LEN)], m[ix(f + F_FILL_PER)])
    return e if e else (t // m[ix(f + F_FILL_PER)] + 1) * m[ix(f + F_FILL_PER)]


@njit(cache=True, inline="always")
def bursty(m):
    """Whether burst windows are configured: without them the offered clock is real time."""
    f = m[H_FAULT]
    return f != 0 and m[ix(f + F_BURST_X)] != 0


@njit(cache=True)
def offered_clock(m, t):
    """The offered-traffic clock at real time ``t``: it runs ``burst_factor`` times faster
    inside burst windows, so a pacer dividing it by its gap offers that much more."""
    f = m[H_FAULT]
    if f == 0 or m[ix(f + F_BURST_X)] == 0:
        return t
    d, p = m[ix(f + F_BURST_LEN)], m[ix(f + F_BURST_PER)]
    k = t // p
    inside = 0 if k == 0 else (k - 1) * d + min(d, t - k * p)
    return t + int(inside * (m[ix(f + F_BURST_X)] / X_SCALE))


@njit(cache=True)
def offered_time(m, u):
    """The first real time at which the offered clock reaches ``u`` (inverse of the above)."""
    f = m[H_FAULT]
    if f == 0 or m[ix(f + F_BURST_X)] == 0 or u >= INF:
        return u
    d, p, a = m[ix(f + F_BURST_LEN)], m[ix(f + F_BURST_PER)], m[ix(f + F_BURST_X)] / X_SCALE
    if u < p:
        return u
    span = p + a * d  # one period on the offered clock
    k = int((u - p) // span) + 1
    o = u - (k * p + a * (k - 1) * d)  # offset into period k, on the offered clock
    if o < d * (1.0 + a):
        return k * p + int(np.ceil(o / (1.0 + a)))
    return k * p + d + int(np.ceil(o - d * (1.0 + a)))


@njit(cache=True)
def sample_delivered(m, n):
    """Time-series sample ``n``: packets delivered so far (rx + tx), for recovery times."""
    f = m[H_FAULT]
    if f != 0:
        m[ix(f + F_TS + n)] = m[ix(m[H_CNT] + st.RX_PACKETS)] + m[ix(m[H_CNT] + st.TX_PACKETS)]
