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
from vcloud.kernels import beat_ahead, beat_any_free, beat_first

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
        earliest = None  # `kernels.beat_first` of the clock as it is (None: to be taken)
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

        `earliest`: `kernels.beat_first` of the clock as it is (taken here if None). The arrays' part is compiled
        (`kernels.beat_first`, `beat_any_free`, `beat_ahead`: the NumPy calls they replaced, ~27 us a call, were
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
