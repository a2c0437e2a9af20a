"""Job.running_attempts, the running attempts of a job's running tasks kept as attempts start and end and as tasks
change state (Job.set_state, AttemptRegistry.add/remove), always equals a recount over `job.running_tasks`: the
Fair and Capacity schedulers read it at every heartbeat instead of recounting. Check mode
(`HadoopModel.check_invariants`, every tick) compares the two; these runs mix failures, backups and their kills,
preemption kills and job-ending failures."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from hadoop_layer.tasks import TaskKind
from scenarios.registry import SCENARIOS
from scenarios.runner import run_model
from scenarios.settings import validate
from vcloud.model import InvariantError


def _recount(job) -> dict:
    return {k: sum(len(t.active) for t in job.running_tasks[k]) for k in (TaskKind.MAP, TaskKind.REDUCE)}


def _model(seed: int, **overrides):
    scenario = SCENARIOS["flexslot"]
    return scenario.build(validate(scenario.Settings, overrides), seed, check=True), scenario


@settings(max_examples=10, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    seed=st.integers(0, 2**16),
    scheduler=st.sampled_from(["fifo", "fair", "capacity", "coupling"]),
    speculation=st.sampled_from(["none", "hadoop", "late"]),
    probability=st.sampled_from([0.0, 0.1, 0.4]),
    preemption=st.booleans(),
)
def test_running_attempt_counts_equal_a_recount_at_every_tick_and_heartbeat(
    seed, scheduler, speculation, probability, preemption
):
    overrides = {"scheduler": scheduler, "speculation": speculation, "hadoop.task_failure_probability": probability,
                 "hadoop.max_attempts": 8}  # fmt: skip
    if scheduler == "fair" and preemption:
        overrides |= {"fair.preemption": True, "fair.fair_share_preemption_timeout_s": 5.0,
                      "fair.preemption_interval_s": 1.0}  # fmt: skip
    model, scenario = _model(seed, scale=0.02, slaves=6, **overrides)
    jt = model.jobtracker
    heartbeat, seen = jt.heartbeat, []

    def checked(tracker, *args, **kwargs):  # before and after every heartbeat's launches
        for job in jt.jobs:
            assert job.running_attempts == _recount(job)
        out = heartbeat(tracker, *args, **kwargs)
        for job in jt.jobs:
            assert job.running_attempts == _recount(job)
        seen.append(sum(j.running_attempts[TaskKind.MAP] for j in jt.jobs))
        return out

    jt.heartbeat = checked
    run_model(model, scenario.horizon_s(model), progress=False)  # check mode: check_invariants every tick
    assert seen and max(seen) > 0
    for job in jt.jobs:
        assert job.running_attempts == _recount(job) == {TaskKind.MAP: 0, TaskKind.REDUCE: 0}


def test_check_mode_catches_a_running_attempt_count_that_drifted():
    model, _ = _model(1, scale=0.02, slaves=6, scheduler="fair")
    model.run_until(60.0)
    job = model.jobtracker.running_jobs[0]
    assert job.running_attempts[TaskKind.MAP] > 0
    job.running_attempts[TaskKind.MAP] += 1
    with pytest.raises(InvariantError, match="running attempts"):
        model.check_invariants()


@settings(max_examples=60, deadline=None)
@given(
    data=st.dictionaries(st.integers(0, 11), st.floats(0.0, 1e4, allow_nan=False), max_size=12),
    candidates=st.lists(st.integers(0, 11), max_size=12, unique=True),
    seed=st.integers(0, 1000),
)
def test_centrality_lists_are_those_of_the_scalar_sums(data, candidates, seed):
    """centrality_lists' array terms give the lists of the plain loop sum(w * hops(v, u)) (same rng draws)."""
    import numpy as np

    from policies.schedulers.coupling import centrality_lists

    def hops(u, v, racks):  # Eq. (1)'s h: same node 0, same rack 1, else 2
        return 0 if u == v else 1 if racks[u] == racks[v] else 2

    racks = np.array([0, 0, 0, 1, 1, 1, 2, 2, 2, 3, 3, 3])
    costs = [sum(w * hops(v, u, racks) for u, w in data.items()) for v in candidates]
    tie = np.random.default_rng(seed).permutation(len(candidates)) if len(candidates) > 1 else [0] * len(candidates)
    order = sorted(range(len(candidates)), key=lambda i: (costs[i], tie[i]))
    chosen = [candidates[i] for i in order[:7]]
    assert centrality_lists(data, candidates, racks, 7, np.random.default_rng(seed)) == (
        chosen[:1],
        chosen[1:3],
        chosen[3:],
    )
