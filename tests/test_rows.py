"""`Column` (vcloud/rows.py), the one idiom for attributes backed by array rows: hosts and VMs, trackers, ended
attempts and tasks each declare theirs, and read plain Python values of their row."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pytest

from hadoop_layer.ended import EndedAttempt, EndedAttempts, EndedTask, EndedTasks
from hadoop_layer.tracker import TaskTracker
from vcloud.rows import Column


class Thing:
    """An object whose numbers live in `table`, at row `at`."""

    size = Column[float]("table", at="at")
    count = Column[int]("table", column="counts", at="at", cell=1, writable=True)
    flag = Column[bool]("record", fields=True, at="at")
    label = Column[str]("table", column="codes", at="at", convert="abc".__getitem__)
    owned = Column[int]("table", column="counts", at="at", cell=0, mirror=True)

    def __init__(self, at: int) -> None:
        self.at = at
        self.table = SimpleNamespace(
            size=np.array([1.5, 2.5]), counts=np.zeros((2, 2), np.int64), codes=np.array([2, 0])
        )
        self.record = np.zeros(2, dtype=[("flag", np.bool_)])


def test_a_column_reads_its_cell_as_a_python_value_and_writes_only_if_writable_or_mirrored():
    thing = Thing(1)
    assert thing.size == 2.5 and type(thing.size) is float
    assert thing.label == "a" and thing.flag is False
    thing.count = 7
    assert thing.table.counts.tolist() == [[0, 0], [0, 7]] and thing.count == 7 and type(thing.count) is int
    with pytest.raises(AttributeError, match="read from its table"):
        thing.size = 1.0
    thing.owned = 3  # kept on the object, the cell a copy
    assert thing._owned == 3 and thing.owned == 3 and thing.table.counts.tolist() == [[0, 0], [3, 7]]


def test_every_array_backed_attribute_is_a_declared_column():
    """A new column of the ended attempts' or tasks' rows, or of the heartbeat clock, needs its line on the class."""

    def columns(cls):
        return {n for n, v in vars(cls).items() if isinstance(v, Column)}

    bookkeeping = {"gid", "job", "group", "index", "node", "charges", "plan", "ends_from", "ends_n"}  # read by methods
    assert columns(EndedAttempt) == set(EndedAttempts.COLUMNS) - bookkeeping
    assert columns(EndedTask) == set(EndedTasks.DTYPE.names)
    assert columns(TaskTracker) == {"map_slots", "reduce_slots", "interval_s", "offset_s", "heartbeats"}
