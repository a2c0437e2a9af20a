"""A run hands the C heap's freed pages back to the system at its end (scenarios/runner.py), before its tables are
built on top of them (issue 16)."""

from __future__ import annotations

import pytest

import scenarios.runner as runner
from tests.helpers import small_cluster, uniform_maps


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
