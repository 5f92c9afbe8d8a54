"""Several queue pairs on one machine: one arena per queue, one timeline.

Each queue pair (its xsk socket, application thread, NAPI contexts, device queue) is a whole
arena; the arenas lie end to end in one array ``M``, queue ``q`` at ``M[OFF[q]:OFF[q+1]]``.
What they share is CPU time: a CPU's clock is the same in every arena, so two queues'
contexts pinned to one CPU take turns on it in the engine's order (softirq first, then round
robin), and a host core that several queues' backends are pinned to serves them in turn, as a
PMD or vhost worker polling all its queues does. With one queue this is the single-arena
engine, step for step.
"""
from .engine import candidate, earlier, snapshot
from .jit import ix, njit
from .layout import (
    CX_CPU,
    CX_N,
    H_CLK,
    H_CPULAST,
    H_CTX,
    H_END,
    H_EXT_HZN,
    H_NCPU,
    H_SEQ,
    H_SNAP_DONE,
    H_WARM,
    INF,
)


@njit(cache=True)
def pick(M, OFF):
    """The queue and context to run next over all queues, or (-1, -1) at the end. Prepares
    that queue's arena: the global round-robin sequence, the earliest start of any other
    queue (its external horizon) and, on crossing the warm-up, every queue's snapshot."""
    nq = len(OFF) - 1
    bq, bc, bt, bp, bl = -1, -1, INF, -1, INF
    ext, seq = INF, 0
    for q in range(nq):
        m = M[OFF[q]:OFF[q + 1]]
        seq = max(seq, m[H_SEQ])
        c, t, p, last = candidate(m)
        if c < 0:
            continue
        if earlier(t, p, last, bt, bp, bl):
            if bq >= 0:
                ext = min(ext, bt)
            bq, bc, bt, bp, bl = q, c, t, p, last
        else:
            ext = min(ext, t)
    if bq < 0:
        return -1, -1
    m = M[OFF[bq]:OFF[bq + 1]]
    if bt >= m[H_END]:
        return -1, -1
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
    """After a quantum of queue ``q``'s context ``c``: its CPU's clock is every queue's; the
    other queues' last quantum on that CPU is no longer the last (warm-up accounting)."""
    m = M[OFF[q]:OFF[q + 1]]
    cpu = m[ix(m[H_CTX] + c * CX_N + CX_CPU)]
    end = m[ix(m[H_CLK] + cpu)]
    for o_q in range(len(OFF) - 1):
        if o_q != q:
            o = M[OFF[o_q]:OFF[o_q + 1]]
            if cpu < o[H_NCPU]:
                o[ix(o[H_CLK] + cpu)] = end
                o[ix(o[H_CPULAST] + cpu)] = 0
