"""The tick's array idioms (vcloud/arrays.py) against the NumPy calls they stand for, bit for bit."""

import numpy as np

from vcloud.arrays import clip, run_starts, unique_inverse


def test_clip_gives_np_clip_s_bits_with_signed_zeros_and_ties_for_array_bounds():
    """With array bounds (the page cache's); with scalar bounds np.clip takes another path that keeps -0.0 where two
    ufuncs give 0.0, so the tick keeps np.clip there."""
    rng = np.random.default_rng(7)
    for _ in range(300):
        n = int(rng.integers(1, 200))
        x = rng.normal(0.0, 5.0, n)
        x[rng.random(n) < 0.2], x[rng.random(n) < 0.1] = 0.0, -0.0
        high = rng.exponential(3.0, n) * (rng.random(n) < 0.8)
        high[rng.random(n) < 0.1] = -0.0
        tie = rng.random(n) < 0.1
        x[tie] = high[tie]
        low = np.zeros(n)
        for a, b in ((0.0, high), (low, high)):
            assert np.array_equal(np.clip(x, a, b).view(np.int64), clip(x, a, b).view(np.int64))


def test_run_starts_and_unique_inverse_match_numpy():
    assert run_starts(np.array([2, 2, 5, 5, 5, 9])).tolist() == [True, False, True, False, False, True]
    assert run_starts(np.array([], dtype=np.int64)).tolist() == []
    rng = np.random.default_rng(3)
    for _ in range(300):
        keys = rng.integers(-1, 40, int(rng.integers(0, 120)))
        expected, inverse = np.unique(keys, return_inverse=True)
        got, got_inverse = unique_inverse(keys)
        assert np.array_equal(got, expected) and np.array_equal(got_inverse, inverse)
