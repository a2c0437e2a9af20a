"""Jobs, tasks (TaskInProgress) and task attempts.

A `TaskAttempt` is a guest work item of the cloud layer: its phases' CPU and I/O compete for the VM's
grant and the host's datastore. A `Task` is Hadoop's TIP: it owns the split (or partition), its attempts
and its state. A `Job` owns its tasks and the locality caches the schedulers search (Hadoop's
`nonRunningMapCache`, by node and by rack).
"""

from __future__ import annotations

import math
from collections import defaultdict
from dataclasses import dataclass
from enum import StrEnum
from typing import TYPE_CHECKING

import numpy as np
from mesa import Agent

from hadoop_layer.hdfs import Locality
from hadoop_layer.profiles import MapColumns
from vcloud import WorkItem
from vcloud.work import ItemState, Phase

if TYPE_CHECKING:
    from hadoop_layer.ended import EndedAttempt
    from hadoop_layer.model import HadoopModel
    from hadoop_layer.profiles import JobProfile, MapSpec
    from hadoop_layer.tracker import TaskTracker


_NO_REPLICAS = np.zeros(0, dtype=np.int64)  # a reduce's (one array for all, read-only)
_NO_REPLICAS.flags.writeable = False


# The task commit (Task.done, hadoop.task_commit): a task whose committer needs a commit (it wrote output: a map of a
# map-only job, a reduce) reports commitPending, then calls canCommit at once and every COMMIT_POLL_S
# (Task.commit: `while (!umbilical.canCommit(taskId, jvmContext)) Thread.sleep(1000)`) until the JobTracker's
# approval has come back in its tracker's next heartbeat reply. The wait depends on when the task's work ends, so a
# plan ends in this placeholder, worked out when the attempt reaches it (`TaskAttempt.phase`).
COMMIT = Phase.wait("hdfs-commit", 0.0)
COMMIT_POLL_S = 1.0


class TaskKind(StrEnum):
    MAP = "m"
    REDUCE = "r"


class TaskState(StrEnum):
    """A TaskInProgress's state; changed only by `Job.set_state` (a setup or cleanup task may end killed)."""

    PENDING = "pending"
    RUNNING = "running"
    DONE = "done"
    FAILED = "failed"
    KILLED = "killed"


class JobState(StrEnum):
    """waiting (not yet submitted) | prep (initializing, setup) | running | succeeded | failed | killed."""

    WAITING = "waiting"
    PREP = "prep"
    RUNNING = "running"
    SUCCEEDED = "succeeded"
    FAILED = "failed"
    KILLED = "killed"


class Task:
    """A TaskInProgress: one split or one partition, and its attempts. Slots, not a dict, and the containers most
    tasks never fill, fill once or fill only while they run (`active`, `nodes_tried`, `children`, `replay`) are
    tuples, the shared empty one when empty: a 600-node trace's day makes 460,000 (issue 16). Its ended attempts are
    rows of the model's `ended` columns (hadoop_layer/ended.py), not objects: it keeps their count (`launches`) and
    the row of the one that succeeded (`won`)."""

    __slots__ = (
        "_replicas",
        "active",
        "after_shuffle_s",
        "children",
        "cpu_mc",
        "end_s",
        "failures",
        "index",
        "input_mb",
        "job",
        "kill_count",
        "kind",
        "launches",
        "min_shuffle_s",
        "nodes_tried",
        "offset_mb",
        "output_mb",
        "output_mb_final",
        "output_records",
        "parent",
        "ready_s",
        "replay",
        "role",
        "split_mb",
        "start_s",
        "state",
        "won",
    )

    def __init__(
        self,
        job: Job,
        kind: TaskKind,
        index: int,
        input_mb: float,
        cpu_mc: float = 0.0,
        output_mb: float = 0.0,
        output_records: float = 0.0,
        replicas: np.ndarray | None = None,
    ) -> None:
        self.job, self.kind, self.index = job, kind, index
        self.input_mb, self.cpu_mc = input_mb, cpu_mc
        self.output_mb, self.output_records = output_mb, output_records
        self._replicas = replicas if replicas is not None else _NO_REPLICAS  # None: its row of the job's placement
        self.state = TaskState.PENDING  # changed only by Job.set_state
        self.launches = 0  # attempts made so far (the next one's number)
        self.active: tuple[TaskAttempt, ...] = ()  # its running attempts (AttemptRegistry)
        self.nodes_tried: tuple[int, ...] = ()  # nodes an attempt ran on (a tuple: most tasks run once)
        self.start_s: float | None = None
        self.end_s: float | None = None
        self.failures = 0
        self.kill_count = 0
        self.won = -1  # the row of its successful attempt in the model's `ended` columns; -1: none
        self.output_mb_final = 0.0  # maps: output of the successful attempt (what reduces fetch)
        # Repartitioning (a map stopped early, its unprocessed input given to new maps, JobTracker.repartition):
        self.split_mb = input_mb  # the byte range the task was made with; input_mb shrinks when it is stopped
        self.offset_mb = 0.0  # where that range starts, in the coordinates of the original split
        self.parent: Task | None = None  # the map whose unprocessed input this one took over
        self.children: list[Task] | tuple[()] = ()  # the pieces of this map's unprocessed input, in range order
        self.ready_s = 0.0  # no attempt reads input before this time (a mitigator's start-up and scan)
        self.role = ""  # "setup" or "cleanup" for a job's setup/cleanup task (HadoopConfig.job_setup_cleanup)
        # recorded attempts that did not succeed, replayed by the next non-speculative launches (trace replay):
        # (result "FAILED" | "KILLED", runtime s); the attempt runs that long and then fails or is killed
        self.replay: list[tuple[str, float]] | tuple[()] = ()
        # reduces of a replayed trace (durations mode): the recorded seconds after the shuffle, which the merges,
        # the reduce and its output take alone on the node (JobTracker._finish_shuffle sizes the CPU to it)
        self.after_shuffle_s: float | None = None
        # and their recorded shuffle time: an attempt's shuffle ends no earlier than this long after its start, nor
        # before it has fetched every map's output (JobTracker._finish_shuffle); None: when the fetches end
        self.min_shuffle_s: float | None = None

    @property
    def gid(self) -> int:
        """Its number in the model's task arrays (HadoopModel.add_job), the item table's tag of its attempts: the
        job's maps made from its splits, then its reduces; 0 for a repartitioned map's piece and a setup or cleanup
        task. Worked out when asked: a slot and an int held 40 B a task (19 MB of a SWIM day's, issue 16)."""
        if self.role:
            return 0
        job, index = self.job, self.index
        made = len(job.split_replicas)  # the maps made from its splits (Job.make_tasks)
        if self.kind == TaskKind.MAP:
            return job.first_gid + index if index < made else 0
        return job.first_gid + made + index

    @property
    def attempts(self) -> list[TaskAttempt | EndedAttempt]:
        """All its attempts by number: the ended ones as records, the running ones. Scans the ended columns: for
        reports and tests, not for a policy's every heartbeat (`launches`, `active`, `won` are at hand)."""
        ended = self.job.model.ended
        found = [*ended.records(ended.rows_of(self)), *self.active]
        return sorted(found, key=lambda a: a.number)

    @property
    def successful(self) -> EndedAttempt | None:
        """Its successful attempt's record."""
        return self.job.model.ended.record(self.won) if self.won >= 0 else None

    @property
    def replicas(self) -> np.ndarray:
        """The nodes that hold its block: a map made from its job's splits reads its row of the job's placement
        (`Job.split_replicas`) when asked, as a view kept per task held 130 B (56 MB for a SWIM day's maps);
        others keep their own (a trace's recorded locations, a piece of a repartitioned map, none for a reduce)."""
        own = self._replicas
        return own if own is not None else self.job.split_replicas[self.index]

    @replicas.setter
    def replicas(self, nodes: np.ndarray) -> None:
        self._replicas = nodes

    @property
    def replicas_key(self) -> object:
        """Changes (by identity) when its replicas are set anew: for caches of what follows from them (Quincy's)."""
        return self._replicas

    def truncate(self, keep_mb: float) -> None:
        """Stop the split at `keep_mb`: the input and what follows from it (CPU, output, records) shrink in
        proportion, as work per MB is uniform inside a split."""
        if not 0 <= keep_mb <= self.input_mb:
            raise ValueError(f"{self.task_id}: cannot keep {keep_mb} of {self.input_mb} MB")
        f = keep_mb / self.input_mb if self.input_mb > 0 else 0.0
        self.input_mb = keep_mb
        self.cpu_mc, self.output_mb, self.output_records = self.cpu_mc * f, self.output_mb * f, self.output_records * f

    @property
    def task_id(self) -> str:
        if self.role:
            return f"{self.job.job_id}_{self.role}"
        return f"{self.job.job_id}_{self.kind.value}_{self.index:06d}"

    @property
    def progress(self) -> float:
        if self.state == TaskState.DONE:
            return 1.0
        active = self.active
        if len(active) == 1:
            return active[0].progress_score
        return max((a.progress_score for a in active), default=0.0)

    def __repr__(self) -> str:
        return f"Task({self.task_id}, {self.state})"


class TaskAttempt(WorkItem):
    """One execution of a task on a TaskTracker's slot.

    CPython keeps an instance's attributes in a compact shared-key layout (no dict of its own: 0.8 KB less an
    attempt, and a SWIM day makes 476,734) only for the names its class's first instances set, and the table of
    shared names holds at most 29 (CPython 3.12; a 30th name set gives every instance a dict). Mesa's Agent and the
    cloud's WorkItem set 16 of them; an attempt's own names are `__slots__` (stored in the object, outside that
    table), so adding one here cannot push the attempts past it (31 names did: `shuffle_index` and `jvm` made every
    attempt hold a dict). Every slot is set in `__init__`; the two names only failing or replayed attempts set stay
    class-level defaults, not slots (those few attempts add them to the shared table, or hold a dict once full)."""

    __slots__ = ("fail_fraction", "heap_mb", "io_sort_mb", "jvm", "locality", "number", "output_mb", "route",
                 "shuffle_col", "shuffle_index", "shuffle_write_per_mb", "speculative", "spills", "task",
                 "tracker")  # fmt: skip
    replayed = ""  # a recorded unsuccessful attempt replayed: "FAILED" or "KILLED" (Task.replay)
    # A failing attempt (HadoopConfig.task_failure_probability) runs its whole plan up to the end of phase
    # `fail_after` - 1 and ends there, failed. Its plan is never cut: the shuffle feed and the merge plan
    # (JobTracker._feed_reduces, _finish_shuffle) still find every phase they write to.
    fail_after: int | None = None  # phases it completes before failing, once its plan is known

    def __init__(
        self,
        model: HadoopModel,
        task: Task,
        tracker: TaskTracker,
        locality: Locality | None,
        speculative: bool,
        phases: list[Phase],
        marks: list[tuple[float, float]],
        mem_mb: float,
        spills: int = 0,
        output_mb: float = 0.0,
    ) -> None:
        super().__init__(
            model,
            phases,
            progress_marks=marks,
            mem_mb=mem_mb,
            mem_active_fraction=0.75,
            on_finish=model.jobtracker.attempt_finished,
        )
        self.task, self.tracker, self.locality, self.speculative = task, tracker, locality, speculative
        self.number = task.launches  # its place among its task's attempts (AttemptRegistry.add counts it)
        self.spills, self.output_mb = spills, output_mb
        self.heap_mb, self.io_sort_mb = tracker.heap_mb, tracker.io_sort_mb  # the slot it runs in (JobTracker.launch)
        self.route = None  # where its HDFS data comes from and goes to (plans.Route; JobTracker.launch)
        self.shuffle_write_per_mb = 0.0  # reduces: merge MB written to disk per MB fetched, during the shuffle
        self.shuffle_col: int | None = None  # reduces: column in the ShuffleServer's queues while fetching
        self.fail_fraction: float | None = None  # a failing attempt: where in its plan it fails, drawn at launch
        # reduces: the index of the shuffle phase, after the child JVM's phases (plans.reduce_start_plan); before it
        # the reduce is in its JVM's start or getTask poll, after it come the merges and the reduce
        self.shuffle_index = 1
        self.jvm = None  # the child JVM it runs in while JVMs are reused (hadoop_layer/jvms.py); None: its own

    @property
    def name(self) -> str:
        """attempt_<task id>_<number>: made when asked for, not kept (a SWIM day makes 476,734 attempts)."""
        return f"attempt_{self.task.task_id}_{self.number}"

    @property
    def will_fail(self) -> bool:
        return self.fail_fraction is not None

    @property
    def unheard(self) -> bool:
        """It has ended on its node, but the JobTracker has not yet heard of it (that comes at its tracker's next
        heartbeat, `JobTracker._report`): it still holds its slot, its state is the cloud's (done) and its final one
        is `JobTracker.reported_state`'s."""
        return self.end_s is not None and self in self.tracker.running[self.task.kind]

    @property
    def phase(self):
        """The current phase; None once the plan is done, or a failing attempt has reached its failure point."""
        i = self.phase_index
        if self.fail_after is not None and i >= self.fail_after:
            return None
        if i >= len(self.phases):
            return None
        phase = self.phases[i]
        if phase is COMMIT:  # reached now: the commit's wait is known
            phase = self.phases[i] = self._commit_wait()
        return phase

    def _commit_wait(self) -> Phase:
        """The task commit's wait, from the end of the attempt's work (its last phase's end): canCommit at once and
        every COMMIT_POLL_S until the poll after its tracker's first heartbeat past that end (whose reply carries the
        JobTracker's approval). The phase starts now (the tick's end, when the cloud loads it) and ends then."""
        end = self.phase_end_s[-1] if len(self.phase_end_s) else float(self.start_s or 0.0)
        tracker = self.tracker
        beat = tracker.clock.next_beat(tracker.node, end)
        approved = end + math.ceil((beat - end) / COMMIT_POLL_S - 1e-9) * COMMIT_POLL_S
        return Phase.wait("hdfs-commit", max(approved - float(self.model.time), 0.0))

    def place_failure(self) -> None:
        """Fix a failing attempt's failure point in its current plan: after phase `fraction x phases`, but never
        before the end of the phase it is in (a reduce learns its full plan only when the last map is done)."""
        if self.fail_fraction is not None:
            self.fail_after = max(1 + int(self.fail_fraction * len(self.phases)), self.phase_index + 1)

    @property
    def progress_score(self) -> float:
        """Hadoop 1.x progress (algorithms.md 2.4): maps = input consumed; reduces = (copy + sort + reduce) / 3,
        copy = map outputs fetched / maps. Carried by the phases' progress marks (plans.py); the shuffle's marks
        move as map outputs arrive (JobTracker._feed_reduces)."""
        return self.progress

    @property
    def input_done_mb(self) -> float:
        """Maps: input MB the map function has consumed so far, the offset at which the attempt can be stopped
        (`Repartition`). Reading precedes mapping here (plans.py): input read but not yet mapped does not count."""
        if self.state == ItemState.DONE:
            return self.task.input_mb
        if self.row is None or self.task.kind != TaskKind.MAP:
            return 0.0
        names = [p.name for p in self.phases]
        name = "map" if "map" in names else "read" if "read" in names else None
        if name is None:
            return 0.0
        j = names.index(name)
        if self.phase_index != j:
            return self.task.input_mb if self.phase_index > j else 0.0
        amount = self.phases[j].amount
        left = float(self.model.items.remaining[self.row])
        return self.task.input_mb * (1.0 - left / amount) if amount > 0 else 0.0

    @property
    def runtime_s(self) -> float:
        end = self.end_s if self.end_s is not None else float(self.model.time)
        return end - (self.start_s or 0.0)

    def __repr__(self) -> str:
        return f"TaskAttempt({self.name}, {self.state})"


@dataclass(slots=True)
class MapSplits:
    """A job's map splits until its tasks are made: columns, not Task objects. A trace's jobs are all added at
    build (HDFS places their blocks then, in job order, from the model's RNG), but their tasks exist only from
    submission (`Job.maps`): a SWIM day's 460,000 tasks held 0.4 GB before the first tick (issue 16)."""

    input_mb: np.ndarray
    cpu_mc: np.ndarray
    output_mb: np.ndarray
    output_records: np.ndarray
    replicas: np.ndarray  # (maps, copies): the nodes HDFS placed each block on
    own_replicas: dict[int, np.ndarray]  # a spec's own replicas (a trace's recorded locations), which win

    FIELDS = ("input_mb", "cpu_mc", "output_mb", "output_records")

    @classmethod
    def of(cls, specs: list[MapSpec] | MapColumns, placed: np.ndarray) -> MapSplits:
        if isinstance(specs, MapColumns):
            columns = [np.array(getattr(specs, f), dtype=np.float64) for f in cls.FIELDS]  # copies: no shared rows
            return cls(*columns, placed, dict(specs.own_replicas))
        columns = [np.array([m[f] for m in specs], dtype=np.float64) for f in cls.FIELDS]
        own = {i: m["replicas"] for i, m in enumerate(specs) if "replicas" in m}
        return cls(*columns, placed, own)

    def __len__(self) -> int:
        return len(self.input_mb)

    def tasks(self, job: Job) -> list[Task]:
        """The map tasks (numbered from the job's `first_gid` in the model's task arrays: `Task.gid`)."""
        own = self.own_replicas
        columns = zip(*(_shared(getattr(self, f).tolist()) for f in self.FIELDS), strict=True)
        tasks = []
        for i, (input_mb, cpu_mc, output_mb, records) in enumerate(columns):
            task = Task(job, TaskKind.MAP, i, input_mb, cpu_mc, output_mb, records, own.get(i))
            if i not in own:
                task._replicas = None  # its row of `self.replicas` (Task.replicas)
            tasks.append(task)
        return tasks


def _shared(values: list[float]) -> list[float]:
    """Equal numbers as one float object: a job's splits are mostly of one size, and a SWIM day's 406,005 maps hold
    6,726 distinct values a field (4 x 32 B a map otherwise: 51 MB). Zeros keep their own (0.0 == -0.0)."""
    seen: dict[float, float] = {}
    return [seen.setdefault(v, v) if v else v for v in values]


class Job(Agent):
    """A MapReduce job: its tasks (made when it is first asked for them, at the latest at submission), counters
    and the locality caches schedulers search."""

    def __init__(
        self,
        model: HadoopModel,
        number: int,
        name: str,
        submit_s: float,
        maps: MapSplits,
        reduces: int,
        profile: JobProfile,
        *,
        priority: str = "NORMAL",
        pool: str = "default",
        user: str = "user",
    ) -> None:
        super().__init__(model)
        self.number, self.name, self.submit_s, self.profile = number, name, submit_s, profile
        self.priority, self.pool, self.user = priority, pool, user
        self.job_id = f"job_{number:04d}"
        self.splits: MapSplits | None = maps  # until the tasks are made (`maps`)
        self.split_replicas = _NO_REPLICAS  # then its maps' replicas, a row each (maps, copies): Task.replicas
        self.n_reduces = reduces
        self.first_gid = 0  # its first task's number in the model's task arrays (HadoopModel.add_job)
        self._maps: list[Task] = []
        self._reduces: list[Task] = []
        self.state = JobState.WAITING
        # Hadoop 1.x lifecycle (HadoopConfig.job_setup_cleanup): None takes the config's cost; a trace may give
        # the recorded ones. `hold_setup`: the job never got its setup (a trace's job killed while in PREP).
        self.init_s: float | None = None
        self.setup_s: float | None = None
        self.cleanup_s: float | None = None
        self.hold_setup = False
        # The job's own configuration where it differs from the cluster's (a trace's recorded jobProperties):
        # reduce slow start, each kind's (heap MB, io.sort.mb) and the kinds it forbids backups of
        # (mapred.{map,reduce}.tasks.speculative.execution=false). None / empty: the cluster's hadoop.* holds.
        self.reduce_slowstart: float | None = None
        self.own_memory: dict[TaskKind, tuple[float | None, float | None]] = {}
        self.no_speculation: frozenset[TaskKind] = frozenset()
        self.final_state: str | None = None  # set when the job's end is decided, before its cleanup task runs
        self.lifecycle_task: Task | None = None  # its setup task, then its cleanup task
        self.lifecycle_tasks: list[Task] = []  # both, for the tasks table
        self.start_s: float | None = None
        self.end_s: float | None = None
        self.map_output_done_mb = 0.0
        self.map_output_node_mb = np.zeros(0)  # map output done, by the node that holds it (from `make_tasks`)
        # its reduce attempts' columns in the ShuffleServer's queues (an array: every map's end indexes with it)
        self.shuffle_cols = np.zeros(0, dtype=np.int64)
        self.reduce_attempts: list[TaskAttempt] = []  # running reduce attempts, fed as maps finish
        self._node_cache: dict[int, list[Task]] = defaultdict(list)
        self._rack_cache: dict[int, list[Task]] = defaultdict(list)
        self._any: list[Task] = []
        self._retry: list[Task] = []
        self.running_tasks: dict[TaskKind, dict[Task, None]] = {TaskKind.MAP: {}, TaskKind.REDUCE: {}}  # ordered set
        # the running attempts of `running_tasks` (backups too), kept by `set_state` and AttemptRegistry.add/remove:
        # what the Fair Scheduler's JobSchedulable.getRunningTasks reads (job.runningMaps(), runningReduces())
        self.running_attempts: dict[TaskKind, int] = {TaskKind.MAP: 0, TaskKind.REDUCE: 0}
        self.state_changes = 0  # of its tasks' states (`set_state`): a version for what policies derive from them
        self.ledger = None  # the JobTracker's RunningLedger while the job is running (hadoop_layer/ledger.py)
        self._progress_cache: dict[TaskKind, tuple] = {}
        self._counts = {
            TaskKind.MAP: {**dict.fromkeys(TaskState, 0), TaskState.PENDING: len(maps)},
            TaskKind.REDUCE: {**dict.fromkeys(TaskState, 0), TaskState.PENDING: reduces},
        }

    # ---- its tasks: made from the splits when first asked for (submission asks) -------------------
    @property
    def maps(self) -> list[Task]:
        if self.splits is not None:
            self.make_tasks()
        return self._maps

    @property
    def reduces(self) -> list[Task]:
        if self.splits is not None:
            self.make_tasks()
        return self._reduces

    def make_tasks(self) -> None:
        """Make the map and reduce tasks and the locality caches from the splits. Draws nothing from the RNG (the
        blocks were placed at `HadoopModel.add_job`), so when this happens moves no number."""
        splits, self.splits = self.splits, None
        if splits is None:
            return
        self.split_replicas = splits.replicas
        self._maps = splits.tasks(self)
        self._reduces = [Task(self, TaskKind.REDUCE, i, 0.0) for i in range(self.n_reduces)]
        self.map_output_node_mb = np.zeros(len(self.model.trackers))
        # each map's replicas as Python ints (Task.replicas: its row of the placement, else its own): indexing
        # NumPy rows an element at a time was most of the cost of making a SWIM day's 406,005 maps
        racks, rows = self.model._rack_list, self.split_replicas.tolist()
        for task in reversed(self._maps):  # reversed: pop() from the end gives the lowest index first
            own = task._replicas
            nodes = rows[task.index] if own is None else [int(n) for n in own]
            for node in nodes:
                self._node_cache[node].append(task)
            for rack in {racks[n] for n in nodes}:
                self._rack_cache[rack].append(task)
        self._any = list(reversed(self._maps))

    # ---- task states: every change goes through here so the counters stay true ------------------
    def set_state(self, task: Task, state: str) -> None:
        old = task.state
        if old == state:
            return
        counts = self._counts[task.kind]
        counts[old] -= 1
        counts[state] += 1
        task.state = state
        if state == TaskState.DONE or state == TaskState.FAILED:
            task.nodes_tried = ()  # read of running tasks only (speculation); a SWIM day's ended tasks held 30 MB
        self.model.task_changes += 1
        self.state_changes += 1
        running = self.running_tasks[task.kind]
        if state == TaskState.RUNNING:
            if task not in running:
                running[task] = None
                self.running_attempts[task.kind] += len(task.active)
        elif task in running:
            del running[task]
            self.running_attempts[task.kind] -= len(task.active)
        if state == TaskState.PENDING and task.kind == TaskKind.MAP:
            self._retry.append(task)  # failed/killed TIPs are tried first (failedMaps in JobInProgress)
        if self.ledger is not None:
            self.ledger.changed(self, finished=old == TaskState.DONE or state == TaskState.DONE)

    def count(self, kind: TaskKind, state: str) -> int:
        return self._counts[kind][state]

    @property
    def pending_maps(self) -> int:
        return self._counts[TaskKind.MAP][TaskState.PENDING]

    @property
    def pending_reduces(self) -> int:
        return self._counts[TaskKind.REDUCE][TaskState.PENDING]

    @property
    def slowstart_maps(self) -> int:
        """Slow start: reduces wait for ceil(slowstart x maps) finished maps (JobInProgress, algorithms.md 2.3); the
        fraction is the job's own when it has one (JobInProgress reads it from the job's conf)."""
        own = self.reduce_slowstart
        return math.ceil((self.model.hadoop.reduce_slowstart if own is None else own) * len(self.maps))

    def reduces_schedulable(self) -> bool:
        return self.finished_maps >= self.slowstart_maps

    @property
    def finished_maps(self) -> int:
        return self._counts[TaskKind.MAP][TaskState.DONE]

    @property
    def finished_reduces(self) -> int:
        return self._counts[TaskKind.REDUCE][TaskState.DONE]

    @property
    def complete(self) -> bool:
        return self.finished_maps == len(self.maps) and self.finished_reduces == len(self.reduces)

    def add_maps(self, specs: list[MapSpec], order: list[int]) -> list[Task]:
        """New pending maps (Task keyword arguments each), searched before the job's other pending maps, in
        `order` (indices into `specs`). Returns them in `specs` order."""
        if sorted(order) != list(range(len(specs))):
            raise ValueError(f"add_maps: order {order} is not a permutation of {len(specs)} maps")
        start = len(self.maps)
        new = [Task(self, TaskKind.MAP, start + i, **m) for i, m in enumerate(specs)]
        self._maps += new
        self._counts[TaskKind.MAP][TaskState.PENDING] += len(new)
        if self.ledger is not None:
            self.ledger.changed(self, resized=True)
        racks = self.model.node_racks
        for task in (new[i] for i in reversed(order)):  # the caches are searched from their end
            for node in task.replicas:
                self._node_cache[int(node)].append(task)
            for rack in {int(racks[n]) for n in task.replicas}:
                self._rack_cache[rack].append(task)
            self._any.append(task)
        return new

    def forget_pending(self) -> None:
        """An ended job is searched for no more tasks: its locality caches (its maps again, by node and by rack) go.
        What the searches had not yet emptied of them held 32 MB at the end of a SWIM day on 600 slaves (issue 16)."""
        self._node_cache.clear()
        self._rack_cache.clear()
        self._any, self._retry = [], []

    def forget_retries(self) -> None:
        """With no pending map, the failed-first list holds none either (find_map would empty it so)."""
        if self._retry:
            self._retry = []

    def find_map(self, node: int, rack: int, max_level: Locality, exclude: set[Task]) -> tuple[Task, Locality] | None:
        """The first pending map at locality <= max_level: failed first, then node, rack, any (obtainNew*MapTask)."""
        if not self.pending_maps:  # the searches below would find none (schedulers ask at every heartbeat)
            return None
        if self._retry:
            self._retry = [t for t in self._retry if t.state == TaskState.PENDING]
            for task in self._retry:
                if task not in exclude:
                    return task, self.model.locality_of(task, node)
        for level, cache in (
            (Locality.NODE, self._node_cache.get(node)),
            (Locality.RACK, self._rack_cache.get(rack)),
            (Locality.OFF_RACK, self._any),
        ):
            if level > max_level:
                break
            task = _first_pending(cache, exclude)
            if task is not None:
                return task, level if level != Locality.OFF_RACK else self.model.locality_of(task, node)
        return None

    def find_reduce(self, exclude: set[Task]) -> Task | None:
        if not self.pending_reduces or not self.reduces_schedulable():  # (the scan would find none: asked per beat)
            return None
        return next((t for t in self.reduces if t.state == TaskState.PENDING and t not in exclude), None)

    def progress(self, kind: TaskKind) -> float:
        """Average progress over all tasks of a kind, finished (1) and unstarted (0) included (JobInProgress).

        Cached until the attempts' progress or the job's task counts change (`CloudModel.progress_version`:
        map outputs fed to reduces, launches and kills move progress between ticks)."""
        model = self.model
        progress = model.item_progress()
        key = (kind, model.progress_version, self._counts[kind][TaskState.DONE], len(self.running_tasks[kind]))
        cached = self._progress_cache.get(kind)
        if cached is None or cached[0] != key:
            n = len(self.maps if kind == TaskKind.MAP else self.reduces)
            done = self._counts[kind][TaskState.DONE]
            value = 1.0 if n == 0 else (done + sum(_running_progress(self.running_tasks[kind], progress))) / n
            self._progress_cache[kind] = cached = (key, value)
        return cached[1]

    def submit_event(self) -> None:
        self.make_tasks()
        self.model.jobtracker.submit(self)

    def __repr__(self) -> str:
        return f"Job({self.job_id} {self.name}, {self.state})"


def _running_progress(tasks: dict[Task, None], progress: np.ndarray) -> list[float]:
    """`Task.progress` of each running task, in order: a task that runs one attempt holding a row (mostly: a big job's
    thousands of running maps) reads it from the item table's progress (`progress`, by row), all in one gather; the
    others their own way (backups, or an attempt whose row went in this tick and whose end is being processed)."""
    rows = [active[0].row if len(active) == 1 else None for active in [t.active for t in tasks]]
    if None not in rows:
        return progress[rows].tolist()
    others = [i for i, row in enumerate(rows) if row is None]
    for i in others:
        rows[i] = 0
    values = progress[rows].tolist() if len(progress) else [0.0] * len(rows)
    listed = list(tasks)
    for i in others:
        values[i] = listed[i].progress
    return values


def _first_pending(cache: list[Task] | None, exclude: set[Task]) -> Task | None:
    """Pop non-pending tasks off the end of a cache (they never return to it) and return the first pending one."""
    if not cache:
        return None
    while cache and cache[-1].state != TaskState.PENDING:
        cache.pop()
    for task in reversed(cache):
        if task.state == TaskState.PENDING and task not in exclude:
            return task
    return None
