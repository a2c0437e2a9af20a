"""LATE: Longest Approximate Time to End (Zaharia et al., OSDI 2008; algorithms.md 3), and the skeleton SAMR shares.

On a heartbeat with a free slot, while fewer than SpeculativeCap backups run (3.1): ignore a slow node; among
running tasks not yet backed up whose progress rate is below SlowTaskThreshold, back up the one with the longest
estimated time to end, (1 - progress) / progress rate, on a node that never ran it.

- thresholds "percentile" (the paper, 3.1): slow node = below the 25th percentile of node scores, slow task =
  below the 25th percentile of its job's task progress rates (of that kind).
- thresholds "stddev" (Hadoop 0.21, 3.2): slow = more than k standard deviations below the mean (k = 1).
- node score: the paper's total work performed, the sum of progress scores of the node's succeeded and
  running attempts ("work"); or the sum of its judged running attempts' progress rates ("rate"); or, with
  `use_history`, its speed per kind: the mean progress rate of its finished attempts (1 / runtime, from
  `ClusterView.ended_since`) and running ones.
- `history_weights`: "LATE with history" as SAMR's evaluation means it (Fig. 9): LATE's rules on progress scores
  by SAMR's per-node historical stage weights (`samr.LateWithHistory`, built by the registry).

Choices the sources leave open (the named ones are settings; `BackupSettings` holds those SAMR shares):
- the cap is per kind, of that kind's slots, at least `min_cap` (10 % of a small cluster's slots is 0;
  Hadoop 0.21 has a floor of 10, MIN_SPEC_CAP); at most one backup per kind per heartbeat (JobQueueTaskScheduler).
- attempts younger than `min_runtime_s` (60 s, Hadoop 0.21's SPECULATIVE_LAG) are neither backed up nor counted
  in the statistics: their rates are noise (JVM setup shows no progress).
- a job's finished tasks count in its task statistics (rate 1 / runtime), so that the last stragglers of a job,
  once alone, still look slow (`include_finished`).
- a job's tasks are backed up only once it has no pending tasks of that kind (Hadoop searches running tasks after
  non-running ones, 2.5); reduces only once the job's maps are done (`reduces_after_maps`: during the shuffle a
  reduce's progress is the maps' progress, 2.4, and says nothing of its node); never at progress 1 (a Hadoop 1.x
  map spilling or merging, whose estimate is 0).
- `only_if_faster` (off for LATE): back up only tasks whose time to end exceeds the mean runtime of the job's
  finished tasks of that kind, i.e. that a fresh copy could beat.
"""

from __future__ import annotations

import math
from collections import defaultdict
from typing import Literal

import numpy as np
from pydantic import BaseModel, ConfigDict, Field

from hadoop_layer.interfaces import ClusterView, Launch, SpeculationPolicy
from hadoop_layer.tasks import Job, JobState, Task, TaskAttempt, TaskKind, TaskState
from hadoop_layer.tracker import TaskTracker
from vcloud.work import ItemState

Rule = Literal["percentile", "stddev"]


class BackupSettings(BaseModel):
    """What LATE and SAMR share: which attempts are judged at all (module docstring)."""

    model_config = ConfigDict(extra="forbid")
    min_runtime_s: float = Field(60.0, ge=0, description="attempts younger than this are not judged")
    include_finished: bool = Field(True, description="finished tasks count in the task-rate statistics")
    reduces_after_maps: bool = Field(True, description="judge reduces only once their job's maps are all done")
    only_if_faster: bool = Field(
        False, description="back up only tasks whose time to end exceeds the job's mean finished-task runtime"
    )


class LateSettings(BackupSettings):
    thresholds: Rule = Field("percentile", description="paper's percentiles (3.1) or Hadoop 0.21's std devs (3.2)")
    speculative_cap: float = Field(0.1, ge=0, le=1, description="SpeculativeCap: share of a kind's slots (3.1)")
    min_cap: int = Field(1, ge=0, description="the cap is at least this many backups per kind")
    slow_node_percentile: float = Field(25.0, ge=0, le=100, description="SlowNodeThreshold (3.1)")
    slow_task_percentile: float = Field(25.0, ge=0, le=100, description="SlowTaskThreshold (3.1)")
    slow_node_std: float = Field(1.0, ge=0, description="stddev rule: slownodethreshold (3.2)")
    slow_task_std: float = Field(1.0, ge=0, description="stddev rule: slowtaskthreshold (3.2)")
    node_measure: Literal["work", "rate"] = Field("work", description="node score without history")
    use_history: bool = Field(False, description="node score: the node's speed from its finished attempts")
    history_weights: bool = Field(
        False, description='"LATE with history" of SAMR Fig. 9: progress by SAMR\'s per-node stage weights'
    )
    history_pro: float = Field(0.2, ge=0, le=1, description="HP of the stage weights with history_weights (samr.py)")


def rate(attempt: TaskAttempt, now: float, progress: float | None = None) -> float:
    """Progress score per second since the attempt started (3.1: PR = PS / T)."""
    elapsed = now - (attempt.start_s if attempt.start_s is not None else now)
    score = attempt.progress_score if progress is None else progress
    return score / elapsed if elapsed > 0 else 0.0


def time_to_end(progress: float, progress_rate: float) -> float:
    """(1 - PS) / PR (3.1); infinite before any progress."""
    return (1.0 - progress) / progress_rate if progress_rate > 0 else math.inf


def slow_mask(values: np.ndarray, rule: Rule, percentile: float, std_k: float) -> np.ndarray:
    """Which values are slow: below the percentile (linear interpolation), or more than std_k population std devs
    below the mean (Hadoop 0.21: mean - value > std x k). Equal values are never slow."""
    values = np.asarray(values, dtype=float)
    if len(values) == 0:
        return np.zeros(0, dtype=bool)
    if rule == "percentile":
        return values < np.percentile(values, percentile)
    return values.mean() - values > values.std() * std_k


def cap(slots: int, fraction: float, minimum: int) -> int:
    """Most backups of a kind running at once: fraction x slots, at least `minimum`."""
    return max(math.floor(fraction * slots + 1e-9), minimum)


class TimeToEndSpeculation(SpeculationPolicy):
    """Skeleton of LATE and SAMR: per tick, rank each kind's slow tasks by time to end and find the slow trackers;
    on a heartbeat, back up the first ranked task the tracker never ran, unless it is slow or the cap is reached."""

    def __init__(self, settings: BackupSettings) -> None:
        self.min_runtime_s, self.include_finished = settings.min_runtime_s, settings.include_finished
        self.reduces_after_maps, self.only_if_faster = settings.reduces_after_maps, settings.only_if_faster
        self._state_at = -1
        self._state: dict[TaskKind, tuple[list[Task], set[TaskTracker]]] = {}
        self._scores: dict[TaskAttempt, float] = {}
        self._seen = 0  # ended attempts already absorbed (ClusterView.ended_since)
        self._job_rates: dict[Job, dict[TaskKind, list[float]]] = defaultdict(lambda: defaultdict(list))
        self._node_done: dict[TaskTracker, int] = defaultdict(int)
        self._node_rates: dict[tuple[TaskTracker, TaskKind], list[float]] = defaultdict(lambda: [0.0, 0])

    # ---- hooks ----------------------------------------------------------------------------------------
    def progress(self, attempt: TaskAttempt) -> float:
        return attempt.progress_score

    def slow_tasks(self, rates: np.ndarray) -> np.ndarray:
        """Which of a job's task progress rates (of one kind: running, then finished ones) are slow."""
        raise NotImplementedError

    def slow_trackers(self, cluster: ClusterView, kind: TaskKind) -> set[TaskTracker]:
        raise NotImplementedError

    def max_backups(self, cluster: ClusterView, kind: TaskKind) -> int:
        raise NotImplementedError

    def absorb(self, attempt: TaskAttempt) -> None:
        """A finished (done) attempt seen for the first time."""

    # ---- what both share ------------------------------------------------------------------------------
    def may_back_up(self, cluster: ClusterView) -> bool:
        """Some tracker with a free slot, not slow, could back up some ranked task now.

        A kind with schedulable pending tasks is skipped: trackers with a free slot of that kind heartbeat anyway
        (JobTracker.wants_heartbeat), and `backups` still runs on those heartbeats; this spares a ranking per tick."""
        for kind in TaskKind:
            capacity = cluster.map_capacity() if kind == TaskKind.MAP else cluster.reduce_capacity()
            if cluster.running(kind) >= capacity or _pending(cluster, kind):
                continue
            if self._speculating(cluster, kind) >= self.max_backups(cluster, kind):
                continue
            ranking, slow = self._tick_state(cluster, kind)
            for tracker in cluster.trackers:
                if ranking and tracker.free(kind) and tracker not in slow and _first(ranking, tracker) is not None:
                    return True
        return False

    def backups(self, tracker: TaskTracker, cluster: ClusterView, free_maps: int, free_reduces: int) -> list[Launch]:
        launches = []
        for kind, free in ((TaskKind.MAP, free_maps), (TaskKind.REDUCE, free_reduces)):
            if free <= 0 or self._speculating(cluster, kind) >= self.max_backups(cluster, kind):
                continue
            ranking, slow = self._tick_state(cluster, kind)
            task = None if tracker in slow else _first(ranking, tracker)
            if task is not None:
                launches.append(Launch(task, cluster.locality(task, tracker) if kind == TaskKind.MAP else None, True))
        return launches

    @staticmethod
    def _speculating(cluster: ClusterView, kind: TaskKind) -> int:
        return sum(a.speculative for t in cluster.trackers for a in t.running[kind])

    def _tick_state(self, cluster: ClusterView, kind: TaskKind) -> tuple[list[Task], set[TaskTracker]]:
        """A kind's ranking and slow trackers, computed at most once per tick: progress moves only with the cloud's
        ticks, and whatever ends between ticks is filtered out when a ranking is used (`_first`)."""
        tick = cluster.trackers[0].model.ticks if cluster.trackers else -1
        if tick != self._state_at:
            self.read_history(cluster)
            self._state, self._scores, self._state_at = {}, {}, tick
        found = self._state.get(kind)
        if found is None:
            ranking = self._ranking(cluster, kind)
            found = self._state[kind] = (ranking, self.slow_trackers(cluster, kind) if ranking else set())
        return found

    def judged(self, attempt: TaskAttempt, now: float) -> bool:
        """Has the attempt run long enough for its rate to mean something?"""
        return attempt.start_s is not None and now - attempt.start_s >= self.min_runtime_s

    def score(self, attempt: TaskAttempt) -> float:
        """`progress`, memoised for the tick."""
        found = self._scores.get(attempt)
        if found is None:
            found = self._scores[attempt] = self.progress(attempt)
        return found

    def read_history(self, cluster: ClusterView) -> None:
        """Take in the attempts that ended since the last call, tracker by tracker (`ClusterView.ended_since`)."""
        for attempt in cluster.ended_since(self._seen):
            if attempt.state == ItemState.DONE and attempt.end_s is not None and attempt.start_s is not None:
                runtime = attempt.end_s - attempt.start_s
                if runtime > 0:
                    kind, tracker = attempt.task.kind, attempt.tracker
                    self._job_rates[attempt.task.job][kind].append(1.0 / runtime)
                    self._node_done[tracker] += 1
                    total = self._node_rates[(tracker, kind)]
                    total[0] += 1.0 / runtime
                    total[1] += 1
                self.absorb(attempt)
        self._seen = cluster.ended_count()
        for job in [j for j in self._job_rates if j.state != JobState.RUNNING]:
            del self._job_rates[job]

    def _ranking(self, cluster: ClusterView, kind: TaskKind) -> list[Task]:
        """Slow tasks of every job, longest time to end first (3.1 step 2-3). Jobs with pending tasks of the kind
        are skipped (Hadoop backs up a job's tasks only after its non-running ones, 2.5), and so are reduces while
        maps run (`reduces_after_maps`), as are tasks at progress 1 (nothing left to estimate)."""
        now, ranked = cluster.now, []
        for job in cluster.jobs:
            if job.count(kind, TaskState.PENDING) or (
                kind == TaskKind.REDUCE and self.reduces_after_maps and job.finished_maps < len(job.maps)
            ):
                continue
            tasks, rates, ends = [], [], []
            for task in job.running_tasks[kind]:
                attempts = [a for a in task.active if self.judged(a, now)]
                if not attempts:
                    continue
                best_rate, progress = max((rate(a, now, self.score(a)), self.score(a)) for a in attempts)
                tasks.append(task)
                rates.append(best_rate)
                ends.append(time_to_end(progress, best_rate))
            if not tasks:
                continue
            done = self._job_rates[job][kind] if job in self._job_rates else []
            slow = self.slow_tasks(np.array(rates + (done if self.include_finished else [])))[: len(tasks)]
            fresh = float(np.mean(1.0 / np.array(done))) if self.only_if_faster and done else 0.0
            for task, end, is_slow in zip(tasks, ends, slow, strict=True):
                if is_slow and end > fresh and len(task.active) == 1:
                    ranked.append((end, task))
        ranked.sort(key=lambda pair: -pair[0])  # stable: ties keep job order, then running order
        return [task for _, task in ranked]

    def node_rate(self, tracker: TaskTracker, kind: TaskKind, now: float) -> float | None:
        """Mean progress rate of the tracker's finished attempts of a kind and its judged running ones."""
        total, count = self._node_rates.get((tracker, kind), (0.0, 0))
        for attempt in tracker.running[kind]:
            if self.judged(attempt, now):
                total, count = total + rate(attempt, now, self.score(attempt)), count + 1
        return total / count if count else None


def _pending(cluster: ClusterView, kind: TaskKind) -> bool:
    if kind == TaskKind.MAP:
        return any(j.pending_maps for j in cluster.jobs)
    return any(j.pending_reduces and j.reduces_schedulable() for j in cluster.jobs)


def _first(ranking: list[Task], tracker: TaskTracker) -> Task | None:
    """The first ranked task still running on a single attempt, never run on this tracker's node, and not stopped
    by a repartition (its rest is already running as other maps; what is left of it is a flush)."""
    for task in ranking:
        if (
            task.state == TaskState.RUNNING
            and len(task.active) == 1
            and tracker.node not in task.nodes_tried
            and not task.children
        ):
            return task
    return None


class LateSpeculation(TimeToEndSpeculation):
    name = "late"

    def __init__(self, settings: LateSettings | None = None) -> None:
        self.settings = settings or LateSettings()
        super().__init__(self.settings)

    def slow_tasks(self, rates: np.ndarray) -> np.ndarray:
        s = self.settings
        return slow_mask(rates, s.thresholds, s.slow_task_percentile, s.slow_task_std)

    def max_backups(self, cluster: ClusterView, kind: TaskKind) -> int:
        slots = cluster.map_capacity() if kind == TaskKind.MAP else cluster.reduce_capacity()
        return cap(slots, self.settings.speculative_cap, self.settings.min_cap)

    def node_score(self, tracker: TaskTracker, kind: TaskKind, now: float) -> float | None:
        """None: nothing to judge the node by."""
        if self.settings.use_history:
            return self.node_rate(tracker, kind, now)
        running = [a for k in TaskKind for a in tracker.running[k]]
        if self.settings.node_measure == "rate":
            judged = [a for a in running if self.judged(a, now)]
            return sum(rate(a, now) for a in judged) if judged else None
        return self._node_done[tracker] + sum(a.progress_score for a in running)

    def slow_trackers(self, cluster: ClusterView, kind: TaskKind) -> set[TaskTracker]:
        s, now = self.settings, cluster.now
        other = self._state.get(TaskKind.MAP if kind == TaskKind.REDUCE else TaskKind.REDUCE)
        if other is not None and other[0] and not s.use_history:
            return other[1]  # without history a node's score is the same for both kinds
        scored = [(t, v) for t in cluster.trackers if (v := self.node_score(t, kind, now)) is not None]
        if not scored:
            return set()
        mask = slow_mask(np.array([v for _, v in scored]), s.thresholds, s.slow_node_percentile, s.slow_node_std)
        return {t for (t, _), slow in zip(scored, mask, strict=True) if slow}
