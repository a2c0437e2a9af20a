"""All TaskTrackers' heartbeat clocks as arrays, driven by one chain of Mesa events (issue 16).

Each tracker beats at offset + k x interval while it is awake (`TaskTracker.beat`'s rules); `due` holds
its next beat (inf: asleep). One Mesa event fires at the earliest due beat, runs the beats due then, and
schedules itself at the next, or runs the next at once when Mesa would run it next anyway (`_next_in_line`).
A woken cluster (a job's setup queued, a backup possible) costs one array write, not one Mesa event per tracker.

With policies that are quiet when idle (`JobTracker.quiet_when_idle`), a beat whose tracker wants nothing
only counts and puts the tracker to sleep, and one that launches nothing changes nothing. Until the next event
that is not a heartbeat, nothing but heartbeats changes the JobTracker's state, so the beats due before that event
and before the first beat that may launch something see the state as it is after the beats just run: the chain
counts them at once and keeps awake the trackers that `wants_heartbeat` keeps awake (`_look_ahead`). On a busy
cluster most beats are such: a tracker with free reduce slots only, woken because a map somewhere could be backed
up. The launches, their order and every tracker's heartbeat count are those of one event per beat.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

import numpy as np
from mesa.time import Priority

from vcloud.clock import next_event_s
from vcloud.numerics import inline, kernel

if TYPE_CHECKING:
    from hadoop_layer.model import HadoopModel
    from hadoop_layer.tracker import TaskTracker


class HeartbeatClock:
    """The trackers' beat times, heartbeat counts and slot occupancy (kept by `TaskTracker` and its `AttemptSet`s)."""

    def __init__(self, model: HadoopModel) -> None:
        self.model = model
        self.trackers: list[TaskTracker] = []
        self.due = np.zeros(0)  # next beat, inf while asleep
        self.count = np.zeros(0, dtype=np.int64)  # heartbeats so far, per tracker
        self.offset = np.zeros(0)
        self.interval = np.ones(0)
        self.slots = np.zeros((0, 2), dtype=np.int64)  # map, reduce slots
        self.busy = np.zeros((0, 2), dtype=np.int64)  # running map, reduce attempts (setup/cleanup included)
        self._pending: set[float] = set()  # times of the chain's scheduled events
        self.stopped = False  # no tracker is woken (tests that call the scheduler themselves)
        self.fires = 0  # links of the chain so far (the instants at which it ran the beats due)
        self.inline = True  # run a link at once when Mesa would run it next (`_next_in_line`); False: each an event
        self.inlined = 0  # links run at once, not as Mesa events
        self.look_ahead = True  # count idle beats ahead (`_look_ahead`); False: each beat at its own time
        self.kept_awake = 0  # beats counted ahead whose tracker stayed awake (a backup possible elsewhere)
        self.phase_changes = 0  # of `offset` and `interval` (add, set_phase): a version for what is derived from them

    def add(self, tracker: TaskTracker) -> None:
        self.trackers.append(tracker)
        self.due = np.append(self.due, math.inf)
        self.count = np.append(self.count, 0)
        self.offset = np.append(self.offset, 0.0)
        self.interval = np.append(self.interval, 1.0)
        self.phase_changes += 1
        self.slots = np.vstack([self.slots, [0, 0]])  # set by the tracker (TaskTracker.map_slots, reduce_slots)
        self.busy = np.vstack([self.busy, [0, 0]])

    def set_phase(self, interval_s: float, offsets: np.ndarray) -> None:
        self.interval[:] = interval_s
        self.offset[:] = offsets
        self.phase_changes += 1

    # ---- waking ---------------------------------------------------------------------------------------
    def next_beat(self, i: int, now: float) -> float:
        """Tracker i's first beat strictly after now (its pending one if that is later)."""
        due = float(self.due[i])
        if due != math.inf and due > now:
            return due
        offset, interval = float(self.offset[i]), float(self.interval[i])
        k = math.floor((now - offset) / interval) + 1
        while offset + k * interval <= now:  # rounding must not give "now" again
            k += 1
        return offset + k * interval

    def wake(self, i: int) -> None:
        """Make sure tracker i's next beat is coming."""
        if self.stopped or self.due[i] != math.inf:
            return
        at = self.next_beat(i, float(self.model.time))
        self.due[i] = at
        self._ensure(at)

    def wake_free(self) -> None:
        """Wake every sleeping tracker with a free slot (`JobTracker.wake_idle`)."""
        if self.stopped:
            return
        free = self.slots > self.busy
        rows = np.flatnonzero((free[:, 0] | free[:, 1]) & (self.due == math.inf))
        if not len(rows):
            return
        at = self._next_beats(rows, float(self.model.time))
        self.due[rows] = at
        self._ensure(float(at.min()))

    def _next_beats(self, rows: np.ndarray, now: float | np.ndarray) -> np.ndarray:
        """`next_beat` of asleep trackers `rows` after `now` (one time, or one per row): its arithmetic, elementwise
        (the same IEEE operations)."""
        offset, interval = self.offset[rows], self.interval[rows]
        k = np.floor((now - offset) / interval) + 1
        at = offset + k * interval
        while np.any(late := at <= now):
            k[late] += 1
            at = offset + k * interval
        return at

    def _ensure(self, at: float) -> None:
        """An event of the chain fires at `at` or before."""
        if self._pending and min(self._pending) <= at:
            return
        self._pending.add(at)
        self.model.schedule_event(self._fire, at=at, priority=Priority.DEFAULT)

    # ---- beating --------------------------------------------------------------------------------------
    def _fire(self) -> None:
        model = self.model
        earliest = None  # `beat_first` of the clock as it is (None: to be taken)
        while True:
            now = float(model.time)
            self.fires += 1
            self._pending.discard(now)
            if earliest is None:
                earliest = beat_first(self.due, self.slots, self.busy)
            low, first, ties = earliest[0], earliest[1], earliest[2]
            if low > now:
                rows = []
            elif low == now and ties == 1:
                rows = [first]  # a link run at once: the earliest beat, alone (random offsets never tie)
            else:
                rows = np.flatnonzero(self.due <= now).tolist()  # ties (by tracker), or nothing as expected
            for i in rows:
                self.due[i] = math.inf
                self.count[i] += 1
                self.trackers[i].beat()
            earliest = beat_first(self.due, self.slots, self.busy)
            if self.look_ahead and model.jobtracker.quiet_when_idle and self._look_ahead(earliest):
                earliest = beat_first(self.due, self.slots, self.busy)
            following = earliest[0]  # inf: every tracker asleep
            if following == math.inf:
                return
            if not self._next_in_line(following):
                self._ensure(following)
                return
            model.time = following  # the link Mesa would run next, run here: its clock as Mesa would set it
            self.inlined += 1

    def _next_in_line(self, at: float) -> bool:
        """Would the chain's event at `at` be the next event Mesa runs in its clock loop? Only if every other event
        comes strictly later (a tie goes by priority and age, which this does not judge) and the loop's end is not
        before it. Then the chain runs it at once: the same beats at the same time, without the event's making,
        queueing and weak references (~13 us a beat; the Fair scheduler's trackers beat ~50 times a simulated
        second on 600 nodes)."""
        return self.inline and at <= self.model.advancing_until and at < next_event_s(self.model)

    def _look_ahead(self, earliest: tuple | None = None) -> bool:
        """Count the beats that cannot launch anything before the next event that is not a heartbeat.

        Until then only heartbeats happen, and one that launches nothing changes nothing (`quiet_when_idle`): the
        beats before the first that may launch something (`JobTracker.beat_outlook`) all see the state as it is now.
        Each is counted, and its tracker sleeps or, if `wants_heartbeat` holds for it (a free slot and a backup
        possible somewhere: `may_back_up` as the state answers it, which the clock can only turn from False to True,
        at the outlook's `until`), beats again at its next beat, as its own event would have done.

        `earliest`: `beat_first` of the clock as it is (taken here if None). The arrays' part is compiled
        (`beat_first`, `beat_any_free`, `beat_ahead`: the NumPy calls they replaced, ~27 us a call, were
        ~2 % of the SWIM day); the JobTracker is asked in between, as before. True if it counted beats (and so
        changed `due` and `count`)."""
        until = next_event_s(self.model)
        if until == math.inf:
            return False  # nothing bounds the look-ahead
        if earliest is None:
            earliest = beat_first(self.due, self.slots, self.busy)
        low, _, _, free_map, free_reduce = earliest
        if not low < until:
            return False
        jobtracker = self.model.jobtracker
        if jobtracker.has_work(free_map, free_reduce):
            return False  # the next beat launches work: nothing before it to count (the usual case on a busy cluster)
        if beat_any_free(self.due, until, self.slots, self.busy):
            wants, quiet_until, map_from, reduce_from = jobtracker.beat_outlook()
        else:  # beats without a free slot are quiet whatever the outlook
            wants, quiet_until, map_from, reduce_from = False, math.inf, math.inf, math.inf
        self.kept_awake += beat_ahead(self.due, self.count, self.offset, self.interval, self.slots, self.busy, until,
                                      bool(wants), self.stopped, float(quiet_until), float(map_from),
                                      float(reduce_from))  # fmt: skip
        return True


@kernel
def beat_first(due: np.ndarray, slots: np.ndarray, busy: np.ndarray) -> tuple[float, int, int, bool, bool]:
    """The earliest due beat: `due.min()`, `due.argmin()` (NaN: the first NaN, as NumPy's), how many rows are due
    then (`(due <= due.min()).sum()`: 1 unless ties, which random offsets never make) and whether that tracker has a
    free map and reduce slot (`slots[first] > busy[first]`). No rows: (inf, -1, 0, False, False) where NumPy raises
    (the chain never runs without trackers). Of tied zeros the first (NumPy's min keeps either, by its SIMD order;
    beat times are never -0.0: offsets are >= +0.0 and beats come at offset + k x interval, k >= 0). One pass instead
    of the chain's `np.flatnonzero(due <= now)`, `due.min()` and the look-ahead's `argmin` and row reads, a link
    each."""
    n = due.size
    if n == 0:
        return np.inf, -1, 0, False, False
    first, low, ties = 0, due[0], 1
    if low == low:
        for i in range(1, n):
            d = due[i]
            if d < low:
                first, low, ties = i, d, 1
            elif d == low:
                ties += 1
            elif d != d:  # NaN: NumPy's min and argmin stop at the first
                first, low, ties = i, d, 0
                break
    else:
        ties = 0
    return low, first, ties, slots[first, 0] > busy[first, 0], slots[first, 1] > busy[first, 1]


@kernel
def beat_any_free(due: np.ndarray, until: float, slots: np.ndarray, busy: np.ndarray) -> bool:
    """Has any tracker due before `until` a free slot: `(slots[rows] > busy[rows]).any()` of
    `rows = np.flatnonzero(due < until)`, whether the look-ahead asks the JobTracker's outlook."""
    for i in range(due.size):  # noqa: SIM110  (a loop numba compiles; it stops at the first)
        if due[i] < until and (slots[i, 0] > busy[i, 0] or slots[i, 1] > busy[i, 1]):
            return True
    return False


@inline
def _beat_after(offset: float, interval: float, now: float) -> float:
    """`HeartbeatClock._next_beats` of one row: the same IEEE operations (`np.floor`, not `math.floor`, which would
    round to an integer; the count stays a float as NumPy's `k` does)."""
    k = np.floor((now - offset) / interval) + 1
    at = offset + k * interval
    while at <= now:
        k += 1
        at = offset + k * interval
    return at


@kernel
def beat_ahead(
    due: np.ndarray,
    count: np.ndarray,
    offset: np.ndarray,
    interval: np.ndarray,
    slots: np.ndarray,
    busy: np.ndarray,
    until: float,
    wants: bool,
    stopped: bool,
    quiet_until: float,
    map_from: float,
    reduce_from: float,
) -> int:
    """The array part of `HeartbeatClock._look_ahead` after the JobTracker's outlook (`wants`, `quiet_until`,
    `map_from`, `reduce_from`): counts in `count` the beats due before `until` that cannot launch anything, writes
    `due` (inf: asleep; kept awake: the next beat), and returns how many beats kept their tracker awake. Round by
    round as the NumPy form went (each round's `until` bounds that round's beats; its kept-awake beats may lower it
    for the next), rows in tracker order. `until` is only compared with, so which of two equal zeros a `min` keeps
    does not matter; beat times are never NaN where a `min` is taken (`at < until` holds for them)."""
    n = due.size
    rows = np.empty(n, np.int64)
    at = np.empty(n)
    free_map = np.empty(n, np.bool_)
    free_reduce = np.empty(n, np.bool_)
    m = 0
    for i in range(n):
        if due[i] < until:
            rows[m], at[m] = i, due[i]
            free_map[m], free_reduce[m] = slots[i, 0] > busy[i, 0], slots[i, 1] > busy[i, 1]
            m += 1
    found, low = False, np.inf
    for j in range(m):
        may_launch = (free_map[j] and at[j] >= map_from) or (free_reduce[j] and at[j] >= reduce_from)
        if may_launch and (not found or at[j] < low):
            found, low = True, at[j]
    if found and low < until:  # Python's min(until, low)
        until = low
    if not wants and quiet_until < until:
        until = quiet_until
    wants = wants and not stopped  # a stopped clock wakes nobody
    kept = 0
    while True:
        idle = 0
        kept_rows = 0
        for j in range(m):
            if not at[j] < until:
                continue
            i = rows[j]
            count[i] += 1
            idle += 1
            if wants and (free_map[j] or free_reduce[j]):
                rows[kept_rows], at[kept_rows] = i, at[j]
                free_map[kept_rows], free_reduce[kept_rows] = free_map[j], free_reduce[j]
                kept_rows += 1
            else:
                due[i] = np.inf
        if idle == 0 or not wants:
            break
        m = kept_rows
        found = False
        for j in range(m):
            i = rows[j]
            at[j] = _beat_after(offset[i], interval[i], at[j])
            due[i] = at[j]
            later = (free_map[j] and at[j] >= map_from) or (free_reduce[j] and at[j] >= reduce_from)
            if later and (not found or at[j] < low):
                found, low = True, at[j]
        kept += m
        if found and low < until:
            until = low
    return kept
