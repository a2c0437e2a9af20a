"""Idle rows (an open phase with nothing left and no CPU need) are left out of the engine's tick: the numbers must be
bit for bit those of a tick over every row, while items idle, wake up with more work, idle again and end."""

import json

import numpy as np
import pytest

from tests.runs import GOLDEN, RUNS, run_digests
from tests.scenarios_random import random_cloud
from vcloud import Kind, Phase, WorkItem, engine
from vcloud.pagecache import FileTable
from vcloud.tables import ItemTable, VMTable
from vcloud.work import disk


def _run(seed: int, ticks: int) -> tuple:
    """A random cloud fed at random: every third tick half its open phases get more work (idle ones wake up); at 2/3
    of the run they are closed (they end once drained). Returns the model and what went on."""
    m = random_cloud(seed, check=True)
    vm = m.vm_agents[0]  # a shuffle server's two daemon items, idle from the start
    file = m.cache.create(vm.row, 500.0, 200.0)
    read = WorkItem(m, [Phase("serve-read", Kind.PIPE, 0.0, open=True, streams=(disk(file=file),))])
    send = WorkItem(m, [Phase("serve-send", Kind.NET, 0.0, open=True)])
    vm.run(read)
    vm.run(send)
    r = np.random.default_rng(seed)
    idle = woken = 0
    for t in range(ticks):
        m.run_for(1.0)
        rows = engine.idle_rows(m.items)
        idle += rows.size
        open_rows = np.flatnonzero(m.items.view("open"))
        if t % 3 == 0 and open_rows.size:
            fed = open_rows[r.random(open_rows.size) < 0.5]
            woken += np.isin(fed, rows).sum()
            m.add_work_rows(fed, r.uniform(0.0, 80.0, fed.size))
        if t == 2 * ticks // 3:
            for row in open_rows:
                m.close_phase(m.items.owner[row])
    assert read.charged("read_cache_mb") + read.charged("io_mb") > 0 and send.charged("io_mb") > 0  # they served
    return m, idle, woken


def _all_rows(items: ItemTable) -> np.ndarray:
    return np.zeros(0, dtype=np.int64)


@pytest.mark.parametrize("seed", range(10))
def test_leaving_idle_rows_out_changes_no_number(seed, monkeypatch):
    monkeypatch.setattr(engine, "MIN_IDLE_ROWS", 1)  # a small cloud's idle rows are left out too
    skipped, idle, woken = _run(seed, 45)
    with monkeypatch.context() as patch:
        patch.setattr(engine, "idle_rows", _all_rows)  # every row ticked, as before idle rows were left out
        every, _, _ = _run(seed, 45)
    assert idle > 0 and woken > 0  # the run did leave rows out and wake them up
    assert skipped.items.n == every.items.n and skipped.ticks == every.ticks
    for col in VMTable.SCHEMA:
        np.testing.assert_array_equal(skipped.vms.view(col), every.vms.view(col), err_msg=col)
    for col in ItemTable.SCHEMA:
        np.testing.assert_array_equal(skipped.items.view(col), every.items.view(col), err_msg=col)
    for col in FileTable.SCHEMA:
        np.testing.assert_array_equal(skipped.cache.files.view(col), every.cache.files.view(col), err_msg=col)
    a, b = skipped.ended_charges, every.ended_charges
    np.testing.assert_array_equal(a.rows[: a.n], b.rows[: b.n])
    assert a.n == b.n


@pytest.mark.parametrize("run", sorted(RUNS))
def test_golden_runs_give_their_tables_with_every_idle_row_left_out(run, monkeypatch):
    """The golden runs (shuffle servers, reduces waiting for map outputs) with idle rows left out at every tick that
    has one, not only above MIN_IDLE_ROWS (which these small clusters never reach)."""
    monkeypatch.setattr(engine, "MIN_IDLE_ROWS", 1)
    live_items, left_out = engine.live_items, []

    def counted(items):
        live = live_items(items)
        left_out.append(live is not items)
        return live

    monkeypatch.setattr(engine, "live_items", counted)
    found = run_digests(*RUNS[run])
    assert sum(left_out) > len(left_out) // 4  # most ticks had idle rows
    assert found == json.loads(GOLDEN.read_text())[run]
