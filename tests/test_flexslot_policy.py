"""FlexSlot's parts (section 3): the k-means straggler split, Algorithm 1's stop rule, Algorithm 2's moves."""

import numpy as np
import pytest

from hadoop_layer.profiles import PUMA
from policies.slots.flexslot import (
    FlexSlotManager,
    FlexSlotPolicySettings,
    performance,
    resize_needed,
    slot_move,
    stragglers_by_kmeans,
)
from tests.helpers import busy, small_cluster, uniform_maps
from vcloud.pagecache import PageCacheSettings


def test_kmeans_marks_the_slow_cluster_only_when_it_stands_apart():
    # P = (1 + 1/S) * D for 64 MB splits: six regular tasks near 2 MB/s, two near 0.5 MB/s
    speed = np.array([2.0, 2.1, 1.9, 2.2, 2.0, 1.95, 0.5, 0.45])
    performance = (1 + 1 / 64.0) * speed
    assert stragglers_by_kmeans(performance).tolist() == [False] * 6 + [True, True]
    # a split into 1.9-2.0 vs 2.1-2.2 is no straggler cluster once it has to be below half the other centre
    even = np.array([1.9, 1.95, 2.0, 2.1, 2.2])
    assert stragglers_by_kmeans(even, gap=1.0).sum() > 0
    assert not stragglers_by_kmeans(even, gap=0.5).any()
    assert not stragglers_by_kmeans(np.array([1.0, 1.0, 1.0])).any()


def test_p_gives_speed_and_progress_rate_an_equal_say_so_a_map_with_ten_times_the_input_straggles():
    # section 3.2: D and the progress rate D / S, each normalized against its maximum, summed. Eight regular maps
    # (2 MB/s, 64 MB), one slower map on a normal split (1.5 MB/s) and one at full speed on a 640 MB split, which
    # will take ten times as long ("tasks with smaller progress rates are likely to have large input sizes").
    speed = np.array([2.0] * 8 + [1.5, 2.0])
    size = np.array([64.0] * 8 + [64.0, 640.0])
    p = performance(speed, size)
    assert p[:8] == pytest.approx(2.0) and p[8] == pytest.approx(1.5) and p[9] == pytest.approx(1.1)
    assert stragglers_by_kmeans(p).tolist() == [False] * 8 + [True, True]
    # the printed shorthand (1 + 1/S) x D in MB leaves the progress rate 1/64 of a say: the big split looks regular
    assert stragglers_by_kmeans((1 + 1 / size) * speed).tolist() == [False] * 8 + [True, False]
    # units do not matter once normalized
    assert performance(speed, size / 1024) == pytest.approx(p)


def test_the_low_cluster_are_the_stragglers_by_default_as_printed():
    even = np.array([1.9, 1.95, 2.0, 2.1, 2.2])
    assert FlexSlotPolicySettings().straggler_gap == 1.0
    assert stragglers_by_kmeans(even, gap=FlexSlotPolicySettings().straggler_gap).tolist() == [True] * 3 + [False] * 2


@pytest.mark.parametrize(
    ("kills", "speed", "previous", "expected"),
    [
        (0, 1.0, 0.0, True),  # never resized: kill and grow at once
        (1, 2.0, 1.0, True),  # 64/1 - 64/2 = 32 s saved > 5 s wasted: grow again
        (1, 1.05, 1.0, False),  # 64/1 - 64/1.05 = 3.05 s < 5 s: stop
        (1, 0.9, 1.0, False),  # slower: stop
    ],
)
def test_algorithm_1_grows_while_the_time_saved_beats_the_time_a_kill_wastes(kills, speed, previous, expected):
    assert resize_needed(kills, 64.0, speed, previous, 5.0) is expected


def test_algorithm_1_stops_when_the_kill_would_waste_more_than_it_saves():
    # 32 s saved beats a 5 s heartbeat but not the 60 s the attempt has run: no second kill
    assert resize_needed(1, 64.0, 2.0, 1.0, 60.0) is False


def test_algorithm_2_moves_a_slot_from_the_least_to_the_most_stolen_node():
    steal = np.array([0.10, 0.50, 0.05, 0.30])  # mean 0.2375, std 0.178 > lambda 0.1
    assert slot_move(steal, lam=0.1) == (2, 1)
    assert slot_move(steal, lam=0.2) is None  # std below lambda: balanced enough
    assert slot_move(np.array([0.3]), lam=0.0) is None


def test_an_io_bound_straggler_is_restarted_once_in_a_larger_slot():
    model = small_cluster(slaves=3, io_sort_mb=100, child_heap_mb=200)
    model.cache.settings = PageCacheSettings(enabled=False)  # spills go to disk, as on a node short of memory
    manager = FlexSlotManager(FlexSlotPolicySettings(period_s=5.0, min_runtime_s=5.0, move_slots=False))
    model.jobtracker.slot_manager = manager
    jt, launch, slots = model.jobtracker, model.jobtracker.launch, {}

    def noting_slots(tracker, order):  # an ended attempt is a row of columns that keep no slot memory: note it
        attempt = launch(tracker, order)
        slots[attempt.name] = (attempt.heap_mb, attempt.io_sort_mb, attempt.mem_mb)
        return attempt

    jt.launch = noting_slots
    # light maps keep the other slots busy; the straggler spills so much (13 MB per input MB) that its spill
    # writer holds the mapper back: its input speed is a quarter of the others' while it maps (pipelined spills)
    maps = uniform_maps(30, core_s=5.0)
    maps[0] = {"input_mb": 64.0, "cpu_mc": 5 * 2000.0, "output_mb": 900.0, "output_records": 1e6}
    job = model.add_job("j", PUMA["tera-sort"], 0.0, maps, 1)
    model.run_until(5000.0)
    assert job.state == "succeeded"
    model.check_hadoop_end()
    straggler = job.maps[0]
    assert len(straggler.attempts) >= 2
    first, second = straggler.attempts[:2]
    (_, _, first_mem), (heap, io_sort, second_mem) = slots[first.name], slots[second.name]
    assert first.state == "killed" and heap == pytest.approx(240.0) and io_sort == 120.0
    assert second.tracker is first.tracker  # relaunched in the slot it was killed in
    # the bigger slot holds more of its node's memory (heap + JVM overhead), which the node's page cache loses and
    # its active memory gains (vcloud/pagecache.py, vcloud/memory.py): Algorithm 1 on the memory physics of issue 14
    jvm = model.hadoop.jvm_overhead_mb
    assert first_mem == pytest.approx(200.0 + jvm) and second_mem == pytest.approx(240.0 + jvm)
    kills = {t.task_id: k for t, k in manager.kill_count.items()}  # its objects: the job's tasks are rows now
    assert kills[straggler.task_id] <= 2
    assert all(len(t.attempts) == 1 for t in job.maps[1:])


def test_a_cpu_starved_node_gets_a_map_slot_from_the_least_stolen_one_and_the_total_stays():
    # a co-tenant spins on host 1: node 1's maps are stolen from (CPU-bound stragglers), the others' are not
    model = small_cluster(slaves=3)
    busy(model, model.add_vm("tenant", model.trackers[1].vm.host, vcpus=2, mem_mb=1024), threads=2)
    manager = FlexSlotManager(FlexSlotPolicySettings(period_s=5.0, lam=0.1, min_runtime_s=0.0, resize=False))
    model.jobtracker.slot_manager = manager
    job = model.add_job("j", PUMA["grep"], 0.0, uniform_maps(18, core_s=30.0), 0)
    model.run_until(12.0)
    assert [t.map_slots for t in model.trackers] == [1, 3, 2]  # one move at 10 s: node 0 to node 1
    model.run_until(2000.0)
    assert job.state == "succeeded"
    assert sum(t.map_slots for t in model.trackers) == 6 and min(t.map_slots for t in model.trackers) >= 1


def test_no_slot_moves_without_a_straggler_short_of_cpu():
    # a steal imbalance far above lambda, but no map runs: Algorithm 2 waits for a CPU-bound straggler (3.4)
    model = small_cluster(slaves=3)
    manager = FlexSlotManager(FlexSlotPolicySettings(period_s=1.0, lam=0.5))
    model.start()
    assert manager.adjust(model.jobtracker.view) == []  # the first look: steal so far is the baseline
    for t, steal in zip(model.trackers, (0.0, 9.0, 1.0), strict=True):
        model.vms.steal_s[t.vm.row] = steal
    assert manager.adjust(model.jobtracker.view) == []
