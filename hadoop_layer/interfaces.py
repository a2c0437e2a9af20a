"""The policy interfaces of the Hadoop layer (DESIGN.md section 6) and the read-only view they get.

Policies read the cluster through `ClusterView` and change it only through what they return:
launches (scheduler, speculation) and slot actions (slot manager). Implementations live in `policies/`.
"""

from __future__ import annotations

import math
from abc import ABC, abstractmethod
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol, runtime_checkable

import numpy as np

from hadoop_layer.hdfs import Locality
from hadoop_layer.ledger import RunningLedger
from hadoop_layer.speculation_outlook import LookAhead, Outlook
from hadoop_layer.tasks import Job, Task, TaskAttempt, TaskKind, TaskState
from vcloud.work import ItemState

if TYPE_CHECKING:
    from hadoop_layer.config import HadoopConfig
    from hadoop_layer.ended import EndedAttempt
    from hadoop_layer.jobtracker import JobTracker
    from hadoop_layer.model import HadoopModel
    from hadoop_layer.tracker import TaskTracker


@dataclass(frozen=True)
class Launch:
    """Start an attempt of `task` on the heartbeating tracker (in a slot of the tracker's size unless given)."""

    task: Task
    locality: Locality | None = None
    speculative: bool = False
    heap_mb: float | None = None
    io_sort_mb: float | None = None


# Slot actions: what a slot manager (or a preempting scheduler) returns. Each carries out itself through the
# JobTracker's public verbs (`apply`), so a new kind of action is one class here and no change in the JobTracker.
@dataclass(frozen=True)
class SetSlots:
    tracker: TaskTracker
    map_slots: int | None = None
    reduce_slots: int | None = None

    def apply(self, jobtracker: JobTracker) -> None:
        t = self.tracker
        if self.map_slots is not None:
            t.map_slots = max(int(self.map_slots), 0)
        if self.reduce_slots is not None:
            t.reduce_slots = max(int(self.reduce_slots), 0)
        jobtracker.count_slots()
        t.wake()


@dataclass(frozen=True)
class SetSlotMemory:
    """New slot heap and io.sort.mb for attempts launched on `tracker` from now on."""

    tracker: TaskTracker
    heap_mb: float
    io_sort_mb: float

    def apply(self, jobtracker: JobTracker) -> None:
        if not (self.heap_mb > 0 and 0 < self.io_sort_mb < self.heap_mb):
            raise ValueError(f"slot memory: need 0 < io_sort_mb < heap_mb, got {self.io_sort_mb}, {self.heap_mb}")
        self.tracker.heap_mb, self.tracker.io_sort_mb = self.heap_mb, self.io_sort_mb


@dataclass(frozen=True)
class Kill:
    attempt: TaskAttempt

    def apply(self, jobtracker: JobTracker) -> None:
        if not self.attempt.task.role:  # a job's setup or cleanup attempt holds a slot but is no map to act on
            jobtracker.kill(self.attempt)


@dataclass(frozen=True)
class Restart:
    """Kill `attempt` and launch its task again at once in the freed slot, resized (FlexSlot Algorithm 1)."""

    attempt: TaskAttempt
    heap_mb: float
    io_sort_mb: float

    def apply(self, jobtracker: JobTracker) -> None:
        attempt = self.attempt
        if attempt.task.role or attempt.state != ItemState.RUNNING:
            return
        task, tracker = attempt.task, attempt.tracker
        jobtracker.kill(attempt)
        if task.state == TaskState.PENDING and tracker.free(task.kind) > 0:
            locality = jobtracker.model.locality_of(task, tracker.node) if task.kind == TaskKind.MAP else None
            jobtracker.launch(tracker, Launch(task, locality, False, self.heap_mb, self.io_sort_mb))


@dataclass(frozen=True)
class Repartition:
    """Stop a running map at its input offset and give its unprocessed input to new maps (SkewTune's take-over).

    The offset is `attempt.input_done_mb`, the input its map function has consumed. `shares`: the relative sizes
    of the contiguous pieces the unprocessed range [offset, split) is cut into, in range order. Each piece becomes
    a map task of the same job whose input lives on the stopped attempt's node (others read it over the network);
    reduces fetch its output like any map's, so the job's output is the concatenation in range order. `order`:
    the order in which the pieces are offered to the scheduler (indices into `shares`; default range order).
    `scan_mb`: MB the stopped attempt reads before it finishes its own part (a scan of the unprocessed input).
    `delay_s`: no piece reads its input until this long from now (a mitigation job's start-up). Other attempts
    of the task are killed.
    """

    attempt: TaskAttempt
    shares: tuple[float, ...]
    order: tuple[int, ...] | None = None
    scan_mb: float = 0.0
    delay_s: float = 0.0

    def apply(self, jobtracker: JobTracker) -> None:
        if not self.attempt.task.role:
            jobtracker.repartition(self)


SlotAction = SetSlots | SetSlotMemory | Kill | Restart | Repartition


class ClusterView:
    """What policies may read: jobs in submission order, trackers, settings, time, attempt metrics."""

    def __init__(self, model: HadoopModel) -> None:
        self._model = model

    @property
    def now(self) -> float:
        return float(self._model.time)

    @property
    def config(self) -> HadoopConfig:
        return self._model.hadoop

    @property
    def rng(self) -> np.random.Generator:
        return self._model.rng

    @property
    def jobs(self) -> list[Job]:
        """Running jobs in submission order."""
        return self._model.jobtracker.running_jobs

    @property
    def ledger(self) -> RunningLedger:
        """Sums over the running jobs (hadoop_layer/ledger.py)."""
        return self._model.jobtracker.ledger

    def jobs_in_fifo_order(self) -> list[Job]:
        """Running jobs by priority, start time, id (FIFO_JOB_QUEUE_COMPARATOR); do not change the list."""
        return self._model.jobtracker.ledger.queue_order()

    @property
    def trackers(self) -> list[TaskTracker]:
        return self._model.trackers

    def map_capacity(self) -> int:
        return self._model.jobtracker.capacity[TaskKind.MAP]

    def reduce_capacity(self) -> int:
        return self._model.jobtracker.capacity[TaskKind.REDUCE]

    def running(self, kind: TaskKind) -> int:
        """Attempts of this kind running in the cluster now."""
        return self._model.jobtracker.running_attempts[kind]

    def locality(self, task: Task, tracker: TaskTracker) -> Locality:
        return self._model.locality_of(task, tracker.node)

    def ended_count(self) -> int:
        """Attempts ended so far (done, killed, failed)."""
        return self._model.ended.n

    def ended_since(self, seen: int) -> list[EndedAttempt]:
        """Records of the attempts that ended from the `seen`-th on, tracker by tracker, each's in end order."""
        return self._model.ended.since(seen)

    @staticmethod
    def progress_rate(attempt: TaskAttempt, now: float) -> float:
        """Progress score per second since the attempt started (LATE's progress rate)."""
        elapsed = now - (attempt.start_s or now)
        return attempt.progress_score / elapsed if elapsed > 0 else 0.0

    @staticmethod
    def time_to_end(attempt: TaskAttempt, now: float) -> float:
        """LATE's estimate (1 - progress) / progress rate; inf before any progress."""
        rate = ClusterView.progress_rate(attempt, now)
        return (1.0 - attempt.progress_score) / rate if rate > 0 else float("inf")

    @staticmethod
    def input_speed_mbps(attempt: TaskAttempt, now: float) -> float:
        """Input MB processed per second so far (maps: progress x split size)."""
        elapsed = now - (attempt.start_s or now)
        return attempt.progress_score * attempt.task.input_mb / elapsed if elapsed > 0 else 0.0


class TaskScheduler(ABC):
    """Chooses non-running tasks for a heartbeating tracker's free slots. A scheduler that also acts between
    heartbeats (Fair's and Quincy's preemption) is `Periodic` as well.

    `quiet_when_idle`: `assign` changes nothing when there is nothing it could launch (no pending task for the
    tracker's free slots), so such a heartbeat need not reach it (FIFO); Fair's heartbeats move its locality clocks."""

    name = "scheduler"
    quiet_when_idle = False

    @abstractmethod
    def assign(self, tracker: TaskTracker, cluster: ClusterView) -> list[Launch]: ...


class SpeculationPolicy(ABC):
    """Chooses running tasks to back up on a heartbeating tracker's free slots: the rule, as its paper writes it
    (policies/speculation/late.py, hadoop.py). Speed machinery, if any, sits behind it
    (hadoop_layer/speculation_outlook.py)."""

    name = "speculation"

    @abstractmethod
    def backups(
        self, tracker: TaskTracker, cluster: ClusterView, free_maps: int, free_reduces: int
    ) -> list[Launch]: ...

    def may_back_up(self, cluster: ClusterView) -> bool:
        """Could some tracker with a free slot get a backup now? Asked once per tick and when a tracker decides
        whether to keep heartbeating (tracker.py). True (the default) keeps idle trackers heartbeating, which is
        always correct; a policy answers False when it can tell, to spare the heartbeats."""
        return True


class SlotManager(ABC):
    """Changes slot counts and sizes, kills or repartitions attempts, every `period_s` seconds (None: never).

    With `wants_idle_slots`, `idle_map_slot` is also called in the tick a map slot frees (an attempt ended or was
    killed) if a tracker then has a free map slot and no running job has a pending map: the slot idles."""

    name = "slots"
    period_s: float | None = None
    wants_idle_slots = False

    @abstractmethod
    def adjust(self, cluster: ClusterView) -> list[SlotAction]: ...

    def idle_map_slot(self, cluster: ClusterView) -> list[SlotAction]:
        """What to do with an idle map slot (only called with `wants_idle_slots`); nothing by default."""
        return []


@runtime_checkable
class Periodic(Protocol):
    """Anything the JobTracker runs between heartbeats: `adjust` every `period_s` simulated seconds while jobs run
    (None or 0: never). Slot managers are; a scheduler that preempts is too. Found among the policies whenever
    one is set (`JobTracker.scheduler = ...`), before or after the model starts."""

    period_s: float | None

    def adjust(self, cluster: ClusterView) -> list[SlotAction]: ...


class NoSpeculation(LookAhead, SpeculationPolicy):
    """No backups: nothing for the heartbeat clock to wait for."""

    name = "none"

    def backups(self, tracker: TaskTracker, cluster: ClusterView, free_maps: int, free_reduces: int) -> list[Launch]:
        return []

    def verdict(self, cluster: ClusterView) -> bool:
        return False

    def outlook(self, cluster: ClusterView) -> Outlook:
        return Outlook(False, math.inf, math.inf, math.inf)


class NoSlotManager(SlotManager):
    name = "none"

    def adjust(self, cluster: ClusterView) -> list[SlotAction]:
        return []
