"""The discrete-event engine: execution contexts pinned to CPUs, in virtual time.

Each CPU has a clock. The engine picks, over all contexts, the one that can start earliest
(its ready time or its CPU's clock, whichever is later; softirq before threads at equal time,
then round robin), runs one *quantum* of it (a NAPI poll, one application loop iteration,
one host burst), and advances that CPU's clock by the cycles the quantum charged. A context
that polls sets itself ready again at once; one that sleeps sets ``INF`` and is woken by
another context (napi_schedule, an interrupt, an IPI, an eventfd).

Ops are charged to the running context's label: counts, bytes and cycles accumulate in the
arena; ``snapshot`` at the end of warm-up lets results cover the steady window only.
"""
from .. import ops
from ..stats import INTERRUPTS, KSOFTIRQD_HANDOFFS
from .faults import sample_delivered, stall_end, stall_next
from .jit import ix, njit
from .layout import (
    CX_A,
    CX_CPU,
    CX_KLABEL,
    CX_KSOFT,
    CX_LABEL,
    CX_LAST,
    CX_MISSED,
    CX_N,
    CX_PARK,
    CX_PRIO,
    CX_READY,
    CX_RESTARTS,
    CX_SCHED,
    CX_WATCH,
    H_BASE_BUSY,
    H_BASE_CNT,
    H_BASE_IDLE,
    H_BASE_LAT,
    H_BASE_OPB,
    H_BASE_OPS,
    H_BUSY,
    H_CLK,
    H_CNT,
    H_CPULAB,
    H_CPULAST,
    H_CPUQ,
    H_CTX,
    H_END,
    H_EXT_HZN,
    H_HZN_FREE,
    H_HZN_WOKEN,
    H_IDLE,
    H_IDLELOG,
    H_JITTER_PPM,
    H_LAT,
    H_LBUSY,
    H_LOPB,
    H_LOPS,
    H_NCNT,
    H_NCPU,
    H_NCTX,
    H_NLABEL,
    H_NO_REPLAY,
    H_NOPS,
    H_NOW,
    H_OPB,
    H_OPS,
    H_OVER,
    H_PARKED,
    H_PROGRESS,
    H_QACC,
    H_QBUSY0,
    H_QCTX,
    H_QDRAWN,
    H_QIDLED,
    H_QLABEL,
    H_QLOG,
    H_QLOG_N,
    H_QMULTI,
    H_QPROG0,
    H_QREAD,
    H_QREFRESH,
    H_SEQ,
    H_SNAP_DONE,
    H_SOFT_LIMIT,
    H_STIR,
    H_TS,
    H_TS_CAP,
    H_TS_DT,
    H_TS_N,
    H_TS_NEXT,
    H_TS_NRINGS,
    H_TS_RINGS,
    H_WARM,
    H_WOKEN,
    IDLELOG_WORDS,
    INF,
    LAT_BINS,
    LOG_CODE_OFF,
    LOG_LABEL_LIMIT,
    LOG_N_LIMIT,
    PRIO_SOFTIRQ,
    PRIO_THREAD,
    QLOG_LEN,
)
from .rng import draw, skip
from .steady import unsteady
from .xsk_ring import ring_entries


@njit(cache=True, inline="always")
def cx(m, c, field):
    return m[ix(m[H_CTX] + c * CX_N + field)]


@njit(cache=True, inline="always")
def cx_set(m, c, field, v):
    m[ix(m[H_CTX] + c * CX_N + field)] = v


@njit(cache=True)
def next_context(m):
    """The context to run next, or -1 when every CPU has passed the end of the run."""
    best, best_t, _, _ = candidate(m)
    if best < 0 or best_t >= m[H_END]:
        return -1
    return best


@njit(cache=True)
def earlier(t, p, last, best_t, best_p, best_last):
    """The scheduling order: earliest start, then softirq before threads, then round robin."""
    return t < best_t or (t == best_t and (p > best_p or (p == best_p and last < best_last)))


@njit(cache=True)
def candidate(m):
    """The context that can start earliest and its key (start, priority, last run)."""
    best, best_t, best_p, best_last = -1, INF, -1, INF
    clk = m[H_CLK]
    for c in range(m[H_NCTX]):
        r = cx(m, c, CX_READY)
        if r >= INF:
            continue
        t = stall_end(m, c, max(r, m[ix(clk + cx(m, c, CX_CPU))]))
        p = cx(m, c, CX_PRIO)
        last = cx(m, c, CX_LAST)
        if earlier(t, p, last, best_t, best_p, best_last):
            best, best_t, best_p, best_last = c, t, p, last
    return best, best_t, best_p, best_last


@njit(cache=True)
def begin(m, c):
    """Start a quantum of ``c``: its CPU's clock jumps over idle time to when it can run."""
    cpu = cx(m, c, CX_CPU)
    t = stall_end(m, c, max(cx(m, c, CX_READY), m[ix(m[H_CLK] + cpu)]))
    if m[H_SNAP_DONE] == 0 and t >= m[H_WARM]:
        snapshot(m)
    _open(m, c, t)


@njit(cache=True)
def _open(m, c, t):
    """The books of a quantum of ``c`` starting at ``t`` (its charges, log and progress)."""
    m[H_NOW] = t
    m[H_QREAD] = t
    m[H_QACC] = 0
    m[H_QLOG_N] = 0
    m[H_QPROG0] = m[H_PROGRESS]
    m[H_STIR] = 0
    m[H_QREFRESH] = 0
    m[H_QDRAWN] = 0
    m[H_QIDLED] = 0
    m[H_QMULTI] = 0  # its own label's books only, until switch_label
    m[H_QCTX] = c
    label = cx(m, c, CX_KLABEL) if cx(m, c, CX_KSOFT) else cx(m, c, CX_LABEL)
    set_label(m, label)
    m[H_SEQ] += 1
    cx_set(m, c, CX_LAST, m[H_SEQ])
    cx_set(m, c, CX_READY, INF)  # the quantum decides when it runs again
    cx_set(m, c, CX_PARK, 0)  # parked again only if this quantum is a steady idle one


@njit(cache=True)
def fold(m, c, hzn):
    """When ``c`` would run again before any other context could (its next start is before
    ``horizon``), its next quantum is folded into this one: the books of a quantum end and
    begin as ``finish`` and ``begin`` would keep them, without the CPU clock (no one reads
    it meanwhile), the pick, the sample and the sharing. Exact: the same quanta in the same
    order, fewer trips through the scheduler (a host PMD polling stamped descriptors one per
    iteration). ``hzn`` is the horizon the last fold found (-1: none yet); it holds until a
    quantum moves something (only progress wakes or unparks another context). Returns the
    horizon, or -1 when the quantum must end here."""
    if m[H_NO_REPLAY] or m[H_QACC] <= 0:  # a quantum that took no time goes back to the
        return -1  # scheduler: run.simulate's event budget then sees time standing still
    t = max(cx(m, c, CX_READY), now(m))
    if t >= INF or stall_end(m, c, t) != t or (m[H_SNAP_DONE] == 0 and t >= m[H_WARM]):
        return -1
    if m[H_TS_N] < m[H_TS_CAP] and now(m) >= m[H_TS_NEXT]:  # a sample is due at its end
        return -1
    progressed = _moved(m)
    # progress unparks the spinners watching ``c`` (_settle, below), and may have woken a
    # context: the horizon moves only then (other CPUs' clocks stand still while ``c`` folds).
    # A wake-up counts even after an idle quantum: one of the quanta a device ran at once
    # (``folded``) may have woken a context.
    if (hzn < 0 or m[H_WOKEN] != m[H_HZN_WOKEN]
            or (progressed and not m[H_HZN_FREE])):
        hzn = horizon(m, c, progressed)
        m[H_HZN_FREE] = progressed
        m[H_HZN_WOKEN] = m[H_WOKEN]
    if t >= hzn:
        return -1
    _last_on_cpu(m, cx(m, c, CX_CPU))  # as finish leaves it: the folded quantum may read it
    _settle(m, c, 0, now(m))
    _open(m, c, t)
    return hzn


@njit(cache=True)
def steady_poll(m, c, op, q):
    """Whether an idle quantum of ``c`` that charges one call of ``op``, ``q`` cycles, is
    the same as its last idle one (``_as_last_idle``): steady, so it would be parked."""
    base = m[H_IDLELOG] + c * IDLELOG_WORDS
    return (m[ix(base)] == 1 and m[ix(base + 1)] == q
            and m[ix(base + 2)] == log_word(op, 1, m[H_QLABEL]))


@njit(cache=True)
def as_last_idle_log(m, c, q, log, k):
    """``_as_last_idle`` for an idle quantum of ``c`` a device ran itself: its ``k`` charges
    and counts ``log`` ((code, n) each, no bytes, the running quantum's label), ``q`` cycles.
    Whether it is the same as ``c``'s last idle quantum; if not, it becomes that one."""
    base, label = m[H_IDLELOG] + c * IDLELOG_WORDS, m[H_QLABEL]
    same = m[ix(base)] == k and m[ix(base + 1)] == q
    for i in range(k):
        same = same and m[ix(base + 2 + i)] == log_word(log[i][0], log[i][1], label)
    if not same:
        m[ix(base)], m[ix(base + 1)] = k, q
        for i in range(k):
            m[ix(base + 2 + i)] = log_word(log[i][0], log[i][1], label)
    return same


@njit(cache=True)
def folded(m, c, quanta, t, q, moved, idle, prev_idle, idle_cycles, park):
    """The books of ``quanta`` quanta of ``c`` that its device ran itself after the running
    one (which moved something), each one ``fold`` would have folded (a thread's, no stall
    window): their ends and starts as ``fold``, ``_settle`` and ``_open`` keep them, the last
    left open at its end. Their charges are booked (``book``) and their progress counted by
    the caller. The idle ones before the last were steady polls (and their replays) of
    ``idle_cycles`` in all. The last started at ``t`` and charged ``q`` (with its replays):
    it moved ``moved``, or it was an idle poll (``idle``; steady, it is parked as
    ``idle_spin`` parks it until ``park``, the start of its first poll that could see its
    view change; ``park`` < 0: a spinner that is not parked, ``spin_until`` alone);
    ``prev_idle``: the one before it was idle (its park stays flagged)."""
    m[ix(m[H_IDLE] + m[H_QLABEL])] += idle_cycles
    others = _unpark_watchers(m, c) if m[H_PARKED] else 0  # the running quantum's settle
    _open(m, c, t)
    m[H_SEQ] += quanta - 1
    cx_set(m, c, CX_LAST, m[H_SEQ])
    m[H_QACC] = q
    m[H_QREAD] = t + q
    m[H_QPROG0] = m[H_PROGRESS] - moved
    cx_set(m, c, CX_READY, t + q)  # it polls again at once
    if idle:
        base = m[H_IDLELOG] + c * IDLELOG_WORDS
        for i in range(m[ix(base)]):  # its log: the last idle one's
            m[ix(m[H_QLOG] + i)] = m[ix(base + 2 + i)]
        m[H_QLOG_N] = m[ix(base)]
        m[H_QIDLED] = 1
        if park >= 0:
            cx_set(m, c, CX_PARK, max(park, 1))
    m[H_PARKED] = 1 if park >= 0 and (idle or prev_idle) else others


@njit(cache=True)
def finish(m, c):
    """End the quantum: advance the CPU clock, settle its books (idle or progress, softirq
    restarts)."""
    cpu = cx(m, c, CX_CPU)
    end = m[H_NOW] + m[H_QACC]
    m[ix(m[H_CLK] + cpu)] = end
    _last_on_cpu(m, cpu)
    past_end = min(end - m[H_END], m[H_QACC]) if end > m[H_END] else 0
    m[ix(m[H_OVER] + m[H_QLABEL])] += past_end  # the part past the end is outside the window
    _settle(m, c, past_end, end)


@njit(cache=True, inline="always")
def _last_on_cpu(m, cpu):
    """The quantum is the last one on ``cpu``: its label and length, negative if it moved
    nothing (snapshot trims busy and idle alike; tun's vhost reads a 0 there as another
    queue's worker having run on that core since)."""
    m[ix(m[H_CPULAB] + cpu)] = m[H_QLABEL]
    m[ix(m[H_CPULAST] + cpu)] = m[H_QACC] if m[H_PROGRESS] != m[H_QPROG0] else -m[H_QACC]


@njit(cache=True)
def _settle(m, c, past_end, end):
    """A quantum ending at ``end``: an empty one's cycles are idle; one that moved something
    (or stirred) something unparks the spinners watching it; softirq → ksoftirqd hand-off.

    A softirq that re-raises itself runs again at once, ahead of threads, until it has
    restarted ``H_SOFT_LIMIT`` times in a row (MAX_SOFTIRQ_RESTART); then its work moves to
    ksoftirqd, a thread scheduled fairly with the others on that CPU, until it goes idle.
    """
    if m[H_PROGRESS] == m[H_QPROG0]:  # moved nothing: an empty poll (DPDK's idle cycles)
        if m[H_QMULTI]:  # per label: a syscall's share stays the syscall's
            for lab in range(m[H_NLABEL]):
                m[ix(m[H_IDLE] + lab)] += m[ix(m[H_BUSY] + lab)] - m[ix(m[H_QBUSY0] + lab)]
        else:
            m[ix(m[H_IDLE] + m[H_QLABEL])] += m[H_QACC]
        m[ix(m[H_IDLE] + m[H_QLABEL])] -= past_end  # outside the window, as for busy
        if not m[H_QIDLED] and not m[H_STIR]:
            # an idle quantum other than the last idle log came between: a quantum like
            # that one is no longer known to repeat itself
            m[ix(m[H_IDLELOG] + c * IDLELOG_WORDS)] = -1
    if m[H_PARKED] and _moved(m):
        _unpark_watchers(m, c)
    if cx(m, c, CX_KLABEL) < 0:
        return
    if cx(m, c, CX_READY) <= end:  # re-raised itself (a future interrupt is not a restart)
        n = cx(m, c, CX_RESTARTS) + 1
        cx_set(m, c, CX_RESTARTS, n)
        if n > m[H_SOFT_LIMIT] and cx(m, c, CX_KSOFT) == 0:
            cx_set(m, c, CX_KSOFT, 1)
            cx_set(m, c, CX_PRIO, PRIO_THREAD)
            count(m, KSOFTIRQD_HANDOFFS, 1)
    else:
        cx_set(m, c, CX_RESTARTS, 0)
        cx_set(m, c, CX_KSOFT, 0)
        cx_set(m, c, CX_PRIO, PRIO_SOFTIRQ)


@njit(cache=True)
def _unpark_watchers(m, c):
    """``c`` moved or stirred something: every spinner watching it may find work now (this
    context's last idle log stays: an idle quantum just like it is steady at once). Returns
    whether any other context stays parked."""
    m[H_PARKED] = 0
    for o in range(m[H_NCTX]):
        if (cx(m, o, CX_WATCH) >> c) & 1:
            cx_set(m, o, CX_PARK, 0)
        elif cx(m, o, CX_PARK):
            m[H_PARKED] = 1
    return m[H_PARKED]


@njit(cache=True, inline="always")
def _moved(m):
    """Whether the running quantum moved something or stirred state others read: ring
    refreshes it left uncharged are (the next context to call afxdp.charge_refreshes
    charges them: a NAPI's empty peek, then the application's poll)."""
    return m[H_PROGRESS] != m[H_QPROG0] or m[H_STIR] != 0 or m[H_QREFRESH] != 0


@njit(cache=True)
def stir(m):
    """The running quantum changed state other contexts' polls read (a NAPI state flag)
    without moving anything: its cycles stay idle, but parked spinners that watch it may
    poll differently now, and it is no idle spin to replay."""
    m[H_STIR] = 1


@njit(cache=True)
def unpark(m, c):
    """A write ``c``'s idle poll reads although ``c`` does not watch the writer (``CX_WATCH``):
    its next poll may differ, so other contexts' horizons count it from its next start (and
    fold's cached horizon is recomputed, as after a wake-up)."""
    if cx(m, c, CX_PARK):
        cx_set(m, c, CX_PARK, 0)
        m[H_WOKEN] += 1


@njit(cache=True)
def switch_label(m, label):
    """Charge the rest of the quantum to ``label`` (a syscall's share of an application's
    loop). The first switch in a quantum snapshots every label's busy cycles as they were when
    it began (until then only its own label was charged, by ``H_QACC``): its idle books are
    then kept per label (``_settle``)."""
    if not m[H_QMULTI]:
        m[H_QMULTI] = 1
        for lab in range(m[H_NLABEL]):
            m[ix(m[H_QBUSY0] + lab)] = m[ix(m[H_BUSY] + lab)]
        m[ix(m[H_QBUSY0] + m[H_QLABEL])] -= m[H_QACC]
    set_label(m, label)


@njit(cache=True, inline="always")
def set_label(m, label):
    """The running quantum charges ``label`` from here (its rows of the books; kept as they
    are when it already does: a replay sets each logged charge's label)."""
    if label == m[H_QLABEL]:
        return
    m[H_QLABEL] = label
    row = label * m[H_NOPS]
    m[H_LOPS] = m[H_OPS] + row
    m[H_LOPB] = m[H_OPB] + row
    m[H_LBUSY] = m[H_BUSY] + label


@njit(cache=True)
def now(m):
    """Virtual time inside the running quantum: its start plus what it has charged. The
    quantum's reads of what changes by itself happen at such a time: the last one taken is
    when an idle poll last looked (``H_QREAD``, spin_until)."""
    t = m[H_NOW] + m[H_QACC]
    m[H_QREAD] = t
    return t


@njit(cache=True)
def charge(m, cc, cb, op, n, nbytes):
    """Count ``n`` calls of ``op`` handling ``nbytes`` bytes, and their cycles."""
    m[H_QACC] += book(m, cc, cb, op, n, nbytes)
    _log(m, op, n, nbytes)


@njit(cache=True, inline="always")
def spend(m, cc, cb, op, nbytes):
    """The running quantum's time for one call of ``op`` on ``nbytes`` bytes, its books left
    to ``books``: a per-descriptor loop whose reads of the time need each call's cycles but
    not each call's books (a call's books are 6-9 arena words, its time 2). The log of a
    quantum that moved something is never read; a loop whose passes may move nothing marks
    the quantum unsteady if it has not (``steady.unsteady_if_idle``)."""
    m[H_QACC] += cost(cc, cb, op, nbytes)


@njit(cache=True, inline="always")
def cost(cc, cb, op, nbytes):
    """The cycles of one call of ``op`` on ``nbytes`` bytes: a loop that keeps the time in
    a local adds them there and hands the time back once (``run_to``), its books after."""
    return cc[ix(op)] + nbytes * cb[ix(op)]


@njit(cache=True, inline="always")
def run_to(m, t, look):
    """The running quantum has run until ``t`` and last looked at the time at ``look``
    (``now``), as a loop that kept its time in a local (``cost``) left it."""
    m[H_QACC] = t - m[H_NOW]
    m[H_QREAD] = look


@njit(cache=True)
def books(m, cc, cb, op, n, nbytes):
    """The books of ``n`` calls of ``op`` (``nbytes`` in all) whose time ``spend`` took."""
    if n:
        book(m, cc, cb, op, n, nbytes)
        _log(m, op, n, nbytes)


@njit(cache=True, inline="always")
def book(m, cc, cb, op, n, nbytes):
    """The calls, bytes and cycles of ``n`` calls of ``op`` in the label's books, outside
    the running quantum's length and log (``charge``; quanta a device ran at once,
    ``folded``). Returns the cycles."""
    m[ix(m[H_LOPS] + op)] += n
    cost = n * cc[ix(op)]
    if nbytes:  # most calls move no bytes
        m[ix(m[H_LOPB] + op)] += nbytes
        cost += nbytes * cb[ix(op)]
    m[ix(m[H_LBUSY])] += cost
    return cost


@njit(cache=True, inline="always")
def _log(m, code, n, nbytes):
    # remember the quantum's charges (and counts, code < 0) so an idle spin can be replayed;
    # a quantum that moved something is not one (spin_until), so its log is never read
    if m[H_PROGRESS] != m[H_QPROG0]:
        return
    k = m[H_QLOG_N]
    if k < QLOG_LEN:
        label = m[H_QLABEL]
        if nbytes == 0 and 0 <= n < LOG_N_LIMIT and label < LOG_LABEL_LIMIT:
            m[ix(m[H_QLOG] + k)] = log_word(code, n, label)
        else:  # a poll that moves bytes is no steady idle one: not replayed
            k = QLOG_LEN
    m[H_QLOG_N] = k + 1


@njit(cache=True, inline="always")
def log_word(code, n, label):
    """A quantum log entry: ``n`` calls of ``code`` charged to ``label`` (no bytes)."""
    return ((code + LOG_CODE_OFF) << 40) | (label << 32) | n


@njit(cache=True, inline="always")
def log_entry(w):
    """A quantum log entry's (code, calls, label): ``log_word`` undone."""
    return (w >> 40) - LOG_CODE_OFF, w & (LOG_N_LIMIT - 1), (w >> 32) & (LOG_LABEL_LIMIT - 1)


DRAW = -(1 << 20)  # quantum log code of a random draw: a replay draws as often (values unused)


@njit(cache=True)
def count(m, stat, n):
    m[ix(m[H_CNT] + stat)] += n
    _log(m, -1 - stat, n, 0)


@njit(cache=True)
def wake(m, c, t):
    """Make ``c`` runnable at ``t`` (or keep an earlier wake-up). Waking another context
    counts as progress: a quantum that did so is not an idle poll to be replayed."""
    if cx(m, c, CX_READY) > t:
        cx_set(m, c, CX_READY, t)
        if c != m[H_QCTX]:
            m[H_PROGRESS] += 1
            m[H_WOKEN] += 1
    elif m[H_QDRAWN] and c != m[H_QCTX]:
        # too late to count, but from a seeded delay: the same quantum again draws anew and
        # may wake it earlier (a busy poll re-arming the interrupt), so it is not replayed
        unsteady(m)


@njit(cache=True)
def napi_schedule(m, c, t):
    """napi_schedule: from idle, schedule the poll; if already scheduled, mark it missed
    (NAPIF_STATE_MISSED) so it polls once more. Returns True when it scheduled from idle."""
    if t >= INF:  # a lost interrupt (kernels/faults.notify_at): nothing happens
        return False
    if cx(m, c, CX_SCHED):
        if not cx(m, c, CX_MISSED):
            cx_set(m, c, CX_MISSED, 1)
            m[H_PROGRESS] += 1
        return False
    cx_set(m, c, CX_SCHED, 1)
    stir(m)  # the next napi_schedule finds it scheduled (a wake-up already due is no progress)
    wake(m, c, t)
    return True


@njit(cache=True)
def napi_complete(m, c):
    """napi_complete_done: go idle, unless a schedule was missed meanwhile (poll again)."""
    if cx(m, c, CX_MISSED):
        cx_set(m, c, CX_MISSED, 0)
        stir(m)  # the next napi_schedule marks it missed again: a change others' wakeups read
        if c != m[H_QCTX]:
            m[H_WOKEN] += 1
        cx_set(m, c, CX_READY, now(m))
        return False
    cx_set(m, c, CX_SCHED, 0)
    stir(m)  # a napi_schedule from now on schedules instead of finding it scheduled
    return True


@njit(cache=True)
def snapshot(m):
    """Copy the cumulative counters at the end of warm-up; results subtract it."""
    m[H_SNAP_DONE] = 1
    nl, no = m[H_NLABEL], m[H_NOPS]
    for i in range(nl * no):
        m[ix(m[H_BASE_OPS] + i)] = m[ix(m[H_OPS] + i)]
        m[ix(m[H_BASE_OPB] + i)] = m[ix(m[H_OPB] + i)]
    for i in range(nl):
        m[ix(m[H_BASE_BUSY] + i)] = m[ix(m[H_BUSY] + i)]
        m[ix(m[H_BASE_IDLE] + i)] = m[ix(m[H_IDLE] + i)]
    for i in range(m[H_NCNT]):
        m[ix(m[H_BASE_CNT] + i)] = m[ix(m[H_CNT] + i)]
    for i in range(LAT_BINS):
        m[ix(m[H_BASE_LAT] + i)] = m[ix(m[H_LAT] + i)]
    for cpu in range(m[H_NCPU]):  # the part of a CPU's last quantum after warm-up is in
        past = m[ix(m[H_CLK] + cpu)] - m[H_WARM]
        last = m[ix(m[H_CPULAST] + cpu)]
        if past > 0:
            lab = m[ix(m[H_CPULAB] + cpu)]
            m[ix(m[H_BASE_BUSY] + lab)] -= min(past, abs(last))
            if last < 0:  # an empty poll: its part after warm-up is idle in the window too
                m[ix(m[H_BASE_IDLE] + lab)] -= min(past, -last)



@njit(cache=True)
def sample(m):
    """Ring occupancy at fixed virtual-time steps (a bounded, downsampled time series)."""
    t = m[H_NOW] + m[H_QACC]
    nr = m[H_TS_NRINGS]
    while m[H_TS_N] < m[H_TS_CAP] and t >= m[H_TS_NEXT]:
        base = m[H_TS] + m[H_TS_N] * (1 + nr)
        m[ix(base)] = m[H_TS_NEXT]
        for i in range(nr):
            m[ix(base + 1 + i)] = ring_entries(m, m[ix(m[H_TS_RINGS] + i)])
        sample_delivered(m, m[H_TS_N])
        m[H_TS_N] += 1
        m[H_TS_NEXT] += m[H_TS_DT]


@njit(cache=True)
def horizon(m, c, unparked=False):
    """The earliest time any context other than ``c`` can next run: until then nothing
    ``c`` could observe changes, except ring entries already stamped in its future. Other
    queues' contexts (``H_EXT_HZN``) count too when ``c``'s CPU is one they share
    (``H_CPUQ``): they may need it.

    A context parked in an idle spin on another CPU (``CX_PARK``, set by :func:`idle_spin`)
    counts from its first poll that could find work by itself: until some context moves
    something it watches (``CX_WATCH``), its polls change nothing (that progress unparks it,
    ``_settle``; a device unparks it for a write it does not watch, :func:`unpark`).
    So two spinners waiting on each other (a host PMD and a guest application) both replay
    up to the first change either could see, instead of one poll of the other at a time.
    On the same CPU it counts from its next start: it takes turns on that CPU. ``unparked``:
    as if the spinners watching ``c`` were unparked (the quantum moved something)."""
    clk = m[H_CLK]
    cpu = cx(m, c, CX_CPU)
    # elsewhere other queues can neither run before ``c`` nor change what it reads (they
    # can only delay this queue's contexts on a CPU they share, never bring them forward)
    t = min(m[H_END], m[H_EXT_HZN]) if m[ix(m[H_CPUQ] + cpu)] else m[H_END]
    for o in range(m[H_NCTX]):
        r = cx(m, o, CX_READY)
        if o != c and r < INF:
            o_cpu = cx(m, o, CX_CPU)
            s = max(r, m[ix(clk + o_cpu)])
            if o_cpu != cpu and not (unparked and (cx(m, o, CX_WATCH) >> c) & 1):
                s = max(s, cx(m, o, CX_PARK))
            t = min(t, s)
    return t


@njit(cache=True)
def idle_spin(m, cc, cb, c, seen):
    """Context ``c``'s quantum found nothing, and nothing it reads changes by itself before
    ``seen`` (a ring entry stamped then, the next packet a rate allows): park it (other
    spinners' horizons skip its polls until then) and replay its idle spin up to the first
    time anything could change for it."""
    q = m[H_QACC]
    # a change the next poll would already read leaves nothing to replay, whatever the
    # horizon (spin_until), so the scan over the contexts is skipped: the common case of a
    # poller just faster than its producer (no now(): it would move the last read)
    look = m[H_QREAD] + q
    hzn = seen if seen <= look else horizon(m, c)
    if spin_until(m, cc, cb, hzn, seen):
        # its poll that could first see ``seen`` starts up to one quantum before it
        cx_set(m, c, CX_PARK, max(seen - q, 1))
        m[H_PARKED] = 1


@njit(cache=True)
def _as_last_idle(m, c, k):
    """Whether this quantum (its ``k`` log entries and its length) is the same as context
    ``c``'s last idle quantum; if not, it becomes that one."""
    base, log = m[H_IDLELOG] + c * IDLELOG_WORDS, m[H_QLOG]
    m[H_QIDLED] = 1
    if m[ix(base)] == k and m[ix(base + 1)] == m[H_QACC]:
        for i in range(k):
            if m[ix(base + 2 + i)] != m[ix(log + i)]:
                break
        else:
            return True
    m[ix(base)], m[ix(base + 1)] = k, m[H_QACC]
    for i in range(k):
        m[ix(base + 2 + i)] = m[ix(log + i)]
    return False


@njit(cache=True, inline="always")
def replays(t0, q, r, hzn, seen, end):
    """How many times an idle poll that started at ``t0``, took ``q`` and last looked at the
    time ``r`` into itself is replayed after it: replayed poll j (1, 2, ...) starts at
    t0 + j q, before ``hzn``; looks at t0 + j q + r, before ``seen``; ends before ``end``
    (0 or less: none)."""
    return min((hzn - 1 - t0) // q, (seen - 1 - r - t0) // q, (end - 1 - t0) // q - 1)


@njit(cache=True)
def lockstep_bounds(m, c):
    """For a device that runs its context ``c``'s next polls itself after a quantum that
    moved something (``folded``): (the horizon, which its idle polls' replays also stop
    before; the end of warm-up, which they end before; the limit each poll must start
    before, as ``fold`` folds: that horizon, warm-up's end, the next ring sample)."""
    hzn = horizon(m, c, True)
    end = INF if m[H_SNAP_DONE] else m[H_WARM]
    lim = min(hzn, end)
    if m[H_TS_N] < m[H_TS_CAP]:
        lim = min(lim, m[H_TS_NEXT])
    return hzn, end, lim


@njit(cache=True)
def spin_until(m, cc, cb, hzn, seen):
    """A polling context found nothing to do: replay this idle quantum back to back (the
    same loads, the same empty polls), as the real loop would spin, while nothing it reads
    can have changed: each replayed poll starts before ``hzn``, when another context can
    next run (the engine would run it first, as ``fold`` does), and takes its last look at
    the time (``H_QREAD``, as far into the poll as this one did) before ``seen``, when its
    view changes by itself (a ring entry stamped then, the next packet a rate allows: an
    entry stamped at a read's instant is seen). Exact; it only saves emulation time. The
    replayed polls end before the end of warm-up, so the steady window's books start where
    quantum by quantum would, and before the context is next descheduled.

    Only a *steady* idle quantum is replayed: one whose log is the same as the context's
    previous idle quantum's, in this idle stretch or an earlier one (the first empty poll
    after work may still differ, e.g. charging a ring refresh made before it; one that
    charges exactly what a steady one did is steady: a busy-waiting sender between two
    batches replays from its first empty poll). Quanta that move something keep that log;
    an idle one not compared with it (too long a log, a refresh left for the next quantum to
    charge) voids it (``_settle``). Returns whether the quantum is steady."""
    q = m[H_QACC]
    k = m[H_QLOG_N]
    # _moved: also a ring refresh left for the next quantum to charge
    # (afxdp.charge_refreshes): that one charges more, so this one is no fixed point
    if q <= 0 or k > QLOG_LEN or m[H_NO_REPLAY] or _moved(m):
        return False
    c = m[H_QCTX]
    if not _as_last_idle(m, c, k):
        return False
    t0 = m[H_NOW]
    end = stall_next(m, c, t0)  # descheduled then: no polls to replay
    if m[H_SNAP_DONE] == 0:
        end = min(end, m[H_WARM])
    reps = replays(t0, q, m[H_QREAD] - t0, hzn, seen, end)
    if reps <= 0:
        return True
    label, log = m[H_QLABEL], m[H_QLOG]
    for i in range(k):
        if log_entry(m[ix(log + i)])[2] != label:  # the replay charges another label too
            switch_label(m, label)
    for i in range(k):
        code, calls, lab = log_entry(m[ix(log + i)])
        n = calls * reps
        if code == DRAW:  # keep the seeded stream where quantum by quantum would leave it
            skip(m, n)
        elif code < 0:
            m[ix(m[H_CNT] - 1 - code)] += n
        else:
            set_label(m, lab)
            m[H_QACC] += book(m, cc, cb, code, n, 0)
    set_label(m, label)
    return True


@njit(cache=True)
def delay(m, d):
    """A delay ``d`` (interrupt, IPI, wakeup) with the testbed's seeded spread: uniform in
    d·(1 ± jitter). This is where run-to-run variation comes from."""
    j = m[H_JITTER_PPM]
    if j == 0 or d == 0:
        return d
    _log(m, DRAW, 1, 0)
    m[H_QDRAWN] = 1
    return d + int(d * j * (2.0 * draw(m) - 1.0)) // 1000000



@njit(cache=True)
def napi_enter(m, cc, cb, c):
    """The start of a NAPI poll: the hard interrupt that raised it, if one did (its context
    flag ``CX_A``), and NAPI_STATE_SCHED held while it runs."""
    if cx(m, c, CX_A):
        cx_set(m, c, CX_A, 0)
        charge(m, cc, cb, ops.IRQ_ENTRY, 1, 0)
        count(m, INTERRUPTS, 1)
    cx_set(m, c, CX_SCHED, 1)
