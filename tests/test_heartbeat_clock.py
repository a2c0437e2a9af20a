"""The heartbeat clock (hadoop_layer/heartbeats.py): counting quiet beats ahead changes no launch and no count,
and a woken cluster costs one Mesa event per beat that does something, not one per tracker."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest

from hadoop_layer.profiles import PUMA
from scenarios.registry import SCENARIOS
from scenarios.runner import run_model
from scenarios.settings import validate
from tests.helpers import small_cluster, uniform_maps

SWIM = Path(__file__).resolve().parents[2] / "shared" / "data" / "swim" / "FB-2009_samples_24_times_1hr_0.tsv"


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
