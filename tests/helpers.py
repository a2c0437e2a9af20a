"""Tiny clouds and clusters built by hand for tests whose expected numbers are worked out on paper, and the small
random clusters and reference loops that several test modules share (a test module never imports another)."""

from __future__ import annotations

import numpy as np

from hadoop_layer.config import HadoopConfig
from hadoop_layer.model import HadoopModel
from hadoop_layer.profiles import PUMA, MapSpec
from hadoop_layer.tasks import Job, TaskKind
from policies.schedulers.fifo import FifoScheduler
from policies.speculation.hadoop import HadoopSpeculation
from policies.speculation.hadoop_lookahead import HadoopLookAhead
from policies.speculation.late import LateSpeculation
from policies.speculation.samr import SamrSpeculation
from vcloud import CloudModel, Phase, WorkItem


def one_host(cores: int = 4, core_mhz: float = 2000.0, disk_mbps: float = 100.0, **model_kwargs) -> CloudModel:
    model = CloudModel(rng=1, check=True, **model_kwargs)
    model.add_host("h0", cores=cores, core_mhz=core_mhz, mem_mb=65536, disk_mbps=disk_mbps, nic_mbps=125)
    return model


def busy(model: CloudModel, vm, threads: int = 1, seconds: float = 1e6, **kwargs) -> WorkItem:
    """A CPU-bound item that runs far longer than the test."""
    core = model.hosts.core_mhz[vm.host.row]
    return vm.run(WorkItem(model, [Phase.cpu("spin", seconds * core * threads)], threads=threads, **kwargs))


def small_cluster(
    slaves=3, racks=1, speculation=None, *, scheduler=None, slot_manager=None, map_slots=2, reduce_slots=1, **hadoop
) -> HadoopModel:
    """`slaves` slave VMs of 2 vCPUs, one per host; hosts spread over `racks` racks; FIFO unless given;
    3-second heartbeats (Hadoop 1.0's rule). No job setup and cleanup tasks unless asked (`job_setup_cleanup=True`):
    the policies' tests look at a job's maps and reduces from its submission; the lifecycle's own timelines are
    tests/test_job_lifecycle.py's and tests/test_fixed_costs.py's."""
    hadoop.setdefault("job_setup_cleanup", False)
    cfg = HadoopConfig(map_slots=map_slots, reduce_slots=reduce_slots, heartbeat_formula="1.0", **hadoop)
    model = HadoopModel(rng=3, check=True, hadoop=cfg, scheduler=scheduler or FifoScheduler(), speculation=speculation,
                        slot_manager=slot_manager)  # fmt: skip
    for i in range(slaves):
        host = model.add_host(f"h{i}", cores=2, core_mhz=2000, mem_mb=8192, disk_mbps=100, nic_mbps=100, rack=i % racks)
        model.add_slave(model.add_vm(f"s{i}", host, vcpus=2, mem_mb=4096))
    return model


def two_rack_cluster(scheduler, slaves=4, racks=2, **kwargs) -> HadoopModel:
    """The Coupling and Quincy tests' cluster: `small_cluster` with four slaves on two racks."""
    return small_cluster(slaves, racks, scheduler=scheduler, **kwargs)


def uniform_maps(n: int, mb: float = 64.0, core_s: float = 10.0) -> list[MapSpec]:
    return [{"input_mb": mb, "cpu_mc": core_s * 2000.0, "output_mb": 1.0, "output_records": 1e4} for _ in range(n)]


def no_heartbeats(model: HadoopModel) -> None:
    """No heartbeats of their own: the test calls the scheduler."""
    model.heartbeat_clock.stopped = True


def frozen(model: HadoopModel, until: float) -> None:
    """Run to `until` with no heartbeats: the test calls the scheduler itself."""
    model.start()
    no_heartbeats(model)
    model.run_until(until)


def pin_blocks(job: Job, nodes: list[int]) -> None:
    """Put every split of `job` on `nodes` and rebuild the job's locality caches."""
    racks, tasks = job.model.node_racks, job.maps  # the tasks are made (with their caches) on first asking
    job._node_cache.clear()
    job._rack_cache.clear()
    for task in reversed(tasks):
        task.replicas = np.array(nodes)
        for n in nodes:
            job._node_cache[n].append(task)
        for r in {int(racks[n]) for n in nodes}:
            job._rack_cache[r].append(task)


def running(job: Job, kind: TaskKind = TaskKind.MAP) -> int:
    return sum(len(t.active) for t in job.running_tasks[kind])


def assert_backups_won_off(job, slow) -> None:
    """Some map was backed up; each backed-up map started on `slow`, was killed there, and its backup, launched at
    least the 60 s lag later on another node, won."""
    backed_up = [t for t in job.maps if len(t.attempts) == 2]
    assert backed_up, "no task on the starved node was backed up"
    for task in backed_up:
        first, backup = task.attempts
        assert first.tracker is slow and first.state == "killed"
        assert backup.speculative and backup.state == "done" and backup.tracker is not slow
        assert backup.start_s - first.start_s >= 60.0


def history(model: HadoopModel, tracker) -> list:
    """The tracker's ended attempts in the order they ended (records of the model's `ended` columns)."""
    return [a for a in model.ended.records() if a.tracker is tracker]


def skewed_job(model: HadoopModel, reduces: int = 1) -> Job:
    """One split of 640 MB needing 200 core-seconds, and eleven of 64 MB needing 10 each (the same work per MB
    would give the big one 100: its records are expensive)."""
    big = {"input_mb": 640.0, "cpu_mc": 200 * 2000.0, "output_mb": 10.0, "output_records": 1e5}
    small = [{"input_mb": 64.0, "cpu_mc": 10 * 2000.0, "output_mb": 1.0, "output_records": 1e4}] * 11
    return model.add_job("skewed", PUMA["grep"], 0.0, [big, *small], reduces)


def random_failing_cluster(seed: int) -> HadoopModel:
    """3 to 5 trackers on two racks, the first on a slow host (backups), one to three random jobs submitted in the
    first minute, tasks failing at a random rate (5 to 30 %), Hadoop's, LATE's or SAMR's speculation by `seed`, the
    job lifecycle (setup and cleanup tasks) on odd seeds. Not run yet."""
    r = np.random.default_rng(seed)
    speculation = [HadoopSpeculation, LateSpeculation, SamrSpeculation][seed % 3]()
    failing = float(r.uniform(0.05, 0.3))
    cfg = HadoopConfig(map_slots=2, reduce_slots=1, heartbeat_formula="1.0", max_attempts=8,
                       task_failure_probability=failing, job_setup_cleanup=bool(seed % 2))  # fmt: skip
    model = HadoopModel(rng=seed, check=True, hadoop=cfg, scheduler=FifoScheduler(), speculation=speculation)
    for i in range(int(r.integers(3, 6))):  # the first node slow: backups
        host = model.add_host(f"h{i}", cores=2, core_mhz=400.0 if i == 0 else 2000.0, mem_mb=8192, disk_mbps=100,
                              nic_mbps=100, rack=i % 2)  # fmt: skip
        model.add_slave(model.add_vm(f"s{i}", host, vcpus=2, mem_mb=4096))
    for j in range(int(r.integers(1, 4))):
        maps = uniform_maps(int(r.integers(1, 12)), mb=float(r.uniform(16, 128)), core_s=float(r.uniform(2, 30)))
        model.add_job(f"j{j}", PUMA[str(r.choice(["wordcount", "tera-sort", "grep"]))], float(r.uniform(0, 60)), maps,
                      int(r.integers(0, 3)))  # fmt: skip
    return model


def slow_nodes_mix(look_ahead: bool, seed: int = 3, formula: str = "1.1", dt: float = 2.0) -> HadoopModel:
    """30 trackers, a third on slow hosts (their attempts lag: backups of both kinds), eight jobs of random sizes with
    and without reduces submitted at random; short heartbeats and long ticks give long look-aheads. Run to 3,000 s."""
    cfg = HadoopConfig(map_slots=2, reduce_slots=2, heartbeat_formula=formula)
    model = HadoopModel(rng=seed, dt=dt, hadoop=cfg, scheduler=FifoScheduler(), speculation=HadoopLookAhead())
    rng = np.random.default_rng(seed)
    for i in range(30):
        slow = i % 3 == 0
        host = model.add_host(f"h{i}", cores=2, core_mhz=600 if slow else 2000, mem_mb=8192,
                              disk_mbps=20 if slow else 100, nic_mbps=100, rack=i % 2)  # fmt: skip
        model.add_slave(model.add_vm(f"s{i}", host, vcpus=2, mem_mb=4096))
    model.heartbeat_clock.look_ahead = look_ahead
    submit = 0.0
    for j in range(8):
        maps = uniform_maps(int(rng.integers(10, 120)), core_s=float(rng.uniform(10, 60)))
        model.add_job(f"j{j}", PUMA["wordcount" if j % 2 else "grep"], submit, maps, int(rng.integers(0, 12)))
        submit += float(rng.uniform(0, 150))
    model.run_until(3000.0)
    return model


def former_job_counts(jobs, top: int) -> tuple[np.ndarray, np.ndarray]:
    """`lag_bounds`' job columns as its loop wrote them, element by element: finished tasks and tasks (at least 1)
    by 2 x job number + kind, for the job numbers below `top`."""
    done, size = np.zeros(2 * top), np.ones(2 * top)
    for job in jobs:
        if job.number < top:
            done[2 * job.number], done[2 * job.number + 1] = job.finished_maps, job.finished_reduces
            size[2 * job.number], size[2 * job.number + 1] = max(len(job.maps), 1), max(len(job.reduces), 1)
    return done, size
