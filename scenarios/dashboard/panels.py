"""What each dashboard panel shows at one moment, as frames and arrays: a `Snapshot`.

Two sources give the same `Snapshot`: a live model (`live_snapshot`, read from the model's tables: `model.vms`,
its trace recorder, the TaskTrackers' slots and running sets, the jobs' counters) and a finished run directory
at a time t (`replay_snapshot`, from its Parquet tables). Drawing reads only the snapshot, so a redraw costs
O(VMs x trace samples + nodes + jobs): finished attempts are read once each, as they appear in the model's ended
attempts' columns (`TaskLedger`), never walked per step.

Both count as the tasks table does: an attempt has ended when it ended on its node (the table's `end_s`), in the
state its row records, and the node, job and runtime panels count maps and reduces only (a job's setup and cleanup
attempts hold a slot, but are neither: their kind is "setup" or "cleanup"). Live, an attempt that has ended on its
node stays in its tracker's slot until the tracker's next heartbeat tells the JobTracker
(`hadoop.outofband_heartbeat=false`), and only then is it an ended attempt's row and counted in its job: such
attempts are read from the slots each step (`SlotAttempts`), with the state that report will record.

Memory columns that the cloud may grow later (page cache, dirty pages, balloon) are shown when the VM table or the
trace has them (`MEMORY_COLUMNS` lists the names looked for), and left out otherwise.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from hadoop_layer.ended import MAP, REDUCE
from hadoop_layer.jobtracker import JobTracker
from hadoop_layer.model import map_skewness
from hadoop_layer.tasks import TaskKind
from scenarios.inspect_run import accounted_s
from vcloud.work import ItemState

if TYPE_CHECKING:
    from hadoop_layer.ended import EndedAttempts
    from hadoop_layer.tasks import Job, TaskAttempt
    from hadoop_layer.tracker import TaskTracker
    from vcloud import CloudModel

# heat map metric -> the trace's seconds columns summed into it (shares of the accounted vCPU time)
HEAT_METRICS: dict[str, tuple[str, ...]] = {
    "steal": ("steal_s",),
    "iowait": ("iowait_s",),
    "usr+sys": ("usr_s", "sys_s"),
    "idle": ("idle_s",),
}
CPU_COLUMNS = {"demand": "cpu_demand_mhz", "entitlement": "cpu_entitlement_mhz", "used": "cpu_used_mhz"}
# label -> column names looked for, first found wins (VM table live, vm_trace in a run directory)
MEMORY_COLUMNS: dict[str, tuple[str, ...]] = {
    "granted": ("mem_granted_mb",),
    "resident": ("mem_used_mb", "mem_resident_mb"),
    "active": ("mem_active_mb",),
    "page cache": ("cache_mb", "page_cache_mb", "mem_cache_mb"),
    "dirty": ("dirty_mb", "mem_dirty_mb"),
    "balloon": ("balloon_mb", "mem_balloon_mb", "ballooned_mb"),
    "swap": ("swap_mb",),
}
NODE_COLUMNS = ["node", "map_slots", "reduce_slots", "heap_mb", "running_maps", "running_reduces", "maps_done",
                "reduces_done"]  # fmt: skip
JOB_COLUMNS = ["job", "name", "state", "maps_done", "maps_running", "maps", "reduces_done", "reduces_running",
               "reduces", "elapsed_s", "submit_s", "start_s", "end_s"]  # fmt: skip


@dataclass
class Snapshot:
    """Everything the panels show at `time_s`. `nodes` and `jobs` are None for a model without Hadoop."""

    time_s: float
    trace: pd.DataFrame  # vm_trace rows sampled at or before time_s
    vms: pd.DataFrame  # one row per VM: CPU_COLUMNS' keys, then the MEMORY_COLUMNS' labels found
    nodes: pd.DataFrame | None = None  # NODE_COLUMNS
    jobs: pd.DataFrame | None = None  # JOB_COLUMNS
    map_runtimes: np.ndarray = field(default_factory=lambda: np.zeros(0))  # successful maps finished so far
    kills: int = 0
    speculative: int = 0
    makespan_s: float | None = None  # first submission to the last job's end, or to now while jobs run
    finished: bool = False
    error: str | None = None
    tasks: pd.DataFrame | None = None  # attempts started by time_s (tasks table; end_s NaN while running)
    hosts: pd.Series | None = None  # VM name -> host name
    pools: dict[str, str] = field(default_factory=dict)  # job -> pool or queue (Fair, Capacity), when the jobs say
    pool_cpu_mhz: float | None = None  # the resource pool's CPU capacity, when known
    interval_s: float = 10.0  # the trace's sampling interval
    scheduler: str | None = None  # the task scheduler's name (the share panel is for those with pools/queues)

    @property
    def skewness(self) -> float | None:
        """FlexSlot 2.2's skewness of the finished maps' runtimes (None under 3 maps)."""
        return map_skewness(self.map_runtimes)


# ---- heat map --------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class HeatGrid:
    vms: list[str]
    times: np.ndarray  # sample times (each sample covers the trace interval before it)
    shares: dict[str, np.ndarray]  # metric -> (VMs, samples) share of accounted vCPU time, NaN if none accounted


def heat_grid(trace: pd.DataFrame) -> HeatGrid:
    """Per-VM shares of steal, iowait, usr+sys and idle in every trace sample (`vcloud trace --plot heatmap`)."""
    vm = trace["vm"] if isinstance(trace["vm"].dtype, pd.CategoricalDtype) else trace["vm"].astype("category")
    codes = vm.cat.codes.to_numpy()
    used = list(dict.fromkeys(codes.tolist()))  # the trace's VM order
    order = [str(vm.cat.categories[c]) for c in used]
    rank = np.zeros(len(vm.cat.categories), dtype=np.int64)
    rank[used] = np.arange(len(used))
    rows = rank[codes]
    times, cols = np.unique(trace["time_s"].to_numpy(np.float64), return_inverse=True)
    den = np.zeros((len(order), len(times)))
    np.add.at(den, (rows, cols), accounted_s(trace).to_numpy(np.float64) if len(trace) else 0.0)
    shares = {}
    for metric, parts in HEAT_METRICS.items():
        num = np.zeros_like(den)
        np.add.at(num, (rows, cols), sum(trace[p].to_numpy(np.float64) for p in parts) if len(trace) else 0.0)
        with np.errstate(invalid="ignore", divide="ignore"):
            shares[metric] = np.where(den > 0, num / np.where(den > 0, den, 1.0), np.nan)
    return HeatGrid(order, times, shares)


# ---- live model ------------------------------------------------------------------------------------------
class TaskLedger:
    """Counts of the maps' and reduces' ended attempts, read once each from the model's ended attempts
    (hadoop_layer/ended.py): those the JobTracker has heard of (`SlotAttempts` has the others).

    A redraw reads only what finished since the last one, so its cost does not grow with the tasks done."""

    def __init__(self) -> None:
        self.seen = 0  # ended attempts read
        self.ended_rows: pd.DataFrame | None = None  # the tasks table's rows of the attempts ended so far
        self.maps_done: dict[int, int] = {}
        self.reduces_done: dict[int, int] = {}
        self.runtimes: list[float] = []
        self.kills = 0
        self.speculative_finished = 0

    def update(self, ended: EndedAttempts) -> None:
        for a in ended.since(self.seen):
            group = int(ended.group[a.at])
            if group not in (MAP, REDUCE):  # a job's setup or cleanup attempt (run in a map or a reduce slot)
                continue
            node, state = int(ended.node[a.at]), a.state
            self.kills += state == ItemState.KILLED
            self.speculative_finished += bool(a.speculative)
            if state == ItemState.DONE:
                if group == MAP:
                    self.maps_done[node] = self.maps_done.get(node, 0) + 1
                    self.runtimes.append(a.end_s - a.start_s)
                else:
                    self.reduces_done[node] = self.reduces_done.get(node, 0) + 1
        self.seen = ended.n

    def tasks(self, sim: Any) -> pd.DataFrame:
        """The tasks table of `sim` now (`HadoopModel.tasks_frame`'s rows, ended attempts first, then the running
        ones): an ended attempt's row is made once, when it first shows, and kept; only the running attempts' rows
        (at most one a slot) are made each step. `tasks_frame` makes every row again: 18 ms at the 15th step of
        full-scale flexslot and growing with the attempts, a third of the model's step. Call after `update`."""
        places = [(t.name, t.vm.host.name) for t in sim.trackers]
        made = 0 if self.ended_rows is None else len(self.ended_rows)
        parts = [] if self.ended_rows is None else [self.ended_rows]
        if self.ended_rows is None or made < self.seen:  # the rows of attempts ended since
            parts.append(sim._tasks_part(np.arange(made, self.seen), [], places))
        running = sim.running_attempts()
        if running:
            parts.append(sim._tasks_part(self.seen + np.arange(len(running)), running, places))
        table = pd.concat(parts, ignore_index=True) if len(parts) > 1 else parts[0]  # one join a step
        self.ended_rows = table.iloc[: self.seen]
        return table


class SlotAttempts:
    """The maps' and reduces' attempts in the trackers' slots now (at most one a slot; setup and cleanup attempts are
    left out), split as the tasks table has them: `running` (no end yet) and `ended`, those that have ended on their
    node, each with the state the JobTracker's report will record (`JobTracker.reported_state`). The JobTracker
    hears of an end at the tracker's next heartbeat (`hadoop.outofband_heartbeat=false`): until then the attempt
    holds its slot and is no ended attempts' row, so `TaskLedger` has not counted it, nor its job its task."""

    def __init__(self, trackers: list[TaskTracker]) -> None:
        self.running: list[TaskAttempt] = []
        self.ended: list[tuple[TaskAttempt, ItemState]] = []
        for t in trackers:
            for kind in (TaskKind.MAP, TaskKind.REDUCE):
                for a in t.running[kind]:
                    if a.task.role:
                        continue
                    if a.end_s is None:
                        self.running.append(a)
                    else:
                        self.ended.append((a, JobTracker.reported_state(a)))

    def done(self) -> list[TaskAttempt]:
        """The ended ones that succeeded."""
        return [a for a, state in self.ended if state == ItemState.DONE]

    def kills(self) -> int:
        return sum(state == ItemState.KILLED for _, state in self.ended)


def vm_frame(sim: CloudModel) -> pd.DataFrame:
    """The VM table now: CPU demand, entitlement and use (MHz, last tick), memory (MB) as far as the table has it."""
    vms = sim.vms
    out = {label: vms.view(col).copy() for label, col in CPU_COLUMNS.items()}
    for label, names in MEMORY_COLUMNS.items():
        col = next((n for n in names if n in type(vms).SCHEMA), None)
        if col is not None:
            out[label] = vms.view(col).copy()
    return pd.DataFrame(out, index=pd.Index([v.name for v in sim.vm_agents], name="vm"))


def node_frame(trackers: list[TaskTracker], ledger: TaskLedger, slots: SlotAttempts) -> pd.DataFrame:
    """Per TaskTracker: its slots now (FlexSlot moves and resizes them), the maps and reduces running in them, and
    those that finished there (heard of by the JobTracker or not)."""
    running: dict[tuple[int, TaskKind], int] = {}
    for a in slots.running:
        key = (a.tracker.node, a.task.kind)
        running[key] = running.get(key, 0) + 1
    done = {TaskKind.MAP: dict(ledger.maps_done), TaskKind.REDUCE: dict(ledger.reduces_done)}
    for a in slots.done():
        per_node = done[a.task.kind]
        per_node[a.tracker.node] = per_node.get(a.tracker.node, 0) + 1
    rows = [
        (t.name, t.map_slots, t.reduce_slots, t.heap_mb, running.get((t.node, TaskKind.MAP), 0),
         running.get((t.node, TaskKind.REDUCE), 0), done[TaskKind.MAP].get(t.node, 0),
         done[TaskKind.REDUCE].get(t.node, 0))
        for t in trackers
    ]  # fmt: skip
    return pd.DataFrame(rows, columns=NODE_COLUMNS)


def job_frame(jobs: list[Job], now: float, slots: SlotAttempts) -> pd.DataFrame:
    """Per job: its tasks done (the job's own counters, and those whose success the JobTracker has yet to hear of)
    and its attempts running, of each kind; its state and the seconds since its submission."""
    running: dict[tuple[Job, TaskKind], int] = {}
    for a in slots.running:
        key = (a.task.job, a.task.kind)
        running[key] = running.get(key, 0) + 1
    unheard: dict[tuple[Job, TaskKind], set] = {}
    for a in slots.done():  # (a task whose success was heard of already would have it killed: not done)
        unheard.setdefault((a.task.job, a.task.kind), set()).add(a.task)
    rows = []
    for j in jobs:
        end = j.end_s if j.end_s is not None else now
        elapsed = max(end - j.submit_s, 0.0) if j.state != "waiting" else 0.0
        maps, reduces = (j, TaskKind.MAP), (j, TaskKind.REDUCE)
        rows.append((j.job_id, j.name, j.state, j.finished_maps + len(unheard.get(maps, ())), running.get(maps, 0),
                     len(j.maps), j.finished_reduces + len(unheard.get(reduces, ())), running.get(reduces, 0),
                     len(j.reduces), elapsed, j.submit_s, _or_nan(j.start_s), _or_nan(j.end_s)))  # fmt: skip
    return pd.DataFrame(rows, columns=JOB_COLUMNS)


def _or_nan(value: float | None) -> float:
    return np.nan if value is None else float(value)


def makespan_so_far(submits: np.ndarray, ends: np.ndarray, now: float) -> float | None:
    """First submission to the last end, or to `now` while a job runs; None before any job is submitted."""
    submitted = submits <= now
    if not submitted.any():
        return None
    done = ~np.isnan(ends) & (ends <= now)
    last = float(np.max(ends)) if done.all() else now
    return last - float(np.min(submits[submitted]))


def live_snapshot(
    sim: CloudModel | None, ledger: TaskLedger, error: str | None = None, settings: Any = None
) -> Snapshot:
    """The panels of a running model: `sim` is the scenario's model (None when it could not be built), `settings`
    the scenario's settings (the trace interval, the scheduler)."""
    if sim is None:
        empty = pd.DataFrame(columns=["time_s", "vm", *sum(HEAT_METRICS.values(), ())])
        return Snapshot(0.0, empty, pd.DataFrame(columns=list(CPU_COLUMNS)), finished=True, error=error)
    now = float(sim.time)
    snap = Snapshot(now, sim.vm_trace(), vm_frame(sim), finished=not sim.running, error=error)
    snap.hosts = pd.Series([v.host.name for v in sim.vm_agents], index=[v.name for v in sim.vm_agents], dtype=object)
    snap.pool_cpu_mhz = sim.pool_capacity()[0]
    snap.interval_s = float(getattr(settings, "trace_interval_s", 10.0) or 10.0)
    trackers = getattr(sim, "trackers", None)
    if trackers is None:  # the cloud alone (synthetic-cloud)
        return snap
    ledger.update(sim.ended)
    jobs = sim.jobtracker.jobs
    slots = SlotAttempts(trackers)
    snap.nodes = node_frame(trackers, ledger, slots)
    snap.jobs = job_frame(jobs, now, slots)
    unheard = [a.end_s - a.start_s for a in slots.done() if a.task.kind == TaskKind.MAP]
    snap.map_runtimes = np.asarray([*ledger.runtimes, *unheard], dtype=np.float64)
    snap.kills = ledger.kills + slots.kills()
    in_slots = [*slots.running, *(a for a, _ in slots.ended)]
    snap.speculative = ledger.speculative_finished + sum(bool(a.speculative) for a in in_slots)
    submits = np.array([j.submit_s for j in jobs], dtype=np.float64)
    ends = np.array([np.nan if j.end_s is None else j.end_s for j in jobs], dtype=np.float64)
    snap.makespan_s = makespan_so_far(submits, ends, now)
    snap.tasks = ledger.tasks(sim)
    snap.pools = {j.job_id: str(getattr(j, "pool", "default")) for j in jobs}
    snap.scheduler = getattr(settings, "scheduler", None)
    return snap


# ---- a finished run directory ----------------------------------------------------------------------------
@dataclass
class RunFrames:
    """A run directory's tables, read once: the replay cuts them at any time t."""

    trace: pd.DataFrame
    tasks: pd.DataFrame | None
    jobs: pd.DataFrame | None
    config: dict[str, Any]

    @property
    def end_s(self) -> float:
        """The last moment the run recorded (trace sample, attempt end)."""
        ends = [float(self.trace["time_s"].max()) if len(self.trace) else 0.0]
        if self.tasks is not None and len(self.tasks):
            ends.append(float(np.nanmax(self.tasks[["start_s", "end_s"]].to_numpy(np.float64))))
        return max(ends)

    summary: dict[str, Any] = field(default_factory=dict)

    def slots(self) -> tuple[int, int]:
        """Map and reduce slots per node as the run used them: a scenario that sizes its own nodes says so in its
        summary (trace-replay: the slots the trace ran at once), else the settings' (a run directory does not
        record FlexSlot's moves)."""
        used = self.summary.get("slots")
        if isinstance(used, dict) and {"map", "reduce"} <= set(used):
            return int(used["map"]), int(used["reduce"])
        per_node = used.get("map+reduce per node") if isinstance(used, dict) else None
        if per_node:  # trace-replay: "M+R" -> nodes, most common first
            m, r = next(iter(per_node)).split("+")
            return int(m), int(r)
        hadoop = self.config.get("settings", {}).get("hadoop", {})
        return int(hadoop.get("map_slots", 0)), int(hadoop.get("reduce_slots", 0))

    @property
    def settings(self) -> dict[str, Any]:
        return self.config.get("settings", {})


def read_run(path) -> RunFrames:
    """Load a run directory written by `vcloud run` (tasks and jobs are absent for cloud-only scenarios)."""
    from scenarios.inspect_run import Run

    run = Run(path)
    present = {n: (run.path / f"{n}.parquet").is_file() for n in ("tasks", "jobs")}
    config = run.config if (run.path / "config.json").is_file() else {}
    summary = run.summary if (run.path / "summary.json").is_file() else {}
    return RunFrames(
        run.table("vm_trace", "the dashboard"),
        run.table("tasks") if present["tasks"] else None,
        run.table("jobs") if present["jobs"] else None,
        config,
        summary,
    )


def replay_snapshot(frames: RunFrames, t: float) -> Snapshot:
    """The panels of a finished run at time `t` (seconds), from its Parquet tables."""
    trace = frames.trace[frames.trace["time_s"].to_numpy() <= t + 1e-9]
    first = frames.trace[frames.trace["time_s"].to_numpy() == frames.trace["time_s"].min()]
    vms = _vms_at(trace) if len(trace) else _vms_at(first).clip(upper=0.0)  # before the first sample: the VMs, at 0
    snap = Snapshot(float(t), trace, vms, finished=t >= frames.end_s)
    hosts = frames.trace.drop_duplicates("vm")
    snap.hosts = pd.Series(hosts["host"].astype(str).to_numpy(), index=hosts["vm"].astype(str).to_numpy())
    snap.pool_cpu_mhz = None  # the settings' pool is not always the one used (trace-replay sizes its own)
    interval = frames.settings.get("trace_interval_s")
    snap.interval_s = float(interval) if isinstance(interval, int | float) and interval > 0 else 10.0
    snap.scheduler = frames.settings.get("scheduler")
    if frames.tasks is None or frames.jobs is None:
        return snap
    tasks = frames.tasks
    start = tasks["start_s"].to_numpy(np.float64)
    end = tasks["end_s"].to_numpy(np.float64)
    started = ~np.isnan(start) & (start <= t)
    ended = ~np.isnan(end) & (end <= t)
    running = started & ~ended
    done = ended & (tasks["state"].to_numpy() == "done")
    kind = tasks["kind"].to_numpy()
    is_map, is_task = kind == "m", (kind == "m") | (kind == "r")  # not a job's setup or cleanup attempt
    running, done = running & is_task, done & is_task
    snap.nodes = _nodes_at(frames, tasks, running, done, is_map)
    snap.jobs = _jobs_at(frames.jobs, tasks, running, done, is_map, t)
    snap.map_runtimes = (end - start)[done & is_map]
    snap.kills = int((ended & is_task & (tasks["state"].to_numpy() == "killed")).sum())
    snap.speculative = int((started & tasks["speculative"].to_numpy(bool)).sum())
    jobs = frames.jobs
    snap.makespan_s = makespan_so_far(jobs["submit_s"].to_numpy(np.float64), jobs["end_s"].to_numpy(np.float64), t)
    cut = tasks[started].copy()
    late = cut["end_s"].to_numpy(np.float64) > t
    cut.loc[late, "end_s"] = np.nan
    cut.loc[late, "state"] = "running"
    snap.tasks = cut
    snap.pools = {str(r.job): str(r.name) for r in jobs.itertuples(index=False)}  # no pools recorded: per job name
    return snap


def _vms_at(trace: pd.DataFrame) -> pd.DataFrame:
    """Each VM's last sample in `trace`: its interval's mean demand and use, its entitlement and memory then."""
    if not len(trace):
        return pd.DataFrame(columns=list(CPU_COLUMNS))
    last = trace[trace["time_s"].to_numpy() == trace["time_s"].max()]
    out = {label: last[col].to_numpy(np.float64) for label, col in CPU_COLUMNS.items()}
    for label, names in MEMORY_COLUMNS.items():
        col = next((n for n in names if n in last.columns), None)
        if col is not None:
            out[label] = last[col].to_numpy(np.float64)
    return pd.DataFrame(out, index=pd.Index(last["vm"].astype(str).to_list(), name="vm"))


def _nodes_at(frames: RunFrames, tasks: pd.DataFrame, running, done, is_map) -> pd.DataFrame:
    """Per node at t, from the attempts' start and end times; slots are the configured ones."""
    vm = tasks["vm"].astype(str).to_numpy()
    order = sorted(set(vm))
    map_slots, reduce_slots = frames.slots()
    heap = float(frames.config.get("settings", {}).get("hadoop", {}).get("child_heap_mb", np.nan))

    def per_node(mask) -> list[int]:
        counts = pd.Series(vm[mask]).value_counts()
        return [int(counts.get(n, 0)) for n in order]

    counts = {"running_maps": per_node(running & is_map), "running_reduces": per_node(running & ~is_map),
              "maps_done": per_node(done & is_map), "reduces_done": per_node(done & ~is_map)}  # fmt: skip
    fixed = {"node": order, "map_slots": map_slots, "reduce_slots": reduce_slots, "heap_mb": heap}
    return pd.DataFrame({**fixed, **counts}, columns=NODE_COLUMNS)


def _jobs_at(jobs: pd.DataFrame, tasks: pd.DataFrame, running, done, is_map, t: float) -> pd.DataFrame:
    """Per job at t: distinct tasks done and attempts running of each kind, its state then, time since submit."""
    job = tasks["job"].astype(str).to_numpy()
    task = tasks["task"].astype(str).to_numpy()

    def count(mask, distinct: bool) -> pd.Series:
        frame = pd.DataFrame({"job": job[mask], "task": task[mask]})
        return (frame.drop_duplicates() if distinct else frame).groupby("job").size()

    counts = {
        "maps_done": count(done & is_map, True),
        "maps_running": count(running & is_map, False),
        "reduces_done": count(done & ~is_map, True),
        "reduces_running": count(running & ~is_map, False),
    }
    rows = []
    for r in jobs.itertuples(index=False):
        end = r.end_s if pd.notna(r.end_s) and r.end_s <= t else None
        state = "waiting" if r.submit_s > t else (r.state if end is not None else "running")
        elapsed = 0.0 if state == "waiting" else (end if end is not None else t) - r.submit_s
        c = {k: int(v.get(r.job, 0)) for k, v in counts.items()}
        start = r.start_s if pd.notna(r.start_s) and r.start_s <= t else np.nan
        rows.append((r.job, r.name, state, c["maps_done"], c["maps_running"], int(r.maps), c["reduces_done"],
                     c["reduces_running"], int(r.reduces), float(elapsed), float(r.submit_s), float(start),
                     np.nan if end is None else float(end)))  # fmt: skip
    return pd.DataFrame(rows, columns=JOB_COLUMNS)


def summary_line(snap: Snapshot) -> str:
    """One line: simulated time, makespan so far, kills, speculative attempts, skewness, jobs done."""
    parts = [f"t = {snap.time_s:,.0f} s"]
    if snap.jobs is not None:
        done = int(snap.jobs["state"].isin(["succeeded", "failed"]).sum())
        span = "-" if snap.makespan_s is None else f"{snap.makespan_s:,.0f} s"
        skew = snap.skewness
        parts += [f"makespan so far {span}", f"kills {snap.kills}", f"speculative attempts {snap.speculative}",
                  f"map skewness {'-' if skew is None else f'{skew:.2f}'}", f"jobs done {done}/{len(snap.jobs)}",
                  f"maps finished {len(snap.map_runtimes)}"]  # fmt: skip
    if snap.finished:
        parts.append("finished")
    if snap.error:
        parts.append(f"error: {snap.error}")
    return " · ".join(parts)
