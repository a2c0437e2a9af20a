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

import math
from typing import TYPE_CHECKING

from mesa import Agent
from mesa.time import Priority

from hadoop_layer.tasks import TaskAttempt, TaskKind
from vcloud.work import ItemState

if TYPE_CHECKING:
    from hadoop_layer.model import HadoopModel
    from vcloud import VM


class AttemptSet(dict[TaskAttempt, None]):
    """A set of attempts that iterates in launch order. A plain set iterates by memory address, which differs
    from process to process: policies that loop over a tracker's attempts would break seeded runs' ties and
    sum their floats in a different order each time (DESIGN.md 3: same seed, same results, in any process)."""

    def add(self, attempt: TaskAttempt) -> None:
        self[attempt] = None

    def discard(self, attempt: TaskAttempt) -> None:
        self.pop(attempt, None)


class TaskTracker(Agent):
    def __init__(self, model: HadoopModel, vm: VM, node: int, rack: int, interval_s: float, offset_s: float) -> None:
        super().__init__(model)
        cfg = model.hadoop
        self.vm, self.node, self.rack = vm, node, rack
        self.name = vm.name
        self.map_slots, self.reduce_slots = cfg.map_slots, cfg.reduce_slots
        self.heap_mb, self.io_sort_mb = cfg.child_heap_mb, cfg.io_sort_mb
        self.running: dict[TaskKind, AttemptSet] = {TaskKind.MAP: AttemptSet(), TaskKind.REDUCE: AttemptSet()}
        self.history: list[TaskAttempt] = []  # finished attempts (done, killed, failed), in end order
        self.interval_s, self.offset_s = interval_s, offset_s
        self.heartbeats = 0
        self._next_heartbeat: float | None = None

    def free(self, kind: TaskKind) -> int:
        slots = self.map_slots if kind == TaskKind.MAP else self.reduce_slots
        return max(slots - len(self.running[kind]), 0)

    @property
    def tasks_done(self) -> int:
        return sum(1 for a in self.history if a.state == ItemState.DONE)

    # ---- heartbeat clock --------------------------------------------------------------------------
    def wake(self) -> None:
        """Make sure a heartbeat is coming (next beat strictly after now)."""
        if self._next_heartbeat is not None:
            return
        self._next_heartbeat = self.next_beat_s()
        self.model.schedule_event(self.heartbeat, at=self._next_heartbeat, priority=Priority.DEFAULT)

    def next_beat_s(self) -> float:
        """The first heartbeat time of this tracker strictly after now: when the JobTracker hears of what ended."""
        now = float(self.model.time)
        if self._next_heartbeat is not None and self._next_heartbeat > now:
            return self._next_heartbeat
        k = math.floor((now - self.offset_s) / self.interval_s) + 1
        while self.offset_s + k * self.interval_s <= now:  # rounding must not give "now" again
            k += 1
        return self.offset_s + k * self.interval_s

    def heartbeat(self) -> None:
        """With policies that are quiet when idle (`TaskScheduler.quiet_when_idle`), a heartbeat that could launch
        nothing is counted but does not reach the JobTracker: trackers woken together (a job's setup queued, its
        maps made schedulable) cost one test each but the few that get the work (issue 16)."""
        self._next_heartbeat = None
        self.heartbeats += 1
        jobtracker = self.model.jobtracker
        if jobtracker.quiet_when_idle and not jobtracker.wants_heartbeat(self):
            return  # what the heartbeat would do: nothing, and stay asleep
        jobtracker.heartbeat(self)
        if jobtracker.wants_heartbeat(self):
            self.wake()

    def __repr__(self) -> str:
        return f"TaskTracker({self.name})"
