"""The compiled glue of the tick (vcloud/kernels.py `live_rows`, `take_rows`, `put_rows`, `cache_touch`,
`cache_resident`) against the NumPy forms they replaced in vcloud/engine.py, vcloud/tables.py and vcloud/pagecache.py,
bit for bit: random inputs with empty ones and repeats."""

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from vcloud import engine, kernels
from vcloud.arrays import run_starts
from vcloud.pagecache import PageCache
from vcloud.tables import ItemTable

# few distinct values, so ties, signed zeros and NaN are common (NaN bits must come through too)
VALUES = [0.0, -0.0, 0.5, 1.0, -2.0, np.inf, np.nan]


def rows_of(n: int, max_size: int = 40):
    """Rows below `n` in any order, repeats allowed (possibly none)."""
    return st.lists(st.integers(0, max(n - 1, 0)), max_size=max_size if n else 0).map(
        lambda r: np.array(r, dtype=np.int64)
    )


def same_bits(a: np.ndarray, b: np.ndarray) -> None:
    assert a.dtype == b.dtype and a.shape == b.shape
    np.testing.assert_array_equal(a.view(np.uint8), b.view(np.uint8))


# ---- live_rows: engine.live_items's complement of the idle rows -------------------------------------------------
def numpy_live_rows(idle: np.ndarray, n: int) -> np.ndarray:
    keep = np.ones(n, dtype=bool)
    keep[idle] = False
    return np.flatnonzero(keep)


@settings(max_examples=300, deadline=None)
@given(st.integers(0, 60).flatmap(lambda n: st.tuples(st.just(n), rows_of(n))))
def test_live_rows_is_the_complement_of_the_idle_rows(case):
    n, idle = case
    same_bits(kernels.live_rows(idle, n), numpy_live_rows(idle, n))


def test_live_rows_of_the_engine_idle_rows():
    rng = np.random.default_rng(3)
    items = ItemTable(500)
    items.n = 400
    items.open[:400] = rng.random(400) < 0.7
    items.remaining[:400] = rng.choice([0.0, -0.0, 1.0], 400)
    items.need_cpu[:400] = rng.choice([0.0, 2.0], 400)
    idle = engine.idle_rows(items)
    assert 0 < idle.size < 400
    same_bits(kernels.live_rows(idle, items.n), numpy_live_rows(idle, items.n))


# ---- take_rows / put_rows: ItemTable.take and engine.step's write-back -------------------------------------------
def columns(n_cols: int, length: int, dtype):
    if dtype == np.float64:
        element = st.sampled_from(VALUES)
    elif dtype == np.bool_:
        element = st.booleans()
    else:
        element = st.integers(-128, 127)
    column = st.lists(element, min_size=length, max_size=length).map(lambda v: np.array(v, dtype=dtype))
    return st.tuples(*[column] * n_cols)


@st.composite
def take_cases(draw):
    dtype = draw(st.sampled_from([np.float64, np.int64, np.int8, np.bool_]))
    length = draw(st.integers(0, 30))
    cols = draw(columns(draw(st.integers(1, 5)), length, dtype))
    rows = draw(rows_of(length))
    return cols, rows


@settings(max_examples=300, deadline=None)
@given(take_cases())
def test_take_rows_is_a_fancy_index_per_column(case):
    cols, rows = case
    block = kernels.take_rows(rows, cols)
    assert block.shape == (len(cols), rows.size)
    for column, taken in zip(cols, block, strict=True):
        same_bits(taken, column[rows])
        assert taken.flags.c_contiguous


@settings(max_examples=300, deadline=None)
@given(take_cases(), st.data())
def test_put_rows_is_a_fancy_assignment_per_column(case, data):
    cols, rows = case
    values = tuple(data.draw(columns(1, rows.size, c.dtype))[0] for c in cols)
    mine = tuple(c.copy() for c in cols)
    kernels.put_rows(rows, mine, values)
    for column, value, got in zip(cols, values, mine, strict=True):
        expected = column.copy()
        expected[rows] = value  # a repeated row: NumPy keeps the last value
        same_bits(got, expected)


def test_item_table_take_holds_the_rows_the_tick_reads_and_writes():
    rng = np.random.default_rng(7)
    items = ItemTable(64)
    items.n = 50
    for name, dtype in ItemTable.SCHEMA.items():
        col = getattr(items, name)
        col[:] = rng.choice(VALUES, col.size) if dtype == np.float64 else rng.integers(0, 2, col.size)
    names = engine._TICK_READS + engine._TICK_WRITES
    for rows in (np.zeros(0, np.int64), np.array([3, 3, 0, 49]), np.flatnonzero(rng.random(50) < 0.5)):
        live = items.take(rows, names)
        assert live.n == rows.size and live.rows is rows and live.layout == items.layout and live._names == names
        for name in names:
            same_bits(getattr(live, name), getattr(items, name)[rows])
            assert getattr(live, name).flags.c_contiguous and getattr(live, name).flags.writeable


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
    new = kernels.cache_touch(mine, rows)
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
    same_bits(kernels.cache_resident(kept, added, cached, dirty, mine), rows[keep])
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
