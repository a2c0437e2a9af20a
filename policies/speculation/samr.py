"""SAMR: Self-Adaptive MapReduce scheduling (Chen, Zhang, Guo, Deng, Guo, IEEE CIT 2010; algorithms.md 4, samr.txt).

Each node keeps historical stage weights per kind: maps M1 (execute: read + map) and M2 (sort: spill, merges,
or a map-only job's output write); reduces R1 (copy: shuffle), R2 (sort: merges) and R3 (reduce: reduce
function and output write). After a task finishes on a node, its measured share of time in each stage updates
the node's weights, new = HP x old + (1 - HP) x measured (Algorithm 1 step 8, Figure 2; JVM setup is in no
stage; R1 includes the wait for maps, as a shuffle's time does in Hadoop). A running attempt's progress score
uses its node's weights (eq. 17-18): PS = sum of the weights of the stages done + weight of the current stage x
SubPS, SubPS = share of the stage's phases done (the shuffle's: map outputs copied / maps, as Hadoop's copy
phase). PR = PS / T, TTE = (1 - PS) / PR.
Slow tasks: PR < (1 - STaC) x the average PR of the job's tasks of that kind (eq. 6-7). Slow TaskTrackers, per
kind: TrR (mean PR of its tasks, eq. 8: running ones PS / T, finished ones 1 / runtime) < (1 - STrC) x the
average TrR (eq. 10-13), at most a share STrP of the trackers (the slowest); they get no backups. A backup is
launched only while BackupNum < BP x TaskNum (eq. 15: running backups of both kinds against the tasks of the
running jobs; `backup_base=slots` caps each kind at BP x its slots instead, as LATE). Among slow tasks the one
with the longest TTE is backed up (Figure 4; LATE's rule, 3.1).

The extracted paper gives no default values; ours (every one a setting) are argued in `SamrSettings`.
Which attempts are judged (the 60 s lag, finished tasks in the statistics, jobs without pending tasks, reduces
after their maps) is as in LATE (late.py, `BackupSettings`). Unlike LATE, `only_if_faster` is on: samr.txt lists
backing up a task about to finish anyway as a shortcoming (3) SAMR addresses; a task is backed up only if its
TTE exceeds the mean runtime of its job's finished tasks of that kind.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Literal

import numpy as np
from pydantic import Field, field_validator

from hadoop_layer.interfaces import ClusterView
from hadoop_layer.tasks import TaskAttempt, TaskKind
from hadoop_layer.tracker import TaskTracker
from policies.speculation.late import BackupSettings, LateSettings, LateSpeculation, TimeToEndSpeculation, cap


class SamrSettings(BackupSettings):
    """Defaults, since the paper's values are unreadable in our copy (algorithms.md 4):

    - HP 0.2: close to 0 trusts the newest task (samr.txt, "reading historical data"): a VM's speed in a shared
      pool changes with its entitlement, so recent tasks should dominate; follow-up work cites 0.1-0.3.
    - STaC 0.3: a task is slow below 70 % of its job's average rate: VMs of a DRS pool differ in speed by some
      tens of per cent in normal operation (entitlements, steal), so a smaller STaC flags ordinary tasks, while a
      straggler at half speed or less is still caught.
    - STrC 0.2: a tracker below 80 % of the average tracker rate gets no backups (a backup must run on a node
      clearly faster than the straggler's).
    - STrP 0.3: at most 30 % of trackers (rounded up) are slow, so most nodes stay eligible for backups.
    - BP 0.1: the share LATE's SpeculativeCap uses (10 %), the scheme SAMR is compared with (section V); eq. 15
      takes it of the tasks, LATE of the slots.
    - initial weights: Hadoop's static ones (M1 = 1, M2 = 0; R = 1/3 each), which SAMR starts from and tunes
      ("generally R1 R2 R3 M1 M2 are generated statically by default", Algorithm 1).
    """

    history_pro: float = Field(0.2, ge=0, le=1, description="HP: weight of the old stage weights")
    slow_task_cap: float = Field(0.3, ge=0, le=1, description="STaC: slow task if PR < (1 - STaC) x average")
    slow_tracker_cap: float = Field(0.2, ge=0, le=1, description="STrC: slow tracker if TrR < (1 - STrC) x average")
    slow_tracker_pro: float = Field(0.3, ge=0, le=1, description="STrP: most trackers classed slow (share)")
    backup_pro: float = Field(0.1, ge=0, le=1, description="BP: most backups running, share of backup_base")
    backup_base: Literal["tasks", "slots"] = Field(
        "tasks", description="eq. 15: BP x the running jobs' tasks (both kinds); slots: BP x each kind's slots (LATE)"
    )
    min_backups: int = Field(1, ge=0, description="the backup cap is at least this")
    only_if_faster: bool = Field(True, description="shortcoming (3) of samr.txt: skip tasks about to finish")
    map_weights: tuple[float, float] = Field((1.0, 0.0), description="M1, M2: map stage weights (they sum to 1)")
    reduce_weights: tuple[float, float, float] = Field(
        (1 / 3, 1 / 3, 1 / 3), description="R1, R2, R3: copy, sort, reduce stage weights (they sum to 1)"
    )

    @field_validator("map_weights", "reduce_weights")
    @classmethod
    def _sum_to_one(cls, weights: tuple[float, ...]) -> tuple[float, ...]:
        if min(weights) < 0 or abs(sum(weights) - 1.0) > 1e-6:
            raise ValueError(f"stage weights must be >= 0 and sum to 1, got {weights}")
        return weights


MAP_STAGES = {"read": 0, "map": 0, "spill": 1, "merge": 1, "hdfs": 1}
REDUCE_STAGES = {"shuffle": 0, "merge": 1, "sort": 1, "reduce": 2, "hdfs": 2}
_STAGE_CACHE: dict[tuple[TaskKind, str], int | None] = {}


def stage_of(kind: TaskKind, phase: str) -> int | None:
    """SAMR stage of a phase of plans.py (by its name up to the first '-'); None for JVM setup."""
    key = (kind, phase)
    if key not in _STAGE_CACHE:
        _STAGE_CACHE[key] = (MAP_STAGES if kind == TaskKind.MAP else REDUCE_STAGES).get(phase.split("-")[0])
    return _STAGE_CACHE[key]


def stage_progress(kind: TaskKind, phases: list[str], index: int, fraction: float, hadoop_score: float):
    """(stage, SubPS) of an attempt in phase `index`, `fraction` of that phase done; None in setup (eq. 16)."""
    stage = stage_of(kind, phases[index])
    if stage is None:
        return None
    if phases[index] == "shuffle":  # copy: map outputs fetched / maps = 3 x Hadoop's score (algorithms.md 2.4)
        return stage, min(1.0, 3.0 * hadoop_score)
    same = [i for i, name in enumerate(phases) if stage_of(kind, name) == stage]
    return stage, (same.index(index) + fraction) / len(same)


def samr_score(weights: Sequence[float], stage: int, sub: float) -> float:
    """Eq. 17-18: the weights of the stages done plus the current stage's weight x SubPS."""
    return float(sum(weights[:stage]) + weights[stage] * sub)


def stage_times(kind: TaskKind, phases: list[str], start_s: float, phase_end_s: list[float], stages: int):
    """Seconds a finished attempt spent in each stage (from its phases' end times; setup excluded)."""
    times, begin = np.zeros(stages), start_s
    for name, end in zip(phases, phase_end_s, strict=False):
        stage = stage_of(kind, name)
        if stage is not None:
            times[stage] += end - begin
        begin = end
    return times


def update_weights(old: np.ndarray, times: np.ndarray, hp: float) -> np.ndarray:
    """new = HP x old + (1 - HP) x measured share of each stage (Figure 2); unchanged if nothing was measured."""
    total = times.sum()
    return old if total <= 0 else hp * old + (1.0 - hp) * times / total


def slow_tracker_set(rates: dict[TaskTracker, float], stc: float, stp: float, n_trackers: int) -> set[TaskTracker]:
    """Trackers with TrR < (1 - STrC) x mean TrR (eq. 12-13); the slowest ceil(STrP x trackers) of them."""
    if not rates:
        return set()
    bar = (1.0 - stc) * float(np.mean(list(rates.values())))
    slow = sorted((r, i, t) for i, (t, r) in enumerate(rates.items()) if r < bar)
    return {t for _, _, t in slow[: math.ceil(stp * n_trackers - 1e-9)]}


class StageWeightHistory:
    """SAMR's historical information (Algorithm 1 steps 4 and 8, Figure 2): per node and kind, stage weights learned
    from the node's finished tasks with HISTORY_PRO, and progress scores by those weights (eq. 17-18). Mixed into
    `SamrSpeculation` and into LATE for "LATE with history" (`LateWithHistory`)."""

    def init_history(self, history_pro: float, map_weights: Sequence[float], reduce_weights: Sequence[float]) -> None:
        self.history_pro = history_pro
        self._initial = {TaskKind.MAP: tuple(map_weights), TaskKind.REDUCE: tuple(reduce_weights)}
        self._weights: dict[tuple[TaskTracker, TaskKind], tuple[float, ...]] = {}

    def weights(self, tracker: TaskTracker, kind: TaskKind) -> tuple[float, ...]:
        """The node's historical stage weights for a kind (M1, M2 or R1, R2, R3)."""
        found = self._weights.get((tracker, kind))
        return self._initial[kind] if found is None else found

    def absorb(self, attempt: TaskAttempt) -> None:
        """Algorithm 1 step 8: a task finished on a node; fold its stage times into the node's weights."""
        kind, tracker = attempt.task.kind, attempt.tracker
        old = np.array(self.weights(tracker, kind))
        names = [p.name for p in attempt.phases]
        times = stage_times(kind, names, attempt.start_s or 0.0, attempt.phase_end_s, len(old))
        self._weights[(tracker, kind)] = tuple(update_weights(old, times, self.history_pro).tolist())

    def progress(self, attempt: TaskAttempt) -> float:
        """Eq. 17-18 with the weights of the attempt's node."""
        kind = attempt.task.kind
        names = [p.name for p in attempt.phases]
        index = attempt.phase_index
        if index >= len(names):
            return 1.0
        found = stage_progress(kind, names, index, phase_fraction(attempt), attempt.progress_score)
        return 0.0 if found is None else samr_score(self.weights(attempt.tracker, kind), *found)


class SamrSpeculation(StageWeightHistory, TimeToEndSpeculation):
    name = "samr"

    def __init__(self, settings: SamrSettings | None = None) -> None:
        self.settings = settings or SamrSettings()
        super().__init__(self.settings)
        s = self.settings
        self.init_history(s.history_pro, s.map_weights, s.reduce_weights)

    def slow_tasks(self, rates: np.ndarray) -> np.ndarray:
        """Eq. 6-7: PR < (1 - STaC) x APR."""
        return rates < (1.0 - self.settings.slow_task_cap) * rates.mean()

    def slow_trackers(self, cluster: ClusterView, kind: TaskKind) -> set[TaskTracker]:
        now, s = cluster.now, self.settings
        rates = {t: r for t in cluster.trackers if (r := self.node_rate(t, kind, now)) is not None}
        return slow_tracker_set(rates, s.slow_tracker_cap, s.slow_tracker_pro, len(cluster.trackers))

    def max_backups(self, cluster: ClusterView, kind: TaskKind) -> int:
        s = self.settings
        if s.backup_base == "slots":
            slots = cluster.map_capacity() if kind == TaskKind.MAP else cluster.reduce_capacity()
            return cap(slots, s.backup_pro, s.min_backups)
        return eq15_room(cluster, kind, s.backup_pro, s.min_backups)


def eq15_room(cluster: ClusterView, kind: TaskKind, bp: float, minimum: int) -> int:
    """Eq. 15 as a cap on `kind`'s backups: launch while BackupNum < BP x TaskNum, i.e. while the backups of both
    kinds number under ceil(BP x TaskNum) (at least `minimum`); the other kind's backups take their part."""
    tasks = sum(len(job.maps) + len(job.reduces) for job in cluster.jobs)
    total = max(math.ceil(bp * tasks - 1e-9), minimum)
    other = TaskKind.REDUCE if kind == TaskKind.MAP else TaskKind.MAP
    return total - TimeToEndSpeculation._speculating(cluster, other)


def phase_fraction(attempt: TaskAttempt) -> float:
    """Share of the current phase's work done, as of the last tick (the cloud's item table; read only)."""
    row = attempt.row
    if row is None:
        return 0.0
    items = attempt.model.items
    amount = float(items.phase_amount[row])
    return min(max(1.0 - float(items.remaining[row]) / amount, 0.0), 1.0) if amount > 0 else 0.0


class LateWithHistory(StageWeightHistory, LateSpeculation):
    """ "LATE with historical information", the fourth scheme of SAMR's evaluation (Fig. 9, section V): LATE's rules
    (SlowTaskThreshold, SlowNodeThreshold, SpeculativeCap; late.py) on progress scores by SAMR's per-node historical
    stage weights (eq. 17-18, updated with HP as `SamrSpeculation` does). samr.txt credits "historical information"
    alone with much of SAMR's gain on Sort (15 % for LATE with it, 7 % without). Selected by `late.history_weights`;
    unlike `late.use_history`, which only judges nodes by their finished attempts' speed."""

    def __init__(self, settings: LateSettings | None = None) -> None:
        super().__init__(settings)
        defaults = SamrSettings()
        self.init_history(self.settings.history_pro, defaults.map_weights, defaults.reduce_weights)
