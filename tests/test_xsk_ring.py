"""The numba AF_XDP ring against its plain-Python twin and a logical oracle.

The state machine drives both rings with the same random operations and checks, after every
step, that their states agree and that an independent oracle (sequence numbers and
publish/release times, no indices or caches) agrees with what each side is allowed to see.
"""
from collections import deque

import numpy as np
import pytest
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, invariant, rule

from xskbench.kernels import xsk_ring as xr
from xskbench.kernels.layout import HDR
from xskbench.kernels.xsk_ring_ref import M32, XskRingRef, arena_state

# ring offset inside the arena, after the engine's header (a refresh marks the running
# quantum there) and 7 guard words: catches kernels that ignore ``o``
OFF = HDR + 7


def _length(addr):
    return (addr * 37) % 4000 + 64


def _new(size, start):
    m = np.zeros(OFF + xr.ring_words(size) + 5, dtype=np.int64)
    m[HDR:OFF] = -1
    m[-5:] = -1
    xr.ring_init(m, OFF, size, start)
    return m, XskRingRef(size, start)


def _both(m, ref):
    """``call(name, *args)``: run kernel ``name`` on the arena and on the twin, check they
    agree, return the result."""
    def call(name, *args):
        got = getattr(xr, name)(m, OFF, *args)
        assert got == getattr(ref, name)(*args), name
        return got
    return call


# mostly 2..64 (where rings fill and wrap within a run), sometimes 1 or large
SIZES = st.sampled_from([2, 4, 8, 16, 32, 64] * 3 + [1, 128, 256, 1024, 4096])
# start index: absolute, or (a float) that many ring-fulls before the u32 wrap
STARTS = st.one_of(st.sampled_from([0.25, 0.5, 0.5, 1.0, 2.0]),
                   st.integers(1, 8).map(lambda k: 2**32 - k),
                   st.sampled_from([0, 1, 2**31, 2**32 - 1, 2**32 + 3]),
                   st.integers(0, 2**32 - 1))
COUNTS = st.sampled_from([*range(10), 0.25, 0.5, 1.0, 1.25])  # a count, or a fraction of size
CLOCK0 = st.sampled_from([0, 10, 50])
DT = st.sampled_from([0, 0, 1, 10, 30])  # coarse, so the two clocks often tie


class RingMachine(RuleBasedStateMachine):
    @initialize(size=SIZES, start=STARTS, tp=CLOCK0, tc=CLOCK0)
    def init(self, size, start, tp, tc):
        if isinstance(start, float):
            start = 2**32 - max(1, int(start * size))
        self.size, self.start = size, start & M32
        self.m, self.ref = _new(size, start)
        self.tp, self.tc = tp, tc  # the two sides' clocks (either may be ahead)
        self.next_addr = 1
        self.last_read = 0
        # oracle, in sequence numbers counted from ``start``
        self.n_res = 0  # reserved (net of cancels) == p_prod - start
        self.pending = []  # reserved, unsubmitted: addr or None (unwritten)
        self.pubs = []  # (cum published, time) per submit
        self.rels = []  # (cum released, time) per release
        self.n_pub = self.n_peeked = self.n_rel = 0
        self.entries = {}  # seq -> (addr, t_pub) for published, not-yet-released entries
        self.unread = deque()  # peeked seqs not yet read

    def _n(self, spec):
        return spec if isinstance(spec, int) else int(spec * self.size)

    @staticmethod
    def _seen(events, now):
        return max((c for c, t in events if t <= now), default=0)

    def _true_free(self):
        return self.size - (self.n_res - self._seen(self.rels, self.tp))

    def _true_avail(self):
        return self._seen(self.pubs, self.tc) - self.n_peeked

    # --- clocks and probes -------------------------------------------------------------
    @rule(consumer=st.booleans(), dt=DT, overtake=st.booleans())
    def tick(self, consumer, dt, overtake):
        """Advance one side's clock by ``dt``, or (``overtake``) to ``dt`` past the other's."""
        if consumer:
            self.tc = max(self.tc, self.tp) + dt if overtake else self.tc + dt
        else:
            self.tp = max(self.tp, self.tc) + dt if overtake else self.tp + dt

    @rule(consumer=st.booleans(), spec=COUNTS)
    def probe(self, consumer, spec):
        """prod_nb_free / cons_nb_avail on their own (they move the cached views too), each
        after its pure twin (cons_would_see / prod_would_free: the same answer, nothing
        refreshed or counted)."""
        n = self._n(spec)
        before = self.m.copy()
        if consumer:
            would = xr.cons_would_see(self.m, OFF, n, self.tc)
            assert (self.m == before).all()
            got = xr.cons_nb_avail(self.m, OFF, n, self.tc)
            assert got == self.ref.cons_nb_avail(n, self.tc) == would
            assert got == min(n, self._true_avail())
        else:
            would = xr.prod_would_free(self.m, OFF, n, self.tp)
            assert (self.m == before).all()
            got = xr.prod_nb_free(self.m, OFF, n, self.tp)
            assert got == self.ref.prod_nb_free(n, self.tp) == would
            assert min(n, self._true_free()) <= got <= self._true_free()

    # --- producer ------------------------------------------------------------------------
    @rule(spec=COUNTS)
    def reserve(self, spec):
        n = self._n(spec)
        k, idx = xr.prod_reserve(self.m, OFF, n, self.tp)
        assert (k, idx) == self.ref.prod_reserve(n, self.tp)
        assert k == min(n, self._true_free())
        assert idx == (self.start + self.n_res) & M32
        self.n_res += k
        self.pending += [None] * k

    @rule(count=st.sampled_from([1, 2, 64]))
    def write(self, count):
        """Fill the next ``count`` reserved slots (addresses count up: FIFO is checkable)."""
        first = self.pending.index(None) if None in self.pending else len(self.pending)
        for j in range(first, min(first + count, len(self.pending))):
            idx = (self.start + self.n_pub + j) & M32
            a = self.next_addr
            self.next_addr += 1
            xr.ring_write(self.m, OFF, idx, a, _length(a))
            self.ref.write(idx, a, _length(a))
            self.pending[j] = a

    @rule()
    def submit(self):
        self.write(len(self.pending))  # a producer fills what it publishes
        xr.prod_submit(self.m, OFF, self.tp)
        self.ref.prod_submit(self.tp)
        for a in self.pending:
            self.entries[self.n_pub] = (a, self.tp)
            self.n_pub += 1
        self.pending = []
        self.pubs.append((self.n_pub, self.tp))

    @rule(count=st.sampled_from([1, 2, 64]))
    def cancel(self, count):
        n = min(count, len(self.pending))
        xr.prod_cancel(self.m, OFF, n)
        self.ref.prod_cancel(n)
        del self.pending[-n:]
        self.n_res -= n

    @rule(spec=COUNTS, submit=st.sampled_from([True, True, False]), wait=st.booleans())
    def produce(self, spec, submit, wait):
        """The usual producer loop: (maybe wait for the consumer's time,) reserve, fill,
        (maybe) submit."""
        if wait:
            self.tp = max(self.tp, self.tc)
        self.reserve(spec)
        if submit:
            self.submit()

    # --- consumer ------------------------------------------------------------------------
    @rule(spec=COUNTS)
    def peek(self, spec):
        n = self._n(spec)
        k, idx = xr.cons_peek(self.m, OFF, n, self.tc)
        assert (k, idx) == self.ref.cons_peek(n, self.tc)
        assert k == min(n, self._true_avail())  # all it may see at tc, no more, no less
        assert idx == (self.start + self.n_peeked) & M32
        for s in range(self.n_peeked, self.n_peeked + k):
            assert self.entries[s][1] <= self.tc  # causality: published by the consumer's now
            self.unread.append(s)
        self.n_peeked += k

    @rule(count=st.sampled_from([1, 2, 64]))
    def read(self, count):
        for _ in range(min(count, len(self.unread))):
            s = self.unread.popleft()
            idx = (self.start + s) & M32
            addr, length = xr.ring_addr(self.m, OFF, idx), xr.ring_len(self.m, OFF, idx)
            assert (addr, length) == self.ref.read(idx)
            assert (addr, length) == (self.entries[s][0], _length(addr))  # written + submitted
            assert addr > self.last_read  # FIFO
            self.last_read = addr

    @rule()
    def release(self):
        xr.cons_release(self.m, OFF, self.tc)
        self.ref.cons_release(self.tc)
        self.unread.clear()  # peeked but unread entries are dropped with the release
        for s in range(self.n_rel, self.n_peeked):
            del self.entries[s]
        self.n_rel = self.n_peeked
        self.rels.append((self.n_rel, self.tc))

    @rule(spec=COUNTS, release=st.sampled_from([True, True, False]), wait=st.booleans())
    def consume(self, spec, release, wait):
        """The usual consumer loop: (maybe wait for the producer's time,) peek, read,
        (maybe) release."""
        if wait:
            self.tc = max(self.tc, self.tp)
        self.peek(spec)
        self.read(len(self.unread))
        if release:
            self.release()

    # --- flags ---------------------------------------------------------------------------
    @rule(on=st.booleans())
    def flag(self, on):
        xr.set_flag(self.m, OFF, on)
        self.ref.set_flag(on)
        assert xr.needs_wakeup(self.m, OFF) == self.ref.needs_wakeup() == on

    # --- invariants ----------------------------------------------------------------------
    @invariant()
    def same_state(self):
        st_ = arena_state(self.m, OFF)
        assert st_ == self.ref.state()
        assert all(0 <= w <= M32 for w in st_[:6])
        assert (self.m[HDR:OFF] == -1).all() and (self.m[-5:] == -1).all()

    @invariant()
    def occupancy(self):
        e = xr.ring_entries(self.m, OFF)
        assert e == self.ref.entries() == self.n_pub - self.n_rel
        assert 0 <= e <= self.size
        assert 0 <= self.n_res - self.n_rel <= self.size


RingMachine.TestCase.settings = settings(
    max_examples=200, stateful_step_count=50, derandomize=True, deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much],
)
TestRingMachine = RingMachine.TestCase


# --- explicit cases ---------------------------------------------------------------------
@pytest.mark.parametrize("size,start", [(4, 2**32 - 3), (8, 2**32 - 8), (1, 2**32 - 1),
                                        (16, 2**32 - 1)])
def test_wraps_across_2_32(size, start):
    m, ref = _new(size, start)
    call = _both(m, ref)
    seen, addr = [], 0
    for t in range(1, 6):  # five full ring cycles
        k, idx = call("prod_reserve", size, t)
        assert k == size
        for j in range(k):
            addr += 1
            call("ring_write", (idx + j) & M32, addr, _length(addr))
        assert call("prod_reserve", 1, t) == (0, (idx + k) & M32)  # full
        call("prod_submit", t)
        assert call("ring_entries") == size
        k, idx = call("cons_peek", size + 3, t)
        assert k == size
        seen += [call("ring_addr", (idx + j) & M32) for j in range(k)]
        call("cons_release", t)
        assert call("ring_entries") == 0
        assert arena_state(m, OFF) == ref.state()
    assert seen == list(range(1, 5 * size + 1))
    end = (start + 5 * size) & M32
    assert end < start  # the indices did wrap
    # the producer has not needed to look at the last release yet: its cached view lags
    assert arena_state(m, OFF)[:6] == (end, end, end, (end - size) & M32, end, end)


def test_prod_nb_free_refreshes_only_when_needed():
    m, ref = _new(8, 2**32 - 2)
    call = _both(m, ref)

    def refresh():
        return m[OFF + xr.R_REFRESH]

    assert call("prod_nb_free", 8, 0) == 8 and refresh() == 0  # empty cached view suffices
    assert call("prod_reserve", 6, 0) == (6, 2**32 - 2) and refresh() == 0
    call("prod_submit", 0)
    assert call("cons_peek", 6, 0)[0] == 6 and refresh() == 1  # the consumer had to refresh
    call("cons_release", 0)
    assert call("prod_nb_free", 2, 0) == 2 and refresh() == 1  # 2 cached free slots suffice
    assert m[OFF + xr.R_PCCONS] == 2**32 - 2  # ... so the release is not looked at
    assert call("prod_nb_free", 3, 0) == 8 and refresh() == 2  # 2 < 3: refresh, all free
    assert m[OFF + xr.R_PCCONS] == m[OFF + xr.R_CONS] == 4
    assert call("prod_nb_free", 8, 0) == 8 and refresh() == 2
    assert call("prod_nb_free", 9, 0) == 8 and refresh() == 3  # can never suffice: refresh
    assert arena_state(m, OFF) == ref.state()


def test_causality_both_directions():
    m, ref = _new(4, 2**32 - 1)
    call = _both(m, ref)
    assert call("prod_reserve", 4, 0)[0] == 4
    call("prod_submit", 100)
    assert call("cons_nb_avail", 4, 50) == 0  # consumer at 50: the t=100 submit is unseen
    assert call("cons_peek", 4, 99)[0] == 0
    assert call("cons_peek", 4, 100) == (4, 2**32 - 1)  # at 100 it sees all of them
    call("cons_release", 200)
    assert call("prod_nb_free", 1, 150) == 0  # producer at 150: the t=200 release is unseen
    assert call("prod_reserve", 1, 199)[0] == 0
    assert call("prod_nb_free", 1, 200) == 4
    # two submits: a consumer between them sees only the first batch
    assert call("prod_reserve", 2, 300)[0] == 2
    call("prod_submit", 300)
    assert call("prod_reserve", 2, 300)[0] == 2
    call("prod_submit", 400)
    assert call("ring_entries") == 4
    assert call("cons_peek", 4, 350) == (2, 3)
    assert call("cons_peek", 4, 400) == (2, 5)
    assert arena_state(m, OFF) == ref.state()


def test_flags():
    m, ref = _new(2, 0)
    call = _both(m, ref)
    assert not call("needs_wakeup")
    for on in (True, True, False, True, False, False):
        call("set_flag", on)
        assert call("needs_wakeup") == on
    assert arena_state(m, OFF) == ref.state()


def test_a_refresh_that_moves_the_view_marks_the_quantum_unsteady_only_when_it_now_suffices():
    """A poll that refreshed a view which moved but still falls short is repeated exactly by
    the next poll (it refreshes again and sees the same): its quantum stays steady, so an
    idle spin waiting on the other side is replayed. One whose view now covers the request
    is not: the next poll meets it without a refresh (engine.spin_until must not replay)."""
    from xskbench.kernels.layout import H_QLOG_N, QLOG_LEN

    m, _ = _new(8, 0)
    assert xr.prod_reserve(m, OFF, 8, 0)[0] == 8
    xr.prod_submit(m, OFF, 0)
    assert xr.cons_peek(m, OFF, 8, 0)[0] == 8
    steady = m[H_QLOG_N] = 3  # a quantum's log so far
    # producer side: the consumer releases 2, then 2 more; the producer wants 4
    m[OFF + xr.R_CCCONS] -= 6
    xr.cons_release(m, OFF, 5)
    assert xr.prod_nb_free(m, OFF, 4, 10) == 2  # moved 0 → 2, still short of 4
    assert m[H_QLOG_N] == steady
    assert xr.prod_nb_free(m, OFF, 4, 10) == 2  # the next poll: the same refresh, unmoved
    assert m[H_QLOG_N] == steady
    m[OFF + xr.R_CCCONS] += 2
    xr.cons_release(m, OFF, 20)
    assert xr.prod_nb_free(m, OFF, 4, 30) == 4  # moved and enough: the next poll differs
    assert m[H_QLOG_N] == QLOG_LEN + 1
    # consumer side: the producer publishes 1, then 3 more; the consumer wants 4
    m2, _ = _new(8, 0)
    m2[H_QLOG_N] = steady
    assert xr.prod_reserve(m2, OFF, 1, 0)[0] == 1
    xr.prod_submit(m2, OFF, 0)
    assert xr.cons_nb_avail(m2, OFF, 4, 1) == 1  # moved 0 → 1, short of 4
    assert m2[H_QLOG_N] == steady
    assert xr.prod_reserve(m2, OFF, 3, 2)[0] == 3
    xr.prod_submit(m2, OFF, 2)
    assert xr.cons_nb_avail(m2, OFF, 4, 3) == 4
    assert m2[H_QLOG_N] == QLOG_LEN + 1
