"""The heartbeat clock's look-ahead into speculation, kept behind the interface a researcher writes.

A speculation policy is its rule (`SpeculationPolicy.backups` and `may_back_up`, hadoop_layer/interfaces.py). On long
traces most heartbeats launch nothing, and the clock counts such beats ahead (hadoop_layer/heartbeats.py) when the
policy can also tell what the clock alone will change: a policy that is also a `LookAhead` answers `outlook`. Its
speed machinery (caches of per-task standings, arrays of the running attempts) reads `RunningEntries`, which the
layer keeps and binds to it when it is handed to the JobTracker; the rule's own module need know none of this
(`policies/speculation/hadoop.py` is the rule, `hadoop_lookahead.py` the look-ahead over it).
"""

from __future__ import annotations

import math
from abc import ABC, abstractmethod
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from hadoop_layer.ledger import running_entries
from hadoop_layer.tasks import Task, TaskAttempt, TaskState
from vcloud.work import ItemState

if TYPE_CHECKING:
    from hadoop_layer.interfaces import ClusterView, SpeculationPolicy
    from hadoop_layer.model import HadoopModel


@dataclass(frozen=True)
class Outlook:
    """What a speculation policy can tell of the coming heartbeats while nothing but the clock moves (no launch,
    end, kill or progress move): `may_back_up` as the state now answers it (not the answer kept for the instant);
    while that is False, the earliest time the clock alone could turn it True; and per kind, the earliest time a
    tracker with a free slot of that kind could get a backup (-inf: it may now)."""

    may_back_up: bool
    until: float
    map_from: float
    reduce_from: float


class LookAhead(ABC):
    """A speculation policy that can tell the heartbeat clock what the clock alone will change (`outlook`). Mixed in
    before the policy's own class. Its contract: `backups` changes nothing while `may_back_up` is False, so a
    heartbeat that could launch nothing need not reach the JobTracker (`JobTracker.quiet_when_idle`).

    `may_back_up` is `verdict` of the state at the first call of an instant: later calls at the same time get
    that answer, whatever changed in between (the pinned runs depend on it). `entries`: the running attempts as
    arrays, bound by the JobTracker."""

    entries: RunningEntries
    _answer: tuple[float, bool] = (-math.inf, True)

    def may_back_up(self, cluster: ClusterView) -> bool:
        now = cluster.now
        if self._answer[0] != now:
            self._answer = (now, self.verdict(cluster))
        return self._answer[1]

    @abstractmethod
    def verdict(self, cluster: ClusterView) -> bool:
        """`may_back_up` of the state as it is now."""

    @abstractmethod
    def outlook(self, cluster: ClusterView) -> Outlook:
        """For the heartbeat clock's look-ahead, of the state as it is now."""


def outlook_of(policy: SpeculationPolicy, cluster: ClusterView) -> Outlook:
    """A policy's outlook; one that is no `LookAhead` knows nothing: any tracker with a free slot may get a backup at
    once, so no beat of one is counted ahead."""
    if isinstance(policy, LookAhead):
        return policy.outlook(cluster)
    return Outlook(True, cluster.now, -math.inf, -math.inf)


@dataclass(frozen=True)
class RunningArrays:
    """Running attempts, one entry each: task gid, kind (0 map, 1 reduce), job number, the task's first launch
    time (`Task.start_s`), the attempt's progress score (Hadoop's, as of the last tick) and how many attempts
    its task runs."""

    gid: np.ndarray
    kind: np.ndarray
    job: np.ndarray
    task_start: np.ndarray
    progress: np.ndarray
    attempts: np.ndarray


class RunningEntries:
    """The running attempts as arrays for a look-ahead's per-tick tests, and the half-states that keep them true
    within a tick (the model notes first launches and ended attempts, and calls `new_tick`; the JobTracker takes an
    attempt out of `ending` and sets `releasing` as it releases it).

    `first_launched`: the tasks launched for the first time in this tick, in order: a task's first attempt starts at
    progress 0 and now, so it moves no other task's standing (a cache of standings may take it in without a
    rebuild). `ending`: while a tick's ended attempts are processed (their rows are gone, their tasks still run),
    those not released yet; `releasing`: the task of the one being released (`JobTracker._release`)."""

    def __init__(self, model: HadoopModel) -> None:
        self._model = model
        self.first_launched: list[Task] = []
        self.ending: dict[TaskAttempt, None] = {}
        self.releasing: Task | None = None
        self._arrays: tuple[tuple, RunningArrays | None] = ((), None)
        # the running attempts' rows and their task columns (all of RunningArrays but progress; None: not available),
        # kept while the item table's rows and the tasks' states stay: on most ticks only progress moves
        self._rows: tuple[tuple, np.ndarray, tuple | None] = ((), np.zeros(0, dtype=np.int64), None)

    def new_tick(self) -> None:
        """The first launches of earlier ticks concern no cache any more (`standing_key` includes the tick)."""
        self.first_launched.clear()

    def standing_key(self) -> tuple[tuple[int, ...], int]:
        """(moves, first launches): `moves` changes whenever a running attempt's progress or a task's state may have
        changed for any reason but a task's first launch, and with every tick; the second counts this tick's first
        launches (`first_launched`)."""
        m = self._model
        n = len(self.first_launched)
        running = sum(m.jobtracker.running_attempts.values())
        return (m.ticks, m.progress_moves, m.task_changes - n, running - n), n

    def arrays(self) -> RunningArrays | None:
        """The running task attempts as arrays (one entry per attempt, in item-table order). The same object is
        returned until progress or a task's state changes, so a cache may key its results on its identity.

        While a tick's ended attempts are processed, each not released yet (`ending`) is an entry after the table's
        at the progress its task reads for it (1.0: it is done), and a task whose last attempt is being released
        (`releasing`, still running with no attempt) an entry at 0.0, as `Task.progress` reads them. None when the
        entries do not account for every running attempt and task (a map's piece or a setup task has no gid; a task
        left with no attempt otherwise): the caller falls back to the objects."""
        model = self._model
        jt = model.jobtracker
        progress = model.item_progress()
        ending, releasing = self.ending, self.releasing
        key = (model.progress_version, model.task_changes, *jt.running_attempts.values(), len(ending), id(releasing))
        if self._arrays[0] == key:
            return self._arrays[1]
        layout = (model.items.layout, *key[1:])  # rows and tags change only with the layout (start_item, stop_item)
        if self._rows[0] != layout:
            extra_gid, extra = _ending_entries(ending, releasing)
            rows, gid, kind, job, start, attempts, tasks = running_entries(
                model.items.tag, model.items.n, np.array(extra_gid, dtype=np.int64), model.task_kind, model.task_job,
                model.task_start,
            )  # fmt: skip
            columns = None
            if (len(rows) + len(ending) == sum(jt.running_attempts.values()) and 0 not in extra_gid
                    and tasks == jt.ledger.running_tasks):  # fmt: skip
                columns = (gid, kind, job, start, attempts, np.array(extra))
            self._rows = (layout, rows, columns)
        _, rows, columns = self._rows
        found = None
        if columns is not None:
            gid, kind, job, start, attempts, extra = columns
            now = progress[rows] if not extra.size else np.concatenate((progress[rows], extra))
            found = RunningArrays(gid, kind, job, start, now, attempts)
        self._arrays = (key, found)
        return found


def _ending_entries(ending: dict[TaskAttempt, None], releasing: Task | None) -> tuple[list[int], list[float]]:
    """`RunningEntries.arrays`' entries beyond the item table's: (task gids, progress) of the ended attempts not
    released yet whose tasks still run, and of the task being released if no attempt is left it."""
    gids: list[int] = []
    values: list[float] = []
    for attempt in ending:
        task = attempt.task
        if task.state == TaskState.RUNNING:
            gids.append(task.gid)
            values.append(1.0 if attempt.state == ItemState.DONE else 0.0)
    if releasing is not None and releasing.state == TaskState.RUNNING and not releasing.active and not releasing.role:
        gids.append(releasing.gid)
        values.append(0.0)
    return gids, values
