"""The one decorator every kernel is compiled with."""
import numba


def njit(**options):
    """``numba.njit`` without the runtime's reference counting (``_nrt=False``).

    Kernels never allocate: they take the arena and cost arrays from Python, which keeps them
    alive, and pass views of them between small non-inlined functions. With the runtime on,
    every such pass and slice takes and drops an atomic reference count, which was most of
    the emulator's time (issue #17: 2-3x per quantum). Anything that must allocate in
    jitted code gets a plain ``numba.njit``."""
    return numba.njit(_nrt=False, **options)
