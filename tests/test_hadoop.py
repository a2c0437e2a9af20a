"""Hadoop MRv1 on the cloud: heartbeats, FIFO's choices, the default speculation rule, invariants."""

from types import SimpleNamespace

import numpy as np
import pytest

from hadoop_layer.config import HadoopConfig, heartbeat_interval_s
from hadoop_layer.hdfs import Locality, place_blocks
from hadoop_layer.interfaces import SlotManager, SpeculationPolicy
from hadoop_layer.model import map_skewness
from hadoop_layer.profiles import PUMA
from hadoop_layer.tasks import TaskKind
from policies.speculation.hadoop import HadoopSpeculation, speculatable_in
from tests.helpers import assert_backups_won_off, no_heartbeats, small_cluster, uniform_maps


@pytest.mark.parametrize(
    ("formula", "trackers", "seconds"),
    [
        ("0.20", 30, 3.0),  # max(1000 * (30 // 100 + 1), 3000) ms
        ("0.20", 500, 6.0),  # 1000 * (5 + 1)
        ("1.0", 30, 3.0),  # max(1000 * ceil(30 / 100), 3000)
        ("1.0", 500, 5.0),  # 1000 * ceil(500 / 100)
        ("1.1", 30, 0.3),  # max(1000 * 30 / 100, 300) ms
        ("1.1", 20, 0.3),  # 200 ms is below the 300 ms floor
        ("1.1", 500, 5.0),
    ],
)
def test_heartbeat_interval_follows_the_hadoop_version(formula, trackers, seconds):
    assert heartbeat_interval_s(trackers, HadoopConfig(heartbeat_formula=formula)) == pytest.approx(seconds)


def test_hdfs_puts_the_second_replica_off_rack_and_the_third_beside_it():
    racks = np.array([0, 0, 0, 1, 1, 1])
    replicas = place_blocks(200, racks, 3, np.random.default_rng(1), writers=np.full(200, 4))
    assert np.all(replicas[:, 0] == 4)  # the writer holds the first replica
    assert np.all(racks[replicas[:, 1]] == 0)  # another rack
    assert np.all(racks[replicas[:, 2]] == racks[replicas[:, 1]])
    assert np.all(replicas[:, 2] != replicas[:, 1])


def test_fifo_serves_the_higher_priority_job_first_then_the_earlier_one():
    model = small_cluster()
    model.add_job("early", PUMA["grep"], 0.0, uniform_maps(6), 0)
    model.add_job("urgent", PUMA["grep"], 0.5, uniform_maps(6), 0, priority="HIGH")
    model.add_job("late", PUMA["grep"], 0.5, uniform_maps(6), 0)
    model.start()
    no_heartbeats(model)  # no heartbeat before we look
    model.run_until(1.0)
    launches = model.jobtracker.scheduler.assign(model.trackers[0], model.jobtracker.view)
    assert [launch.task.job.name for launch in launches] == ["urgent", "urgent"]


def test_fifo_gives_at_most_one_off_rack_map_per_heartbeat():
    model = small_cluster(slaves=4, racks=2)
    job = model.add_job("j", PUMA["grep"], 0.0, uniform_maps(4), 0)
    for task in job.maps:  # every block lives on rack 1 (nodes 1 and 3): node 0 is off-rack for all
        task.replicas = np.array([1, 3])
    job._node_cache.clear()
    job._rack_cache.clear()
    model.start()
    no_heartbeats(model)
    model.run_until(0.5)
    launches = model.jobtracker.scheduler.assign(model.trackers[0], model.jobtracker.view)
    assert len(launches) == 1 and launches[0].locality == Locality.OFF_RACK


def test_fifo_gives_at_most_one_reduce_per_heartbeat():
    model = small_cluster(reduce_slowstart=0.0)
    model.trackers[0].reduce_slots = 3
    model.add_job("j", PUMA["wordcount"], 0.0, uniform_maps(2), 4)
    model.start()
    no_heartbeats(model)
    model.run_until(0.5)
    model.jobtracker.count_slots()
    launches = model.jobtracker.scheduler.assign(model.trackers[0], model.jobtracker.view)
    assert sum(launch.task.kind == TaskKind.REDUCE for launch in launches) == 1


class _Task:
    def __init__(self, progress, start_s, active=1, nodes=()):
        self.state, self.start_s, self.nodes_tried = "running", start_s, set(nodes)
        model = SimpleNamespace(item_progress=lambda: [progress])  # the attempt's progress, read by row
        self.active = [SimpleNamespace(row=0, state="running", model=model)] * active
        self.children = []  # not stopped by a repartition (the rule reads it since 3ec585f)


@pytest.mark.parametrize(
    ("task", "expected"),
    [
        (_Task(0.45, 0.0), True),  # 0.70 - 0.45 = 0.25 >= 0.2, ran 61 s
        (_Task(0.45, 2.0), False),  # only 59 s
        (_Task(0.55, 0.0), False),  # gap 0.15
        (_Task(0.45, 0.0, active=2), False),  # already backed up
        (_Task(0.45, 0.0, nodes={7}), False),  # never on a node that ran it
    ],
)
def test_default_speculation_rule(task, expected):
    assert (list(speculatable_in({task: None}, job_progress=0.70, now=61.0, node=7)) == [task]) is expected


def test_a_straggler_on_a_starved_node_gets_a_backup_that_wins():
    model = small_cluster(slaves=3, speculation=HadoopSpeculation())
    slow = model.trackers[0]
    model.vms.cpu_limit_mhz[slow.vm.row] = 200.0  # a node the hypervisor starves (10% of a core)
    job = model.add_job("j", PUMA["grep"], 0.0, uniform_maps(6, core_s=30.0), 0)
    model.run_until(600.0)
    assert job.state == "succeeded"
    assert_backups_won_off(job, slow)
    model.check_hadoop_end()


def test_failed_and_killed_attempts_lose_their_work_and_every_task_succeeds_once():
    model = small_cluster(slaves=3, speculation=HadoopSpeculation(), task_failure_probability=0.2, max_attempts=8)
    jobs = [model.add_job(f"j{k}", PUMA["wordcount"], 10.0 * k, uniform_maps(8), 2) for k in range(2)]
    model.run_until(3000.0)
    assert all(j.state == "succeeded" for j in jobs)
    attempts = model.attempts()
    assert any(a.state == "failed" for a in attempts)
    model.check_hadoop_end()  # one success per task; the splits' input processed once
    frame = model.tasks_frame()
    done = frame[frame.state == "done"]
    assert done.groupby("task").size().eq(1).all()
    assert done[done.kind == "m"].input_mb.sum() == pytest.approx(2 * 8 * 64.0)
    assert (frame[frame.state != "done"].processed_mb <= frame[frame.state != "done"].input_mb + 1e-9).all()


def test_a_bigger_sort_buffer_spills_less_and_waits_less_for_disk():
    def run(io_sort_mb):
        model = small_cluster(slaves=2, io_sort_mb=io_sort_mb, child_heap_mb=400)
        maps = [{"input_mb": 64.0, "cpu_mc": 20000.0, "output_mb": 150.0, "output_records": 1.5e5} for _ in range(4)]
        model.add_job("j", PUMA["tera-sort"], 0.0, maps, 1)
        model.run_until(2000.0)
        frame = model.tasks_frame()
        return frame[frame.kind == "m"]

    small, large = run(100), run(300)
    assert (small.spills == 2).all() and (large.spills == 1).all()  # 150 MB vs 76 MB and 228 MB spill limits
    assert large.iowait_s.sum() < small.iowait_s.sum()


def test_heaps_beyond_the_granted_memory_swap_and_slow_the_maps():
    """Two 2,500 MB heaps (+ 64 MB JVM overhead each) and the 256 MB OS in a 4,096 MB VM: 1,288 MB swapped out,
    paged back in from the host datastore, and the maps stall for the swapped part of their working set."""

    def run(heap_mb):
        model = small_cluster(slaves=1, child_heap_mb=heap_mb)
        model.add_job("j", PUMA["grep"], 0.0, uniform_maps(2), 0)
        model.run_until(2000.0)
        frame = model.tasks_frame()
        jvm = model.hadoop.jvm_start_wall_s  # the maps' time after their child JVM's start (a wait: no paging)
        return model.vm_trace().swap_mb.max(), (frame.end_s - frame.start_s).mean() - jvm

    swap_small, runtime_small = run(400.0)
    swap_large, runtime_large = run(2500.0)
    assert swap_small == 0.0
    assert swap_large == pytest.approx(2 * (2500 + 64) + 256 - 4096, rel=0.01)
    assert runtime_large > 1.2 * runtime_small


def test_a_trackers_running_attempts_iterate_in_launch_order():
    """Not by memory address, which differs between processes (policies loop over them: seeded runs must repeat)."""
    model = small_cluster(slaves=1)
    model.add_job("j", PUMA["grep"], 0.0, uniform_maps(2), 0)
    model.run_until(2.0)
    running = list(model.trackers[0].running[TaskKind.MAP])
    assert [a.task.index for a in running] == [0, 1]
    model.trackers[0].running[TaskKind.MAP].discard(running[0])
    assert list(model.trackers[0].running[TaskKind.MAP]) == running[1:]


class _Counting(SlotManager):
    """A slot manager that only counts its calls."""

    def __init__(self, period_s: float) -> None:
        self.period_s, self.calls = period_s, []

    def adjust(self, cluster):
        self.calls.append(cluster.now)
        return []


def test_a_slot_manager_set_after_the_start_runs_every_period_from_then_on(cluster):
    cluster.add_job("j", PUMA["grep"], 0.0, uniform_maps(12, core_s=30.0), 0)
    first, second = _Counting(10.0), _Counting(4.0)
    cluster.jobtracker.slot_manager = first
    cluster.run_until(25.0)
    cluster.jobtracker.slot_manager = second
    cluster.run_until(35.0)
    assert first.calls == [10.0, 20.0] and second.calls == [28.0, 32.0]
    cluster.jobtracker.slot_manager = first  # set again: scheduled once, not twice
    cluster.run_until(45.0)
    assert first.calls == [10.0, 20.0, 40.0]


def test_a_speculation_policy_that_only_chooses_backups_runs(cluster):
    class NeverBackUp(SpeculationPolicy):
        def backups(self, tracker, cluster, free_maps, free_reduces):
            return []

    assert NeverBackUp().may_back_up(cluster.jobtracker.view)  # the documented default: keep heartbeating
    cluster.jobtracker.speculation = NeverBackUp()
    job = cluster.add_job("j", PUMA["grep"], 0.0, uniform_maps(6), 0)
    cluster.run_until(500.0)
    assert job.state == "succeeded"


def hadoop_exceeded_padding(jobs, kind, cluster, capacity, tracker_slots):
    """JobQueueTaskScheduler.exceededPadding as Hadoop 1.x writes it: the queue scanned job by job."""
    total_tasks, needed = cluster.running(kind), 0
    for job in jobs:
        if not job.reduces:
            continue
        needed += len(job.maps) if kind == TaskKind.MAP else len(job.reduces)
        padding = 0
        if len(cluster.trackers) > 3:
            padding = min(tracker_slots, int(needed * cluster.config.taskalloc_capacity_pad))
        if total_tasks + padding >= capacity:
            return True
    return False


def test_fifos_padding_from_the_ledger_is_hadoops_queue_scan():
    """The capacity padding from the running-jobs ledger gives Hadoop's scan's answer for every capacity around the
    running count, both kinds, with map-only jobs in the queue (they add nothing)."""
    from policies.schedulers.fifo import FifoScheduler

    model = small_cluster(slaves=5, reduce_slowstart=0.0, taskalloc_capacity_pad=0.1)
    for i, (maps, reduces) in enumerate([(30, 4), (12, 0), (50, 9), (7, 2)]):
        model.add_job(f"j{i}", PUMA["wordcount"], 0.0, uniform_maps(maps), reduces)
    model.run_until(40.0)
    view, ledger = model.jobtracker.view, model.jobtracker.ledger
    jobs = view.jobs_in_fifo_order()
    assert ledger.maps_of_jobs_with_reduces == 30 + 50 + 7 and ledger.reduces_of_jobs_with_reduces == 4 + 9 + 2
    seen = set()
    for kind in (TaskKind.MAP, TaskKind.REDUCE):
        for capacity in range(view.running(kind) - 2, view.running(kind) + 12):
            for slots in (1, 2, 4):
                want = hadoop_exceeded_padding(jobs, kind, view, capacity, slots)
                assert FifoScheduler._exceeded_padding(ledger, kind, view, capacity, slots) == want
                seen.add(want)
    assert seen == {True, False}


def test_map_skewness_is_the_population_third_standardized_moment():
    """FlexSlot section 2.2's skewness, by hand: runtimes 1, 2, 3, 10 s have mean 4, central moments m2 = 50 / 4 =
    12.5 and m3 = 180 / 4 = 45, so 45 / 12.5^1.5 = 1.01823...; fewer than 3 runtimes or all alike: none."""
    assert map_skewness(np.array([1.0, 2.0, 3.0, 10.0])) == pytest.approx(45 / 12.5**1.5, rel=1e-15)
    assert map_skewness([1.0, 2.0, 3.0, 10.0]) == pytest.approx(1.0182337649086284)
    assert map_skewness(np.array([5.0, 5.0, 5.0])) is None and map_skewness(np.array([1.0, 9.0])) is None


def test_the_third_replica_is_the_same_draw_as_a_choice_from_the_listed_rack():
    """BlockPlacement.replicas steps over the chosen nodes instead of listing the second replica's rack: the same
    node for the same draw as `pool[rng.integers(len(pool))]` over that list, on random clusters and copies."""
    from hadoop_layer.hdfs import BlockPlacement

    def listed(bp, first, copies, rng):  # the plain reading: lists of candidates
        chosen = [first]
        if copies >= 2:
            # another rack's nodes in (rack, node) order; on one rack, any other node
            others = [n for n in bp.order if bp.rack_of[n] != bp.rack_of[first]] or [
                n for n in range(bp.nodes) if n != first]  # fmt: skip
            chosen.append(others[int(rng.integers(len(others)))])
        if copies >= 3:
            same = [n for n in bp.by_rack[bp.rack_of[chosen[1]]] if n not in chosen]
            pool = same or [n for n in range(bp.nodes) if n not in chosen]
            chosen.append(int(pool[rng.integers(len(pool))]))
        while len(chosen) < copies:
            pool = [n for n in range(bp.nodes) if n not in chosen]
            chosen.append(int(pool[rng.integers(len(pool))]))
        return chosen

    g = np.random.default_rng(0)
    for trial in range(100):
        n = int(g.integers(1, 40))
        bp = BlockPlacement(g.integers(0, int(g.integers(1, 5)), n))
        for copies in range(1, min(n, 4) + 1):
            mine, plain = np.random.default_rng(trial), np.random.default_rng(trial)
            for first in g.integers(0, n, 20).tolist():
                assert bp.replicas(first, copies, mine) == listed(bp, first, copies, plain)
