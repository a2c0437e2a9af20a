"""Sums over the running jobs that every heartbeat asks for, kept as each job changes (issue 16).

Hadoop's JobQueueTaskScheduler scans the whole job queue on every heartbeat (the cluster's map and reduce load,
the capacity padding, whether any job has a pending task); with hundreds of jobs queued that scan is most of a
day-long trace's run. The ledger keeps each running job's contribution and updates it when the job's task counts
change (`Job.set_state`, `Job.add_maps`) or it enters or leaves the running list: integers only, so the sums are
the scans' exactly. It also keeps the running list in FIFO queue order (priority, start time, id), and the running
jobs' finished and total tasks as arrays by 2 x job number + kind, which Hadoop speculation's per-tick bounds read
(`policies.speculation.hadoop_lookahead.lag_bounds`) without a loop over the jobs.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from hadoop_layer.tasks import TaskKind, TaskState
from vcloud.numerics import ascending_order, kernel

if TYPE_CHECKING:
    from hadoop_layer.tasks import Job

PRIORITY_ORDER = {"VERY_HIGH": 0, "HIGH": 1, "NORMAL": 2, "LOW": 3, "VERY_LOW": 4}


def fifo_key(job: Job) -> tuple[int, float, int]:
    """FIFO_JOB_QUEUE_COMPARATOR: priority, start time, job id."""
    return PRIORITY_ORDER.get(job.priority, 2), job.start_s, job.number


class RunningLedger:
    FIELDS = ("jobs_pending_maps", "jobs_ready_reduces", "map_load", "reduce_load", "jobs_with_reduces",
              "maps_of_jobs_with_reduces", "reduces_of_jobs_with_reduces", "running_tasks")  # fmt: skip
    NOTHING = (0,) * len(FIELDS)  # a job's contribution before it enters and after it leaves

    def __init__(self) -> None:
        self.jobs_pending_maps = 0  # running jobs with a pending map
        self.jobs_ready_reduces = 0  # ... with a pending reduce past slow start
        self.map_load = 0  # maps not finished, over the running jobs
        self.reduce_load = 0  # reduces not finished, over the running jobs past slow start
        self.jobs_with_reduces = 0
        self.maps_of_jobs_with_reduces = 0  # the capacity padding's "needed" tasks (JobQueueTaskScheduler)
        self.reduces_of_jobs_with_reduces = 0
        self.running_tasks = 0  # tasks with a running attempt
        self._of: dict[Job, tuple[int, ...]] = {}
        self._order: list[Job] | None = []
        # by 2 x job number + kind (0 map, 1 reduce), as floats: a running job's finished tasks and its tasks (at
        # least 1); every other number 0 finished of 1
        self.finished = np.zeros(0)
        self.tasks = np.ones(0)

    @staticmethod
    def contribution(job: Job) -> tuple[int, ...]:
        """The job's part of each sum (`FIELDS` order); its task counts read directly: this runs at every task
        state change."""
        maps, reduces = len(job.maps), len(job.reduces)
        map_counts, reduce_counts = job._counts[TaskKind.MAP], job._counts[TaskKind.REDUCE]
        done_maps = map_counts[TaskState.DONE]
        ready = done_maps >= job.slowstart_maps
        running = job.running_tasks
        return (
            map_counts[TaskState.PENDING] > 0,
            reduce_counts[TaskState.PENDING] > 0 and ready,
            maps - done_maps,
            reduces - reduce_counts[TaskState.DONE] if ready else 0,
            reduces > 0,
            maps if reduces else 0,
            reduces,
            len(running[TaskKind.MAP]) + len(running[TaskKind.REDUCE]),
        )

    def _move(self, old: tuple[int, ...], new: tuple[int, ...]) -> None:
        """Each sum (`FIELDS` order) moves by new - old: integers, added by name (at every task state change)."""
        o0, o1, o2, o3, o4, o5, o6, o7 = old
        n0, n1, n2, n3, n4, n5, n6, n7 = new
        self.jobs_pending_maps += n0 - o0
        self.jobs_ready_reduces += n1 - o1
        self.map_load += n2 - o2
        self.reduce_load += n3 - o3
        self.jobs_with_reduces += n4 - o4
        self.maps_of_jobs_with_reduces += n5 - o5
        self.reduces_of_jobs_with_reduces += n6 - o6
        self.running_tasks += n7 - o7

    def _count(self, job: Job, running: bool) -> None:
        """The job's columns of `finished` and `tasks` (its counts while it runs, 0 of 1 once it left): at its entering,
        leaving and new tasks."""
        g = 2 * job.number
        if g + 2 > self.finished.size:
            size = max(g + 2, 2 * self.finished.size)
            self.finished = np.concatenate((self.finished, np.zeros(size - self.finished.size)))
            self.tasks = np.concatenate((self.tasks, np.ones(size - self.tasks.size)))
        finished, tasks = self.finished, self.tasks
        if running:
            self._count_finished(job)
            tasks[g], tasks[g + 1] = len(job.maps) or 1, len(job.reduces) or 1
        else:
            finished[g] = finished[g + 1] = 0.0
            tasks[g] = tasks[g + 1] = 1.0

    def _count_finished(self, job: Job) -> None:
        """The running job's column of `finished` (its arrays are long enough: it entered)."""
        counts, g, done = job._counts, 2 * job.number, self.finished
        done[g], done[g + 1] = counts[TaskKind.MAP][TaskState.DONE], counts[TaskKind.REDUCE][TaskState.DONE]

    def enter(self, job: Job) -> None:
        self._of[job] = new = self.contribution(job)
        self._move(self.NOTHING, new)
        self._count(job, True)
        job.ledger = self
        self._order = None

    def leave(self, job: Job) -> None:
        self._move(self._of.pop(job), self.NOTHING)
        self._count(job, False)
        job.ledger = None
        self._order = None

    def changed(self, job: Job, finished: bool = True, resized: bool = False) -> None:
        """The job's task counts changed (it is running): `finished`, its finished tasks may have; `resized`, its
        number of tasks did (Job.add_maps). Of the arrays, a task's state change moves the finished counts only, and
        only when the task finished or stopped being finished (scalar writes: at every such change)."""
        old, new = self._of[job], self.contribution(job)
        if old != new:
            self._move(old, new)
            self._of[job] = new
        if resized:
            self._count(job, True)
        elif finished:
            self._count_finished(job)

    def queue_order(self) -> list[Job]:
        """The running jobs in FIFO order, sorted once per change of the running jobs."""
        if self._order is None:
            self._order = sorted(self._of, key=fifo_key)
        return self._order


@kernel
def running_entries(
    tag: np.ndarray, n: int, extra_gid: np.ndarray, task_kind: np.ndarray, task_job: np.ndarray, task_start: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray, int]:
    """`speculation_outlook.RunningEntries.arrays`' entries in one pass: the rows of the first `n` whose tag
    (a task gid) is not 0, ascending; their gids, then `extra_gid`'s; each entry's task kind, job and first launch,
    how many entries its task has, and the number of distinct tasks. Integer gathers and counts: the NumPy form's
    values (np.flatnonzero, fancy indexing, np.sort's distinct count, np.bincount(gid)[gid]; tests/test_kernels.py),
    without its ten calls at every change of the item table's rows (FlexSlot: most ticks)."""
    m = 0
    for r in range(n):
        if tag[r] != 0:
            m += 1
    total = m + extra_gid.size
    rows, gid = np.empty(m, np.int64), np.empty(total, np.int64)
    j = 0
    for r in range(n):
        if tag[r] != 0:
            rows[j], gid[j] = r, tag[r]
            j += 1
    for e in range(extra_gid.size):
        gid[m + e] = extra_gid[e]
    kind, job, start = np.empty(total, task_kind.dtype), np.empty(total, np.int64), np.empty(total)
    for e in range(total):
        g = gid[e]
        kind[e], job[e], start[e] = task_kind[g], task_job[g], task_start[g]
    attempts = np.ones(total, np.int64)
    order = ascending_order(gid)
    tasks, a = 0, 0
    while a < total:  # each run of equal gids: one task, its entries' count
        b = a + 1
        while b < total and gid[order[b]] == gid[order[a]]:
            b += 1
        tasks += 1
        if b - a > 1:
            for c in range(a, b):
                attempts[order[c]] = b - a
        a = b
    return rows, gid, kind, job, start, attempts, tasks
