"""Hadoop 1.x FairScheduler: water-filling, pool order, delay scheduling, preemption, shares in a run."""

import numpy as np
import pytest

from hadoop_layer.hdfs import Locality
from hadoop_layer.model import HadoopModel
from hadoop_layer.profiles import PUMA
from hadoop_layer.tasks import Job, JobState, TaskKind
from policies.schedulers import fair as fair_module
from policies.schedulers.fair import (
    FairScheduler,
    FairSettings,
    PoolSettings,
    Schedulable,
    compute_fair_shares,
    fair_order,
)
from scenarios.hadoop_base import HadoopClusterSettings, build_cluster
from tests.helpers import frozen, no_heartbeats, pin_blocks, running, small_cluster, uniform_maps

MAP = TaskKind.MAP


def test_remembered_fair_shares_are_a_fresh_computation_and_a_fresh_array():
    # the answer is remembered by the inputs: a repeated call gives the same bits, as an array of its own (a caller
    # that writes into it changes no later answer), and other inputs are not answered from the memory
    first = compute_fair_shares([1.0, 2.0], [0, 1], [3, 9], 7.5)
    fresh = fair_module._fair_shares.__wrapped__((1.0, 2.0), (0, 1), (3, 9), 7.5)
    assert first.tobytes() == np.array(fresh).tobytes()
    first[:] = -1.0
    again = compute_fair_shares([1.0, 2.0], [0, 1], [3, 9], 7.5)
    assert again.tobytes() == np.array(fresh).tobytes()
    assert compute_fair_shares([1.0, 2.0], [0, 1], [3, 9], 8.5).sum() == pytest.approx(8.5)
    assert compute_fair_shares([], [], [], 5.0).size == 0


def test_fair_shares_water_fill_min_shares_weights_and_demands():
    # 20 slots. A: min 6, weight 1, demand 4; B: min 2, weight 2, demand 100; C: min 8, weight 1, demand 100.
    # share_i = min(d_i, max(m_i, R w_i)): A = min(4, max(6, R)) = 4 for any R; for R <= 8:
    # 4 + max(2, 2R) + 8 = 20 -> R = 4: B = 8 (its weight), C = 8 (its min share, above R = 4).
    assert compute_fair_shares([1, 2, 1], [6, 2, 8], [4, 100, 100], 20) == pytest.approx([4, 8, 8])
    # Min shares above the slots: Hadoop's bisection ends at R ~ 0, each pool gets min(min share, demand).
    assert compute_fair_shares([1, 1], [6, 8], [100, 5], 10) == pytest.approx([6, 5])
    # Demand below the slots: everyone gets its demand.
    assert compute_fair_shares([1, 3], [0, 0], [2, 3], 20) == pytest.approx([2, 3])

    # The same three pools from jobs on a 20-map-slot cluster (10 slaves x 2), before any launch.
    pools = {"A": PoolSettings(min_maps=6), "B": PoolSettings(min_maps=2, weight=2), "C": PoolSettings(min_maps=8)}
    fair = FairScheduler(FairSettings(pools=pools))
    model = small_cluster(scheduler=fair, slaves=10)
    for name, maps in (("A", 4), ("B", 100), ("C", 100)):
        model.add_job(name, PUMA["grep"], 0.0, uniform_maps(maps), 0, pool=name)
    frozen(model, 0.5)
    fair.update(model.jobtracker.view)
    shares = {name: fair.pools[name].sched[MAP].fair_share for name in pools}
    assert shares == pytest.approx({"A": 4, "B": 8, "C": 8})
    assert fair.pools["default"].sched[MAP].fair_share == 0.0  # the default pool exists but wants nothing


def test_pools_below_min_share_come_first_then_by_running_over_weight():
    pools = [
        Schedulable("X", min_share=4, demand=10, running=3),  # needy: 3 < 4, at 3/4 of its min share
        Schedulable("Y", min_share=2, demand=10, running=0),  # needy: at 0/2
        Schedulable("Z", demand=10, running=0),  # no min share: running / weight = 0
        Schedulable("W", weight=3, demand=10, running=3),  # 3 / 3 = 1
        Schedulable("V", min_share=5, demand=2, running=2),  # min(5, demand 2) = 2 is met: 2 / 1 = 2
    ]
    assert [p.name for p in sorted(pools, key=fair_order)] == ["Y", "X", "Z", "W", "V"]


@pytest.mark.parametrize("delay", [True, False])
def test_delay_scheduling_escalates_node_rack_any_and_resets_on_a_local_launch(delay):
    # Racks: nodes 0, 2 on rack 0; 1, 3 on rack 1. Every split lives on nodes 1 and 3 only.
    fair = FairScheduler(FairSettings(node_delay_s=5.0, rack_delay_s=5.0, delay_scheduling=delay))
    model = small_cluster(scheduler=fair, slaves=4, racks=2)
    job = model.add_job("j", PUMA["grep"], 0.0, uniform_maps(8), 0)
    pin_blocks(job, [1, 3])
    frozen(model, 1.0)
    view, t0, t1, t2 = model.jobtracker.view, *model.trackers[:3]

    def beat(tracker, at):
        if at > model.time:
            model.run_until(at)
        launches = fair.assign(tracker, view)
        for launch in launches:
            model.jobtracker.launch(tracker, launch)
        return [launch.locality for launch in launches]

    if not delay:  # naive fair: off-rack maps at the first heartbeat
        assert beat(t0, 1.0) == [Locality.OFF_RACK, Locality.OFF_RACK]
        return
    assert beat(t0, 1.0) == []  # level NODE, waited 0: skipped
    info = fair.infos[job]
    assert beat(t0, 4.0) == [] and info.waited_s == 3.0  # +3 s since the last heartbeat; 3 < node delay 5
    assert beat(t0, 7.0) == [] and fair.allowed_level(job, view) == Locality.RACK  # waited 6 >= 5: rack, none here
    assert beat(t0, 9.0) == []  # waited 8 < 5 + 5: still rack
    # waited 10 >= node + rack delay: any level; both free slots get off-rack maps, the level becomes ANY
    assert beat(t0, 11.0) == [Locality.OFF_RACK, Locality.OFF_RACK]
    assert (info.level, info.waited_s) == (Locality.OFF_RACK, 0.0)
    # level ANY: node 1 may take anything, and takes its node-local maps; the level drops back to NODE
    assert beat(t1, 12.0) == [Locality.NODE, Locality.NODE]
    assert (info.level, info.waited_s) == (Locality.NODE, 0.0)
    assert beat(t2, 13.0) == []  # the wait starts again from 0: rack 0 is skipped again


def preemption_run(pools: dict, **settings) -> tuple[HadoopModel, Job, Job]:
    """4 one-slot slaves filled by pool `adhoc` from t=0; pool `prod` submits at t=20 (preemption every 15 s)."""
    fair = FairScheduler(FairSettings(pools=pools, preemption=True, **settings))
    model = small_cluster(scheduler=fair, slaves=4, map_slots=1)
    adhoc = model.add_job("adhoc", PUMA["grep"], 0.0, uniform_maps(12, core_s=300.0), 0, pool="adhoc")
    prod = model.add_job("prod", PUMA["grep"], 20.0, uniform_maps(4, core_s=300.0), 0, pool="prod")
    return model, adhoc, prod


@pytest.mark.parametrize(
    ("pools", "settings", "kill_s", "kills"),
    [
        # min share 2, timeout 30 s: starved since t=20; checks at 15, 30, 45 (25 s < 30), 60 (40 s): kill 2
        ({"prod": PoolSettings(min_maps=2, min_share_preemption_timeout_s=30.0)}, {}, 60.0, 2),
        # fair share 2 of 4 (equal weights), below half of it (0 < 1) since t=20; timeout 20 s: at 45 kill
        # up to the fair share, int(min(2, demand 4)) - 0 = 2
        ({}, {"fair_share_preemption_timeout_s": 20.0}, 45.0, 2),
    ],
)
def test_preemption_kills_the_newest_attempts_after_the_timeout(pools, settings, kill_s, kills):
    model, adhoc, prod = preemption_run(pools, **settings)
    model.run_until(kill_s - 0.25)
    assert not [a for a in model.attempts() if a.state == "killed"]
    first = sorted((a for t in adhoc.maps for a in t.active), key=lambda a: a.start_s)
    assert len(first) == 4 and running(prod) == 0
    model.run_until(kill_s + 10.0)
    killed = [a for a in model.attempts() if a.state == "killed"]
    assert {a.end_s for a in killed} == {kill_s}
    assert {a.name for a in killed} == {a.name for a in first[-kills:]}  # the most recently started ones
    assert running(prod) == kills and running(adhoc) == 4 - kills


def test_two_pools_share_the_cluster_by_weight():
    # 3 slaves x 2 map slots = 6; pool a weight 2, pool b weight 1, both with far more maps than slots:
    # R = 6 / 3 = 2 -> fair shares 4 and 2. Launches go to the lower running / weight, so a freed slot of a
    # returns to a (3/2 < 2/1) and one of b to b (4/2 > 1/1): the split stays 4 + 2.
    fair = FairScheduler(FairSettings(pools={"a": PoolSettings(weight=2.0)}))
    model = small_cluster(scheduler=fair, slaves=3)
    ja = model.add_job("ja", PUMA["grep"], 0.0, uniform_maps(30, core_s=60.0), 0, pool="a")
    jb = model.add_job("jb", PUMA["grep"], 0.0, uniform_maps(30, core_s=60.0), 0, pool="b")
    for t in (50.0, 150.0, 230.0):  # inside waves: equal maps end together (~every 62 s), slots refill at heartbeats
        model.run_until(t)
        assert (running(ja), running(jb)) == (4, 2)
    assert fair.pools["a"].sched[MAP].fair_share == pytest.approx(4.0)
    assert fair.pools["b"].sched[MAP].fair_share == pytest.approx(2.0)
    model.run_until(5000.0)
    assert ja.state == jb.state == "succeeded"
    model.check_hadoop_end()


def test_a_mixed_run_with_preemption_and_delay_ends_with_every_job_succeeded():
    pools = {
        "prod": PoolSettings(min_maps=3, min_reduces=1, weight=2.0, min_share_preemption_timeout_s=10.0),
        "batch": PoolSettings(scheduling_mode="fifo", max_running_jobs=1),
    }
    settings = FairSettings(pools=pools, preemption=True, fair_share_preemption_timeout_s=30.0)
    fair = FairScheduler(settings)
    model = small_cluster(scheduler=fair, slaves=4, racks=2)
    batch = uniform_maps(10, core_s=200.0)
    jobs = [model.add_job(f"b{k}", PUMA["wordcount"], 5.0 * k, batch, 2, pool="batch") for k in range(3)]
    jobs += [model.add_job(f"p{k}", PUMA["grep"], 30.0 + 40.0 * k, uniform_maps(6), 1, pool="prod") for k in range(2)]
    jobs.append(model.add_job("adhoc", PUMA["grep"], 10.0, uniform_maps(12, core_s=30.0), 1, pool="user-7"))
    model.run_until(20000.0)
    assert all(j.state == "succeeded" for j in jobs)
    killed = [a for a in model.attempts() if a.state == "killed"]
    assert killed and {a.task.job.pool for a in killed} == {"batch"}  # preemption acted, on the pool over its share
    model.check_hadoop_end()


def test_scenario_settings_build_the_chosen_scheduler():
    s = HadoopClusterSettings(slaves=2, scheduler="fair", fair={"pools": {"a": {"min_maps": 2}}, "preemption": True})
    model = build_cluster(s, seed=1, check=False)
    fair = model.jobtracker.scheduler
    assert isinstance(fair, FairScheduler) and fair.s.pools["a"].min_maps == 2
    assert fair.period_s == 0.5 and model.jobtracker.periodic_policies() == [fair]  # preemption runs periodically
    plain = build_cluster(HadoopClusterSettings(slaves=2, scheduler="fair"), seed=1, check=False)
    assert plain.jobtracker.periodic_policies() == []
    both = HadoopClusterSettings(slaves=2, scheduler="fair", fair={"preemption": True}, slot_manager="flexslot")
    assert len(build_cluster(both, seed=1, check=False).jobtracker.periodic_policies()) == 2
    assert type(build_cluster(HadoopClusterSettings(slaves=2), seed=1, check=False).jobtracker.scheduler).__name__ == (
        "FifoScheduler"
    )


def test_shares_are_updated_every_update_interval_and_at_a_new_job_running_counts_at_every_heartbeat():
    """H1's UpdateThread recomputes demands and fair shares every update interval (500 ms) and jobAdded at once;
    assignTasks does not, but the pools' and jobs' running counts it orders by are live (job.runningMaps())."""
    fair = FairScheduler()
    model = small_cluster(scheduler=fair, slaves=4)
    first = model.add_job("a", PUMA["grep"], 0.0, uniform_maps(20), 0)
    frozen(model, 1.0)
    view, trackers = model.jobtracker.view, model.trackers
    updates = []
    update = fair.update
    fair.update = lambda cluster: (updates.append(cluster.now), update(cluster))[1]

    def beat(tracker, at):
        if at > model.time:
            model.run_until(at)
        for launch in fair.assign(tracker, view):
            model.jobtracker.launch(tracker, launch)

    beat(trackers[0], 1.0)  # the first heartbeat: no update yet
    beat(trackers[1], 1.2)  # 0.2 s later: the shares are the last update's ...
    assert updates == [1.0]
    assert fair.infos[first].sched[MAP].running == 4 == running(first)  # ... the running counts are not
    assert fair.infos[first].sched[MAP].demand == 20  # pending + running, as at the update
    beat(trackers[2], 1.5)  # the interval has passed
    assert updates == [1.0, 1.5]
    model.add_job("b", PUMA["grep"], 1.5, uniform_maps(4), 0)
    model.run_until(1.6)
    assert len(view.jobs) == 2  # the new job runs (no setup task here)
    beat(trackers[3], 1.6)  # 0.1 s after the last update, but a job was added
    assert updates == [1.0, 1.5, 1.6] and len(fair.infos) == 2
    beat(trackers[3], 1.7)
    assert updates == [1.0, 1.5, 1.6]


def test_a_job_in_its_cleanup_leaves_the_scheduler_at_one_update():
    """With Hadoop's job lifecycle a job whose last task is done leaves the running jobs while its cleanup task runs
    (its state stays RUNNING until the cleanup is reported): one update drops it, and the heartbeats after it wait for
    the update interval again (an update at every heartbeat of the cleanup was 17 updates a simulated second on a
    600-node SWIM day)."""
    fair = FairScheduler()
    model = small_cluster(scheduler=fair, slaves=4, job_setup_cleanup=True)
    short = model.add_job("short", PUMA["grep"], 0.0, uniform_maps(2, core_s=2.0), 0)
    model.add_job("long", PUMA["grep"], 0.0, uniform_maps(40, core_s=100.0), 0)
    view = model.jobtracker.view
    while not (short.final_state is not None and short.state == JobState.RUNNING):
        model.run_for(0.1)
        assert model.time < 200.0
    assert short not in view.jobs and short in fair.infos
    updates = []
    update = fair.update
    fair.update = lambda cluster: (updates.append(cluster.now), update(cluster))[1]
    no_heartbeats(model)
    tracker = model.trackers[0]
    fair.assign(tracker, view)  # the job's departure: an update at once
    assert updates == [float(model.time)] and short not in fair.infos
    model.run_for(0.1)
    fair.assign(tracker, view)  # 0.1 s later, the job still in its cleanup: no update
    assert len(updates) == 1 and short.state == JobState.RUNNING


def test_job_fair_shares_worked_out_when_read_are_the_pool_s_share_redistributed_at_the_update():
    """A job's fair share (PoolSchedulable.redistributeShare) is worked out when first read, from the weights and
    demands of the update that set it: launches after the update change nothing in it."""
    fair = FairScheduler(FairSettings(size_based_weight=True))
    model = small_cluster(scheduler=fair, slaves=4)
    for maps in (3, 10, 40):
        model.add_job("j", PUMA["grep"], 0.0, uniform_maps(maps), 0)
    frozen(model, 0.5)
    fair.update(model.jobtracker.view)
    pool = fair.pools["default"]
    js = [fair.infos[j].sched[MAP] for j in pool.jobs]
    expected = compute_fair_shares([s.weight for s in js], [0] * len(js), [s.demand for s in js],
                                   pool.sched[MAP].fair_share)  # fmt: skip
    for s in js:
        s.demand, s.weight = 1, 1.0  # a later change of the inputs does not reach the shares of that update
    assert [s.fair_share for s in js] == list(expected) and sum(expected) == pytest.approx(8)
    js[0].fair_share = 2.5
    assert js[0].fair_share == 2.5


@pytest.mark.parametrize("limit", [None, 1])
def test_runnability_without_limits_is_every_job_and_a_user_limit_keeps_the_first_in_fifo_order(limit):
    fair = FairScheduler(FairSettings(user_max_jobs=limit))
    model = small_cluster(scheduler=fair, slaves=2)
    first = model.add_job("a", PUMA["grep"], 0.0, uniform_maps(4), 0)
    second = model.add_job("b", PUMA["grep"], 0.0, uniform_maps(4), 0)
    frozen(model, 0.5)
    fair.update(model.jobtracker.view)
    assert [fair.infos[j].runnable for j in (first, second)] == ([True, True] if limit is None else [True, False])
