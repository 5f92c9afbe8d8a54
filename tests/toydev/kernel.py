"""The toy loopback NIC (tests only): NAPI peeks the xsk TX ring and completes what it took
at once; the app kicks NAPI through sendto (ndo_xsk_wakeup) or busy-polls it."""
from xskbench import ops as op
from xskbench import stats as st
from xskbench.kernels import afxdp, loop
from xskbench.kernels.engine import (
    charge,
    count,
    cx,
    cx_set,
    delay,
    horizon,
    napi_complete,
    napi_enter,
    napi_schedule,
    now,
    spin_until,
    wake,
)
from xskbench.kernels.faults import notify_at
from xskbench.kernels.jit import njit
from xskbench.kernels.layout import (
    CX_A,
    CX_SCHED,
    DEV_BASE,
    H_BUSYBUDGET,
    H_BUSYPOLL,
    H_PROGRESS,
    H_QLABEL,
)

D_BUDGET, D_IRQ_DELAY, D_L_SYS = range(DEV_BASE, DEV_BASE + 3)
CONTEXTS = ("app", "napi")  # context ids in this order: setup builds them by these names
APP, NAPI = range(len(CONTEXTS))


@njit(cache=True)
def poll(m, cc, cb, budget):
    """One NAPI poll: take up to ``budget`` TX descriptors and complete them. True when the
    whole budget was used (poll again)."""
    charge(m, cc, cb, op.NAPI_POLL, 1, 0)
    count(m, st.NAPI_POLLS, 1)
    sent = afxdp.zc_tx_peek_batch(m, cc, cb, budget)
    if sent:
        afxdp.tx_completed(m, cc, cb, sent, op.XSK_TX_COMPLETED)
    return sent >= budget


@njit(cache=True)
def napi_quantum(m, cc, cb):
    napi_enter(m, cc, cb, NAPI)
    if poll(m, cc, cb, m[D_BUDGET]):
        wake(m, NAPI, now(m))
        afxdp.set_tx_need_wakeup(m, cc, cb, False)
    elif napi_complete(m, NAPI):
        afxdp.set_tx_need_wakeup(m, cc, cb, True)


@njit(cache=True)
def _sendto(m, cc, cb):
    """sendto(): busy-poll inline when NAPI is idle and busy polling is on, else
    ndo_xsk_wakeup fires the queue's interrupt."""
    charge(m, cc, cb, op.SYS_SENDTO, 1, 0)
    count(m, st.SENDTO_CALLS, 1)
    if m[H_BUSYPOLL] and not cx(m, NAPI, CX_SCHED):
        charge(m, cc, cb, op.SK_BUSY_LOOP, 1, 0)
        poll(m, cc, cb, m[H_BUSYBUDGET])
        return
    charge(m, cc, cb, op.XSK_WAKEUP, 1, 0)
    count(m, st.WAKEUPS, 1)
    if napi_schedule(m, NAPI, notify_at(m, now(m) + delay(m, m[D_IRQ_DELAY]))):
        charge(m, cc, cb, op.NAPI_SCHEDULE, 1, 0)
        count(m, st.NAPI_SCHEDULES, 1)
        cx_set(m, NAPI, CX_A, 1)


@njit(cache=True)
def app_quantum(m, cc, cb):
    progress = m[H_PROGRESS]
    kick = afxdp.app_iteration(m, cc, cb)
    if kick & afxdp.KICK_TX:
        label = m[H_QLABEL]
        m[H_QLABEL] = m[D_L_SYS]
        _sendto(m, cc, cb)
        m[H_QLABEL] = label
    if m[H_PROGRESS] == progress:
        spin_until(m, cc, cb, horizon(m, APP), afxdp.app_next_change(m))
    wake(m, APP, now(m))  # xdpsock spins


@njit(cache=True)
def quantum(m, cc, cb, c):
    """One quantum of context ``c``: the engine's one loop (kernels/loop.py) runs it."""
    if c == APP:
        app_quantum(m, cc, cb)
    else:
        napi_quantum(m, cc, cb)


loop.define(globals())  # run_chunk: the engine loop over ``quantum``
