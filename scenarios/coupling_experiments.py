"""The Coupling paper's experiments (Tan, Meng, Zhang), each a named scenario on a static pool of physical-like nodes.

Every slave is a VM alone on its host, sized as the paper's nodes (Sec. III: 4 cores at 2,933 MHz, 6 GB, 4 map + 2
reduce slots), so the cloud layer adds no contention: these experiments are about the task schedulers. Run one
under two schedulers and compare, e.g. `--set scheduler=fair` against `--set scheduler=coupling`. The summary
reports each job's completion time and starvation time (Sec. III-C: the mean, over the reduces launched after the
job's last map completed, of the time from that completion to their start).

The Hadoop of the paper (`CouplingHadoop`, `CouplingFair`): input files stored with replication 1 (Sec. III, Set A);
a Fair Scheduler with node and rack delays T1 = T2 = T = 15 s ("T = 15.0 in this experiment", Sec. II-B; Hadoop's
auto value would be 1.5 heartbeats); heartbeats every 3 s, the minimum of every Hadoop before 1.1 (algorithms.md
2.6), which is the era of the paper's Fair Scheduler (its ref. [3], the 0.21 docs) and of its Wait Scheduling
"rounds" of N heartbeats. With 1.1's 0.3 s heartbeats and 0.45 s delays, delay scheduling would hardly wait.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any, Literal, get_args

import numpy as np
from pydantic import Field

from hadoop_layer import jobmix
from hadoop_layer.config import HadoopConfig
from hadoop_layer.model import HadoopModel
from hadoop_layer.tasks import Job
from policies.schedulers import FairSettings
from scenarios import limits as L
from scenarios.base import AllocatorName
from scenarios.hadoop_base import (
    HadoopClusterSettings,
    HadoopScenario,
    SchedulerName,
    SpeculationName,
    build_cluster,
)


class CouplingHadoop(HadoopConfig):
    """Hadoop as the paper ran it (see the module docstring): a subclass, so `--set hadoop.X=...` keeps the rest."""

    map_slots: int = Field(4, ge=0, le=L.MAX_SLOTS, description="Sec. III: 4 map slots per node")
    reduce_slots: int = Field(2, ge=0, le=L.MAX_SLOTS, description="Sec. III: 2 reduce slots per node")
    replication: int = Field(1, ge=1, le=16, description="Sec. III, Set A: 'the replication value being set to 1'")
    heartbeat_formula: Literal["0.20", "1.0", "1.1"] = Field("1.0", description="3 s heartbeats (pre-1.1 Hadoop)")


class CouplingFair(FairSettings):
    """The paper's Fair Scheduler: delay scheduling with T1 = T2 = 15 s (Sec. II-B)."""

    node_delay_s: float | None = Field(15.0, ge=0, description="T1 of Sec. II-B")
    rack_delay_s: float | None = Field(15.0, ge=0, description="T2 of Sec. II-B")


MOST_SLAVES = 62  # the largest of the experiments' own clusters (Fig 16)


class CouplingSettings(HadoopClusterSettings):
    """The paper's nodes: one 4-core VM per host, static pool, no speculation (Sec. III); Fair unless told
    otherwise."""

    allocator: AllocatorName = "static"
    pool_cpu_mhz: float | None = None  # the hosts' capacity: one VM per host
    pool_mem_mb: float | None = None
    cores_per_host: int = Field(4, ge=1, le=L.MAX_CORES_PER_HOST)
    core_mhz: float = Field(2933.0, ge=L.MIN_CORE_MHZ, le=L.MAX_CORE_MHZ, description="Sec. III: 4 cores at 2,933 MHz")
    vm_mem_mb: float = Field(6144.0, ge=64, le=L.MAX_MEM_MB, description="Sec. III: 6 GB of memory")
    slaves: int | None = Field(  # type: ignore[assignment]
        None, ge=1, le=L.MAX_SLAVES, description="None: the experiment's own nodes (7, 8 or 15; 62 for Fig 16)"
    )
    hadoop: CouplingHadoop = Field(default_factory=CouplingHadoop)
    fair: CouplingFair = Field(default_factory=CouplingFair)
    scale: float = Field(
        1.0, gt=0, le=1, description="a scaled-down copy for quick runs: scale x every job's input and arrival time"
    )
    max_jobs: int | None = Field(
        None, ge=1, le=L.MAX_JOBS, description="only the first max_jobs arrivals (quick runs); None: all"
    )
    scheduler: SchedulerName = "fair"
    speculation: SpeculationName = "none"

    def vm_count(self) -> int:
        """The VMs to bound: the experiment's own nodes when `slaves` is None, at most Fig 16's 62."""
        return (self.slaves if self.slaves is not None else MOST_SLAVES) + 2


class CouplingExperiment(HadoopScenario):
    """One of the paper's job sequences on `slaves` nodes; `data_nodes` limits where the input lives."""

    Settings = CouplingSettings

    def __init__(self, name: str, description: str, arrivals, slaves: int, data_nodes: int | None = None) -> None:
        self.name, self.description = name, description
        self._arrivals, self._slaves, self._data_nodes = arrivals, slaves, data_nodes

    def build(self, settings: CouplingSettings, seed: int, check: bool = False) -> HadoopModel:
        s = settings.model_copy(update={"slaves": settings.slaves if settings.slaves is not None else self._slaves})
        s = s.model_copy(update={"hosts": s.slaves + 2, "hosts_per_rack": max(1, (s.slaves + 2 + 1) // 2)})
        model = build_cluster(s, seed, check)
        if settings.slaves is None:
            model.used_settings = {"slaves": s.slaves}  # config.json's "used": the experiment's own nodes
        nodes = None if self._data_nodes is None else list(range(min(self._data_nodes, s.slaves)))
        for arrival in self.arrivals(s, model.rng)[: s.max_jobs]:
            arrival = replace(arrival, input_mb=arrival.input_mb * s.scale, submit_s=arrival.submit_s * s.scale)
            table = jobmix.splits_for(arrival, s.hadoop.block_mb, model.rng)
            maps = table.map_specs()
            reduces = arrival.reduces if arrival.reduces is not None else 1
            model.add_job(arrival.name, arrival.profile, arrival.submit_s, maps, reduces, data_nodes=nodes,
                          pool=arrival.pool, user=arrival.user, priority=arrival.priority)  # fmt: skip
        return model

    def arrivals(self, settings: CouplingSettings, rng: np.random.Generator) -> list[jobmix.JobArrival]:
        return self._arrivals(rng)

    def summary(self, model: HadoopModel) -> dict[str, Any]:
        jobs = model.jobtracker.jobs
        times = {j.name: (j.end_s - j.submit_s) if j.end_s is not None else None for j in jobs}
        done = [t for t in times.values() if t is not None]
        starvation = {j.name: starvation_s(j) for j in jobs}
        return {
            "scheduler": model.jobtracker.scheduler.name,
            "mean_job_s": float(np.mean(done)) if done else None,
            "job_s": times,
            "starvation_s": starvation,
            **super().summary(model),
        }


def starvation_s(job: Job) -> float:
    """Coupling Sec. III-C: mean delay from the last map's completion to each reduce launched after it."""
    ends = [t.end_s for t in job.maps if t.end_s is not None]
    if not ends or not job.reduces:
        return 0.0
    last_map = max(ends)
    late = [t.start_s - last_map for t in job.reduces if t.start_s is not None and t.start_s > last_map]
    return float(np.mean(late)) if late else 0.0


def _fixed(sequence):
    def arrivals(rng: np.random.Generator):
        return sequence()

    return arrivals


def _delay_locality(rng: np.random.Generator):
    """Figs. 10-11: one WordCount of 427 maps (WikiInput) with all its input on 7 of the 15 slaves. The paper gives
    no reduce count; 15 as its other WikiInput jobs (Table IV), so its maps sort, spill and combine."""
    wiki = jobmix.table_iii()[0]
    profile = jobmix.COUPLING["wordcount-wiki"]
    return [jobmix.JobArrival("DL-01 WordCount wikiInput", profile, 0.0, wiki.input_mb, 427, 15)]


TableIIJob = Literal["grep", "random-writer", "monte-carlo", "sort1", "sort2"]  # the rows of jobmix.TABLE_II_ROWS
TABLE_II_JOBS: tuple[str, ...] = get_args(TableIIJob)


class SingleJobSettings(CouplingSettings):
    job: TableIIJob = Field("sort2", description="the row of Table II to run alone")


class SingleJob(CouplingExperiment):
    """Table II / Fig. 12: one job alone on Set A (7 nodes); the paper ran each 15 times under Fair and Coupling to
    show that Wait Scheduling's delays do not slow a job down on average."""

    Settings = SingleJobSettings

    def arrivals(self, settings: SingleJobSettings, rng: np.random.Generator) -> list[jobmix.JobArrival]:
        return [jobmix.table_ii()[TABLE_II_JOBS.index(settings.job)]]


EXPERIMENTS = [
    SingleJob("coupling-single-job", "Coupling Table II / Fig 12: one job alone on 7 nodes (--set job=NAME)",
              None, slaves=7),
    CouplingExperiment("coupling-two-grep", "Coupling Figs 1-2: two Grep jobs on 7 nodes; job 2 starves for reduce "
                       "slots under Fair", _fixed(jobmix.two_grep), slaves=7),
    CouplingExperiment("coupling-ten-grep", "Coupling Figs 5-6: 10 identical Grep jobs every 5 min on 8 nodes",
                       _fixed(jobmix.ten_grep), slaves=8),
    CouplingExperiment("coupling-map-only", "Coupling Table III: 10 map-only Grep jobs on 15 nodes, input on 7",
                       _fixed(jobmix.table_iii), slaves=15, data_nodes=7),
    CouplingExperiment("coupling-22-jobs", "Coupling Table IV: 22 jobs, large then small, on 7 nodes",
                       _fixed(jobmix.table_iv), slaves=7),
    CouplingExperiment("coupling-200-jobs", "Coupling Fig 16: 200 jobs in 10 batches on 62 nodes",
                       jobmix.mix_200, slaves=62),
    CouplingExperiment("delay-locality", "Coupling Figs 10-11: WordCount, 427 maps, input on 7 of 15 slaves x 4 map "
                       "slots", _delay_locality, slaves=15, data_nodes=7),
]  # fmt: skip


def load_figures(tasks, jobs, slaves: int, map_slots: int = 4, reduce_slots: int = 2) -> dict[str, float]:
    """What decides Fig 16 (200 jobs on 62 nodes), from a run's `tasks` and `jobs` tables (`vcloud run --out DIR`):
    how loaded the cluster was and what Fair's greedy reduces cost against what Coupling's one-at-a-time launches
    cost. All times in seconds; occupancies are time-weighted over the run (first submission to last job end).

    - job_mean/median/p90: job processing time (Fig 16's T);
    - map_busy, reduce_busy: the mean share of the map and reduce slots running an attempt;
    - reduce_full: the share of the run during which every reduce slot is taken (a reduce could only wait then);
    - held_before_maps_end: the reduce slot-seconds spent by reduces before their job's last map ended, over all
      reduce slot-seconds (Fair's greedy launch: a slot held while the job's maps run, the paper's "starvation" cause);
    - starvation: the mean, over jobs with reduces, of the paper's starvation time (Sec. III-C);
    - reduce_lag: the mean, over jobs with reduces, of the time from the job's last map end to its last reduce's
      start (how long a job's reduces wait for a launch once its maps are done, under either scheduler)."""
    import pandas as pd

    tasks = tasks[tasks.end_s.notna()]
    t0, t1 = float(jobs.submit_s.min()), float(jobs.end_s.max())
    span = t1 - t0
    out: dict[str, float] = {}
    times = (jobs.end_s - jobs.submit_s).to_numpy()
    out.update(job_mean=float(times.mean()), job_median=float(np.median(times)), job_p90=float(np.quantile(times, 0.9)))
    maps, reduces = tasks[tasks.kind == "m"], tasks[tasks.kind == "r"]
    out["map_busy"] = float((maps.end_s - maps.start_s).sum() / (slaves * map_slots * span))
    out["reduce_busy"] = float((reduces.end_s - reduces.start_s).sum() / (slaves * reduce_slots * span))
    # running reduces over time: +1 at a start, -1 at an end
    events = pd.concat([pd.Series(1, index=reduces.start_s.to_numpy()), pd.Series(-1, index=reduces.end_s.to_numpy())])
    events = events.groupby(level=0).sum().sort_index()
    running = events.cumsum()
    edges = np.append(running.index.to_numpy(), t1)
    widths = np.diff(edges)
    out["reduce_full"] = float(widths[running.to_numpy() >= slaves * reduce_slots].sum() / span)
    last_map = maps.groupby("job").end_s.max()
    lm = reduces.job.map(last_map)
    held = (np.minimum(reduces.end_s, lm) - reduces.start_s).clip(lower=0.0)
    out["held_before_maps_end"] = float(held.sum() / (reduces.end_s - reduces.start_s).sum())
    starv, lag = [], []
    for job, rs in reduces.groupby("job"):
        if job not in last_map.index:
            continue
        end = last_map[job]
        late = rs.start_s[rs.start_s > end] - end
        starv.append(float(late.mean()) if len(late) else 0.0)
        lag.append(max(float(rs.start_s.max()) - end, 0.0))
    out["starvation"] = float(np.mean(starv)) if starv else 0.0
    out["reduce_lag"] = float(np.mean(lag)) if lag else 0.0
    return out
