"""Summaries that several scenarios share (the cloud's figures of any run): below the scenarios that use them."""

from __future__ import annotations

from typing import Any

import numpy as np

from vcloud import CloudModel
from vcloud.persistence import entitlement_persistence


def cloud_summary(model: CloudModel) -> dict[str, Any]:
    """Pool-level and per-VM shares of vCPU time, throughput of the work loops."""
    vms = model.vms
    pool = model.pool_rows
    vcpu_s = vms.view("vcpus")[pool] * model.ticks * model.dt
    parts = ("usr_s", "sys_s", "steal_s", "iowait_s", "idle_s")
    shares = {p.removesuffix("_s") + "_fraction": float(vms.view(p)[pool].sum() / vcpu_s.sum()) for p in parts}
    cpu_cap, _ = model.pool_capacity()
    per_vm = []
    for vm in model.vm_agents:
        row = vm.row
        total = vm.vcpus * model.ticks * model.dt
        per_vm.append({"vm": vm.name, "host": vm.host.name, "kind": getattr(vm, "work_kind", "tenant"),
                       "items_done": getattr(vm, "items_done", 0),
                       **{p: round(float(vms.view(p)[row]) / total, 6) for p in parts},
                       "cpu_entitlement_mhz": round(float(vms.cpu_entitlement_mhz[row]), 3)})  # fmt: skip
    by_kind: dict[str, list[float]] = {}
    for loop in getattr(model, "work_loops", []):
        by_kind.setdefault(loop.vm.work_kind, []).extend(loop.durations)
    return {
        "simulated_s": model.ticks * model.dt,
        "allocator": model.allocator.name if model.allocator else None,
        "pool_cpu_utilization": float(vms.view("cpu_used_mhz_s")[pool].sum() / (cpu_cap * model.ticks * model.dt)),
        **shares,
        "max_vm_steal_fraction": float(np.max(vms.view("steal_s")[pool] / vcpu_s)),
        "items_done": {k: len(v) for k, v in sorted(by_kind.items())},
        "mean_item_s": {k: float(np.mean(v)) if v else None for k, v in sorted(by_kind.items())},
        "swap_io_mb": float(vms.view("swap_io_mb").sum()),
        "entitlement_persistence": entitlement_persistence(model.allocations),
        "vms": per_vm,
    }
