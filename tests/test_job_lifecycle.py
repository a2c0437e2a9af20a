"""Hadoop 1.x's job lifecycle (hadoop.job_setup_cleanup): init, setup task, maps and reduces, cleanup task.

Timelines are worked out by hand from the tracker's heartbeat clock (offset o, interval 3 s with the 1.0
formula): a setup/cleanup task is a child JVM's start (3 s: 1 core-s of CPU, then the rest of its wall time) plus
`setup_cleanup_s` (1 s), and the JobTracker hears
that an attempt ended at its tracker's next heartbeat (no out-of-band heartbeats in Hadoop 1.x).
"""

import math

import pytest

from hadoop_layer.config import HadoopConfig
from hadoop_layer.model import HadoopModel
from hadoop_layer.profiles import PUMA
from hadoop_layer.tasks import TaskKind
from policies.schedulers.fifo import FifoScheduler
from tests.helpers import history

CORE_MHZ = 2000.0
DT = 0.01  # small ticks: phase ends land within 0.01 s of their exact time
TOL = 0.05


def one_slave(map_slots: int = 2, reduce_slots: int = 1, on: bool = True) -> HadoopModel:
    cfg = HadoopConfig(map_slots=map_slots, reduce_slots=reduce_slots, heartbeat_formula="1.0", job_setup_cleanup=on)
    model = HadoopModel(rng=3, dt=DT, check=True, hadoop=cfg, scheduler=FifoScheduler())
    host = model.add_host("h0", cores=2, core_mhz=CORE_MHZ, mem_mb=8192, disk_mbps=100, nic_mbps=100, rack=0)
    model.add_slave(model.add_vm("s0", host, vcpus=2, mem_mb=4096))
    return model


def cpu_map(core_s: float) -> dict:
    """A map with no input or output: a JVM start, then `core_s` of CPU."""
    return {"input_mb": 0.0, "cpu_mc": core_s * CORE_MHZ, "output_mb": 0.0, "output_records": 0.0}


def first_beat_after(model: HadoopModel, t: float) -> float:
    tracker = model.trackers[0]
    k = math.floor((t - tracker.offset_s) / tracker.interval_s) + 1
    return tracker.offset_s + k * tracker.interval_s


def test_a_one_map_job_takes_setup_map_cleanup_and_four_heartbeats():
    model = one_slave()
    job = model.add_job("one-map", PUMA["grep"], 0.0, [cpu_map(1.0)], 0)
    model.start()
    interval = model.trackers[0].interval_s
    assert interval == 3.0
    b1 = first_beat_after(model, 1.0)  # initialized at 1 s; the setup task goes out at the next heartbeat
    model.run_until(60.0)
    setup, cleanup = (a for a in history(model, model.trackers[0]) if a.task.role)
    (map_attempt,) = job.maps[0].attempts
    assert setup.start_s == pytest.approx(b1)
    assert setup.end_s == pytest.approx(b1 + 4.0, abs=TOL)  # JVM 3 s + setupJob 1 s
    assert map_attempt.start_s == pytest.approx(b1 + 2 * interval)  # setup reported at the next beat, map given then
    assert map_attempt.end_s == pytest.approx(b1 + 2 * interval + 4.0, abs=TOL)  # JVM 3 s + map 1 s
    assert cleanup.start_s == pytest.approx(b1 + 4 * interval)  # the map's end heard at the next beat
    assert job.state == "succeeded"
    assert job.end_s == pytest.approx(b1 + 6 * interval)  # the cleanup's end (b1 + 16) heard at the next beat
    assert 19.0 < job.end_s - job.submit_s < 22.0 + 1e-9  # vs 6-9 s without the lifecycle (next test)
    assert setup.task.kind == TaskKind.MAP and cleanup.task.kind == TaskKind.MAP  # a map slot was free


def test_without_the_lifecycle_the_job_is_just_its_map():
    model = one_slave(on=False)
    job = model.add_job("one-map", PUMA["grep"], 0.0, [cpu_map(1.0)], 0)
    model.start()
    b0 = first_beat_after(model, 0.0)
    model.run_until(60.0)
    assert job.end_s == pytest.approx(b0 + 6.0)  # JVM 3 s + map 1 s, heard at the next beat
    assert not any(a.task.role for a in history(model, model.trackers[0]))


def test_a_job_with_no_tasks_runs_setup_then_cleanup():
    model = one_slave()
    job = model.add_job("empty", PUMA["grep"], 0.0, [], 0)
    model.start()
    b1 = first_beat_after(model, 1.0)
    model.run_until(60.0)
    assert [a.task.role for a in history(model, model.trackers[0])] == ["setup", "cleanup"]
    assert job.state == "succeeded" and job.end_s == pytest.approx(b1 + 4 * 3.0)  # each 4 s, heard at b1 + 6, + 12


def test_setup_takes_a_reduce_slot_when_the_map_slots_are_full():
    model = one_slave(map_slots=1, reduce_slots=1)
    first = model.add_job("first", PUMA["grep"], 0.0, [cpu_map(100.0)], 0)
    second = model.add_job("second", PUMA["grep"], 10.0, [cpu_map(1.0)], 0)
    model.run_until(400.0)
    setups = [a for a in history(model, model.trackers[0]) if a.task.role == "setup"]
    assert [a.task.job for a in setups] == [first, second]
    assert setups[0].task.kind == TaskKind.MAP and setups[1].task.kind == TaskKind.REDUCE
    assert first.state == second.state == "succeeded"
    assert second.maps[0].attempts[0].start_s > first.maps[0].attempts[0].end_s  # its map waits for the slot


def test_a_killed_job_kills_its_attempts_and_still_runs_its_cleanup():
    model = one_slave()
    job = model.add_job("doomed", PUMA["grep"], 0.0, [cpu_map(100.0), cpu_map(100.0)], 0)
    model.run_until(20.0)
    running = [a for t in job.maps for a in t.active]
    assert len(running) == 2
    model.jobtracker.kill_job(job)
    model.run_until(40.0)
    assert all(a.state == "killed" for a in running)
    assert job.state == "killed" and job.end_s is not None and job.end_s < 40.0
    assert [a.task.role for a in history(model, model.trackers[0]) if a.task.role] == ["setup", "cleanup"]
    assert not model.jobtracker.running_jobs and not model.jobtracker.other_jobs


def test_replayed_failed_and_killed_attempts_run_their_recorded_time_then_the_task_is_retried():
    model = one_slave(on=False, map_slots=1)
    job = model.add_job("flaky", PUMA["grep"], 0.0, [cpu_map(1.0)], 0)
    task = job.maps[0]
    task.replay = [("FAILED", 5.0), ("KILLED", 3.0)]
    model.run_until(60.0)
    failed, killed, done = task.attempts
    assert (failed.state, killed.state, done.state) == ("failed", "killed", "done")
    assert failed.end_s - failed.start_s == pytest.approx(5.0, abs=TOL)
    assert killed.end_s - killed.start_s == pytest.approx(3.0, abs=TOL)
    assert task.failures == 1 and task.kill_count == 1  # a recorded kill is not a failure
    assert job.state == "succeeded"


def test_recorded_failures_up_to_max_attempts_fail_the_job():
    model = one_slave(map_slots=1)
    model.hadoop.max_attempts = 2
    job = model.add_job("bad", PUMA["grep"], 0.0, [cpu_map(1.0), cpu_map(1.0)], 0)
    job.maps[0].replay = [("FAILED", 2.0), ("FAILED", 2.0)]
    model.run_until(120.0)
    assert job.state == "failed" and job.maps[0].failures == 2
    assert [a.task.role for a in history(model, model.trackers[0]) if a.task.role] == ["setup", "cleanup"]


def test_the_tasks_table_lists_setup_and_cleanup_and_slot_managers_cannot_kill_them():
    from hadoop_layer.interfaces import Kill

    model = one_slave()
    job = model.add_job("one-map", PUMA["grep"], 0.0, [cpu_map(1.0)], 0)
    model.start()
    model.run_until(first_beat_after(model, 1.0) + 0.5)  # the setup attempt is running
    (setup,) = job.lifecycle_task.active
    model.jobtracker.apply(Kill(setup))
    assert setup.state == "running"
    model.run_until(60.0)
    frame = model.tasks_frame()
    assert frame.kind.tolist() == ["m", "setup", "cleanup"]
    assert frame.task.tolist() == ["job_0001_m_000000", "job_0001_setup", "job_0001_cleanup"]
    assert (frame.state == "done").all() and job.state == "succeeded"
