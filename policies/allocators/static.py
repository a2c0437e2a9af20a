"""Static allocation: every pool VM gets a fixed slice of the pool (FlexSlot's "Homo." cluster, section 2.2).

Slices are in proportion to the VMs' configured CPU and memory shares (equal for identical VMs:
153.6 GHz / 32 = 4.8 GHz and 4 GB each on the FlexSlot testbed). With `hard_limit` the slice is also a
cap, as on a physical node of that size; without it, idle cycles on a host flow to busy neighbours.
"""

from __future__ import annotations

import math

import numpy as np
from pydantic import BaseModel, ConfigDict, Field

from vcloud.allocator import CloudAllocator, CloudView, Entitlements


class StaticSettings(BaseModel):
    model_config = ConfigDict(extra="forbid")
    hard_limit: bool = Field(True, description="a VM's share is also its limit (false: idle CPU passed on)")


class StaticAllocator(CloudAllocator):
    name = "static"

    def __init__(self, settings: StaticSettings | None = None) -> None:
        self.settings = settings or StaticSettings()

    def entitlements(self, view: CloudView, now: float) -> Entitlements:
        pool = view.vm("in_pool")
        cpu_shares, mem_shares = view.vm("cpu_shares")[pool], view.vm("mem_shares")[pool]
        cpu = view.pool_cpu_mhz * cpu_shares / cpu_shares.sum()
        mem = np.minimum(view.pool_mem_mb * mem_shares / mem_shares.sum(), view.vm("mem_mb")[pool])
        limit = cpu if self.settings.hard_limit else np.full(len(cpu), math.inf)
        return Entitlements(cpu, limit, mem)
