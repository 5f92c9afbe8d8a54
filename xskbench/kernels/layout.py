"""Arena layout: fixed header slots and a builder that places objects in the arena.

The arena ``m`` is one int64 array. Its first ``HDR`` words are the header: scalars of the
run and the offsets of every object (rings, contexts, counters). Core slots are below
``DEV_BASE``, handed out in order by one allocator (a count that does not match its names
fails at import; nothing is placed by hand); each device kernel numbers its own slots from
``DEV_BASE`` (devices never share an arena) with :func:`device_slots`. tests/test_layout.py
checks that no two slots of an arena coincide. With several queues, each queue pair is one
arena; ``kernels/multiq.py`` runs them on shared CPUs.
"""
import numpy as np

MC = 1000  # virtual-time units per CPU cycle (millicycles)
INF = np.int64(2**62)
M32 = 0xFFFFFFFF

DEV_BASE = 112  # device slots: DEV_BASE .. HDR - 1
HDR = 200


class _Slots:
    """Hands out consecutive header slots in ``[start, stop)``."""

    def __init__(self, start, stop):
        self.next, self.stop = start, stop

    def take(self, n):
        if self.next + n > self.stop:
            raise ValueError(f"arena header: {n} more slots do not fit below {self.stop}")
        self.next += n
        return range(self.next - n, self.next)


def device_slots(n):
    """A device kernel's ``n`` header slots (its ``D_*`` names)."""
    return _Slots(DEV_BASE, HDR).take(n)


_core = _Slots(0, DEV_BASE)

# --- core header slots ---------------------------------------------------------------
(
    H_NCPU, H_NCTX, H_NLABEL, H_NOPS, H_NCNT,
    H_CLK, H_CTX, H_OPS, H_OPB, H_BUSY, H_CNT,
    H_BASE_OPS, H_BASE_OPB, H_BASE_BUSY, H_BASE_CNT, H_SNAP_DONE,
    H_END, H_WARM,
    H_NOW, H_QACC, H_QCTX, H_QLABEL, H_SEQ,
    H_OWN, H_FTS, H_NFRAMES, H_FRAME, H_HEADROOM,
    H_FQ, H_CQ, H_RX, H_TX,
    H_BATCH, H_NEEDWAKE, H_BUSYPOLL, H_BUSYBUDGET, H_ZC, H_WORKLOAD,
    H_PKTLEN, H_GAP, H_NEXT_ARR, H_ARR_END, H_LINE_GAP,
    H_APPSTK, H_APPSTK_N, H_OUTSTANDING,
    H_TS, H_TS_CAP, H_TS_N, H_TS_DT, H_TS_NEXT, H_TS_RINGS, H_TS_NRINGS,
    H_LAT, H_LAT_NB,
    H_POOL, H_POOL_N, H_SENT_SEQ,
    H_SOFT_LIMIT, H_HZ_MHZ, H_FLEN, H_SCR, H_START_T, H_FRAMES_IN_USE,
    H_PROGRESS, H_QLOG, H_QLOG_N, H_IDLE, H_BASE_IDLE, H_QPROG0, H_JITTER_PPM, H_SEED,
    H_OVER, H_QBUSY0, H_BASE_LAT, H_CPULAB, H_CPULAST, H_NREFRESH, H_TXFULL_DROP,
) = _core.take(79)
(H_FAULT,) = _core.take(1)  # offset of the fault block (0 in arenas built without one)
# multi-queue: the earliest start of any queue's context that shares a CPU with this one
# (bounds an idle-spin replay and a fold), and whether the queues' sockets share one pool
# (XDP_SHARED_UMEM)
H_EXT_HZN, H_SHARED_POOL = _core.take(2)
# multi-queue: a bit per queue that has a context on a CPU this queue uses (only those can
# run on its CPUs: queues meet nowhere else), and per CPU (an array) those on that CPU
H_QSHARE, H_CPUQ = _core.take(2)
# multi-queue: this queue's candidate at the last pick, its context and start (context
# STALE: to be found anew, as its contexts or CPU clocks changed since)
H_CAND_C, H_CAND_T = _core.take(2)
STALE = -2
# the arena's seeded stream (kernels/rng.py): draws so far; its key is H_SEED
(H_RNG,) = _core.take(1)
# 1 = no shortcut (engine.spin_until's replay, engine.fold, null's batched receive): quantum by
# quantum and packet by packet, for the equality test (tests/test_fastforward.py)
(H_NO_REPLAY,) = _core.take(1)
(H_TXCSUM,) = _core.take(1)  # xsk.tx_csum: TXCSUM_NONE / _APP / _OFFLOAD
TXCSUM_NONE, TXCSUM_APP, TXCSUM_OFFLOAD = range(3)
# xsk.multi_buffer (XDP_USE_SG): descriptors per packet and the bytes each but the last
# holds (the RX frame size, chunk - headroom - XDP_PACKET_HEADROOM); 1 without it
H_NSEG, H_SEGLEN = _core.take(2)
# log2 of H_FRAME (xsk.frame_size is 2048 or 4096, aligned mode): a frame's index is a shift
(H_FRAME_SHIFT,) = _core.take(1)
# the quantum's cycles went to more than its own label (engine.switch_label): only then
# are every label's busy counters snapshot (H_QBUSY0) for its idle books
(H_QMULTI,) = _core.take(1)
# a context may be parked (engine.idle_spin): progress then unparks the contexts watching
(H_PARKED,) = _core.take(1)
# engine.fold's horizon: wake-ups of other contexts so far, and the count and whether every
# spinner was unparked when the horizon was last computed (it holds until either changes)
H_WOKEN, H_HZN_WOKEN, H_HZN_FREE = _core.take(3)
# the running quantum changed state other contexts' polls read without moving anything
# (engine.stir): its cycles stay idle, but it is no idle spin and it unparks its watchers
(H_STIR,) = _core.take(1)
# ring refreshes the running quantum made and has not charged yet (afxdp.charge_refreshes)
(H_QREFRESH,) = _core.take(1)
# the running quantum made a seeded random draw (engine.delay): a wake-up it computed may come
# out earlier in the next such quantum although this one's came too late to count
(H_QDRAWN,) = _core.take(1)
# the running quantum's last look at the time (engine.now): every read that can change by
# itself (a stamped entry, a rate's clock) compares against a time taken then or earlier
(H_QREAD,) = _core.take(1)

# --- context table ---------------------------------------------------------------------
CX_N = 18  # words per context
_cx = _Slots(0, CX_N)
(
    CX_CPU, CX_KIND, CX_READY, CX_PRIO, CX_LABEL, CX_KLABEL, CX_LAST,
    CX_SCHED, CX_MISSED, CX_RESTARTS, CX_KSOFT, CX_A, CX_B, CX_C,
) = _cx.take(14)
PRIO_THREAD, PRIO_SOFTIRQ = 0, 1

# --- UMEM frame owners: where each frame is (the books) ----------------------------------
(
    OWN_APP, OWN_FQ, OWN_RX, OWN_TX, OWN_CQ, OWN_POOL, OWN_DEV, OWN_SKB, OWN_PEER,
) = range(9)
OWNER_NAMES = ("app", "fill", "rx", "tx", "completion", "pool_free", "device", "skb", "peer")

# --- workloads ------------------------------------------------------------------------
WL_TXONLY, WL_RXDROP, WL_L2FWD = range(3)
WORKLOADS = ("txonly", "rxdrop", "l2fwd")

LAT_BINS = 160  # latency histogram over cycles: 4 bins per octave
SCR_WORDS = 2 * 4096  # scratch for batches of descriptors (addr, len)
QLOG_LEN = 32  # charges remembered per quantum, to replay an idle spin
# a log entry is one word (engine.log_word): code (from engine.DRAW up), label and calls
LOG_CODE_OFF, LOG_N_LIMIT, LOG_LABEL_LIMIT = 1 << 21, 1 << 32, 1 << 8

# --- fault injection (kernels/faults.py): context words ------------------------------------
CX_STALL, CX_STALL_PER = _cx.take(2)  # a context's descheduling window: length, period (0 = none)
# the idle-spin replay (engine.idle_spin): while a context is parked in an idle spin, the
# earliest start of its quantum that could find work (0: not parked)
(CX_PARK,) = _cx.take(1)
# whose progress unparks it: a bit per context (all by default; a device clears the bits
# of contexts that write nothing its idle poll reads)
(CX_WATCH,) = _cx.take(1)
# engine.spin_until replays a quantum only once one like it has run: per context, the log
# of its last idle quantum (its entries, its length, then the entries: engine.log_word)
(H_IDLELOG,) = _core.take(1)
# the running quantum was compared with (or became) its context's last idle log: an idle
# quantum that was not (too long a log, a refresh left uncharged) voids it (engine._settle)
(H_QIDLED,) = _core.take(1)
# the running quantum's label's rows (engine.set_label): where book() adds its calls, bytes
# and cycles, without a product and three header words per charge
H_LOPS, H_LOPB, H_LBUSY = _core.take(3)
IDLELOG_WORDS = 2 + QLOG_LEN


class Arena:
    """Builder for the arena: allocates words and records named offsets."""

    def __init__(self):
        self.size = HDR
        self.names = {}

    def alloc(self, name, words):
        off = self.size
        self.size += int(words)
        self.names[name] = off
        return off

    def build(self):
        return np.zeros(self.size, dtype=np.int64)
