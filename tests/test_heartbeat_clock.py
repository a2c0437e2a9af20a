"""The heartbeat clock (hadoop_layer/heartbeats.py): counting quiet beats ahead changes no launch and no count,
and a woken cluster costs one Mesa event per beat that does something, not one per tracker."""

from __future__ import annotations

import math
from functools import partial

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hadoop_layer.model import HadoopModel
from hadoop_layer.profiles import PUMA
from policies.speculation.hadoop_lookahead import HadoopLookAhead
from scenarios.registry import SCENARIOS
from scenarios.runner import run_model
from scenarios.settings import validate
from tests.helpers import slow_nodes_mix, small_cluster, uniform_maps
from tests.runs import SWIM
from vcloud.clock import next_event_s


def swim_run(look_ahead: bool, speculation: str):
    scenario = SCENARIOS["trace-replay"]
    settings = {"trace": str(SWIM), "max_jobs": 25, "slaves": 40, "hosts": 11, "speculation": speculation}
    model = scenario.build(validate(scenario.Settings, settings), seed=4)
    model.heartbeat_clock.look_ahead = look_ahead
    run_model(model, scenario.horizon_s(model), progress=False, stops_itself=True)
    return model, model.heartbeat_clock.fires


@pytest.mark.skipif(not SWIM.exists(), reason="needs ../shared/data")
@pytest.mark.parametrize("speculation", ["hadoop", "none"])
def test_counting_quiet_beats_ahead_changes_no_launch_and_no_count(speculation):
    """The SWIM lifecycle (a setup or cleanup task wakes every free tracker, one takes it) with and without the
    look-ahead: the same attempts on the same trackers at the same times, the same heartbeats per tracker."""
    ahead, fired_ahead = swim_run(True, speculation)
    each, fired_each = swim_run(False, speculation)
    a, b = ahead.tasks_frame(), each.tasks_frame()
    assert len(a) > 100
    columns = ["attempt", "vm", "start_s", "end_s"]
    assert a[columns].equals(b[columns])
    np.testing.assert_array_equal(ahead.heartbeat_clock.count, each.heartbeat_clock.count)
    assert fired_ahead < 0.5 * fired_each  # most of the woken trackers' beats were counted ahead


def waiting_backups(look_ahead: bool) -> HadoopModel:
    """30 trackers of 2 map and 2 reduce slots: two long maps lag (backups possible) while a map-only filler job keeps
    every map slot taken (FIFO fills a freed slot before speculation looks), so the trackers with free reduce slots
    only are kept awake with nothing to launch; then a job with reduces, and the backups once the filler is done."""
    model = small_cluster(slaves=30, speculation=HadoopLookAhead(), map_slots=2, reduce_slots=2)
    model.heartbeat_clock.look_ahead = look_ahead
    maps = uniform_maps(20, core_s=20.0)
    maps[3] = maps[11] = uniform_maps(1, core_s=1000.0)[0]
    model.add_job("stragglers", PUMA["grep"], 0.0, maps, 0)
    model.add_job("filler", PUMA["grep"], 5.0, uniform_maps(600, core_s=30.0), 0)
    model.add_job("reducing", PUMA["wordcount"], 100.0, uniform_maps(60, core_s=20.0), 8)
    model.run_until(2000.0)
    return model


def scenario_run(look_ahead: bool, name: str, settings: dict, seed: int) -> HadoopModel:
    scenario = SCENARIOS[name]
    model = scenario.build(validate(scenario.Settings, settings), seed=seed)
    model.heartbeat_clock.look_ahead = look_ahead
    run_model(model, scenario.horizon_s(model), progress=False, stops_itself=scenario.stops_itself)
    return model


IDLE_CASES = [
    pytest.param(waiting_backups, id="waiting-backups"),
    pytest.param(slow_nodes_mix, id="slow-nodes"),
    pytest.param(partial(scenario_run, name="flexslot", settings={"allocator": "static", "scale": 0.25}, seed=1),
                 id="flexslot-static"),
]  # fmt: skip


@pytest.mark.parametrize("run", IDLE_CASES)
def test_beats_counted_ahead_while_trackers_stay_awake_change_no_launch_and_no_count(run):
    """Beats that cannot launch anything are counted ahead even when their trackers stay awake (a backup is possible
    somewhere, not in their free slots): every attempt, its tracker, times and progress, and every tracker's
    heartbeat count are those of one event per beat."""
    ahead, each = run(look_ahead=True), run(look_ahead=False)
    a, b = ahead.tasks_frame(), each.tasks_frame()
    assert len(a) > 100 and a["speculative"].any()
    pd.testing.assert_frame_equal(a, b)
    np.testing.assert_array_equal(ahead.heartbeat_clock.count, each.heartbeat_clock.count)
    assert ahead.heartbeat_clock.kept_awake > 0  # the path is exercised (5 times in flexslot-static)
    assert ahead.heartbeat_clock.fires < each.heartbeat_clock.fires


def test_a_woken_cluster_beats_once_per_tracker_and_sleeps():
    """Six idle trackers woken by a job that has nothing left to give them by their first beat: each beats once
    (counted), then sleeps; the one that took the work beats on while it has free slots and pending maps."""
    model = small_cluster(slaves=6, map_slots=1)
    model.add_job("j", PUMA["grep"], 0.0, uniform_maps(1, core_s=100.0), 0)
    model.run_until(30.0)
    clock = model.heartbeat_clock
    assert clock.count.sum() == 6  # the submission woke all six; one got the map; the others beat quietly once
    assert np.all(clock.due == math.inf)  # nobody wants anything: no beat is coming
    assert [len(t.running[k]) for t in model.trackers for k in t.running].count(1) == 1
    assert clock.busy.sum() == 1 and clock.busy[:, 1].sum() == 0


def test_the_look_ahead_stops_before_a_beat_that_may_get_a_backup(monkeypatch):
    """Trackers kept awake with free map slots only, beating every 0.25 s from 1/32, 2/32 and 3/32 s, while a map
    backup becomes possible at 0.55 s: the beats before it are counted ahead (one tracker's third beat among them),
    none at or after it, although the next event is the tick at 1 s."""
    model = small_cluster(slaves=3, map_slots=1, reduce_slots=1)
    model.start()
    clock = model.heartbeat_clock
    clock.set_phase(0.25, np.array([1, 2, 3]) / 32)
    clock.due[:] = clock.offset
    monkeypatch.setattr(model.jobtracker, "beat_outlook", lambda: (True, math.inf, 0.55, math.inf))
    assert next_event_s(model) == 1.0
    clock._look_ahead()
    np.testing.assert_array_equal(clock.count, [3, 2, 2])
    np.testing.assert_array_equal(clock.due, [25 / 32, 18 / 32, 19 / 32])
    assert clock.kept_awake == 7


@settings(max_examples=6, deadline=None)
@given(seed=st.integers(1, 10**6), formula=st.sampled_from(["1.0", "1.1"]), dt=st.sampled_from([1.0, 2.0, 5.0]))
def test_the_look_ahead_launches_and_counts_as_one_event_per_beat(seed, formula, dt):
    """`slow_nodes_mix` at random: the same attempts and heartbeat counts with and without the look-ahead."""
    ahead, each = (slow_nodes_mix(look_ahead, seed, formula, dt) for look_ahead in (True, False))
    pd.testing.assert_frame_equal(ahead.tasks_frame(), each.tasks_frame())
    np.testing.assert_array_equal(ahead.heartbeat_clock.count, each.heartbeat_clock.count)


def fair_swim_run(inline: bool) -> HadoopModel:
    """The SWIM lifecycle under the Fair scheduler, whose every beat reaches the scheduler (not quiet when idle):
    a chain of many links, most with no other event before them."""
    scenario = SCENARIOS["trace-replay"]
    settings = {"trace": str(SWIM), "max_jobs": 25, "slaves": 40, "hosts": 11, "scheduler": "fair"}
    model = scenario.build(validate(scenario.Settings, settings), seed=4)
    model.heartbeat_clock.inline = inline
    run_model(model, scenario.horizon_s(model), progress=False, stops_itself=True)
    return model


@pytest.mark.skipif(not SWIM.exists(), reason="needs ../shared/data")
def test_running_the_next_link_at_once_changes_no_launch_and_no_count():
    """The chain's links run at once when no other event comes first, or each as its own Mesa event: the same
    attempts, trackers, times and progress, the same heartbeats per tracker, the same links."""
    at_once, evented = fair_swim_run(True), fair_swim_run(False)
    a, b = at_once.tasks_frame(), evented.tasks_frame()
    assert len(a) > 100
    pd.testing.assert_frame_equal(a, b)
    np.testing.assert_array_equal(at_once.heartbeat_clock.count, evented.heartbeat_clock.count)
    assert at_once.heartbeat_clock.fires == evented.heartbeat_clock.fires
    assert evented.heartbeat_clock.inlined == 0
    assert at_once.heartbeat_clock.inlined > 0.5 * at_once.heartbeat_clock.fires


def test_a_link_run_at_once_keeps_mesas_order_and_the_loops_end(monkeypatch):
    """Fair (every beat reaches it) on 60 trackers beating every 3 s, probe events every 0.37 s, the clock run in
    chunks of 0.25 s: every beat and probe runs in time order, and no beat runs past the end of the chunk it ran in."""
    from hadoop_layer.tracker import TaskTracker
    from policies.schedulers.fair import FairScheduler

    model = small_cluster(slaves=60, scheduler=FairScheduler(), map_slots=2)
    model.add_job("j", PUMA["grep"], 0.0, uniform_maps(2000, core_s=2.0), 0)
    seen: list[tuple[float, str]] = []
    beat = TaskTracker.beat
    monkeypatch.setattr(TaskTracker, "beat", lambda self: seen.append((float(model.time), "beat")) or beat(self))

    class Probe:
        def __call__(self) -> None:
            seen.append((float(model.time), "probe"))

    probe = Probe()  # Mesa keeps a weak reference to the callable
    for k in range(1, 100):
        model.schedule_event(probe, at=0.37 * k)
    while model.time < 30.0:
        model.run_for(0.25)
        assert all(t <= model.time for t, _ in seen)
    times = [t for t, _ in seen]
    assert times == sorted(times)
    assert sum(kind == "beat" for _, kind in seen) > 100 and model.heartbeat_clock.inlined > 0
