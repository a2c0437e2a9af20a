"""An ended job's maps and reduces become rows (hadoop_layer/ended.py, `retire`): the Task objects are garbage, the
views say what the objects said as the job ended, and the tables, the summary and the end checks are those the
objects gave."""

from __future__ import annotations

import gc

import numpy as np
import pandas as pd
import pytest

import hadoop_layer.jobtracker as jobtracker
from hadoop_layer.ended import EndedTask, EndedTaskList, retire, task_key
from hadoop_layer.tasks import JobState, Task
from scenarios.runner import run_model
from tests.helpers import random_failing_cluster, skewed_job, small_cluster
from tests.runs import SWIM, swim

ENDED = {JobState.SUCCEEDED, JobState.FAILED, JobState.KILLED}


def _read(t) -> tuple:
    """What readers ask of a task (its object, or its view once its job has ended)."""
    return (t.task_id, t.gid, task_key(t), t.job, str(t.kind), t.index, str(t.state), t.role, t.input_mb, t.cpu_mc,
            t.output_mb, t.output_records, t.split_mb, t.offset_mb, t.output_mb_final, t.ready_s, t.start_s, t.end_s,
            t.after_shuffle_s, t.min_shuffle_s, t.launches, t.failures, t.kill_count, t.won, t.progress, t.nodes_tried,
            t.active, list(t.replay), t.replicas.tolist(), None if t.parent is None else t.parent.task_id,
            [c.task_id for c in t.children], [a.name for a in t.attempts],
            None if t.successful is None else t.successful.name)  # fmt: skip


def _noting_retire(monkeypatch) -> dict[tuple, tuple]:
    """Every task as its job retires it, by key: what the object says then."""
    noted = {}

    def noting(job) -> bool:
        said = {task_key(t): _read(t) for t in (*job._maps, *job._reduces)} if job.splits is None else {}
        done = retire(job)
        if done:
            noted.update(said)
        return done

    monkeypatch.setattr(jobtracker, "retire", noting)
    return noted


def _live_tasks(model) -> list[Task]:
    gc.collect()
    return [o for o in gc.get_objects() if type(o) is Task and o.job.model is model]


def _check_retired(model, noted: dict) -> None:
    """Ended jobs' maps and reduces are views saying what their objects said; no object of them is alive."""
    jobs = [j for j in model.jobtracker.jobs if j.state in ENDED]
    assert jobs
    views = [t for j in jobs for t in (*j.maps, *j.reduces)]
    assert all(isinstance(j.maps, EndedTaskList) for j in jobs) and all(type(t) is EndedTask for t in views)
    assert len(noted) == len(views) > 0
    for t in views:
        assert _read(t) == noted[task_key(t)]
        assert t == t.job.maps[t.index] if t.kind == "m" else t == t.job.reduces[t.index]
    speculation = model.jobtracker.speculation
    if hasattr(speculation, "_scores"):  # LATE's and SAMR's memo of the last tick, dropped at the next one
        speculation._scores, speculation._state = {}, {}
    live = _live_tasks(model)
    assert all(t.role or t.job.state not in ENDED for t in live), "an ended job's task is still alive"


@pytest.mark.parametrize("seed", range(6))
def test_an_ended_jobs_tasks_are_rows_saying_what_the_objects_said(seed, monkeypatch):
    model = random_failing_cluster(seed)
    noted = _noting_retire(monkeypatch)
    model.run_until(3000.0)
    _check_retired(model, noted)
    model.check_hadoop_end()


@pytest.mark.skipif(not SWIM.exists(), reason="the FB-2009 SWIM trace is not here")
def test_a_replayed_traces_ended_jobs_tasks_are_rows_saying_what_the_objects_said(monkeypatch):
    scenario, model = swim(max_jobs=12)
    noted = _noting_retire(monkeypatch)
    run_model(model, scenario.horizon_s(model), progress=False, stops_itself=True)
    _check_retired(model, noted)
    model.check_hadoop_end()


def _outputs(model, scenario=None) -> tuple:
    frames = scenario.frames(model) if scenario else {"tasks": model.tasks_frame(), "jobs": model.jobs_frame()}
    return frames, model.hadoop_summary(), [a.name for a in model.attempts()]


def _unretired(monkeypatch) -> None:
    monkeypatch.setattr(jobtracker, "retire", lambda job: False)


@pytest.mark.parametrize("seed", [0, 1, 3])
def test_the_tables_and_summary_from_rows_are_those_from_the_objects(seed, monkeypatch):
    outputs = []
    for keep in (False, True):
        with monkeypatch.context() as m:
            if keep:
                _unretired(m)
            model = random_failing_cluster(seed)
            model.run_until(3000.0)
            assert any(isinstance(j.maps, EndedTaskList) for j in model.jobtracker.jobs) != keep
            outputs.append(_outputs(model))
    (frames, summary, names), (kept, kept_summary, kept_names) = outputs
    for name in frames:
        pd.testing.assert_frame_equal(frames[name], kept[name])
    assert summary == kept_summary and names == kept_names


@pytest.mark.skipif(not SWIM.exists(), reason="the FB-2009 SWIM trace is not here")
def test_a_replayed_traces_tables_from_rows_are_those_from_the_objects(monkeypatch):
    outputs = []
    for keep in (False, True):
        with monkeypatch.context() as m:
            if keep:
                _unretired(m)
            scenario, model = swim(max_jobs=12)
            run_model(model, scenario.horizon_s(model), progress=False, stops_itself=True)
            outputs.append((_outputs(model, scenario), scenario.summary(model)))
    ((frames, summary, names), report), ((kept, kept_summary, kept_names), kept_report) = outputs
    assert set(frames) >= {"tasks", "jobs", "vm_trace", "comparison"}
    for name in frames:
        pd.testing.assert_frame_equal(frames[name], kept[name])
    assert summary == kept_summary and names == kept_names and report == kept_report


def test_a_job_with_a_running_attempt_keeps_its_task_objects():
    model = random_failing_cluster(2)
    while not model.running_attempts():
        model.run_for(5.0)
    job = model.running_attempts()[0].task.job
    maps = job.maps
    assert not retire(job) and job.maps is maps and all(type(t) is Task for t in maps)
    assert set(map(id, maps)) <= set(map(id, _live_tasks(model)))  # what the test of the ended ones finds garbage


def test_an_ended_attempt_of_a_running_job_names_its_task_object():
    model = random_failing_cluster(0)
    while not any(model.ended.view("group") == 0):
        model.run_for(5.0)
    record = next(a for a in model.ended.records() if a.task.kind == "m")
    assert record.task.job.state not in ENDED and type(record.task) is Task
    assert record.task is record.task.job.maps[record.task.index]  # what policies key their own dicts on


def test_a_view_is_read_only_and_indexes_like_a_list():
    model = random_failing_cluster(0)
    model.run_until(3000.0)
    job = next(j for j in model.jobtracker.jobs if isinstance(j.maps, EndedTaskList))
    maps = job.maps
    assert [t.index for t in maps] == list(range(len(maps))) and maps[-1] == maps[len(maps) - 1]
    assert maps[1:] == list(maps)[1:] and maps[::-2] == list(maps)[::-2] and maps[5:2] == []
    with pytest.raises(IndexError):
        maps[len(maps)]
    with pytest.raises(AttributeError):
        maps[0].state = "pending"
    assert np.isfinite(maps[0].end_s)


def test_a_repartitioned_jobs_pieces_and_ranges_are_rows_saying_what_the_objects_said(monkeypatch):
    from policies.slots.skewtune import SkewTuneManager

    model = small_cluster(slot_manager=SkewTuneManager())
    skewed_job(model)
    noted = _noting_retire(monkeypatch)
    model.run_until(3000.0)
    _check_retired(model, noted)
    model.check_hadoop_end()
    big = model.jobtracker.jobs[0].maps[0]
    assert type(big) is EndedTask and big.children and big.split_mb != big.input_mb
    assert all(p.parent == big and p.offset_mb > 0 for p in big.children)


def test_a_repartitioned_jobs_tasks_table_from_rows_is_that_from_the_objects(monkeypatch):
    """SkewTune's pieces name their parent: read in bulk from the ended job's rows (`EndedTasks.values`) as from
    the objects."""
    from policies.slots.skewtune import SkewTuneManager

    frames = []
    for keep in (False, True):
        with monkeypatch.context() as m:
            if keep:
                _unretired(m)
            model = small_cluster(slot_manager=SkewTuneManager())
            skewed_job(model)
            model.run_until(3000.0)
            assert isinstance(model.jobtracker.jobs[0].maps, EndedTaskList) != keep
            frames.append(model.tasks_frame())
    assert (frames[0]["parent"] != "").sum() > 1 and (frames[0]["kind"] == "r").any()
    pd.testing.assert_frame_equal(frames[0], frames[1], check_exact=True)
