"""DRS-style demand-based allocation of a resource pool (reference/algorithms.md section 1).

Every `period_s` the pool is divided among its VMs:
  1. demand: CPU from recent consumption (the mean used MHz over the last `window_s`, optionally
     plus ready/steal time, optionally smoothed); memory from the sampled active fraction plus the
     idle-memory-tax share of idle consumed memory (section 1.4: active + 25 % of idle);
  2. D' = min(max(D, R), L) per VM (section 1.2 step 1);
  3. water-filling over shares, floor R and ceiling D' (section 1.2 step 3);
  4. what is left is spread in proportion to shares, each VM up to its limit (its configured size).
The VMware facts behind the defaults: DRS runs every 5 minutes before vSphere 7 (section 1.5);
vCenter's real-time samples are 20 s (1.3); memory is sampled with 100 pages per 60 s period (1.4);
the idle memory tax is 75 % (1.4). "Demand is calculated based on the amount of CPU the VM is
currently consuming" (1.3, and FlexSlot section 2.3), so ready time does not count by default: that
is the semantic gap the FlexSlot paper is about. Fast/slow EWMA weights of the memory estimate are not
published ([RECALL] in 1.4); 0.5 and 0.1 are our choice.

`enforce`: with "shares" (the default, as ESX's local scheduler does) entitlements weight the hosts'
sharing and idle cycles flow to busy neighbours, so a VM can show more demand than it was entitled to.
With "limit" each VM's entitlement is also its cap (a pool limit divided among its VMs): what a VM did
not get it cannot use, and since demand is measured from consumption, DRS never sees it; the spare,
handed out by shares, then pulls entitlements back together.
"""

from __future__ import annotations

from collections import deque
from typing import Literal

import numpy as np
from pydantic import BaseModel, ConfigDict, Field

from vcloud.allocator import CloudAllocator, CloudView, Entitlements
from vcloud.waterfill import divvy, waterfill


class DrsSettings(BaseModel):
    model_config = ConfigDict(extra="forbid")
    period_s: float = Field(300.0, ge=1, le=86400, description="how often the pool is re-divided")
    sample_s: float = Field(20.0, ge=1, le=86400, description="how often consumption is sampled")
    window_s: float = Field(300.0, gt=0, le=86400, description="CPU demand = mean consumption over this window")
    smoothing: float = Field(0.0, ge=0, lt=1, description="weight of the previous CPU estimate (EWMA)")
    count_ready: bool = Field(False, description="add ready (steal) time to CPU demand")
    mem_sample_period_s: float = Field(60.0, ge=1, le=86400)
    mem_sample_pages: int = Field(100, ge=1, le=1_000_000)
    idle_tax: float = Field(0.75, ge=0, lt=1)
    mem_fast_alpha: float = Field(0.5, gt=0, le=1)
    mem_slow_alpha: float = Field(0.1, gt=0, le=1)
    enforce: Literal["shares", "limit"] = Field(
        "shares", description="entitlement only as the VM's host share, or also as its CPU cap (a divvied pool limit)"
    )


class DrsAllocator(CloudAllocator):
    name = "drs"

    def __init__(self, settings: DrsSettings | None = None, rng: np.random.Generator | None = None) -> None:
        self.settings = s = settings or DrsSettings()
        self.period_s, self.sample_s = s.period_s, s.sample_s
        self.rng = rng if rng is not None else np.random.default_rng(0)
        self._history: deque[tuple[float, np.ndarray]] = deque()
        self._cpu_estimate: np.ndarray | None = None
        self._mem_fast: np.ndarray | None = None
        self._mem_slow: np.ndarray | None = None
        self._mem_current: np.ndarray | None = None
        self._next_mem_sample = s.mem_sample_period_s
        self._last_mem_sample = -1.0
        self.last_cpu_demand: np.ndarray | None = None
        self.last_mem_demand: np.ndarray | None = None

    # ---- measurement ----------------------------------------------------------------------------
    def observe(self, view: CloudView, now: float) -> None:
        pool = view.vm("in_pool")
        consumed = view.vm("cpu_used_mhz_s")[pool].copy()
        if self.settings.count_ready:
            consumed += view.vm("cpu_ready_mhz_s")[pool]
        if self._history and self._history[-1][0] == now:
            self._history.pop()  # the same instant sampled twice (sample and period coincide)
        self._history.append((now, consumed))
        while len(self._history) > 1 and self._history[1][0] <= now - self.settings.window_s:
            self._history.popleft()
        if now >= self._next_mem_sample and now > self._last_mem_sample:
            self._sample_memory(view, pool)
            self._last_mem_sample = now
            self._next_mem_sample += self.settings.mem_sample_period_s

    def _sample_memory(self, view: CloudView, pool: np.ndarray) -> None:
        """ESX's statistical sampling: n random pages, f = touched / n (Waldspurger 2002, section 5.2)."""
        consumed = np.minimum(view.vm("mem_used_mb")[pool], view.vm("mem_granted_mb")[pool])
        true_active = np.clip(np.divide(view.vm("mem_active_mb")[pool], consumed, out=np.zeros(len(consumed)),
                                        where=consumed > 0), 0.0, 1.0)  # fmt: skip
        n = self.settings.mem_sample_pages
        f = self.rng.binomial(n, true_active) / n
        a_fast, a_slow = self.settings.mem_fast_alpha, self.settings.mem_slow_alpha
        self._mem_fast = f if self._mem_fast is None else a_fast * f + (1 - a_fast) * self._mem_fast
        self._mem_slow = f if self._mem_slow is None else a_slow * f + (1 - a_slow) * self._mem_slow
        self._mem_current = f

    def cpu_demand(self, view: CloudView, now: float) -> np.ndarray:
        """Mean consumed MHz over the window (VM's full size until there is history)."""
        pool = view.vm("in_pool")
        if len(self._history) < 2:
            return view.vm_max_mhz[pool]
        (t0, c0), (t1, c1) = self._history[0], self._history[-1]
        mean = (c1 - c0) / (t1 - t0)
        if self._cpu_estimate is not None and self.settings.smoothing > 0:
            mean = self.settings.smoothing * self._cpu_estimate + (1 - self.settings.smoothing) * mean
        self._cpu_estimate = mean
        return mean

    def mem_demand(self, view: CloudView) -> np.ndarray:
        """Active memory (max of fast, slow and current estimates) + (1 - tax) x idle consumed memory."""
        pool = view.vm("in_pool")
        if self._mem_current is None:
            return view.vm("mem_mb")[pool].copy()
        consumed = np.minimum(view.vm("mem_used_mb")[pool], view.vm("mem_granted_mb")[pool])
        active = np.maximum.reduce([self._mem_fast, self._mem_slow, self._mem_current]) * consumed
        return active + (1 - self.settings.idle_tax) * (consumed - active)

    # ---- division -------------------------------------------------------------------------------
    def entitlements(self, view: CloudView, now: float) -> Entitlements:
        pool = view.vm("in_pool")
        cpu_demand = self.cpu_demand(view, now)
        mem_demand = self.mem_demand(view)
        self.last_cpu_demand, self.last_mem_demand = cpu_demand, mem_demand
        cpu = divide_pool(
            view.pool_cpu_mhz, cpu_demand, view.vm("cpu_reservation_mhz")[pool],
            np.minimum(view.vm("cpu_limit_cfg_mhz")[pool], view.vm_max_mhz[pool]), view.vm("cpu_shares")[pool],
        )  # fmt: skip
        mem = divide_pool(
            view.pool_mem_mb, mem_demand, view.vm("mem_reservation_mb")[pool],
            np.minimum(view.vm("mem_limit_cfg_mb")[pool], view.vm("mem_mb")[pool]), view.vm("mem_shares")[pool],
        )  # fmt: skip
        limit = view.vm("cpu_limit_cfg_mhz")[pool]
        if self.settings.enforce == "limit":
            limit = np.minimum(limit, cpu)
        return Entitlements(cpu, limit.copy(), mem)


def divide_pool(
    capacity: float, demand: np.ndarray, reservation: np.ndarray, limit: np.ndarray, shares: np.ndarray
) -> np.ndarray:
    """The DRS divvy: demand-capped max-min by shares above reservations, then spare by shares up to limits."""
    ceiling = np.minimum(np.maximum(demand, reservation), limit)
    first = divvy(shares, reservation, ceiling, capacity)
    spare = capacity - first.sum()
    if spare <= 0:
        return first
    extra = waterfill(np.zeros(len(first), dtype=np.int64), shares, limit - first, np.array([spare]))
    return first + extra
