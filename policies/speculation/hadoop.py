"""Hadoop 1.x default speculation (algorithms.md 2.5, H121 TaskInProgress.hasSpeculativeTask).

A running task gets one backup when it has a single active attempt, its progress is at least
SPECULATIVE_GAP (0.2) below the average progress of its job's tasks of that kind, it has run for at
least SPECULATIVE_LAG (60 s), and the heartbeating node never ran it. At most one speculative map and
one speculative reduce per heartbeat (JobQueueTaskScheduler stops after one off-switch/speculative map;
reduces are one per heartbeat anyway). Running maps are searched node-local first, as Hadoop's
running-map caches are.
"""

from __future__ import annotations

import math
from collections.abc import Iterator

import numpy as np

from hadoop_layer.interfaces import ClusterView, Launch, Outlook, RunningArrays, SpeculationPolicy
from hadoop_layer.tasks import Task, TaskKind, TaskState
from hadoop_layer.tracker import TaskTracker
from policies.speculation.lag_bounds import running_lag_bounds
from vcloud.work import ItemState

SPECULATIVE_GAP = 0.2
SPECULATIVE_LAG_S = 60.0
MAX_TASK_EXECS = 1
LAG_MARGIN_S = 1e-6  # quiet_until ends this much early: now - start is rounded
_EPS = 1e-9  # array sums differ from Job.progress's in the last bits: closer calls than this go to the loop


def speculatable_in(running: dict[Task, None], job_progress: float, now: float, node: int) -> Iterator[Task]:
    """The tasks of `running` that TaskInProgress.hasSpeculativeTask accepts, in order, cheapest tests first. A task
    may be backed up by another node (`node`: -1 for any) once it has run SPECULATIVE_LAG_S, has at most
    MAX_TASK_EXECS attempts, is still running, lags the job's average (`job_progress`) by SPECULATIVE_GAP and was not
    stopped by a repartition (its rest runs as other maps; what is left of it is a flush). `Task.progress` is read
    as it reads it for a task of one attempt at most (that attempt's `WorkItem.progress`; 0 without one), not through
    four nested properties: the loops below test every running task of a big job (2,400 on the SWIM day). The plain
    form is the tests' oracle (tests/test_speculation_arrays.py `speculatable`)."""
    for task in running:
        start = task.start_s
        if start is None or not now - start >= SPECULATIVE_LAG_S:
            continue
        active = task.active
        if len(active) > MAX_TASK_EXECS or node in task.nodes_tried or task.state != TaskState.RUNNING:
            continue
        progress = 0.0
        if active:
            attempt = active[0]
            row = attempt.row
            if row is None:
                progress = 1.0 if attempt.state == ItemState.DONE else 0.0
            else:
                progress = float(attempt.model.item_progress()[row])
        if job_progress - progress >= SPECULATIVE_GAP and not task.children:
            yield task


def _lagging(running: dict[Task, None], now: float) -> bool:
    """Some running task started SPECULATIVE_LAG_S ago or more (the rule's first test): a job without one has no
    candidate whatever its average, which is then not worked out (an average reads every running task's progress; on
    the SWIM day's busy ticks most of a big job's ~2,500 running maps are younger than the lag)."""
    return any(t.start_s is not None and now - t.start_s >= SPECULATIVE_LAG_S for t in running)


def _free_kinds(cluster: ClusterView) -> tuple[bool, bool]:
    """Is a map slot, a reduce slot free somewhere (running attempts of the kind below its capacity)?"""
    maps, reduces = cluster.running(TaskKind.MAP), cluster.running(TaskKind.REDUCE)
    return maps < cluster.map_capacity(), reduces < cluster.reduce_capacity()


def _quiet_until(bounds: dict[TaskKind, tuple[float, float]], free_map: bool, free_reduce: bool) -> float:
    """When the earliest task of a kind with a free slot that may meet the progress conditions reaches the lag."""
    until = math.inf
    for kind, free in ((TaskKind.MAP, free_map), (TaskKind.REDUCE, free_reduce)):
        if free:
            until = min(until, bounds[kind][1] + SPECULATIVE_LAG_S - LAG_MARGIN_S)
    return until


class HadoopSpeculation(SpeculationPolicy):
    name = "hadoop"
    quiet_when_idle = True

    def __init__(self) -> None:
        self._may: tuple[float, bool] = (-1.0, True)
        self._bounds_key: tuple[int, ...] = ()  # standing_key of the kept bounds
        self._seen = 0  # first launches the kept bounds take in
        self._bounds: dict[TaskKind, tuple[float, float]] = {}
        # lag_bounds' groups (2 x job number + kind) with entries, their job averages and the earliest start of a
        # task that may meet the conditions, as the rows of one array; as dicts once asked for (`_by_group`)
        self._groups = np.zeros((3, 0))
        self._by_group: tuple[dict[int, float], dict[int, float]] | None = ({}, {})

    def may_back_up(self, cluster: ClusterView) -> bool:
        """Some running task of a kind with a free slot somewhere meets every condition but the node one.

        Called every tick (HadoopModel.after_tick) and on events, so the tasks are tested as arrays once per
        change of progress or task states (`lag_bounds`), and a call only compares the clock with the earliest
        start of a task that meets the progress conditions. The task-by-task loop (`_any_candidate`) decides
        when the arrays cannot (a call too close in floating point, or the tick's endings being processed).
        The answer is kept for the instant: later calls at the same time get the first call's answer, whatever
        changed in between (the pinned runs depend on it)."""
        now = cluster.now
        if self._may[0] != now:
            self._may = (now, self._verdict(cluster, now))
        return self._may[1]

    def _verdict(self, cluster: ClusterView, now: float) -> bool:
        """`may_back_up`'s answer for the state as it is now."""
        free_map, free_reduce = _free_kinds(cluster)
        if not (free_map or free_reduce):
            return False  # no free slot anywhere
        bounds = self._lag_bounds(cluster)
        for kind, free in ((TaskKind.MAP, free_map), (TaskKind.REDUCE, free_reduce)):
            if not free:
                continue
            if bounds is not None:
                sure, maybe = bounds[kind]
                if now - sure >= SPECULATIVE_LAG_S:
                    return True
                if not now - maybe >= SPECULATIVE_LAG_S:
                    continue
            if self._any_candidate(cluster, kind, now):
                return True
        return False

    def quiet_until(self, cluster: ClusterView) -> float:
        """The clock alone turns `may_back_up` True when the earliest task that may meet the progress conditions
        reaches SPECULATIVE_LAG_S (a kind with no free slot anywhere cannot; slots free only by events)."""
        bounds = self._lag_bounds(cluster)
        return cluster.now if bounds is None else _quiet_until(bounds, *_free_kinds(cluster))

    def outlook(self, cluster: ClusterView) -> Outlook:
        """`backups` gives a kind nothing while its earliest task that may meet the progress conditions is younger
        than SPECULATIVE_LAG_S (its own test), so a tracker whose free slots are of such kinds gets no backup."""
        now = cluster.now
        bounds = self._lag_bounds(cluster)
        if bounds is None:
            return Outlook(True, now, -math.inf, -math.inf)
        map_from = bounds[TaskKind.MAP][1] + SPECULATIVE_LAG_S - LAG_MARGIN_S
        reduce_from = bounds[TaskKind.REDUCE][1] + SPECULATIVE_LAG_S - LAG_MARGIN_S
        until = _quiet_until(bounds, *_free_kinds(cluster))
        return Outlook(self._verdict(cluster, now), until, map_from, reduce_from)

    def _lag_bounds(self, cluster: ClusterView) -> dict[TaskKind, tuple[float, float]] | None:
        """`lag_bounds` of the running attempts as they are now; None while the arrays are not available.

        Kept across first launches (`ClusterView.standing_key`): a task's first attempt has progress 0 and starts
        now, so it changes no job average and no earliest start of a kind that has one (every start is at most
        now). It may only give a kind without one (inf) a bound, if its job's average meets the gap. (A kept
        "sure" bound may miss such a task: started now, it cannot reach SPECULATIVE_LAG_S before the next tick
        changes the key.)"""
        key, launched = cluster.standing_key()
        if key == self._bounds_key and all(map(self._keeps, cluster.first_launched(self._seen))):
            self._seen = launched
            return self._bounds
        arrays = cluster.running_arrays()
        if arrays is None:
            return None
        self._bounds, self._groups = lag_bounds(cluster, arrays)
        self._by_group = None
        self._bounds_key, self._seen = key, launched
        return self._bounds

    def _group_values(self) -> tuple[dict[int, float], dict[int, float]]:
        """The kept bounds' job averages and "maybe" bounds by group, as dicts (made when first asked for: most
        rebuilds of the bounds are never asked)."""
        if self._by_group is None:
            groups, average, maybe_from = self._groups
            keys = groups.astype(np.int64).tolist()
            self._by_group = (
                dict(zip(keys, average.tolist(), strict=True)),
                dict(zip(keys, maybe_from.tolist(), strict=True)),
            )
        return self._by_group

    def _keeps(self, task: Task) -> bool:
        """The kept bounds hold with `task` just launched for the first time (see `_lag_bounds`)."""
        kind, job = task.kind, task.job
        if self._bounds[kind][1] < math.inf:
            return True
        average = self._group_values()[0].get(2 * job.number + (kind == TaskKind.REDUCE))
        if average is not None:
            return not average >= SPECULATIVE_GAP - _EPS
        # A job without kept averages had no running attempt of the kind when the bounds were made, only first
        # launches since (the standing key is unchanged), each at progress 0: `Job.progress` is its finished tasks
        # over its tasks, the same float, without its loop over the running tasks (a big job's first wave: thousands).
        n = len(job.maps if kind == TaskKind.MAP else job.reduces)
        average = 1.0 if n == 0 else job.count(kind, TaskState.DONE) / n
        return not average >= SPECULATIVE_GAP - _EPS

    @staticmethod
    def _any_candidate(cluster: ClusterView, kind: TaskKind, now: float) -> bool:
        """The reference: task by task, with the job averages of `Job.progress`."""
        for job in cluster.jobs:
            running = job.running_tasks[kind]
            if not running or not _lagging(running, now):
                continue
            average = job.progress(kind)
            if average >= SPECULATIVE_GAP and next(speculatable_in(running, average, now, -1), None) is not None:
                return True
        return False

    def backups(self, tracker: TaskTracker, cluster: ClusterView, free_maps: int, free_reduces: int) -> list[Launch]:
        launches = []
        for kind, free in ((TaskKind.MAP, free_maps), (TaskKind.REDUCE, free_reduces)):
            if free <= 0:
                continue
            bounds = self._lag_bounds(cluster)
            if bounds is not None and not cluster.now - bounds[kind][1] >= SPECULATIVE_LAG_S:
                continue  # no task of this kind may be backed up anywhere (may_back_up's test): spare the task loop
            task = self._candidate(tracker, cluster, kind, None if bounds is None else self._group_values()[1])
            if task is not None:
                launches.append(Launch(task, cluster.locality(task, tracker) if kind == TaskKind.MAP else None, True))
        return launches

    @staticmethod
    def _candidate(
        tracker: TaskTracker, cluster: ClusterView, kind: TaskKind, maybe_from: dict[int, float] | None = None
    ) -> Task | None:
        """The first job in FIFO order with a task `speculatable_in` accepts for the tracker; of a job's maps, the
        most local. `maybe_from` (the kept bounds' per job and kind, when they hold): a job none of whose tasks may meet
        the progress conditions, or whose earliest such task is younger than the lag, is passed over without its task
        loop (a kept bound misses only tasks launched now, which cannot lag yet)."""
        now = cluster.now
        reduce = kind == TaskKind.REDUCE
        for job in cluster.jobs_in_fifo_order():
            running = job.running_tasks[kind]
            if not running:
                continue
            if maybe_from is not None:
                if not now - maybe_from.get(2 * job.number + reduce, math.inf) >= SPECULATIVE_LAG_S:
                    continue
            elif not _lagging(running, now):
                continue
            average = job.progress(kind)
            if average < SPECULATIVE_GAP:
                continue
            found = list(speculatable_in(running, average, now, tracker.node))
            if found:
                if kind == TaskKind.MAP:
                    found.sort(key=lambda t: (cluster.locality(t, tracker), t.index))
                return found[0]
        return None


def lag_bounds(cluster: ClusterView, arrays: RunningArrays) -> tuple[dict[TaskKind, tuple[float, float]], np.ndarray]:
    """Per kind, the earliest start of a task that surely meets the progress conditions of `speculatable_in` (single
    attempt, job average and gap at least SPECULATIVE_GAP by more than `_EPS`), and of one that may (within
    `_EPS`: array sums differ from `Job.progress`'s in the last bits); inf if none. Some task is a candidate at
    time `now` iff now - its start >= SPECULATIVE_LAG_S, and subtraction is monotone, so the earliest decides.

    A task's progress is its best attempt's; a job's average counts its finished tasks as 1 and its unstarted
    ones as 0 (`Job.progress`): one weighted bincount over (job, kind). Also returns those averages, by
    2 x job number + kind (0 map, 1 reduce), of the jobs and kinds with a running attempt, and each one's own
    "maybe" bound (the backup search passes over a job whose bound is younger than the lag): the rows of one array,
    groups (as floats), averages, bounds. The arithmetic is
    compiled (policies/speculation/lag_bounds.py `running_lag_bounds`; its NumPy form's bits: tests/test_kernels.py)."""
    ledger = cluster.ledger
    map_sure, map_maybe, reduce_sure, reduce_maybe, by_group = running_lag_bounds(
        ledger.finished, ledger.tasks, arrays.gid, arrays.kind, arrays.job, arrays.task_start, arrays.progress,
        arrays.attempts, MAX_TASK_EXECS, SPECULATIVE_GAP + _EPS, SPECULATIVE_GAP - _EPS,
    )  # fmt: skip
    bounds = {TaskKind.MAP: (map_sure, map_maybe), TaskKind.REDUCE: (reduce_sure, reduce_maybe)}
    return bounds, by_group
