"""The batched forms of what ending task attempts does, against the one-by-one forms on random inputs: the tick's
finished items leave the item table together (`ItemTable.remove_rows`, `CloudModel.stop_items`)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hadoop_layer.profiles import PUMA
from policies.speculation.hadoop import HadoopSpeculation
from tests.helpers import small_cluster, uniform_maps
from vcloud import CloudModel, WorkItem
from vcloud.tables import ItemTable
from vcloud.work import ItemState, Kind, Phase


def _columns(table: ItemTable) -> list[np.ndarray]:
    return [getattr(table, name)[: table.n].copy() for name in (*table.SCHEMA, *table.WIDE)]


@settings(max_examples=100, deadline=None)
@given(st.integers(1, 40), st.data())
def test_removing_rows_at_once_is_removing_them_in_turn(n, data):
    """`remove_rows` leaves the rows, owners and layout as `remove` of each item in turn (from the row it has then)."""
    tables = ItemTable(), ItemTable()
    rng = np.random.default_rng(n)
    for table in tables:
        table.widen(3)
    for k in range(n):
        values = rng.random(6)
        for table in tables:
            row = table.add_item(k, k, *values[:4])
            table.usr_s[row], table.stream_need[row, k % 3], table.tag[row] = values[5], values[0], k
    gone = data.draw(st.lists(st.integers(0, n - 1), unique=True, max_size=n))
    one, many = tables
    for k in gone:  # item k's row was k, and is where it is now
        one.remove(one.owner.index(k))
    row_of = {owner: row for row, owner in enumerate(one.owner)}
    moved = many.remove_rows(gone)
    assert one.n == many.n and one.owner == many.owner and one.layout == many.layout
    assert all(row_of[owner] == row for owner, row in moved)
    for a, b in zip(_columns(one), _columns(many), strict=True):
        np.testing.assert_array_equal(a, b)


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
    """`stop_items` gives the items the charges' rows, states, end times and rows of `stop_item` one by one, and
    leaves the item table and the ended charges alike."""
    gone = data.draw(st.lists(st.integers(0, n - 1), unique=True, min_size=1, max_size=n))
    (one, a), (many, b) = _cloud(n), _cloud(n)
    for k in gone:
        one.stop_item(a[k], ItemState.DONE, 10.0 + k)
    many.stop_items([b[k] for k in gone], ItemState.DONE, [10.0 + k for k in gone])
    for x, y in zip(a, b, strict=True):
        assert (x.row, x.state, x.end_s, x.ended_row) == (y.row, y.state, y.end_s, y.ended_row)
    assert one.progress_moves == many.progress_moves
    assert one.items.owner == [a[b.index(o)] for o in many.items.owner]
    np.testing.assert_array_equal(one.ended_charges.rows[: one.ended_charges.n],
                                  many.ended_charges.rows[: many.ended_charges.n])  # fmt: skip
    for x, y in zip(_columns(one.items), _columns(many.items), strict=True):
        np.testing.assert_array_equal(x, y)


def _one_by_one(model: CloudModel, items: list[WorkItem], state: str, ends: list[float]) -> list:
    """The tick's finished items stopped as before `stop_items`: `stop_item` of each in turn."""
    for item, end in zip(items, ends, strict=True):
        model.stop_item(item, state, end)
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
                patch.setattr(CloudModel, "stop_items", _one_by_one)
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


@given(st.floats(0.0, 1e7, allow_nan=False), st.lists(st.floats(0.0, 1.0, allow_nan=False), max_size=20))
def test_phase_ends_in_one_array_sum_are_those_of_python_floats(start, offsets):
    """The tick adds its start to the phase ends' offsets in one NumPy sum: each is `start + float(offset)`."""
    one = [start + float(o) for o in np.array(offsets)]
    assert (start + np.asarray(np.array(offsets), dtype=np.float64)).tolist() == one
