"""Tiny fakes of the ClusterView and of what it hands out, for speculation policies worked out on paper."""

from __future__ import annotations

import itertools
from types import SimpleNamespace

from hadoop_layer.hdfs import Locality
from hadoop_layer.tasks import TaskKind

MAP, REDUCE = TaskKind.MAP, TaskKind.REDUCE
_ENDED = itertools.count()  # the order attempts end in (`finished`)


class FakeTracker:
    def __init__(self, node: int, map_slots: int = 2, reduce_slots: int = 1) -> None:
        self.node, self.name, self.model = node, f"n{node}", SimpleNamespace(ticks=1)
        self.map_slots, self.reduce_slots = map_slots, reduce_slots
        self.running: dict[TaskKind, set] = {MAP: set(), REDUCE: set()}
        self.history: list = []  # its ended attempts (`finished`), which the cluster hands out (`ended_since`)

    def free(self, kind: TaskKind) -> int:
        return (self.map_slots if kind == MAP else self.reduce_slots) - len(self.running[kind])


class FakeJob:
    def __init__(self, maps: int = 0, state: str = "running") -> None:
        self.state, self.maps, self.reduces, self.finished_maps = state, [None] * maps, [], 0
        self.running_tasks: dict[TaskKind, dict] = {MAP: {}, REDUCE: {}}
        self.pending = {MAP: 0, REDUCE: 0}

    def count(self, kind: TaskKind, state: str) -> int:
        return self.pending[kind] if state == "pending" else 0

    @property
    def pending_maps(self) -> int:
        return self.pending[MAP]

    @property
    def pending_reduces(self) -> int:
        return self.pending[REDUCE]

    def reduces_schedulable(self) -> bool:
        return True


class FakeTask:
    def __init__(self, job: FakeJob, kind: TaskKind = MAP) -> None:
        self.job, self.kind, self.state = job, kind, "running"
        self.active: list = []
        self.nodes_tried: set[int] = set()
        self.children: list = []  # pieces of a repartitioned map (SkewTune): none here


class FakeAttempt:
    """`phases`: phase names; `row` None, so SAMR sees 0 % of the current phase done."""

    def __init__(self, task, tracker, start_s, progress, phases=("read", "map"), index=1, speculative=False):
        self.task, self.tracker, self.start_s, self.progress_score = task, tracker, start_s, progress
        self.phases = [SimpleNamespace(name=n) for n in phases]
        self.phase_index, self.row, self.speculative = index, None, speculative
        self.state, self.end_s, self.phase_end_s = "running", None, []


class FakeCluster:
    def __init__(self, now: float, jobs: list, trackers: list) -> None:
        self.now, self.jobs, self.trackers = now, jobs, trackers

    def map_capacity(self) -> int:
        return sum(t.map_slots for t in self.trackers)

    def reduce_capacity(self) -> int:
        return sum(t.reduce_slots for t in self.trackers)

    def running(self, kind: TaskKind) -> int:
        return sum(len(t.running[kind]) for t in self.trackers)

    def locality(self, task, tracker) -> Locality:
        return Locality.RACK

    def _ended(self) -> list:
        return sorted((a for t in self.trackers for a in t.history), key=lambda a: a.ended_at)

    def ended_count(self) -> int:
        return len(self._ended())

    def ended_since(self, seen: int) -> list:
        """As ClusterView's: the attempts ended from the `seen`-th on, tracker by tracker."""
        return sorted(self._ended()[seen:], key=lambda a: a.tracker.node)


def run(job: FakeJob, tracker: FakeTracker, start_s: float, progress: float, kind=MAP, **kwargs) -> FakeTask:
    """A running task of `job` with one attempt on `tracker`."""
    task = FakeTask(job, kind)
    attempt = FakeAttempt(task, tracker, start_s, progress, **kwargs)
    task.active.append(attempt)
    task.nodes_tried.add(tracker.node)
    tracker.running[kind].add(attempt)
    job.running_tasks[kind][task] = None
    return task


def finished(job: FakeJob, tracker: FakeTracker, start_s: float, end_s: float, kind=MAP, **kwargs) -> FakeAttempt:
    """A done attempt in the tracker's history."""
    attempt = FakeAttempt(FakeTask(job, kind), tracker, start_s, 1.0, **kwargs)
    attempt.state, attempt.end_s, attempt.ended_at = "done", end_s, next(_ENDED)
    tracker.history.append(attempt)
    return attempt


def back_up(task: FakeTask, tracker: FakeTracker) -> None:
    """What the JobTracker does with a speculative Launch."""
    attempt = FakeAttempt(task, tracker, 100.0, 0.0, speculative=True)
    task.active.append(attempt)
    task.nodes_tried.add(tracker.node)
    tracker.running[task.kind].add(attempt)
