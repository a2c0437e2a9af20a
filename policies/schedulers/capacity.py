"""Hadoop 1.x CapacityTaskScheduler (H121 src/contrib/capacity-scheduler; reference/algorithms.md section 7).

Queues (`CapacitySettings.queues`; a job names its queue in `Job.pool`) own a share of the cluster's slots,
`int(capacity% x slots / 100)`, may borrow idle slots up to `maximum_capacity`, and cap each user at
`min(max(ceil(C / active users), ceil(minimum-user-limit% x C / 100)), int(queue capacity x user-limit
factor))`, C being the queue capacity, or what the queue occupies plus one task when it is over it
(`CapacitySchedulerQueue.assignSlotsToJob`). Every heartbeat: queue usage is recounted (`updateAllQueues`);
maps are assigned one at a time, queues re-sorted by occupied / capacity before each, jobs in start-time
order (priority first if the queue supports it); a job offers a node- or rack-local map, else an off-switch
one once it has missed `min(unfinished maps, trackers) x locality wait factor` scheduling opportunities
(`JobInProgress.scheduleOffSwitch`); one off-switch map ends the heartbeat's maps
(maximum-tasks-after-offswitch 0); then at most one reduce. No preemption (Hadoop 1.x has none).

High-memory jobs: with `map_slot_memory_mb`/`reduce_slot_memory_mb` set, a task of a job asking for more
memory (`job_map_memory_mb`/`job_reduce_memory_mb`, by job name) counts as ceil(job memory / slot memory)
slots in this scheduler's accounting: queue and user usage, the tracker's free slots, and tracker
reservations for jobs that do not fit (`TaskTracker.reserveSlots`). Limitation: the emulator's tracker
still holds it in one slot of the tracker's heap, so the other slots it "takes" stay free to the tracker
(the speculation policy may fill them) and the attempt runs with a one-slot heap.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from enum import Enum

from pydantic import BaseModel, ConfigDict, Field, model_validator

from hadoop_layer.hdfs import Locality
from hadoop_layer.interfaces import ClusterView, Launch, TaskScheduler
from hadoop_layer.ledger import fifo_key
from hadoop_layer.tasks import Job, JobState, Task, TaskKind
from hadoop_layer.tracker import TaskTracker

KINDS = (TaskKind.MAP, TaskKind.REDUCE)
OVERRIDE = 1_000_000  # JobInProgress.overrideSchedulingOpportunities: a reserved tracker ignores locality


class QueueSettings(BaseModel):
    """mapred.capacity-scheduler.queue.<name>.* (CapacitySchedulerConf)."""

    model_config = ConfigDict(extra="forbid")
    capacity: float = Field(ge=0, le=100, description="capacity: % of the cluster's slots (required)")
    maximum_capacity: float | None = Field(None, gt=0, le=100, description="maximum-capacity % (None: -1, no cap)")
    minimum_user_limit_percent: int = Field(100, gt=0, le=100, description="minimum-user-limit-percent")
    user_limit_factor: float = Field(1.0, gt=0, description="user-limit-factor: x capacity one user may take")
    supports_priority: bool = Field(False, description="supports-priority: order jobs by priority first")

    @model_validator(mode="after")
    def _maximum_at_least_capacity(self) -> QueueSettings:
        if self.maximum_capacity is not None and self.maximum_capacity < self.capacity:
            raise ValueError(f"maximum_capacity {self.maximum_capacity} is below capacity {self.capacity}")
        return self


class CapacitySettings(BaseModel):
    model_config = ConfigDict(extra="forbid")
    queues: dict[str, QueueSettings] = Field(
        default_factory=lambda: {"default": QueueSettings(capacity=100.0)}, description="mapred.queue.names"
    )
    max_tasks_per_heartbeat: int = Field(32767, ge=1, description="maximum-tasks-per-heartbeat")
    max_tasks_after_offswitch: int = Field(0, ge=0, description="maximum-tasks-after-offswitch")
    locality_wait_factor: float = Field(1.0, ge=0, description="mapreduce.job.locality.wait.factor")
    map_slot_memory_mb: float | None = Field(None, gt=0, description="mapred.cluster.map.memory.mb")
    reduce_slot_memory_mb: float | None = Field(None, gt=0, description="mapred.cluster.reduce.memory.mb")
    job_map_memory_mb: dict[str, float] = Field(default_factory=dict, description="mapred.job.map.memory.mb by job")
    job_reduce_memory_mb: dict[str, float] = Field(default_factory=dict, description="...reduce.memory.mb by job")

    @model_validator(mode="after")
    def _capacities_add_up(self) -> CapacitySettings:
        total = sum(q.capacity for q in self.queues.values())
        if math.floor(total) != 100:  # CapacityTaskScheduler.parseQueues
            raise ValueError(f"queue capacities add up to {total}%, not 100%")
        if (self.map_slot_memory_mb is None) != (self.reduce_slot_memory_mb is None):
            raise ValueError("memory-based scheduling needs both map_slot_memory_mb and reduce_slot_memory_mb")
        return self


def ceil_div(a: int, b: int) -> int:
    return (a + b - 1) // b if b else 0


def user_limit(capacity: int, occupied: int, slots_per_task: int, active_users: int, ul_min: int, ulf: float) -> int:
    """The slot limit of one user in a queue (CapacitySchedulerQueue.assignSlotsToJob)."""
    queue_cap = max(capacity, slots_per_task)  # queues of less than one task still make progress
    current = queue_cap if occupied < queue_cap else occupied + slots_per_task
    users = max(1, active_users)
    return min(max(ceil_div(current, users), ceil_div(ul_min * current, 100)), int(queue_cap * ulf))


@dataclass
class SlotsUsage:
    """CapacitySchedulerQueue.SlotsUsage of one task kind, recounted at every heartbeat."""

    capacity: int = 0
    max_capacity: int = -1
    running: int = 0
    occupied: int = 0
    by_user: dict[str, int] = field(default_factory=dict)
    active_users: set[str] = field(default_factory=set)  # users with pending tasks of this kind

    def add(self, user: str, pending: int, running: int, slots: int) -> None:
        self.running += running
        self.occupied += slots
        self.by_user[user] = self.by_user.get(user, 0) + slots
        if pending > 0:
            self.active_users.add(user)


@dataclass
class Queue:
    name: str
    conf: QueueSettings
    jobs: list[Job] = field(default_factory=list)
    usage: dict[TaskKind, SlotsUsage] = field(default_factory=dict)

    def ratio(self, kind: TaskKind) -> float:
        """QueueComparator: occupied / capacity; a queue of capacity 0 counts as full."""
        u = self.usage[kind]
        return 1.0 if u.capacity == 0 else u.occupied / u.capacity

    def can_take(self, kind: TaskKind, slots: int) -> bool:
        """assignSlotsToQueue: stay within maximum-capacity."""
        u = self.usage[kind]
        return not (u.max_capacity > 0 and u.occupied + slots > u.max_capacity)


class Found(Enum):
    LOCAL = "local"
    OFF_SWITCH = "off-switch"
    NONE = "none"
    MEMORY = "memory"  # TASK_FAILING_MEMORY_REQUIREMENT: the tracker is (re)reserved, stop


class CapacityScheduler(TaskScheduler):
    name = "capacity"

    def __init__(self, settings: CapacitySettings | None = None) -> None:
        self.s = settings or CapacitySettings()
        self.queues = {name: Queue(name, conf) for name, conf in self.s.queues.items()}
        self.order = {k: list(self.queues.values()) for k in KINDS}  # re-sorted in place (stable) as in Hadoop
        self.opportunities: dict[Job, int] = {}  # numSchedulingOpportunities
        self.reserved: dict[tuple[int, TaskKind], Job] = {}  # (tracker node, kind) -> job holding its free slots
        self._assigned: dict[tuple[Job, TaskKind], int] = {}  # this heartbeat's launches per job
        self._wait_factor: dict[Job, float] = {}

    # ---- accounting --------------------------------------------------------------------------------
    def slots_per_task(self, job: Job, kind: TaskKind) -> int:
        """JobConf.computeNumSlotsPerMap/Reduce: ceil(job memory / slot memory), 1 without memory scheduling."""
        slot = self.s.map_slot_memory_mb if kind == TaskKind.MAP else self.s.reduce_slot_memory_mb
        if slot is None:  # no memory scheduling: asked at every job of every heartbeat, answered first
            return 1
        wanted = (self.s.job_map_memory_mb if kind == TaskKind.MAP else self.s.job_reduce_memory_mb).get(job.name)
        if wanted is None:
            return 1
        return max(1, math.ceil(wanted / slot))

    def running(self, job: Job, kind: TaskKind) -> int:
        """The job's running attempts of this kind (`Job.running_attempts`), backups too, plus this heartbeat's."""
        return job.running_attempts[kind] + self._assigned.get((job, kind), 0)

    def pending(self, job: Job, kind: TaskKind) -> int:
        left = job.pending_maps if kind == TaskKind.MAP else job.pending_reduces
        return left - self._assigned.get((job, kind), 0)

    def queue_of(self, job: Job) -> Queue:
        queue = self.queues.get(job.pool)
        if queue is None:
            raise ValueError(f"{job} names queue {job.pool!r}, not one of capacity.queues {list(self.queues)}")
        return queue

    def update(self, cluster: ClusterView) -> None:
        """updateAllQueues: capacities from the cluster's slots, then each queue's and user's occupied slots."""
        self.reserved = {key: job for key, job in self.reserved.items() if job.state == JobState.RUNNING}
        self.opportunities = {job: n for job, n in self.opportunities.items() if job.state == JobState.RUNNING}
        self._wait_factor = {job: f for job, f in self._wait_factor.items() if job.state == JobState.RUNNING}
        slots = {TaskKind.MAP: cluster.map_capacity(), TaskKind.REDUCE: cluster.reduce_capacity()}
        for q in self.queues.values():
            q.jobs = []
            for kind in KINDS:
                cap, top = q.conf.capacity, q.conf.maximum_capacity
                q.usage[kind] = SlotsUsage(int(cap * slots[kind] / 100), int(top * slots[kind] / 100) if top else -1)
        held: dict[tuple[Job, TaskKind], int] = {}  # reservations(), all at once
        for (_, kind), job in self.reserved.items():
            held[(job, kind)] = held.get((job, kind), 0) + 1
        for job in cluster.jobs:
            q = self.queue_of(job)
            q.jobs.append(job)
            for kind in KINDS:
                spt, running = self.slots_per_task(job, kind), self.running(job, kind)
                if spt > 1 and spt > max(self._tracker_slots(t, kind) for t in cluster.trackers):
                    raise ValueError(f"{job} needs {spt} {kind.name.lower()} slots per task: no tracker has them")
                occupied = (held.get((job, kind), 0) + running) * spt
                q.usage[kind].add(job.user, self.pending(job, kind), running, occupied)
        for q in self.queues.values():
            if q.conf.supports_priority:
                q.jobs.sort(key=fifo_key)
            else:
                q.jobs.sort(key=lambda j: (j.start_s, j.number))

    def reservations(self, job: Job, kind: TaskKind) -> int:
        return sum(1 for (_, k), j in self.reserved.items() if j is job and k == kind)

    def queue_order(self, kind: TaskKind) -> list[str]:
        """getOrderedQueues after a sort."""
        self.order[kind].sort(key=lambda q: q.ratio(kind))
        return [q.name for q in self.order[kind]]

    def assign_slots_to_job(self, queue: Queue, kind: TaskKind, job: Job, limits: dict[int, int] | None = None) -> bool:
        """Queue below maximum-capacity and the job's user below the user limit after one more task.

        `limits`: the queue's user limit by slots per task, -1 for over maximum-capacity, kept by the caller while
        the queue's usage stays put (one `_find` over its jobs): the same answer for every job of a size."""
        spt, u = self.slots_per_task(job, kind), queue.usage[kind]
        limit = limits.get(spt) if limits is not None else None
        if limit is None:
            limit, conf = -1, queue.conf
            if queue.can_take(kind, spt):
                users, ul_min, ulf = len(u.active_users), conf.minimum_user_limit_percent, conf.user_limit_factor
                limit = user_limit(u.capacity, u.occupied, spt, users, ul_min, ulf)
            if limits is not None:
                limits[spt] = limit
        return limit >= 0 and u.by_user.get(job.user, 0) + spt <= limit

    def available(self, tracker: TaskTracker, kind: TaskKind) -> int:
        """Free slots as this scheduler counts them (multi-slot tasks), never above the tracker's own count."""
        slots = tracker.map_slots if kind == TaskKind.MAP else tracker.reduce_slots
        occupied = sum(self.slots_per_task(a.task.job, kind) for a in tracker.running[kind])
        return max(0, min(slots - occupied, tracker.free(kind)))

    # ---- heartbeats ----------------------------------------------------------------------------------
    def assign(self, tracker: TaskTracker, cluster: ClusterView) -> list[Launch]:
        """CapacityTaskScheduler.assignTasks: maps (addMapTasks), then one reduce (addReduceTask)."""
        self._assigned = {}
        self.update(cluster)
        launches: list[Launch] = []
        taken: set[Task] = set()
        available = self.available(tracker, TaskKind.MAP)
        off_switch_allowed, after_off_switch = True, self.s.max_tasks_after_offswitch
        while available > 0:
            found, task, level = self._find(tracker, TaskKind.MAP, available, off_switch_allowed, cluster, taken)
            if found in (Found.NONE, Found.MEMORY):
                break
            launches.append(Launch(task, level))
            if len(launches) >= self.s.max_tasks_per_heartbeat:
                break
            if found == Found.OFF_SWITCH:
                off_switch_allowed = False
            if not off_switch_allowed:
                if after_off_switch == 0:
                    break
                after_off_switch -= 1
            available -= self._take(task, TaskKind.MAP, taken)
        free = self.available(tracker, TaskKind.REDUCE)
        if free > 0:
            found, task, _ = self._find(tracker, TaskKind.REDUCE, free, True, cluster, taken)
            if found == Found.LOCAL:
                launches.append(Launch(task))
                self._take(task, TaskKind.REDUCE, taken)
        self._assigned = {}
        return launches

    def _take(self, task: Task, kind: TaskKind, taken: set[Task]) -> int:
        """Count a launch in the queue's usage now (queue.update in addMapTasks); returns its slots."""
        job = task.job
        taken.add(task)
        self._assigned[(job, kind)] = self._assigned.get((job, kind), 0) + 1
        spt = self.slots_per_task(job, kind)
        self.queue_of(job).usage[kind].add(job.user, self.pending(job, kind), 1, spt)
        return spt

    def _find(self, tracker: TaskTracker, kind: TaskKind, available: int, off_switch: bool, cluster, taken):
        """TaskSchedulingMgr.assignTasks: a reserved tracker serves its job; else queues by occupied/capacity."""
        job = self.reserved.get((tracker.node, kind))
        if job is not None:
            if available < self.slots_per_task(job, kind):
                return Found.MEMORY, None, None  # re-reserved
            del self.reserved[(tracker.node, kind)]
            if kind == TaskKind.MAP:
                self.opportunities[job] = OVERRIDE
            return self._obtain(job, kind, tracker, True, cluster, taken)
        for name in self.queue_order(kind):
            queue = self.queues[name]
            if not queue.can_take(kind, 1):
                continue
            limits: dict[int, int] = {}  # the queue's usage changes only after this returns
            for job in queue.jobs:  # getTaskFromQueue
                if not self.assign_slots_to_job(queue, kind, job, limits):
                    continue
                spt = self.slots_per_task(job, kind)
                if spt <= available:  # MemoryMatcher.matchesMemoryRequirements
                    result = self._obtain(job, kind, tracker, off_switch, cluster, taken)
                    if result[0] != Found.NONE:
                        return result
                    continue
                pending = self.pending(job, kind)
                if pending and self.reservations(job, kind) < pending and spt <= self._tracker_slots(tracker, kind):
                    self.reserved[(tracker.node, kind)] = job  # reserve the tracker's free slots for the job
                    return Found.MEMORY, None, None
        return Found.NONE, None, None

    @staticmethod
    def _tracker_slots(tracker: TaskTracker, kind: TaskKind) -> int:
        return tracker.map_slots if kind == TaskKind.MAP else tracker.reduce_slots

    def _obtain(self, job: Job, kind: TaskKind, tracker: TaskTracker, off_switch: bool, cluster, taken):
        """Map/ReduceSchedulingMgr.obtainNewTask."""
        if kind == TaskKind.REDUCE:
            task = job.find_reduce(taken)
            return (Found.LOCAL, task, None) if task is not None else (Found.NONE, None, None)
        self.opportunities[job] = self.opportunities.get(job, 0) + 1  # schedulingOpportunity
        if not job.pending_maps and (not off_switch or job in self._wait_factor):
            return Found.NONE, None, None  # both searches find none; the off-switch test would only fix the wait factor
        hit = job.find_map(tracker.node, tracker.rack, Locality.RACK, taken)  # obtainNewLocalMapTask
        if hit is not None:
            self.opportunities[job] = 0  # resetSchedulingOpportunities
            return Found.LOCAL, hit[0], hit[1]
        if self.slots_per_task(job, kind) > 1 or (off_switch and self.schedule_off_switch(job, cluster)):
            hit = job.find_map(tracker.node, tracker.rack, Locality.OFF_RACK, taken)
            if hit is not None:
                return Found.OFF_SWITCH, hit[0], hit[1]
        return Found.NONE, None, None

    def schedule_off_switch(self, job: Job, cluster: ClusterView) -> bool:
        """JobInProgress.scheduleOffSwitch: missed opportunities > min(unfinished maps, trackers) x wait factor."""
        required = min(len(job.maps) - job.finished_maps, len(cluster.trackers))
        return required * self.wait_factor(job, cluster) < self.opportunities.get(job, 0)

    def wait_factor(self, job: Job, cluster: ClusterView) -> float:
        """localityWaitFactor: min(nodes holding the job's splits / nodes, mapreduce.job.locality.wait.factor)."""
        factor = self._wait_factor.get(job)
        if factor is None:
            nodes = {int(n) for t in job.maps for n in t.replicas}
            factor = min(len(nodes) / max(len(cluster.trackers), 1), self.s.locality_wait_factor)
            self._wait_factor[job] = factor
        return factor
