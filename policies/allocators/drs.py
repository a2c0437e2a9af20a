"""DRS-style demand-based allocation of a resource pool (reference/algorithms.md section 1).

Every `period_s` the pool is divided among its VMs:
  1. demand: CPU from recent consumption (the larger of the mean used MHz over the last `short_window_s` and
     over the last `window_s`: DRS reads the 1- and 5-minute averages, 10.5; optionally plus ready/steal time,
     optionally smoothed); memory from the sampled active fraction plus the idle-memory-tax share of idle
     consumed memory (section 1.4: active + 25 % of idle). Consumed memory is what the guest holds, page cache
     included, and a sampled page is active if the guest touched it in the sample period: its heap or a page-cache
     page it read or wrote (vcloud/memory.py), so a ballooned VM's estimate is capped by what it holds;
  2. D' = min(max(D, R), L) per VM (section 1.2 step 1);
  3. water-filling over shares, floor R and ceiling D' (section 1.2 step 3);
  4. what is left is spread in proportion to shares, each VM up to its limit (its configured size).
The VMware facts behind the defaults: DRS runs every 5 minutes before vSphere 7 (section 1.5);
vCenter's real-time samples are 20 s (1.3); memory is sampled with 100 pages per 60 s period (1.4);
the idle memory tax is 75 % (1.4). "Demand is calculated based on the amount of CPU the VM is
currently consuming" (1.3, and FlexSlot section 2.3), so ready time does not count by default: that
is the semantic gap the FlexSlot paper is about. Fast/slow EWMA weights of the memory estimate are not
published ([RECALL] in 1.4); 0.5 and 0.1 are our choice.

`enforce`: "host-pool" (the default, as vSphere 5.1 enforces a cluster pool; algorithms.md 10.5,
vcloud/hostpool.py): each host gets a host-local copy of the pool whose CPU and memory limit are what the pool's
VMs on it were entitled to, and whose reservation is what the pool's reservation gave them (with
`reserve_pool` the pool's capacity is also its reservation; off by default: a pool of the hosts' whole capacity
could not be admitted with all of it reserved beside other tenants' VMs); inside a host pool VMs share by shares.
The per-VM alternatives: with "shares" entitlements weight the hosts' sharing and idle cycles flow to busy
neighbours; with "limit" each VM's entitlement is also its CPU cap. Under both, a VM's memory entitlement is its
memory target (vcloud/memory.py).

`divvy`: how the pool's reservation reaches the VMs (algorithms.md 1.2, vSphere 6.7's "…GUID-FDE7EB93…" page):
"pre-6.7" (vSphere 5.1) divvies it only up to each VM's demand (the first pass), "6.7" adds the second pass, the
excess by shares up to each VM's configured size. The pool's limit is divvied with the spare in both. It only
matters with `reserve_pool` and where a host pool meets VMs outside the pool (another tenant) on its host.

Two assumptions, off by default, that no vSphere document states (FlexSlot's missing feedback: the documented
divvy does not amplify a VM's shortfall, docs/results-flexslot.md). They act on CPU only; memory keeps the
documented divvy.
- `cpu_spare_by="demand"`: step 4 hands the spare out in proportion to each VM's measured demand, not its shares
  (a multiplicative rule: a VM keeps its share of what the pool consumed, so a VM that used less stays smaller,
  where shares hand every VM an equal part of the idle capacity back each period).
- `cpu_spare_pass=false`: no step 4, each VM is entitled to its demand-capped share only. With `enforce="limit"`
  that is "entitlements pushed down as per-VM limits with no spare pass": a VM is capped at what it used in the
  window, so a VM that waited on I/O cannot grow until its use does, which under its cap it cannot.
"""

from __future__ import annotations

from collections import deque
from typing import Literal

import numpy as np
from pydantic import BaseModel, ConfigDict, Field, model_validator

from vcloud.allocator import CloudAllocator, CloudView, Entitlements
from vcloud.waterfill import divvy, waterfill


class DrsSettings(BaseModel):
    model_config = ConfigDict(extra="forbid")
    period_s: float = Field(300.0, ge=1, le=86400, description="how often the pool is re-divided")
    sample_s: float = Field(20.0, ge=1, le=86400, description="how often consumption is sampled")
    window_s: float = Field(300.0, gt=0, le=86400, description="CPU demand = mean consumption over this window")
    smoothing: float = Field(0.0, ge=0, lt=1, description="weight of the previous CPU estimate (EWMA)")
    short_window_s: float = Field(
        60.0, ge=0, le=86400, description="CPU demand is the larger of this average and window_s's (0: window_s only)"
    )
    count_ready: bool = Field(False, description="add ready (steal) time to CPU demand")
    mem_sample_period_s: float = Field(60.0, ge=1, le=86400, description="Mem.SamplePeriod: active-memory sampling")
    mem_sample_pages: int = Field(100, ge=1, le=1_000_000, description="pages sampled per VM each period")
    idle_tax: float = Field(0.75, ge=0, lt=1, description="Mem.IdleTax: idle pages cost 1 / (1 - tax) active ones")
    mem_fast_alpha: float = Field(0.5, gt=0, le=1, description="weight of a new sample in the fast active estimate")
    mem_slow_alpha: float = Field(0.1, gt=0, le=1, description="weight of a new sample in the slow active estimate")
    enforce: Literal["host-pool", "shares", "limit"] = Field(
        "host-pool", description="host-local pools (vSphere 5.1), or per VM: entitlement as host share, or as CPU cap"
    )
    reserve_pool: bool = Field(
        False, description="the pool's capacity is also its reservation (host pools then have reservations)"
    )
    divvy: Literal["pre-6.7", "6.7"] = Field(
        "pre-6.7", description="the pool's reservation divvied up to demand only (5.1), or also by a second pass"
    )
    cpu_spare_by: Literal["shares", "demand"] = Field(
        "shares",
        description="the CPU pool's spare (beyond the demand-capped pass) by shares, as documented, or 'demand': in "
        "proportion to each VM's measured demand (assumption: no vSphere document states this)",
    )
    cpu_spare_pass: bool = Field(
        True,
        description="false: no spare pass for CPU, each VM entitled to its demand-capped share only, so with "
        "enforce=limit capped at what it used (assumption: no vSphere document states this)",
    )

    @model_validator(mode="after")
    def _windows_hold_samples(self) -> DrsSettings:
        """A demand window shorter than the sampling interval holds one sample at most: no average at all."""
        for name in ("window_s", "short_window_s"):
            value = getattr(self, name)
            if (value or name == "window_s") and value < self.sample_s:
                raise ValueError(f"drs.{name}={value:g} is shorter than drs.sample_s={self.sample_s:g}")
        return self


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
        self._cache_touched: np.ndarray | None = None  # the VMs' cumulative page-cache MB touched at the last sample
        self.last_cpu_demand: np.ndarray | None = None
        self.last_mem_demand: np.ndarray | None = None
        self.last_cpu_entitlement: np.ndarray | None = None
        self.last_mem_entitlement: np.ndarray | None = None

    # ---- measurement ----------------------------------------------------------------------------
    def observe(self, view: CloudView, now: float) -> None:
        pool = view.vm("in_pool")
        consumed = view.vm("cpu_used_mhz_s")[pool].copy()
        if self.settings.count_ready:
            consumed += view.vm("cpu_ready_mhz_s")[pool]
        if self._history and self._history[-1][0] == now:
            self._history.pop()  # the same instant sampled twice (sample and period coincide)
        self._history.append((now, consumed))
        keep = max(self.settings.window_s, self.settings.short_window_s)
        while len(self._history) > 1 and self._history[1][0] <= now - keep:
            self._history.popleft()
        if now >= self._next_mem_sample and now > self._last_mem_sample:
            self._sample_memory(view, pool)
            self._last_mem_sample = now
            self._next_mem_sample += self.settings.mem_sample_period_s

    def _sample_memory(self, view: CloudView, pool: np.ndarray) -> None:
        """ESX's statistical sampling: n random pages, f = touched / n (Waldspurger 2002, section 5.2). A page is
        touched if it is heap in use or page cache read or written since the last sample (at most what is cached)."""
        consumed = view.vm("mem_held_mb")[pool]
        touched_cache = view.vm("cache_touched_mb")[pool].copy()
        since = touched_cache - (self._cache_touched if self._cache_touched is not None else 0.0)
        self._cache_touched = touched_cache
        cached = np.maximum(consumed - view.vm("mem_touched_mb")[pool], 0.0)
        touched = view.vm("mem_touched_mb")[pool] + np.minimum(since, cached)
        true_active = np.clip(np.divide(touched, consumed, out=np.zeros(len(consumed)), where=consumed > 0), 0.0, 1.0)
        n = self.settings.mem_sample_pages
        f = self.rng.binomial(n, true_active) / n
        a_fast, a_slow = self.settings.mem_fast_alpha, self.settings.mem_slow_alpha
        self._mem_fast = f if self._mem_fast is None else a_fast * f + (1 - a_fast) * self._mem_fast
        self._mem_slow = f if self._mem_slow is None else a_slow * f + (1 - a_slow) * self._mem_slow
        self._mem_current = f

    def cpu_demand(self, view: CloudView, now: float) -> np.ndarray:
        """Mean consumed MHz over the window, or over the short window if larger (VM's full size until there is
        history)."""
        pool = view.vm("in_pool")
        if len(self._history) < 2:
            return view.vm_max_mhz[pool]
        mean = self._mean_since(now - self.settings.window_s)
        if self.settings.short_window_s > 0:
            mean = np.maximum(mean, self._mean_since(now - self.settings.short_window_s))
        if self._cpu_estimate is not None and self.settings.smoothing > 0:
            mean = self.settings.smoothing * self._cpu_estimate + (1 - self.settings.smoothing) * mean
        self._cpu_estimate = mean
        return mean

    def _mean_since(self, start: float) -> np.ndarray:
        """Mean consumed MHz from the first sample at or after `start` (or the oldest kept) to the last."""
        first = next((s for s in self._history if s[0] >= start - 1e-9), self._history[0])
        if first is self._history[-1]:
            first = self._history[-2]
        (t0, c0), (t1, c1) = first, self._history[-1]
        return (c1 - c0) / (t1 - t0)

    def mem_demand(self, view: CloudView) -> np.ndarray:
        """Active memory (max of fast, slow and current estimates) + (1 - tax) x idle consumed memory."""
        pool = view.vm("in_pool")
        if self._mem_current is None:
            return view.vm("mem_mb")[pool].copy()
        consumed = view.vm("mem_held_mb")[pool]
        active = np.maximum.reduce([self._mem_fast, self._mem_slow, self._mem_current]) * consumed
        return active + (1 - self.settings.idle_tax) * (consumed - active)

    # ---- division -------------------------------------------------------------------------------
    def entitlements(self, view: CloudView, now: float) -> Entitlements:
        pool = view.vm("in_pool")
        cpu_demand = self.cpu_demand(view, now)
        mem_demand = self.mem_demand(view)
        self.last_cpu_demand, self.last_mem_demand = cpu_demand, mem_demand
        shares = view.vm("cpu_shares")[pool]
        cpu_first, cpu = divide_pool(
            view.pool_cpu_mhz, cpu_demand, view.vm("cpu_reservation_mhz")[pool],
            np.minimum(view.vm("cpu_limit_cfg_mhz")[pool], view.vm_max_mhz[pool]), shares, both=True,
            spare_weights=spare_weights(self.settings.cpu_spare_by, cpu_demand, shares),
            spare_pass=self.settings.cpu_spare_pass,
        )  # fmt: skip
        mem = divide_pool(
            view.pool_mem_mb, mem_demand, view.vm("mem_reservation_mb")[pool],
            np.minimum(view.vm("mem_limit_cfg_mb")[pool], view.vm("mem_mb")[pool]), view.vm("mem_shares")[pool],
        )  # fmt: skip
        self.last_cpu_entitlement, self.last_mem_entitlement = cpu, mem
        limit = view.vm("cpu_limit_cfg_mhz")[pool]
        if self.settings.enforce == "limit":
            limit = np.minimum(limit, cpu)
        if self.settings.enforce != "host-pool":
            return Entitlements(cpu, limit.copy(), mem)
        host, n_host = view.vm("host")[pool], view.n_hosts
        has_pool = np.bincount(host, minlength=n_host) > 0
        reserved = cpu_first if self.settings.divvy == "pre-6.7" else cpu
        return Entitlements(
            cpu, limit.copy(), mem,
            host_cpu_limit_mhz=np.where(has_pool, np.bincount(host, cpu, minlength=n_host), np.inf),
            host_cpu_reservation_mhz=np.bincount(host, reserved, minlength=n_host) * self.settings.reserve_pool,
            host_mem_limit_mb=np.where(has_pool, np.bincount(host, mem, minlength=n_host), np.inf),
        )  # fmt: skip


def divide_pool(
    capacity: float, demand: np.ndarray, reservation: np.ndarray, limit: np.ndarray, shares: np.ndarray,
    both: bool = False, spare_weights: np.ndarray | None = None, spare_pass: bool = True,
):  # fmt: skip
    """The DRS divvy: demand-capped max-min by shares above reservations, then spare by shares up to limits.
    `both`: return (the first pass, the whole divvy). The two assumptions of `DrsSettings` (no vSphere document
    states either): `spare_weights` hands the spare out by other weights than the shares; `spare_pass=False` hands
    none out (the whole divvy is the first pass)."""
    ceiling = np.minimum(np.maximum(demand, reservation), limit)
    first = divvy(shares, reservation, ceiling, capacity)
    spare = capacity - first.sum()
    total = first
    if spare > 0 and spare_pass:
        weights = shares if spare_weights is None else spare_weights
        total = first + waterfill(np.zeros(len(first), dtype=np.int64), weights, limit - first, np.array([spare]))
    return (first, total) if both else total


# a VM's weight in the spare per MHz of shares beside its demand, under cpu_spare_by="demand": so small that it takes
# spare only once every VM that demanded is at its limit (or none demanded), then by shares; it keeps spare from
# being dropped, not a VM's share of it
_SHARES_EPS = 1e-9


def spare_weights(spare_by: str, demand: np.ndarray, shares: np.ndarray) -> np.ndarray | None:
    """The spare's weights: None (by shares, documented) or, for "demand", each VM's measured demand (an
    assumption: a VM keeps its share of what the pool consumed)."""
    return None if spare_by == "shares" else np.maximum(demand, 0.0) + _SHARES_EPS * shares
