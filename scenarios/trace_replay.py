"""`trace-replay`: the jobs of a public trace (SWIM TSV or Rumen JSON, gzip'd or not) on an emulated cluster.

Two replay modes (`replay`):
- `durations` (Mumak-like; Rumen only): each successful attempt gets the work that, on an uncontended node,
  takes its recorded runtime: its plan (hadoop_layer/plans.py: JVM start, read, map, spills, merges, output,
  pipelined as Hadoop runs them) is built with no CPU, each phase timed at its bottleneck alone on a node of
  the traced cluster with every byte on the disk, and the CPU that fills the rest of the recorded time goes to
  the map (or reduce) function (`plans.cpu_for_runtime`). A reduce's recorded time after its shuffle
  (finish - shuffleFinished) is sized so when its shuffle ends, from the merges it then has. The shuffle itself
  is emulated (it waits for the maps' outputs and fetches them) and, with `shuffle_as_recorded` (default), ends
  no earlier than its recorded time (shuffleFinished - startTime, Rumen's `getShuffleRuntime`) after the
  attempt's start: the replay rule of this emulator, which replays each reduce's whole recorded time (shuffle,
  then the rest) as SLS replays a reduce container's, and keeps the wait for the maps that Mumak and Gridmix keep
  (they time only what follows the shuffle: Mumak the reduce phase, Gridmix merge and reduce). A durations replay
  replays recorded durations, so it is on by default; off, the shuffle ends when the emulated maps' outputs are
  fetched, which on a replay is earlier than on the traced cluster whenever that cluster's maps ended later or
  its fetches were slower (other users' load the trace does not hold). Schedulers thus meet the real task-time
  distribution while the cloud still adds contention, steal and iowait. A recorded runtime ends after the
  attempt's task commit (Task.done's canCommit wait; TaskTracker.reportDone sets finishTime after it), so with
  `commit_in_runtime` (default) the replay runs with `hadoop.task_commit` off: the commit takes no time beyond the
  recorded runtime, as in Mumak (config.json `used.task_commit`). The job's initialization, setup and cleanup take
  their recorded times.
- `physics`: work from bytes and, where the trace has them, the CPU counters (`cumulativeCpuUsage`,
  `cpuUsages`), else CPU per MB borrowed from a PUMA profile (`profile`).
`auto` is durations for Rumen, physics for SWIM (which records no task times).

Outcomes as recorded (Rumen): attempts that failed or were killed before their task's success run their
recorded time and then fail or are killed (speculative duplicates are left to the speculation policy); tasks
that never succeeded replay their attempts; a job recorded as failed or killed ends so at its recorded time,
and a job killed before its setup ran stays in PREP until then.

Cluster (`topology`): a Rumen topology file (`topology=PATH`, or found beside the trace: the trace's name with
`trace` replaced by `topology`), else, for a Rumen trace, the hosts its attempts ran on; `topology=testbed`
runs on the FlexSlot testbed instead. A traced cluster has one host and one VM per node in its racks; each node
has its own map and reduce slots as the trace shows them (`trace_slots`, `slots_per_host`: by default the most
attempts that host ran at once, raised to the hosts' mode), unless `hadoop.map_slots` / `reduce_slots` is set,
and a core per slot. `config.json` records under `used` the cluster and slots the run took.

The trace as read (hadoop_layer/rumen.py): real-data anomalies are repaired by stated rules (trace_repair.py) and
counted in `summary.json` (`anomalies_repaired`) and one stderr line; `max_jobs` bounds what is read and checked
as well as what is replayed, and says so when it cuts the file. Each job's recorded configuration sets the knobs
the emulator has per job (trace_conf.py; `job_conf=false` ignores it). The comparison splits each job's duration
into the wait before its first task, the waits between its tasks (when none of its attempts ran) and its tasks'
own run (`comparison`); `start_as_recorded` holds each map and reduce attempt to its recorded start
(`hold_to_recorded_starts`), the traced cluster's delays taken as the other users' load the trace does not hold.

Hadoop 1.x's job lifecycle (`hadoop.job_setup_cleanup`) is on, as in every scenario (a replayed job's recorded init,
setup and cleanup times are its own).
"""

from __future__ import annotations

import dataclasses
import functools
import json
import math
import statistics
import sys
from collections import Counter
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Any, Literal

import numpy as np
import pandas as pd
from pydantic import Field, field_validator, model_validator

from hadoop_layer.config import HadoopConfig
from hadoop_layer.ended import FAILED, REDUCE
from hadoop_layer.hdfs import Locality
from hadoop_layer.jvms import start_s as jvm_start_s
from hadoop_layer.model import HadoopModel
from hadoop_layer.plans import Route, cpu_for_runtime, map_plan
from hadoop_layer.profiles import PUMA, JobProfile, MapColumns
from hadoop_layer.tasks import Task, TaskKind
from hadoop_layer.trace_records import skip_blank_and_comments
from hadoop_layer.trace_repair import LONG_MAX
from hadoop_layer.traces import (
    Topology,
    TraceError,
    TraceJob,
    TraceRead,
    load_trace,
    median_or,
    read_text,
    read_topology,
)
from policies.registry import build
from policies.schedulers import SCHEDULERS
from policies.slots import SLOT_MANAGERS
from policies.speculation import SPECULATION
from scenarios import limits as L
from scenarios.flexslot import Benchmark
from scenarios.hadoop_base import FLEXSLOT_HADOOP, HadoopClusterSettings, HadoopScenario, build_cluster
from scenarios.outputs import file_problem
from scenarios.trace_compare import attempt_figures, comparison, error_figures, json_ready
from vcloud.diskseek import DiskSeekSettings

HOLDING_SCHEDULERS = ("fifo", "fair", "capacity", "coupling")  # they take tasks through Job.find_map / find_reduce
DEFAULT_TRACE = Path(__file__).resolve().parents[2] / "shared" / "data" / "swim" / "FB-2009_samples_24_times_1hr_0.tsv"
TRACE_HADOOP = FLEXSLOT_HADOOP.model_copy(update={"job_setup_cleanup": True})


def trace_hadoop(asked: dict[str, Any]) -> HadoopConfig:
    """This scenario's Hadoop (lifecycle on) with the values asked. Its `model_fields_set` holds the keys whose value
    differs from this scenario's default (the settings layer hands over whole groups, defaults filled in), so the
    replay can tell an asked `hadoop.map_slots` (which overrides the trace's slots) from the default."""
    default = TRACE_HADOOP.model_dump()
    cfg = HadoopConfig.model_validate({**default, **asked})
    object.__setattr__(cfg, "__pydantic_fields_set__", {k for k, v in asked.items() if default.get(k) != v})
    return cfg


class TraceReplaySettings(HadoopClusterSettings):
    trace: str = Field(str(DEFAULT_TRACE), description="SWIM or Rumen trace, plain or gzip'd (format by content)")
    disk_seek: DiskSeekSettings = Field(
        default_factory=lambda: DiskSeekSettings(scheduler="none"),
        description="off by default here: a durations replay sizes each attempt to its recorded time, which already "
        "holds the traced disks' seeks (set disk_seek.scheduler=cfq for a physics replay)",
    )
    replay: Literal["auto", "durations", "physics"] = Field(
        "auto", description="durations: recorded task times (Rumen); physics: bytes and CPU counters; auto: by format"
    )
    topology: str = Field(
        "", description="Rumen topology file; '' finds one beside the trace, else the trace's hosts; 'testbed'"
    )
    original_nodes: int = Field(
        600, ge=1, le=1_000_000, description="SWIM: size of the traced cluster (600 for FB-2009)"
    )
    max_jobs: int = Field(50, ge=1, le=10_000, description="read, check and replay the first N jobs (file order)")
    time_scale: float = Field(1.0, ge=1e-6, le=1e6, description="submit times are multiplied by this")
    profile: Benchmark = Field("wordcount", description="CPU per MB and record size when the trace has no counters")
    hadoop: HadoopConfig = Field(default_factory=lambda: trace_hadoop({}))
    replay_io: bool = Field(
        True, description="durations: charge the recorded bytes as I/O (False: the whole runtime is CPU, as Mumak)"
    )
    trace_slots: Literal["host", "mode", "max", "hadoop"] = Field(
        "host",
        description="traced cluster's slots per node: host: the most attempts that host ran at once, at least the "
        "hosts' mode; mode: every node the mode; max: every node the busiest host's (our estimators); hadoop: "
        "hadoop.map_slots / reduce_slots on every node (a value of those other than the default overrides as well)",
    )
    job_conf: bool = Field(
        True, description="honour each job's recorded configuration where the emulator has the knob (Rumen)"
    )
    start_as_recorded: bool = Field(
        False,
        description="Rumen: no map or reduce attempt starts before its recorded start after its job's submit: the "
        "traced cluster's delays taken as a load the trace does not hold (other users' jobs); until then the task "
        "is not handed out and its slot is free for other tasks",
    )

    shuffle_as_recorded: bool = Field(
        True,
        description="durations (Rumen): a reduce's shuffle ends no earlier than its recorded shuffle time "
        "(shuffleFinished - startTime, Rumen's ReduceTaskAttemptInfo.getShuffleRuntime) after its attempt's start, "
        "and still not before it has fetched every map's output; false: when the fetches end, as Mumak and "
        "Gridmix replay a reduce (they time only what follows the shuffle)",
    )
    commit_in_runtime: bool = Field(
        True,
        description="durations (Rumen): a recorded attempt's runtime already holds its task commit (Hadoop's Task.done "
        "waits for canCommit's approval before it reports done, and TaskTracker's reportDone then sets finishTime), "
        "so the replay runs with hadoop.task_commit off and a replayed attempt commits in no time beyond it, as "
        "Mumak replays an attempt's runtime whole; false: the commit waits for its heartbeat after the recorded time",
    )

    @field_validator("hadoop", mode="before")
    @classmethod
    def _over_trace_defaults(cls, value: Any) -> Any:
        """`--set hadoop.KEY=V` changes KEY of this scenario's Hadoop (lifecycle on), not of stock defaults."""
        return trace_hadoop(value) if isinstance(value, dict) else value

    @field_validator("trace")
    @classmethod
    def _trace_is_a_file(cls, value: str) -> str:
        if why := file_problem(value):
            raise ValueError(why)
        return value

    @field_validator("topology")
    @classmethod
    def _topology_is_a_cluster(cls, value: str) -> str:
        """A topology file is read here (it is small: at most limits.MAX_SLAVES hosts), so that a sweep refuses a
        bad one before any run, as `vcloud run` does."""
        file = value not in ("", "testbed")
        if file and (why := file_problem(value) or _topology_problem(value, *_stamp(value))):
            raise ValueError(why)
        return value

    @model_validator(mode="after")
    def _trace_fits_the_replay(self) -> TraceReplaySettings:
        """A trace given is read here once per file (its jobs, not kept), so that a sweep refuses a bad one before any
        run; and settings that only a Rumen replay reads are refused on a SWIM one."""
        fields = self.model_fields_set
        replay_keys = {"replay", "replay_io", "start_as_recorded", "shuffle_as_recorded", "commit_in_runtime"}
        if "trace" not in fields and not (replay_keys & fields):
            return self
        kind = _trace_kind(
            self.trace, *_stamp(self.trace), self.original_nodes, self.slaves, self.hadoop.block_mb, self.max_jobs
        )
        if kind.startswith("!"):
            raise ValueError(f"setting trace={self.trace!r}: {kind[1:]}")
        mode = self.replay if self.replay != "auto" else ("durations" if kind == "rumen" else "physics")
        if mode == "durations" and kind != "rumen":
            raise ValueError(f"replay='durations': {Path(self.trace).name} records no task times (SWIM)")
        if mode != "durations" and not self.replay_io:
            raise ValueError(f"replay_io=false: only a durations replay (a Rumen trace) reads it, not {mode}")
        for key in ("shuffle_as_recorded", "commit_in_runtime"):
            if mode != "durations" and key in fields and getattr(self, key):
                raise ValueError(f"{key}: only a durations replay (a Rumen trace) reads it, not {mode}")
        if self.start_as_recorded and kind != "rumen":
            raise ValueError(f"start_as_recorded=true: {Path(self.trace).name} records no task start times (SWIM)")
        return self

    @model_validator(mode="after")
    def _held_tasks_are_seen(self) -> TraceReplaySettings:
        """Held tasks are hidden from `Job.find_map` / `find_reduce`; a scheduler that searches tasks its own way
        would launch them early."""
        if self.start_as_recorded and self.scheduler not in HOLDING_SCHEDULERS:
            raise ValueError(
                f"start_as_recorded=true: scheduler={self.scheduler!r} picks tasks without Job.find_map, "
                f"so it cannot be held to recorded starts (one of {', '.join(HOLDING_SCHEDULERS)})"
            )
        return self


def _stamp(path: str) -> tuple[int, int]:
    """What tells a file's versions apart for the caches below: its modification time and size."""
    try:
        st = Path(path).stat()
    except OSError:
        return (0, 0)
    return st.st_mtime_ns, st.st_size


@functools.lru_cache(maxsize=16)
def _topology_problem(path: str, mtime_ns: int, size: int) -> str | None:
    try:
        read_topology(path, max_hosts=L.MAX_SLAVES)
    except TraceError as exc:
        return str(exc)
    return None


@functools.lru_cache(maxsize=16)
def _trace_kind(
    path: str, mtime_ns: int, size: int, original_nodes: int, slaves: int, block_mb: float, max_jobs: int | None
) -> str:
    """The trace's format, or '!' and why it cannot be replayed (what `max_jobs` reads of it is checked)."""
    if why := file_problem(path):
        return f"!{why}"
    try:
        read = load_trace(path, max_jobs, original_nodes=original_nodes, emulated_nodes=slaves, block_mb=block_mb)
    except TraceError as exc:
        return f"!{exc}"
    return read.kind if read.jobs else "!the trace has no jobs"


@dataclasses.dataclass
class Replay:
    """What a build decided: the jobs added (with their trace records), those left out, the mode, the cluster,
    the trace as read (its repaired anomalies), and what each job's own configuration set."""

    mode: str
    cluster: str
    added: list[tuple[TraceJob, Any]]
    not_run: list[TraceJob]
    read: TraceRead | None = None
    slots: dict[str, Any] = dataclasses.field(default_factory=dict)
    job_conf: dict[str, Any] = dataclasses.field(default_factory=dict)


class TraceReplay(HadoopScenario):
    name = "trace-replay"
    description = "jobs of a SWIM or Rumen trace (--set trace=PATH replay=durations|physics) on its own cluster"
    Settings = TraceReplaySettings

    def build(self, settings: TraceReplaySettings, seed: int, check: bool = False) -> HadoopModel:
        read = read_settings_trace(settings)
        kind, jobs = read.kind, read.jobs
        mode = settings.replay if settings.replay != "auto" else ("durations" if kind == "rumen" else "physics")
        if mode == "durations" and settings.commit_in_runtime and settings.hadoop.task_commit:
            settings = settings.model_copy(update={"hadoop": settings.hadoop.model_copy(update={"task_commit": False})})
        topology = find_topology(settings, kind)
        slots: dict[str, Any] = {}
        if topology is None:
            model, nodes, cluster = build_cluster(settings, seed, check), {}, "testbed"
            slots = {"from": "hadoop.map_slots / reduce_slots", "map+reduce per node": _slot_counts(model)}
        else:
            model, nodes, slots = build_trace_cluster(settings, seed, check, topology, jobs, kind)
            n = model.traced_node
            racks = len(set(model.node_racks.tolist()))
            shown = ", ".join(f"{k} on {v}" for k, v in slots["map+reduce per node"].items())
            cluster = (f"{len(nodes)} nodes in {racks} racks, map+reduce slots {shown} ({slots['from']}), "
                       f"disk {n.disk_mbps:.0f} MB/s, NIC {n.nic_mbps:.0f} MB/s")  # fmt: skip
        if mode == "physics" and kind == "rumen":
            warn_physics_inputs(jobs, settings)
        first = min(j.submit_s for j in jobs)
        replay = Replay(mode, cluster, [], [], read, slots)
        for job in jobs:
            submit_s = (job.submit_s - first) * settings.time_scale
            if submit_s > settings.max_duration_s:
                replay.not_run.append(job)
                continue
            replay.added.append((job, add_trace_job(model, job, settings, submit_s, mode, nodes, replay.job_conf)))
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
        model.used_settings = used_settings(model, settings)
        return model

    def summary(self, model: HadoopModel) -> dict[str, Any]:
        replay: Replay = model.replay
        table = comparison(model)
        read = replay.read
        return json_ready(
            {
                "trace": Path(model.settings.trace).name,
                "replay": replay.mode,
                "cluster": replay.cluster,
                "slots": replay.slots,
                "jobs_in_trace": read.total_jobs if read else None,
                "jobs_read": len(read.jobs) if read else None,
                "jobs_cut_by_max_jobs": read.cut if read else False,
                "anomalies_repaired": read.repairs.summary() if read else {},
                "job_conf": replay.job_conf,
                "jobs_not_run": [j.name for j in replay.not_run],
                "jobs_killed": sum(job.state == "killed" for _, job in replay.added),
                "jobs_ended_as_recorded": sum(
                    (t.outcome, job.state) in (("SUCCESS", "succeeded"), ("FAILED", "failed"), ("KILLED", "killed"))
                    for t, job in replay.added
                ),
                "start_as_recorded": model.settings.start_as_recorded,
                "tasks_held_to_recorded_starts": held_count(replay) if model.settings.start_as_recorded else 0,
                "failed_attempts": int(
                    np.count_nonzero((model.ended.view("state") == FAILED) & (model.ended.view("group") <= REDUCE))
                ),
                **error_figures(table),
                **attempt_figures(model),
                "per_job": table.astype(object).where(table.notna(), None).to_dict(orient="records"),
                **super().summary(model),
            }
        )

    def frame_makers(self, model: HadoopModel) -> dict[str, Callable[[], pd.DataFrame]]:
        return {**super().frame_makers(model), "comparison": partial(comparison, model)}


def read_settings_trace(s: TraceReplaySettings) -> TraceRead:
    """Read (and check) the first `max_jobs` jobs of the trace; one stderr line for the anomalies repaired and one
    when `max_jobs` leaves jobs of the file out."""
    path = Path(s.trace)
    if not path.is_file():
        raise ValueError(f"setting trace={s.trace!r}: no such file")
    try:
        read = load_trace(
            path, s.max_jobs, original_nodes=s.original_nodes, emulated_nodes=s.slaves, block_mb=s.hadoop.block_mb
        )
    except TraceError as exc:
        raise ValueError(str(exc)) from None
    if not read.jobs:
        raise ValueError(f"setting trace={s.trace!r}: the trace has no jobs")
    if read.repairs:
        print(f"vcloud: warning: {read.repairs.line(path.name)}", file=sys.stderr)
    if read.cut:
        of = f"{read.total_jobs:,}" if read.total_jobs is not None else f"more than {s.max_jobs:,}"
        print(
            f"vcloud: warning: max_jobs={s.max_jobs} reads and replays the first {s.max_jobs:,} of the trace's {of} "
            f"jobs (file order); the rest are neither checked nor replayed (--set max_jobs=N for more)",
            file=sys.stderr,
        )
    return read


def warn_physics_inputs(jobs: list[TraceJob], s: TraceReplaySettings) -> None:
    """Physics mode builds work from CPU counters and bytes: say so when most tasks have neither (their times
    then come from the profile's CPU per MB of little or no input, not from the trace)."""
    cpu = [c for j in jobs for c in (*(j.map_cpu_s or ()), *(j.reduce_cpu_s or ()))]
    inputs = [x for j in jobs for x in j.map_input_mb]
    problems = []
    if cpu and sum(c is None for c in cpu) > len(cpu) / 2:
        problems.append(f"{sum(c is None for c in cpu):,} of {len(cpu):,} tasks have no CPU counters "
                        f"(their CPU is profile={s.profile}'s per MB)")  # fmt: skip
    if inputs and sum(x <= 0 for x in inputs) > len(inputs) / 2:
        problems.append(f"{sum(x <= 0 for x in inputs):,} of {len(inputs):,} maps read 0 bytes (nothing to time)")
    if problems:
        print(f"vcloud: warning: replay=physics: {'; '.join(problems)}: their times are not the trace's; "
              "replay=durations replays the recorded ones", file=sys.stderr)  # fmt: skip


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
        return read_topology(path, max_hosts=L.MAX_SLAVES)
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
    """What a trace shows of its nodes (Rumen keeps no hardware or slot counts): the most disk and network MB/s that
    one host's running attempts moved together (each attempt's bytes spread evenly over its runtime), a floor for
    that node's hardware, and each host's most map and reduce attempts at once (`peaks`, by host name)."""

    disk_mbps: float = 0.0
    nic_mbps: float = 0.0
    peaks: dict[str, tuple[int, int]] = dataclasses.field(default_factory=dict)


def _mb(attempt: dict, key: str) -> float:
    """A byte counter in MB; unknown (-1), negative or beyond a Java long (trace_repair) counts nothing."""
    value = attempt.get(key)
    return value / 2**20 if isinstance(value, int | float) and 0 < value <= LONG_MAX else 0.0


def traced_node(trace: str, replication: int, serving: bool = True, max_jobs: int | None = None) -> TracedNode:
    """Read the first `max_jobs` jobs' attempts' hosts, times and byte counters again (they were checked before);
    attempts without usable times (repaired in the reader) are left out, as they say nothing of concurrency.

    With DataNode serving (`hadoop.datanode_serving`) an attempt's HDFS output costs the datastores of all
    `replication` nodes of its pipeline and 2 x (replication - 1) NIC transfers (a send and a receive per hop);
    spread evenly over the nodes, that is what each node carries per MB its own attempts write. Without, the
    writer's disk once and its NIC (replication - 1) times, as the emulator then charges it."""
    text, decoder, read = read_text(trace), json.JSONDecoder(), 0
    pos = skip_blank_and_comments(text)
    events: dict[str, list[tuple[float, int, int, float, float]]] = {}  # host -> (time, kind, +-1, disk, net)
    while pos < len(text) and (max_jobs is None or read < max_jobs):
        obj, pos = decoder.raw_decode(text, pos)
        pos, read = skip_blank_and_comments(text, pos), read + 1
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
    peaks, disk_peak, net_peak = {}, 0.0, 0.0
    for host, evs in events.items():
        running, most, disk, net = [0, 0], [0, 0], 0.0, 0.0
        for _, k, step, d, n in sorted(evs):  # ends sort before starts at the same instant
            running[k] += step
            disk, net = disk + d, net + n
            most[k] = max(most[k], running[k])
            disk_peak, net_peak = max(disk_peak, disk), max(net_peak, net)
        if host:
            peaks[host] = (most[0], most[1])
    return TracedNode(disk_peak, net_peak, peaks)


def _mode(values: list[int]) -> int:
    """The most common value (the larger on a tie), at least 1: a slot count no host showed less often."""
    return max(1, max(statistics.multimode(values))) if values else 1


def slots_per_host(hosts: list[str], peaks: dict[str, tuple[int, int]], how: str) -> dict[str, tuple[int, int]]:
    """Each host's (map, reduce) slots from what the trace shows it ran at once (`trace_slots`; our estimators, as
    Rumen records no slot counts). A host's peak is a floor for its slots, and a host that ran few attempts shows
    less than it had, so `host` raises a host's own peak to the hosts' mode (a cluster's TaskTrackers mostly share
    one mapred.tasktracker.*.tasks.maximum); a host never seen running gets the mode. `mode`: every host the mode;
    `max`: every host the busiest one's peak (what replays did before per-host slots). Each at least 1."""
    seen = [peaks[h] for h in hosts if h in peaks] or [(1, 1)]
    common = (_mode([p[0] for p in seen]), _mode([p[1] for p in seen]))
    if how == "max":
        top = (max(1, max(p[0] for p in seen)), max(1, max(p[1] for p in seen)))
        return dict.fromkeys(hosts, top)
    if how == "mode":
        return dict.fromkeys(hosts, common)
    own = {h: peaks.get(h, common) for h in hosts}
    return {h: (max(m, common[0]), max(r, common[1])) for h, (m, r) in own.items()}


def _slot_counts(model: HadoopModel) -> dict[str, int]:
    """How many nodes have each map+reduce slot pair, most common first (config.json, summary.json)."""
    counts = Counter(f"{t.map_slots}+{t.reduce_slots}" for t in model.trackers)
    return dict(counts.most_common())


def build_trace_cluster(
    s: TraceReplaySettings, seed: int, check: bool, topology: Topology, jobs: list[TraceJob], kind: str
) -> tuple[HadoopModel, dict[str, int], dict[str, Any]]:
    """One host and one VM per traced node, racks as traced; nodes seen only in the trace join their rack. Each
    node gets its own slots (`slots_per_host`) unless `hadoop.map_slots` / `reduce_slots` was asked, and a core
    per slot; a VM's memory holds its slots' largest heap (the cluster's, or a replayed job's own)."""
    racks: dict[str, list[str]] = {rack: list(hosts) for rack, hosts in topology.racks}
    known = {h for hosts in racks.values() for h in hosts}
    for name in _attempt_hosts(jobs):
        rack, host = _split_host(name)
        if host and host not in known:
            racks.setdefault(rack, []).append(host)
            known.add(host)
    if not known:
        raise ValueError(f"setting trace={s.trace!r}: no topology file and no recorded hosts to build a cluster")
    if len(known) > L.MAX_SLAVES:
        raise ValueError(f"setting trace={s.trace!r}: {len(known):,} hosts, more than {L.MAX_SLAVES:,} (one VM each)")
    hosts = [h for hs in racks.values() for h in hs]
    seen = (
        traced_node(s.trace, s.hadoop.replication, s.hadoop.datanode_serving, s.max_jobs) if kind == "rumen" else None
    )
    asked = {"map_slots", "reduce_slots"} if s.trace_slots == "hadoop" else s.hadoop.model_fields_set
    if seen is not None and s.trace_slots != "hadoop":
        per_host = slots_per_host(hosts, seen.peaks, s.trace_slots)
        source = f"trace_slots={s.trace_slots}"
    else:
        per_host = dict.fromkeys(hosts, (s.hadoop.map_slots, s.hadoop.reduce_slots))
        source = "hadoop.map_slots / reduce_slots"
    for i, key in enumerate(("map_slots", "reduce_slots")):
        if key in asked:  # the user's count overrides the trace's for every node
            per_host = {h: (getattr(s.hadoop, key), p[1]) if i == 0 else (p[0], getattr(s.hadoop, key))
                        for h, p in per_host.items()}  # fmt: skip
            source += f", hadoop.{key}={getattr(s.hadoop, key)}"
    disk_mbps = max(s.disk_mbps, seen.disk_mbps) if seen else s.disk_mbps
    nic_mbps = max(s.nic_mbps, seen.nic_mbps) if seen else s.nic_mbps
    common = Counter(per_host.values()).most_common(1)[0][0]
    hadoop = s.hadoop.model_copy(update={"map_slots": common[0], "reduce_slots": common[1]})
    heap = max([hadoop.child_heap_mb, *job_heaps(jobs, s)])
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
    for r, rack_hosts in enumerate(racks.values()):
        for host in rack_hosts:
            m, rd = per_host[host]
            vm_mem = max(s.vm_mem_mb, s.daemon_mem_mb + (m + rd) * (heap + hadoop.jvm_overhead_mb))
            h = model.add_host(host, cores=max(s.cores_per_host, m + rd), core_mhz=s.core_mhz,
                               mem_mb=max(s.host_mem_mb, vm_mem + 1024), disk_mbps=disk_mbps, nic_mbps=nic_mbps,
                               rack=r)  # fmt: skip
            vm = model.add_vm(host, h, vcpus=m + rd, mem_mb=vm_mem, os_mem_mb=s.daemon_mem_mb)
            tracker = model.add_slave(vm)
            tracker.map_slots, tracker.reduce_slots = m, rd
            nodes[host] = tracker.node
    model.jobtracker.count_slots()
    model.settings = s
    model.traced_node = TracedNode(disk_mbps, nic_mbps, seen.peaks if seen else {})
    return model, nodes, {"from": source, "map+reduce per node": _slot_counts(model)}


def job_heaps(jobs: list[TraceJob], s: TraceReplaySettings) -> list[float]:
    """The heaps the replayed jobs' own configurations ask for (none when `job_conf` is off)."""
    if not s.job_conf:
        return []
    return [h for j in jobs for h in (j.conf.map_heap_mb, j.conf.reduce_heap_mb) if h is not None]


def used_settings(model: HadoopModel, s: TraceReplaySettings) -> dict[str, Any]:
    """What the run used where the trace decided rather than the settings (config.json `used`): the cluster, the
    slots per node, the jobs read, the knobs the jobs' own configurations set, and whether attempts commit
    (`commit_in_runtime` turns hadoop.task_commit off in a durations replay)."""
    replay: Replay = model.replay
    read = replay.read
    return {
        "cluster": replay.cluster,
        "nodes": len(model.trackers),
        "slots": replay.slots,
        "disk_mbps": model.traced_node.disk_mbps if hasattr(model, "traced_node") else s.disk_mbps,
        "nic_mbps": model.traced_node.nic_mbps if hasattr(model, "traced_node") else s.nic_mbps,
        "replay": replay.mode,
        "task_commit": model.hadoop.task_commit,
        "jobs_read": len(read.jobs) if read else None,
        "jobs_in_trace": read.total_jobs if read else None,
        "job_conf": replay.job_conf,
    }


_OTHER_NODES = 10**9  # VM rows of no VM: the pipeline nodes of an uncontended estimate


def _map_cpu_for(task: Task, runtime_s: float, reduces: int, cfg: HadoopConfig, core: float,
                 rates: tuple[float, float], io_sort_mb: float) -> float:  # fmt: skip
    """The CPU that makes a node-local attempt of `task` take `runtime_s` alone on a node of the traced cluster:
    its plan (read, map, spills, merge; map-only: the output down the replication pipeline) with no CPU, then the
    rest. The pipeline's other nodes need only be told apart (phase_uncontended_s keys devices by VM row)."""
    hops = tuple(range(_OTHER_NODES, _OTHER_NODES + cfg.replication - 1)) if reduces == 0 else ()
    route = Route(pipeline_vms=hops, serving=cfg.datanode_serving)
    plan = map_plan(task, Locality.NODE, io_sort_mb, cfg, core, reduces, route)[0]
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
        cpu_s = max(typical - jvm_start_s(cfg), 0.0) if mode == "durations" else mean_in * base.map_cpu_mc_per_mb / core
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


def apply_job_conf(added: Any, job: TraceJob, s: TraceReplaySettings, cfg: HadoopConfig, tally: dict) -> float:
    """Give the emulated job the knobs of its recorded configuration the emulator has per job (trace_conf.py):
    reduce slow start, each kind's heap and io.sort.mb, and the kinds it forbids backups of; count, in `tally`
    (summary.json `job_conf`), how many jobs set each and which recorded knobs the emulator takes only for the
    whole cluster. A heap at or below the sort buffer it would hold is not taken (Hadoop's map would fail to
    allocate it). Returns the io.sort.mb the job's maps run with."""
    conf = job.conf
    tally.setdefault("honoured", {}), tally.setdefault("not_honoured", {})
    tally["ignored"] = not s.job_conf
    if not s.job_conf:
        return cfg.io_sort_mb
    io_sort = conf.io_sort_mb if conf.io_sort_mb is not None else cfg.io_sort_mb
    set_here = dict(conf.honoured)
    if conf.reduce_slowstart is not None:
        added.reduce_slowstart = conf.reduce_slowstart
    for kind, heap in ((TaskKind.MAP, conf.map_heap_mb), (TaskKind.REDUCE, conf.reduce_heap_mb)):
        if heap is not None and heap <= io_sort:
            set_here.pop(f"{kind.name.lower()}_heap_mb", None)
            heap = None
        if heap is not None or conf.io_sort_mb is not None:
            added.own_memory[kind] = (heap, conf.io_sort_mb)
    added.no_speculation = frozenset(
        kind for kind, flag in ((TaskKind.MAP, conf.map_speculative), (TaskKind.REDUCE, conf.reduce_speculative))
        if flag is False
    )  # fmt: skip
    for key in set_here:
        tally["honoured"][key] = tally["honoured"].get(key, 0) + 1
    for name in conf.not_honoured:
        tally["not_honoured"][name] = tally["not_honoured"].get(name, 0) + 1
    return io_sort


def add_trace_job(
    model: HadoopModel,
    job: TraceJob,
    s: TraceReplaySettings,
    submit_s: float,
    mode: str,
    nodes: dict[str, int],
    conf_tally: dict | None = None,
):
    """Add one trace job; durations mode sizes each task from its recorded runtime (module docstring), with the
    job's own configuration where it has one (`apply_job_conf`)."""
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
    io_sort = apply_job_conf(added, job, s, cfg, {} if conf_tally is None else conf_tally)
    if mode == "durations":
        for task, runtime in zip(added.maps, durations, strict=False):
            task.cpu_mc = _map_cpu_for(task, runtime, reduces, cfg, core, rates, io_sort)
    for i, retries in enumerate([*(job.map_retries or [()] * job.maps), *unfinished]):
        if retries:  # asking for a task makes the job's tasks (Job.maps): only when there is something to set
            added.maps[i].replay = list(retries)
    reduce_retries = [*(job.reduce_retries or [()] * job.reduces), *job.unfinished_reduces]
    after = list(job.reduce_after_shuffle_s or [None] * job.reduces)
    shuffle_s = list(job.reduce_shuffle_s or [None] * job.reduces) if s.shuffle_as_recorded else []
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
            if i < len(shuffle_s):  # (a task that never succeeded records no shuffle of a success to replay)
                task.min_shuffle_s = shuffle_s[i]
            if not s.replay_io:  # all CPU: the output still goes out, at no cost in the recorded time
                task.cpu_mc = max(own, 1e-3) * core
        elif i < job.reduces and rcpu[i] is not None:
            added.reduces[i].cpu_mc = rcpu[i] * core
    if mode == "durations":  # MapReduce 2 traces record no setup/cleanup tasks: their gaps time the AM's work
        added.init_s = job.init_s
        added.setup_s = job.setup_s if job.setup_s is not None or job.cleanup_s is not None else job.head_s
        added.cleanup_s = job.cleanup_s if job.setup_s is not None or job.cleanup_s is not None else job.tail_s
    if s.start_as_recorded:
        hold_to_recorded_starts(model, added, job)
    if job.outcome != "SUCCESS":
        added.hold_setup = job.setup_s is None and job.maps == 0 and not job.unfinished_maps
        if job.duration_s is not None:
            cleanup = job.cleanup_s if job.cleanup_s is not None else jvm_start_s(cfg) + cfg.setup_cleanup_s
            end = submit_s + max(job.duration_s - cleanup, 0.0)
            state = "killed" if job.outcome == "KILLED" else "failed"
            model.jobtracker.later(end, partial(model.jobtracker.kill_job, added, state))
    return added


def held_count(replay: Replay) -> int:
    """How many attempts `start_as_recorded` holds back (those with a recorded start after their job's submit)."""
    return sum(o is not None and o > 0 for t, _ in replay.added for st in (*t.map_start_s, *t.reduce_start_s)
               for o in st)  # fmt: skip


def hold_to_recorded_starts(model: HadoopModel, added: Any, job: TraceJob) -> None:
    """`start_as_recorded`: no map or reduce attempt the replay launches starts before its recorded start after the
    job's submit (`TraceJob.map_start_s`, `reduce_start_s`: the retries, then the success), as if the traced
    cluster's other load (absent from the trace) kept it waiting. While held, a task is hidden from its job's
    searches (`Job.find_map`, `find_reduce`, which the schedulers of HOLDING_SCHEDULERS take tasks through). Its
    slot is not held: until the release another task may take it, as other users' tasks took the traced
    cluster's (holding the slot idle would take capacity the traced cluster had, and an attempt that sat waiting
    would look slow to the speculation policy). The n-th launch of a task is held to its n-th recorded start
    (`Task.launches`: a speculative backup counts as one). A start unknown or before the submit holds nothing."""
    submit = added.submit_s
    holds: dict[Task, tuple[float | None, ...]] = {}
    releases: set[float] = set()
    for tasks, starts in ((added.maps, job.map_start_s), (added.reduces, job.reduce_start_s)):
        for task, st in zip(tasks, starts, strict=False):
            if any(o is not None and o > 0 for o in st):
                holds[task] = tuple(submit + o if o is not None else None for o in st)
                releases.update(t for t in holds[task] if t is not None)
    if not holds:
        return
    cache: list[Any] = [None, set()]  # (time, task changes) of the last look, the tasks then held

    def held() -> set[Task]:
        now, key = float(model.time), (float(model.time), model.task_changes)
        if cache[0] != key:
            done = [t for t, st in holds.items() if t.launches >= len(st)]
            for task in done:
                del holds[task]
            cache[:] = [key, {t for t, st in holds.items() if st[t.launches] is not None and st[t.launches] > now}]
        return cache[1]

    find_map, find_reduce = added.find_map, added.find_reduce

    def held_find_map(node: int, rack: int, max_level: Locality, exclude: set[Task]):
        hold = held()
        return find_map(node, rack, max_level, exclude | hold if hold else exclude)

    def held_find_reduce(exclude: set[Task]):
        hold = held()
        return find_reduce(exclude | hold if hold else exclude)

    added.find_map, added.find_reduce = held_find_map, held_find_reduce
    for at in sorted(releases):
        model.jobtracker.later(at, model.jobtracker.wake_idle)
