"""Tiny clouds and clusters built by hand for tests whose expected numbers are worked out on paper."""

from __future__ import annotations

import numpy as np

from hadoop_layer.config import HadoopConfig
from hadoop_layer.model import HadoopModel
from hadoop_layer.profiles import MapSpec
from hadoop_layer.tasks import Job, TaskKind
from policies.schedulers.fifo import FifoScheduler
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
    slaves=3, racks=1, speculation=None, *, scheduler=None, map_slots=2, reduce_slots=1, **hadoop
) -> HadoopModel:
    """`slaves` slave VMs of 2 vCPUs, one per host; hosts spread over `racks` racks; FIFO unless given;
    3-second heartbeats (Hadoop 1.0's rule)."""
    cfg = HadoopConfig(map_slots=map_slots, reduce_slots=reduce_slots, heartbeat_formula="1.0", **hadoop)
    model = HadoopModel(rng=3, check=True, hadoop=cfg, scheduler=scheduler or FifoScheduler(), speculation=speculation)
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
