"""The mark that the running quantum is no steady idle spin (engine.spin_until replays only
steady ones). Kept below the engine so that the rings and the fault helpers, which the engine
imports, set it through one function."""
from .jit import njit
from .layout import H_QLOG_N, QLOG_LEN


@njit(cache=True, inline="always")
def unsteady(m):
    """The running quantum's next poll will differ from it: it is not to be replayed."""
    m[H_QLOG_N] = QLOG_LEN + 1
