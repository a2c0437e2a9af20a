"""Manual heterogeneous allocation: per-VM CPU and memory given by the scenario (FlexSlot's "Heter.").

FlexSlot section 2.2 scaled up the nodes that ran stragglers in a previous run, in proportion to their
CPU time and I/O wait; the scenario computes such a list and hands it here. The allocator only checks
that it fits the pool and applies it (as a cap too, like resized physical nodes, unless told not to).
"""

from __future__ import annotations

import math

import numpy as np
from pydantic import BaseModel, ConfigDict, Field

from vcloud.allocator import CloudAllocator, CloudView, Entitlements


class HeterogeneousSettings(BaseModel):
    model_config = ConfigDict(extra="forbid")
    cpu_mhz: list[float] = Field(default_factory=list, description="per pool VM, in pool order")
    mem_mb: list[float] = Field(default_factory=list, description="per pool VM; empty = configured memory")
    hard_limit: bool = Field(True, description="a VM's CPU is also its limit (false: idle CPU passed on)")


class HeterogeneousAllocator(CloudAllocator):
    name = "heterogeneous"

    def __init__(self, settings: HeterogeneousSettings) -> None:
        self.settings = settings

    def entitlements(self, view: CloudView, now: float) -> Entitlements:
        pool = view.vm("in_pool")
        n = int(pool.sum())
        cpu = np.asarray(self.settings.cpu_mhz, float)
        mem = np.asarray(self.settings.mem_mb, float) if self.settings.mem_mb else view.vm("mem_mb")[pool].copy()
        for field, values in (("cpu_mhz", cpu), ("mem_mb", mem)):
            if values.shape != (n,):
                raise ValueError(f"heterogeneous.{field}: need {n} values (one per pool VM), got {len(values)}")
            if np.any(values < 0):
                raise ValueError(f"heterogeneous.{field}: values must be >= 0, got {values.min()}")
        if cpu.sum() > view.pool_cpu_mhz * (1 + 1e-9):
            raise ValueError(
                f"heterogeneous.cpu_mhz: total {cpu.sum():.0f} MHz exceeds the pool's {view.pool_cpu_mhz:.0f}"
            )
        limit = cpu if self.settings.hard_limit else np.full(n, math.inf)
        return Entitlements(cpu, limit, mem)
