"""Hadoop 1.x default speculation (algorithms.md 2.5, H121 TaskInProgress.hasSpeculativeTask).

A running task gets one backup when it has a single active attempt, its progress is at least
SPECULATIVE_GAP (0.2) below the average progress of its job's tasks of that kind, it has run for at
least SPECULATIVE_LAG (60 s), and the heartbeating node never ran it. At most one speculative map and
one speculative reduce per heartbeat (JobQueueTaskScheduler stops after one off-switch/speculative map;
reduces are one per heartbeat anyway). Running maps are searched node-local first, as Hadoop's
running-map caches are.
"""

from __future__ import annotations

from hadoop_layer.interfaces import ClusterView, Launch, SpeculationPolicy
from hadoop_layer.tasks import Task, TaskKind
from hadoop_layer.tracker import TaskTracker
from policies.schedulers.fifo import queue_order

SPECULATIVE_GAP = 0.2
SPECULATIVE_LAG_S = 60.0
MAX_TASK_EXECS = 1


def speculatable(task: Task, job_progress: float, now: float, node: int) -> bool:
    """TaskInProgress.hasSpeculativeTask, cheapest tests first."""
    return (
        task.start_s is not None
        and now - task.start_s >= SPECULATIVE_LAG_S
        and len(task.active) <= MAX_TASK_EXECS
        and node not in task.nodes_tried
        and task.state == "running"
        and job_progress - task.progress >= SPECULATIVE_GAP
    )


class HadoopSpeculation(SpeculationPolicy):
    name = "hadoop"

    def __init__(self) -> None:
        self._may: tuple[float, bool] = (-1.0, True)

    def may_back_up(self, cluster: ClusterView) -> bool:
        """Some running task of a kind with a free slot somewhere meets every condition but the node one."""
        now = cluster.now
        if self._may[0] != now:
            self._may = (now, any(self._any_candidate(cluster, kind, now) for kind in TaskKind))
        return self._may[1]

    @staticmethod
    def _any_candidate(cluster: ClusterView, kind: TaskKind, now: float) -> bool:
        capacity = cluster.map_capacity() if kind == TaskKind.MAP else cluster.reduce_capacity()
        if cluster.running(kind) >= capacity:
            return False  # no free slot of this kind anywhere
        for job in cluster.jobs:
            running = job.running_tasks[kind]
            if not running:
                continue
            average = job.progress(kind)
            if average >= SPECULATIVE_GAP and any(speculatable(t, average, now, -1) for t in running):
                return True
        return False

    def backups(self, tracker: TaskTracker, cluster: ClusterView, free_maps: int, free_reduces: int) -> list[Launch]:
        launches = []
        for kind, free in ((TaskKind.MAP, free_maps), (TaskKind.REDUCE, free_reduces)):
            if free <= 0:
                continue
            task = self._candidate(tracker, cluster, kind)
            if task is not None:
                launches.append(Launch(task, cluster.locality(task, tracker) if kind == TaskKind.MAP else None, True))
        return launches

    @staticmethod
    def _candidate(tracker: TaskTracker, cluster: ClusterView, kind: TaskKind) -> Task | None:
        now = cluster.now
        for job in queue_order(cluster.jobs):
            running = job.running_tasks[kind]
            if not running:
                continue
            average = job.progress(kind)
            if average < SPECULATIVE_GAP:
                continue
            found = [t for t in running if speculatable(t, average, now, tracker.node)]
            if found:
                if kind == TaskKind.MAP:
                    found.sort(key=lambda t: (cluster.locality(t, tracker), t.index))
                return found[0]
        return None
