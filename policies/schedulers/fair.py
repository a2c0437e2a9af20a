"""Hadoop 1.x FairScheduler (H121 src/contrib/fairscheduler; reference/algorithms.md section 6).

Pools come from the allocation config in `FairSettings.pools` (a job names its pool in `Job.pool`; a pool
missing there gets the defaults: no min share, weight 1, fair mode). Demands, weights, fair shares and the
starvation clocks are recomputed (`update`) as H1's UpdateThread does, every `update_interval_s` (500 ms), and when
a job is added (jobAdded) or has ended; between updates a heartbeat reads them as they were, but the running counts
it orders by are live (`JobSchedulable.getRunningTasks` reads `job.runningMaps()`). A heartbeat fills the
tracker's free slots one task at a time (`FairScheduler.assignTasks`): the task kind with fewer running on the
tracker first, pools in `FairShareComparator` order (needy pools below min(minShare, demand) first by
running/minShare, then by running/weight), jobs in their pool's order (fair or FIFO), maps at the level delay
scheduling allows (`getAllowedLocalityLevel`), under the CapBasedLoadManager cap and the assign-multiple cap.
The departures' list below gives the one place where we update where Hadoop does not (an ended job).

Preemption acts outside heartbeats: `preemptions(cluster)` (also `adjust`, with `period_s` = the update
interval, so the scheduler is also `Periodic`) must be called every
`update_interval_s` by the model; it refreshes the starvation clocks and, every `preemption_interval_s`,
returns `Kill`s of the newest attempts of pools above their fair share (`preemptTasksIfNecessary`).

Departures from Hadoop: fair shares are exact (`vcloud.waterfill.divvy`) instead of 25 bisection steps;
demand counts no pending speculative backup (speculation is a separate policy); the starvation clocks run
even when preemption is off (Hadoop freezes them then, so a finite timeout would end delay scheduling
for good); trackers that cannot launch skip heartbeats (`hadoop_layer.tracker`), so a job skipped at one
heartbeat waits until the next heartbeat of any tracker that could launch, not of any tracker at all; a job that
ended triggers an update at the next heartbeat (jobRemoved only drops it: its share stays unclaimed until the next
interval, at most 500 ms).
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass, field
from typing import Literal

import numpy as np
from pydantic import BaseModel, ConfigDict, Field

from hadoop_layer.config import heartbeat_interval_s
from hadoop_layer.hdfs import Locality
from hadoop_layer.interfaces import ClusterView, Kill, Launch, TaskScheduler
from hadoop_layer.ledger import PRIORITY_ORDER, fifo_key
from hadoop_layer.tasks import Job, Task, TaskKind
from hadoop_layer.tracker import TaskTracker
from vcloud.waterfill import divvy

INF = float("inf")
MAP, REDUCE = TaskKind.MAP, TaskKind.REDUCE
KINDS = (MAP, REDUCE)
PRIORITY_FACTOR = {"VERY_HIGH": 4.0, "HIGH": 2.0, "NORMAL": 1.0, "LOW": 0.5, "VERY_LOW": 0.25}  # getPriorityFactor
MAX_AUTO_DELAY_S = 15.0  # MAX_AUTOCOMPUTED_LOCALITY_DELAY


class PoolSettings(BaseModel):
    """One <pool> of the allocation file (PoolManager)."""

    model_config = ConfigDict(extra="forbid")
    min_maps: int = Field(0, ge=0, description="minMaps: min share of map slots")
    min_reduces: int = Field(0, ge=0, description="minReduces: min share of reduce slots")
    max_maps: int | None = Field(None, ge=0, description="maxMaps (None: no cap)")
    max_reduces: int | None = Field(None, ge=0, description="maxReduces (None: no cap)")
    weight: float = Field(1.0, gt=0, description="weight")
    max_running_jobs: int | None = Field(None, ge=0, description="maxRunningJobs (None: poolMaxJobsDefault)")
    min_share_preemption_timeout_s: float | None = Field(
        None, ge=0, description="minSharePreemptionTimeout (None: the default)"
    )
    scheduling_mode: Literal["fair", "fifo"] | None = Field(None, description="schedulingMode (None: the default)")


class FairSettings(BaseModel):
    """mapred.fairscheduler.* and the allocation file's global elements; Hadoop 1.x defaults."""

    model_config = ConfigDict(extra="forbid")
    pools: dict[str, PoolSettings] = Field(default_factory=dict, description="the allocation file's pools")
    default_scheduling_mode: Literal["fair", "fifo"] = Field("fair", description="defaultPoolSchedulingMode")
    pool_max_jobs: int | None = Field(None, ge=0, description="poolMaxJobsDefault (None: no limit)")
    user_max_jobs: int | None = Field(None, ge=0, description="userMaxJobsDefault (None: no limit)")
    assign_multiple: bool = Field(True, description="mapred.fairscheduler.assignmultiple")
    assign_multiple_maps: int | None = Field(None, ge=1, description="assignmultiple.maps (None = -1: free slots)")
    assign_multiple_reduces: int | None = Field(None, ge=1, description="assignmultiple.reduces (None = -1)")
    size_based_weight: bool = Field(False, description="sizebasedweight: job weight log2(1 + demand)")
    load_max_diff: float = Field(0.0, ge=0, description="load.max.diff of CapBasedLoadManager")
    delay_scheduling: bool = Field(True, description="false: naive fair sharing, maps at any locality at once")
    node_delay_s: float | None = Field(None, ge=0, description="locality.delay.node (None: min(15, 1.5 heartbeats))")
    rack_delay_s: float | None = Field(None, ge=0, description="locality.delay.rack (None: min(15, 1.5 heartbeats))")
    preemption: bool = Field(False, description="mapred.fairscheduler.preemption")
    preemption_interval_s: float = Field(15.0, ge=0.1, le=86400, description="preemption.interval")
    update_interval_s: float = Field(
        0.5, ge=0.1, le=86400, description="update.interval: demands and fair shares recomputed; preemptions()' period"
    )
    min_share_preemption_timeout_s: float = Field(INF, ge=0, description="defaultMinSharePreemptionTimeout")
    fair_share_preemption_timeout_s: float = Field(INF, ge=0, description="fairSharePreemptionTimeout")


def compute_fair_shares(weights, min_shares, demands, total: float) -> np.ndarray:
    """SchedulingAlgorithms.computeFairShares: find R with share_i = min(d_i, max(m_i, R w_i)) summing to
    min(total, sum d). If the min shares alone exceed `total`, Hadoop's search ends at R ~ 0: min(m_i, d_i).

    Remembered by its inputs (a pure function): an update every half second mostly finds the pools' weights,
    demands and capacity as they were (9 in 10 calls in Coupling's 200 jobs), and each new answer is a root search."""
    return np.array(_fair_shares(tuple(weights), tuple(min_shares), tuple(demands), total), dtype=float)


@functools.lru_cache(maxsize=1024)
def _fair_shares(weights: tuple, min_shares: tuple, demands: tuple, total: float) -> tuple[float, ...]:
    d = np.asarray(demands, float)
    if d.size == 0:
        return ()
    floor = np.minimum(np.asarray(min_shares, float), d)
    if floor.sum() >= total:
        return tuple(floor.tolist())
    return tuple(divvy(np.asarray(weights, float), floor, d, float(total)).tolist())


@dataclass
class Schedulable:
    """A PoolSchedulable or JobSchedulable of one task kind: what the comparators and water-filling read."""

    name: str
    start_s: float = 0.0
    priority: str = "NORMAL"
    weight: float = 1.0
    min_share: int = 0
    demand: int = 0
    running: int = 0
    fair_share: float = 0.0


class Redistribution:
    """PoolSchedulable.redistributeShare at an update: the pool's share among its jobs by weight up to their demands.
    The jobs' shares are worked out when one is first read: no decision reads them (jobs are ordered by running /
    weight, `job_order`; preemption reads the pools' shares), so most updates never do."""

    def __init__(self, weights: list[float], demands: list[int], share: float) -> None:
        self.weights, self.demands, self.share = weights, demands, share
        self._shares: list[float] | None = None

    def __getitem__(self, i: int) -> float:
        if self._shares is None:
            n = len(self.weights)
            self._shares = [float(x) for x in compute_fair_shares(self.weights, [0] * n, self.demands, self.share)]
        return self._shares[i]


class JobSchedulable(Schedulable):
    """A JobSchedulable: no min share; its fair share comes from its pool's `Redistribution` when first read."""

    _share: tuple[Redistribution, int] | float = 0.0

    @property
    def fair_share(self) -> float:
        share = self._share
        if isinstance(share, tuple):
            self._share = share = share[0][share[1]]
        return share

    @fair_share.setter
    def fair_share(self, value: float | tuple[Redistribution, int]) -> None:
        self._share = value


def job_order(s: Schedulable) -> tuple:
    """fair_order for a job (min share 0: never needy): running / weight, start time, name."""
    return (s.running / s.weight if s.weight > 0 else INF, s.start_s, s.name)


def fair_order(s: Schedulable) -> tuple:
    """FairShareComparator as a sort key: needy first (by running / minShare), then running / weight."""
    min_share = min(s.min_share, s.demand)
    needy = s.running < min_share
    ratio = s.running / max(min_share, 1.0) if needy else s.running / s.weight if s.weight > 0 else INF
    return (not needy, ratio, s.start_s, s.name)


def fifo_order(s: Schedulable) -> tuple:
    """FifoComparator: priority, start time, name."""
    return (PRIORITY_ORDER.get(s.priority, 2), s.start_s, s.name)


@dataclass
class Pool:
    name: str
    conf: PoolSettings
    mode: str
    created_s: float
    jobs: list[Job] = field(default_factory=list)
    sched: dict[TaskKind, Schedulable] = field(default_factory=dict)
    last_at_min: dict[TaskKind, float] = field(default_factory=dict)  # lastTimeAtMinShare
    last_at_half: dict[TaskKind, float] = field(default_factory=dict)  # lastTimeAtHalfFairShare

    def max_slots(self, kind: TaskKind) -> float:
        cap = self.conf.max_maps if kind == TaskKind.MAP else self.conf.max_reduces
        return INF if cap is None else cap


@dataclass
class JobInfo:
    """FairScheduler.JobInfo: runnability, the two schedulables, and the delay-scheduling state."""

    sched: dict[TaskKind, Schedulable]
    runnable: bool = False
    level: Locality = Locality.NODE  # lastMapLocalityLevel
    waited_s: float = 0.0  # timeWaitedForLocalMap
    skipped: bool = False  # skippedAtLastHeartbeat
    no_locations: bool = False  # the job has splits without locations (nonLocalMaps)


class FairScheduler(TaskScheduler):
    name = "fair"

    def __init__(self, settings: FairSettings | None = None) -> None:
        self.s = settings or FairSettings()
        self.period_s = self.s.update_interval_s if self.s.preemption else None
        self.pools: dict[str, Pool] = {}
        self.infos: dict[Job, JobInfo] = {}
        self.last_heartbeat_s: float | None = None
        self.last_preempt_check_s = 0.0
        self.last_update_s = -INF
        self._skipped: list[JobInfo] = []  # the infos with `skipped` set, in the order they were set
        self._delays: tuple[tuple, tuple[float, float]] = ((), (0.0, 0.0))  # (now, trackers) -> delays()
        self._demands = dict.fromkeys(KINDS, 0)  # the pools' demands summed at the last update (update)
        self._running = dict.fromkeys(KINDS, 0)  # the pools' running attempts summed at the last count

    # ---- update(): runnability, demands, fair shares, starvation clocks --------------------------
    def pool(self, name: str, now: float) -> Pool:
        pool = self.pools.get(name)
        if pool is None:
            conf = self.s.pools.get(name) or PoolSettings()
            mode = conf.scheduling_mode or self.s.default_scheduling_mode
            pool = self.pools[name] = Pool(name, conf, mode, now)
            for kind in KINDS:
                minimum = conf.min_maps if kind == TaskKind.MAP else conf.min_reduces
                pool.sched[kind] = Schedulable(name, weight=conf.weight, min_share=minimum)
                pool.last_at_min[kind] = pool.last_at_half[kind] = now
        return pool

    def update(self, cluster: ClusterView) -> None:
        """FairScheduler.update: drop ended jobs, runnability, demands, fair shares of pools then jobs."""
        now, jobs = cluster.now, cluster.jobs
        self.last_update_s = now
        running = set(jobs)  # a job in its cleanup (hadoop.job_setup_cleanup) has left them, though still RUNNING
        for gone in [j for j in self.infos if j not in running]:
            del self.infos[gone]
        for name in ("default", *self.s.pools):  # PoolManager creates these at start
            self.pool(name, now)
        for pool in self.pools.values():
            pool.jobs = []
        for job in jobs:
            if job not in self.infos:
                sched = {k: JobSchedulable(job.job_id, job.start_s or now, job.priority) for k in KINDS}
                self.infos[job] = JobInfo(sched, no_locations=any(len(t.replicas) == 0 for t in job.maps))
            self.pool(job.pool, now).jobs.append(job)
        self._update_runnability(jobs)
        self._count_running()
        capacity = {TaskKind.MAP: cluster.map_capacity(), TaskKind.REDUCE: cluster.reduce_capacity()}
        for kind in KINDS:
            for pool in self.pools.values():
                demand = 0
                for job in pool.jobs:
                    info = self.infos[job]
                    js = info.sched[kind]
                    js.demand = self._job_demand(job, kind, info, js.running)
                    size = math.log2(1 + js.demand) if self.s.size_based_weight else 1.0  # getJobWeight
                    js.weight = size * PRIORITY_FACTOR.get(job.priority, 1.0) if info.runnable else 1.0
                    demand += js.demand
                pool.sched[kind].demand = int(min(demand, pool.max_slots(kind)))
            pools = list(self.pools.values())
            shares = compute_fair_shares(
                [p.sched[kind].weight for p in pools],
                [p.sched[kind].min_share for p in pools],
                [p.sched[kind].demand for p in pools],
                capacity[kind],
            )
            for pool, share in zip(pools, shares, strict=True):
                pool.sched[kind].fair_share = float(share)
                js = [self.infos[j].sched[kind] for j in pool.jobs]
                if pool.mode == "fair":  # PoolSchedulable.redistributeShare (worked out when read)
                    inner = Redistribution([s.weight for s in js], [s.demand for s in js], share)
                    for i, s in enumerate(js):
                        s.fair_share = (inner, i)
                else:
                    for s in js:
                        s.fair_share = 0.0
                ps = pool.sched[kind]
                if not ps.running < min(ps.min_share, ps.demand):  # isStarvedForMinShare
                    pool.last_at_min[kind] = now
                if not ps.running < math.floor(min(ps.fair_share / 2, ps.demand)):  # isStarvedForFairShare
                    pool.last_at_half[kind] = now
        pools = self.pools.values()
        self._demands = {k: sum(p.sched[k].demand for p in pools) for k in KINDS}  # assign's runnable tasks

    def _jobs_changed(self, jobs: list[Job]) -> bool:
        """A job was added or has ended since the last update (jobAdded calls update(); an ended job leaves its pool
        at once, jobRemoved: we update then too, rather than leave its share unclaimed until the next interval)."""
        infos = self.infos
        return len(jobs) != len(infos) or any(job not in infos for job in jobs)

    def _count_running(self) -> None:
        """Between updates the running counts stay live (JobSchedulable.getRunningTasks reads job.runningMaps());
        demands, weights, fair shares and the starvation clocks are the last update's. A job's count is its
        running tasks' attempts, backups too (`Job.running_attempts`, kept as attempts start and end: the sum of
        `len(t.active)` over `job.running_tasks[kind]` without the walk)."""
        infos = self.infos
        all_maps = all_reduces = 0
        for pool in self.pools.values():
            maps = reduces = 0
            for job in pool.jobs:
                sched, counts = infos[job].sched, job.running_attempts
                sched[MAP].running = n_maps = counts[MAP]
                sched[REDUCE].running = n_reduces = counts[REDUCE]
                maps += n_maps
                reduces += n_reduces
            pool_sched = pool.sched
            pool_sched[MAP].running, pool_sched[REDUCE].running = maps, reduces
            all_maps += maps
            all_reduces += reduces
        self._running = {MAP: all_maps, REDUCE: all_reduces}

    def _update_runnability(self, jobs: list[Job]) -> None:
        """updateRunnability: in FIFO order, jobs are runnable until their user's or pool's job limit. Without any
        limit every job is runnable, in any order."""
        if self.s.user_max_jobs is None and all(
            (p.conf.max_running_jobs if p.conf.max_running_jobs is not None else self.s.pool_max_jobs) is None
            for p in (self.pools[job.pool] for job in jobs)
        ):
            infos = self.infos
            for job in jobs:
                infos[job].runnable = True
            return
        per_user: dict[str, int] = {}
        per_pool: dict[str, int] = {}
        for job in sorted(jobs, key=fifo_key):
            pool = self.pools[job.pool]
            pool_max = pool.conf.max_running_jobs if pool.conf.max_running_jobs is not None else self.s.pool_max_jobs
            user_n, pool_n = per_user.get(job.user, 0), per_pool.get(job.pool, 0)
            ok = (self.s.user_max_jobs is None or user_n < self.s.user_max_jobs) and (
                pool_max is None or pool_n < pool_max
            )
            self.infos[job].runnable = ok
            if ok:
                per_user[job.user], per_pool[job.pool] = user_n + 1, pool_n + 1

    @staticmethod
    def _job_demand(job: Job, kind: TaskKind, info: JobInfo, running: int) -> int:
        """JobSchedulable.updateDemand: 1 per pending task plus the running attempts; reduces after slow start."""
        if not info.runnable or (kind == TaskKind.REDUCE and not job.reduces_schedulable()):
            return 0
        pending = job.pending_maps if kind == TaskKind.MAP else job.pending_reduces
        return pending + running

    # ---- delay scheduling ----------------------------------------------------------------------------
    def delays(self, cluster: ClusterView) -> tuple[float, float]:
        """Node and rack locality delays; auto: min(15 s, 1.5 x the JobTracker's heartbeat interval). Worked out
        once per instant and cluster size (the heartbeat interval's inputs; the config does not change in a run)."""
        key = (cluster.now, len(cluster.trackers))
        if self._delays[0] != key:
            self._delays = (key, self._work_out_delays(cluster))
        return self._delays[1]

    def _work_out_delays(self, cluster: ClusterView) -> tuple[float, float]:
        auto = min(MAX_AUTO_DELAY_S, 1.5 * heartbeat_interval_s(len(cluster.trackers), cluster.config))
        node = self.s.node_delay_s if self.s.node_delay_s is not None else auto
        rack = self.s.rack_delay_s if self.s.rack_delay_s is not None else auto
        return node, rack

    def allowed_level(self, job: Job, cluster: ClusterView) -> Locality:
        """getAllowedLocalityLevel: from the last launch's level and the time waited since."""
        return self._allowed_level(job, cluster.now, cluster)

    def _allowed_level(self, job: Job, now: float, cluster: ClusterView) -> Locality:
        info = self.infos[job]
        if not self.s.delay_scheduling or info.no_locations:
            return Locality.OFF_RACK
        pool = self.pools[job.pool]
        if (
            now - pool.last_at_min[TaskKind.MAP] > self.min_share_timeout(pool)
            or now - pool.last_at_half[TaskKind.MAP] > self.s.fair_share_preemption_timeout_s
        ):
            return Locality.OFF_RACK  # the pool is starving: no waiting for locality
        node_delay, rack_delay = self.delays(cluster)
        if info.level == Locality.NODE:
            if info.waited_s >= node_delay + rack_delay:
                return Locality.OFF_RACK
            return Locality.RACK if info.waited_s >= node_delay else Locality.NODE
        if info.level == Locality.RACK:
            return Locality.OFF_RACK if info.waited_s >= rack_delay else Locality.RACK
        return Locality.OFF_RACK

    def min_share_timeout(self, pool: Pool) -> float:
        own = pool.conf.min_share_preemption_timeout_s
        return own if own is not None else self.s.min_share_preemption_timeout_s

    # ---- heartbeats ----------------------------------------------------------------------------------
    def assign(self, tracker: TaskTracker, cluster: ClusterView) -> list[Launch]:
        """FairScheduler.assignTasks."""
        now = cluster.now
        if now - self.last_update_s >= self.s.update_interval_s or self._jobs_changed(cluster.jobs):
            self.update(cluster)
        else:
            self._count_running()
        since = 0.0 if self.last_heartbeat_s is None else now - self.last_heartbeat_s  # updateLocalityWaitTimes
        self.last_heartbeat_s = now
        for info in self._skipped:  # the infos with `skipped` set (a job gone since is not read again)
            if info.skipped:
                info.waited_s, info.skipped = info.waited_s + since, False
        self._skipped = []
        if self._running == self._demands:  # every kind's demand is running: the loop's first test rejects both kinds
            return []
        pools = list(self.pools.values())
        runnable = self._demands  # the pools' demands summed at the last update
        running = self._running.copy()  # the pools' running counts summed now (_count_running)
        on_tracker = {k: len(tracker.running[k]) for k in KINDS}  # the heartbeat's status: fixed in the loop
        limit = {MAP: self._max_to_assign(tracker, MAP), REDUCE: self._max_to_assign(tracker, REDUCE)}
        totals = {TaskKind.MAP: cluster.map_capacity(), TaskKind.REDUCE: cluster.reduce_capacity()}
        assigned = dict.fromkeys(KINDS, 0)
        rejected = dict.fromkeys(KINDS, False)
        visited: set[Job] = set()
        launched: set[Job] = set()
        taken: set[Task] = set()
        launches: list[Launch] = []
        while True:
            for k in KINDS:
                if not rejected[k] and (
                    assigned[k] >= limit[k]
                    or running[k] == runnable[k]
                    or on_tracker[k] >= self.load_cap(runnable[k], tracker, k, totals[k])
                ):
                    rejected[k] = True
            if all(rejected.values()) or (not self.s.assign_multiple and launches):
                break
            if rejected[TaskKind.MAP] or rejected[TaskKind.REDUCE]:
                kind = TaskKind.REDUCE if rejected[TaskKind.MAP] else TaskKind.MAP
            else:
                kind = TaskKind.MAP if on_tracker[TaskKind.MAP] <= on_tracker[TaskKind.REDUCE] else TaskKind.REDUCE
            hit = None
            for pool in sorted(pools, key=lambda p: fair_order(p.sched[kind])):
                hit = self._pool_task(pool, kind, tracker, cluster, visited, taken)
                if hit is not None:
                    break
            if hit is None:
                rejected[kind] = True
                continue
            task, level = hit
            launches.append(Launch(task, level))
            taken.add(task)
            assigned[kind] += 1
            running[kind] += 1
            self.infos[task.job].sched[kind].running += 1
            self.pools[task.job.pool].sched[kind].running += 1
            if kind == TaskKind.MAP:  # updateLastMapLocalityLevel
                info = self.infos[task.job]
                info.level, info.waited_s = level, 0.0
                launched.add(task.job)
        for job in visited - launched:
            info = self.infos[job]
            info.skipped = True
            self._skipped.append(info)
        return launches

    def load_cap(self, runnable: int, tracker: TaskTracker, kind: TaskKind, total_slots: int) -> int:
        """CapBasedLoadManager.getCap: ceil(slots x min(1, maxDiff + runnable / total slots))."""
        slots = tracker.map_slots if kind == TaskKind.MAP else tracker.reduce_slots
        load = self.s.load_max_diff + (runnable / total_slots if total_slots else 0.0)
        return math.ceil(slots * min(1.0, load))

    def _max_to_assign(self, tracker: TaskTracker, kind: TaskKind) -> int:
        """maxTasksToAssign, never above the tracker's free slots."""
        free = tracker.free(kind)
        if not self.s.assign_multiple:
            return min(1, free)
        cap = self.s.assign_multiple_maps if kind == TaskKind.MAP else self.s.assign_multiple_reduces
        return free if cap is None else min(cap, free)

    def _pool_task(self, pool: Pool, kind: TaskKind, tracker: TaskTracker, cluster: ClusterView, visited, taken):
        """PoolSchedulable.assignTask then JobSchedulable.assignTask for the jobs in the pool's order."""
        if pool.sched[kind].running >= pool.max_slots(kind):
            return None
        now = cluster.now
        order = job_order if pool.mode == "fair" else fifo_order  # job_order: fair_order of a job
        for job in sorted(pool.jobs, key=lambda j: order(self.infos[j].sched[kind])):
            if not self.infos[job].runnable:
                continue
            if kind == TaskKind.REDUCE:
                task = job.find_reduce(taken)
                if task is not None:
                    return task, None
                continue
            visited.add(job)
            hit = job.find_map(tracker.node, tracker.rack, self._allowed_level(job, now, cluster), taken)
            if hit is not None:
                return hit
        return None

    # ---- preemption (the periodic hook) ----------------------------------------------------------------
    def adjust(self, cluster: ClusterView) -> list[Kill]:
        """`Periodic`: the JobTracker calls this every `period_s` (= update_interval_s when preemption is on)."""
        return self.preemptions(cluster)

    def preemptions(self, cluster: ClusterView) -> list[Kill]:
        """UpdateThread: update(), then preemptTasksIfNecessary every preemption interval. Call it every
        `update_interval_s`: the starvation clocks only move when it (or a heartbeat) runs."""
        self.update(cluster)
        now = cluster.now
        if not self.s.preemption or now - self.last_preempt_check_s < self.s.preemption_interval_s:
            return []
        self.last_preempt_check_s = now
        kills: list[Kill] = []
        for kind in KINDS:
            wanted = sum(self.tasks_to_preempt(pool, kind, now) for pool in self.pools.values())
            if wanted > 0:
                kills += self._victims(kind, wanted)
        return kills

    def tasks_to_preempt(self, pool: Pool, kind: TaskKind, now: float) -> int:
        """tasksToPreempt: up to min share after its timeout, up to the fair share after below-half timeout."""
        s = pool.sched[kind]
        for_min = for_fair = 0
        if now - pool.last_at_min[kind] > self.min_share_timeout(pool):
            for_min = max(0, min(s.min_share, s.demand) - s.running)
        if now - pool.last_at_half[kind] > self.s.fair_share_preemption_timeout_s:
            for_fair = max(0, int(min(s.fair_share, s.demand)) - s.running)
        return max(for_min, for_fair)

    def _victims(self, kind: TaskKind, wanted: int) -> list[Kill]:
        """preemptTasks: newest attempts first, from pools above their fair share, none put below it."""
        over = [p for p in self.pools.values() if p.sched[kind].running > p.sched[kind].fair_share]
        attempts = [a for p in over for job in p.jobs for t in job.running_tasks[kind] for a in t.active]
        attempts.sort(key=lambda a: a.start_s, reverse=True)
        left = {p.name: p.sched[kind].running for p in self.pools.values()}
        kills: list[Kill] = []
        for attempt in attempts:
            pool = self.pools[attempt.task.job.pool]
            if left[pool.name] > pool.sched[kind].fair_share:
                kills.append(Kill(attempt))
                wanted -= 1
                if wanted == 0:
                    break
                left[pool.name] -= 1
        return kills
