"""LATE speculation (algorithms.md 3): hand-worked choices on fake task sets, both threshold rules, the cap, and a
straggler on a starved node of a small cluster."""

from __future__ import annotations

import numpy as np
import pytest
from pydantic import ValidationError

from hadoop_layer.hdfs import Locality
from hadoop_layer.interfaces import NoSpeculation
from hadoop_layer.profiles import PUMA
from hadoop_layer.tasks import TaskKind
from policies.speculation.late import LateSettings, LateSpeculation, cap, slow_mask
from policies.speculation.samr import SamrSpeculation
from tests.fakes import FakeCluster, FakeJob, FakeTracker, back_up, finished, run
from tests.helpers import assert_backups_won_off, small_cluster, uniform_maps

MAP, REDUCE = TaskKind.MAP, TaskKind.REDUCE


def five_tasks():
    """Four nodes of 2 map slots; a job of 8 maps at t = 100 s: 3 done, 5 running (rate = progress / elapsed,
    time to end = (1 - progress) / rate):
        T0 on n0: started   0, progress 0.50 -> rate 0.0050, TTE 100
        T1 on n1: started   0, progress 0.80 -> rate 0.0080, TTE  25
        T2 on n1: started  20, progress 0.20 -> rate 0.0025, TTE 320
        T3 on n2: started  10, progress 0.18 -> rate 0.0020, TTE 410
        T4 on n3: started  30, progress 0.70 -> rate 0.0100, TTE  30
    done: one on n1 in 40 s (rate 0.025), two on n3 in 50 s (0.02 each)."""
    nodes = [FakeTracker(i) for i in range(4)]
    job = FakeJob(maps=8)
    tasks = [
        run(job, nodes[0], 0.0, 0.5),
        run(job, nodes[1], 0.0, 0.8),
        run(job, nodes[1], 20.0, 0.2),
        run(job, nodes[2], 10.0, 0.18),
        run(job, nodes[3], 30.0, 0.7),
    ]
    finished(job, nodes[1], 0.0, 40.0)
    finished(job, nodes[3], 0.0, 50.0)
    finished(job, nodes[3], 0.0, 50.0)
    return FakeCluster(100.0, [job], nodes), nodes, tasks


def test_late_backs_up_the_slow_task_with_the_longest_time_to_end_on_a_fast_node_up_to_the_cap():
    cluster, (n0, n1, n2, n3), (_, _, t2, t3, _) = five_tasks()
    late = LateSpeculation()
    # task rates, running and done: .002 .0025 .005 .008 .01 .02 .02 .025; 25th percentile at position
    # 0.25 x 7 = 1.75: .0025 + 0.75 x (.005 - .0025) = .004375 -> T3 and T2 are slow; T3 ends last (410 s).
    # node work (done + running progress): n0 0.5, n1 1 + 0.8 + 0.2 = 2.0, n2 0.18, n3 2 + 0.7 = 2.7;
    # 25th percentile at 0.75: 0.18 + 0.75 x 0.32 = 0.42 -> n2 is slow.
    # cap: 10 % of 8 map slots = 0.8 -> the floor of 1.
    assert late.may_back_up(cluster)
    assert late.backups(n2, cluster, 1, 1) == []  # never on a slow node
    assert late.backups(n1, cluster, 0, 1) == []  # no free map slot; reduces: none running
    (launch,) = late.backups(n0, cluster, 1, 1)
    assert launch.task is t3 and launch.speculative and launch.locality == Locality.RACK
    back_up(t3, n0)
    assert late.backups(n3, cluster, 1, 1) == []  # one backup running: at the cap
    assert not late.may_back_up(cluster)
    wider = LateSpeculation(LateSettings(speculative_cap=0.25))  # cap 2: the next slow task, T2, on n3
    assert [launch.task for launch in wider.backups(n3, cluster, 1, 1)] == [t2]


def test_late_waits_for_the_jobs_pending_tasks_and_the_minimum_runtime():
    cluster, (n0, *_), _ = five_tasks()
    cluster.jobs[0].pending[MAP] = 1  # a non-running map still to give out: it goes before any backup
    assert LateSpeculation().backups(n0, cluster, 1, 1) == []
    cluster.jobs[0].pending[MAP] = 0
    assert LateSpeculation(LateSettings(min_runtime_s=100.0)).backups(n0, cluster, 1, 1) == []  # T3 ran 90 s


def test_late_with_history_judges_nodes_by_the_rates_of_their_tasks():
    cluster, (_, n1, n2, n3), _ = five_tasks()
    late = LateSpeculation(LateSettings(use_history=True))
    assert late.may_back_up(cluster)  # reads the trackers' histories
    # n1: done 1/40 = .025, running .008 and .0025 -> .0355 / 3; n3: (.02 + .02 + .01) / 3
    assert late.node_score(n1, MAP, 100.0) == pytest.approx(0.0355 / 3)
    assert late.node_score(n3, MAP, 100.0) == pytest.approx(0.05 / 3)
    assert late.node_score(n3, REDUCE, 100.0) is None  # no reduces: nothing to judge by
    # map speeds n0 .005, n1 .01183, n2 .002, n3 .01667: 25th percentile .002 + .75 x .003 = .00425 -> n2 slow
    assert late.slow_trackers(cluster, MAP) == {n2}


def thresholds_case():
    """One job, 5 running maps at t = 100 s, nothing done:
        A on n0: started -800, progress 0.90 -> rate 0.0010, TTE 100
        B on n1: started    0, progress 0.20 -> rate 0.0020, TTE 400
        C on n2: started    0, progress 0.80 -> rate 0.0080, TTE  25
        D on n2: started    0, progress 0.90 -> rate 0.0090, TTE  11
        E on n3: started    0, progress 0.95 -> rate 0.0095, TTE   5
    n4 heartbeats, free; it ran 3 maps of a finished job (work 3)."""
    nodes = [FakeTracker(i) for i in range(5)]
    job, old = FakeJob(maps=5), FakeJob(state="succeeded")
    a = run(job, nodes[0], -800.0, 0.9)
    b = run(job, nodes[1], 0.0, 0.2)
    run(job, nodes[2], 0.0, 0.8)
    run(job, nodes[2], 0.0, 0.9)
    run(job, nodes[3], 0.0, 0.95)
    for _ in range(3):
        finished(old, nodes[4], -300.0, -250.0)
    return FakeCluster(100.0, [job], nodes), nodes[4], a, b


def test_the_percentile_and_stddev_thresholds_back_up_different_tasks():
    # percentile: 25th of .001 .002 .008 .009 .0095 is the 2nd value, .002: only A is below it -> A.
    # stddev (Hadoop 0.21): mean .0059, population std sqrt(6.621e-5 / 5) = .003639; slow below .0059 - .003639
    # = .002261: A and B -> B, which ends later (400 s against 100 s).
    # node work n0 .9, n1 .2, n2 1.7, n3 .95, n4 3: n1 slow by both rules (< .9; < 1.35 - .9518), n4 not.
    rates = np.array([0.001, 0.002, 0.008, 0.009, 0.0095])
    assert slow_mask(rates, "percentile", 25, 1.0).tolist() == [True, False, False, False, False]
    assert slow_mask(rates, "stddev", 25, 1.0).tolist() == [True, True, False, False, False]
    cluster, n4, a, b = thresholds_case()
    (by_percentile,) = LateSpeculation().backups(n4, cluster, 2, 1)
    (by_stddev,) = LateSpeculation(LateSettings(thresholds="stddev")).backups(n4, cluster, 2, 1)
    assert by_percentile.task is a and by_stddev.task is b


@pytest.mark.parametrize(
    ("slots", "fraction", "minimum", "expected"),
    [(8, 0.1, 1, 1), (120, 0.1, 1, 12), (30, 0.1, 1, 3), (30, 0.1, 0, 3), (5, 0.1, 0, 0)],
)
def test_speculative_cap_is_a_share_of_slots_with_a_floor(slots, fraction, minimum, expected):
    assert cap(slots, fraction, minimum) == expected


def test_settings_reject_unknown_knobs():
    with pytest.raises(ValidationError):
        LateSettings(slow_node_treshold=25)
    with pytest.raises(ValidationError):
        LateSettings(thresholds="median")


# ---- end to end: a straggler on a starved node ------------------------------------------------------------------
def starved_run(speculation, seconds: float = 900.0):
    """3 slaves of 2 map slots; s0's VM is capped at 10 % of a core; 6 maps of 30 core-s: s0's two maps would
    take about 300 s each, the others' about 33 s."""
    model = small_cluster(slaves=3, speculation=speculation)
    slow = model.trackers[0]
    model.vms.cpu_limit_mhz[slow.vm.row] = 200.0
    job = model.add_job("j", PUMA["grep"], 0.0, uniform_maps(6, core_s=30.0), 0)
    model.run_until(seconds)
    return model, job, slow


@pytest.mark.parametrize(
    "make",
    [
        LateSpeculation,
        lambda: LateSpeculation(LateSettings(thresholds="stddev")),
        lambda: LateSpeculation(LateSettings(use_history=True)),
        lambda: LateSpeculation(LateSettings(node_measure="rate")),
        SamrSpeculation,
    ],
    ids=["late", "late-stddev", "late-history", "late-rate", "samr"],
)
def test_a_straggler_on_a_starved_node_is_backed_up_elsewhere_and_the_backup_wins(make):
    model, job, slow = starved_run(make())
    _, unsped, _ = starved_run(NoSpeculation())
    assert job.state == "succeeded" and job.end_s < unsped.end_s - 100.0
    assert_backups_won_off(job, slow)  # after the minimum runtime before judging
    assert all(a.tracker is not slow for a in model.attempts() if a.speculative)
    model.check_hadoop_end()
