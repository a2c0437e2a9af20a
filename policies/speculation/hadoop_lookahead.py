"""Hadoop's default speculation rule (hadoop.py) behind the heartbeat clock's look-ahead (hadoop_layer/
speculation_outlook.py): the same answers and launches, with the running tasks tested as arrays once per change of
progress or task states (`lag_bounds`) instead of task by task at every call.

Some task is a candidate at time `now` iff now - its start >= SPECULATIVE_LAG_S, and subtraction is monotone, so
the earliest start of a task that meets the progress conditions decides: `may_back_up` compares the clock with it,
`outlook` tells the clock when it may turn True, and the backup search passes over a kind, and a job, whose earliest
such task is younger than the lag. The task-by-task loop (hadoop.py `any_candidate`) decides when the arrays cannot
(a call too close in floating point, or the tick's endings being processed).
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np

from hadoop_layer.interfaces import ClusterView, Launch
from hadoop_layer.speculation_outlook import LookAhead, Outlook, RunningArrays
from hadoop_layer.tasks import Job, Task, TaskKind, TaskState
from hadoop_layer.tracker import TaskTracker
from policies.speculation.hadoop import (
    MAX_TASK_EXECS,
    SPECULATIVE_GAP,
    SPECULATIVE_LAG_S,
    HadoopSpeculation,
    any_candidate,
    candidate,
    free_kinds,
)
from policies.speculation.lag_bounds import running_lag_bounds

LAG_MARGIN_S = 1e-6  # quiet_until ends this much early: now - start is rounded
_EPS = 1e-9  # array sums differ from Job.progress's in the last bits: closer calls than this go to the loop

Bounds = dict[TaskKind, tuple[float, float]]


def _quiet_until(bounds: Bounds, free_map: bool, free_reduce: bool) -> float:
    """When the earliest task of a kind with a free slot that may meet the progress conditions reaches the lag."""
    until = math.inf
    for kind, free in ((TaskKind.MAP, free_map), (TaskKind.REDUCE, free_reduce)):
        if free:
            until = min(until, bounds[kind][1] + SPECULATIVE_LAG_S - LAG_MARGIN_S)
    return until


def _may_lag(maybe_from: dict[int, float], kind: TaskKind, now: float) -> Callable[[Job], bool]:
    """Has a job's earliest task of the kind that may meet the progress conditions (its "maybe" bound of the kept
    bounds, by 2 x job number + kind) run SPECULATIVE_LAG_S? (`candidate`'s `may_lag`.)"""
    reduce = kind == TaskKind.REDUCE
    return lambda job: now - maybe_from.get(2 * job.number + reduce, math.inf) >= SPECULATIVE_LAG_S


class HadoopLookAhead(LookAhead, HadoopSpeculation):
    """`HadoopSpeculation` with an outlook, its verdicts and backup search spared by the kept lag bounds."""

    def __init__(self) -> None:
        self._bounds_key: tuple[int, ...] = ()  # standing_key of the kept bounds
        self._seen = 0  # first launches the kept bounds take in
        self._bounds: Bounds = {}
        # lag_bounds' groups (2 x job number + kind) with entries, their job averages and the earliest start of a
        # task that may meet the conditions, as the rows of one array; as dicts once asked for (`_by_group`)
        self._groups = np.zeros((3, 0))
        self._by_group: tuple[dict[int, float], dict[int, float]] | None = ({}, {})

    def verdict(self, cluster: ClusterView) -> bool:
        """`may_back_up`'s answer for the state as it is now."""
        now = cluster.now
        free_map, free_reduce = free_kinds(cluster)
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
            if any_candidate(cluster, kind, now):
                return True
        return False

    def outlook(self, cluster: ClusterView) -> Outlook:
        """`backups` gives a kind nothing while its earliest task that may meet the progress conditions is younger
        than SPECULATIVE_LAG_S (its own test), so a tracker whose free slots are of such kinds gets no backup. The
        clock alone turns `may_back_up` True when the earliest such task of a kind with a free slot somewhere reaches
        the lag (slots free only by events)."""
        now = cluster.now
        bounds = self._lag_bounds(cluster)
        if bounds is None:
            return Outlook(True, now, -math.inf, -math.inf)
        map_from = bounds[TaskKind.MAP][1] + SPECULATIVE_LAG_S - LAG_MARGIN_S
        reduce_from = bounds[TaskKind.REDUCE][1] + SPECULATIVE_LAG_S - LAG_MARGIN_S
        until = _quiet_until(bounds, *free_kinds(cluster))
        return Outlook(self.verdict(cluster), until, map_from, reduce_from)

    def backups(self, tracker: TaskTracker, cluster: ClusterView, free_maps: int, free_reduces: int) -> list[Launch]:
        """hadoop.py's, passing over a kind, and a job, whose earliest task that may meet the progress conditions
        is younger than the lag (a kept bound misses only tasks launched now, which cannot lag yet)."""
        launches = []
        now = cluster.now
        for kind, free in ((TaskKind.MAP, free_maps), (TaskKind.REDUCE, free_reduces)):
            if free <= 0:
                continue
            bounds = self._lag_bounds(cluster)
            if bounds is None:
                task = candidate(tracker, cluster, kind)
            elif not now - bounds[kind][1] >= SPECULATIVE_LAG_S:
                continue  # no task of this kind may be backed up anywhere (may_back_up's test): spare the task loop
            else:
                task = candidate(tracker, cluster, kind, _may_lag(self._group_values()[1], kind, now))
            if task is not None:
                launches.append(Launch(task, cluster.locality(task, tracker) if kind == TaskKind.MAP else None, True))
        return launches

    def _lag_bounds(self, cluster: ClusterView) -> Bounds | None:
        """`lag_bounds` of the running attempts as they are now; None while the arrays are not available.

        Kept across first launches (`RunningEntries.standing_key`): a task's first attempt has progress 0 and starts
        now, so it changes no job average and no earliest start of a kind that has one (every start is at most
        now). It may only give a kind without one (inf) a bound, if its job's average meets the gap. (A kept
        "sure" bound may miss such a task: started now, it cannot reach SPECULATIVE_LAG_S before the next tick
        changes the key.)"""
        entries = self.entries
        key, launched = entries.standing_key()
        if key == self._bounds_key and all(map(self._keeps, entries.first_launched[self._seen :])):
            self._seen = launched
            return self._bounds
        arrays = entries.arrays()
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


def lag_bounds(cluster: ClusterView, arrays: RunningArrays) -> tuple[Bounds, np.ndarray]:
    """Per kind, the earliest start of a task that surely meets the progress conditions of `speculatable_in` (single
    attempt, job average and gap at least SPECULATIVE_GAP by more than `_EPS`), and of one that may (within
    `_EPS`: array sums differ from `Job.progress`'s in the last bits); inf if none.

    A task's progress is its best attempt's; a job's average counts its finished tasks as 1 and its unstarted
    ones as 0 (`Job.progress`): one weighted bincount over (job, kind). Also returns those averages, by
    2 x job number + kind (0 map, 1 reduce), of the jobs and kinds with a running attempt, and each one's own
    "maybe" bound (the backup search passes over a job whose bound is younger than the lag): the rows of one array,
    groups (as floats), averages, bounds. The arithmetic is compiled (lag_bounds.py `running_lag_bounds`; its
    NumPy form's bits: tests/test_kernels.py)."""
    ledger = cluster.ledger
    map_sure, map_maybe, reduce_sure, reduce_maybe, by_group = running_lag_bounds(
        ledger.finished, ledger.tasks, arrays.gid, arrays.kind, arrays.job, arrays.task_start, arrays.progress,
        arrays.attempts, MAX_TASK_EXECS, SPECULATIVE_GAP + _EPS, SPECULATIVE_GAP - _EPS,
    )  # fmt: skip
    bounds = {TaskKind.MAP: (map_sure, map_maybe), TaskKind.REDUCE: (reduce_sure, reduce_maybe)}
    return bounds, by_group
