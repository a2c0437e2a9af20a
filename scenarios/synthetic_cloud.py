"""`synthetic-cloud`: a FlexSlot-sized pool running CPU-bound, I/O-bound and phased guest work.

The testbed of FlexSlot section 4.1: 8 hosts of 2x4 cores at 2.4 GHz (64 GB each) carrying 32 VMs of
4 vCPUs and 4 GB; the pool is 153.6 GHz and 128 GB. Each VM runs `items_per_vm` work loops of one kind
(round robin over `mix`): when an item ends, the next one starts, so the load is steady and the
allocators' differences show in the traces. Optional background tenants share the hosts.

Disk and network speeds are our choice (`TestbedSettings`); the paper does not give them.
"""

from __future__ import annotations

from typing import Any, ClassVar, Literal

import numpy as np
from pydantic import Field

from scenarios import limits as L
from scenarios.base import Scenario, TestbedSettings
from scenarios.summaries import cloud_summary
from vcloud import VM, CloudModel, ConstantLoad, PeriodicLoad, Phase, RandomLoad, WorkItem

WorkKind = Literal["cpu", "io", "phased"]


class SyntheticCloudSettings(TestbedSettings):
    duration_s: float = Field(1800.0, gt=0, le=L.MAX_DURATION_S, description="simulated seconds the run lasts")
    vms_per_host: int = Field(4, ge=1, le=1000, description="VMs in the pool on each host")
    items_per_vm: int = Field(4, ge=0, le=1000, description="work loops per VM, each one item after another")
    mix: list[WorkKind] = Field(
        default_factory=lambda: ["cpu", "io", "phased"], min_length=1, description="the VMs' kinds of work, in turn"
    )
    item_cpu_s: float = Field(60.0, gt=0, le=L.MAX_DURATION_S, description="core-seconds of a CPU-bound item")
    item_io_mb: float = Field(256.0, gt=0, le=L.MAX_MEM_MB, description="MB read by an I/O-bound item")
    item_mem_mb: float = Field(
        200.0, ge=0, le=L.MAX_MEM_MB, description="resident memory of an item (a 200 MB JVM heap)"
    )
    size_sigma: float = Field(0.3, ge=0, le=3, description="log-normal spread of item sizes")
    tenants_per_host: int = Field(0, ge=0, le=100, description="other tenants' VMs on each host, outside the pool")
    tenant_load: Literal["constant", "periodic", "random"] = Field(
        "periodic", description="the tenants' CPU demand over time"
    )
    tenant_cpu: float = Field(0.8, ge=0, le=1, description="tenant CPU level, fraction of its vCPUs")
    length_field: ClassVar[str] = "duration_s"

    def run_length_s(self) -> float | None:
        return self.duration_s

    def vm_count(self) -> int:
        return self.hosts * (self.vms_per_host + self.tenants_per_host)


class SyntheticCloud(Scenario):
    name = "synthetic-cloud"
    description = "FlexSlot-sized pool (8 hosts, 32 VMs) running CPU-bound, I/O-bound and phased work loops"
    Settings = SyntheticCloudSettings

    def build(self, settings: SyntheticCloudSettings, seed: int, check: bool = False) -> CloudModel:
        s = settings
        model = CloudModel(rng=seed, dt=s.dt, **s.cloud_physics(), trace_interval_s=s.trace_interval_s,
                           check=check)  # fmt: skip
        model.allocator = s.make_allocator(model.rng)
        model.set_pool(s.pool_cpu_mhz, s.pool_mem_mb)
        k = 0
        for h in range(s.hosts):
            host = model.add_host(f"host{h:02d}", cores=s.cores_per_host, core_mhz=s.core_mhz, mem_mb=s.host_mem_mb,
                                  disk_mbps=s.disk_mbps, nic_mbps=s.nic_mbps, rack=h // s.hosts_per_rack)  # fmt: skip
            for _ in range(s.vms_per_host):
                vm = model.add_vm(f"vm{k:03d}", host, vcpus=s.vcpus, mem_mb=s.vm_mem_mb)
                vm.work_kind = s.mix[k % len(s.mix)]
                vm.items_done = 0
                k += 1
            for t in range(s.tenants_per_host):
                tenant = model.add_vm(f"tenant{h:02d}-{t}", host, vcpus=s.vcpus, mem_mb=s.vm_mem_mb, in_pool=False)
                model.add_background(tenant, _tenant_profile(s))
        if s.allocator == "heterogeneous" and not s.heterogeneous.cpu_mhz:
            model.allocator.settings = _default_heterogeneous(model, s)
        loops = [WorkLoop(model, vm, s) for vm in model.vm_agents if getattr(vm, "work_kind", None)]
        for loop in loops:
            for _ in range(s.items_per_vm):
                loop.next()
        model.work_loops = loops
        model.settings = s
        return model

    def horizon_s(self, model: CloudModel) -> float:
        return model.settings.duration_s

    def summary(self, model: CloudModel) -> dict[str, Any]:
        return cloud_summary(model)


class WorkLoop:
    """Keeps `items_per_vm` items of one kind running on a VM: a new one starts when one ends."""

    def __init__(self, model: CloudModel, vm: VM, s: SyntheticCloudSettings) -> None:
        self.model, self.vm, self.s = model, vm, s
        self.durations: list[float] = []

    def next(self) -> None:
        s, rng = self.s, self.model.rng
        size = float(rng.lognormal(0.0, s.size_sigma)) if s.size_sigma > 0 else 1.0
        core_s = s.item_cpu_s * size * s.core_mhz
        phases = {
            "cpu": [Phase.cpu("compute", core_s)],
            "io": [Phase.read("read", s.item_io_mb * size), Phase.cpu("parse", 0.05 * core_s, 0.3),
                   Phase.write("write", 0.5 * s.item_io_mb * size)],
            "phased": [Phase.read("read", 0.25 * s.item_io_mb * size), Phase.cpu("compute", 0.5 * core_s),
                       Phase.write("spill", 0.25 * s.item_io_mb * size), Phase.wait("sync", 5.0),
                       Phase.cpu("merge", 0.25 * core_s, 0.2)],
        }[self.vm.work_kind]  # fmt: skip
        item = WorkItem(self.model, phases, mem_mb=s.item_mem_mb, mem_active_fraction=0.8,
                        name=f"{self.vm.work_kind}@{self.vm.name}", on_finish=self.finished)  # fmt: skip
        self.vm.run(item)

    def finished(self, item: WorkItem) -> None:
        self.vm.items_done += 1
        self.durations.append(item.end_s - item.start_s)
        item.remove()
        self.next()


KIND_CPU_WEIGHT = {"cpu": 1.5, "phased": 1.0, "io": 0.5}


def _default_heterogeneous(model: CloudModel, s: SyntheticCloudSettings):
    """Without a given list, size each VM for its work: CPU-bound x1.5, phased x1, I/O-bound x0.5 (pool kept)."""
    weights = np.array([KIND_CPU_WEIGHT[vm.work_kind] for vm in model.vm_agents if getattr(vm, "work_kind", None)])
    cpu_pool, _ = model.pool_capacity()
    return s.heterogeneous.model_copy(update={"cpu_mhz": list(cpu_pool * weights / weights.sum())})


def _tenant_profile(s: SyntheticCloudSettings):
    if s.tenant_load == "constant":
        return ConstantLoad(cpu=s.tenant_cpu, disk_mbps=10.0)
    if s.tenant_load == "periodic":
        return PeriodicLoad(period_s=600.0, duty=0.5, high=s.tenant_cpu, low=0.1 * s.tenant_cpu, disk_mbps_high=20.0)
    return RandomLoad(interval_s=60.0, low=0.0, high=s.tenant_cpu, disk_mbps_max=20.0)
