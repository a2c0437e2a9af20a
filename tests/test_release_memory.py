"""A run hands the C heap's freed pages back to the system at its end (scenarios/runner.py), before its tables are
built on top of them, and the room a column grown by doubling has not used yet takes no memory (issue 16)."""

from __future__ import annotations

import numpy as np
import pytest

import scenarios.runner as runner
from tests.helpers import small_cluster, uniform_maps
from vcloud.tables import grown


def _rss_mb() -> float:
    with open("/proc/self/status") as status:
        return next(int(line.split()[1]) / 1024 for line in status if line.startswith("VmRSS"))


@pytest.mark.skipif(runner._malloc_trim() is None, reason="no glibc malloc_trim here")
def test_freed_holes_in_the_heap_are_returned():
    blocks = [bytearray(100_000) for _ in range(600)]  # 60 MB on the heap (below glibc's mmap threshold)
    for block in blocks:
        block[::4096] = b"x" * len(block[::4096])  # touched: resident
    del blocks[:-1]  # all but the last: a hole below a live block, which glibc keeps resident
    before = _rss_mb()
    runner.release_freed_memory()
    assert before - _rss_mb() > 20


def test_a_run_releases_the_freed_memory_at_its_end(monkeypatch):
    from hadoop_layer.profiles import PUMA

    calls = []
    monkeypatch.setattr(runner, "release_freed_memory", lambda: calls.append(True))
    model = small_cluster(slaves=2)
    model.add_job("j", PUMA["grep"], 0.0, uniform_maps(2), 1)
    runner.run_model(model, None, progress=False, stops_itself=True)
    assert calls == [True] and not model.running


@pytest.mark.parametrize("fill", [0, 0.0, False, -1, np.nan, -0.0, np.float32(0), 2.5])
@pytest.mark.parametrize("old", [None, np.array([1], np.int8), np.array([1.5]), np.ones((1, 2), np.float32)])
def test_a_grown_column_is_what_np_full_gave(fill, old):
    shape = (3, *(old.shape[1:] if old is not None else ()))
    with np.errstate(invalid="ignore"):  # NaN into an int column: what np.full made of it
        expected = np.full(shape, fill, dtype=old.dtype if old is not None else None)
        got = grown(old, shape, fill)
    if old is not None:
        expected[tuple(slice(0, k) for k in old.shape)] = old
    assert got.dtype == expected.dtype and got.shape == expected.shape
    assert np.array_equal(got, expected, equal_nan=expected.dtype.kind == "f")
    assert (np.signbit(got) == np.signbit(expected)).all() if expected.dtype.kind == "f" else True


def test_the_unused_room_of_a_zero_filled_grown_column_takes_no_memory():
    before = _rss_mb()
    column = grown(np.ones(1000), (25_000_000,), 0.0)  # 200 MB, of which 8 KB written
    assert column[:1000].sum() == 1000 and _rss_mb() - before < 50
