"""SAMR speculation (algorithms.md 4, samr.txt): stage weights learned with HP, progress scores by stage,
slow tasks and slow TaskTrackers, hand-worked on fake task sets; stage weights learned on a small cluster."""

from __future__ import annotations

import numpy as np
import pytest
from pydantic import ValidationError

from hadoop_layer.profiles import PUMA
from hadoop_layer.tasks import TaskKind
from policies.speculation.samr import (
    SamrSettings,
    SamrSpeculation,
    eq15_room,
    samr_score,
    slow_tracker_set,
    stage_progress,
    stage_times,
    update_weights,
)
from tests.fakes import FakeCluster, FakeJob, FakeTracker, finished, run
from tests.helpers import history, small_cluster

MAP, REDUCE = TaskKind.MAP, TaskKind.REDUCE
MAP_PHASES = ["setup", "read", "map", "spill", "merge-read", "merge", "merge-write"]
REDUCE_PHASES = ["setup", "shuffle", "merge-write", "merge-read", "sort", "reduce", "hdfs-write", "hdfs-replicate"]


def test_stage_weights_follow_finished_tasks_with_history_weight_hp():
    node, other, job = FakeTracker(0), FakeTracker(1), FakeJob(maps=2)
    samr = SamrSpeculation(SamrSettings(history_pro=0.2))
    # map A: setup 0-2, read 2-12, map 12-42, spill 42-52: M1 = 10 + 30 = 40 s, M2 = 10 s -> measured (0.8, 0.2);
    # from Hadoop's (1, 0): 0.2 x (1, 0) + 0.8 x (0.8, 0.2) = (0.84, 0.16)
    a = finished(job, node, 0.0, 52.0, phases=MAP_PHASES[:4])
    a.phase_end_s = [2.0, 12.0, 42.0, 52.0]
    samr.absorb(a)
    assert samr.weights(node, MAP) == pytest.approx((0.84, 0.16))
    # map B with two spills: read + map 10 + 20 = 30 s, spill + merges 10 + 5 + 5 + 10 = 30 s -> (0.5, 0.5);
    # 0.2 x (0.84, 0.16) + 0.8 x (0.5, 0.5) = (0.568, 0.432)
    b = finished(job, node, 100.0, 161.0, phases=MAP_PHASES)
    b.phase_end_s = [101.0, 111.0, 131.0, 141.0, 146.0, 151.0, 161.0]
    samr.absorb(b)
    assert samr.weights(node, MAP) == pytest.approx((0.568, 0.432))
    # a reduce: shuffle 1-31 (R1 30 s), merges and sort 31-41 (R2 10 s), reduce and output 41-61 (R3 20 s)
    # -> (1/2, 1/6, 1/3); 0.2 x 1/3 + 0.8 x that = (0.46667, 0.2, 0.33333)
    r = finished(job, node, 0.0, 61.0, kind=REDUCE, phases=REDUCE_PHASES)
    r.phase_end_s = [1.0, 31.0, 35.0, 39.0, 41.0, 56.0, 60.0, 61.0]
    samr.absorb(r)
    assert samr.weights(node, REDUCE) == pytest.approx((0.46667, 0.2, 0.33333), abs=1e-5)
    assert samr.weights(other, MAP) == (1.0, 0.0)  # history is per node
    # the extremes of HP: 1 keeps the old weights, 0 takes the last task's
    times = stage_times(MAP, MAP_PHASES[:4], 0.0, [2.0, 12.0, 42.0, 52.0], 2)
    assert times.tolist() == [40.0, 10.0]
    assert update_weights(np.array([0.84, 0.16]), times, 1.0).tolist() == [0.84, 0.16]
    assert update_weights(np.array([0.84, 0.16]), times, 0.0) == pytest.approx([0.8, 0.2])


@pytest.mark.parametrize(
    ("kind", "phases", "index", "fraction", "hadoop", "weights", "expected"),
    [
        (MAP, MAP_PHASES, 0, 0.7, 0.0, (0.6, 0.4), 0.0),  # JVM setup: no stage, no progress
        (MAP, MAP_PHASES, 2, 0.5, 0.75, (0.6, 0.4), 0.45),  # M1: (1 + 0.5) / 2 of read, map -> 0.6 x 0.75
        (MAP, MAP_PHASES, 5, 0.5, 1.0, (0.6, 0.4), 0.85),  # M2: (2 + 0.5) / 4 -> 0.6 + 0.4 x 0.625
        (MAP, MAP_PHASES[:4], 3, 0.5, 1.0, (0.6, 0.4), 0.8),  # M2 of one spill: 0.6 + 0.4 x 0.5
        (REDUCE, REDUCE_PHASES, 1, 0.9, 0.2, (0.5, 1 / 6, 1 / 3), 0.3),  # R1: copied 3 x 0.2 = 0.6 -> 0.5 x 0.6
        (REDUCE, REDUCE_PHASES, 4, 0.5, 0.6, (0.5, 1 / 6, 1 / 3), 0.5 + 5 / 36),  # R2: 2.5 / 3 of merges, sort
        (REDUCE, REDUCE_PHASES, 5, 0.5, 0.8, (0.5, 1 / 6, 1 / 3), 2 / 3 + 1 / 18),  # R3: 0.5 / 3 -> 1/3 x 1/6
    ],
)
def test_progress_score_by_stage_and_node_weights(kind, phases, index, fraction, hadoop, weights, expected):
    found = stage_progress(kind, phases, index, fraction, hadoop)
    assert (0.0 if found is None else samr_score(weights, *found)) == pytest.approx(expected)


def test_a_map_sorting_its_output_is_unfinished_by_its_nodes_weights_while_hadoop_says_done():
    node, job = FakeTracker(0), FakeJob(maps=2)
    samr = SamrSpeculation(SamrSettings(history_pro=0.0))
    done = finished(job, node, 0.0, 60.0, phases=MAP_PHASES[:4])
    done.phase_end_s = [0.0, 10.0, 30.0, 60.0]  # read + map 30 s, spill 30 s -> weights (0.5, 0.5)
    samr.absorb(done)
    spilling = run(job, node, 0.0, 1.0, phases=MAP_PHASES[:4], index=3).active[0]  # at the spill's start
    assert spilling.progress_score == 1.0 and samr.progress(spilling) == pytest.approx(0.5)


def slow_node_case():
    """A job of 6 maps at t = 100 s, no pending maps; SAMR's default weights (M1 = 1, M2 = 0):
    S on n0: started 0, still reading (SAMR progress 0)               -> rate 0
    U on n1: started 0, spilling (progress M1 = 1; not a candidate)   -> rate 0.01
    done: one on n2 in 50 s (rate 0.02), one on n3 in 40 s (0.025)."""
    nodes = [FakeTracker(i) for i in range(4)]
    job = FakeJob(maps=6)
    s = run(job, nodes[0], 0.0, 0.0, phases=MAP_PHASES[:4], index=1)
    run(job, nodes[1], 0.0, 1.0, phases=MAP_PHASES[:4], index=3)
    finished(job, nodes[2], 0.0, 50.0)
    finished(job, nodes[3], 0.0, 40.0)
    return FakeCluster(100.0, [job], nodes), nodes, s


def test_slow_trackers_get_no_backup_and_at_most_a_share_strp_are_slow():
    # task rates 0, .01, .02, .025: APR .01375; slow below 0.7 x .01375 = .009625 -> S (time to end infinite,
    # more than the 45 s a fresh copy takes).
    # tracker rates n0 0, n1 .01, n2 .02, n3 .025: average .01375; slow below 0.8 x .01375 = .011 -> n0 and n1,
    # and STrP 0.3 of 4 trackers allows ceil(1.2) = 2 of them.
    cluster, (_, n1, _, n3), s = slow_node_case()
    samr = SamrSpeculation()
    assert samr.may_back_up(cluster)
    assert samr.backups(n1, cluster, 1, 1) == []  # a slow tracker, though its slot is free
    assert [launch.task for launch in samr.backups(n3, cluster, 2, 1)] == [s]
    # STrP 0.25: ceil(1.0) = 1 slow tracker, the slowest (n0): n1 may now take the backup
    fewer = SamrSpeculation(SamrSettings(slow_tracker_pro=0.25))
    assert [launch.task for launch in fewer.backups(n1, cluster, 1, 1)] == [s]


def test_slow_tracker_rule():
    a, b, c, d = "abcd"
    # mean .0085, bar .0068: a only
    assert slow_tracker_set({a: 0.001, b: 0.01, c: 0.011, d: 0.012}, 0.2, 0.3, 4) == {a}
    # mean .011, bar .0088: a and b; STrP keeps the slowest ceil(STrP x 4)
    rates = {a: 0.001, b: 0.002, c: 0.02, d: 0.021}
    assert slow_tracker_set(rates, 0.2, 0.3, 4) == {a, b}
    assert slow_tracker_set(rates, 0.2, 0.25, 4) == {a}
    assert slow_tracker_set(rates, 0.2, 0.0, 4) == set()


def test_samr_skips_a_task_a_fresh_copy_would_not_beat():
    """S on n0 started at 0 and is halfway (entering its map phase: SAMR progress 0.5); the job's other two maps
    took 80 s (n1) and 90 s (n2), so a fresh copy needs about 85 s."""
    nodes = [FakeTracker(i) for i in range(3)]
    job = FakeJob(maps=3)
    s = run(job, nodes[0], 0.0, 0.5, phases=MAP_PHASES[:4], index=2)
    finished(job, nodes[1], 0.0, 80.0)
    finished(job, nodes[2], 0.0, 90.0)
    # t = 75: rate .5 / 75 = .006667 < 0.7 x mean(.006667, .0125, .011111) = .007065: slow; but its time to end,
    # .5 / .006667 = 75 s, is less than 85 s. (Tracker n0 is slow: .006667 < 0.8 x .010093; n1 is not.)
    cluster = FakeCluster(75.0, [job], nodes)
    assert SamrSpeculation().backups(nodes[1], cluster, 2, 1) == []
    eager = SamrSpeculation(SamrSettings(only_if_faster=False))
    assert [launch.task for launch in eager.backups(nodes[1], cluster, 2, 1)] == [s]
    # t = 100: rate .005 < 0.7 x .009537 = .006676, time to end 100 s > 85 s
    cluster.now = 100.0
    assert [launch.task for launch in SamrSpeculation().backups(nodes[1], cluster, 2, 1)] == [s]


def test_settings_check_the_weights():
    with pytest.raises(ValidationError):
        SamrSettings(map_weights=(0.5, 0.6))
    with pytest.raises(ValidationError):
        SamrSettings(history=0.2)
    assert SamrSettings(reduce_weights=(0.5, 0.25, 0.25)).reduce_weights == (0.5, 0.25, 0.25)


def test_nodes_learn_their_stage_weights_on_a_small_cluster():
    samr = SamrSpeculation(SamrSettings(history_pro=0.5))
    model = small_cluster(slaves=3, speculation=samr)
    maps = [{"input_mb": 64.0, "cpu_mc": 30 * 2000.0, "output_mb": 100.0, "output_records": 1e5} for _ in range(6)]
    job = model.add_job("wc", PUMA["wordcount"], 0.0, maps, 2)
    model.run_until(2000.0)
    assert job.state == "succeeded"
    model.check_hadoop_end()
    samr.read_history(model.jobtracker.view)  # the last attempts ended after the policy last looked
    for tracker in model.trackers:
        kinds = {a.task.kind for a in history(model, tracker) if a.state == "done"}
        assert MAP in kinds
        m1, m2 = samr.weights(tracker, MAP)
        assert m1 + m2 == pytest.approx(1.0) and 0.0 < m2 < m1  # the map function outweighs spill and merge
        if REDUCE in kinds:
            weights = samr.weights(tracker, REDUCE)
            assert sum(weights) == pytest.approx(1.0) and weights != pytest.approx((1 / 3, 1 / 3, 1 / 3))


def test_eq15_caps_backups_of_both_kinds_at_bp_times_the_running_jobs_tasks():
    # jobs of 10 maps + 2 reduces and of 5 maps: TaskNum 17; BP 0.1 -> BackupNum < 1.7, i.e. at most 2 running
    big, small = FakeJob(maps=10), FakeJob(maps=5)
    big.reduces = [None, None]
    nodes = [FakeTracker(0), FakeTracker(1)]
    cluster = FakeCluster(100.0, [big, small], nodes)
    assert eq15_room(cluster, TaskKind.MAP, 0.1, 1) == 2
    run(big, nodes[1], 0.0, 0.5, kind=TaskKind.REDUCE, speculative=True)
    run(big, nodes[0], 0.0, 0.5)
    assert eq15_room(cluster, TaskKind.MAP, 0.1, 1) == 1  # the reduce backup takes its part; a first attempt none
    assert eq15_room(cluster, TaskKind.REDUCE, 0.1, 1) == 2  # compared with the 1 reduce backup running
    assert eq15_room(cluster, TaskKind.MAP, 0.2, 1) == 3  # ceil(3.4) = 4, less the reduce backup
    assert eq15_room(FakeCluster(100.0, [small], nodes), TaskKind.MAP, 0.1, 1) == 0  # ceil(0.5) = 1, taken
    assert SamrSpeculation().max_backups(cluster, TaskKind.MAP) == 1
    slots = SamrSpeculation(SamrSettings(backup_base="slots", backup_pro=0.5))
    assert slots.max_backups(cluster, TaskKind.MAP) == 2  # LATE's way: 0.5 x 4 map slots
