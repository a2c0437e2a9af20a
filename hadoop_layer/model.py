"""`HadoopModel`: Hadoop MRv1 (JobTracker, TaskTrackers, HDFS) running on the VMs of a `CloudModel`.

The cloud layer moves every attempt's CPU and I/O; this layer decides what runs where and when, through
the policies it is handed (scheduler, speculation, slot manager). It knows no particular policy.

At one instant t = k * dt (the rows of `vcloud.model.INSTANT`; tests/test_tick_order.py): `before_tick` empties
the tick's log of first launches and lets free shuffle copiers take nodes; `after_step` has the shuffle servers move
what they served; `after_tick` offers freed map slots to the slot manager and wakes idle trackers when a backup may
have become possible. Job submissions (`add_job`), the heartbeat chain and the slot managers' periods are DEFAULT
events, after the tick: a job submitted at t is first in the tick at t + dt. (A JobTracker report due at a
heartbeat, `JobTracker._report`, is a HIGH event at the beat's time, before it.)
"""

from __future__ import annotations

import collections
import itertools
import math
from collections.abc import Iterator
from typing import Any

import numpy as np
import pandas as pd

from hadoop_layer.config import HadoopConfig, heartbeat_interval_s
from hadoop_layer.copiers import CopierShuffle
from hadoop_layer.datanode import DataNodes
from hadoop_layer.ended import DONE, KILLED, MAP, REDUCE, STATES, EndedAttempt, EndedAttempts
from hadoop_layer.hdfs import Locality, locality_in, place_blocks
from hadoop_layer.heartbeats import HeartbeatClock
from hadoop_layer.interfaces import NoSlotManager, NoSpeculation, SlotManager, SpeculationPolicy, TaskScheduler
from hadoop_layer.jobtracker import JobTracker
from hadoop_layer.localfiles import NodeFiles
from hadoop_layer.profiles import JobProfile, MapColumns, MapSpec
from hadoop_layer.shuffle import DirectShuffle, ServeItem, ShuffleMode, ShuffleServer
from hadoop_layer.speculation_outlook import RunningEntries
from hadoop_layer.tasks import Job, JobState, MapSplits, Task, TaskAttempt, TaskKind
from hadoop_layer.tracker import TaskTracker
from vcloud import VM, CloudModel
from vcloud.agents import CHARGES
from vcloud.model import InvariantError
from vcloud.tables import grown
from vcloud.work import ItemState


class HadoopModel(CloudModel):
    def __init__(
        self,
        *,
        scheduler: TaskScheduler,
        hadoop: HadoopConfig | None = None,
        speculation: SpeculationPolicy | None = None,
        slot_manager: SlotManager | None = None,
        **cloud_kwargs: Any,
    ) -> None:
        super().__init__(**cloud_kwargs)
        self.hadoop = hadoop or HadoopConfig()
        self.ended = EndedAttempts(self)  # the attempts that ended, as columns (hadoop_layer/ended.py)
        # the running attempts as arrays, for a speculation policy's look-ahead (hadoop_layer/speculation_outlook.py)
        self.running_entries = RunningEntries(self)
        self.jobtracker = JobTracker(self, scheduler, speculation or NoSpeculation(), slot_manager or NoSlotManager())
        self.trackers: list[TaskTracker] = []
        self.heartbeat_clock = HeartbeatClock(self)
        self.shuffle = self._shuffle_mode()
        self.node_racks = np.zeros(0, dtype=np.int64)
        self._rack_list: list[int] = []  # node_racks as Python ints (locality_of)
        # per task, by Task.gid (0 unused): its job's number, kind (0 map, 1 reduce) and first launch time, so
        # that running attempts can be tested per tick as arrays (RunningEntries.arrays)
        # (grown by doubling: appending a job's tasks to exact-size arrays copied them all, per job; `tasks` of
        # their entries are numbered)
        self.task_job = np.zeros(1, dtype=np.int64)
        self.task_kind = np.zeros(1, dtype=np.int8)
        self.task_start = np.full(1, np.nan)
        self.tasks = 1
        self.task_changes = 0  # task state changes so far (Job.set_state): a key for caches of task states
        self.numbered_jobs: list[Job] = []  # by Job.number - 1: an ended attempt's job (EndedAttempts.task_of)

    # ---- building ---------------------------------------------------------------------------------
    def add_slave(self, vm: VM) -> TaskTracker:
        """Run a TaskTracker and a DataNode on `vm`; its rack is its host's rack."""
        rack = int(vm.host.rack)
        tracker = TaskTracker(self, vm, len(self.trackers), rack)
        self.trackers.append(tracker)
        self.node_racks = np.append(self.node_racks, rack)
        self._rack_list.append(rack)
        return tracker

    def add_job(
        self,
        name: str,
        profile: JobProfile,
        submit_s: float,
        maps: list[MapSpec] | MapColumns,
        reduces: int,
        files: np.ndarray | None = None,
        data_nodes: list[int] | None = None,
        **job_kwargs: Any,
    ) -> Job:
        """Create a job now (its blocks are placed on the DataNodes) and submit it at `submit_s` (its tasks are made
        then, or when first asked for: `Job.maps`).

        `files[i]`: the input file of map i. Each file was written from one DataNode (a copy job's map), which
        holds the first replica of all its blocks; None: the input came from outside, blocks spread at random.
        `data_nodes`: the only DataNodes that hold the input (e.g. 7 of 15 slaves); None: all of them.
        A map dict with `replicas` (node indices) keeps them: a trace's recorded split locations. `maps` may be
        `MapColumns`, the same specs as columns.
        """
        if not self.trackers:
            raise RuntimeError("add slaves before jobs: HDFS needs DataNodes")
        if submit_s < float(self.time):
            raise ValueError(f"job {name}: submit_s={submit_s} is in the past")
        for kind, count in (("map", len(maps)), ("reduce", reduces)):
            if count and not any(getattr(t, f"{kind}_slots") for t in self.trackers):
                raise ValueError(f"job {name} has {count} {kind}s but no TaskTracker has a {kind} slot "
                                 f"(hadoop.{kind}_slots=0): it could never finish")  # fmt: skip
        nodes = np.arange(len(self.trackers)) if data_nodes is None else np.asarray(data_nodes, dtype=np.int64)
        writers = None
        if files is not None:
            writers = self.rng.integers(len(nodes), size=int(np.max(files)) + 1)[files]
        local = place_blocks(len(maps), self.node_racks[nodes], self.hadoop.replication, self.rng, writers)
        splits = MapSplits.of(maps, nodes[local])
        self.jobtracker.expected_jobs += 1
        job = Job(self, self.jobtracker.expected_jobs, name, submit_s, splits, reduces, profile, **job_kwargs)
        self.numbered_jobs.append(job)
        first = job.first_gid = self.tasks
        n = len(splits) + reduces
        self.tasks += n
        if self.tasks > len(self.task_job):
            size = max(2 * len(self.task_job), self.tasks)
            self.task_job, self.task_kind = grown(self.task_job, (size,), 0), grown(self.task_kind, (size,), 0)
            self.task_start = grown(self.task_start, (size,), np.nan)
        self.task_job[first : self.tasks] = job.number
        self.task_kind[first : first + len(splits)], self.task_kind[first + len(splits) : self.tasks] = 0, 1
        self.schedule_event(job.submit_event, at=float(submit_s))
        return job

    def start(self) -> None:
        if self._started:
            return
        interval = heartbeat_interval_s(len(self.trackers), self.hadoop)
        self.heartbeat_clock.set_phase(interval, self.rng.uniform(0.0, interval, size=len(self.trackers)))
        self.jobtracker.count_slots()
        vm_rows = [t.vm.row for t in self.trackers]
        self.datanodes = DataNodes(self.node_racks, vm_rows, self.hadoop.replication, self.hadoop.datanode_serving)
        self.files = NodeFiles(self.cache, vm_rows)
        self.shuffle.start()
        super().start()
        self.jobtracker.schedule_periodic()

    def start_item(self, item, vm: VM) -> None:
        """Tag a task attempt's row with its task's gid (and note the task's first launch) for the task arrays."""
        super().start_item(item, vm)
        if isinstance(item, TaskAttempt):
            task = item.task
            gid = task.gid  # worked out when asked (Task.gid): once here
            self.items.tag[item.row] = gid
            if gid and math.isnan(self.task_start[gid]):
                self.running_entries.first_launched.append(task)
            self.task_start[gid] = task.start_s

    def stop_items(self, items: list, state: str, ends: list[float]) -> list[tuple[Any, int]]:
        """Take items off their VMs (`stop_item` is one of them): the shuffle server follows the items that moved."""
        moved = super().stop_items(items, state, ends)
        for owner, row in moved:
            self.shuffle.moved(owner, row)
        for item in items:
            if isinstance(item, ServeItem):
                self.shuffle.item_stopped(item)
            elif state == ItemState.DONE and isinstance(item, TaskAttempt) and not item.task.role:
                self.running_entries.ending[item] = None  # until its end is processed (JobTracker._release)
        return moved

    def before_tick(self) -> None:
        """A new tick: the first launches of earlier ticks concern no cache any more (RunningEntries.new_tick)."""
        self.running_entries.new_tick()
        self.shuffle.before_tick()

    def after_step(self) -> None:
        """The shuffle servers move what they read and sent in the tick (ShuffleServer.tick), before attempts end."""
        self.shuffle.tick()

    def after_tick(self, done: list) -> None:
        """A map slot freed: it may idle (SlotManager.idle_map_slot). A backup may have become possible as progress
        moved: let idle trackers look."""
        jt = self.jobtracker
        if jt.map_slot_freed and jt.slot_manager.wants_idle_slots:
            jt.idle_map_slots()
        if jt.running_jobs and jt.speculation.may_back_up(jt.view):
            jt.wake_idle()

    def _shuffle_mode(self) -> ShuffleMode:
        """How map outputs reach the reduces: `hadoop.shuffle_serving` and `hadoop.shuffle_copiers`."""
        if not self.hadoop.shuffle_serving:
            return DirectShuffle(self)
        return CopierShuffle(self) if self.hadoop.shuffle_copiers else ShuffleServer(self)

    @property
    def serving(self) -> ShuffleServer | None:
        """The TaskTrackers' map-output servers (`hadoop.shuffle_serving`); None when fetches cost only the reducer."""
        return self.shuffle if isinstance(self.shuffle, ShuffleServer) else None

    # ---- what the layer's parts ask of the model -----------------------------------------------------
    def locality_of(self, task: Task, node: int) -> Locality:
        return locality_in(task.replicas.tolist(), node, self._rack_list)

    # ---- results ----------------------------------------------------------------------------------
    def running_attempts(self) -> list[TaskAttempt]:
        """The attempts running now (setup and cleanup ones too), from the trackers' slots."""
        return [a for t in self.trackers for kind in (TaskKind.MAP, TaskKind.REDUCE) for a in t.running[kind]]

    def attempt_order(self) -> tuple[np.ndarray, list[TaskAttempt], int]:
        """Every attempt in the tables' order (jobs in submission order, each one's maps then reduces, by task and
        attempt number; then the setup and cleanup attempts likewise): (`order`, running attempts, maps and reduces'
        count). `order[i] < ended.n` is an ended attempt's row, else `running[order[i] - ended.n]`; the first
        `count` entries are the maps' and reduces' attempts (what `attempts()` lists)."""
        ended, running = self.ended, self.running_attempts()
        position = np.zeros(max((j.number for j in self.jobtracker.jobs), default=0) + 1, dtype=np.int64)
        position[[j.number for j in self.jobtracker.jobs]] = np.arange(len(self.jobtracker.jobs))
        keys = [ended.view(c) for c in ("job", "group", "index", "number")]
        if running:
            more = [ended.key_of(a) for a in running]
            keys = [np.concatenate([k, np.array(m, dtype=k.dtype)]) for k, m in zip(keys, zip(*more, strict=True),
                                                                                    strict=True)]  # fmt: skip
        job, group, index, number = keys
        lifecycle = group >= 2
        order = np.lexsort((number, index, group, position[job], lifecycle))
        return order, running, int(np.count_nonzero(~lifecycle))

    def attempts(self) -> list[TaskAttempt | EndedAttempt]:
        """The maps' and reduces' attempts in the tables' order: records of the ended ones, the running objects. For
        reports and tests: a long run's are many (476,734 in a SWIM day), the columns (`ended`) read faster."""
        order, running, count = self.attempt_order()
        n = self.ended.n
        return [self.ended.record(i) if i < n else running[i - n] for i in order[:count].tolist()]

    def tasks_frame(self) -> pd.DataFrame:
        """One row per attempt (DESIGN.md 7), in the tables' order (`attempt_order`)."""
        return next(self.tasks_parts())

    def tasks_parts(self, rows: int | None = None) -> Iterator[pd.DataFrame]:
        """The tasks table (`tasks_frame`) as consecutive frames of `rows` rows (all at once if None; one empty
        frame if no attempt ran): written a part at a time (`runner.write_table`), a SWIM day's table on 600 slaves
        (479,898 rows) and Parquet's buffers for it never exist whole beside the model."""
        order, running, _ = self.attempt_order()
        places = [(t.name, t.vm.host.name) for t in self.trackers]
        step = max(len(order) if rows is None else rows, 1)
        for start in range(0, max(len(order), 1), step):
            yield self._tasks_part(order[start : start + step], running, places)

    def _tasks_part(self, order: np.ndarray, running: list[TaskAttempt], places: list[tuple[str, str]]) -> pd.DataFrame:
        """The tasks table's rows of the attempts `order` lists (`attempt_order`), built `_ROWS_AT_ONCE` rows at a
        time, each column typed as it is made (`TASK_DTYPES`): a list of Python values per column for every attempt
        held 0.4 GB at the end of a SWIM day on 600 slaves (476,734 attempts), the run's peak. The ended attempts'
        values come from their columns (`ended`), the charges as arrays."""
        ended, n = self.ended, self.ended.n
        # the charges first, a column at a time, only those the table shows (no (rows, 7) block held by its
        # columns): what they need for a while (the rows' charge rows, usr and sys apart) is gone before the rest
        at = ended.charges[np.minimum(order, n - 1)] if n else np.zeros(len(order), dtype=np.int64)
        live, alive = self.charges_of(running), order >= n
        of = {}
        for c in ("usr_s", "sys_s", *_CHARGE_COLUMNS[1:]):
            j = CHARGES.index(c)
            of[c] = self.ended_charges.of(at, c) if n else np.zeros(len(order))
            of[c][alive] = live[order[alive] - n, j]
        del at, live, alive
        columns: dict[str, Any] = {"cputime_s": of.pop("usr_s") + of.pop("sys_s"), **of}
        del of
        names = [c for c in TASK_COLUMNS if c not in _CHARGE_COLUMNS]
        # numbers straight into their final arrays, strings as chunks of one Arrow array: joining numeric chunks
        # held every such column twice (30 MB of a SWIM day's 600-slave table, at the run's peak)
        numeric = {c: np.empty(len(order), dtype=TASK_DTYPES[c]) for c in names if TASK_DTYPES[c] != "str"}
        parts: dict[str, list] = {c: [] for c in names if c not in numeric}
        for start in range(0, len(order), _ROWS_AT_ONCE):
            batch = order[start : start + _ROWS_AT_ONCE].tolist()
            rows = _ended_rows(ended, places, [i for i in batch if i < n])
            values = [next(rows) if i < n else _task_row(running[i - n]) for i in batch]
            for c, column in zip(names, zip(*values, strict=True), strict=True):
                if c in numeric:
                    numeric[c][start : start + len(batch)] = pd.array(column, dtype=TASK_DTYPES[c])
                else:
                    parts[c].append(pd.array(column, dtype=TASK_DTYPES[c]))
            del values, rows
        columns.update({c: _joined(parts.pop(c), TASK_DTYPES[c]) for c in list(parts)})
        columns.update(numeric)
        del numeric
        return pd.DataFrame({c: columns[c] for c in TASK_COLUMNS}, copy=False)

    def jobs_frame(self) -> pd.DataFrame:
        rows = [
            {
                "job": j.job_id,
                "name": j.name,
                "submit_s": j.submit_s,
                "start_s": j.start_s,
                "end_s": j.end_s,
                "maps": len(j.maps),
                "reduces": len(j.reduces),
                "state": j.state,
            }
            for j in self.jobtracker.jobs
        ]
        return pd.DataFrame(rows, columns=JOB_COLUMNS)

    def hadoop_summary(self) -> dict[str, Any]:
        """The run's figures; the ended attempts' from their columns (`ended`), in the tables' order."""
        jobs, ended = self.jobtracker.jobs, self.ended
        order, running, count = self.attempt_order()
        rows = order[:count][order[:count] < ended.n]  # the maps' and reduces' ended attempts
        group, state = ended.group[rows], ended.state[rows]
        done_maps = rows[(group == MAP) & (state == DONE)]
        runtimes = ended.end_s[done_maps] - ended.start_s[done_maps]
        # a task's time runs from its first attempt's launch (Task.start_s): what a kill-and-restart policy wastes
        starts = np.empty(len(done_maps))
        for a in range(0, len(done_maps), _ROWS_AT_ONCE):  # not a list of every done map's start (nor their views)
            chunk = done_maps[a : a + _ROWS_AT_ONCE].tolist()
            starts[a : a + len(chunk)] = [ended.task_of(r).start_s for r in chunk]
        task_times = ended.end_s[done_maps] - starts
        done = np.bincount(ended.node[done_maps], minlength=len(self.trackers))
        per_node = {t.name: int(k) for t, k in zip(self.trackers, done, strict=True)}
        counts = np.array(list(per_node.values()))
        live = [a for a in running if not a.task.role]
        levels = np.concatenate([ended.locality[rows[group == MAP]], np.array([int(a.locality) for a in live if
                                 a.task.kind == TaskKind.MAP and a.locality is not None], dtype=np.int8)])  # fmt: skip
        levels = levels[levels >= 0]
        at_level = {lvl: int(np.count_nonzero(levels == int(lvl))) for lvl in Locality}
        ends = [j.end_s for j in jobs if j.end_s is not None]

        def charge(column: str) -> Iterator[float]:
            """The done maps' charges as Python floats, in order, a chunk at a time: summed as lists of them were
            (Python's `sum`, bit for bit), without four lists of every done map's (470,000 each in a SWIM day on
            600 slaves, about 15 MB a list)."""
            for a in range(0, len(done_maps), _ROWS_AT_ONCE):
                yield from ended.charge(column, done_maps[a : a + _ROWS_AT_ONCE]).tolist()

        return {
            "makespan_s": (max(ends) - min(j.submit_s for j in jobs)) if ends and len(ends) == len(jobs) else None,
            "jobs_succeeded": sum(j.state == JobState.SUCCEEDED for j in jobs),
            "jobs_failed": sum(j.state == JobState.FAILED for j in jobs),
            "job_completion_s": {j.job_id: (j.end_s - j.submit_s) if j.end_s is not None else None for j in jobs},
            "map_runtime_skewness": map_skewness(runtimes),
            "map_task_time_skewness": map_skewness(task_times),
            "map_runtime_mean_s": float(runtimes.mean()) if len(runtimes) else None,
            "map_runtime_max_s": float(runtimes.max()) if len(runtimes) else None,
            "maps_per_node": per_node,
            "maps_per_node_max_over_min": float(counts.max() / max(counts.min(), 1)) if len(counts) else None,
            "locality": {lvl.name.lower(): k / max(len(levels), 1) for lvl, k in at_level.items()},
            "killed_attempts": int(np.count_nonzero(state == KILLED)),
            "repartitioned_maps": sum(bool(t.children) for j in jobs for t in j.maps),
            "mitigator_maps": sum(t.parent is not None for j in jobs for t in j.maps),
            "speculative_attempts": int(np.count_nonzero(ended.speculative[rows])) + sum(a.speculative for a in live),
            "map_steal_s": float(sum(charge("steal_s"))),
            "map_iowait_s": float(sum(charge("iowait_s"))),
            "map_cputime_s": float(sum(u + s for u, s in zip(charge("usr_s"), charge("sys_s"), strict=True))),
            "heartbeats": int(self.heartbeat_clock.count.sum()),
            # map outputs served by the TaskTrackers (read from disk; of which fetched by a reduce on the same node)
            **self.shuffle.figures(),
        }

    # ---- checks -----------------------------------------------------------------------------------
    def check_invariants(self, tol: float = 1e-6) -> None:
        super().check_invariants(tol)
        for t in self.trackers:
            if t.map_slots < 0 or t.reduce_slots < 0:
                raise InvariantError(f"{t.name}: negative slots ({t.map_slots}, {t.reduce_slots})")
        ledger = self.jobtracker.ledger
        rows = [ledger.contribution(j) for j in self.jobtracker.running_jobs] or [ledger.NOTHING]
        scanned = [sum(v) for v in zip(*rows, strict=True)]
        kept = [getattr(ledger, f) for f in ledger.FIELDS]
        if scanned != kept:
            raise InvariantError(f"running-jobs ledger {kept} != a scan of the running jobs {scanned}")
        for job in self.jobtracker.jobs:  # Job.running_attempts, kept by Job.set_state and AttemptRegistry
            recount = {k: sum(len(t.active) for t in job.running_tasks[k]) for k in job.running_attempts}
            if recount != job.running_attempts:
                raise InvariantError(f"{job.job_id}: running attempts {job.running_attempts} != a recount {recount}")
        if self.serving is not None and self.serving.cols:
            self.serving.check_queues()

    def check_hadoop_end(self, tol: float = 1e-6) -> None:
        """After a run: every task of a finished job succeeded exactly once; map
        input is conserved across repartitions: a stopped map's kept range and its pieces tile its split, in order,
        and the original splits add up to the job's input."""
        ended = self.ended
        done = np.flatnonzero(ended.view("state") == DONE)
        keys = zip(*(getattr(ended, c)[done].tolist() for c in ("job", "group", "index")), strict=True)
        wins_of = collections.Counter(keys)  # successful attempts by (job, group, task index)
        for job in self.jobtracker.jobs:
            if job.state != JobState.SUCCEEDED:
                continue
            for task in (*job.maps, *job.reduces):
                wins = wins_of.get((task.job.number, MAP if task.kind == TaskKind.MAP else REDUCE, task.index), 0)
                if wins != 1:
                    raise InvariantError(f"{task.task_id} succeeded {wins} times")
            for task in job.maps:
                end = task.offset_mb + task.input_mb
                for piece in task.children:
                    if abs(piece.offset_mb - end) > tol * max(end, 1.0):
                        raise InvariantError(f"{piece.task_id} starts at {piece.offset_mb} MB, not {end}")
                    end += piece.split_mb
                if abs(end - task.offset_mb - task.split_mb) > tol * max(task.split_mb, 1.0):
                    raise InvariantError(
                        f"{task.task_id}: kept + pieces = {end - task.offset_mb} MB != {task.split_mb}"
                    )
            done_input = sum(t.input_mb for t in job.maps)  # each map succeeded once (above)
            split_input = sum(t.split_mb for t in job.maps if t.parent is None)
            if abs(done_input - split_input) > tol * max(split_input, 1.0):
                raise InvariantError(f"{job.job_id}: input {split_input} MB but {done_input} MB processed")


TASK_COLUMNS = [
    "job",
    "task",
    "attempt",
    "kind",
    "vm",
    "host",
    "locality",
    "start_s",
    "end_s",
    "state",
    "speculative",
    "input_mb",
    "processed_mb",
    "output_mb",
    "spills",
    "cputime_s",
    "steal_s",
    "iowait_s",
    "read_disk_mb",
    "read_cache_mb",
    "kill_count",
    "parent",
]
_CHARGE_COLUMNS = ("cputime_s", "steal_s", "iowait_s", "read_disk_mb", "read_cache_mb")  # from the charges arrays
TASK_DTYPES = {
    **dict.fromkeys(("job", "task", "attempt", "kind", "vm", "host", "locality", "state", "parent"), "str"),
    **dict.fromkeys(("start_s", "end_s", "input_mb", "processed_mb", "output_mb"), "float64"),  # None: NaN
    "speculative": "bool",
    **dict.fromkeys(("spills", "kill_count"), "int64"),
}
_ROWS_AT_ONCE = 4_096  # rows of the tasks table whose Python values exist at once (tasks_frame)


def _task_row(a: TaskAttempt) -> tuple:
    """An attempt's values in the tasks table's columns, but the charges' (`TASK_COLUMNS`). One that has ended on
    its node but whose end the JobTracker has not yet heard of shows its end and the state that report will record
    (`JobTracker.reported_state`), as its row among the ended attempts will."""
    t = a.task
    unheard = a.unheard
    state = JobTracker.reported_state(a) if unheard else a.state
    return (
        t.job.job_id,
        t.task_id,
        a.name,
        t.role or t.kind.value,  # m, r, or a job's setup / cleanup (job_setup_cleanup)
        a.tracker.name,
        a.tracker.vm.host.name,
        a.locality.name.lower() if a.locality is not None else "",
        a.start_s,
        a.end_s,
        state,
        a.speculative,
        t.input_mb,
        t.input_mb * (float(state == ItemState.DONE) if unheard else a.progress_score),
        a.output_mb,
        a.spills,
        t.kill_count,
        t.parent.task_id if t.parent is not None else "",
    )


def _ended_rows(ended: EndedAttempts, places: list[tuple[str, str]], rows: list[int]) -> Iterator[tuple]:
    """The values of ended attempts in the tasks table's columns but the charges' (`_task_row` of their objects)."""
    cols = {c: getattr(ended, c)[rows].tolist() for c in ("number", "node", "locality", "start_s", "end_s", "state",
                                                          "speculative", "output_mb", "spills")}  # fmt: skip
    localities = [lvl.name.lower() for lvl in Locality]
    for job_id, task_id, kind, input_mb, kill_count, parent, number, node, loc, start, end, state, speculative, \
            output_mb, spills in zip(*ended.task_values(np.asarray(rows, dtype=np.int64)), *cols.values(),
                                     strict=True):  # fmt: skip
        vm, host = places[node]
        yield (
            job_id,
            task_id,
            f"attempt_{task_id}_{number}",
            kind,
            vm,
            host,
            localities[loc] if loc >= 0 else "",
            start,
            end,
            STATES[state],
            speculative,
            input_mb,
            input_mb * (1.0 if state == DONE else 0.0),
            output_mb,
            spills,
            kill_count,
            parent,
        )


def _joined(chunks: list, dtype: str) -> Any:
    """One column from its chunks; a string column keeps them as the chunks of one Arrow array (no copy)."""
    if len(chunks) < 2:
        return chunks[0] if chunks else pd.array([], dtype=dtype)
    return pd.concat([pd.Series(c, copy=False) for c in chunks], ignore_index=True).array


JOB_COLUMNS = ["job", "name", "submit_s", "start_s", "end_s", "maps", "reduces", "state"]


def map_skewness(runtimes: np.ndarray) -> float | None:
    """Skewness of task runtimes, FlexSlot section 2.2: the third standardized moment.

    The paper prints sum_i (x_i - mu)^3 / sigma^3; its values (2.65, 2.25, 0.31 for thousands of tasks)
    are those of the mean of that sum, i.e. the usual (population) skewness, which is what we report: m3 / m2^1.5
    of the central moments, `scipy.stats.skew(bias=True)`'s formula (within 3e-16 of it on 300 random samples),
    written out because importing scipy.stats costs a run 0.3-0.5 s. The cubes by the C library's pow, not
    `np.power`, which takes an AVX-512 path on CPUs that have it (docs/model.md, "Same numbers on every machine").
    """
    if len(runtimes) < 3 or np.std(runtimes) == 0:
        return None
    deviation = np.asarray(runtimes, dtype=np.float64)
    deviation = deviation - deviation.mean()
    cubes = np.fromiter(map(math.pow, deviation.tolist(), itertools.repeat(3.0)), float, len(deviation))
    return float(np.mean(cubes) / np.mean(deviation**2) ** 1.5)
