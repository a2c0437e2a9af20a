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
from hadoop_layer.ledger import RunningLedger
from hadoop_layer.tasks import Job, Task, TaskKind
from hadoop_layer.tracker import TaskTracker

MIN_CLUSTER_SIZE_FOR_PADDING = 3


class FifoScheduler(TaskScheduler):
    name = "fifo"
    quiet_when_idle = True

    def assign(self, tracker: TaskTracker, cluster: ClusterView) -> list[Launch]:
        """The queue's loads and padding come from the JobTracker's ledger of the running jobs (the same sums
        as JobQueueTaskScheduler's scans, kept as jobs change: hadoop_layer/ledger.py)."""
        jobs = cluster.jobs_in_fifo_order()
        ledger = cluster.ledger
        map_cap, reduce_cap = cluster.map_capacity(), cluster.reduce_capacity()
        launches: list[Launch] = []
        taken: set[Task] = self.forbidden(tracker, cluster)

        running_maps = len(tracker.running[TaskKind.MAP])
        load_factor = ledger.map_load / map_cap if map_cap else 0.0
        tracker_maps = min(math.ceil(load_factor * tracker.map_slots), tracker.map_slots)
        available = tracker_maps - running_maps
        if available > 0:
            padded = self._exceeded_padding(ledger, TaskKind.MAP, cluster, map_cap, tracker.map_slots)
            launches += self._assign_maps(tracker, jobs, available, padded, taken)

        running_reduces = len(tracker.running[TaskKind.REDUCE])
        load_factor = ledger.reduce_load / reduce_cap if reduce_cap else 0.0
        tracker_reduces = min(math.ceil(load_factor * tracker.reduce_slots), tracker.reduce_slots)
        if min(tracker_reduces - running_reduces, 1) > 0 and ledger.jobs_ready_reduces:  # else no job has one
            padded = self._exceeded_padding(ledger, TaskKind.REDUCE, cluster, reduce_cap, tracker.reduce_slots)
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
                if not job.pending_maps:  # find_map finds nothing: spare its calls (what it would tidy, tidied)
                    job.forget_retries()
                    continue
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
    def _exceeded_padding(ledger: RunningLedger, kind: TaskKind, cluster: ClusterView, capacity: int,
                          tracker_slots: int) -> bool:  # fmt: skip
        """JobQueueTaskScheduler.exceededPadding: keep a little room beyond the highest-priority job. Hadoop adds
        up the jobs with reduces in queue order and stops at the first whose padding fills the cluster; the
        padding only grows along the queue, so that happens iff it does with all of them."""
        if not ledger.jobs_with_reduces:
            return False
        needed = ledger.maps_of_jobs_with_reduces if kind == TaskKind.MAP else ledger.reduces_of_jobs_with_reduces
        padding = 0
        if len(cluster.trackers) > MIN_CLUSTER_SIZE_FOR_PADDING:
            padding = min(tracker_slots, int(needed * cluster.config.taskalloc_capacity_pad))
        return cluster.running(kind) + padding >= capacity
