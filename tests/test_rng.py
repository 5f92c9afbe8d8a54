"""Each arena's seeded stream (kernels/rng.py): SplitMix64 over a counter, against its
published test vector and a plain-Python twin."""
import numpy as np

from xskbench.kernels import layout as L
from xskbench.kernels.rng import draw, skip

MASK = (1 << 64) - 1


def splitmix64(seed):
    """The reference generator (Vigna): the state steps by the golden gamma, then mixes."""
    state = seed
    while True:
        state = (state + 0x9E3779B97F4A7C15) & MASK
        z = state
        z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & MASK
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & MASK
        yield z ^ (z >> 31)


def _arena(key):
    m = np.zeros(L.HDR, dtype=np.int64)
    m[L.H_SEED] = key
    return m


def test_the_reference_gives_its_published_vector():
    ref = splitmix64(1234567)
    assert [next(ref) for _ in range(3)] == [6457827717110365317, 3203168211198807973,
                                             9817491932198370423]


def test_draws_are_the_reference_outputs_as_unit_floats():
    for key in (1, 1234567, 7 + (3 << 32)):
        m, ref = _arena(key), splitmix64(key)
        got = [draw(m) for _ in range(100)]
        assert got == [(next(ref) >> 11) / 2.0**53 for _ in range(100)]
        assert m[L.H_RNG] == 100 and all(0.0 <= u < 1.0 for u in got)


def test_skipping_n_draws_lands_where_drawing_them_would():
    a, b = _arena(5), _arena(5)
    for _ in range(37):
        draw(a)
    skip(b, 37)
    assert draw(a) == draw(b)


def test_queues_draw_different_streams():
    assert draw(_arena(1)) != draw(_arena(1 + (1 << 32)))
