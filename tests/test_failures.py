"""Task failure and retry (HadoopConfig.task_failure_probability): a failing attempt runs part of its plan and
ends failed; its task is retried. The plan is never cut, so the shuffle feed and the merge plan still find it."""

from __future__ import annotations

from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from hadoop_layer.profiles import PUMA
from scenarios.registry import SCENARIOS
from scenarios.runner import run_model
from scenarios.settings import validate
from tests.helpers import small_cluster, uniform_maps


def _run(seed: int, plans: dict | None = None, **overrides):
    scenario = SCENARIOS["flexslot"]
    model = scenario.build(validate(scenario.Settings, overrides), seed, check=True)
    if plans is not None:
        note_plans_at_end(model, plans)
    run_model(model, scenario.horizon_s(model), progress=False)
    return model


def note_plans_at_end(model, plans: dict) -> None:
    """plans[attempt name] = (progress marks, phases, fail_after) as the attempt ends: once ended it is a row of the
    model's `ended` columns, which keeps only its phases' names."""
    jt = model.jobtracker
    finished = jt.attempt_finished

    def noting(attempt):
        plans[attempt.name] = (len(attempt.progress_marks), len(attempt.phases), attempt.fail_after)
        finished(attempt)

    jt.attempt_finished = noting


def test_the_run_that_crashed_in_feed_reduces_runs_to_its_end():
    # issue 12: `vcloud run flexslot --set scale=0.1 hadoop.task_failure_probability=0.3 --seed 2` stopped with
    # IndexError in JobTracker._feed_reduces (a failing reduce's phases had been cut to its setup)
    model = _run(2, scale=0.1, **{"hadoop.task_failure_probability": 0.3})
    assert any(a.state == "failed" for a in model.attempts())
    assert not model.running and model.jobtracker.jobs[0].state in ("succeeded", "failed")


def test_a_reduce_failing_in_its_setup_while_maps_finish_is_retried_and_the_job_succeeds():
    model = small_cluster(slaves=3, jvm_start_core_s=30.0)  # a 30 s setup: maps finish while the reduce starts
    job = model.add_job("j", PUMA["wordcount"], 0.0, uniform_maps(12), 1)
    jt, launch = model.jobtracker, model.jobtracker.launch

    def launch_first_reduce_to_fail(tracker, order):
        attempt = launch(tracker, order)
        if attempt.task.kind == "r" and attempt.number == 0:
            attempt.fail_fraction = 0.0  # fails at the end of the phase it is in when its plan is complete
        return attempt

    jt.launch = launch_first_reduce_to_fail
    plans: dict = {}
    note_plans_at_end(model, plans)
    model.run_until(3000.0)
    first, *retries = job.reduces[0].attempts
    assert first.state == "failed" and len(first.phase_end_s)  # it ran its setup at least
    marks, phases, _ = plans[first.name]
    assert marks == phases == len(first.phases) > 2  # its plan was completed, never cut
    assert [a.state for a in retries] == ["done"] and job.state == "succeeded"
    model.check_hadoop_end()


def test_a_failing_attempt_keeps_its_whole_plan_and_ends_at_its_failure_point():
    plans: dict = {}
    model = _run(3, plans, scale=0.05, **{"hadoop.task_failure_probability": 0.2, "hadoop.max_attempts": 8})
    failed = [a for a in model.attempts() if a.state == "failed"]
    assert failed
    for a in failed:
        # it ended after `fail_after` phases, not after its whole (uncut) plan unless that is where it failed
        marks, phases, fail_after = plans[a.name]
        assert fail_after is not None and len(a.phase_end_s) == min(fail_after, len(a.phases))
        assert (marks, phases) == (len(a.phases), len(a.phases))
    assert model.jobtracker.jobs[0].state == "succeeded"
    model.check_hadoop_end()  # each task succeeded once, the input processed once


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    seed=st.integers(0, 2**16),
    scheduler=st.sampled_from(["fifo", "fair", "capacity", "coupling", "quincy"]),
    speculation=st.sampled_from(["none", "hadoop", "late", "samr"]),
    slot_manager=st.sampled_from(["none", "skewtune", "flexslot", "flexslot-unlimited"]),
    probability=st.sampled_from([0.05, 0.2, 0.4]),
    copiers=st.booleans(),
)
# a map's 8th failure ends the job, and another map's success in the same tick comes after: it is dropped as killed
@example(seed=2161, scheduler="fifo", speculation="none", slot_manager="flexslot-unlimited", probability=0.4,
         copiers=False)  # fmt: skip
def test_check_runs_with_task_failures_hold_every_invariant(
    seed, scheduler, speculation, slot_manager, probability, copiers
):
    overrides = {"scheduler": scheduler, "speculation": speculation, "slot_manager": slot_manager,
                 "hadoop.task_failure_probability": probability, "hadoop.max_attempts": 8,
                 "hadoop.shuffle_copiers": copiers, "hadoop.parallel_copies": 2}  # fmt: skip
    model = _run(seed, scale=0.02, slaves=6, **overrides)
    job = model.jobtracker.jobs[0]
    assert job.state in ("succeeded", "failed") and not model.running
    if job.state == "succeeded":
        model.check_hadoop_end()
