"""Hadoop 1.x default speculation (algorithms.md 2.5, H121 TaskInProgress.hasSpeculativeTask).

A running task gets one backup when it has a single active attempt, its progress is at least
SPECULATIVE_GAP (0.2) below the average progress of its job's tasks of that kind, it has run for at
least SPECULATIVE_LAG (60 s), and the heartbeating node never ran it. At most one speculative map and
one speculative reduce per heartbeat (JobQueueTaskScheduler stops after one off-switch/speculative map;
reduces are one per heartbeat anyway). Running maps are searched node-local first, as Hadoop's
running-map caches are.

This module is the rule. The scenarios run it behind the heartbeat clock's look-ahead
(`hadoop_lookahead.HadoopLookAhead`: the same launches, far fewer task loops on long traces).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator

from hadoop_layer.interfaces import ClusterView, Launch, SpeculationPolicy
from hadoop_layer.tasks import Job, Task, TaskKind, TaskState
from hadoop_layer.tracker import TaskTracker
from vcloud.work import ItemState

SPECULATIVE_GAP = 0.2
SPECULATIVE_LAG_S = 60.0
MAX_TASK_EXECS = 1


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


def lagging(job: Job, kind: TaskKind, now: float) -> bool:
    """Some running task of the job's kind started SPECULATIVE_LAG_S ago or more (the rule's first test): a job
    without one has no candidate whatever its average, which is then not worked out (an average reads every running
    task's progress; on the SWIM day's busy ticks most of a big job's ~2,500 running maps are younger than the lag)."""
    return any(t.start_s is not None and now - t.start_s >= SPECULATIVE_LAG_S for t in job.running_tasks[kind])


def any_candidate(cluster: ClusterView, kind: TaskKind, now: float) -> bool:
    """Some running task of the kind meets every condition but the node one."""
    for job in cluster.jobs:
        running = job.running_tasks[kind]
        if not running or not lagging(job, kind, now):
            continue
        average = job.progress(kind)
        if average >= SPECULATIVE_GAP and next(speculatable_in(running, average, now, -1), None) is not None:
            return True
    return False


def candidate(
    tracker: TaskTracker, cluster: ClusterView, kind: TaskKind, may_lag: Callable[[Job], bool] | None = None
) -> Task | None:
    """The first job in FIFO order with a task `speculatable_in` accepts for the tracker; of a job's maps, the most
    local. `may_lag(job)`: False passes a job over without its averages (default `lagging`)."""
    now = cluster.now
    for job in cluster.jobs_in_fifo_order():
        running = job.running_tasks[kind]
        if not running or not (may_lag(job) if may_lag is not None else lagging(job, kind, now)):
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


def free_kinds(cluster: ClusterView) -> tuple[bool, bool]:
    """Is a map slot, a reduce slot free somewhere (running attempts of the kind below its capacity)?"""
    maps, reduces = cluster.running(TaskKind.MAP), cluster.running(TaskKind.REDUCE)
    return maps < cluster.map_capacity(), reduces < cluster.reduce_capacity()


class HadoopSpeculation(SpeculationPolicy):
    name = "hadoop"

    def may_back_up(self, cluster: ClusterView) -> bool:
        """Some running task of a kind with a free slot somewhere meets every condition but the node one."""
        free_map, free_reduce = free_kinds(cluster)
        return (free_map and any_candidate(cluster, TaskKind.MAP, cluster.now)) or (
            free_reduce and any_candidate(cluster, TaskKind.REDUCE, cluster.now)
        )

    def backups(self, tracker: TaskTracker, cluster: ClusterView, free_maps: int, free_reduces: int) -> list[Launch]:
        launches = []
        for kind, free in ((TaskKind.MAP, free_maps), (TaskKind.REDUCE, free_reduces)):
            task = candidate(tracker, cluster, kind) if free > 0 else None
            if task is not None:
                launches.append(Launch(task, cluster.locality(task, tracker) if kind == TaskKind.MAP else None, True))
        return launches
