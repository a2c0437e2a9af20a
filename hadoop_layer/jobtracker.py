"""JobTracker: the job queue, heartbeats, launches, completions, kills, failures and the shuffle feed.

Tasks are handed out only in heartbeat replies (algorithms.md 2.6): on a heartbeat the task scheduler
fills free slots with non-running tasks, then the speculation policy may back up running ones. The first
attempt of a task to finish wins; the others are killed (TaskInProgress, algorithms.md 2.5).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from functools import partial
from typing import TYPE_CHECKING

import numpy as np
from mesa.time import Priority

from hadoop_layer.attempts import AttemptRegistry
from hadoop_layer.ended import retire
from hadoop_layer.interfaces import (
    ClusterView,
    Launch,
    Periodic,
    Repartition,
    SlotAction,
    SlotManager,
    SpeculationPolicy,
    TaskScheduler,
)
from hadoop_layer.jvms import JvmPool, jvm_start, reused_start, start_s
from hadoop_layer.ledger import RunningLedger
from hadoop_layer.plans import (
    Route,
    cpu_for_runtime,
    map_plan,
    reduce_finish_plan,
    reduce_merge_plan,
    reduce_start_plan,
)
from hadoop_layer.repartition import check_shares, piece_specs, remaining_phases, with_scan
from hadoop_layer.speculation_outlook import LookAhead, outlook_of
from hadoop_layer.spill import ReduceMerge
from hadoop_layer.tasks import Job, JobState, Task, TaskAttempt, TaskKind, TaskState
from vcloud.work import ItemState, Kind, Phase

if TYPE_CHECKING:
    from hadoop_layer.model import HadoopModel
    from hadoop_layer.tracker import TaskTracker


_NOTHING = np.zeros(0)  # an ended job's map outputs by node: purged
_ENDED = (JobState.FAILED, JobState.KILLED)
_NO_OWN_MEMORY = (None, None)  # a job without its own heap and io.sort.mb (Job.own_memory): the slot's hold


def _lost(task: Task) -> bool:
    """An attempt of `task` heard of now is killed: another attempt of the task was heard of first (JobInProgress.
    completedTask: "Already completed TIP"), or a failure ended the job (which killed its running attempts)."""
    job = task.job
    return task.state == TaskState.DONE or job.state in _ENDED or job.final_state in _ENDED


class _PolicySlot:
    """A JobTracker attribute that holds a policy: setting it, before or after the start, also runs the new
    policy's `adjust` every `period_s` if it is `Periodic` (JobTracker.schedule_periodic), and gives a speculation
    policy's look-ahead the running attempts as arrays (hadoop_layer/speculation_outlook.py). Whether the policy is a
    `LookAhead` is kept beside it (`_<name>_looks_ahead`): an ABC's isinstance costs a Python call."""

    def __set_name__(self, owner: type, name: str) -> None:
        self.attr = f"_{name}"

    def __get__(self, jobtracker: JobTracker | None, owner: type | None = None):
        return self if jobtracker is None else getattr(jobtracker, self.attr)

    def __set__(self, jobtracker: JobTracker, policy) -> None:
        looks_ahead = isinstance(policy, LookAhead)
        setattr(jobtracker, self.attr, policy)
        setattr(jobtracker, f"{self.attr}_looks_ahead", looks_ahead)
        if looks_ahead:
            policy.entries = jobtracker.model.running_entries
        jobtracker.schedule_periodic()


class JobTracker:
    scheduler: TaskScheduler = _PolicySlot()  # type: ignore[assignment]
    speculation: SpeculationPolicy = _PolicySlot()  # type: ignore[assignment]
    slot_manager: SlotManager = _PolicySlot()  # type: ignore[assignment]
    _speculation_looks_ahead: bool  # the speculation policy is a LookAhead (set with it: _PolicySlot)

    def __init__(
        self, model: HadoopModel, scheduler: TaskScheduler, speculation: SpeculationPolicy, slot_manager: SlotManager
    ) -> None:
        self.model = model
        self._periodic: list[Periodic] = []  # policies whose adjust is scheduled (schedule_periodic)
        self.scheduler, self.speculation, self.slot_manager = scheduler, speculation, slot_manager
        self.view = ClusterView(model)
        self.jobs: list[Job] = []
        self.running_jobs: list[Job] = []  # changed only by _start_running / _stop_running
        self.ledger = RunningLedger()
        self.expected_jobs = 0
        self.attempts = AttemptRegistry(model.ended)
        self.capacity = {TaskKind.MAP: 0, TaskKind.REDUCE: 0}
        self.map_slot_freed = False  # since the last look: for SlotManager.idle_map_slot (HadoopModel.after_tick)
        # every reduce of a job fetches the same segments once its maps are done: one merge plan per (job, heap)
        self._finish_plans: dict[tuple[str, float], ReduceMerge] = {}  # a reduce's merges, by (job, heap)
        self._shuffle_writes: dict[tuple[str, float], float] = {}  # _shuffle_write_per_mb, by (job, heap)
        self._shuffling: dict[Job, np.ndarray] = {}  # _shuffling_rows by job, for the item table's layout ...
        self._shuffling_layout = -1  # ... of this number
        # Hadoop 1.x lifecycle (hadoop.job_setup_cleanup): jobs submitted but not in running_jobs (initializing,
        # waiting for or running their setup, or their cleanup), and setup/cleanup tasks waiting for a slot
        self.other_jobs: list[Job] = []
        self.lifecycle_queue: list[Task] = []
        self._calls: set[_Call] = set()
        self.jvms = JvmPool(model.hadoop.jvm_reuse_tasks)  # the trackers' child JVMs, while they are reused

    @property
    def running_attempts(self) -> dict[TaskKind, int]:
        """Running map and reduce attempts, by kind (not setup or cleanup attempts)."""
        return self.attempts.count

    def count_slots(self) -> None:
        """Cluster slot capacity, recounted whenever slots change."""
        trackers = self.model.trackers
        self.capacity = {
            TaskKind.MAP: sum(t.map_slots for t in trackers),
            TaskKind.REDUCE: sum(t.reduce_slots for t in trackers),
        }

    # ---- jobs ---------------------------------------------------------------------------------------
    def submit(self, job: Job) -> None:
        job.state, job.start_s = JobState.RUNNING, float(self.model.time)
        self.jobs.append(job)
        if self.model.hadoop.job_setup_cleanup:
            job.state = JobState.PREP
            self.other_jobs.append(job)
            init = job.init_s if job.init_s is not None else self.model.hadoop.job_init_s
            self.later(float(self.model.time) + init, partial(self._initialized, job))
            return
        self._start_running(job)
        if not job.maps and not job.reduces:
            self._job_done(job)
        self.wake_idle()

    def _start_running(self, job: Job) -> None:
        self.running_jobs.append(job)
        self.ledger.enter(job)

    def _stop_running(self, job: Job) -> None:
        self.running_jobs.remove(job)
        self.ledger.leave(job)

    def _job_done(self, job: Job, failed: bool = False, state: str | None = None) -> None:
        state = state or (JobState.FAILED if failed else JobState.SUCCEEDED)
        if failed or state != JobState.SUCCEEDED:
            for task in (*job.maps, *job.reduces):
                for attempt in list(task.active):
                    self.kill(attempt)
        if self.model.hadoop.job_setup_cleanup and job.final_state is None:
            self._cleanup(job, state)  # the job ends when its cleanup task is reported done
            return
        job.state, job.end_s = state, float(self.model.time)
        for node in np.flatnonzero(job.map_output_node_mb):  # the TaskTrackers purge the job's map outputs
            self.model.files.drop_map_output(int(node), float(job.map_output_node_mb[node]))
        job.map_output_node_mb = _NOTHING  # a row per node of every job of a long run adds up (issue 16)
        job.forget_pending()
        retire(job)  # its maps and reduces become rows (hadoop_layer/ended.py) when none of its attempts runs
        if job in self.running_jobs:
            self._stop_running(job)
        if job in self.other_jobs:
            self.other_jobs.remove(job)
        if not self.running_jobs and not self.other_jobs and len(self.jobs) == self.expected_jobs:
            self.model.stop()

    def kill_job(self, job: Job, state: str = JobState.KILLED) -> None:
        """End a job as killed (or failed) now: its attempts are killed; with the lifecycle its cleanup runs."""
        if job.state in (JobState.RUNNING, JobState.PREP) and job.final_state is None:
            self._job_done(job, state=state)

    # ---- Hadoop 1.x job lifecycle (hadoop.job_setup_cleanup) ------------------------------------------------
    # JobInProgress.initTasks makes a setup and a cleanup TIP per job; JobTracker.getSetupAndCleanupTasks hands
    # them out before the scheduler is asked, cleanups first, in a free map slot else a reduce slot, one per
    # heartbeat. A job is RUNNING once its setup is reported done, and ends when its cleanup is (HADOOP-3150).
    # Out-of-band heartbeats are off in Hadoop 1.x, so those reports come at the tracker's next heartbeat.
    def _initialized(self, job: Job) -> None:
        if job.state == JobState.PREP and job.final_state is None and not job.hold_setup:
            self._queue_lifecycle(job, "setup")

    def _queue_lifecycle(self, job: Job, role: str) -> None:
        task = Task(job, TaskKind.MAP, -1, 0.0)
        task.role = role
        job.lifecycle_task = task
        job.lifecycle_tasks.append(task)
        self.lifecycle_queue.append(task)
        self.wake_idle()

    def _cleanup(self, job: Job, state: str) -> None:
        """The job's end is decided: out of the scheduler's sight; its cleanup task is queued."""
        job.final_state = state
        if job in self.running_jobs:
            self._stop_running(job)
            self.other_jobs.append(job)
        setup = job.lifecycle_task
        if setup is not None and setup.role == "setup":
            if setup in self.lifecycle_queue:
                self.lifecycle_queue.remove(setup)
            for attempt in list(setup.active):
                self.kill(attempt)
        self._queue_lifecycle(job, "cleanup")

    def _report(self, tracker: TaskTracker, event, since: float | None = None) -> None:
        """Run `event` when `tracker` first heartbeats after `since` (default: now), before that heartbeat hands out
        tasks: what the tracker reports of an attempt that ended at `since`. At once if that heartbeat has gone by
        (the tick that found the end came after it), or with out-of-band heartbeats (`hadoop.outofband_heartbeat`:
        TaskTracker.notifyTTAboutTaskCompletion sends one on a task's end)."""
        now = float(self.model.time)
        if self.model.hadoop.outofband_heartbeat:
            event()
            return
        at = tracker.clock.next_beat(tracker.node, now if since is None else since)
        if at <= now:
            event()
            return
        self.later(at, event, Priority.HIGH)
        tracker.wake()  # that heartbeat happens even if the tracker has nothing else to ask for

    def later(self, at: float, fn: Callable[[], None], priority: Priority = Priority.DEFAULT) -> None:
        """Call `fn` at time `at` (Mesa keeps only weak references to event functions: this holds it)."""
        call = _Call(self._calls, fn)
        self._calls.add(call)
        self.model.schedule_event(call.fire, at=at, priority=priority)

    def _launch_lifecycle(self, tracker: TaskTracker) -> bool:
        """getSetupAndCleanupTasks: a free map slot, else a free reduce slot, takes a cleanup task, else a setup."""
        for kind in (TaskKind.MAP, TaskKind.REDUCE):
            if tracker.free(kind) <= 0:
                continue
            task = next((t for t in self.lifecycle_queue if t.role == "cleanup"), self.lifecycle_queue[0])
            self.lifecycle_queue.remove(task)
            task.kind, task.state, task.start_s = kind, TaskState.RUNNING, float(self.model.time)
            job, cfg, core = task.job, self.model.hadoop, self.model.hosts.core_mhz[tracker.vm.host.row]
            own = job.setup_s if task.role == "setup" else job.cleanup_s
            wait_s = max(own - start_s(cfg), 0.0) if own is not None else cfg.setup_cleanup_s
            jvm, phases = self._child_jvm(tracker, task, core)
            if wait_s > 0:
                phases.append(Phase.wait(task.role, wait_s))
            if not phases:
                phases.append(Phase.wait(task.role, 0.0))
            attempt = TaskAttempt(self.model, task, tracker, None, False, phases, [(0.0, 1.0)] * len(phases),
                                  tracker.heap_mb + cfg.jvm_overhead_mb)  # fmt: skip
            attempt.jvm = jvm
            self.attempts.add(attempt)
            self.model.start_item(attempt, tracker.vm)
            return True
        return False

    def _lifecycle_finished(self, attempt: TaskAttempt) -> None:
        task = attempt.task
        task.state, task.end_s, task.won = TaskState.DONE, attempt.end_s, self._release(attempt)
        self._report(attempt.tracker, partial(self._lifecycle_reported, task), since=attempt.end_s)

    def _lifecycle_reported(self, task: Task) -> None:
        job = task.job
        if task.role == "cleanup":
            self._job_done(job, state=job.final_state)
            return
        if job.final_state is not None:
            return
        job.state = JobState.RUNNING
        self.other_jobs.remove(job)
        self._start_running(job)
        if job.complete:  # no maps, no reduces: Hadoop runs the cleanup at once
            self._cleanup(job, JobState.SUCCEEDED)
        self.wake_idle()

    # ---- heartbeats ---------------------------------------------------------------------------------
    def heartbeat(self, tracker: TaskTracker) -> None:
        if self.lifecycle_queue and self._launch_lifecycle(tracker):
            return  # a heartbeat given a setup or cleanup task gets nothing else (getSetupAndCleanupTasks)
        if not self.running_jobs:
            return
        for launch in self.scheduler.assign(tracker, self.view):
            self.launch(tracker, launch)
        free_maps, free_reduces = tracker.free(TaskKind.MAP), tracker.free(TaskKind.REDUCE)
        if free_maps or free_reduces:
            for launch in self.speculation.backups(tracker, self.view, free_maps, free_reduces):
                if launch.task.kind in launch.task.job.no_speculation:
                    continue  # the job's conf forbids backups of this kind (JobInProgress.hasSpeculativeMaps)
                self.launch(tracker, launch)

    @property
    def quiet_when_idle(self) -> bool:
        """A heartbeat that can launch nothing changes nothing: both policies say so (TaskScheduler.quiet_when_idle; a
        speculation policy's `LookAhead`)."""
        return self.scheduler.quiet_when_idle and self._speculation_looks_ahead  # isinstance(.., LookAhead)

    def wants_heartbeat(self, tracker: TaskTracker) -> bool:
        """Is there anything this tracker's free slots could get? If not, it may skip heartbeats until woken."""
        free_maps, free_reduces = tracker.free(TaskKind.MAP), tracker.free(TaskKind.REDUCE)
        if self.lifecycle_queue and (free_maps or free_reduces):
            return True
        if not (free_maps or free_reduces) or not self.running_jobs:
            return False
        if free_maps and self.ledger.jobs_pending_maps:
            return True
        if free_reduces and self.ledger.jobs_ready_reduces:
            return True
        return self.speculation.may_back_up(self.view)

    def has_work(self, free_maps: bool, free_reduces: bool) -> bool:
        """A tracker with these free slots would get a task the scheduler may launch (`wants_heartbeat` before it asks
        the speculation policy; `beat_outlook`'s -inf)."""
        if not (free_maps or free_reduces):
            return False
        if self.lifecycle_queue:
            return True
        ledger = self.ledger
        return bool(self.running_jobs) and bool(
            (free_maps and ledger.jobs_pending_maps) or (free_reduces and ledger.jobs_ready_reduces)
        )

    def beat_outlook(self) -> tuple[bool, float, float, float]:
        """For the heartbeat clock's look-ahead (heartbeats.py), of the state as it is now: (whether a tracker with a
        free slot but nothing it could launch keeps heartbeating, i.e. `wants_heartbeat` past its tests of pending
        work; while it does not, until when; per kind, from when a tracker with a free slot of that kind may launch
        something: -inf if it may now, inf if never while nothing but the clock moves). A heartbeat that launches
        nothing changes nothing (`quiet_when_idle`), so beats before any that may launch differ only in these."""
        inf = math.inf
        if self.lifecycle_queue:
            return True, inf, -inf, -inf  # any free slot takes a setup or cleanup task
        if not self.running_jobs:
            return False, inf, inf, inf
        outlook = outlook_of(self.speculation, self.view)
        ledger = self.ledger
        map_from = -inf if ledger.jobs_pending_maps else outlook.map_from
        reduce_from = -inf if ledger.jobs_ready_reduces else outlook.reduce_from
        return outlook.may_back_up, outlook.until, map_from, reduce_from

    def wake_idle(self) -> None:
        """New work appeared (a submission, a requeued task, reduces allowed, a backup possible)."""
        self.model.heartbeat_clock.wake_free()

    def launch(self, tracker: TaskTracker, launch: Launch) -> TaskAttempt:
        task, job, model = launch.task, launch.task.job, self.model
        now = float(model.time)  # (an observable of Mesa's: read once)
        if tracker.free(task.kind) <= 0:
            raise RuntimeError(f"{self.scheduler.name}/{self.speculation.name} launched {task} on full {tracker}")
        running = task.state == TaskState.RUNNING
        if launch.speculative != running or task.state not in (TaskState.PENDING, TaskState.RUNNING):
            raise RuntimeError(f"cannot launch {task} in state {task.state} (speculative={launch.speculative})")
        cfg, core = model.hadoop, model.hosts.core_mhz.item(tracker.vm.host.row)  # a float: its products are too
        own_heap, own_sort = job.own_memory.get(task.kind, _NO_OWN_MEMORY) if job.own_memory else _NO_OWN_MEMORY
        heap = launch.heap_mb if launch.heap_mb is not None else own_heap or tracker.heap_mb
        io_sort = launch.io_sort_mb if launch.io_sort_mb is not None else own_sort or tracker.io_sort_mb
        if not 0 < io_sort < heap:
            raise ValueError(f"slot memory: need 0 < io_sort_mb < heap_mb, got {io_sort} / {heap}")
        mem = heap + cfg.jvm_overhead_mb
        if task.replay and not launch.speculative:
            return self._launch_replayed(tracker, launch, mem, heap, io_sort)
        if task.kind == TaskKind.MAP:
            locality = model.locality_of(task, tracker.node)
            route = self._route(tracker, task, not job.reduces, now)
            jvm, head = self._child_jvm(tracker, task, core)
            phases, marks, spills, out_mb = map_plan(task, locality, io_sort, cfg, core, len(job.reduces), route, head)
            if task.ready_s > now:  # its input is not there yet (a repartitioned map's piece)
                phases, marks = (
                    [Phase.wait("input-ready", task.ready_s - now), *phases],
                    [(0.0, 0.0), *marks],
                )
            attempt = TaskAttempt(
                model, task, tracker, locality, launch.speculative, phases, marks, mem, spills, out_mb
            )
        else:
            available = model.shuffle.available_mb(job)
            write_per_mb = self._shuffle_write_per_mb(job, heap)
            route = self._route(tracker, task, True, now)
            jvm, head = self._child_jvm(tracker, task, core)
            phases, marks = reduce_start_plan(available, cfg, core, write_per_mb, route.scratch_file, head)
            attempt = TaskAttempt(model, task, tracker, None, launch.speculative, phases, marks, mem)
            attempt.shuffle_index = k = len(phases) - 1
            attempt.shuffle_write_per_mb = write_per_mb if phases[k].kind == Kind.PIPE else 0.0
            attempt.progress_marks[k] = (0.0, job.finished_maps / len(job.maps) / 3.0)
        if cfg.task_failure_probability and model.rng.random() < cfg.task_failure_probability:
            attempt.fail_fraction = float(model.rng.random())
            if task.kind == TaskKind.MAP:
                attempt.place_failure()  # a reduce's is placed when its plan is complete (_finish_shuffle)
        attempt.heap_mb, attempt.io_sort_mb, attempt.route, attempt.jvm = heap, io_sort, route, jvm
        self.attempts.add(attempt)
        if tracker.node not in task.nodes_tried:
            task.nodes_tried += (tracker.node,)
        if task.start_s is None:
            task.start_s = now
        job.set_state(task, TaskState.RUNNING)
        model.start_item(attempt, tracker.vm)
        if task.kind == TaskKind.REDUCE:
            model.shuffle.add_reduce(attempt)
        if task.kind == TaskKind.REDUCE and job.finished_maps == len(job.maps):
            self._finish_shuffle(attempt)
        return attempt

    def _launch_replayed(self, tracker: TaskTracker, launch: Launch, mem: float, heap: float, io_sort: float):
        """A recorded attempt that failed or was killed (trace replay): JVM start, then CPU for the rest of its
        recorded runtime on an uncontended core, then it fails or is killed (`Task.replay`)."""
        task, model = launch.task, self.model
        (result, runtime_s), task.replay = task.replay[0], task.replay[1:]
        cfg, core = model.hadoop, model.hosts.core_mhz.item(tracker.vm.host.row)
        jvm, phases = self._child_jvm(tracker, task, core)
        marks = [(0.0, 0.0)] * len(phases)
        if runtime_s > start_s(cfg) or not phases:
            phases.append(Phase.cpu("work", max(runtime_s - start_s(cfg), 0.0) * core))
            marks.append((0.0, 0.5))
        locality = model.locality_of(task, tracker.node) if task.kind == TaskKind.MAP else None
        attempt = TaskAttempt(model, task, tracker, locality, False, phases, marks, mem)
        attempt.fail_fraction, attempt.replayed = 1.0, result  # fails (or is killed) after its whole plan
        attempt.heap_mb, attempt.io_sort_mb, attempt.jvm = heap, io_sort, jvm
        self.attempts.add(attempt)
        if tracker.node not in task.nodes_tried:
            task.nodes_tried += (tracker.node,)
        if task.start_s is None:
            task.start_s = float(model.time)
        task.job.set_state(task, TaskState.RUNNING)
        model.start_item(attempt, tracker.vm)
        return attempt

    def _child_jvm(self, tracker: TaskTracker, task: Task, core_mhz: float) -> tuple[object, list[Phase]]:
        """The child JVM a task launched now on `tracker` runs in (JvmManager.reapJvm, hadoop_layer/jvms.py) and the
        phases at the head of its attempt: a new JVM's start, or a reused one's wait for its getTask poll."""
        model, kind = self.model, task.kind
        now = float(model.time)
        slots = tracker.map_slots if kind == TaskKind.MAP else tracker.reduce_slots
        jvm, reused = self.jvms.take(tracker.node, kind, task.job, slots)
        if reused:
            return jvm, reused_start(model.hadoop, jvm.idle_since, now, model.dt)
        return jvm, jvm_start(model.hadoop, core_mhz, now, model.dt)

    def _route(self, tracker: TaskTracker, task: Task, write: bool, now: float) -> Route:
        """Where an attempt of `task` on `tracker` reads its split from, the local files it writes, and where its
        HDFS output goes (datanode.py, localfiles.py). Files are made in this order: the split's replica (on its first
        read), then the attempt's scratch file."""
        model = self.model
        datanodes, files = model.datanodes, model.files
        vm, node, serving = tracker.vm.row, tracker.node, datanodes.serving
        source, source_file, mapout = -1, -1, -1
        if task.kind == TaskKind.MAP:
            source = datanodes.read_source(task.replicas, node)
            source_file = files.block(task.gid, vm if source < 0 else source, task.input_mb, now)
            mapout = files.map_output[node]
        pipeline, pipeline_files, hops = (), (), ()  # no HDFS output (a map with reduces), or no DataNodes serving
        if write and serving:
            pipeline = tuple(datanodes.write_pipeline(node, model.rng))
            pipeline_files = tuple([files.output_file(v) for v in pipeline])
            hops = tuple([datanodes.crosses_racks(a, b) for a, b in zip((vm, *pipeline), pipeline, strict=False)])
        return Route(source, pipeline, serving, source_file, files.scratch(vm, now), mapout, files.output_file(vm),
                     pipeline_files, datanodes.crosses_racks(source, vm), hops)  # fmt: skip

    def _shuffle_write_per_mb(self, job: Job, heap_mb: float) -> float:
        """MB a reduce of `job` writes to disk per MB it fetches (its merges during the shuffle), estimated at
        launch from the maps' planned output; the finish plan writes what this leaves out (_finish_shuffle)."""
        key = (job.job_id, heap_mb)
        if key not in self._shuffle_writes:
            n, combine = len(job.reduces), job.profile.combine_ratio
            merge = reduce_merge_plan([t.output_mb * combine / n for t in job.maps], heap_mb, self.model.hadoop)
            self._shuffle_writes[key] = merge.disk_write_mb / merge.shuffle_mb if merge.shuffle_mb > 0 else 0.0
        return self._shuffle_writes[key]

    # ---- endings ------------------------------------------------------------------------------------
    def attempt_finished(self, attempt: TaskAttempt) -> None:
        """Called by the cloud when an attempt's last phase ends. On its TaskTracker the end is at once: its child JVM
        idles or exits, its local scratch files go, a reduce's shuffle queues are dropped. The JobTracker hears of it
        in the tracker's next heartbeat (Hadoop 1.x's out-of-band heartbeats are off: `hadoop.outofband_heartbeat`),
        before that heartbeat hands out tasks: until then the attempt holds its slot and its task runs, to the
        schedulers, the speculation policy and the job's counts (its progress reads 1.0)."""
        task = attempt.task
        # its child JVM idles (or exits) now, on the TaskTracker (JvmManager.taskFinished)
        self.jvms.ended(attempt.tracker.node, task.kind, attempt.jvm, not attempt.will_fail, attempt.end_s)
        if task.role:
            self._lifecycle_finished(attempt)
            return
        if attempt.route is not None:
            self.model.files.delete(attempt.route.scratch_file)  # its spills or merge files
            attempt.route = None
        if task.kind == TaskKind.REDUCE:
            self.model.shuffle.drop_reduce(attempt)  # (a reduce that failed in its shuffle: what it had to fetch)
        self._report(attempt.tracker, partial(self._attempt_reported, attempt), since=attempt.end_s)

    @staticmethod
    def reported_state(attempt: TaskAttempt) -> ItemState:
        """The final state of a map or reduce attempt that has ended on its tracker (`TaskAttempt.unheard`), as its
        report to the JobTracker (`_attempt_reported`, at the tracker's next heartbeat) records it, as far as is known
        now: killed if its task or its job is over before the report (`_lost`) or it replays a recorded kill (e.g. a
        lost tracker: retried, not counted as a failure), failed if it fails, else done. What the tables and the
        dashboard show of an attempt between its end on its node and that report (until then the cloud has it done)."""
        if _lost(attempt.task) or (attempt.will_fail and attempt.replayed == "KILLED"):
            return ItemState.KILLED
        return ItemState.FAILED if attempt.will_fail else attempt.state

    def _attempt_reported(self, attempt: TaskAttempt) -> None:
        """The JobTracker hears that `attempt` ended (JobTracker.updateTaskStatuses, at a heartbeat)."""
        task = attempt.task
        job = task.job
        lost = _lost(task)
        fails = attempt.will_fail
        killed = fails and attempt.replayed == "KILLED"
        attempt.state = self.reported_state(attempt)  # its final state before its release records it (EndedAttempts)
        row = self._release(attempt)
        if lost:
            task.kill_count += 1
            if job.state in _ENDED or job.state == JobState.SUCCEEDED:
                retire(job)  # (its last attempt was this one, unreported when the job ended)
            return
        if killed:
            task.kill_count += 1
            if not task.active:
                job.set_state(task, TaskState.PENDING)
                self.wake_idle()
            return
        if fails:
            task.failures += 1
            if task.failures >= self.model.hadoop.max_attempts:
                job.set_state(task, TaskState.FAILED)
                self._job_done(job, failed=True)
            elif not task.active:
                job.set_state(task, TaskState.PENDING)
                self.wake_idle()
            return
        task.won, task.end_s = row, attempt.end_s
        job.set_state(task, TaskState.DONE)
        for other in list(task.active):
            self.kill(other)
        if task.kind == TaskKind.MAP:
            out, node = attempt.output_mb, attempt.tracker.node
            task.output_mb_final = out
            job.map_output_done_mb += out
            job.map_output_node_mb[node] += out
            if job.reduces:
                self._feed_reduces(job, out, node)
                if job.finished_maps == job.slowstart_maps:
                    self.wake_idle()  # reduces may start now
        if job.complete and job.state == JobState.RUNNING and job.final_state is None:
            if self.model.hadoop.job_setup_cleanup:
                self._cleanup(job, JobState.SUCCEEDED)
            else:
                self._job_done(job)

    def kill(self, attempt: TaskAttempt) -> None:
        """Kill a running attempt: its work is lost; the task goes back to pending if nothing else runs it."""
        if attempt.state != ItemState.RUNNING:
            return
        self.model.stop_item(attempt, ItemState.KILLED)
        self.jvms.ended(attempt.tracker.node, attempt.task.kind, attempt.jvm, False, float(self.model.time))
        self._release(attempt)
        task = attempt.task
        if task.role:
            task.state = TaskState.KILLED
            return
        task.kill_count += 1
        if not task.active and task.state == TaskState.RUNNING:
            task.job.set_state(task, TaskState.PENDING)
            self.wake_idle()

    def _release(self, attempt: TaskAttempt) -> int:
        """Free an ended attempt's slot and files; it is recorded in the `ended` columns (its row is returned)."""
        task, tracker = attempt.task, attempt.tracker
        if attempt.route is not None:
            self.model.files.delete(attempt.route.scratch_file)  # its spills or merge files
        row = self.attempts.remove(attempt)
        model = self.model
        entries = model.running_entries
        if not task.role:  # a setup or cleanup attempt is not a map or reduce to the policies
            entries.ending.pop(attempt, None)
            if task.kind == TaskKind.MAP:
                self.map_slot_freed = True
            else:
                model.shuffle.drop_reduce(attempt)
        entries.releasing = task  # still in its state, maybe with no attempt left (RunningEntries.arrays)
        try:
            if self.wants_heartbeat(tracker):
                tracker.wake()
        finally:
            entries.releasing = None
        attempt.route = None  # its files are deleted or handed on: where they were matters no more
        attempt.settle()
        return row

    # ---- shuffle --------------------------------------------------------------------------------------
    def _feed_reduces(self, job: Job, map_output_mb: float, node: int) -> None:
        """A map finished on `node`: every running reduce of the job can fetch its partition of the output.

        A reduce's shuffle is an open phase (vcloud `Phase.open`): each map output adds to it, and it ends only
        after the last map's output has been added and fetched. How outputs reach it is the model's shuffle mode
        (hadoop_layer/shuffle.py): at once (`DirectShuffle`), or through the serving TaskTrackers' queues
        (`ShuffleServer`, with `shuffle_serving`), which add them to the shuffle as they are sent.
        """
        finished, maps = job.finished_maps, len(job.maps)
        share = map_output_mb / len(job.reduces)  # the job has reduces (attempt_finished)
        last = finished == maps
        copied = finished / maps / 3.0  # the copy third of a reduce's progress
        shuffle = self.model.shuffle
        shuffle.map_done(job, node, share)
        rows = self._shuffling_rows(job)
        if len(rows) < len(job.reduce_attempts):
            for attempt in job.reduce_attempts:
                if attempt.row is not None and attempt.phase_index < attempt.shuffle_index:
                    shuffle.grow_planned(attempt, share)
                    attempt.progress_marks[attempt.shuffle_index] = (0.0, copied)
        if len(rows):
            shuffle.grow_running(rows, share)
            self.model.set_progress_rows(rows, copied)
        if last:
            for attempt in list(job.reduce_attempts):
                if attempt.row is not None:
                    self._finish_shuffle(attempt)

    def _shuffling_rows(self, job: Job) -> np.ndarray:
        """Item rows of the job's running reduce attempts past their JVM start, in `reduce_attempts` order (one whose
        row is None ended in this tick, a failure, its end not yet processed).

        Kept while the item table's `layout` stands: a row moves, a phase changes and an attempt starts only with a
        new layout, and an attempt leaves `reduce_attempts` after it lost its row. The maps of a job often end in
        the same tick, in a burst of ends that changes no row (a SWIM day: 12 feeds of 13 reuse the rows, each
        the job's hundred or so reduce attempts)."""
        layout = self.model.items.layout
        if layout != self._shuffling_layout:
            self._shuffling, self._shuffling_layout = {}, layout
        rows = self._shuffling.get(job)
        if rows is None:
            shuffling = [a.row for a in job.reduce_attempts if a.row is not None and a.phase_index >= a.shuffle_index]
            rows = self._shuffling[job] = np.array(shuffling, dtype=np.int64)
        return rows

    def _finish_shuffle(self, attempt: TaskAttempt) -> None:
        """All map outputs are known: close the shuffle and plan the merges, the reduce and the output.

        A replayed reduce (`Task.min_shuffle_s`, trace replay) holds its shuffle open until its recorded shuffle time
        after the attempt's start has passed: its shuffle ends when both its fetches and that time are done."""
        job = attempt.task.job
        key = (job.job_id, attempt.heap_mb)
        if key not in self._finish_plans:
            n = len(job.reduces)
            segments = [t.output_mb_final / n for t in job.maps]
            self._finish_plans[key] = reduce_merge_plan(segments, attempt.heap_mb, self.model.hadoop)
        merge = self._finish_plans[key]
        written = attempt.shuffle_write_per_mb * merge.shuffle_mb
        task, cfg = attempt.task, self.model.hadoop
        own_cpu = task.cpu_mc if task.cpu_mc > 0 else None  # a replayed trace's CPU, else the profile's per MB
        if task.after_shuffle_s is not None:  # a replayed runtime: the CPU that makes the rest take it, alone
            plan = reduce_finish_plan(merge, task, cfg, attempt.route, written, reduce_cpu_mc=0.0)[0]
            host = self.model.hosts
            h = int(attempt.tracker.vm.host.row)
            own_cpu = cpu_for_runtime(plan, "reduce", task.after_shuffle_s, float(host.core_mhz[h]),
                                      float(host.disk_mbps[h]), float(host.nic_mbps[h]))  # fmt: skip
        phases, marks, input_mb, out_mb = reduce_finish_plan(merge, task, cfg, attempt.route, written, own_cpu)
        attempt.task.input_mb, attempt.output_mb = input_mb, out_mb
        after = attempt.shuffle_index + 1
        attempt.phases = attempt.phases[:after] + phases
        attempt.progress_marks = attempt.progress_marks[:after] + marks
        attempt.place_failure()
        floor = task.min_shuffle_s
        if floor is not None and attempt.start_s + floor > float(self.model.time):
            # a replayed reduce whose recorded shuffle ends later: its fetcher stays open (idle once it has every
            # output) until the first tick at or after that end, when a drained shuffle phase ends
            dt = self.model.dt
            self.later(math.ceil((attempt.start_s + floor) / dt - 1e-9) * dt, partial(self._close_held, attempt))
            return
        self.model.shuffle.close(attempt)

    def _close_held(self, attempt: TaskAttempt) -> None:
        """A held shuffle's recorded end has come (`Task.min_shuffle_s`): close it, unless the attempt ended since
        (killed, or failed: its shuffle was dropped)."""
        if attempt.row is not None and attempt.state == ItemState.RUNNING:
            self.model.shuffle.close(attempt)

    # ---- slot manager ---------------------------------------------------------------------------------
    def periodic_policies(self) -> list[Periodic]:
        """The current policies that act between heartbeats (`Periodic` with a period), each once."""
        found: list[Periodic] = []
        for policy in (self.slot_manager, self.scheduler, self.speculation):
            if isinstance(policy, Periodic) and policy.period_s and policy not in found:
                found.append(policy)
        return found

    def schedule_periodic(self) -> None:
        """Run each periodic policy's `adjust` every `period_s` from the start (or from when it is set, at the next
        multiple of its period). A policy that is replaced stops acting; set again, it is not scheduled twice."""
        if not self.model.started:
            return  # HadoopModel.start calls this once the clock runs
        for policy in self.periodic_policies():
            if policy not in self._periodic:
                self._periodic.append(policy)
                self.model.every(policy.period_s, partial(self._periodic_adjust, policy))

    def _periodic_adjust(self, policy: Periodic) -> None:
        if policy in (self.slot_manager, self.scheduler, self.speculation):
            self.adjust(policy)

    def adjust(self, policy: Periodic) -> None:
        if not self.running_jobs:
            return
        for action in policy.adjust(self.view):
            self.apply(action)

    def idle_map_slots(self) -> None:
        """A map slot freed in this tick: if one now idles (no running job has a pending map), tell the slot manager."""
        self.map_slot_freed = False
        if not self.running_jobs or any(j.pending_maps for j in self.running_jobs):
            return
        if any(t.free(TaskKind.MAP) for t in self.model.trackers):
            for action in self.slot_manager.idle_map_slot(self.view):
                self.apply(action)

    def apply(self, action: SlotAction) -> None:
        """Carry out a slot action: each kind knows how (interfaces.py), through this JobTracker's verbs."""
        action.apply(self)

    # ---- repartitioning ------------------------------------------------------------------------------
    def repartition(self, action: Repartition) -> list[Task]:
        """Stop a running map at its input offset; its unprocessed input becomes new maps (repartition.py).

        Ignored if the attempt no longer runs, or its task was stopped before (a map is stopped at most once; its
        pieces may be in turn). Returns the new map tasks in range order."""
        attempt = action.attempt
        task, job, model = attempt.task, attempt.task.job, self.model
        if attempt.state != ItemState.RUNNING or task.kind != TaskKind.MAP or task.state != TaskState.RUNNING:
            return []
        if task.children:
            return []
        if action.scan_mb < 0 or action.delay_s < 0:
            raise ValueError(f"repartition: scan_mb and delay_s must be >= 0, got {action.scan_mb}, {action.delay_s}")
        for other in list(task.active):
            if other is not attempt:
                self.kill(other)
        offset = attempt.input_done_mb
        if offset >= task.input_mb:
            return []  # nothing left to hand over
        pieces = check_shares(task.task_id, action.shares, task.input_mb - offset)
        node = attempt.tracker.node
        specs = piece_specs(task, pieces, node)
        old, index = list(attempt.phases), attempt.phase_index
        done = old[index].amount - float(model.items.remaining[attempt.row])
        task.truncate(offset)
        core = model.hosts.core_mhz[attempt.tracker.vm.host.row]
        head = [p for p in old if p.name.startswith("setup")]  # its JVM's phases, as they were (done, mostly)
        plan, marks, spills, out_mb = map_plan(
            task, attempt.locality, attempt.io_sort_mb, model.hadoop, core, len(job.reduces), attempt.route, head
        )
        phases, marks = remaining_phases(old, index, done, plan, marks)
        phases, marks = with_scan(phases, marks, action.scan_mb, attempt.route)
        model.replan(attempt, phases, marks)
        attempt.spills, attempt.output_mb = spills, out_mb
        order = list(action.order) if action.order is not None else list(range(len(pieces)))
        new = job.add_maps(specs, order)
        start = task.offset_mb + offset
        for piece, mb in zip(new, pieces, strict=True):
            piece.parent, piece.offset_mb, piece.ready_s = task, start, float(model.time) + action.delay_s
            start += float(mb)
        task.children = [*task.children, *new]
        self.wake_idle()
        return new


class _Call:
    """A scheduled call, kept alive by its owner's set until it fires."""

    def __init__(self, owner: set, fn: Callable[[], None]) -> None:
        self.owner, self.fn = owner, fn

    def fire(self) -> None:
        self.owner.discard(self)
        self.fn()
