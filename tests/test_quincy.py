"""Quincy as a min-cost flow (h-quincy.txt, algorithms.md 8): hand-solved networks, fairness variants, runs."""

import numpy as np
import pytest

from hadoop_layer.profiles import PUMA
from hadoop_layer.tasks import TaskKind
from policies.schedulers.quincy import QuincyScheduler, QuincySettings, integer_shares
from tests.helpers import no_heartbeats, two_rack_cluster, uniform_maps


def _place(job, replicas):
    """Put map i's block on the given nodes (the locality caches are rebuilt to match)."""
    racks = job.model.node_racks
    job.make_tasks()  # with their caches, which are rebuilt here
    for cache in (job._node_cache, job._rack_cache):
        cache.clear()
    for task, nodes in zip(job.maps, replicas, strict=True):
        task.replicas = np.array(nodes)
    for task in reversed(job.maps):
        for node in task.replicas:
            job._node_cache[int(node)].append(task)
        for rack in {int(racks[n]) for n in task.replicas}:
            job._rack_cache[rack].append(task)


def _where(plan):
    return {task.index: node for node, tasks in plan.routed.items() for task in tasks}


@pytest.mark.parametrize(
    ("integer", "demands", "shares"),
    [(4, [4, 4], [2, 2]), (5, [1, 10, 10], [1, 2, 2]), (4, [1, 10, 10], [1, 2, 1]), (10, [3, 2], [3, 2])],
)
def test_integer_fair_shares(integer, demands, shares):
    # (4, [1, 10, 10]): water level 1.5 -> 1, 1.5, 1.5; floors 1, 1, 1; the one slot left goes to the first
    # largest fraction (job 2)
    assert integer_shares(integer, demands) == shares


def _frozen_cluster(sizes_gb, replicas, now, **settings):
    """One job of maps with the given sizes and block locations, submitted at 0, solved at `now` (no heartbeats).

    Racks: node i on rack i % 2, so rack 0 = {0, 2}, rack 1 = {1, 3}; one map slot per computer. psi = 1 and
    xi = 2 per GB, omega = 0.5 per second: every task's upsilon (edge to U) is 0.5 x now."""
    sched = QuincyScheduler(QuincySettings(**settings))
    model = two_rack_cluster(sched, map_slots=1)
    maps = [m | {"input_mb": 1024.0 * gb} for m, gb in zip(uniform_maps(len(sizes_gb)), sizes_gb, strict=True)]
    job = model.add_job("j", PUMA["grep"], 0.0, maps, 0)
    _place(job, replicas)
    no_heartbeats(model)
    model.run_until(now)
    sched.solve(model.jobtracker.view)
    return sched, model


def _three_tasks():
    # t0: 1 GB on {0, 2}; t1: 2 GB on {0}; t2: 2 GB on {2}. Transfer costs on computers 0, 1, 2, 3:
    #   t0: 0 2 0 2    t1: 0 4 2 4    t2: 2 4 0 4
    # Edges: alpha (to X, the worst computer) = 2, 4, 4; rho_0 (rack 0, worst in it) = 0, 2, 2; gamma = 0 to the
    # replica holders. At 10 s upsilon = 5 > every placement: all three run.
    return _frozen_cluster([1, 2, 2], [[0, 2], [0], [2]], 10.0)


def test_quincy_places_three_tasks_at_the_global_optimum():
    # Candidates (t0, t1, t2): t1 -> 0, t2 -> 2, t0 via X to rack 1: 0 + 0 + 2 = 2  <- optimum (x 1000 = 2000)
    #   t0 -> 0, t1 -> 2 (rho 2), t2 via X (4) = 6;  t0 -> 2, t1 -> 0, t2 via X = 4;  t0 -> 0, t2 -> 2, t1 via X = 4.
    # A greedy heartbeat of computer 0 taking the first local task (t0) would miss it.
    sched, model = _three_tasks()
    plan = sched.plans[TaskKind.MAP]
    where = _where(plan)
    assert where[1] == 0 and where[2] == 2 and where[0] in (1, 3)
    assert plan.cost == 2000 and not plan.unscheduled
    launches = sched.assign(model.trackers[0], model.jobtracker.view)
    assert [launch.task.index for launch in launches] == [1]


@pytest.mark.parametrize(("now", "routed", "waiting", "cost"), [(1.0, [0], 1, 500), (4.0, [0, 2], 0, 1000)])
def test_quincy_waits_while_waiting_is_cheaper_than_moving_data(now, routed, waiting, cost):
    # Two 1 GB splits both on node 0 (rack 0 = {0, 2}); node 0 has one slot. The second task either waits
    # (upsilon = 0.5 x now) or runs rack-local on node 2 (rho_0 = psi x 1 GB = 1; off-rack via X costs 2).
    # At 1 s: waiting costs 0.5 < 1: total 0.5 (500). At 4 s: waiting costs 2 > 1: node 2, total 0 + 1 (1000).
    sched, _ = _frozen_cluster([1, 1], [[0], [0]], now)
    plan = sched.plans[TaskKind.MAP]
    assert sorted(_where(plan).values()) == routed
    assert len(plan.unscheduled) == waiting and plan.cost == cost


@pytest.mark.parametrize(("fairness", "a_tasks"), [("none", 4), ("fair", 2), ("fair-preemption", 2)])
def test_fairness_splits_the_slots(fairness, a_tasks):
    # One rack, 4 computers x 1 map slot; jobs A (submitted at 0) and B (at 5), 4 maps of 1 GB each, all blocks
    # on node 0: placing a task costs 0 on node 0 and psi x 1 = 1 elsewhere, for either job. At 10 s waiting
    # costs 0.5 x 10 = 5 (A) and 0.5 x 5 = 2.5 (B) per task.
    # none: run the 4 tasks that are dearest to keep waiting, A's: 0 + 1 + 1 + 1 + 4 x 2.5 = 13.
    # fair: A_j = 2 each (E = F = 2): 3 + 2 x 5 + 2 x 2.5 = 18.
    sched = QuincyScheduler(QuincySettings(fairness=fairness))
    model = two_rack_cluster(sched, racks=1, map_slots=1)
    jobs = [model.add_job(n, PUMA["grep"], t, uniform_maps(4, mb=1024.0), 0) for n, t in (("A", 0.0), ("B", 5.0))]
    for job in jobs:
        _place(job, [[0]] * 4)
    no_heartbeats(model)
    model.run_until(10.0)
    sched.solve(model.jobtracker.view)
    plan = sched.plans[TaskKind.MAP]
    placed = [t.job.name for tasks in plan.routed.values() for t in tasks]
    assert placed.count("A") == a_tasks and len(placed) == 4
    assert plan.cost == (13000 if fairness == "none" else 18000)


@pytest.mark.parametrize(("fairness", "kills"), [("none", 0), ("fair", 0), ("fair-preemption", 2)])
def test_only_fairness_with_preemption_kills_to_make_room(fairness, kills):
    # A's 4 long maps fill the 4 slots; B arrives at 20 s. Fair shares are then 2 + 2: with preemption 2 of A's
    # running tasks are routed to U_A (killed); without, A keeps its slots and B waits.
    sched = QuincyScheduler(QuincySettings(fairness=fairness))
    sched.period_s = None  # ask for the kills ourselves below, instead of the model every second
    model = two_rack_cluster(sched, racks=1, map_slots=1)
    a = model.add_job("A", PUMA["grep"], 0.0, uniform_maps(4, core_s=200.0), 0)
    b = model.add_job("B", PUMA["grep"], 20.0, uniform_maps(4), 0)
    model.run_until(30.0)
    assert a.count(TaskKind.MAP, "running") == 4 and b.count(TaskKind.MAP, "running") == 0
    victims = sched.preemptions(model.jobtracker.view)
    assert len(victims) == kills and all(k.attempt.task.job is a for k in victims)


def test_quincy_solves_again_only_when_the_cluster_changed():
    sched, model = _three_tasks()
    jt, view = model.jobtracker, model.jobtracker.view
    assert len(sched.solve_times_s) == 1 and sched.solve_times_s[0] > 0

    def heartbeat(node):
        for launch in sched.assign(model.trackers[node], view):
            jt.launch(model.trackers[node], launch)

    heartbeat(0)  # t1 starts where the flow sent it: no change to re-solve for
    heartbeat(2)
    assert len(sched.solve_times_s) == 1
    assert [len(t.running[TaskKind.MAP]) for t in model.trackers[:3:2]] == [1, 1]
    model.add_job("late", PUMA["grep"], 11.0, uniform_maps(2), 0)
    model.run_until(11.5)
    heartbeat(1)  # a job arrived
    assert len(sched.solve_times_s) == 2


def _workload(model):
    return [
        model.add_job("big", PUMA["wordcount"], 0.0, uniform_maps(16, core_s=20.0), 4),
        model.add_job("small", PUMA["grep"], 10.0, uniform_maps(4), 2),
        model.add_job("maponly", PUMA["grep"], 20.0, uniform_maps(6), 0),
    ]


@pytest.mark.parametrize("fairness", ["none", "fair", "fair-preemption"])
@pytest.mark.parametrize("failures", [0.0, 0.2])
def test_quincy_runs_every_job_to_the_end(fairness, failures):
    # with failures: failed attempts requeue their tasks, which must be scheduled again
    sched = QuincyScheduler(QuincySettings(fairness=fairness))
    model = two_rack_cluster(sched, task_failure_probability=failures, max_attempts=8)
    jobs = _workload(model)
    model.run_until(8000.0)
    assert all(j.state == "succeeded" for j in jobs)
    assert any(a.state == "failed" for a in model.attempts()) == bool(failures)
    model.check_hadoop_end()
    assert sched.solve_times_s and all(t >= 0 for t in sched.solve_times_s)


def test_fairness_with_preemption_kills_and_still_finishes():
    sched = QuincyScheduler(QuincySettings(fairness="fair-preemption"))
    model = two_rack_cluster(sched, racks=1, map_slots=1)
    a = model.add_job("A", PUMA["grep"], 0.0, uniform_maps(4, core_s=200.0), 0)
    b = model.add_job("B", PUMA["grep"], 20.0, uniform_maps(4), 0)
    model.run_until(5000.0)
    assert a.state == b.state == "succeeded"
    model.check_hadoop_end()
    assert sum(t.kill_count for t in a.maps) >= 2
    assert b.end_s < a.end_s  # B got its fair share at once instead of waiting for A's 200-s maps
