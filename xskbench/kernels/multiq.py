"""Several queue pairs on one machine: one arena per queue, one timeline.

Each queue pair (its xsk socket, application thread, NAPI contexts, device queue) is a whole
arena; the arenas lie end to end in one array ``M``, queue ``q`` at ``M[OFF[q]:OFF[q+1]]``.
What they share is CPU time: a CPU's clock is the same in every arena, so two queues'
contexts pinned to one CPU take turns on it in the engine's order (softirq first, then round
robin), and a host core that several queues' backends are pinned to serves them in turn, as a
PMD or vhost worker polling all its queues does. With one queue this is the single-arena
engine, step for step.
"""
from .engine import candidate, cx, earlier, snapshot
from .jit import ix, njit
from .layout import (
    CX_CPU,
    CX_LAST,
    CX_N,
    CX_PRIO,
    H_CAND_C,
    H_CAND_T,
    H_CLK,
    H_CPULAST,
    H_CPUQ,
    H_CTX,
    H_END,
    H_EXT_HZN,
    H_QSHARE,
    H_SEQ,
    H_SNAP_DONE,
    H_WARM,
    INF,
    STALE,
)


@njit(cache=True)
def pick(M, OFF):
    """The queue and context to run next over all queues, or (-1, -1) at the end. Prepares
    that queue's arena: the global round-robin sequence, the earliest start of the queues
    sharing a CPU with it (its external horizon) and, on crossing the warm-up, every queue's
    snapshot.

    Only those queues bound it: a queue's arena meets the others only in the clocks of the
    CPUs they share (``share``), and everything a queue does starts no earlier than its
    earliest start now. Queues on CPUs of their own run ahead of one another (folds and
    idle spins up to their own horizons), each in its own order, as on one timeline."""
    nq = len(OFF) - 1
    bq, bc, bt, bp, bl = -1, -1, INF, -1, INF
    seq = 0
    for q in range(nq):
        m = M[OFF[q]:OFF[q + 1]]
        seq = max(seq, m[H_SEQ])
        if m[H_CAND_C] == STALE:  # its contexts or CPU clocks changed since its last pick
            m[H_CAND_C], m[H_CAND_T], _, _ = candidate(m)
        c, t = m[H_CAND_C], m[H_CAND_T]
        if c >= 0:
            p, last = cx(m, c, CX_PRIO), cx(m, c, CX_LAST)
            if earlier(t, p, last, bt, bp, bl):
                bq, bc, bt, bp, bl = q, c, t, p, last
    if bq < 0:
        return -1, -1
    m = M[OFF[bq]:OFF[bq + 1]]
    if bt >= m[H_END]:
        return -1, -1
    ext, near = INF, m[H_QSHARE]
    for q in range(nq):
        if (near >> q) & 1:
            ext = min(ext, M[ix(OFF[q] + H_CAND_T)])
    m[H_SEQ] = seq
    m[H_EXT_HZN] = ext
    if nq > 1 and bt >= m[H_WARM]:
        for q in range(nq):
            o = M[OFF[q]:OFF[q + 1]]
            if o[H_SNAP_DONE] == 0:
                snapshot(o)
    return bq, bc


@njit(cache=True)
def share(M, OFF, q, c):
    """After a quantum of queue ``q``'s context ``c``: its CPU's clock is that of every queue
    with a context on it, and their last quantum on that CPU is no longer the last (warm-up
    accounting). The queues whose candidates this changed pick anew (``pick``): only those
    (a CPU none of a queue's contexts uses changes nothing in its arena: its last quantum
    there, which ``snapshot`` would trim, stays 0)."""
    m = M[OFF[q]:OFF[q + 1]]
    m[H_CAND_C] = STALE
    cpu = m[ix(m[H_CTX] + c * CX_N + CX_CPU)]
    end = m[ix(m[H_CLK] + cpu)]
    near = m[ix(m[H_CPUQ] + cpu)]
    o_q = 0
    while near >> o_q:
        if (near >> o_q) & 1:
            o = M[OFF[o_q]:OFF[o_q + 1]]
            o[ix(o[H_CLK] + cpu)] = end
            o[ix(o[H_CPULAST] + cpu)] = 0
            o[H_CAND_C] = STALE
        o_q += 1
