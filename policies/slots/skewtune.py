"""SkewTune (Kwon, Balazinska, Howe, Rolia, SIGMOD 2012) for map skew, as algorithms.md section 5 reads it.

"When a node in the cluster becomes idle, SkewTune identifies the task with the greatest expected remaining
processing time. The unprocessed input data of this straggling task is then proactively repartitioned in a way
that fully utilizes the nodes in the cluster and preserves the ordering of the input data" (abstract).

- When: a map slot idles, i.e. it is free and no running job has a pending map. The paper reacts to that event;
  the layer reports it in the tick a map slot frees (`idle_map_slot`). A slot that stays idle is looked at again
  every `period_s` (the prototype's `SpeculativeScheduler` loop, 5 s), since a task can become a candidate later
  (it passes `min_elapsed_s`). At most one straggler per look ("do one at a time"), and none while the pieces of
  the last one are still pending (they are pending maps, so no slot idles).
- Which: among running maps with `min_elapsed_s` behind them (`TaskInProgress.getAllTaskStatus`), the one with
  the longest expected remaining time (`EstimatedTimeComparator`), if that exceeds twice the repartitioning
  overhead omega (the paper's rule; the prototype's 60 s is 2 x 30 s). A task's estimate is its best attempt's.
  Remaining time (`TaskProgress`, map phase): rt = (1 - p) x t / p, p Hadoop's progress score (here moved
  through the read, the map function and the spills, algorithms.md 2.4), t the time since the JVM started; 1.x
  maps have no sort phase in their progress, so nothing is added for the merge.
- Plan (`PartitionPlanner`): for every map slot, the time until it frees: 0 if free, else the estimate of the
  attempt in it (never, if it has no progress yet); the straggler's own slot counts as free, as the straggler
  stops. Each is floored at the pieces' start-up delay (`getExpectedTimes`: max(STARTUP_OVERHEAD, avail)).
  Water-filling (`getEstimatedOptimalTime`) finds the finish time T* with sum_i max(0, T* - avail_i) = work,
  the work being the straggler's remaining time spread evenly over its unprocessed bytes (the prototype's
  `timePerByte`): all slots as fast as the straggler's. The unprocessed bytes start at the input its map
  function has consumed (`input_done_mb`).
  `LINEAR` strategy: walking the unprocessed input in offset order, slot i in availability order gets the next
  contiguous range worth T* - avail_i (at least `min_piece_mb`, "at least one unit"); pieces are offered to the
  scheduler longest first (`scheduleOrder`). At most capacity - 1 pieces (the prototype's limit for maps).
- Cost: the straggler scans its unprocessed input locally at `scan_diskbw_mbps` if that takes at most
  `scan_max_time_s` (`skewtune.scan.*`); the pieces start no earlier than the start-up overhead plus that scan;
  each piece reads its range over the network from the straggler's node unless it runs there.
SkewTune assumes all slots are equally fast (FlexSlot 4.1): nothing here looks at a node's speed.
Reduce-side repartitioning is not modelled.
"""

from __future__ import annotations

import math

import numpy as np
from pydantic import BaseModel, ConfigDict, Field

from hadoop_layer.interfaces import ClusterView, Repartition, SlotAction, SlotManager
from hadoop_layer.tasks import TaskAttempt, TaskKind


class SkewTuneSettings(BaseModel):
    model_config = ConfigDict(extra="forbid")
    repartition_overhead_s: float = Field(
        30.0, ge=0, description="omega: repartition only if the remaining time > 2 omega (prototype: 60 s = 2 x 30 s)"
    )
    startup_overhead_s: float = Field(
        10.0, ge=0, description="PartitionPlanner.STARTUP_OVERHEAD: a mitigator reads no input before this"
    )
    scan_diskbw_mbps: float = Field(30.0, gt=0, description="skewtune.scan.diskbw: local scan speed, MB/s")
    scan_max_time_s: float = Field(60.0, ge=0, description="skewtune.scan.maxTime: scan only if it takes this long")
    min_elapsed_s: float = Field(60.0, ge=0, description="attempts younger than this are not judged (prototype)")
    period_s: float = Field(
        5.0, ge=0.1, le=86400, description="re-look at idle slots this often (SpeculativeScheduler loop)"
    )
    min_piece_mb: float = Field(1.0, ge=0.01, description="smallest piece: 'at least one unit' (segment())")


def water_fill(avail_s: np.ndarray, work_s: float) -> tuple[float, int]:
    """`getEstimatedOptimalTime`: the finish time T* with sum_i max(0, T* - avail_i) = work, and how many of the
    slots (earliest first) get work. Slots with an infinite availability never do."""
    a = np.sort(np.asarray(avail_s, dtype=float))
    a = a[np.isfinite(a)]
    if len(a) == 0 or not work_s > 0:
        return (float(a[0]) if len(a) else math.inf), 0
    finish = (work_s + np.cumsum(a)) / np.arange(1, len(a) + 1)
    k = int(np.count_nonzero(a < finish))  # the slots that start before T*: always a prefix
    return float(finish[k - 1]), k


def plan_pieces(
    avail_s: np.ndarray, work_s: float, start_s: float = 0.0, min_piece_s: float = 0.0, max_pieces: int | None = None
) -> np.ndarray:
    """Seconds of work of each piece, in range order (= the slots' availability order), so that all finish together.

    Availability is floored at `start_s` (mitigators start no earlier); pieces shorter than `min_piece_s` are
    dropped (their slots unused) and the rest planned again; at most `max_pieces`."""
    a = np.sort(np.maximum(np.asarray(avail_s, dtype=float), start_s))
    if max_pieces is not None:
        a = a[:max_pieces]
    finish, k = water_fill(a, work_s)
    while k > 1 and finish - a[k - 1] < min_piece_s:
        finish, k = water_fill(a[: k - 1], work_s)
    return finish - a[:k]


def remaining_s(attempt: TaskAttempt, now: float) -> float:
    """Expected remaining time of a map (the prototype's `TaskProgress`, map phase): rt = (1 - p) x t / p with p
    Hadoop's progress score and t the time since the attempt started on its input (after its JVM start and any
    wait before it); inf before any progress."""
    total = projected_s(attempt, now)
    return total - (now - _begun(attempt)) if math.isfinite(total) else math.inf


def projected_s(attempt: TaskAttempt, now: float) -> float:
    """t / p: the time the attempt's whole input takes at its pace so far; inf before any progress."""
    p = attempt.progress_score
    marks = attempt.progress_marks or []
    first = next((i for i, (lo, hi) in enumerate(marks) if hi > lo), None)
    if p <= 0 or first is None or attempt.phase_index < first:
        return math.inf
    return (now - _begun(attempt)) / p


def movable_s(attempt: TaskAttempt, now: float) -> float:
    """The time of the input it has not consumed yet, at its pace (unprocessed bytes x `timePerByte`)."""
    task = attempt.task
    unprocessed = 1.0 - attempt.input_done_mb / task.input_mb if task.input_mb > 0 else 0.0
    return unprocessed * projected_s(attempt, now)


def _begun(attempt: TaskAttempt) -> float:
    """When the attempt started on its input: the end of the phases before the first one that moves progress."""
    marks = attempt.progress_marks or []
    first = next((i for i, (lo, hi) in enumerate(marks) if hi > lo), 0)
    return attempt.phase_end_s[first - 1] if 0 < first <= len(attempt.phase_end_s) else attempt.start_s


class SkewTuneManager(SlotManager):
    name = "skewtune"
    wants_idle_slots = True

    def __init__(self, settings: SkewTuneSettings | None = None) -> None:
        self.settings = s = settings or SkewTuneSettings()
        self.period_s = s.period_s
        self.repartitions = 0

    def adjust(self, cluster: ClusterView) -> list[SlotAction]:
        return self.mitigate(cluster)

    def idle_map_slot(self, cluster: ClusterView) -> list[SlotAction]:
        return self.mitigate(cluster)

    def mitigate(self, cluster: ClusterView) -> list[SlotAction]:
        """Repartition the longest-remaining map if a map slot idles and it is worth it (at most one)."""
        s, now = self.settings, cluster.now
        if not cluster.jobs or any(j.pending_maps for j in cluster.jobs):
            return []
        idle = sum(t.free(TaskKind.MAP) for t in cluster.trackers)
        if idle == 0:
            return []
        running = [a for t in cluster.trackers for a in t.running[TaskKind.MAP]]
        left = {a: remaining_s(a, now) for a in running}
        best: dict = {}  # task -> its best attempt (shortest remaining), among those old enough
        for a in running:
            judged = now - (a.start_s or now) >= s.min_elapsed_s and not a.task.children and math.isfinite(left[a])
            if judged and (a.task not in best or left[a] < left[best[a.task]]):
                best[a.task] = a
        movable = {a: movable_s(a, now) for a in best.values()}
        if not movable:
            return []
        straggler = max(movable, key=movable.get)
        work = movable[straggler]
        if work <= 2.0 * s.repartition_overhead_s:
            return []
        task = straggler.task
        unprocessed = task.input_mb - straggler.input_done_mb
        scan_s = unprocessed / s.scan_diskbw_mbps
        scan_s = scan_s if scan_s <= s.scan_max_time_s else 0.0
        keeps = max(left[straggler] - work, 0.0)  # what the straggler still does for the range it keeps
        avail = np.array(
            [0.0] * idle + [(keeps if a is straggler else 0.0) if a.task is task else left[a] for a in running]
        )
        seconds = plan_pieces(
            avail,
            work,
            start_s=s.startup_overhead_s + scan_s,
            min_piece_s=s.min_piece_mb / unprocessed * work,
            max_pieces=max(cluster.map_capacity() - 1, 1),
        )
        if len(seconds) < 2:
            return []
        self.repartitions += 1
        shares = tuple(float(x) for x in seconds / seconds.sum())
        order = tuple(int(i) for i in np.argsort(-seconds, kind="stable"))
        scan_mb = unprocessed if scan_s > 0 else 0.0
        return [Repartition(straggler, shares, order, scan_mb, s.startup_overhead_s + scan_s)]
