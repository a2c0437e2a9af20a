"""Cluster-scheduler experiments on a static pool: Capacity's queues and user limits, Quincy against Fair.

Both run on physical-like nodes (`StaticNodesSettings`: one 4-vCPU slave VM alone on each 4-core host, 4 map
and 2 reduce slots, a static pool, Hadoop 1.1 defaults with 3 replicas, no speculation), so the cloud layer adds
no contention and what they show is the task scheduler's doing.

`capacity-queues` (algorithms.md 7; the Capacity slides 16-18): queues A, B, C of 50 / 30 / 20 % of the slots.
A (one user, maximum-capacity 60 %, user-limit-factor 2) is busy from 0; B (one user, user-limit-factor 1)
submits a burst at `phase_s`; C (`c_users` users, minimum-user-limit-percent 50) starts at 2 x `phase_s`. The
run stops at 3 x `phase_s`. Expected map-slot shares, after each change has settled (`settle_s`, a few map
durations: there is no preemption, slots come back as tasks end): A alone 0.6 (it borrows idle slots up to its
maximum capacity, not more); A + B: 0.6 + 0.3 and 0.1 idle (B's only user is held to 1 x B's capacity); all
three: 0.5 / 0.3 / 0.2, and inside C two users at a time, each near half of C (minimum user limit 50 %). The
measured shares sit a little below (0.57 for 0.6): a freed slot stays empty until its tracker's next heartbeat.

`quincy-locality` (Quincy, SOSP 2009; h-quincy.txt): a mixed job stream (Grep, WordCount, Sort) over four racks
with the input on a part of the slaves only (`data_fraction`), so that many maps cannot be node-local and some
not even rack-local. Run it under `scheduler=quincy` (`quincy.fairness` none / fair / fair-preemption) and
`scheduler=fair` (delay scheduling; `fair.delay_scheduling=false` for naive fair sharing) and compare map
locality, the MB that crossed racks (map input and shuffle), mean job time and the solver's time. With the
paper's costs (psi 1 and xi 2 per GB, omega 0.5 per second waited) moving a 64 MB split across the core costs
0.125, a quarter of a second of waiting, so the flow hardly waits for locality (it still picks, among the waiting
tasks, those local to a freed slot); with
`quincy.psi=500 quincy.xi=1000` (a split off-rack costs as much as two minutes of waiting) data is dear and the
flow trades waiting for locality. `POLICIES` lists the runs that `vcloud reproduce` compares.
"""

from __future__ import annotations

import itertools
from typing import Any, ClassVar

import numpy as np
from pydantic import Field

from hadoop_layer import jobmix
from hadoop_layer.hdfs import Locality
from hadoop_layer.model import HadoopModel
from hadoop_layer.profiles import COUPLING
from hadoop_layer.tasks import Job, TaskKind
from policies.schedulers import CapacitySettings
from scenarios import limits as L
from scenarios.base import AllocatorName
from scenarios.hadoop_base import (
    HadoopClusterSettings,
    HadoopScenario,
    SchedulerName,
    SpeculationName,
    build_cluster,
)

GREP = COUPLING["grep"]


def _queues() -> CapacitySettings:
    return CapacitySettings(
        queues={
            "A": {"capacity": 50, "maximum_capacity": 60, "user_limit_factor": 2.0},
            "B": {"capacity": 30},
            "C": {"capacity": 20, "minimum_user_limit_percent": 50},
        }
    )


class StaticNodesSettings(HadoopClusterSettings):
    """One slave VM per 4-core host at the testbed's 2.4 GHz, static pool of the hosts' capacity, no speculation."""

    allocator: AllocatorName = "static"
    pool_cpu_mhz: float | None = None  # the hosts' capacity: one VM per host
    pool_mem_mb: float | None = None
    cores_per_host: int = Field(4, ge=1, le=L.MAX_CORES_PER_HOST)
    speculation: SpeculationName = "none"


class CapacityQueuesSettings(StaticNodesSettings):
    """10 slaves (40 map, 20 reduce slots) under Capacity with queues A, B, C; B at phase_s, C at 2 x phase_s."""

    slaves: int = Field(10, ge=1, le=L.MAX_SLAVES)
    scheduler: SchedulerName = "capacity"
    capacity: CapacitySettings = Field(default_factory=_queues)
    phase_s: float = Field(
        600.0, ge=60, le=L.DAY_S, description="B submits at phase_s, C at 2 x phase_s; the run ends at 3x"
    )
    settle_s: float = Field(
        100.0, ge=0, le=L.DAY_S, description="left out of each window's start: running tasks end first"
    )
    c_users: int = Field(3, ge=1, le=100, description="users submitting one job each to queue C")
    bin_s: float = Field(30.0, ge=1, le=L.DAY_S, description="width of the share time series' bins")
    length_field: ClassVar[str] = "phase_s"

    def run_length_s(self) -> float | None:
        return 3 * self.phase_s  # CapacityQueues.build: the run ends at 3 x phase_s


class CapacityQueues(HadoopScenario):
    name = "capacity-queues"
    description = "Capacity scheduler: queues get their capacity, borrow idle slots up to the maximum, user limits"
    Settings = CapacityQueuesSettings
    stops_itself = False  # it ends at 3 x phase_s with the queues still busy, by design

    def unfinished(self, model: HadoopModel) -> str | None:
        return None

    def build(self, settings: CapacityQueuesSettings, seed: int, check: bool = False) -> HadoopModel:
        s = settings.model_copy(update={"hosts": settings.slaves + 2, "hosts_per_rack": (settings.slaves + 3) // 2})
        s = s.model_copy(update={"max_duration_s": 3 * s.phase_s})
        model = build_cluster(s, seed, check)
        map_s = 10.0  # below a Grep map's time on these nodes (about 13 s with 4 per node): queues never run dry
        slots = s.slaves * s.hadoop.map_slots
        # each queue gets more maps than it can run before the end: enough to stay busy in its windows
        a_maps = int(1.2 * 0.6 * slots * 3 * s.phase_s / map_s) + 1
        b_maps = int(1.2 * 0.3 * slots * 2 * s.phase_s / map_s) + 1
        c_maps = int(1.2 * 0.2 * slots * s.phase_s / map_s) + 1
        jobs = [("A-1", "A", "alice", 0.0, a_maps), ("B-1", "B", "bob", s.phase_s, b_maps)]
        jobs += [(f"C-{u + 1}", "C", f"user{u + 1}", 2 * s.phase_s + u, c_maps) for u in range(s.c_users)]
        for name, queue, user, submit_s, maps in jobs:
            arrival = jobmix.JobArrival(name, GREP, submit_s, maps * s.hadoop.block_mb, maps, 1, queue, user)
            table = jobmix.splits_for(arrival, s.hadoop.block_mb, model.rng)
            model.add_job(name, GREP, submit_s, table.map_specs(), 1, pool=queue, user=user)
        return model

    def summary(self, model: HadoopModel) -> dict[str, Any]:
        s: CapacityQueuesSettings = model.settings
        end = 3 * s.phase_s
        windows = {
            "A alone": (s.settle_s, s.phase_s),
            "A+B": (s.phase_s + s.settle_s, 2 * s.phase_s),
            "A+B+C": (2 * s.phase_s + s.settle_s, end),
        }
        occupancy = Occupancy(model, end)
        queues = list(s.capacity.queues)
        out: dict[str, Any] = {
            "map_slots": occupancy.slots[TaskKind.MAP],
            "reduce_slots": occupancy.slots[TaskKind.REDUCE],
        }
        out["windows"] = {
            name: {
                "from_s": a,
                "to_s": b,
                "map_share": {q: occupancy.share(TaskKind.MAP, a, b, queue=q) for q in queues},
                "reduce_share": {q: occupancy.share(TaskKind.REDUCE, a, b, queue=q) for q in queues},
            }
            for name, (a, b) in windows.items()
        }
        a, b = windows["A+B+C"]
        users = sorted({j.user for j in model.jobtracker.jobs if j.pool == "C"})
        out["queue_C_users"] = {
            u: {
                "mean_map_slots": occupancy.share(TaskKind.MAP, a, b, user=u) * occupancy.slots[TaskKind.MAP],
                "max_map_slots": occupancy.peak(TaskKind.MAP, a, b, user=u),
            }
            for u in users
        }
        edges = np.arange(0.0, end + s.bin_s / 2, s.bin_s)
        out["map_share_series"] = {"bin_s": s.bin_s, "from_s": edges[:-1].tolist()} | {
            q: [occupancy.share(TaskKind.MAP, lo, hi, queue=q) for lo, hi in itertools.pairwise(edges)] for q in queues
        }
        return {**out, **super().summary(model)}


class Occupancy:
    """Slots held over time by queue and user: every attempt holds its slot from start to end (or the horizon)."""

    def __init__(self, model: HadoopModel, horizon_s: float) -> None:
        attempts = [a for a in model.attempts() if a.start_s is not None]
        self.kind = np.array([a.task.kind == TaskKind.MAP for a in attempts], dtype=bool)
        self.start = np.array([a.start_s for a in attempts], dtype=float)
        self.end = np.array([a.end_s if a.end_s is not None else horizon_s for a in attempts], dtype=float)
        self.queue = np.array([a.task.job.pool for a in attempts], dtype=object)
        self.user = np.array([a.task.job.user for a in attempts], dtype=object)
        self.slots = {
            TaskKind.MAP: model.jobtracker.view.map_capacity(),
            TaskKind.REDUCE: model.jobtracker.view.reduce_capacity(),
        }

    def _rows(self, kind: TaskKind, queue: str | None, user: str | None) -> np.ndarray:
        rows = self.kind == (kind == TaskKind.MAP)
        if queue is not None:
            rows &= self.queue == queue
        if user is not None:
            rows &= self.user == user
        return rows

    def share(self, kind: TaskKind, t0: float, t1: float, queue: str | None = None, user: str | None = None) -> float:
        """Mean fraction of the kind's slots held in [t0, t1)."""
        rows = self._rows(kind, queue, user)
        overlap = np.clip(np.minimum(self.end[rows], t1) - np.maximum(self.start[rows], t0), 0.0, None)
        return float(overlap.sum() / ((t1 - t0) * self.slots[kind]))

    def peak(self, kind: TaskKind, t0: float, t1: float, queue: str | None = None, user: str | None = None) -> int:
        """Most slots held at once in [t0, t1)."""
        rows = self._rows(kind, queue, user)
        start, end = np.maximum(self.start[rows], t0), np.minimum(self.end[rows], t1)
        keep = end > start
        times = np.concatenate([start[keep], end[keep]])
        steps = np.concatenate([np.ones(keep.sum()), -np.ones(keep.sum())])
        order = np.lexsort((steps, times))  # ends before starts at the same instant
        return int(np.cumsum(steps[order]).max()) if len(order) else 0


# ---- Quincy against Fair ------------------------------------------------------------------------------------
POLICIES: dict[str, dict[str, Any]] = {  # label -> settings of quincy-locality
    "Fair naive": {"scheduler": "fair", "fair.delay_scheduling": False},
    "Fair delay": {"scheduler": "fair"},
    "Q": {"scheduler": "quincy", "quincy.fairness": "none"},
    "QF": {"scheduler": "quincy", "quincy.fairness": "fair"},
    "QFP": {"scheduler": "quincy", "quincy.fairness": "fair-preemption"},
    "Q data x500": {"scheduler": "quincy", "quincy.fairness": "none", "quincy.psi": 500.0, "quincy.xi": 1000.0},
}
MIX = (("grep", 0.5), ("wordcount", 0.25), ("sort", 0.25))  # job types of the stream and their shares
MAPS = (8, 16, 32, 64)  # map counts drawn uniformly


class QuincyLocalitySettings(StaticNodesSettings):
    """16 slaves on 4 racks (18 hosts with the masters'); the input of every job on `data_fraction` of them (4
    slaves by default: their blocks' replicas span 2 racks at most, so a slot elsewhere reads them off-rack)."""

    slaves: int = Field(16, ge=2, le=L.MAX_SLAVES)
    racks: int = Field(4, ge=1, le=L.MAX_SLAVES, description="racks the hosts are spread over")
    scheduler: SchedulerName = "quincy"
    jobs: int = Field(12, ge=1, le=10_000, description="jobs in the stream")
    mean_gap_s: float = Field(40.0, ge=0, le=L.DAY_S, description="mean of the exponential gaps between submissions")
    data_fraction: float = Field(0.25, gt=0, le=1, description="share of the slaves that hold the input")


class QuincyLocality(HadoopScenario):
    name = "quincy-locality"
    description = "Quincy (none / fair / fair-preemption) vs Fair: locality and cross-rack MB of a mixed job stream"
    Settings = QuincyLocalitySettings

    def build(self, settings: QuincyLocalitySettings, seed: int, check: bool = False) -> HadoopModel:
        hosts = settings.slaves + 2
        s = settings.model_copy(update={"hosts": hosts, "hosts_per_rack": -(-hosts // settings.racks)})
        model = build_cluster(s, seed, check)
        rng = model.rng
        holders = max(1, round(s.data_fraction * s.slaves))
        nodes = sorted(int(n) for n in rng.choice(s.slaves, size=holders, replace=False))
        submit = np.concatenate([[0.0], np.cumsum(rng.exponential(s.mean_gap_s, s.jobs - 1))])
        kinds = rng.choice(len(MIX), size=s.jobs, p=[p for _, p in MIX])
        for j in range(s.jobs):
            kind, maps = MIX[kinds[j]][0], int(rng.choice(MAPS))
            profile = COUPLING[kind]
            reduces = 0 if kind == "grep" and maps <= 8 else max(1, maps // 8)
            name = f"Q-{j + 1:02d} {kind}"
            arrival = jobmix.JobArrival(name, profile, float(submit[j]), maps * s.hadoop.block_mb, maps, reduces)
            table = jobmix.splits_for(arrival, s.hadoop.block_mb, rng)
            model.add_job(name, profile, float(submit[j]), table.map_specs(), reduces, data_nodes=nodes)
        return model

    def summary(self, model: HadoopModel) -> dict[str, Any]:
        s: QuincyLocalitySettings = model.settings
        jobs = model.jobtracker.jobs
        times = [j.end_s - j.submit_s for j in jobs if j.end_s is not None]
        sched = model.jobtracker.scheduler
        solver = None
        if hasattr(sched, "solve_times_s"):
            solver = {"solves": len(sched.solve_times_s), "total_s": float(sum(sched.solve_times_s))}
        policy = {
            "quincy": f"quincy/{s.quincy.fairness}",
            "fair": "fair/" + ("delay" if s.fair.delay_scheduling else "naive"),
        }
        return {
            "policy": policy.get(s.scheduler, s.scheduler),
            "mean_job_s": float(np.mean(times)) if times else None,
            "moved_mb": moved_mb(model),
            "solver": solver,
            **super().summary(model),
        }


def moved_mb(model: HadoopModel) -> dict[str, float]:
    """MB read over the network by map attempts (rack-local: through a rack switch; off-rack: the core) and MB
    of shuffle that crossed racks (each reduce attempt's partition of every finished map's output, as far as it
    got: all of it when done, else min(1, 3 x progress), the copy third of its progress score). HDFS output
    replication is left out: it crosses racks the same way under every scheduler."""
    racks = model.node_racks
    rack_mb = off_rack_mb = shuffle_mb = 0.0
    of_job: dict[Job, list] = {job: [] for job in model.jobtracker.jobs}
    for attempt in model.attempts():  # by job, maps then reduces, by task and attempt number
        of_job[attempt.task.job].append(attempt)
    for job, attempts in of_job.items():
        for attempt in (a for a in attempts if a.task.kind == TaskKind.MAP):
            got = attempt.task.input_mb * (1.0 if attempt.state == "done" else min(attempt.progress_score, 1.0))
            if attempt.locality == Locality.RACK:
                rack_mb += got
            elif attempt.locality == Locality.OFF_RACK:
                off_rack_mb += got
        if not job.reduces:
            continue
        out = np.zeros(int(racks.max()) + 1)
        for t in job.maps:
            if t.successful is not None:
                out[racks[t.successful.tracker.node]] += t.output_mb_final / len(job.reduces)
        for attempt in (a for a in attempts if a.task.kind == TaskKind.REDUCE):
            shuffled = 1.0 if attempt.state == "done" else min(3.0 * attempt.progress_score, 1.0)
            shuffle_mb += shuffled * (out.sum() - out[racks[attempt.tracker.node]])
    return {
        "map_rack_local_mb": rack_mb,
        "map_off_rack_mb": off_rack_mb,
        "shuffle_cross_rack_mb": shuffle_mb,
        "cross_rack_mb": off_rack_mb + shuffle_mb,
    }


EXPERIMENTS = [CapacityQueues(), QuincyLocality()]
