"""What a task and a job pay before and after they compute (docs/model.md "Fixed costs"), worked out by hand.

One slave, 2 GHz cores, small ticks (0.01 s: phase ends land within a tick or two of their exact time), Hadoop 1.0's
3 s heartbeats at the tracker's offset o. Maps of no input: a child JVM, then 1 core-second of CPU.
"""

import math

import pytest

from hadoop_layer.config import HadoopConfig
from hadoop_layer.jvms import LONG_POLL_S, jvm_start, next_poll_s, reused_start
from hadoop_layer.model import HadoopModel
from hadoop_layer.profiles import PUMA
from policies.schedulers.fifo import FifoScheduler
from vcloud.work import Kind

CORE_MHZ = 2000.0
DT = 0.01
TOL = 0.05


def one_slave(map_slots: int = 1, vcpus: int = 2, **hadoop) -> HadoopModel:
    hadoop.setdefault("job_setup_cleanup", False)
    cfg = HadoopConfig(map_slots=map_slots, reduce_slots=1, heartbeat_formula="1.0", **hadoop)
    model = HadoopModel(rng=3, dt=DT, check=True, hadoop=cfg, scheduler=FifoScheduler())
    host = model.add_host("h0", cores=2, core_mhz=CORE_MHZ, mem_mb=8192, disk_mbps=100, nic_mbps=100, rack=0)
    model.add_slave(model.add_vm("s0", host, vcpus=vcpus, mem_mb=4096))
    return model


def cpu_map(core_s: float = 1.0) -> dict:
    return {"input_mb": 0.0, "cpu_mc": core_s * CORE_MHZ, "output_mb": 0.0, "output_records": 0.0}


def beat_after(model: HadoopModel, t: float) -> float:
    """The tracker's first heartbeat strictly after `t`."""
    tracker = model.trackers[0]
    return tracker.offset_s + (math.floor((t - tracker.offset_s) / tracker.interval_s) + 1) * tracker.interval_s


def run_maps(model: HadoopModel, n: int, until: float = 120.0):
    job = model.add_job("maps", PUMA["grep"], 0.0, [cpu_map() for _ in range(n)], 0)
    model.start()
    model.run_until(until)
    return [t.attempts[0] for t in job.maps]


# ---- the child JVM's start: CPU, then a wait for the rest of its wall time ------------------------------------
def test_a_new_jvm_is_its_cpu_then_a_wait_for_the_rest_of_its_wall_time():
    cfg = HadoopConfig()  # 3 s wall, 1 core-s of it CPU
    cpu, wait = jvm_start(cfg, CORE_MHZ, launch_s=10.25, dt=1.0)
    assert (cpu.kind, cpu.amount) == (Kind.CPU, 1.0 * CORE_MHZ)
    assert wait.kind == Kind.WAIT and wait.amount == pytest.approx(2.0 + 0.25)  # + the launch's tick before it
    assert [p.kind for p in jvm_start(cfg.model_copy(update={"jvm_start_wall_s": 0.0}), CORE_MHZ)] == [Kind.CPU]
    assert jvm_start(cfg.model_copy(update={"jvm_start_wall_s": 0.0, "jvm_start_core_s": 0.0}), CORE_MHZ) == []


def test_a_map_runs_its_task_the_jvm_wall_time_after_its_launch():
    model = one_slave()
    (m,) = run_maps(model, 1)
    o = m.start_s
    assert o == pytest.approx(beat_after(model, 0.0))
    assert m.phase_end_s[1] == pytest.approx(o + 3.0, abs=TOL)  # the JVM: 1 s of CPU, 2 s of the rest
    assert m.end_s == pytest.approx(o + 3.0 + 1.0, abs=TOL)


def test_with_the_wall_time_off_the_jvm_costs_its_cpu_only():
    (m,) = run_maps(one_slave(jvm_start_wall_s=0.0), 1)
    assert m.end_s - m.start_s == pytest.approx(1.0 + 1.0, abs=TOL)  # (as before the wall time: 1 core-s)


def test_cpu_contention_stretches_the_jvms_cpu_not_its_wait():
    """Two maps start together on a VM of 1 vCPU: each JVM's 1 core-s of CPU gets half the core (2 s), the wait
    stays 2 s (less the launch's tick, added back), then the two maps' CPU (1 core-s each) shares the core: 2 s."""
    a, b = run_maps(one_slave(map_slots=2, vcpus=1), 2)
    o = a.start_s
    assert b.start_s == o
    for m in (a, b):
        assert m.phase_end_s[0] - o == pytest.approx(2.0 - (o - math.floor(o / DT) * DT), abs=TOL)
        assert m.phase_end_s[1] - o == pytest.approx(4.0, abs=TOL)
        assert m.end_s - o == pytest.approx(6.0, abs=TOL)


# ---- JVM reuse (mapred.job.reuse.jvm.num.tasks) and the getTask poll --------------------------------------------
def test_an_idle_jvm_polls_every_half_second_then_every_one_and_a_half():
    assert [next_poll_s(10.0, 10.0 + x, 0.5) for x in (0.0, 0.1, 0.5, 1.9, 2.0, 2.1, 3.5, 3.6)] == pytest.approx(
        [10.0, 10.5, 10.5, 12.0, 12.0, 12.0 + LONG_POLL_S, 13.5, 15.0]
    )
    assert next_poll_s(10.0, 11.3, 0.0) == 11.3  # child_poll_s=0: the task at once
    (wait,) = reused_start(HadoopConfig(), idle_since=10.0, launch_s=10.3, dt=1.0)
    assert wait.amount == pytest.approx(0.5)  # the poll at 10.5, counted from the tick's start (10)


def test_without_reuse_every_task_starts_a_jvm():
    """One map slot, three maps: each waits for the heartbeat after the one before ends (+3 s at o + 6, o + 12)."""
    m1, m2, m3 = run_maps(one_slave(), 3)
    o = m1.start_s
    assert [m.start_s - o for m in (m1, m2, m3)] == pytest.approx([0.0, 6.0, 12.0])
    assert [m.end_s - m.start_s for m in (m1, m2, m3)] == pytest.approx([4.0] * 3, abs=TOL)


@pytest.mark.parametrize(("reuse", "third_runs_s"), [(-1, 1.0), (2, 4.0)])
def test_a_reused_jvm_skips_the_start_and_waits_for_its_poll(reuse, third_runs_s):
    """One slot (so one JVM at most: JvmManager reuses only at the slot count). m1 spawns the JVM and ends at o + 4;
    m2 is launched at the beat o + 6, where the JVM, idle since o + 4, polls (o + 4, 4.5, 5, 5.5, 6: its fifth poll):
    it runs at once and ends at o + 7. m3 at the beat o + 9: the JVM polls then too (idle since o + 7) and runs it,
    unless it has run its 2 tasks and exited (reuse=2): then a new JVM starts, 3 s."""
    model = one_slave(jvm_reuse_tasks=reuse)
    m1, m2, m3 = run_maps(model, 3)
    o = m1.start_s
    assert [m.start_s - o for m in (m1, m2, m3)] == pytest.approx([0.0, 6.0, 9.0])
    assert m1.end_s - o == pytest.approx(4.0, abs=TOL)
    assert m2.end_s - o == pytest.approx(7.0, abs=TOL)
    assert m3.end_s - m3.start_s == pytest.approx(third_runs_s, abs=TOL)
    pool = model.jobtracker.jvms
    assert (pool.spawned, pool.reused) == ((1, 2) if reuse == -1 else (2, 1))


def test_reuse_spawns_while_the_tracker_has_fewer_jvms_than_slots():
    """Two slots, three maps: m1 and m2 spawn a JVM each (fewer JVMs than slots); m3, at the limit, reuses one."""
    model = one_slave(map_slots=2, jvm_reuse_tasks=-1)
    run_maps(model, 3)
    assert (model.jobtracker.jvms.spawned, model.jobtracker.jvms.reused) == (2, 1)


def test_jvm_reuse_of_zero_is_refused():
    with pytest.raises(ValueError, match="-1"):
        HadoopConfig(jvm_reuse_tasks=0)


# ---- the JobTracker hears of an attempt's end at its tracker's next heartbeat -----------------------------------
def test_a_job_ends_when_its_last_attempt_is_reported():
    """No lifecycle: the map ends at o + 4 and the JobTracker hears of it at the next beat, o + 6; with out-of-band
    heartbeats at once."""
    for oob, heard in ((False, 6.0), (True, 4.0)):
        model = one_slave(outofband_heartbeat=oob)
        job = model.add_job("one", PUMA["grep"], 0.0, [cpu_map()], 0)
        model.start()
        model.run_until(60.0)
        (m,) = job.maps[0].attempts
        assert m.end_s - m.start_s == pytest.approx(4.0, abs=TOL)
        assert job.end_s - m.start_s == pytest.approx(heard, abs=TOL)


def two_slaves(**hadoop) -> HadoopModel:
    """s0 runs maps only, s1 reduces only; reduces start once every map is heard of (slowstart 1)."""
    cfg = HadoopConfig(map_slots=1, reduce_slots=1, heartbeat_formula="1.0", job_setup_cleanup=False,
                       reduce_slowstart=1.0, **hadoop)  # fmt: skip
    model = HadoopModel(rng=5, dt=DT, check=True, hadoop=cfg, scheduler=FifoScheduler())
    for i in range(2):
        host = model.add_host(f"h{i}", cores=2, core_mhz=CORE_MHZ, mem_mb=8192, disk_mbps=100, nic_mbps=100, rack=0)
        model.add_slave(model.add_vm(f"s{i}", host, vcpus=2, mem_mb=4096))
    model.trackers[0].reduce_slots = 0
    model.trackers[1].map_slots = 0
    return model


@pytest.mark.parametrize("oob", [False, True])
def test_slow_start_sees_a_map_end_when_its_tracker_reports_it(oob):
    """The reduce's tracker s1 launches it at its first beat after the JobTracker heard of the map: s0's next beat
    after the map's end (out-of-band: the end itself)."""
    model = two_slaves(outofband_heartbeat=oob)
    map_spec = {"input_mb": 0.0, "cpu_mc": CORE_MHZ, "output_mb": 1.0, "output_records": 10.0}
    job = model.add_job("mr", PUMA["grep"], 0.0, [map_spec], 1)
    model.start()
    model.run_until(120.0)
    (m,), (r,) = job.maps[0].attempts, job.reduces[0].attempts
    s0, s1 = model.trackers

    def after(tracker, t: float) -> float:
        return tracker.offset_s + (math.floor((t - tracker.offset_s) / tracker.interval_s) + 1) * tracker.interval_s

    heard = m.end_s if oob else after(s0, m.end_s)
    assert r.start_s == pytest.approx(after(s1, heard))
    assert job.state == "succeeded"


# ---- the task commit (Task.done: commitPending, canCommit every 1 s until approved at a heartbeat) --------------
@pytest.mark.parametrize("commit", [True, False])
def test_a_task_that_wrote_output_waits_for_its_commit_approval(commit):
    """A map-only map writes 1 MB to HDFS: JVM 3 s, map 1 s, the write (a tick) end its work at w ~ o + 4.01. It
    calls canCommit at w, w + 1, w + 2, ...; the approval comes back in the reply to its tracker's next heartbeat,
    o + 6, so the poll at w + 2 is the first that may commit: the attempt ends there, and the JobTracker hears of
    it at the beat after, o + 9. Without the commit it ends at w and is heard of at o + 6."""
    model = one_slave(task_commit=commit, replication=1)
    spec = {"input_mb": 0.0, "cpu_mc": CORE_MHZ, "output_mb": 1.0, "output_records": 10.0}
    job = model.add_job("map-only", PUMA["grep"], 0.0, [spec], 0)
    model.start()
    model.run_until(60.0)
    (m,) = job.maps[0].attempts
    o = m.start_s
    names = [p.name for p in m.phases]
    work_end = m.phase_end_s[names.index("hdfs-write")]
    assert work_end - o == pytest.approx(4.0, abs=TOL)
    if commit:
        assert names[-1] == "hdfs-commit"
        assert m.end_s == pytest.approx(work_end + 2.0)  # canCommit at w, w + 1, w + 2 > o + 6
        assert job.end_s == pytest.approx(o + 9.0)
    else:
        assert "hdfs-commit" not in names and m.end_s == work_end
        assert job.end_s == pytest.approx(o + 6.0)


def test_a_map_whose_output_goes_to_reduces_commits_nothing_and_a_reduce_commits():
    model = two_slaves(replication=1)
    map_spec = {"input_mb": 0.0, "cpu_mc": CORE_MHZ, "output_mb": 1.0, "output_records": 10.0}
    job = model.add_job("mr", PUMA["grep"], 0.0, [map_spec], 1)
    model.start()
    model.run_until(120.0)
    (m,), (r,) = job.maps[0].attempts, job.reduces[0].attempts
    assert "hdfs-commit" not in [p.name for p in m.phases]
    names = [p.name for p in r.phases]
    assert names[-1] == "hdfs-commit"
    work_end, s1 = r.phase_end_s[-2], model.trackers[1]
    beat = s1.offset_s + (math.floor((work_end - s1.offset_s) / s1.interval_s) + 1) * s1.interval_s
    assert r.end_s - work_end == pytest.approx(math.ceil(beat - work_end))  # whole seconds of canCommit polls
