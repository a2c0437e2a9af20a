"""`flexslot`: one PUMA benchmark on the FlexSlot testbed (FlexSlot sections 2 and 4.1).

8 hosts, 32 VMs of 4 vCPU / 4 GB in a 153.6 GHz / 128 GB pool: JobTracker, NameNode and 30 slaves with
4 map and 2 reduce slots, 200 MB heaps, io.sort.mb 100, 64 MB blocks; stock Hadoop 1.1 (FIFO and the
default speculation). `allocator` picks the cluster of section 2:
- static: "Homo.", every node 4.8 GHz and 4 GB;
- heterogeneous: "Heter.", nodes that ran stragglers in a homogeneous pilot run (same seed) are scaled
  up in proportion to those stragglers' CPU time and I/O wait (section 2.2; CPU only, since a VM cannot
  use memory beyond its configured 4 GB); with `skew_sched=true` the pilot's stragglers may only run on
  those powerful nodes ("Heter. + Skew-sched");
- drs: the pool divided by DRS-style demand-based allocation (section 2.3).
`co_cluster=true` consolidates a second, identical cluster onto the same hosts (section 4.5, Fig 10): its 32
VMs replay, open loop, the per-VM CPU demand and disk throughput of a stock run of the same job (same seed,
alone), every `trace_interval_s`. The neighbour is thus the same for every policy under study (a controlled
experiment), but it does not slow down under the contention it meets, as the paper's second cluster would.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any, Literal

import numpy as np
import pandas as pd
from pydantic import Field, model_validator

from hadoop_layer.model import HadoopModel
from hadoop_layer.profiles import PUMA, splits
from hadoop_layer.tasks import TaskKind
from policies.schedulers.pinned import PinnedFifoScheduler
from scenarios import limits as L
from scenarios.hadoop_base import HadoopClusterSettings, HadoopScenario, build_cluster
from scenarios.runner import run_model
from vcloud.diskseek import DiskSeekSettings
from vcloud.interference import TraceLoad

Benchmark = Literal[
    "wordcount",
    "inverted-index",
    "term-vector",
    "grep",
    "tera-sort",
    "k-means",
    "histogram-movies",
    "histogram-ratings",
]


class FlexSlotSettings(HadoopClusterSettings):
    benchmark: Benchmark = Field("wordcount", description="the PUMA job (hadoop_layer/profiles.py)")
    scale: float = Field(1.0, gt=0, le=10, description="fraction of the paper's input (1.0 = 150 GB for wordcount)")
    skew_sched: bool = Field(False, description="heterogeneous only: pilot stragglers run only on powerful nodes")
    straggler_sigma: float = Field(
        2.0, gt=0, le=100, description="pilot maps slower than mean + this many sigmas straggle"
    )
    input_placement: Literal["random", "writer"] = Field(
        "writer", description="first replicas: anywhere, or on the node that wrote the file (a copy job)"
    )
    heavy_per_file: bool = Field(True, description="large records cluster in files (Wikipedia-like profiles)")
    co_cluster: bool = Field(
        False, description="Fig 10: a second identical cluster (a replayed stock run) shares the hosts"
    )
    disk_seek: DiskSeekSettings = Field(
        default_factory=lambda: DiskSeekSettings(low_latency=False),
        description="datastores lose throughput to seeks between streams (the guests' Linux 2.6.24: no low_latency)",
    )
    co_cluster_hosts: int | None = Field(
        None, ge=1, le=L.MAX_HOSTS,
        description="with co_cluster: the second cluster's VMs on the first this many hosts only, loading them "
        "unevenly for the whole job (null: round-robin over every host) (assumption: no vSphere document states this)",
    )  # fmt: skip

    @model_validator(mode="after")
    def _skew_sched_needs_heterogeneous(self) -> FlexSlotSettings:
        if self.skew_sched and self.allocator != "heterogeneous":
            raise ValueError(f"skew_sched=true needs allocator=heterogeneous, not {self.allocator}")
        return self

    @model_validator(mode="after")
    def _co_cluster_placement(self) -> FlexSlotSettings:
        """co_cluster_hosts places the second cluster: it needs one, at most every host, and hosts whose memory
        holds their VMs (the memory physics assumes a host's own memory is large enough, vcloud/memory.py)."""
        k = self.co_cluster_hosts
        if k is None:
            return self
        if not self.co_cluster:
            raise ValueError(f"co_cluster_hosts={k} places a second cluster: it needs co_cluster=true")
        if k > self.hosts:
            raise ValueError(f"co_cluster_hosts={k} is more than the {self.hosts} hosts")
        busiest = -(-self.vm_count() // k) + -(-self.vm_count() // self.hosts)  # the first host's VMs, ours + theirs
        if busiest * self.vm_mem_mb > self.host_mem_mb:
            raise ValueError(f"co_cluster_hosts={k}: the first host would hold {busiest} VMs of {self.vm_mem_mb:g} "
                             f"MB, more than host_mem_mb={self.host_mem_mb:g}")  # fmt: skip
        return self

    @model_validator(mode="after")
    def _job_fits(self) -> FlexSlotSettings:
        """The benchmark's reduces need reduce slots (they are 0.95 x slaves x reduce_slots, as PUMA sets them, or
        the profile's own count); its map count (input / block) must stay within limits.MAX_MAPS."""
        if self.hadoop.reduce_slots == 0:
            raise ValueError(f"hadoop.reduce_slots=0: {self.benchmark} has reduces, which could never run")
        maps = PUMA[self.benchmark].input_mb * self.scale / self.hadoop.block_mb
        if maps > L.MAX_MAPS:
            raise ValueError(f"hadoop.block_mb={self.hadoop.block_mb:g} with scale={self.scale:g}: about {maps:,.0f} "
                             f"map tasks, more than {L.MAX_MAPS:,}")  # fmt: skip
        return self


class FlexSlot(HadoopScenario):
    name = "flexslot"
    description = "a PUMA benchmark on the FlexSlot testbed (30 slaves, 4+2 slots) under static, heterogeneous or DRS"
    Settings = FlexSlotSettings

    def build(self, settings: FlexSlotSettings, seed: int, check: bool = False) -> HadoopModel:
        s = settings
        scheduler = None
        if s.allocator == "heterogeneous" and not s.heterogeneous.cpu_mhz:
            cpu_mhz, pins = heterogeneous_from_pilot(s, seed)
            s = s.model_copy(update={"heterogeneous": s.heterogeneous.model_copy(update={"cpu_mhz": cpu_mhz})})
            if s.skew_sched:
                scheduler = PinnedFifoScheduler(pins)
        model = build_cluster(s, seed, check, scheduler)
        if s.co_cluster:
            add_co_cluster(model, co_cluster_loads(s, seed), s)
        submit_benchmark(model, s)
        return model

    def summary(self, model: HadoopModel) -> dict[str, Any]:
        s = model.settings
        return {
            "benchmark": s.benchmark,
            "scale": s.scale,
            "allocator": s.allocator,
            "skew_sched": s.skew_sched,
            "co_cluster": s.co_cluster,
            "co_cluster_hosts": s.co_cluster_hosts,
            **super().summary(model),
        }


def submit_benchmark(model: HadoopModel, s: FlexSlotSettings) -> None:
    profile = PUMA[s.benchmark]
    if profile.skew.size == "files":
        profile = replace(profile, skew=replace(profile.skew, heavy_per_file=s.heavy_per_file))
    table = splits(profile, s.scale, s.hadoop.block_mb, model.rng)
    maps = table.map_specs()
    reduces = profile.reduces if profile.reduces is not None else max(1, int(0.95 * s.slaves * s.hadoop.reduce_slots))
    files = table.file if s.input_placement == "writer" else None
    model.add_job(s.benchmark, profile, 0.0, maps, reduces, files=files)


def run_pilot(s: FlexSlotSettings, seed: int) -> HadoopModel:
    """A run that shapes another (its cluster or its neighbour): the same benchmark, to its end, like any run."""
    pilot = build_cluster(s, seed, check=False)
    submit_benchmark(pilot, s)
    run_model(pilot, s.max_duration_s, progress=False)
    return pilot


def heterogeneous_from_pilot(s: FlexSlotSettings, seed: int) -> tuple[list[float], dict[tuple[int, int], frozenset]]:
    """FlexSlot 2.2: run "Homo.", find the stragglers, scale up the nodes that ran them, keep the pool's size.

    A straggler is a map slower than mean + `straggler_sigma` standard deviations. Its node's CPU is scaled by
    the straggler's CPU time + I/O wait over an average map's ("proportionally based on their CPU time and I/O
    wait time in the last run"); the largest factor counts when a node ran several. Then all nodes are scaled
    together so the pool keeps its 153.6 GHz. Returns per-VM CPU (pool order) and the stragglers' pins.
    The "Homo." run is the report's own when it hands it over (`remember_pilot`), else run here.
    """
    static = heterogeneous_pilot_settings(s)
    pilot = _PILOTS.get(("stragglers", static.model_dump_json(), seed))
    if pilot is None:
        pilot = maps_of(run_pilot(static, seed))
    return heterogeneous_plan(pilot, s.straggler_sigma)


@dataclass(frozen=True)
class PilotMaps:
    """What a Heter. cluster reads of its "Homo." pilot (`heterogeneous_plan`): a few arrays, not the model, so
    that a run made elsewhere can be handed over (the paper report's own static run)."""

    runtime_s: np.ndarray  # the successful maps', in the tables' order
    demand_s: np.ndarray  # their CPU time + I/O wait
    node: list[int]  # the node each ran on
    task: list[tuple[int, int]]  # (job number, task index)
    vm_nodes: list[int | None]  # per VM (pool order): its tracker's node, None for the JobTracker and NameNode
    cpu_pool: float


def maps_of(pilot: HadoopModel) -> PilotMaps:
    """A finished static run's successful maps and VM layout, as `heterogeneous_plan` reads them."""
    maps = [a for a in pilot.attempts() if a.task.kind == TaskKind.MAP and a.state == "done"]
    node_of_vm = {t.vm: t.node for t in pilot.trackers}
    return PilotMaps(
        runtime_s=np.array([a.runtime_s for a in maps]),
        demand_s=np.array([a.cputime_s + a.iowait_s for a in maps]),
        node=[a.tracker.node for a in maps],
        task=[(a.task.job.number, a.task.index) for a in maps],
        vm_nodes=[node_of_vm.get(vm) for vm in pilot.vm_agents],
        cpu_pool=pilot.pool_capacity()[0],
    )


def heterogeneous_plan(pilot: PilotMaps, sigma: float) -> tuple[list[float], dict[tuple[int, int], frozenset]]:
    """`heterogeneous_from_pilot`'s arithmetic on the pilot's maps: per-VM CPU and the stragglers' pins."""
    runtimes, demand = pilot.runtime_s, pilot.demand_s
    threshold = runtimes.mean() + sigma * runtimes.std()
    factor: dict[int, float] = {}
    stragglers = []
    for runtime, need, node, task in zip(runtimes.tolist(), demand, pilot.node, pilot.task, strict=True):
        if runtime > threshold:
            factor[node] = max(factor.get(node, 1.0), need / demand.mean())
            stragglers.append(task)
    w = np.array([1.0 if node is None else factor.get(node, 1.0) for node in pilot.vm_nodes])
    powerful = frozenset(factor)
    return list(pilot.cpu_pool * w / w.sum()), {key: powerful for key in stragglers}


def heterogeneous_pilot_settings(s: FlexSlotSettings) -> FlexSlotSettings:
    """The "Homo." run a Heter. cluster is shaped by: the same job on the static cluster (skew_sched, the
    heterogeneous settings and straggler_sigma play no part in a static run). A run of its own, as the paper report
    makes it for Table 1."""
    return s.model_copy(update={"allocator": "static", "skew_sched": False})


def pilot_of(s: FlexSlotSettings) -> tuple[str, FlexSlotSettings] | None:
    """The run alone a run of `s` would make first, and what it reads of it: ("loads", the neighbour's run) for a
    co-located run, ("stragglers", the static run) for a Heter. cluster to be planned; None if it makes none."""
    if s.co_cluster:
        return "loads", pilot_settings(s)
    if s.allocator == "heterogeneous" and not s.heterogeneous.cpu_mhz:
        return "stragglers", heterogeneous_pilot_settings(s)
    return None


def co_cluster_loads(s: FlexSlotSettings, seed: int) -> dict[str, TraceLoad]:
    """Per VM of a stock run of the same job, alone: its CPU demand (share of its vCPUs) and disk MB/s over time.
    The same for every slot manager and speculation of the run beside it, so a process computes it once (the paper
    report runs each co-located benchmark with three slot managers), or is handed it (`remember_pilot`)."""
    alone = pilot_settings(s)
    key = ("loads", alone.model_dump_json(), seed)
    if key not in _PILOTS:
        pilot = run_pilot(alone, seed)
        remember_pilot("loads", alone, seed, loads_of(pilot.vm_trace(), pilot.settings))
    return _PILOTS[key]


def pilot_settings(s: FlexSlotSettings) -> FlexSlotSettings:
    """The stock run alone whose loads a co-located run replays: the same job, without the co-located cluster, its
    slot manager or its speculation. It is a run of its own (`FlexSlot.build` of these settings is the pilot)."""
    return s.model_copy(
        update={"co_cluster": False, "co_cluster_hosts": None, "slot_manager": "none", "speculation": "hadoop"}
    )


def remember_pilot(kind: str, alone: FlexSlotSettings, seed: int, outcome: Any) -> None:
    """Keep what a pilot gave (`kind`: "loads" or "stragglers") for the runs of this process (the paper report
    hands each worker what the run alone it has already made gives, so no worker runs a pilot)."""
    while len(_PILOTS) >= 4:  # loads are ~10 MB each (a value per VM and trace sample): the oldest goes
        del _PILOTS[next(iter(_PILOTS))]
    _PILOTS[(kind, alone.model_dump_json(), seed)] = outcome


_PILOTS: dict[tuple[str, str, int], Any] = {}


def loads_of(trace: pd.DataFrame, s: FlexSlotSettings) -> dict[str, TraceLoad]:
    """A finished run's per-VM CPU demand (share of its vCPUs) and disk MB/s (its `vm_trace`), as loads to replay
    beside another."""
    full = trace.vcpus.to_numpy() * s.core_mhz
    trace = trace.assign(cpu=trace.cpu_demand_mhz.to_numpy() / full, start=trace.time_s - s.trace_interval_s)
    loads = {}
    for vm, rows in trace.groupby("vm", observed=True, sort=False):
        times = (*rows.start.clip(lower=0.0).tolist(), float(rows.time_s.iloc[-1]))
        loads[str(vm)] = TraceLoad(times, (*rows.cpu.tolist(), 0.0), (*rows.disk_mbps.tolist(), 0.0))
    return loads


def add_co_cluster(model: HadoopModel, loads: dict[str, TraceLoad], s: FlexSlotSettings) -> None:
    """The neighbour's VMs, outside our pool, each with its own pool's even share as its host weight: round-robin
    over every host, or over the first `co_cluster_hosts` (an assumption: a neighbour concentrated on a few hosts)."""
    share = (s.pool_cpu_mhz or s.hosts * s.cores_per_host * s.core_mhz) / len(loads)
    hosts = s.co_cluster_hosts or s.hosts
    for k, (name, load) in enumerate(loads.items()):
        host = model.host_agents[k % hosts]
        vm = model.add_vm(f"co-{name}", host, vcpus=s.vcpus, mem_mb=s.vm_mem_mb, os_mem_mb=s.daemon_mem_mb,
                          in_pool=False, cpu_entitlement_mhz=share)  # fmt: skip
        model.add_background(vm, load)
