"""What every Hadoop scenario shares: a virtual cluster on the FlexSlot-sized pool, its policies, its outputs."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from functools import partial
from typing import Any, ClassVar

import numpy as np
import pandas as pd
from pydantic import Field, create_model, model_validator

from hadoop_layer.config import HadoopConfig
from hadoop_layer.model import HadoopModel
from policies.registry import build, choices
from policies.schedulers import SCHEDULERS
from policies.slots import SLOT_MANAGERS
from policies.speculation import SPECULATION
from scenarios import limits as L
from scenarios.base import TASK_PART_ROWS, Scenario, TestbedSettings, policy_fields
from scenarios.summaries import cloud_summary
from vcloud.persistence import entitlement_persistence

FLEXSLOT_HADOOP = HadoopConfig(
    map_slots=4, reduce_slots=2, child_heap_mb=200.0, io_sort_mb=100.0, block_mb=64.0, heartbeat_formula="1.1"
)


# for scenarios that choose other default policies
SchedulerName, SpeculationName, SlotManagerName = choices(SCHEDULERS), choices(SPECULATION), choices(SLOT_MANAGERS)
_HadoopPolicies = create_model(
    "_HadoopPolicies",
    __base__=TestbedSettings,
    **policy_fields("scheduler", SCHEDULERS, "fifo", "the JobTracker's task scheduler (docs/policies.md)"),
    **policy_fields(
        "speculation", SPECULATION, "hadoop", "which attempts get backups: hadoop (1.x's rule), late, samr"
    ),
    **policy_fields(
        "slot_manager",
        SLOT_MANAGERS,
        "none",
        "who changes slots at run time: skewtune (repartitions stragglers' "
        "input), flexslot (slot memory and counts), flexslot-unlimited",
    ),
)


class HadoopClusterSettings(_HadoopPolicies):
    """The FlexSlot testbed (section 4.1) unless changed: 8 hosts, 32 VMs (JobTracker, NameNode, 30 slaves).
    The policies and their knobs (`scheduler`, `fair.*`, ...) come from the registries (policies/registry.py)."""

    slaves: int = Field(30, ge=1, le=L.MAX_SLAVES, description="slave VMs (a TaskTracker and a DataNode each)")
    daemon_mem_mb: float = Field(
        640.0, ge=0, le=L.MAX_MEM_MB, description="guest OS + TaskTracker + DataNode resident memory"
    )
    hadoop: HadoopConfig = Field(default_factory=lambda: FLEXSLOT_HADOOP.model_copy())
    max_duration_s: float = Field(
        48 * 3600.0, gt=0, le=L.MAX_DURATION_S, description="stop here (exit status 1) if jobs are still running"
    )

    length_field: ClassVar[str] = "max_duration_s"
    renamed: ClassVar[dict[str, str]] = {"flexslot_policy": "flexslot"}

    def run_length_s(self) -> float | None:
        return self.max_duration_s

    def vm_count(self) -> int:
        return self.slaves + 2  # and the JobTracker's and NameNode's

    @model_validator(mode="after")
    def _cluster_can_run_jobs(self) -> HadoopClusterSettings:
        """Refuse clusters on which no job could make progress (they used to run to max_duration_s, exit 0)."""
        if self.hadoop.map_slots < 1:
            raise ValueError("hadoop.map_slots=0: no map task could ever run")
        if self.daemon_mem_mb >= self.vm_mem_mb:
            raise ValueError(f"daemon_mem_mb={self.daemon_mem_mb:g} leaves nothing of vm_mem_mb={self.vm_mem_mb:g}")
        resident = self.vm_count() * self.daemon_mem_mb
        if self.pool_mem_mb is not None and self.pool_mem_mb < resident:
            n, each = self.vm_count(), self.daemon_mem_mb
            raise ValueError(f"pool_mem_mb={self.pool_mem_mb:g} is below the {resident:g} MB that the {n} VMs' "
                             f"guest OS and daemons hold (daemon_mem_mb={each:g} each)")  # fmt: skip
        return self


def build_cluster(s: HadoopClusterSettings, seed: int, check: bool, scheduler=None) -> HadoopModel:
    """Hosts round-robin: VM k on host k mod hosts, so master VMs sit beside slaves, as in a real pool."""
    scheduler = scheduler or build(SCHEDULERS, s.scheduler, s)
    slot_manager = build(SLOT_MANAGERS, s.slot_manager, s)
    model = HadoopModel(
        rng=seed,
        dt=s.dt,
        **s.cloud_physics(),
        trace_interval_s=s.trace_interval_s,
        check=check,
        hadoop=s.hadoop,
        scheduler=scheduler,
        speculation=build(SPECULATION, s.speculation, s),
        slot_manager=slot_manager,
    )
    model.allocator = s.make_allocator(model.rng)
    model.set_pool(s.pool_cpu_mhz, s.pool_mem_mb)
    hosts = [
        model.add_host(
            f"host{h:02d}",
            cores=s.cores_per_host,
            core_mhz=s.core_mhz,
            mem_mb=s.host_mem_mb,
            disk_mbps=s.disk_mbps,
            nic_mbps=s.nic_mbps,
            rack=h // s.hosts_per_rack,
        )
        for h in range(s.hosts)
    ]
    names = ["jobtracker", "namenode"] + [f"slave{i:02d}" for i in range(s.slaves)]
    for k, name in enumerate(names):
        vm = model.add_vm(name, hosts[k % s.hosts], vcpus=s.vcpus, mem_mb=s.vm_mem_mb, os_mem_mb=s.daemon_mem_mb)
        if name.startswith("slave"):
            model.add_slave(vm)
    model.settings = s
    return model


class HadoopScenario(Scenario):
    """A scenario whose model is a `HadoopModel`: runs until its jobs end; writes tasks and jobs tables."""

    stops_itself = True

    def horizon_s(self, model: HadoopModel) -> float:
        return model.settings.max_duration_s

    def unfinished(self, model: HadoopModel) -> str | None:
        """The run reached max_duration_s with jobs still waiting or running (not a result: a run cut short)."""
        if not model.running:
            return None
        jobs = model.jobtracker.jobs
        left = model.jobtracker.expected_jobs - sum(j.state in ("succeeded", "failed") for j in jobs)
        if left <= 0:
            return None
        limit = model.settings.max_duration_s
        return f"max_duration_s={limit:g} reached with {left} of {model.jobtracker.expected_jobs} jobs unfinished"

    def summary(self, model: HadoopModel) -> dict[str, Any]:
        if model.check:
            model.check_hadoop_end()
        cloud = cloud_summary(model)
        cloud.pop("items_done", None), cloud.pop("mean_item_s", None)
        slaves = np.searchsorted(model.pool_rows, [t.vm.row for t in model.trackers])  # the slaves' pool indices
        cloud["entitlement_persistence"] = entitlement_persistence(model.allocations, slaves)
        return {**model.hadoop_summary(), "cloud": cloud}

    def frame_makers(self, model: HadoopModel) -> dict[str, Callable[[], pd.DataFrame]]:
        return {"vm_trace": model.vm_trace, "tasks": model.tasks_frame, "jobs": model.jobs_frame}

    def part_makers(
        self, model: HadoopModel, rows: int | None = None
    ) -> dict[str, Callable[[], Iterable[pd.DataFrame]]]:
        return {**super().part_makers(model, rows), "tasks": partial(model.tasks_parts, rows or TASK_PART_ROWS)}
