"""TaskTracker: the slots of one slave VM, what runs in them, and its heartbeat clock.

Heartbeats come at offset + k x interval, as in Hadoop. A heartbeat that can launch nothing changes
nothing, so a tracker only heartbeats while it has a free slot and something could fill it (pending
tasks, or a possible speculative backup); it is woken when that changes (a submission, an attempt's end,
a requeued task, reduces passing slow start, a backup becoming possible). The launches are the same as
with a heartbeat every interval, with far fewer Python calls. Policies whose heartbeats have side
effects even when nothing is launched (delay scheduling counts skipped heartbeats) keep trackers
awake through `SpeculationPolicy.may_back_up`-like hooks of their own.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from mesa import Agent

from hadoop_layer.tasks import TaskAttempt, TaskKind
from vcloud.rows import Column

if TYPE_CHECKING:
    from hadoop_layer.heartbeats import HeartbeatClock
    from hadoop_layer.model import HadoopModel
    from vcloud import VM


class AttemptSet(dict[TaskAttempt, None]):
    """A set of attempts that iterates in launch order. A plain set iterates by memory address, which differs
    from process to process: policies that loop over a tracker's attempts would break seeded runs' ties and
    sum their floats in a different order each time (DESIGN.md 3: same seed, same results, in any process).
    Its size is mirrored in the heartbeat clock's `busy` column, for the clock's array tests."""

    def __init__(self, clock: HeartbeatClock, row: int, col: int) -> None:
        super().__init__()
        self._clock, self._row, self._col = clock, row, col

    def add(self, attempt: TaskAttempt) -> None:
        self[attempt] = None
        self._clock.busy[self._row, self._col] = len(self)

    def discard(self, attempt: TaskAttempt) -> None:
        self.pop(attempt, None)
        self._clock.busy[self._row, self._col] = len(self)


class TaskTracker(Agent):
    """A slave's TaskTracker. Its slot counts and heartbeat clock are its row (`node`) of the clock's arrays, which the
    clock's compiled look-ahead reads (`Column`, vcloud/rows.py); it owns its slot counts (`mirror`: kept as
    `_map_slots`, `_reduce_slots` too, which `free` reads on every heartbeat)."""

    map_slots = Column[int]("clock", column="slots", at="node", cell=0, mirror=True)
    reduce_slots = Column[int]("clock", column="slots", at="node", cell=1, mirror=True)
    interval_s = Column[float]("clock", column="interval", at="node")
    offset_s = Column[float]("clock", column="offset", at="node")
    heartbeats = Column[int]("clock", column="count", at="node")

    def __init__(self, model: HadoopModel, vm: VM, node: int, rack: int) -> None:
        super().__init__(model)
        cfg = model.hadoop
        self.vm, self.node, self.rack = vm, node, rack
        self.name = vm.name
        self.clock = model.heartbeat_clock
        self.clock.add(self)
        self.map_slots, self.reduce_slots = cfg.map_slots, cfg.reduce_slots
        self.heap_mb, self.io_sort_mb = cfg.child_heap_mb, cfg.io_sort_mb
        self.running: dict[TaskKind, AttemptSet] = {
            TaskKind.MAP: AttemptSet(self.clock, node, 0),
            TaskKind.REDUCE: AttemptSet(self.clock, node, 1),
        }

    def free(self, kind: TaskKind) -> int:
        free = (self._map_slots if kind == TaskKind.MAP else self._reduce_slots) - len(self.running[kind])
        return free if free > 0 else 0

    # ---- heartbeat clock (hadoop_layer/heartbeats.py) -----------------------------------------------------
    def wake(self) -> None:
        """Make sure a heartbeat is coming (next beat strictly after now)."""
        self.clock.wake(self.node)

    def next_beat_s(self) -> float:
        """The first heartbeat time of this tracker strictly after now: when the JobTracker hears of what ended."""
        return self.clock.next_beat(self.node, float(self.model.time))

    def beat(self) -> bool:
        """A heartbeat (the clock has counted it); False if it was quiet. With policies that are quiet when idle
        (`TaskScheduler.quiet_when_idle`), a heartbeat that could launch nothing does not reach the JobTracker
        and the tracker sleeps until woken (issue 16)."""
        jobtracker = self.model.jobtracker
        if jobtracker.quiet_when_idle and not jobtracker.wants_heartbeat(self):
            return False  # what the heartbeat would do: nothing, and stay asleep
        jobtracker.heartbeat(self)
        if jobtracker.wants_heartbeat(self):
            self.wake()
        return True

    def __repr__(self) -> str:
        return f"TaskTracker({self.name})"
