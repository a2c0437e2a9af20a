"""The heartbeat clock's compiled parts (`beat_first`, `beat_any_free`, `beat_ahead`) against the
NumPy forms they replaced in hadoop_layer/heartbeats.py, bit for bit: ties, asleep trackers (inf), empty selections.
"""

import math
from types import SimpleNamespace

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from hadoop_layer.heartbeats import HeartbeatClock, _beat_after, beat_ahead, beat_any_free, beat_first

# few distinct values, so ties (and 0.0 against -0.0) are common; inf: asleep
DUE = [0.0, -0.0, 0.25, 0.5, 0.75, 1.0, 1.0 / 3, 2.0 / 3, 1.5, math.inf]
INTERVALS = [0.1, 0.25, 0.3, 1.0 / 3, 1.0, 3.0]
BOUNDS = [-math.inf, 0.0, 0.25, 0.3, 0.5, 0.6, 1.0, 2.0, 5.0, math.inf]


def numpy_beat_first(due, slots, busy):
    """What the chain and the look-ahead read with NumPy: `due.min()`, `due.argmin()`, the rows due then."""
    low, first = float(due.min()), int(due.argmin())
    return (
        low,
        first,
        int((due <= low).sum()),
        bool(slots[first, 0] > busy[first, 0]),
        bool(slots[first, 1] > busy[first, 1]),
    )


def numpy_any_free(due, until, slots, busy):
    rows = np.flatnonzero(due < until)
    free = slots[rows] > busy[rows]
    return bool((free[:, 0] | free[:, 1]).any())


def numpy_look_ahead(clock, until, outlook, stopped):
    """`HeartbeatClock._look_ahead` as it was (f9986b4) from its rows on, with the outlook given; returns kept_awake."""
    due, kept_awake = clock.due, 0
    rows = np.flatnonzero(due < until)
    free = clock.slots[rows] > clock.busy[rows]
    free_maps, free_reduces = free[:, 0], free[:, 1]
    any_free = free_maps | free_reduces
    if any_free.any():
        wants, quiet_until, map_from, reduce_from = outlook
    else:
        wants, quiet_until, map_from, reduce_from = False, math.inf, math.inf, math.inf
    at = due[rows]
    may_launch = (free_maps & (at >= map_from)) | (free_reduces & (at >= reduce_from))
    if may_launch.any():
        until = min(until, float(at[may_launch].min()))
    if not wants:
        until = min(until, quiet_until)
    wants = wants and not stopped
    while (idle := at < until).any():
        clock.count[rows[idle]] += 1
        if not wants:
            due[rows[idle]] = math.inf
            break
        again = idle & any_free
        due[rows[idle & ~any_free]] = math.inf
        rows, free_maps, free_reduces = rows[again], free_maps[again], free_reduces[again]
        any_free = any_free[again]
        at = HeartbeatClock._next_beats(clock, rows, at[again])
        due[rows] = at
        kept_awake += len(rows)
        later = (free_maps & (at >= map_from)) | (free_reduces & (at >= reduce_from))
        if later.any():
            until = min(until, float(at[later].min()))
    return kept_awake


@st.composite
def clocks(draw, min_size=0):
    n = draw(st.integers(min_size, 12))
    due = np.array(draw(st.lists(st.sampled_from(DUE), min_size=n, max_size=n)), dtype=float)
    interval = np.array(draw(st.lists(st.sampled_from(INTERVALS), min_size=n, max_size=n)), dtype=float)
    fraction = np.array(draw(st.lists(st.sampled_from([0.0, 0.1, 0.5, 0.9, 0.999]), min_size=n, max_size=n)))
    slots = np.array(draw(st.lists(st.integers(0, 2), min_size=2 * n, max_size=2 * n)), dtype=np.int64).reshape(n, 2)
    busy = np.array(draw(st.lists(st.integers(0, 2), min_size=2 * n, max_size=2 * n)), dtype=np.int64).reshape(n, 2)
    count = np.array(draw(st.lists(st.integers(0, 5), min_size=n, max_size=n)), dtype=np.int64)
    return SimpleNamespace(due=due, offset=fraction * interval, interval=interval, slots=slots, busy=busy, count=count)


def bits(a):
    return np.asarray(a, dtype=float).view(np.int64).tolist()


@settings(max_examples=400, deadline=None)
@given(clocks(min_size=1), st.booleans())
def test_beat_first_is_numpys(clock, with_nan):
    if with_nan:  # never in the model; NumPy's min and argmin stop at the first NaN
        clock.due[len(clock.due) // 2] = math.nan
    got, want = beat_first(clock.due, clock.slots, clock.busy), numpy_beat_first(clock.due, clock.slots, clock.busy)
    assert got[1:] == want[1:]
    zeros = clock.due[clock.due == 0]
    if (
        want[0] == 0 and len(set(np.signbit(zeros).tolist())) == 2
    ):  # NumPy's min keeps either zero, by its SIMD order: equal only
        assert got[0] == want[0] == 0.0  # (beat times are never -0.0: offsets >= +0.0, k >= 0)
    else:
        assert bits([got[0]]) == bits([want[0]])
    assert all(type(x) is type(y) for x, y in zip(got, want, strict=True))  # has_work gets bools, as before


def test_beat_first_of_no_trackers():
    empty = np.zeros((0, 2), np.int64)
    assert beat_first(np.zeros(0), empty, empty) == (math.inf, -1, 0, False, False)


@settings(max_examples=400, deadline=None)
@given(clocks(), st.sampled_from(DUE + BOUNDS))
def test_the_chains_rows_are_numpys(clock, time):
    """`_fire`'s rows from `beat_first` (the earliest alone, or none, or NumPy's when it cannot tell) are
    `np.flatnonzero(due <= now)`, at the earliest beat (a link run at once) and at any other time."""
    if not len(clock.due):
        return
    for now in (time, float(clock.due.min())):
        low, first, ties, _, _ = beat_first(clock.due, clock.slots, clock.busy)
        if low > now:
            rows = []
        elif low == now and ties == 1:
            rows = [first]
        else:
            rows = np.flatnonzero(clock.due <= now).tolist()
        assert rows == np.flatnonzero(clock.due <= now).tolist()


@settings(max_examples=400, deadline=None)
@given(clocks(), st.sampled_from(BOUNDS))
def test_beat_any_free_is_numpys(clock, until):
    assert beat_any_free(clock.due, until, clock.slots, clock.busy) is numpy_any_free(
        clock.due, until, clock.slots, clock.busy
    )


def times(clock):
    """Bounds among which some are beat times of the clock's rows (ties of `>=` and `<` with beats)."""
    beats = (clock.offset[:, None] + np.arange(6) * clock.interval[:, None]).ravel().tolist()
    return st.sampled_from(BOUNDS + beats)


@settings(max_examples=1000, deadline=None)
@given(clocks(), st.data())
def test_beat_ahead_is_numpys(clock, data):
    """Counts, beat times (bits) and beats kept awake, whatever the outlook; the outlook only when a row due before
    `until` has a free slot, as `_look_ahead` asks it."""
    until = data.draw(times(clock).filter(math.isfinite))  # `_look_ahead` returns before it with an infinite bound
    outlook = (data.draw(st.booleans()), data.draw(times(clock)), data.draw(times(clock)), data.draw(times(clock)))
    stopped = data.draw(st.booleans())
    want = SimpleNamespace(**{k: v.copy() for k, v in vars(clock).items()})
    kept_want = numpy_look_ahead(want, until, outlook, stopped)
    if beat_any_free(clock.due, until, clock.slots, clock.busy):
        wants, quiet_until, map_from, reduce_from = outlook
    else:
        wants, quiet_until, map_from, reduce_from = False, math.inf, math.inf, math.inf
    kept = beat_ahead(clock.due, clock.count, clock.offset, clock.interval, clock.slots, clock.busy, until,
                      wants, stopped, quiet_until, map_from, reduce_from)  # fmt: skip
    assert kept == kept_want
    assert clock.count.tolist() == want.count.tolist()
    assert bits(clock.due) == bits(want.due)


def test_beat_ahead_hand_worked():
    """tests/test_heartbeat_clock.py's: three trackers with free map slots every 0.25 s from 1/32, 2/32, 3/32 s, a
    map backup possible from 0.55 s, the next event at 1 s: beats before 0.55 s counted, 7 kept awake."""
    due = np.array([1, 2, 3]) / 32
    count = np.zeros(3, np.int64)
    slots, busy = np.ones((3, 2), np.int64), np.array([[0, 1]] * 3, np.int64)
    kept = beat_ahead(due, count, due.copy(), np.full(3, 0.25), slots, busy, 1.0, True, False, math.inf, 0.55, math.inf)
    assert (kept, count.tolist(), due.tolist()) == (7, [3, 2, 2], [25 / 32, 18 / 32, 19 / 32])


@settings(max_examples=1000, deadline=None)
@given(
    st.floats(0.0, 1e5, allow_subnormal=False),
    st.floats(1e-3, 10.0),
    st.one_of(st.floats(0.0, 1e6), st.sampled_from([0.0, 0.1, 0.3, 1.0 / 3, 0.7, 1e5 + 0.3])),
)
def test_beat_after_is_next_beats(offset, interval, now):
    """One row's next beat after `now`, bit for bit `_next_beats` (also when `now` is a beat, as rounding makes it)."""
    clock = SimpleNamespace(offset=np.array([offset]), interval=np.array([interval]))
    for t in (now, offset + math.floor(now / interval) * interval):
        want = HeartbeatClock._next_beats(clock, np.array([0]), np.array([t]))[0]
        assert bits([_beat_after(offset, interval, t)]) == bits([want])
