"""The page cache's compiled bookkeeping (vcloud/pagecache.py `cache_touch`, `cache_resident`) against the NumPy forms
they replaced in vcloud/pagecache.py (`PageCache.touch`, `resident`), bit for bit: random inputs with empty ones and
repeats."""

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from vcloud.arrays import run_starts
from vcloud.pagecache import PageCache, cache_resident, cache_touch


def rows_of(n: int, max_size: int = 40):
    """Rows below `n` in any order, repeats allowed (possibly none)."""
    return st.lists(st.integers(0, max(n - 1, 0)), max_size=max_size if n else 0).map(
        lambda r: np.array(r, dtype=np.int64)
    )


def same_bits(a: np.ndarray, b: np.ndarray) -> None:
    assert a.dtype == b.dtype and a.shape == b.shape
    np.testing.assert_array_equal(a.view(np.uint8), b.view(np.uint8))


# ---- cache_touch / cache_resident: PageCache.touch and PageCache.resident ----------------------------------------
class NumpyPageCache(PageCache):
    """The NumPy form `touch` and `resident` had before they were compiled."""

    def touch(self, rows) -> None:
        n = self.files.n
        if len(self._maybe) < n:
            self._maybe = np.concatenate([self._maybe, np.zeros(max(n, 2 * len(self._maybe)) - len(self._maybe), bool)])
        rows = np.asarray(rows, dtype=np.int64)
        new = rows[~self._maybe[rows]]
        if new.size:
            self._maybe[new] = True
            self._added.append(new)
            self._resident = None

    def resident(self) -> np.ndarray:
        if self._resident is None:
            added = np.concatenate(self._added)
            added.sort()
            rows = np.concatenate((self._kept, added[run_starts(added)]))
            rows.sort(kind="stable")
            files = self.files
            keep = (files.cached_mb[rows] > 0) | (files.dirty_mb[rows] > 0)
            self._maybe[rows[~keep]] = False
            self._resident = self._kept = rows[keep]
            self._added = []
        return self._resident


@settings(max_examples=300, deadline=None)
@given(st.data())
def test_cache_touch_is_numpy_s(data):
    n = data.draw(st.integers(0, 40))
    maybe = np.array(data.draw(st.lists(st.booleans(), min_size=n, max_size=n)), dtype=bool)
    rows = data.draw(rows_of(n))
    mine = maybe.copy()
    new = cache_touch(mine, rows)
    same_bits(new, rows[~maybe[rows]])
    expected = maybe.copy()
    expected[rows] = True
    same_bits(mine, expected)


@st.composite
def resident_cases(draw):
    n = draw(st.integers(0, 40))
    cached = np.array(draw(st.lists(st.sampled_from([0.0, -0.0, 1.0, np.nan]), min_size=n, max_size=n)))
    dirty = np.array(draw(st.lists(st.sampled_from([0.0, -0.0, 0.5, np.nan]), min_size=n, max_size=n)))
    kept = np.flatnonzero(np.array(draw(st.lists(st.booleans(), min_size=n, max_size=n)), dtype=bool))
    added = draw(rows_of(n))  # may repeat, may overlap `kept` (PageCache never makes that; NumPy's form keeps both)
    maybe = np.array(draw(st.lists(st.booleans(), min_size=n, max_size=n)), dtype=bool)
    return kept, added, cached, dirty, maybe


@settings(max_examples=500, deadline=None)
@given(resident_cases())
def test_cache_resident_is_numpy_s_rebuild(case):
    kept, added, cached, dirty, maybe = case
    rows = np.concatenate((kept, np.unique(added)))
    rows.sort(kind="stable")
    keep = (cached[rows] > 0) | (dirty[rows] > 0)
    expected_maybe = maybe.copy()
    expected_maybe[rows[~keep]] = False
    mine = maybe.copy()
    same_bits(cache_resident(kept, added, cached, dirty, mine), rows[keep])
    same_bits(mine, expected_maybe)


@settings(max_examples=100, deadline=None)
@given(st.data())
def test_page_cache_keeps_numpy_s_resident_rows_through_touches_and_changes(data):
    """Both page caches through the same random files, touches (repeats, lists) and changes of what files hold:
    the same resident rows and flags after every step."""
    caches = PageCache(), NumpyPageCache()
    for _ in range(data.draw(st.integers(1, 12))):
        action = data.draw(st.sampled_from(["create", "touch", "change", "resident"]))
        n = caches[0].files.n
        if action == "create" or n == 0:
            size = data.draw(st.sampled_from([0.0, 10.0]))
            cached = data.draw(st.sampled_from([0.0, size]))
            assert caches[0].create(0, size, cached) == caches[1].create(0, size, cached)
        elif action == "touch":
            rows = data.draw(rows_of(n, 10))
            for cache in caches:
                cache.touch(rows.tolist() if data.draw(st.booleans()) else rows)
        elif action == "change":
            row = data.draw(st.integers(0, n - 1))
            value = data.draw(st.sampled_from([0.0, 2.0]))
            column = data.draw(st.sampled_from(["cached_mb", "dirty_mb"]))
            for cache in caches:
                getattr(cache.files, column)[row] = value
        if action == "resident":
            same_bits(caches[0].resident(), caches[1].resident())
        same_bits(caches[0]._maybe, caches[1]._maybe)
    same_bits(caches[0].resident(), caches[1].resident())
    same_bits(caches[0]._maybe, caches[1]._maybe)
