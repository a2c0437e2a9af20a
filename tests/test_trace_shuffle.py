"""A durations replay holds each reduce's shuffle to its recorded time (`shuffle_as_recorded`, trace_replay.py;
JobTracker._finish_shuffle): the shuffle ends no earlier than its recorded shuffleFinished - startTime after the
attempt's start, and still not before the maps' outputs are there. The durations rules are refused elsewhere."""

from __future__ import annotations

import pytest

from scenarios.registry import SCENARIOS
from scenarios.runner import run_model
from scenarios.settings import validate
from tests.rumen_builders import T0, attempt, job, write

SCENARIO = SCENARIOS["trace-replay"]
DT = 0.1


def _reduce_shuffle(tmp_path, name: str, map_s: float, shuffle_s: float, **settings):
    """Maps of 2 s and `map_s` on hosts a and b, a reduce on c recorded from 1 s with its shuffle ending `shuffle_s`
    after its start and 10 s of work after it; replayed (the reduce starts once the short map is done: slow start),
    the reduce's (shuffle end - start, start, last map's end) and the trace job as read."""
    maps = [[attempt("SUCCESS", 0, d, h)] for d, h in ((2, "/r/a"), (map_s, "/r/b"))]
    end = 1 + shuffle_s + 10
    reduce = attempt("SUCCESS", 1, end, "/r/c", shuffleFinished=T0 + int((1 + shuffle_s) * 1000))
    path = write(tmp_path, name, [job("job_1", 0, maps, [[reduce]], finishTime=T0 + int((end + 2) * 1000))])
    s = validate(SCENARIO.Settings, {"trace": str(path), "dt": DT, "speculation": "none", **settings})
    model = SCENARIO.build(s, seed=1)
    run_model(model, SCENARIO.horizon_s(model), progress=False)
    (j,) = model.jobtracker.jobs
    r = j.reduces[0].successful
    shuffle_end = r.phase_end_s[[p.name for p in r.phases].index("shuffle")]
    last_map = max(t.successful.end_s for t in j.maps)
    return shuffle_end - r.start_s, r.start_s, last_map, model.replay.added[0][0]


def test_a_reduce_whose_maps_end_early_ends_its_shuffle_at_its_recorded_shuffle_time_after_its_start(tmp_path):
    # the maps take 2 and 10 s; the traced reduce's shuffle took 40 s (the traced cluster's load, slow fetches)
    held, start, last_map, traced = _reduce_shuffle(tmp_path, "early.json", map_s=10, shuffle_s=40)
    assert traced.reduce_shuffle_s == (40.0,) and traced.reduce_after_shuffle_s == (10.0,)
    assert start < last_map < start + 20  # the maps' outputs were all there long before the 40 s
    assert held == pytest.approx(40.0, abs=DT + 1e-9) and held >= 40.0  # at the first tick at or after it
    free, start, last_map, _ = _reduce_shuffle(tmp_path, "off.json", map_s=10, shuffle_s=40, shuffle_as_recorded=False)
    assert start + free < last_map + 2  # off: it ends once the last map's output is fetched


def test_a_reduce_whose_maps_end_late_still_waits_for_their_outputs(tmp_path):
    # the traced reduce's shuffle took 5 s; its long map runs 30 s: the shuffle ends after it
    held, start, last_map, _ = _reduce_shuffle(tmp_path, "late.json", map_s=30, shuffle_s=5)
    assert start + 5 < last_map < start + held < last_map + 2
    free, _, _, _ = _reduce_shuffle(tmp_path, "late.json", map_s=30, shuffle_s=5, shuffle_as_recorded=False)
    assert free == pytest.approx(held, abs=DT + 1e-9)  # the hold changes nothing here


@pytest.mark.parametrize("key", ["shuffle_as_recorded", "commit_in_runtime"])
def test_the_durations_rules_are_refused_on_a_replay_that_does_not_replay_durations(tmp_path, key):
    path = write(tmp_path, "one.json", [job("job_1", 0, [[attempt("SUCCESS", 0, 5, "/r/a")]])])
    with pytest.raises(ValueError, match=f"{key}: only a durations replay"):
        validate(SCENARIO.Settings, {"trace": str(path), "replay": "physics", key: True})
    s = validate(SCENARIO.Settings, {"trace": str(path), "replay": "physics", key: False})
    if key == "commit_in_runtime":  # physics keeps Hadoop's commit; durations takes it as part of the recorded time
        assert SCENARIO.build(s, seed=1).hadoop.task_commit
        s = validate(SCENARIO.Settings, {"trace": str(path)})
        model = SCENARIO.build(s, seed=1)
        assert not model.hadoop.task_commit and model.used_settings["task_commit"] is False
