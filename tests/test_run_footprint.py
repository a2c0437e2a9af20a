"""What a long run keeps (issue 16: a SWIM day on 600 nodes within 1 GB): a job's tasks exist from its submission,
not from the build, and making them later moves no number."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from scenarios.registry import SCENARIOS
from scenarios.runner import run_model
from scenarios.settings import validate

SWIM = Path(__file__).resolve().parents[2] / "shared" / "data" / "swim" / "FB-2009_samples_24_times_1hr_0.tsv"
if not SWIM.exists():  # a worktree beside the main checkout
    SWIM = Path("/work/shared/data/swim/FB-2009_samples_24_times_1hr_0.tsv")


def _swim(max_jobs: int = 12):
    scenario = SCENARIOS["trace-replay"]
    return scenario, scenario.build(validate(scenario.Settings, {"trace": str(SWIM), "max_jobs": max_jobs}), seed=1)


@pytest.mark.skipif(not SWIM.exists(), reason="the FB-2009 SWIM trace is not here")
def test_a_jobs_tasks_are_made_at_its_submission_numbered_as_at_build():
    scenario, model = _swim()
    jobs = [job for _, job in model.replay.added]
    assert all(job.splits is not None for job in jobs), "no task exists before the run"
    later = jobs[-1]
    assert later.submit_s > 0
    model.run_for(later.submit_s / 2)
    assert later.splits is not None
    run_model(model, scenario.horizon_s(model), progress=False, stops_itself=True)
    first = 1
    for job in jobs:
        gids = [t.gid for t in (*job.maps, *job.reduces)]
        assert job.splits is None and gids == list(range(first, first + len(gids)))
        first += len(gids)
    assert len(model.task_job) == first


@pytest.mark.skipif(not SWIM.exists(), reason="the FB-2009 SWIM trace is not here")
def test_tasks_made_at_build_or_at_submission_give_the_same_run():
    runs = []
    for early in (False, True):
        scenario, model = _swim()
        if early:
            for _, job in model.replay.added:
                job.make_tasks()
        run_model(model, scenario.horizon_s(model), progress=False, stops_itself=True)
        runs.append(scenario.frames(model))
    for table in ("tasks", "jobs", "vm_trace"):
        pd.testing.assert_frame_equal(runs[0][table], runs[1][table])
