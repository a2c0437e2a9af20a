"""The ended attempts' columns (hadoop_layer/ended.py) say what the attempt objects said as they ended, for every
attempt of random runs with failures, speculation, setup and cleanup tasks, and of a replayed trace."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from hadoop_layer.ended import task_key
from hadoop_layer.tasks import TaskAttempt
from scenarios.runner import run_model
from tests.helpers import random_failing_cluster
from tests.runs import SWIM, swim


def _read(a) -> tuple:
    """What readers ask of an ended attempt (an object as it ends, or its record after)."""
    return (a.name, task_key(a.task), a.task.task_id, a.tracker, a.locality, a.start_s, a.end_s, str(a.state),
            a.speculative, a.output_mb, a.spills, a.cputime_s, a.steal_s, a.iowait_s, a.charged("read_disk_mb"),
            a.charged("read_cache_mb"), a.charged("io_mb"), a.runtime_s, a.progress_score, list(a.phase_end_s),
            [p.name for p in a.phases], a.row)  # fmt: skip


def _noted(model) -> dict[int, tuple]:
    """Every attempt as the ended columns take it in, by row: what the object says then."""
    noted, add = {}, model.ended.add

    def noting(attempt: TaskAttempt) -> int:
        row = add(attempt)
        noted[row] = _read(attempt)
        return row

    model.ended.add = noting
    return noted


@pytest.mark.parametrize("seed", range(6))
def test_the_columns_say_what_each_attempt_said_as_it_ended(seed):
    model = random_failing_cluster(seed)
    noted = _noted(model)
    model.run_until(float(np.random.default_rng(seed).uniform(200, 3000)))
    ended = model.ended
    assert len(noted) == len(ended) > 0
    for row, said in noted.items():
        assert _read(ended.record(row)) == said


def test_a_random_run_with_failures_and_backups_records_both():
    said = []
    for seed in range(6):
        model = random_failing_cluster(seed)
        _noted(model)
        model.run_until(3000.0)
        said += [str(a.state) for a in model.ended.records()] + [str(a.speculative) for a in model.ended.records()]
    assert {"done", "failed", "killed", "True"} <= set(said)


@pytest.mark.skipif(not SWIM.exists(), reason="the FB-2009 SWIM trace is not here")
def test_a_replayed_trace_with_setup_and_cleanup_is_recorded_as_it_ran():
    scenario, model = swim(max_jobs=12)
    noted = _noted(model)
    run_model(model, scenario.horizon_s(model), progress=False, stops_itself=True)
    assert len(noted) == len(model.ended) > 0
    assert {n[0].split("_")[-2] for n in noted.values()} >= {"setup", "cleanup"}
    for row, said in noted.items():
        assert _read(model.ended.record(row)) == said


@pytest.mark.parametrize("seed", [1, 4])
def test_the_tasks_table_reads_each_attempt_as_its_object_or_record_says_running_ones_too(seed):
    from hadoop_layer.model import TASK_COLUMNS, TASK_DTYPES, _task_row

    model = random_failing_cluster(seed)
    while not (model.running_attempts() and len(model.ended)):  # some attempts ended, some run
        model.run_for(5.0)
    frame = model.tasks_frame()
    jobs = model.jobtracker.jobs
    attempts = [*model.attempts(), *(a for j in jobs for t in j.lifecycle_tasks for a in t.attempts)]
    assert any(a.row is not None for a in attempts) and any(a.row is None for a in attempts)
    assert frame["attempt"].tolist() == [a.name for a in attempts]
    names = [c for c in TASK_COLUMNS if c not in ("cputime_s", "steal_s", "iowait_s", "read_disk_mb", "read_cache_mb")]
    for c, values in zip(names, zip(*map(_task_row, attempts), strict=True), strict=True):  # as it was built
        pd.testing.assert_series_equal(frame[c], pd.Series(pd.array(values, dtype=TASK_DTYPES[c]), name=c))
    assert frame["cputime_s"].tolist() == [a.cputime_s for a in attempts]
    for c in ("steal_s", "iowait_s", "read_disk_mb", "read_cache_mb"):
        assert frame[c].tolist() == [a.charged(c) for a in attempts]
