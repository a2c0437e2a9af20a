"""`trace-replay`: the jobs of a public trace (SWIM TSV or Rumen JSON, gzip'd or not) on an emulated cluster.

Two replay modes (`replay`):
- `durations` (Mumak-like; Rumen only): each successful attempt gets the work that, on an uncontended node,
  takes its recorded runtime: its plan (hadoop_layer/plans.py: JVM start, read, map, spills, merges, output,
  pipelined as Hadoop runs them) is built with no CPU, each phase timed at its bottleneck alone on a node of
  the traced cluster with every byte on the disk, and the CPU that fills the rest of the recorded time goes to
  the map (or reduce) function (`plans.cpu_for_runtime`). A reduce's recorded time after its shuffle
  (finish - shuffleFinished) is sized so when its shuffle ends, from the merges it then has; the shuffle itself
  is emulated (it waits for the maps). Schedulers thus meet the real task-time distribution while the cloud
  still adds contention, steal and iowait. The job's initialization, setup and cleanup take their recorded times.
- `physics`: work from bytes and, where the trace has them, the CPU counters (`cumulativeCpuUsage`,
  `cpuUsages`), else CPU per MB borrowed from a PUMA profile (`profile`).
`auto` is durations for Rumen, physics for SWIM (which records no task times).

Outcomes as recorded (Rumen): attempts that failed or were killed before their task's success run their
recorded time and then fail or are killed (speculative duplicates are left to the speculation policy); tasks
that never succeeded replay their attempts; a job recorded as failed or killed ends so at its recorded time,
and a job killed before its setup ran stays in PREP until then.

Cluster (`topology`): a Rumen topology file (`topology=PATH`, or found beside the trace: the trace's name with
`trace` replaced by `topology`), else, for a Rumen trace, the hosts its attempts ran on; `topology=testbed`
runs on the FlexSlot testbed instead. A traced cluster has one host and one VM per node in its racks, with as
many map and reduce slots as the trace ever ran at once on one node, and a core per slot.

Hadoop 1.x's job lifecycle (`hadoop.job_setup_cleanup`) is on here; other scenarios leave it off for now.
"""

from __future__ import annotations

import dataclasses
import json
import math
import sys
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Any, Literal

import numpy as np
import pandas as pd
from pydantic import Field, field_validator

from hadoop_layer.config import HadoopConfig
from hadoop_layer.ended import DONE, FAILED, MAP, REDUCE
from hadoop_layer.hdfs import Locality
from hadoop_layer.model import HadoopModel
from hadoop_layer.plans import Route, cpu_for_runtime, map_plan
from hadoop_layer.profiles import PUMA, JobProfile, MapColumns
from hadoop_layer.tasks import Task
from hadoop_layer.traces import Topology, TraceError, TraceJob, median_or, read_text, read_topology, read_trace
from policies.registry import build
from policies.schedulers import SCHEDULERS
from policies.slots import SLOT_MANAGERS
from policies.speculation import SPECULATION
from scenarios.flexslot import Benchmark
from scenarios.hadoop_base import FLEXSLOT_HADOOP, HadoopClusterSettings, HadoopScenario, build_cluster

DEFAULT_TRACE = Path(__file__).resolve().parents[2] / "shared" / "data" / "swim" / "FB-2009_samples_24_times_1hr_0.tsv"
TRACE_HADOOP = FLEXSLOT_HADOOP.model_copy(update={"job_setup_cleanup": True})


class TraceReplaySettings(HadoopClusterSettings):
    trace: str = Field(str(DEFAULT_TRACE), description="SWIM or Rumen trace, plain or gzip'd (format by content)")
    replay: Literal["auto", "durations", "physics"] = Field(
        "auto", description="durations: recorded task times (Rumen); physics: bytes and CPU counters; auto: by format"
    )
    topology: str = Field(
        "", description="Rumen topology file; '' finds one beside the trace, else the trace's hosts; 'testbed'"
    )
    original_nodes: int = Field(
        600, ge=1, le=1_000_000, description="SWIM: size of the traced cluster (600 for FB-2009)"
    )
    max_jobs: int = Field(50, ge=1, le=10_000, description="replay the first N jobs")
    time_scale: float = Field(1.0, ge=1e-6, le=1e6, description="submit times are multiplied by this")
    profile: Benchmark = Field("wordcount", description="CPU per MB and record size when the trace has no counters")
    hadoop: HadoopConfig = Field(default_factory=lambda: TRACE_HADOOP.model_copy())
    replay_io: bool = Field(
        True, description="durations: charge the recorded bytes as I/O (False: the whole runtime is CPU, as Mumak)"
    )

    @field_validator("hadoop", mode="before")
    @classmethod
    def _over_trace_defaults(cls, value: Any) -> Any:
        """`--set hadoop.KEY=V` changes KEY of this scenario's Hadoop (lifecycle on), not of stock defaults."""
        return {**TRACE_HADOOP.model_dump(), **value} if isinstance(value, dict) else value


@dataclasses.dataclass
class Replay:
    """What a build decided: the jobs added (with their trace records), those left out, the mode, the cluster."""

    mode: str
    cluster: str
    added: list[tuple[TraceJob, Any]]
    not_run: list[TraceJob]


class TraceReplay(HadoopScenario):
    name = "trace-replay"
    description = "jobs of a SWIM or Rumen trace (--set trace=PATH replay=durations|physics) on its own cluster"
    Settings = TraceReplaySettings

    def build(self, settings: TraceReplaySettings, seed: int, check: bool = False) -> HadoopModel:
        kind, jobs = load_trace(settings)
        mode = settings.replay if settings.replay != "auto" else ("durations" if kind == "rumen" else "physics")
        if mode == "durations" and kind != "rumen":
            raise ValueError(f"setting replay='durations': {Path(settings.trace).name} records no task times (SWIM)")
        topology = find_topology(settings, kind)
        if topology is None:
            model, nodes, cluster = build_cluster(settings, seed, check), {}, "testbed"
        else:
            model, nodes = build_trace_cluster(settings, seed, check, topology, jobs, kind)
            n = model.traced_node
            racks = len(set(model.node_racks.tolist()))
            cluster = (f"{len(nodes)} nodes in {racks} racks, {n.map_slots} map + {n.reduce_slots} reduce slots, "
                       f"disk {n.disk_mbps:.0f} MB/s, NIC {n.nic_mbps:.0f} MB/s")  # fmt: skip
        first = min(j.submit_s for j in jobs)
        replay = Replay(mode, cluster, [], [])
        for job in jobs:
            submit_s = (job.submit_s - first) * settings.time_scale
            if submit_s > settings.max_duration_s:
                replay.not_run.append(job)
                continue
            replay.added.append((job, add_trace_job(model, job, settings, submit_s, mode, nodes)))
        if replay.not_run:
            names = ", ".join(j.name for j in replay.not_run[:5]) + (", ..." if len(replay.not_run) > 5 else "")
            print(
                f"vcloud: warning: {len(replay.not_run)} of {len(jobs)} jobs are submitted after "
                f"max_duration_s={settings.max_duration_s:g} and are not run: {names}",
                file=sys.stderr,
            )
        if not replay.added:
            raise ValueError(f"setting max_duration_s={settings.max_duration_s:g}: no job is submitted before it")
        model.replay = replay
        return model

    def summary(self, model: HadoopModel) -> dict[str, Any]:
        replay: Replay = model.replay
        table = comparison(model)
        return {
            "trace": Path(model.settings.trace).name,
            "replay": replay.mode,
            "cluster": replay.cluster,
            **_slots(model),
            "jobs_not_run": [j.name for j in replay.not_run],
            "jobs_killed": sum(job.state == "killed" for _, job in replay.added),
            "failed_attempts": int(
                np.count_nonzero((model.ended.view("state") == FAILED) & (model.ended.view("group") <= REDUCE))
            ),
            **error_figures(table),
            **attempt_figures(model),
            "per_job": table.to_dict(orient="records"),
            **super().summary(model),
        }

    def frame_makers(self, model: HadoopModel) -> dict[str, Callable[[], pd.DataFrame]]:
        return {**super().frame_makers(model), "comparison": partial(comparison, model)}


def load_trace(s: TraceReplaySettings) -> tuple[str, list[TraceJob]]:
    path = Path(s.trace)
    if not path.is_file():
        raise ValueError(f"setting trace={s.trace!r}: no such file")
    slaves = s.slaves
    try:
        kind, jobs = read_trace(
            path, original_nodes=s.original_nodes, emulated_nodes=slaves, block_mb=s.hadoop.block_mb
        )
    except TraceError as exc:
        raise ValueError(str(exc)) from None
    jobs = jobs[: s.max_jobs]
    if not jobs:
        raise ValueError(f"setting trace={s.trace!r}: the trace has no jobs")
    return kind, jobs


def find_topology(s: TraceReplaySettings, kind: str) -> Topology | None:
    """The cluster to replay on: a topology file (given or beside the trace), a Rumen trace's hosts, or None for
    the testbed."""
    if s.topology == "testbed" or (kind == "swim" and not s.topology):
        return None
    if s.topology:
        path = Path(s.topology)
        if not path.is_file():
            raise ValueError(f"setting topology={s.topology!r}: no such file")
    else:
        trace = Path(s.trace)
        path = trace.with_name(trace.name.replace("trace", "topology")) if "trace" in trace.name else None
        if path is None or not path.is_file():
            return Topology(())  # the trace's own hosts (build_trace_cluster)
    try:
        return read_topology(path)
    except TraceError as exc:
        raise ValueError(str(exc)) from None


def _split_host(name: str) -> tuple[str, str]:
    """Rumen's "/rack/host" (or a bare host) as (rack, host)."""
    parts = [p for p in name.split("/") if p]
    if not parts:
        return "", ""
    return ("/".join(parts[:-1]) or "default-rack"), parts[-1]


def _attempt_hosts(jobs: list[TraceJob]) -> list[str]:
    """Every host a trace names: where attempts ran and where map splits lived."""
    names = []
    for j in jobs:
        names += [*(j.map_hosts or ()), *(j.reduce_hosts or ())]
        names += [r for rs in (j.map_replicas or ()) for r in rs]
    return [h for h in names if h]


@dataclasses.dataclass(frozen=True)
class TracedNode:
    """What a trace shows of its nodes (Rumen keeps no hardware or slot counts): the most map and reduce
    attempts one host ran at once, and the most disk and network MB/s that one host's running attempts moved
    together (each attempt's bytes spread evenly over its runtime), a floor for that node's hardware."""

    map_slots: int = 1
    reduce_slots: int = 1
    disk_mbps: float = 0.0
    nic_mbps: float = 0.0


def _mb(attempt: dict, key: str) -> float:
    value = attempt.get(key)
    return value / 2**20 if isinstance(value, int | float) and value > 0 else 0.0


def traced_node(trace: str, replication: int, serving: bool = True) -> TracedNode:
    """Read the attempts' hosts, times and byte counters again (the trace was validated before).

    With DataNode serving (`hadoop.datanode_serving`) an attempt's HDFS output costs the datastores of all
    `replication` nodes of its pipeline and 2 x (replication - 1) NIC transfers (a send and a receive per hop);
    spread evenly over the nodes, that is what each node carries per MB its own attempts write. Without, the
    writer's disk once and its NIC (replication - 1) times, as the emulator then charges it."""
    text, pos, decoder = read_text(trace), 0, json.JSONDecoder()
    events: dict[str, list[tuple[float, int, int, float, float]]] = {}  # host -> (time, kind, +-1, disk, net)
    while True:
        while pos < len(text) and text[pos].isspace():
            pos += 1
        if pos >= len(text):
            break
        obj, pos = decoder.raw_decode(text, pos)
        for k, key in enumerate(("mapTasks", "reduceTasks")):
            for task in obj.get(key) or []:
                for a in task.get("attempts") or []:
                    start, end = a.get("startTime"), a.get("finishTime")
                    if not (isinstance(start, int | float) and isinstance(end, int | float) and 0 <= start < end):
                        continue
                    secs = (end - start) / 1000.0
                    written = _mb(a, "hdfsBytesWritten")
                    disk = sum(_mb(a, f) for f in ("hdfsBytesRead", "fileBytesRead", "fileBytesWritten"))
                    disk += written * (replication if serving else 1)
                    net = written * (replication - 1) * (2 if serving else 1) + _mb(a, "reduceShuffleBytes")
                    host = _split_host(a.get("hostName") or "")[1]
                    evs = events.setdefault(host, [])
                    evs += [(end, k, -1, -disk / secs, -net / secs), (start, k, 1, disk / secs, net / secs)]
    slots, disk_peak, net_peak = [1, 1], 0.0, 0.0
    for evs in events.values():
        running, disk, net = [0, 0], 0.0, 0.0
        for _, k, step, d, n in sorted(evs):  # ends sort before starts at the same instant
            running[k] += step
            disk, net = disk + d, net + n
            slots[k] = max(slots[k], running[k])
            disk_peak, net_peak = max(disk_peak, disk), max(net_peak, net)
    return TracedNode(slots[0], slots[1], disk_peak, net_peak)


def build_trace_cluster(
    s: TraceReplaySettings, seed: int, check: bool, topology: Topology, jobs: list[TraceJob], kind: str
) -> tuple[HadoopModel, dict[str, int]]:
    """One host and one VM per traced node, racks as traced; nodes seen only in the trace join their rack."""
    racks: dict[str, list[str]] = {rack: list(hosts) for rack, hosts in topology.racks}
    known = {h for hosts in racks.values() for h in hosts}
    for name in _attempt_hosts(jobs):
        rack, host = _split_host(name)
        if host and host not in known:
            racks.setdefault(rack, []).append(host)
            known.add(host)
    if not known:
        raise ValueError(f"setting trace={s.trace!r}: no topology file and no recorded hosts to build a cluster")
    seen = traced_node(s.trace, s.hadoop.replication, s.hadoop.datanode_serving) if kind == "rumen" else None
    map_slots, reduce_slots = (
        (seen.map_slots, seen.reduce_slots) if seen else (s.hadoop.map_slots, s.hadoop.reduce_slots)
    )
    disk_mbps = max(s.disk_mbps, seen.disk_mbps) if seen else s.disk_mbps
    nic_mbps = max(s.nic_mbps, seen.nic_mbps) if seen else s.nic_mbps
    hadoop = s.hadoop.model_copy(update={"map_slots": map_slots, "reduce_slots": reduce_slots})
    cores = max(s.cores_per_host, map_slots + reduce_slots)
    model = HadoopModel(
        rng=seed,
        dt=s.dt,
        **s.cloud_physics(),
        trace_interval_s=s.trace_interval_s,
        check=check,
        hadoop=hadoop,
        scheduler=build(SCHEDULERS, s.scheduler, s),
        speculation=build(SPECULATION, s.speculation, s),
        slot_manager=build(SLOT_MANAGERS, s.slot_manager, s),
    )
    model.allocator = s.make_allocator(model.rng)
    model.set_pool(None, None)  # a physical cluster: no pool beyond its hosts
    nodes: dict[str, int] = {}
    vm_mem = max(s.vm_mem_mb, s.daemon_mem_mb + (map_slots + reduce_slots) * (hadoop.child_heap_mb + 64.0))
    for r, hosts in enumerate(racks.values()):
        for host in hosts:
            h = model.add_host(host, cores=cores, core_mhz=s.core_mhz, mem_mb=max(s.host_mem_mb, vm_mem + 1024),
                               disk_mbps=disk_mbps, nic_mbps=nic_mbps, rack=r)  # fmt: skip
            vm = model.add_vm(host, h, vcpus=map_slots + reduce_slots, mem_mb=vm_mem, os_mem_mb=s.daemon_mem_mb)
            nodes[host] = model.add_slave(vm).node
    model.settings = s
    model.traced_node = TracedNode(map_slots, reduce_slots, disk_mbps, nic_mbps)
    return model, nodes


_OTHER_NODES = 10**9  # VM rows of no VM: the pipeline nodes of an uncontended estimate


def _map_cpu_for(task: Task, runtime_s: float, reduces: int, cfg: HadoopConfig, core: float,
                 rates: tuple[float, float]) -> float:  # fmt: skip
    """The CPU that makes a node-local attempt of `task` take `runtime_s` alone on a node of the traced cluster:
    its plan (read, map, spills, merge; map-only: the output down the replication pipeline) with no CPU, then the
    rest. The pipeline's other nodes need only be told apart (phase_uncontended_s keys devices by VM row)."""
    hops = tuple(range(_OTHER_NODES, _OTHER_NODES + cfg.replication - 1)) if reduces == 0 else ()
    route = Route(pipeline_vms=hops, serving=cfg.datanode_serving)
    plan = map_plan(task, Locality.NODE, cfg.io_sort_mb, cfg, core, reduces, route)[0]
    return cpu_for_runtime(plan, "map", runtime_s, core, *rates)


def trace_maps(
    job: TraceJob, s: TraceReplaySettings, mode: str, cfg: HadoopConfig, nodes: dict[str, int]
) -> MapColumns:
    """The job's map specs: its successful maps (`_map_columns`), then the tasks that never succeeded, sized like
    its typical map; a split keeps its recorded locations that name nodes of the cluster (`nodes`)."""
    base, core = PUMA[s.profile], s.core_mhz
    total = sum(job.map_input_mb)
    share = job.output_mb if job.reduces == 0 else job.shuffle_mb  # map-only: the maps write the job's output
    maps = _map_columns(job, mode, s.replay_io, total, share, core, base)
    if job.unfinished_maps:
        typical = median_or(list(job.map_durations_s or []), 10.0)
        mean_in = total / len(job.map_input_mb) if job.map_input_mb else 0.0
        cpu_s = (
            max(typical - cfg.jvm_start_core_s, 0.0) if mode == "durations" else mean_in * base.map_cpu_mc_per_mb / core
        )
        maps = _with_rows(maps, len(job.unfinished_maps), cpu_s * core)
    for i, locs in enumerate(job.map_replicas or ()):
        known = sorted({nodes[h] for h in (_split_host(r)[1] for r in locs) if h in nodes})
        if known:
            maps.own_replicas[i] = np.array(known, dtype=np.int64)
    return maps


def _map_columns(
    job: TraceJob, mode: str, replay_io: bool, total: float, share: float, core: float, base: JobProfile
) -> MapColumns:
    """The job's successful maps' specs as columns: each split's share of the job's map output, its CPU (recorded,
    else the profile's per MB; durations mode: 0, sized later from its plan), no bytes when the recorded time is all
    CPU. Elementwise float64 arithmetic in the order of the per-map Python it replaced: the same numbers, without a
    dict for each of a SWIM day's 406,005 maps."""
    x = np.array(job.map_input_mb, dtype=np.float64)
    zeros = np.zeros(len(x))
    out = share * (x / total) if total > 0 else zeros
    if mode == "durations":
        cpu = zeros  # sized once the task exists, from its plan (plans.cpu_for_runtime)
        if not replay_io:
            x = out = zeros  # the recorded time is all CPU: no bytes to move
    elif not job.map_cpu_s:
        cpu = x * base.map_cpu_mc_per_mb
    else:
        recorded = np.array([c is not None for c in job.map_cpu_s], dtype=bool)
        cpu_s = np.array([c if c is not None else 0.0 for c in job.map_cpu_s], dtype=np.float64)
        cpu = np.where(recorded, cpu_s * core, x * base.map_cpu_mc_per_mb)
    return MapColumns(x, cpu, out, out * 2**20 / base.map_record_bytes)


def _with_rows(maps: MapColumns, n: int, cpu_mc: float) -> MapColumns:
    """`maps` and `n` more maps of `cpu_mc` that read and write nothing (a trace's tasks that never succeeded)."""
    zeros = np.zeros(n)
    return MapColumns(
        np.concatenate([maps.input_mb, zeros]),
        np.concatenate([maps.cpu_mc, np.full(n, cpu_mc)]),
        np.concatenate([maps.output_mb, zeros]),
        np.concatenate([maps.output_records, zeros]),
        maps.own_replicas,
    )


def add_trace_job(
    model: HadoopModel, job: TraceJob, s: TraceReplaySettings, submit_s: float, mode: str, nodes: dict[str, int]
):
    """Add one trace job; durations mode sizes each task from its recorded runtime (module docstring)."""
    base = PUMA[s.profile]
    cfg = model.hadoop
    node = getattr(model, "traced_node", None)
    rates = (node.disk_mbps, node.nic_mbps) if node is not None else (s.disk_mbps, s.nic_mbps)
    if not s.replay_io:
        rates = (math.inf, math.inf)
    core = s.core_mhz
    inputs = list(job.map_input_mb)
    unfinished = list(job.unfinished_maps)
    total = sum(inputs)
    selectivity = job.shuffle_mb / total if total > 0 else 0.0
    profile = dataclasses.replace(
        base,
        name=f"trace:{job.name}",
        map_selectivity=selectivity,
        combine_ratio=1.0,
        reduce_selectivity=job.output_mb / job.shuffle_mb if job.shuffle_mb > 0 else 0.0,
    )
    durations = list(job.map_durations_s or [])
    maps = trace_maps(job, s, mode, cfg, nodes)
    reduces = job.reduces + len(job.unfinished_reduces)
    added = model.add_job(job.name, profile, submit_s, maps, reduces)
    if mode == "durations":
        for task, runtime in zip(added.maps, durations, strict=False):
            task.cpu_mc = _map_cpu_for(task, runtime, reduces, cfg, core, rates)
    for i, retries in enumerate([*(job.map_retries or [()] * job.maps), *unfinished]):
        if retries:  # asking for a task makes the job's tasks (Job.maps): only when there is something to set
            added.maps[i].replay = list(retries)
    reduce_retries = [*(job.reduce_retries or [()] * job.reduces), *job.unfinished_reduces]
    after = list(job.reduce_after_shuffle_s or [None] * job.reduces)
    rdur = list(job.reduce_durations_s or [])
    rcpu = list(job.reduce_cpu_s or [None] * job.reduces)
    for i in range(reduces):
        if reduce_retries[i]:
            added.reduces[i].replay = list(reduce_retries[i])
        if mode == "durations":
            task = added.reduces[i]
            own = after[i] if i < job.reduces and after[i] is not None else (rdur[i] if i < job.reduces else None)
            if own is None:
                own = median_or([a for a in after if a is not None] or rdur, 10.0)
            task.after_shuffle_s = own if s.replay_io else None
            if not s.replay_io:  # all CPU: the output still goes out, at no cost in the recorded time
                task.cpu_mc = max(own, 1e-3) * core
        elif i < job.reduces and rcpu[i] is not None:
            added.reduces[i].cpu_mc = rcpu[i] * core
    if mode == "durations":  # MapReduce 2 traces record no setup/cleanup tasks: their gaps time the AM's work
        added.init_s = job.init_s
        added.setup_s = job.setup_s if job.setup_s is not None or job.cleanup_s is not None else job.head_s
        added.cleanup_s = job.cleanup_s if job.setup_s is not None or job.cleanup_s is not None else job.tail_s
    if job.outcome != "SUCCESS":
        added.hold_setup = job.setup_s is None and job.maps == 0 and not job.unfinished_maps
        if job.duration_s is not None:
            cleanup = job.cleanup_s if job.cleanup_s is not None else cfg.jvm_start_core_s + cfg.setup_cleanup_s
            end = submit_s + max(job.duration_s - cleanup, 0.0)
            state = "killed" if job.outcome == "KILLED" else "failed"
            model.jobtracker.later(end, partial(model.jobtracker.kill_job, added, state))
    return added


def comparison(model: HadoopModel) -> pd.DataFrame:
    """Per job: recorded and emulated durations (submit to end) and their ratio."""
    rows = []
    for trace_job, job in model.replay.added:
        emulated = job.end_s - job.submit_s if job.end_s is not None else None
        recorded = trace_job.duration_s
        rows.append({
            "job": job.job_id, "name": trace_job.name, "recorded_outcome": trace_job.outcome, "state": job.state,
            "recorded_s": recorded, "emulated_s": emulated,
            "ratio": emulated / recorded if emulated is not None and recorded else None,
        })  # fmt: skip
    return pd.DataFrame(rows, columns=["job", "name", "recorded_outcome", "state", "recorded_s", "emulated_s", "ratio"])


def error_figures(table: pd.DataFrame) -> dict[str, Any]:
    """Median absolute relative job-duration error and the share of jobs within 2x, over the jobs with both a
    recorded and an emulated duration (all of them, and the successful ones alone)."""
    out: dict[str, Any] = {}
    for label, rows in (("", table), ("_succeeded", table[table.recorded_outcome == "SUCCESS"])):
        ratio = rows.ratio.dropna().astype(float)
        out[f"jobs_compared{label}"] = len(ratio)
        out[f"job_duration_median_abs_error{label}"] = float(np.median(np.abs(ratio - 1))) if len(ratio) else None
        out[f"jobs_within_2x{label}"] = float(((ratio >= 0.5) & (ratio <= 2)).mean()) if len(ratio) else None
    return out


def attempt_figures(model: HadoopModel) -> dict[str, Any]:
    """Median and p90 of the successful map and reduce attempts' runtimes: recorded against emulated."""
    out: dict[str, Any] = {}
    ended = model.ended
    done = np.flatnonzero((ended.view("state") == DONE) & np.isin(ended.view("job"), [j.number for _, j in
                                                                                      model.replay.added]))  # fmt: skip
    for kind, field in (("m", "map_durations_s"), ("r", "reduce_durations_s")):
        recorded = [d for t, _ in model.replay.added for d in (getattr(t, field) or ())]
        rows = done[ended.group[done] == (MAP if kind == "m" else REDUCE)]
        emulated = ended.end_s[rows] - ended.start_s[rows]
        name = "map" if kind == "m" else "reduce"
        for q, label in ((50, "median"), (90, "p90")):
            out[f"{name}_runtime_{label}_recorded_s"] = float(np.percentile(recorded, q)) if recorded else None
            out[f"{name}_runtime_{label}_emulated_s"] = float(np.percentile(emulated, q)) if len(emulated) else None
    return out


def _slots(model: HadoopModel) -> dict[str, Any]:
    """The slots every node ran with, when the trace sized them (not the settings' `hadoop.*_slots`): what a reader
    of the run directory (the dashboard's `--run`) must draw."""
    node = getattr(model, "traced_node", None)
    return {"slots": {"map": node.map_slots, "reduce": node.reduce_slots}} if node is not None else {}
