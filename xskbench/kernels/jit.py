"""The one decorator every kernel is compiled with, the arena index of hot loops, and the
bit length of a word (one instruction compiled, plain Python under NUMBA_DISABLE_JIT)."""
import numba
import numpy as np
from numba.core.extending import overload
from numba.cpython.unsafe.numbers import leading_zeros


def njit(**options):
    """``numba.njit`` without the runtime's reference counting (``_nrt=False``).

    Kernels never allocate: they take the arena and cost arrays from Python, which keeps them
    alive, and pass views of them between small non-inlined functions. With the runtime on,
    every such pass and slice takes and drops an atomic reference count, which was most of
    the emulator's time (issue #17: 2-3x per quantum). Anything that must allocate in
    jitted code gets a plain ``numba.njit``."""
    return numba.njit(_nrt=False, **options)


@njit(cache=True, inline="always")
def ix(i):
    """An arena index as unsigned. Every arena index is non-negative, but numba cannot know
    it and wraps a signed one (``if i < 0: i += len``) at every access; an unsigned one it
    takes as is. Every index computed at run time goes through ``ix`` (header constants fold
    by themselves): in the per-descriptor loops the checks and the registers they held were
    two thirds of the instructions (issue #17: 1.2-1.45x per bench row). A wrong index is
    then out of bounds, not wrapped: ``make test-boundscheck`` catches it."""
    return np.uint64(i)


def bit_length(x):
    """Bits of a non-negative integer (``int.bit_length``): what a kernel runs as plain
    Python (``NUMBA_DISABLE_JIT=1``, to step through it in a debugger)."""
    return int(x).bit_length()


@overload(bit_length, jit_options={"_nrt": False})
def _bit_length_compiled(x):
    """Compiled: one count of leading zeros (lzcnt), no loop, no float."""
    def impl(x):
        return 64 - leading_zeros(x)
    return impl
