"""Hadoop 1.x CapacityTaskScheduler: user limits, queue order, borrowing, off-switch delay, high-memory jobs."""

import pytest
from pydantic import ValidationError

from hadoop_layer.hdfs import Locality
from hadoop_layer.profiles import PUMA
from hadoop_layer.tasks import TaskKind
from policies.schedulers.capacity import (
    CapacityScheduler,
    CapacitySettings,
    QueueSettings,
    SlotsUsage,
    user_limit,
)
from scenarios.hadoop_base import HadoopClusterSettings, build_cluster
from tests.helpers import frozen, pin_blocks, running, small_cluster, uniform_maps

MAP = TaskKind.MAP


def queues(**capacities) -> CapacitySettings:
    """queues(a=(50, {...}), b=50): capacity %, optionally with other queue settings."""
    out = {}
    for name, spec in capacities.items():
        cap, extra = spec if isinstance(spec, tuple) else (spec, {})
        out[name] = QueueSettings(capacity=cap, **extra)
    return CapacitySettings(queues=out)


@pytest.mark.parametrize(
    ("capacity", "occupied", "spt", "users", "ul_min", "ulf", "limit"),
    [
        # below capacity, C = 10: max(ceil(10 / 3), ceil(25 x 10 / 100)) = max(4, 3) = 4; min(4, int(10 x 1)) = 4
        (10, 4, 1, 3, 25, 1.0, 4),
        # 5 users: max(ceil(10 / 5), ceil(2.5)) = max(2, 3) = 3: the minimum user limit binds
        (10, 4, 1, 5, 25, 1.0, 3),
        # default 100%: max(ceil(10 / 2), 10) = 10, whatever the number of users
        (10, 0, 1, 2, 100, 1.0, 10),
        # over capacity: C = occupied + 1 = 11; one user: 11, but never above int(10 x factor 1) = 10
        (10, 10, 1, 1, 100, 1.0, 10),
        # user-limit-factor 2: C = 12 + 1 = 13 <= int(10 x 2) = 20 -> 13
        (10, 12, 1, 1, 100, 2.0, 13),
        # a queue of capacity 0 still gets one task: queue capacity max(0, 1) = 1
        (0, 0, 1, 1, 100, 1.0, 1),
        # two-slot tasks over capacity: C = 10 + 2 = 12; max(12, 12) = 12 <= int(10 x 1.5) = 15
        (10, 10, 2, 1, 100, 1.5, 12),
    ],
)
def test_user_limit_arithmetic(capacity, occupied, spt, users, ul_min, ulf, limit):
    assert user_limit(capacity, occupied, spt, users, ul_min, ulf) == limit


def test_queues_are_ordered_by_occupied_over_capacity():
    cap = CapacityScheduler(queues(a=50, b=30, c=20, d=0))
    for name, (capacity, occupied) in {"a": (5, 4), "b": (3, 3), "c": (2, 1), "d": (0, 0)}.items():
        cap.queues[name].usage = {MAP: SlotsUsage(capacity=capacity, occupied=occupied)}
    # c 1/2 = 0.5, a 4/5 = 0.8, b 3/3 = 1.0, d has capacity 0: counts as 1.0; ties keep the earlier order
    assert cap.queue_order(MAP) == ["c", "a", "b", "d"]
    cap.queues["b"].usage[MAP].occupied = 0  # b now empty: 0 / 3 = 0
    assert cap.queue_order(MAP) == ["b", "c", "a", "d"]


def test_capacities_must_add_up_to_100_and_jobs_need_a_known_queue():
    with pytest.raises(ValidationError, match="add up to 90"):
        queues(a=50, b=40)
    with pytest.raises(ValidationError, match="below capacity"):
        queues(a=(60, {"maximum_capacity": 50}), b=40)
    cap = CapacityScheduler(queues(a=100))
    model = small_cluster(scheduler=cap)
    model.add_job("lost", PUMA["grep"], 0.0, uniform_maps(2), 0, pool="nowhere")
    with pytest.raises(ValueError, match="names queue 'nowhere'"):
        model.run_until(10.0)


@pytest.mark.parametrize(
    ("a_settings", "a_alone"),
    [
        ({}, 4),  # user-limit-factor 1: one user never exceeds the queue's 4 slots, 4 stay idle
        ({"user_limit_factor": 2.0, "maximum_capacity": 75.0}, 6),  # borrows up to int(75% x 8) = 6
        ({"user_limit_factor": 2.0}, 8),  # no maximum: borrows every idle slot (user limit int(4 x 2) = 8)
    ],
)
def test_a_queue_borrows_idle_capacity_up_to_its_maximum_then_gives_it_back(a_settings, a_alone):
    # 4 slaves x 2 map slots = 8; queues a and b of 50% = 4 slots each; b's job arrives at t=100.
    cap = CapacityScheduler(queues(a=(50, a_settings), b=50))
    model = small_cluster(scheduler=cap, slaves=4)
    ja = model.add_job("ja", PUMA["grep"], 0.0, uniform_maps(40, core_s=60.0), 0, pool="a", user="u1")
    jb = model.add_job("jb", PUMA["grep"], 100.0, uniform_maps(20, core_s=60.0), 0, pool="b", user="u2")
    model.run_until(90.0)
    assert (running(ja), running(jb)) == (a_alone, 0)
    # b takes the idle slots at once, then every slot a frees (b at occupied/capacity < 1 sorts first) until
    # b holds its 4; a keeps the rest: no preemption in the capacity scheduler
    model.run_until(230.0)  # inside a wave: equal maps end together, their slots refill at the next heartbeats
    assert (running(ja), running(jb)) == (4, 4)
    model.run_until(5000.0)
    assert ja.state == jb.state == "succeeded"
    model.check_hadoop_end()


def test_two_queues_share_the_cluster_by_capacity():
    # 8 map slots: queue a 75% -> int(6.0) = 6, b 25% -> 2; one user each with user-limit-factor 1 keeps each
    # queue at its capacity: 6 + 2 all along.
    cap = CapacityScheduler(queues(a=75, b=25))
    model = small_cluster(scheduler=cap, slaves=4)
    ja = model.add_job("ja", PUMA["wordcount"], 0.0, uniform_maps(30, core_s=60.0), 2, pool="a", user="u1")
    jb = model.add_job("jb", PUMA["wordcount"], 0.0, uniform_maps(30, core_s=60.0), 2, pool="b", user="u2")
    for t in (50.0, 150.0):
        model.run_until(t)
        assert (running(ja), running(jb)) == (6, 2)
    assert [cap.queues[q].usage[MAP].capacity for q in ("a", "b")] == [6, 2]
    model.run_until(10000.0)
    assert ja.state == jb.state == "succeeded"
    model.check_hadoop_end()


def test_one_off_switch_map_per_heartbeat_after_the_locality_wait():
    # Racks: nodes 0, 2 on rack 0; 1, 3 on rack 1. Every split on nodes 1 and 3: locality wait factor =
    # min(2 nodes / 4, 1.0) = 0.5; off-switch once missed opportunities > min(8 maps, 4 trackers) x 0.5 = 2.
    cap = CapacityScheduler()
    model = small_cluster(scheduler=cap, slaves=4, racks=2)
    job = model.add_job("j", PUMA["grep"], 0.0, uniform_maps(8), 0)
    pin_blocks(job, [1, 3])
    frozen(model, 1.0)
    view, t0, t1 = model.jobtracker.view, model.trackers[0], model.trackers[1]

    def beat(tracker):
        launches = cap.assign(tracker, view)
        for launch in launches:
            model.jobtracker.launch(tracker, launch)
        return [launch.locality for launch in launches]

    assert beat(t0) == [] and cap.opportunities[job] == 1  # 1 missed, 1 > 2 is false
    assert beat(t0) == [] and cap.opportunities[job] == 2
    assert beat(t0) == [Locality.OFF_RACK]  # 3 > 2: one off-switch map, though 2 slots were free
    assert beat(t0) == [Locality.OFF_RACK]  # an off-switch launch does not reset the count (now 4)
    assert beat(t1) == [Locality.NODE, Locality.NODE] and cap.opportunities[job] == 0  # local: reset


@pytest.mark.parametrize(("supports_priority", "first"), [(False, "early"), (True, "urgent")])
def test_jobs_in_a_queue_go_by_start_time_or_by_priority_first(supports_priority, first):
    cap = CapacityScheduler(queues(default=(100, {"supports_priority": supports_priority})))
    model = small_cluster(scheduler=cap)
    model.add_job("early", PUMA["grep"], 0.0, uniform_maps(6), 0)
    model.add_job("urgent", PUMA["grep"], 0.5, uniform_maps(6), 0, priority="HIGH")
    frozen(model, 1.0)
    launches = cap.assign(model.trackers[0], model.jobtracker.view)
    assert [launch.task.job.name for launch in launches] == [first, first]


def test_a_high_memory_job_takes_two_slots_per_task_and_reserves_a_tracker():
    # 400 MB maps on 200 MB map slots: 2 slots per task. 3 map slots per tracker: one big map leaves 1 slot,
    # too small; the tracker is reserved for the big job, so the small job behind it gets nothing there.
    settings = CapacitySettings(map_slot_memory_mb=200.0, reduce_slot_memory_mb=200.0, job_map_memory_mb={"big": 400.0})
    cap = CapacityScheduler(settings)
    model = small_cluster(scheduler=cap, slaves=2, map_slots=3)
    big = model.add_job("big", PUMA["grep"], 0.0, uniform_maps(4, core_s=30.0), 0)
    small = model.add_job("small", PUMA["grep"], 0.0, uniform_maps(4, core_s=30.0), 0)
    frozen(model, 1.0)
    t0 = model.trackers[0]
    view = model.jobtracker.view
    launches = cap.assign(t0, view)
    assert [launch.task.job.name for launch in launches] == ["big"]
    assert cap.reserved[(t0.node, MAP)] is big
    assert cap.slots_per_task(big, MAP) == 2 and cap.slots_per_task(small, MAP) == 1
    model.jobtracker.launch(t0, launches[0])
    cap.update(view)  # the next heartbeat's recount: (1 reserved tracker + 1 running map) x 2 slots
    assert cap.queues["default"].usage[MAP].occupied == 4
    assert cap.available(t0, MAP) == 1 and t0.free(MAP) == 2  # the tracker itself sees 2 free slots
    assert cap.assign(t0, view) == []  # still reserved: 1 slot is too small for big, small may not have it


def test_a_high_memory_run_ends_with_every_job_succeeded():
    settings = CapacitySettings(map_slot_memory_mb=200.0, reduce_slot_memory_mb=200.0, job_map_memory_mb={"big": 350.0})
    cap = CapacityScheduler(settings)
    model = small_cluster(scheduler=cap, slaves=3, map_slots=3, racks=2)
    jobs = [
        model.add_job("big", PUMA["grep"], 0.0, uniform_maps(9, core_s=30.0), 1),
        model.add_job("small", PUMA["wordcount"], 5.0, uniform_maps(12, core_s=20.0), 2, user="u2"),
    ]
    peak = 0
    for t in range(10, 400, 10):
        model.run_until(float(t))
        on_tracker = [sum(a.task.job.name == "big" for a in tr.running[MAP]) for tr in model.trackers]
        peak = max(peak, *on_tracker)
    assert peak == 1  # a 2-slot map fits once in 3 slots
    model.run_until(20000.0)
    assert all(j.state == "succeeded" for j in jobs)
    model.check_hadoop_end()


def test_a_job_needing_more_slots_than_any_tracker_has_is_refused():
    memory = {"map_slot_memory_mb": 200.0, "reduce_slot_memory_mb": 200.0}
    settings = CapacitySettings(**memory, job_map_memory_mb={"huge": 700.0})
    model = small_cluster(scheduler=CapacityScheduler(settings), map_slots=3)
    model.add_job("huge", PUMA["grep"], 0.0, uniform_maps(2), 0)  # ceil(700 / 200) = 4 > 3 slots
    with pytest.raises(ValueError, match="needs 4 map slots per task"):
        model.run_until(10.0)


def test_scenario_settings_build_the_capacity_scheduler():
    s = HadoopClusterSettings(slaves=2, scheduler="capacity", capacity={"queues": {"a": {"capacity": 100}}})
    model = build_cluster(s, seed=1, check=False)
    assert isinstance(model.jobtracker.scheduler, CapacityScheduler)
    assert list(model.jobtracker.scheduler.queues) == ["a"]


def test_user_limits_kept_over_a_queue_scan_give_the_plain_answers():
    # _find keeps each queue's user limit by task size while it offers the queue's jobs (usage stays put then):
    # every job, of 1 or 2 slots, any user, near maximum-capacity, must get the answer of the plain form.
    from types import SimpleNamespace

    settings = CapacitySettings(
        queues={"q": QueueSettings(capacity=100.0, maximum_capacity=100.0, minimum_user_limit_percent=30)},
        map_slot_memory_mb=100.0,
        reduce_slot_memory_mb=100.0,
        job_map_memory_mb={"big": 200.0},
    )
    cap = CapacityScheduler(settings)
    queue = cap.queues["q"]
    jobs = [SimpleNamespace(name=name, user=user) for name in ("big", "small") for user in "abcd"]
    for occupied, by_user in ((3, {"a": 3}), (9, {"a": 5, "b": 4}), (19, {"a": 10, "b": 5, "c": 4}), (20, {})):
        usage = SlotsUsage(capacity=10, max_capacity=20, occupied=occupied, by_user=dict(by_user))
        usage.active_users = {"a", "b", "c"}
        queue.usage = {MAP: usage}
        limits: dict[int, int] = {}
        for job in jobs:
            assert cap.assign_slots_to_job(queue, MAP, job, limits) == cap.assign_slots_to_job(queue, MAP, job)
        assert set(limits) == {1, 2}


def test_a_job_without_pending_maps_still_counts_opportunities_and_its_wait_factor_as_searched():
    # _obtain skips the searches of a job with no pending map, which find nothing, but not their effects: the
    # opportunity is counted and the locality wait factor is fixed when first asked (2 split nodes / 2 = 1.0).
    cap = CapacityScheduler()
    model = small_cluster(scheduler=cap, slaves=2)
    job = model.add_job("j", PUMA["grep"], 0.0, uniform_maps(2), 0)
    pin_blocks(job, [0, 1])
    frozen(model, 1.0)
    view, t0 = model.jobtracker.view, model.trackers[0]
    for tracker in model.trackers:
        for launch in cap.assign(tracker, view):
            model.jobtracker.launch(tracker, launch)
    assert job.pending_maps == 0
    cap._wait_factor.clear()  # as for a job whose every miss came before it was first asked
    seen = cap.opportunities.get(job, 0)
    assert cap._obtain(job, MAP, t0, False, view, set())[0].value == "none" and job not in cap._wait_factor
    assert cap._obtain(job, MAP, t0, True, view, set())[0].value == "none" and cap._wait_factor[job] == 1.0
    assert cap._obtain(job, MAP, t0, True, view, set())[0].value == "none" and cap.opportunities[job] == seen + 3
