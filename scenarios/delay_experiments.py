"""`delay-scheduling`: the IO-heavy macrobenchmark of Zaharia et al., "Delay Scheduling: A Simple Technique for
Achieving Locality and Fairness in Cluster Scheduling" (EuroSys 2010, section 5), for FIFO, naive fair sharing and
fair sharing with delay scheduling.

The paper's benchmark (section 5; what is [RECALL] was not found in a source we could read, see
docs/results-delay.md): 100 jobs whose sizes follow the Facebook production workload of a week in October 2009,
grouped in 9 bins by map count (its Table 3), submitted with exponential inter-arrival times of mean 14 s (about
24 minutes of submissions) [RECALL]. In the IO-heavy workload every job is a text search for a rare pattern: the
maps scan their input and emit almost nothing, so a map's time is its read; the input is spread over the whole
cluster with HDFS's 3 replicas. It compares Hadoop's FIFO, fair sharing without delay scheduling ("naive": the
head-of-line job takes any free slot, local or not) and with it, and reports per bin the node-local fraction of
maps (its data-locality figure) and the response times (its CDFs and speedups per bin).

What runs here (`DelaySchedulingSettings`):

- **Bins** (`BINS`): the benchmark's map count and job count per bin, 38 + 16 + 14 + 8 + 6 + 6 + 4 + 4 + 4 = 100
  jobs [RECALL]. The 100 jobs are shuffled by the seed and submitted at 0, then after exponential gaps of mean
  `mean_gap_s` = 14 s.
- **Scale.** The paper ran 100 nodes (EC2) [RECALL]; 26,410 maps of 128 MB take the emulator a minute. `scale`
  (default 0.2) shrinks cluster and big jobs together: round(100 x scale) slaves, and the map count of every bin
  above 10 maps multiplied by `scale` (rounded, at least 10). Bins 1-3 keep 1, 2 and 10 maps: they are the jobs
  whose locality the paper is about, and they stay smaller than any scaled cluster. Scaling both keeps the load
  (map slot-seconds offered per slot) and the share of the cluster a large job covers; what it cannot keep is the
  chance that a free slot holds one of a 1-map job's 3 replicas, 3 / slaves: 3 % at 100 nodes, 15 % at 20.
  `scale=1` is the paper's size.
- **Cluster.** `StaticNodesSettings` (one 4-vCPU slave VM alone on each 4-core host, static pool, no
  speculation), 4 map slots and 2 reduce slots per node, hosts in `racks` racks (ours: the paper does not say its
  EC2 topology), blocks placed rack-aware with 3 replicas (`hadoop_layer.hdfs`). Hadoop 0.20's heartbeat (3 s
  below 200 nodes: the paper's Hadoop was 0.20) and the Fair Scheduler's automatic locality delays, 1.5
  heartbeats = 4.5 s for node and rack (algorithms.md 6.1, 6.4).
- **Jobs.** `PUMA["grep"]` (Hadoop's Grep, a selective pattern: 1e-3 of the input out; 63 Mc per MB, ~38 MB/s per
  2.4 GHz core, so a map beside three others waits on its disk) on uniform 128 MB blocks (ours: one generated
  data set, no skew), map-only by default (`reduces=0`: a rare pattern leaves the reduce nothing to do; the paper's
  jobs' reduce count is not known to us).

- **Network.** 1 GbE NICs; each rack's switch reaches the core through an uplink oversubscribed 25:1 (a 1 Gb
  uplink over a rack's 25 hosts at the paper's size; the ratio, not the bandwidth, is kept at every `scale`), as
  "Hadoop: The Definitive Guide" describes the Hadoop racks of the paper's time (30-40 servers on a 1 Gb switch,
  an uplink of "1 Gb or better"). A read from another rack goes through two uplinks, so delay scheduling's
  locality buys speed only through the network: with no rack limit, or at Cloudera's 4:1, naive fair sharing
  answers faster (docs/results-delay.md has the sweep).
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any, Literal

import numpy as np
from pydantic import Field, model_validator

from hadoop_layer.config import HadoopConfig
from hadoop_layer.hdfs import Locality
from hadoop_layer.model import HadoopModel
from hadoop_layer.profiles import PUMA, SplitSkew, splits
from hadoop_layer.tasks import Job, TaskKind
from scenarios import limits as L
from scenarios.hadoop_base import HadoopScenario, SchedulerName, build_cluster
from scenarios.scheduler_experiments import StaticNodesSettings

# (bin, map count in the paper's benchmark, jobs in the benchmark) of its Table 3 [RECALL]; the production bins
# are 1, 2, 3-20, 21-60, 61-150, 151-300, 301-500, 501-1500 and >1500 maps.
BINS: tuple[tuple[int, int, int], ...] = (
    (1, 1, 38),
    (2, 2, 16),
    (3, 10, 14),
    (4, 50, 8),
    (5, 100, 6),
    (6, 200, 6),
    (7, 400, 4),
    (8, 800, 4),
    (9, 4800, 4),
)
BENCHMARK_JOBS = sum(n for _, _, n in BINS)  # 100
PAPER_NODES = 100  # section 5's EC2 cluster [RECALL]
UNSCALED_MAPS = 10  # bins up to this size keep their map count at any scale
TEXT_SEARCH = replace(PUMA["grep"], name="text-search", skew=SplitSkew())  # one generated data set: whole blocks

POLICIES: dict[str, dict[str, Any]] = {  # label -> settings of delay-scheduling (the paper's three schedulers)
    "FIFO": {"scheduler": "fifo"},
    "Fair naive": {"scheduler": "fair", "fair.delay_scheduling": False},
    "Fair delay": {"scheduler": "fair"},
}


class DelayHadoop(HadoopConfig):
    """Hadoop as the benchmark ran it: a subclass, so `--set hadoop.X=...` keeps the rest (and HadoopConfig's
    bounds and its io.sort.mb-below-the-heap rule)."""

    map_slots: int = Field(4, ge=0, le=L.MAX_SLOTS, description="4 map slots per node (ours; the testbed's)")
    reduce_slots: int = Field(2, ge=0, le=L.MAX_SLOTS, description="2 reduce slots per node (ours; the testbed's)")
    block_mb: float = Field(
        128.0, ge=L.MIN_BLOCK_MB, le=L.MAX_BLOCK_MB, description="dfs.block.size 128 MB (ours: Facebook's, unverified)"
    )
    heartbeat_formula: Literal["0.20", "1.0", "1.1"] = Field("0.20", description="Hadoop 0.20: 3 s heartbeats")


class DelaySchedulingSettings(StaticNodesSettings):
    """The IO-heavy benchmark of section 5 at `scale` (module docstring); Fair with delay scheduling by default."""

    scale: float = Field(0.2, gt=0, le=1, description="round(100 x scale) slaves; bins above 10 maps x scale")
    slaves: int | None = Field(  # type: ignore[assignment]
        None, ge=1, le=L.MAX_SLAVES, description="None: round(100 x scale), at least 2"
    )
    racks: int = Field(4, ge=1, le=L.MAX_HOSTS, description="racks the hosts are spread over (ours)")
    rack_oversubscription: float | None = Field(
        25.0,
        ge=1,
        le=1000,
        description="a rack's NICs over its core uplink: 25 hosts on 1 GbE under a 1 Gb uplink at the paper's size, "
        "the 2009 Hadoop rack ('Hadoop: The Definitive Guide', ch. 9); None: no rack limit",
    )
    mean_gap_s: float = Field(
        14.0, ge=0, le=L.DAY_S, description="mean of the exponential inter-arrival times (section 5)"
    )
    reduces: int = Field(
        0,
        ge=0,
        le=L.MAX_MAPS // BENCHMARK_JOBS,
        description="reduces per job (0: map-only text search); 100 jobs' reduces within limits.MAX_MAPS tasks",
    )
    max_jobs: int | None = Field(
        None, ge=1, le=BENCHMARK_JOBS, description="only the first max_jobs submissions (quick runs); None: all 100"
    )
    hadoop: DelayHadoop = Field(default_factory=DelayHadoop)
    scheduler: SchedulerName = "fair"

    def slave_count(self) -> int:
        """The slaves `build` creates: `slaves`, or round(100 x scale) (at least 2) when it is None."""
        return self.slaves if self.slaves is not None else max(2, round(PAPER_NODES * self.scale))

    def vm_count(self) -> int:
        return self.slave_count() + 2  # and the JobTracker's and NameNode's

    @model_validator(mode="after")
    def _jobs_can_finish(self) -> DelaySchedulingSettings:
        """Reduces need reduce slots (the map-only default needs none)."""
        if self.reduces > 0 and self.hadoop.reduce_slots == 0:
            raise ValueError(f"hadoop.reduce_slots=0: reduces={self.reduces} per job could never run")
        return self


def scaled_maps(maps: int, scale: float) -> int:
    """A bin's map count in a copy of the benchmark at `scale`: small jobs as they are, large ones scaled."""
    return maps if maps <= UNSCALED_MAPS else max(UNSCALED_MAPS, round(maps * scale))


def job_bin(job: Job) -> int:
    """The paper's bin of a job built here (its name ends in 'bin<k>')."""
    return int(job.name.rsplit("bin", 1)[1])


class DelayScheduling(HadoopScenario):
    name = "delay-scheduling"
    description = "Delay Scheduling (EuroSys 2010) Sec. 5 IO-heavy: 100 text-search jobs in Facebook size bins"
    Settings = DelaySchedulingSettings

    def build(self, settings: DelaySchedulingSettings, seed: int, check: bool = False) -> HadoopModel:
        slaves = settings.slave_count()
        hosts = slaves + 2
        per_rack = -(-hosts // settings.racks)
        s = settings.model_copy(update={"slaves": slaves, "hosts": hosts, "hosts_per_rack": per_rack})
        model = build_cluster(s, seed, check)
        rng = model.rng
        bins = np.repeat([b for b, _, _ in BINS], [n for _, _, n in BINS])
        rng.shuffle(bins)
        gaps = rng.exponential(s.mean_gap_s, len(bins) - 1)
        submit = np.concatenate([[0.0], np.cumsum(gaps)])
        paper_maps = {b: m for b, m, _ in BINS}
        block = s.hadoop.block_mb
        for k, (b, t) in enumerate(zip(bins[: s.max_jobs], submit[: s.max_jobs], strict=True)):
            maps = scaled_maps(paper_maps[int(b)], s.scale)
            table = splits(TEXT_SEARCH, maps * block / TEXT_SEARCH.input_mb, block, rng)
            model.add_job(f"J{k + 1:03d} bin{b}", TEXT_SEARCH, float(t), table.map_specs(), s.reduces)
        return model

    def summary(self, model: HadoopModel) -> dict[str, Any]:
        return {**delay_summary(model), **super().summary(model)}


def delay_summary(model: HadoopModel) -> dict[str, Any]:
    """Per bin: jobs, maps per job, node- and rack-local fractions of launched maps, mean and median response time
    (submit to end); overall: mean response time, makespan and throughput (jobs per hour and map input MB/s)."""
    s: DelaySchedulingSettings = model.settings
    jobs = model.jobtracker.jobs
    bins: dict[str, dict[str, Any]] = {}
    maps = [a for a in model.attempts() if a.task.kind == TaskKind.MAP and a.locality is not None]
    for b, _, _ in BINS:
        mine = [j for j in jobs if job_bin(j) == b]
        if not mine:
            continue
        launched = [a.locality for a in maps if job_bin(a.task.job) == b]
        times = [j.end_s - j.submit_s for j in mine if j.end_s is not None]
        bins[str(b)] = {
            "jobs": len(mine),
            "maps_per_job": len(mine[0].maps),
            "node_local": _share(launched, Locality.NODE),
            "rack_local": _share(launched, Locality.RACK),
            "mean_response_s": float(np.mean(times)) if times else None,
            "median_response_s": float(np.median(times)) if times else None,
            "unfinished": len(mine) - len(times),
        }
    times = [j.end_s - j.submit_s for j in jobs if j.end_s is not None]
    ends = [j.end_s for j in jobs if j.end_s is not None]
    span = max(ends) - min(j.submit_s for j in jobs) if ends else None
    input_mb = sum(t.input_mb for j in jobs if j.end_s is not None for t in j.maps)
    policy = s.scheduler if s.scheduler != "fair" else "fair/" + ("delay" if s.fair.delay_scheduling else "naive")
    return {
        "policy": policy,
        "slaves": s.slaves,
        "bins": bins,
        "mean_response_s": float(np.mean(times)) if times else None,
        "jobs_done": len(times),
        "throughput_jobs_per_h": 3600.0 * len(times) / span if span else None,
        "throughput_mb_per_s": input_mb / span if span else None,
    }


def _share(levels: list[Locality], level: Locality) -> float | None:
    return sum(lv == level for lv in levels) / len(levels) if levels else None
