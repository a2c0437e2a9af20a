"""Ending work items together (`ItemTable.remove_rows`, `CloudModel.stop_items`: the tick's finished items leave the
item table at once; a kill is one of them) against the plain one-by-one forms kept here as oracles."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hadoop_layer.model import HadoopModel
from hadoop_layer.profiles import PUMA
from hadoop_layer.shuffle import ServeItem
from policies.speculation.hadoop import HadoopSpeculation
from tests.helpers import small_cluster, uniform_maps
from vcloud import CloudModel, WorkItem
from vcloud.agents import CHARGES
from vcloud.tables import ItemTable
from vcloud.work import ItemState, Kind, Phase


def _columns(table: ItemTable) -> list[np.ndarray]:
    return [getattr(table, name)[: table.n].copy() for name in (*table.SCHEMA, *table.WIDE)]


def remove_one(table: ItemTable, row: int) -> object | None:
    """Free `row`, the last row moving into it and left blank; the owner that moved (the plain form of one
    removal)."""
    last = table.n - 1
    moved = None
    if row != last:
        for name in table._names:
            col = getattr(table, name)
            col[row] = col[last]
        moved = table.owner[last]
        table.owner[row] = moved
    for name in table.SCHEMA:
        getattr(table, name)[last] = 0
    for name, (_, fill) in table.WIDE.items():
        getattr(table, name)[last] = fill
    table.owner.pop()
    table.n -= 1
    table.layout += 1
    return moved


def stop_one(model: CloudModel, item: WorkItem, state: str, at: float) -> None:
    """Take one item off its VM, its charges kept (the plain form of one stop)."""
    row = item.row
    item.ended_row = model.ended_charges.add_rows(np.array([[getattr(model.items, c)[row] for c in CHARGES]]))
    moved = remove_one(model.items, row)
    model._progress_moved()
    if moved is not None:
        moved.row = row
    item.row, item.state, item.end_s = None, state, at


@settings(max_examples=100, deadline=None)
@given(st.integers(1, 40), st.data())
def test_removing_rows_at_once_is_removing_them_in_turn(n, data):
    """`remove_rows` leaves the rows (the freed ones blank), owners and layout as `remove_one` of each item in turn
    (from its row then)."""
    tables = ItemTable(), ItemTable()
    rng = np.random.default_rng(n)
    for table in tables:
        table.widen(3)
    for k in range(n):
        values = rng.random(6)
        cells = {name: rng.random(getattr(tables[0], name).shape[1:]) * 100 for name in tables[0]._names}
        for table in tables:
            row = table.add_item(k, k, *values[:4])
            for name, value in cells.items():  # every column its own values (each cast to the column's type)
                getattr(table, name)[row] = value
            table.usr_s[row], table.stream_need[row, k % 3], table.tag[row] = values[5], values[0], k
    gone = data.draw(st.lists(st.integers(0, n - 1), unique=True, max_size=n))
    one, many = tables
    for k in gone:  # item k's row was k, and is where it is now
        remove_one(one, one.owner.index(k))
    row_of = {owner: row for row, owner in enumerate(one.owner)}
    moved = many.remove_rows(gone)
    assert one.n == many.n and one.owner == many.owner and one.layout == many.layout
    assert all(row_of[owner] == row for owner, row in moved)
    for name in many._names:  # whole columns: the freed rows are blank again, as the next add expects
        np.testing.assert_array_equal(getattr(one, name), getattr(many, name))
    assert many.blank_past_end()


def _cloud(items: int) -> tuple[CloudModel, list[WorkItem]]:
    model = CloudModel(rng=1)
    host = model.add_host("h", cores=4, core_mhz=2000.0, mem_mb=8192.0, disk_mbps=100.0, nic_mbps=100.0)
    vms = [model.add_vm(f"v{i}", host, vcpus=1, mem_mb=1024.0) for i in range(2)]
    made = []
    for k in range(items):
        item = WorkItem(model, [Phase("cpu", Kind.CPU, 100.0 + k)], mem_mb=10.0)
        vms[k % 2].run(item)
        model.items.usr_s[item.row], model.items.io_mb[item.row] = 0.5 * k, 2.0 * k
        made.append(item)
    return model, made


@settings(max_examples=40, deadline=None)
@given(st.integers(1, 12), st.data())
def test_stopping_items_at_once_is_stopping_them_in_turn(n, data):
    """`stop_items` gives the items the charges' rows, states, end times and rows of `stop_one` one by one, and
    leaves the item table and the ended charges alike."""
    gone = data.draw(st.lists(st.integers(0, n - 1), unique=True, min_size=1, max_size=n))
    (one, a), (many, b) = _cloud(n), _cloud(n)
    for k in gone:
        stop_one(one, a[k], ItemState.DONE, 10.0 + k)
    many.stop_items([b[k] for k in gone], ItemState.DONE, [10.0 + k for k in gone])
    for x, y in zip(a, b, strict=True):
        assert (x.row, x.state, x.end_s, x.ended_row) == (y.row, y.state, y.end_s, y.ended_row)
    assert one.progress_moves == many.progress_moves
    assert one.items.owner == [a[b.index(o)] for o in many.items.owner]
    np.testing.assert_array_equal(one.ended_charges.rows[: one.ended_charges.n],
                                  many.ended_charges.rows[: many.ended_charges.n])  # fmt: skip
    for x, y in zip(_columns(one.items), _columns(many.items), strict=True):
        np.testing.assert_array_equal(x, y)


def _one_by_one(model, items: list[WorkItem], state: str, ends: list[float]) -> list:
    """Items stopped as before `stop_items`: `stop_one` of each in turn, the shuffle server following the item that
    moves into the freed row."""
    for item, end in zip(items, ends, strict=True):
        last = model.items.owner[model.items.n - 1]
        stop_one(model, item, state, end)
        if last is not item:
            model.shuffle.moved(last, last.row)
        if isinstance(item, ServeItem):
            model.shuffle.item_stopped(item)
    return []


@pytest.mark.parametrize("copiers", [False, True])
def test_a_cluster_ends_its_attempts_as_one_by_one(copiers, monkeypatch):
    """A small cluster's run (map bursts that end in one tick, reduces fed through the serving queues, Hadoop's
    speculation) gives the same tasks table, jobs and heartbeats with the tick's ends stopped together as one by
    one, and the phase end times the tick's arithmetic gave one row at a time."""
    frames = []
    for batched in (True, False):
        with monkeypatch.context() as patch:
            if not batched:
                patch.setattr(HadoopModel, "stop_items", _one_by_one)
            model = small_cluster(4, 2, HadoopSpeculation(), reduce_slots=2, shuffle_serving=True,
                                  shuffle_copiers=copiers, reduce_slowstart=0.0)  # fmt: skip
            for j in range(3):
                model.add_job(f"j{j}", PUMA["tera-sort"], 5.0 * j, uniform_maps(12, 16.0, 3.0 + j), 3)
            model.run_until(2_000)
            assert all(job.state == "succeeded" for job in model.jobtracker.jobs)
            frames.append((model.tasks_frame(), model.jobs_frame(), model.heartbeat_clock.count.copy()))
    (tasks, jobs, beats), (tasks_one, jobs_one, beats_one) = frames
    pd.testing.assert_frame_equal(tasks, tasks_one)
    pd.testing.assert_frame_equal(jobs, jobs_one)
    np.testing.assert_array_equal(beats, beats_one)
