"""Hadoop 1.x's default `JobQueueTaskScheduler` (algorithms.md section 9, H121 JobQueueTaskScheduler.java).

Jobs in order of priority, then start time, then id. A tracker's map capacity is scaled by the
cluster's load factor so an under-loaded cluster spreads its tasks; maps are filled slot by slot, each
time rescanning the queue for a node- or rack-local map; at most one off-switch map per heartbeat; at
most one reduce per heartbeat; the capacity pad keeps room for speculation and failures.
"""

from __future__ import annotations

import math

from hadoop_layer.hdfs import Locality
from hadoop_layer.interfaces import ClusterView, Launch, TaskScheduler
from hadoop_layer.tasks import Job, Task, TaskKind
from hadoop_layer.tracker import TaskTracker

PRIORITY_ORDER = {"VERY_HIGH": 0, "HIGH": 1, "NORMAL": 2, "LOW": 3, "VERY_LOW": 4}
MIN_CLUSTER_SIZE_FOR_PADDING = 3


def queue_order(jobs: list[Job]) -> list[Job]:
    """FIFO_JOB_QUEUE_COMPARATOR: priority, start time, job id."""
    return sorted(jobs, key=lambda j: (PRIORITY_ORDER.get(j.priority, 2), j.start_s, j.number))


class FifoScheduler(TaskScheduler):
    name = "fifo"
    quiet_when_idle = True

    def assign(self, tracker: TaskTracker, cluster: ClusterView) -> list[Launch]:
        jobs = queue_order(cluster.jobs)
        map_cap, reduce_cap = cluster.map_capacity(), cluster.reduce_capacity()
        map_load = sum(len(j.maps) - j.finished_maps for j in jobs)
        reduce_load = sum(len(j.reduces) - j.finished_reduces for j in jobs if j.reduces_schedulable())
        launches: list[Launch] = []
        taken: set[Task] = self.forbidden(tracker, cluster)

        running_maps = len(tracker.running[TaskKind.MAP])
        load_factor = map_load / map_cap if map_cap else 0.0
        tracker_maps = min(math.ceil(load_factor * tracker.map_slots), tracker.map_slots)
        available = tracker_maps - running_maps
        if available > 0:
            padded = self._exceeded_padding(jobs, TaskKind.MAP, cluster, map_cap, tracker.map_slots)
            launches += self._assign_maps(tracker, jobs, available, padded, taken)

        running_reduces = len(tracker.running[TaskKind.REDUCE])
        load_factor = reduce_load / reduce_cap if reduce_cap else 0.0
        tracker_reduces = min(math.ceil(load_factor * tracker.reduce_slots), tracker.reduce_slots)
        if min(tracker_reduces - running_reduces, 1) > 0:
            padded = self._exceeded_padding(jobs, TaskKind.REDUCE, cluster, reduce_cap, tracker.reduce_slots)
            for job in jobs:
                if not job.reduces:
                    continue
                task = job.find_reduce(taken)
                if task is not None:
                    launches.append(Launch(task))
                    break
                if padded:
                    break
        return launches

    def forbidden(self, tracker: TaskTracker, cluster: ClusterView) -> set[Task]:
        """Tasks this tracker must not get (none for plain FIFO; see PinnedFifoScheduler)."""
        return set()

    @staticmethod
    def _assign_maps(tracker: TaskTracker, jobs: list[Job], available: int, padded: bool, taken: set[Task]):
        launches = []
        for _ in range(available):
            found = False
            for job in jobs:
                hit = job.find_map(tracker.node, tracker.rack, Locality.RACK, taken)
                if hit is not None:
                    launches.append(Launch(hit[0], hit[1]))
                    taken.add(hit[0])
                    if padded:
                        return launches
                    found = True
                    break
                hit = job.find_map(tracker.node, tracker.rack, Locality.OFF_RACK, taken)
                if hit is not None:
                    launches.append(Launch(hit[0], hit[1]))
                    return launches  # at most one off-switch map per heartbeat
            if not found:
                break
        return launches

    @staticmethod
    def _exceeded_padding(jobs: list[Job], kind: TaskKind, cluster: ClusterView, capacity: int, tracker_slots: int):
        """JobQueueTaskScheduler.exceededPadding: keep a little room beyond the highest-priority job."""
        total_tasks = cluster.running(kind)
        needed = 0
        for job in jobs:
            if not job.reduces:
                continue
            needed += len(job.maps) if kind == TaskKind.MAP else len(job.reduces)
            padding = 0
            if len(cluster.trackers) > MIN_CLUSTER_SIZE_FOR_PADDING:
                padding = min(tracker_slots, int(needed * cluster.config.taskalloc_capacity_pad))
            if total_tasks + padding >= capacity:
                return True
        return False
