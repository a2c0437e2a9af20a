"""Ended task attempts as columns: what the tables, the summary, the checks and the policies read of an attempt
once it has stopped (done, killed, failed).

A long run ends hundreds of thousands of attempts (a SWIM day on 600 slaves: 476,734); as objects (a Mesa agent
and a cloud work item each) they held 0.3 GB at its end (issue 16). An attempt is recorded here as it ends
(`AttemptRegistry.remove`) and the object is then dropped: an ended attempt is a row, read through `EndedAttempt`,
a small view with the names readers used on the object. Running attempts stay objects.
"""

from __future__ import annotations

from itertools import pairwise
from typing import TYPE_CHECKING

import numpy as np

from hadoop_layer.hdfs import Locality
from hadoop_layer.tasks import _NO_REPLICAS, Task, TaskKind, TaskState
from vcloud.agents import ChargeTotals
from vcloud.rows import Column
from vcloud.tables import grown
from vcloud.work import EndedPhase, ItemState

if TYPE_CHECKING:
    from hadoop_layer.model import HadoopModel
    from hadoop_layer.tasks import Job, TaskAttempt
    from hadoop_layer.tracker import TaskTracker

STATES = (ItemState.DONE, ItemState.KILLED, ItemState.FAILED)  # the `state` column's codes
DONE, KILLED, FAILED = 0, 1, 2
MAP, REDUCE = 0, 1  # the `group` column: map, reduce, then 2 + the task's place in its job's lifecycle tasks
_STATE_CODE = {s: i for i, s in enumerate(STATES)}
_LOCALITIES = tuple(Locality)
# tasks table columns of many tasks (EndedAttempts.task_values): job, task, kind, input MB, kill count, parent
TaskValues = tuple[list[str], list[str], list[str], list[float], list[int], list[str]]


def task_key(task: Task | EndedTask) -> tuple[int, int, int]:
    """(job, group, index): a task's place in the tables' order, which names it among its job's tasks."""
    if task.role:
        return task.job.number, 2 + task.job.lifecycle_tasks.index(task), task.index
    return task.job.number, MAP if task.kind == TaskKind.MAP else REDUCE, task.index


class EndedAttempts:
    """One row per ended attempt, in the order they ended: NumPy columns grown by doubling (`grown`), the task
    named by its key (job, group, index: `task_of`, not an object column, which kept ended jobs' tasks alive), the
    phases' end times in one flat array."""

    COLUMNS: dict[str, tuple[type, object]] = {
        "gid": (np.int32, 0),  # Task.gid (0: a task made after the build or a lifecycle task; see `task`)
        "job": (np.int32, 0),  # Job.number
        "group": (np.int8, 0),  # MAP, REDUCE, or 2 + its place in the job's lifecycle tasks: the tables' order
        "index": (np.int32, 0),  # Task.index
        "number": (np.int32, 0),  # its place among its task's attempts
        "node": (np.int32, 0),  # its TaskTracker
        "start_s": (np.float64, np.nan),
        "end_s": (np.float64, np.nan),
        "state": (np.int8, 0),  # STATES
        "locality": (np.int8, -1),  # Locality; -1: none (reduces, setup and cleanup)
        "speculative": (np.bool_, False),
        "output_mb": (np.float64, 0.0),
        "spills": (np.int32, 0),
        "charges": (np.int32, -1),  # its row in the cloud's `ended_charges`
        "plan": (np.int32, 0),  # its phases' names: `plans[plan]`
        "ends_from": (np.int64, 0),  # its phases' end times: `ends[ends_from : ends_from + ends_n]`
        "ends_n": (np.int16, 0),
    }

    def __init__(self, model: HadoopModel) -> None:
        self.model = model
        self.n = 0
        for name, (dtype, _) in self.COLUMNS.items():
            setattr(self, name, np.zeros(0, dtype=dtype))
        self.ends = np.zeros(0)
        self.ends_used = 0
        self.plans: list[tuple[EndedPhase, ...]] = []
        self._plan_ids: dict[tuple[str, ...], int] = {}

    def __len__(self) -> int:
        return self.n

    def add(self, attempt: TaskAttempt) -> int:
        """Record an attempt that has just stopped, in its final state; returns its row."""
        k, task = self.n, attempt.task
        if k == len(self.gid):
            size = max(1024, 2 * k)
            for name, (_, fill) in self.COLUMNS.items():
                setattr(self, name, grown(getattr(self, name), (size,), fill))
        phase_ends = attempt.phase_end_s
        m, used = len(phase_ends), self.ends_used
        if used + m > len(self.ends):
            self.ends = grown(self.ends, (max(4096, 2 * (used + m)),), 0.0)  # read only up to `ends_used`
        self.ends[used : used + m] = phase_ends
        self.ends_used = used + m
        locality, start_s = attempt.locality, attempt.start_s
        self.gid[k] = task.gid
        job = task.job
        self.job[k], self.index[k], self.number[k] = job.number, task.index, attempt.number
        if task.role:  # task_key's group
            self.group[k] = 2 + job.lifecycle_tasks.index(task)
        else:
            self.group[k] = MAP if task.kind == TaskKind.MAP else REDUCE
        self.node[k], self.state[k] = attempt.tracker.node, _STATE_CODE[attempt.state]
        self.start_s[k] = np.nan if start_s is None else start_s
        self.end_s[k] = attempt.end_s
        self.locality[k] = -1 if locality is None else int(locality)
        self.speculative[k], self.output_mb[k], self.spills[k] = attempt.speculative, attempt.output_mb, attempt.spills
        self.charges[k], self.plan[k] = attempt.ended_row, self._plan(attempt.phases)
        self.ends_from[k], self.ends_n[k] = used, m
        self.n = k + 1
        return k

    @staticmethod
    def key_of(attempt: TaskAttempt) -> tuple[int, int, int, int]:
        """(job, group, index, number): where an attempt goes in the tables' order (`HadoopModel.attempt_order`)."""
        return (*task_key(attempt.task), attempt.number)

    def _plan(self, phases) -> int:
        names = tuple([p.name for p in phases])
        found = self._plan_ids.get(names)
        if found is None:
            found = self._plan_ids[names] = len(self.plans)
            self.plans.append(tuple(EndedPhase(n) for n in names))
        return found

    def view(self, name: str) -> np.ndarray:
        """The live rows of one column (a view)."""
        return getattr(self, name)[: self.n]

    def charge(self, column: str, rows: np.ndarray | None = None) -> np.ndarray:
        """One charge (`CHARGES`: usr_s, ..., read_cache_mb) of the given rows (all by default)."""
        at = self.view("charges") if rows is None else self.charges[rows]
        return self.model.ended_charges.of(at, column)

    def record(self, row: int) -> EndedAttempt:
        return EndedAttempt(self, int(row))

    def records(self, rows=None) -> list[EndedAttempt]:
        """Views of the given rows (all, in end order, by default): for reports and tests, not for every tick."""
        return [EndedAttempt(self, int(r)) for r in (range(self.n) if rows is None else rows)]

    def task_of(self, row: int) -> Task | EndedTask:
        """The task of the attempt in `row`, found by its key: its job's task object, or a view of it once the job
        has ended (`retire`). A column of task objects kept every ended task alive."""
        job = self.model.numbered_jobs[int(self.job[row]) - 1]
        group, index = int(self.group[row]), int(self.index[row])
        if group >= 2:
            return job.lifecycle_tasks[group - 2]
        return (job.maps if group == MAP else job.reduces)[index]

    def task_values(self, rows: np.ndarray) -> TaskValues:
        """The tasks table's values of the given rows' tasks (job, task, kind, input MB, kill count, parent), as
        `task_of` reads them one by one: an ended job's maps and reduces in bulk from its rows (`EndedTasks.values`),
        a run of rows at a time; the others (running jobs', setup and cleanup) from their objects. Views made row
        by row took 60 % of a SWIM day's tasks table (2.8 of 4.7 s on 600 slaves)."""
        values: TaskValues = ([], [], [], [], [], [])
        job, lifecycle = self.job[rows], self.group[rows] >= 2
        changes = np.flatnonzero((job[1:] != job[:-1]) | (lifecycle[1:] != lifecycle[:-1])) + 1
        for a, b in pairwise([0, *changes.tolist(), len(rows)]):
            owner = self.model.numbered_jobs[int(job[a]) - 1] if b > a else None
            if owner is None:
                continue
            if not lifecycle[a] and isinstance(owner._maps, EndedTaskList):
                bulk = owner._maps.tasks.values(self.group[rows[a:b]], self.index[rows[a:b]])
                for column, more in zip(values, bulk, strict=True):
                    column.extend(more)
                continue
            for r in rows[a:b].tolist():
                t = self.task_of(r)
                parent = t.parent.task_id if t.parent is not None else ""
                one = (t.job.job_id, t.task_id, t.role or t.kind.value, t.input_mb, t.kill_count, parent)
                for column, v in zip(values, one, strict=True):
                    column.append(v)
        return values

    def rows_of(self, task: Task | EndedTask) -> np.ndarray:
        """The rows of one task's ended attempts, by attempt number (a scan of the columns: for reports and tests)."""
        rows = np.flatnonzero(self.view("gid") == task.gid)
        if not task.gid:  # tasks made after the build and lifecycle tasks share gid 0: their key tells them apart
            job, group, index = task_key(task)
            rows = rows[(self.job[rows] == job) & (self.group[rows] == group) & (self.index[rows] == index)]
        return rows[np.argsort(self.number[rows], kind="stable")]

    def since(self, seen: int) -> list[EndedAttempt]:
        """The attempts that ended from row `seen` on, by tracker, then in end order (what reading each tracker's
        own list of ended attempts in tracker order gave: the order a policy folds them in)."""
        rows = np.arange(seen, self.n)
        return self.records(rows[np.argsort(self.node[seen : self.n], kind="stable")])


def _locality(code: np.int8) -> Locality | None:
    return None if code < 0 else _LOCALITIES[code]


class EndedAttempt(ChargeTotals):
    """An ended attempt, read from its row `at` of the `ended` columns (`EndedAttempts`): the names its object had,
    read-only. `row` is None as for a stopped work item (the cloud's item table has no row for it)."""

    __slots__ = ("at", "ended")
    row = None
    route = None
    progress_marks = None
    unheard = False  # (TaskAttempt.unheard) its end was heard of: it is recorded
    number = Column[int]("ended", at="at")
    start_s = Column[float]("ended", at="at")
    end_s = Column[float]("ended", at="at")
    state = Column[ItemState]("ended", at="at", convert=STATES.__getitem__)
    locality = Column[Locality | None]("ended", at="at", convert=_locality)
    speculative = Column[bool]("ended", at="at")
    output_mb = Column[float]("ended", at="at")
    spills = Column[int]("ended", at="at")

    def __init__(self, ended: EndedAttempts, at: int) -> None:
        self.ended, self.at = ended, at

    def __eq__(self, other: object) -> bool:
        return isinstance(other, EndedAttempt) and other.ended is self.ended and other.at == self.at

    def __hash__(self) -> int:
        return hash(self.at)

    @property
    def task(self) -> Task | EndedTask:
        return self.ended.task_of(self.at)

    @property
    def kind(self) -> TaskKind:
        return self.task.kind

    @property
    def name(self) -> str:
        return f"attempt_{self.task.task_id}_{self.number}"

    @property
    def tracker(self) -> TaskTracker:
        return self.ended.model.trackers[int(self.ended.node[self.at])]

    @property
    def runtime_s(self) -> float:
        return self.end_s - self.start_s

    @property
    def progress(self) -> float:
        return 1.0 if self.ended.state[self.at] == DONE else 0.0

    progress_score = progress

    def charged(self, column: str) -> float:
        """usr_s, sys_s, steal_s, iowait_s, io_mb, read_disk_mb or read_cache_mb charged while it ran."""
        return float(self.ended.model.ended_charges.of(self.ended.charges[self.at], column))

    @property
    def phases(self) -> tuple[EndedPhase, ...]:
        """Its plan's phases, by name only (what `WorkItem.settle` kept)."""
        return self.ended.plans[self.ended.plan[self.at]]

    @property
    def phase_end_s(self) -> np.ndarray:
        """When each phase it completed ended (a read-only view)."""
        i = int(self.ended.ends_from[self.at])
        view = self.ended.ends[i : i + int(self.ended.ends_n[self.at])]
        view.flags.writeable = False
        return view

    def __repr__(self) -> str:
        return f"EndedAttempt({self.name}, {self.state})"


# ---- ended jobs' tasks ---------------------------------------------------------------------------------------------
_TASK_STATES = tuple(TaskState)
_TASK_STATE_CODE = {s: i for i, s in enumerate(_TASK_STATES)}


class EndedTasks:
    """An ended job's maps and reduces as one row each of a structured array (maps, then reduces), made when the job
    has ended and none of its attempts runs (`retire`): a SWIM day on 600 slaves ends 480,000 tasks, whose objects
    held 0.2 GB at its end (issue 16). Its tasks are then read through `EndedTask` views, by the names the objects
    had. A row's place gives its kind and index; what most tasks hold at its default (`SPARSE`: a repartitioned
    map's range and parent, a replayed reduce's times, children, replays, own replicas, nodes tried) is kept by row
    in dicts, only where it differs."""

    FLOATS = ("input_mb", "cpu_mc", "output_mb", "output_records", "output_mb_final", "start_s", "end_s")
    INTS = ("launches", "failures", "kill_count", "won")
    DTYPE = np.dtype([*((f, np.float64) for f in FLOATS), *((f, np.int32) for f in INTS), ("state", np.int8)])
    SPARSE = ("offset_mb", "ready_s", "after_shuffle_s", "min_shuffle_s", "replay", "nodes_tried", "split_mb",
              "parent", "children", "_replicas")  # fmt: skip
    __slots__ = ("job", "maps", "rows", "sparse")

    def __init__(self, job: Job) -> None:
        maps, reduces = job._maps, job._reduces
        tasks = [*maps, *reduces]
        self.job, self.maps = job, len(maps)
        rows = np.zeros(len(tasks), dtype=self.DTYPE)
        for f in ("start_s", "end_s"):
            rows[f] = [np.nan if v is None else v for v in (getattr(t, f) for t in tasks)]  # NaN: None
        for f in (*self.FLOATS[:5], *self.INTS):
            rows[f] = [getattr(t, f) for t in tasks]
        rows["state"] = [_TASK_STATE_CODE[t.state] for t in tasks]
        self.rows = rows
        row_of = {id(t): i for i, t in enumerate(maps)}  # a piece's parent and children are maps of its job
        self.sparse: dict[str, dict[int, object]] = {f: {} for f in self.SPARSE}
        for i, t in enumerate(tasks):
            for f, default in zip(self.SPARSE, self._defaults(i, t.input_mb), strict=True):
                v = getattr(t, f)
                if v is not default and (f == "_replicas" or v != default):  # replicas: an array, or the default
                    if f == "parent":
                        v = row_of[id(v)]
                    elif f == "children":
                        v = tuple(row_of[id(c)] for c in v)
                    self.sparse[f][i] = v

    def _defaults(self, at: int, input_mb: float) -> tuple:
        """The `SPARSE` fields' values most tasks hold (a reduce's replicas: the shared empty array)."""
        return 0.0, 0.0, None, None, (), (), input_mb, None, (), None if at < self.maps else _NO_REPLICAS

    def values(self, group: np.ndarray, index: np.ndarray) -> TaskValues:
        """(job, task, kind, input MB, kill count, parent) of the tasks given by group (MAP, REDUCE) and index: what
        `EndedTask`'s views read, for many at once (`EndedAttempts.task_values`)."""
        job_id, n = self.job.job_id, len(index)
        at = np.where(group == MAP, index, self.maps + index)
        kinds = np.where(group == MAP, TaskKind.MAP.value, TaskKind.REDUCE.value).tolist()
        tasks = [f"{job_id}_{k}_{i:06d}" for k, i in zip(kinds, index.tolist(), strict=True)]
        parent = self.sparse["parent"]  # a map's row, which is its index
        parents = [f"{job_id}_m_{p:06d}" if (p := parent.get(i)) is not None else "" for i in at.tolist()]
        rows = self.rows[at]
        return [job_id] * n, tasks, kinds, rows["input_mb"].tolist(), rows["kill_count"].tolist(), parents

    def get(self, field: str, at: int) -> object:
        found = self.sparse[field].get(at, _MISSING)
        if found is _MISSING:
            return self._defaults(at, float(self.rows["input_mb"][at]))[self.SPARSE.index(field)]
        return found


_MISSING = object()


class EndedTaskList:
    """An ended job's maps (or reduces): `EndedTask` views made when read, in the list's place (`Job.maps`)."""

    __slots__ = ("first", "n", "tasks")

    def __init__(self, tasks: EndedTasks, first: int, n: int) -> None:
        self.tasks, self.first, self.n = tasks, first, n

    def __len__(self) -> int:
        return self.n

    def __getitem__(self, i: int | slice) -> EndedTask | list[EndedTask]:
        if isinstance(i, slice):
            return [EndedTask(self.tasks, self.first + k) for k in range(*i.indices(self.n))]
        if not -self.n <= i < self.n:
            raise IndexError(i)
        return EndedTask(self.tasks, self.first + (i % self.n))

    def __iter__(self):
        return (EndedTask(self.tasks, i) for i in range(self.first, self.first + self.n))

    def __repr__(self) -> str:
        return f"EndedTaskList({self.tasks.job.job_id}, {self.n})"


def _float_or_none(v: np.float64) -> float | None:
    return None if v != v else float(v)  # NaN stands for None


def _sparse(name: str) -> property:
    """A read-only attribute of `EndedTask` most tasks hold at its default (`EndedTasks.SPARSE`)."""

    def get(self: EndedTask):
        return self.tasks.get(name, self.at)

    get.__name__ = name
    return property(get)


class EndedTask:
    """A task of an ended job, read from its row `at` of its job's `EndedTasks`: the names its `Task` object had,
    read-only (a view is made when read: equal, not identical, to another view of the same task). Its numbers are
    the row's fields (`EndedTasks.DTYPE`); what most tasks hold at its default, the `SPARSE` dicts."""

    __slots__ = ("at", "tasks")
    role = ""
    active = ()
    input_mb = Column[float]("tasks.rows", fields=True, at="at")
    cpu_mc = Column[float]("tasks.rows", fields=True, at="at")
    output_mb = Column[float]("tasks.rows", fields=True, at="at")
    output_records = Column[float]("tasks.rows", fields=True, at="at")
    output_mb_final = Column[float]("tasks.rows", fields=True, at="at")
    start_s = Column[float | None]("tasks.rows", fields=True, at="at", convert=_float_or_none)
    end_s = Column[float | None]("tasks.rows", fields=True, at="at", convert=_float_or_none)
    launches = Column[int]("tasks.rows", fields=True, at="at")
    failures = Column[int]("tasks.rows", fields=True, at="at")
    kill_count = Column[int]("tasks.rows", fields=True, at="at")
    won = Column[int]("tasks.rows", fields=True, at="at")
    state = Column[TaskState]("tasks.rows", fields=True, at="at", convert=_TASK_STATES.__getitem__)

    def __init__(self, tasks: EndedTasks, at: int) -> None:
        self.tasks, self.at = tasks, at

    def __eq__(self, other: object) -> bool:
        return isinstance(other, EndedTask) and other.tasks is self.tasks and other.at == self.at

    def __hash__(self) -> int:
        return hash((id(self.tasks), self.at))

    @property
    def job(self) -> Job:
        return self.tasks.job

    @property
    def kind(self) -> TaskKind:
        return TaskKind.MAP if self.at < self.tasks.maps else TaskKind.REDUCE

    @property
    def index(self) -> int:
        return self.at if self.at < self.tasks.maps else self.at - self.tasks.maps

    @property
    def parent(self) -> EndedTask | None:
        i = self.tasks.get("parent", self.at)
        return None if i is None else EndedTask(self.tasks, i)

    @property
    def children(self) -> tuple[EndedTask, ...]:
        return tuple(EndedTask(self.tasks, i) for i in self.tasks.get("children", self.at))

    def __repr__(self) -> str:
        return f"Task({self.task_id}, {self.state})"


for _name in EndedTasks.SPARSE:
    if _name not in ("parent", "children"):
        setattr(EndedTask, _name, _sparse(_name))
for _name in ("gid", "attempts", "successful", "replicas", "replicas_key", "task_id", "progress"):
    setattr(EndedTask, _name, getattr(Task, _name))  # Task's own, reading the view's names


def retire(job: Job) -> bool:
    """An ended job's maps and reduces become rows (`EndedTasks`) if none of its attempts runs; the objects are
    then dropped, and so are the ids of its splits' replica files (`NodeFiles.forget_blocks`). Its setup and cleanup
    tasks stay objects (two a job). Returns whether it did."""
    if job.splits is not None or isinstance(job._maps, EndedTaskList):
        return False
    if any(t.active for t in job._maps) or any(t.active for t in job._reduces):
        return False
    files = getattr(job.model, "files", None)
    if files is not None:  # its maps read their splits no more
        files.forget_blocks(range(job.first_gid, job.first_gid + len(job.split_replicas)))
    tasks = EndedTasks(job)
    job._maps, job._reduces = EndedTaskList(tasks, 0, tasks.maps), EndedTaskList(tasks, tasks.maps, len(job._reduces))
    return True
