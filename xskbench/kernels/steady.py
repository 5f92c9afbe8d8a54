"""The mark that the running quantum is no steady idle spin (engine.spin_until replays only
steady ones). Kept below the engine so that the rings and the fault helpers, which the engine
imports, set it through one function."""
from .jit import njit
from .layout import H_PROGRESS, H_QLOG_N, H_QPROG0, QLOG_LEN


@njit(cache=True, inline="always")
def unsteady(m):
    """The running quantum's next poll will differ from it: it is not to be replayed."""
    m[H_QLOG_N] = QLOG_LEN + 1


@njit(cache=True, inline="always")
def unsteady_if_idle(m):
    """After a loop that booked its passes once at its end (engine.books): a quantum that
    has moved nothing by then still took something (used entries, guest buffers) its next
    poll will not find, so it is no steady idle spin (and its log, grouped, is no poll's)."""
    if m[H_PROGRESS] == m[H_QPROG0]:
        unsteady(m)
