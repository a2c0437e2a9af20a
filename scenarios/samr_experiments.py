"""`samr-heterogeneous`: SAMR's evaluation (Chen et al., CIT 2010, section V, Fig. 9; samr.txt): Sort or WordCount on
a cluster whose nodes differ in speed, under Hadoop's speculation, LATE, "LATE with history" and SAMR.

The paper (in our copy, slides) does not describe its testbed beyond "heterogeneous": nodes that "vary greatly in
hardware". We build one that a VM pool makes easy: `slaves` VMs, each alone on its host (1 VM per host, as the
Coupling experiments, so the pool adds no contention of its own), of which the first `slow_nodes` are slow: their
CPU entitlement is `slow_cpu` x a fast node's (the heterogeneous allocator, hard limits: fewer or slower vCPUs) and
their host's datastore delivers `slow_disk_mbps` instead of `disk_mbps` (an older disk, or one shared with other
tenants' I/O). Hadoop's own defaults otherwise: 2 map and 2 reduce slots per node, FIFO.

Policies: `speculation=hadoop | late | samr`; "LATE with history" is `speculation=late late.history_weights=true`:
LATE's rules with SAMR's per-node historical stage weights, our reading of the paper's fourth scheme ("Backup
mechanism and Historical information are all very useful in Sort", Fig. 9; samr.py `LateWithHistory`).
The summary adds, per run: the job times, backups launched, useful backups (backups that finished first) and, for
policies that learn stage weights, the mean learned weights on slow and on fast nodes.

Paper: SAMR's Sort time is about 24 % shorter than Hadoop's; LATE 7 % and LATE with history 15 % shorter (samr.txt,
Fig. 9). What we measure (`compare`, seeds 1-3, defaults: 12 slaves, 4 slow, Sort of 12 GB) is in docs/results-samr.md:
no policy comes near the paper's 24 % here; Sort's stragglers are the slow nodes' reduces and the backup cap
(SAMR's BP, LATE's SpeculativeCap) decides whether LATE and SAMR catch up with Hadoop's uncapped rule.
"""

from __future__ import annotations

from typing import Any, Literal

import numpy as np
from pydantic import Field

from hadoop_layer.config import HadoopConfig
from hadoop_layer.model import HadoopModel
from hadoop_layer.profiles import GB, SAMR, splits
from hadoop_layer.tasks import TaskKind
from policies.speculation.samr import StageWeightHistory
from scenarios import limits as L
from scenarios.base import AllocatorName
from scenarios.hadoop_base import HadoopClusterSettings, HadoopScenario, SpeculationName, build_cluster
from scenarios.runner import run_model

# name -> settings of the four schemes compared in Fig. 9 (besides Hadoop without backups)
POLICIES: dict[str, dict[str, Any]] = {
    "hadoop": {"speculation": "hadoop"},
    "late": {"speculation": "late"},
    "late-history": {"speculation": "late", "late.history_weights": True},
    "samr": {"speculation": "samr"},
}


class SamrHeterogeneousSettings(HadoopClusterSettings):
    """A small heterogeneous cluster: one 2-vCPU VM per 2-core host, Hadoop's default slots."""

    allocator: AllocatorName = "heterogeneous"
    slaves: int = Field(12, ge=2, le=L.MAX_SLAVES)
    slow_nodes: int = Field(4, ge=0, description="the first this many slaves are slow")
    slow_cpu: float = Field(0.35, gt=0, le=1, description="a slow node's CPU entitlement, share of a fast node's")
    slow_disk_mbps: float = Field(
        33.3,
        ge=L.MIN_MBPS,
        le=L.MAX_MBPS,
        description="a slow node's datastore, sequential rate (a third of a fast one's)",
    )
    benchmark: Literal["sort", "wordcount"] = Field("sort", description="the job (SAMR section 5)")
    input_gb: float = Field(12.0, gt=0, le=200, description="the job's input (Sort: RandomWriter output)")
    cores_per_host: int = Field(2, ge=1, le=L.MAX_CORES_PER_HOST)
    vcpus: int = Field(2, ge=1, le=L.MAX_VCPUS)
    vm_mem_mb: float = Field(2048.0, ge=64, le=L.MAX_MEM_MB)
    disk_mbps: float = Field(100.0, ge=L.MIN_MBPS, le=L.MAX_MBPS, description="a datastore's sequential rate")
    pool_cpu_mhz: float | None = None  # the hosts' capacity
    pool_mem_mb: float | None = None
    hadoop: HadoopConfig = Field(default_factory=lambda: HadoopConfig(heartbeat_formula="1.1"))
    speculation: SpeculationName = "samr"


class SamrHeterogeneous(HadoopScenario):
    name = "samr-heterogeneous"
    description = "SAMR Fig. 9: Sort or WordCount on slow and fast nodes; compare speculation=hadoop/late/samr"
    Settings = SamrHeterogeneousSettings

    def build(self, settings: SamrHeterogeneousSettings, seed: int, check: bool = False) -> HadoopModel:
        s = settings
        if s.slow_nodes >= s.slaves:
            raise ValueError(f"slow_nodes={s.slow_nodes} must leave at least one fast node of {s.slaves}")
        full = s.vcpus * s.core_mhz
        cpu = [full, full] + [full * (s.slow_cpu if i < s.slow_nodes else 1.0) for i in range(s.slaves)]
        s = s.model_copy(update={
            "hosts": s.slaves + 2, "hosts_per_rack": max(1, (s.slaves + 3) // 2),
            "heterogeneous": s.heterogeneous.model_copy(update={"cpu_mhz": cpu}),
        })  # fmt: skip
        model = build_cluster(s, seed, check)
        for tracker in model.trackers[: s.slow_nodes]:
            model.hosts.disk_mbps[tracker.vm.host.row] = s.slow_disk_mbps
        profile = SAMR[s.benchmark]
        table = splits(profile, s.input_gb * GB / profile.input_mb, s.hadoop.block_mb, model.rng)
        reduces = (
            profile.reduces if profile.reduces is not None else max(1, int(0.95 * s.slaves * s.hadoop.reduce_slots))
        )
        model.add_job(s.benchmark, profile, 0.0, table.map_specs(), reduces)
        return model

    def summary(self, model: HadoopModel) -> dict[str, Any]:
        s = model.settings
        return {
            "benchmark": s.benchmark,
            "speculation": model.jobtracker.speculation.name,
            "job_s": job_time(model),
            **backup_counts(model),
            **learned_weights(model, s.slow_nodes),
            **super().summary(model),
        }


def job_time(model: HadoopModel) -> float | None:
    job = model.jobtracker.jobs[0] if model.jobtracker.jobs else None
    return None if job is None or job.end_s is None else job.end_s - job.submit_s


def backup_counts(model: HadoopModel) -> dict[str, int]:
    """Backups launched, and useful ones: backups that finished first (their task's winning attempt)."""
    backups = [a for a in model.attempts() if a.speculative]
    return {"backups": len(backups), "useful_backups": sum(a.state == "done" for a in backups)}


def learned_weights(model: HadoopModel, slow_nodes: int) -> dict[str, Any]:
    """Mean learned M1 (map stage 1) and R1 (copy) on slow and on fast nodes, for policies with SAMR's history."""
    policy = model.jobtracker.speculation
    if not isinstance(policy, StageWeightHistory):
        return {}
    policy.read_history(model.jobtracker.view)  # attempts that ended after the policy last looked
    out: dict[str, Any] = {}
    for kind, label in ((TaskKind.MAP, "m1"), (TaskKind.REDUCE, "r1")):
        for group, trackers in (("slow", model.trackers[:slow_nodes]), ("fast", model.trackers[slow_nodes:])):
            learned = [policy.weights(t, kind)[0] for t in trackers if (t, kind) in policy._weights]
            out[f"{label}_{group}"] = float(np.mean(learned)) if learned else None
    return out


# Fig. 9's baseline, "HADOOP w/o backup mechanism" (about twice Hadoop's time in the paper): a name `compare` takes
NO_BACKUPS = {"none": {"speculation": "none"}}


def compare(seeds: tuple[int, ...] = (1, 2, 3), policies: tuple[str, ...] = tuple(POLICIES), **settings: Any):
    """Run each policy (or "none": no backups) on each seed; a DataFrame with one row per (policy, seed) of the
    summary's figures and the tail's (`tail_figures`)."""
    import pandas as pd

    from scenarios.settings import validate

    scenario, rows = SamrHeterogeneous(), []
    for name in policies:
        for seed in seeds:
            s = validate(scenario.Settings, {**settings, **{**POLICIES, **NO_BACKUPS}[name]})
            model = scenario.build(s, seed)
            run_model(model, scenario.horizon_s(model), progress=False)
            summary = scenario.summary(model)
            rows.append({"policy": name, "seed": seed, **{k: summary.get(k) for k in SUMMARY_COLUMNS},
                         **tail_figures(model, s.slow_nodes)})  # fmt: skip
    return pd.DataFrame(rows)


SUMMARY_COLUMNS = ["job_s", "backups", "useful_backups", "m1_slow", "m1_fast", "r1_slow", "r1_fast"]


def tail_figures(model: HadoopModel, slow_nodes: int) -> dict[str, float]:
    """How severe the stragglers are: per kind, the slowest task's time (first launch to success) over the median's,
    and the median task time on slow nodes over that on fast ones (by where the winning attempt ran)."""
    slow = {t.name for t in model.trackers[:slow_nodes]}
    out: dict[str, float] = {}
    for kind, label in ((TaskKind.MAP, "map"), (TaskKind.REDUCE, "reduce")):
        done = [a for a in model.attempts() if a.task.kind == kind and a.state == "done"]
        times = np.array([a.end_s - a.task.start_s for a in done])
        on_slow = np.array([a.tracker.name in slow for a in done])
        if not len(times):
            continue
        out[f"{label}_max_over_median"] = float(times.max() / np.median(times))
        if on_slow.any() and (~on_slow).any():
            out[f"{label}_slow_over_fast"] = float(np.median(times[on_slow]) / np.median(times[~on_slow]))
    return out
