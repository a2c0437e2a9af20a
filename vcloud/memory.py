"""ESX memory reclamation: overhead memory, the balloon driver, hypervisor swap and touched (active) memory.

The sources (reference/algorithms.md 1.4 and 10.4):
- Overhead memory. Every VM costs its host memory beyond its configured size (frame buffer, monitor data
  structures): the vSphere 5.1 Resource Management guide, "Understanding Memory Overhead", table "Sample Overhead
  Memory on Virtual Machines" (MB, by configured MB and vCPUs; 60.67 MB for a 4 vCPU / 4 GB VM). `overhead_mb`
  interpolates that table linearly (clamped at its edges). A pool's memory pays for its VMs' overhead (the pool's
  limit covers what its VMs use, overhead included), so the allocators divide what is left of it.
- Target. The hypervisor's target for a VM is the memory it may keep backed: with per-VM enforcement the VM's
  entitlement (a limit), with vSphere's host-local pools the VM's part of its host pool's limit, divided inside
  the host pool by shares with the idle memory tax (Waldspurger, OSDI 2002, section 5: min-funding revocation,
  shares per page rho = S / (P (f + k (1 - f))), k = 1 / (1 - tau), `idle_tax` tau = 0.75 is `Mem.IdleTax`):
  a VM first keeps what it holds, the host pool's spare then goes by the same weights, up to each VM's size.
  A VM above its limit is reclaimed even when the host has free memory (VMware KB 1033115: a limit "treats the
  virtual machine as if the resource is under contention").
- Balloon. The guest's balloon driver (Linux `vmw_balloon`) allocates guest pages and hands them to the
  hypervisor: it grows while the VM holds more than its target and shrinks when it holds less, at the driver's
  rates per one-second cycle: up to 16384 pages of 4 KB while the guest has free pages (non-sleeping allocations,
  `VMW_BALLOON_NOSLEEP_ALLOC_MAX`, 64 MB/s), 2048 once the guest must reclaim for it (sleeping allocations,
  `VMW_BALLOON_RATE_ALLOC_MAX`, 8 MB/s), 16384 deflating (`VMW_BALLOON_RATE_FREE_MAX`, 64 MB/s), and never above
  65 % of the VM's memory (`Mem.CtlMaxPercent`, vSphere Resource Management guide 5.1, "Memory Balloon Driver").
  The guest gives the balloon its memory as it gives any allocation: clean page cache first (the page cache
  holds what the balloon leaves beyond the resident memory), then its anonymous memory, which it swaps itself.
- Hypervisor swap, the last resort: what the VM still holds beyond its target while the balloon catches up is
  swapped by the hypervisor. ESX picks those pages without knowing which the guest uses, so a thread touches
  one in the proportion hypervisor-swapped / held; the guest's own swap hits the resident memory in the
  proportion guest-swapped / resident. Both stall threads and page in from the datastore (vcloud engine's
  `swap_touch_rate`). Memory compression (ESX 4.1+) is not modelled: pages go to swap directly.
- Touched memory. ESX estimates a VM's active memory by sampling its pages (Waldspurger section 5.2; the
  sampler is in the DRS allocator): a page counts if the guest touched it in the sample period. Here that is
  the task heaps' and guest OS's active memory the guest holds, plus the page-cache data read or written in the
  period (at most what is cached). A ballooned VM holds less, so its estimate, and the DRS memory demand built on
  it, is capped by what it is granted.

Where it stops: the host's own memory is assumed large enough for its VMs (the FlexSlot hosts' 64 GB hold four
4 GB VMs), so only limits (per VM or per host pool) reclaim; the balloon ramps at its maximum rate at once (the
driver starts slower and ramps by 16 pages per cycle); transparent page sharing is not modelled.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
from pydantic import BaseModel, ConfigDict, Field

from vcloud.numerics import clip_scalar, kernel, np_max, np_min, record, sum_at, sum_by
from vcloud.waterfill import fill

# vSphere 5.1 Resource Management guide, "Sample Overhead Memory on Virtual Machines" (MB)
OVERHEAD_MEM_MB = (256.0, 1024.0, 4096.0, 16384.0)
OVERHEAD_VCPUS = (1.0, 2.0, 4.0, 8.0)
OVERHEAD_TABLE_MB = (
    (20.29, 24.28, 32.23, 48.16),
    (25.90, 29.91, 37.86, 53.82),
    (48.64, 52.72, 60.67, 76.78),
    (139.62, 143.98, 151.93, 168.60),
)


class MemorySettings(BaseModel):
    """The hypervisor's memory management (see the module docstring): vSphere 5.1's defaults and the Linux balloon
    driver's rates. `reclaim=False`: the VM's granted memory is its guest memory at once, without balloon or hypervisor
    swap, and active memory is the heaps' (the arithmetic before this module)."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    reclaim: bool = Field(
        True, description="balloon, guest and hypervisor swap toward each VM's memory target (off: granted at once)"
    )
    overhead: bool = Field(True, description="per-VM overhead memory (vSphere 5.1 sample table), paid from the pool")
    balloon_inflate_mb_s: float = Field(
        8.0, gt=0, le=100_000, description="VMW_BALLOON_RATE_ALLOC_MAX: 2048 4-KB pages a second"
    )
    balloon_free_mb_s: float = Field(
        64.0, gt=0, le=100_000, description="VMW_BALLOON_NOSLEEP_ALLOC_MAX: 16384 4-KB pages a second of free memory"
    )
    balloon_deflate_mb_s: float = Field(
        64.0, gt=0, le=100_000, description="VMW_BALLOON_RATE_FREE_MAX: 16384 4-KB pages a second"
    )
    balloon_max_fraction: float = Field(0.65, ge=0, le=1, description="Mem.CtlMaxPercent: the balloon's ceiling")
    idle_tax: float = Field(0.75, ge=0, lt=1, description="Mem.IdleTax: idle pages cost 1 / (1 - tax) active ones")


def overhead_mb(mem_mb: float, vcpus: int) -> float:
    """The VM's overhead memory from vSphere 5.1's sample table, interpolated linearly in MB and vCPUs."""
    table = np.asarray(OVERHEAD_TABLE_MB)
    by_vcpus = [float(np.interp(vcpus, OVERHEAD_VCPUS, row)) for row in table]
    return float(np.interp(mem_mb, OVERHEAD_MEM_MB, by_vcpus))


@record
class BalloonRates(NamedTuple):
    """The balloon driver's rates and cap and the idle memory tax (`MemorySettings`), as a kernel reads them."""

    inflate_mb_s: float
    free_mb_s: float
    deflate_mb_s: float
    max_fraction: float
    idle_tax: float


def rates(settings: MemorySettings) -> BalloonRates:
    """The settings' `BalloonRates`, made once per settings object (frozen) rather than once a tick."""
    global _RATES
    if _RATES[0] is not settings:
        _RATES = (settings, BalloonRates(settings.balloon_inflate_mb_s, settings.balloon_free_mb_s,
                                         settings.balloon_deflate_mb_s, settings.balloon_max_fraction,
                                         settings.idle_tax))  # fmt: skip
    return _RATES[1]


_RATES: tuple = (None, None)


@record
class VMMemory(NamedTuple):
    """The VM table's memory configuration, the VMs' rows (each field a column of that name)."""

    os_mem_mb: np.ndarray
    os_active_fraction: np.ndarray
    mem_mb: np.ndarray  # configured
    mem_limit_cfg_mb: np.ndarray
    mem_granted_mb: np.ndarray  # the allocator's entitlement
    mem_shares: np.ndarray
    in_pool: np.ndarray
    host: np.ndarray


@record
class VMMemoryState(NamedTuple):
    """The VM table's memory state the memory stage writes (each field a column of that name)."""

    balloon_mb: np.ndarray
    mem_target_mb: np.ndarray
    hv_swap_mb: np.ndarray
    mem_held_mb: np.ndarray
    mem_touched_mb: np.ndarray


def no_reclaim(st, vms) -> None:
    """The memory stage without reclamation: the granted memory is the guest's at once (the arithmetic before)."""
    n_vm = vms.n
    st.guest_mem = vms.mem_granted_mb[:n_vm].copy()
    st.target = st.guest_mem
    st.balloon, st.hv_swap = np.zeros(n_vm), np.zeros(n_vm)
    st.held = np.minimum(st.used, st.guest_mem)
    st.heap_touched = st.active
    st.stall = np.divide(st.swapped, st.used, out=np.zeros(n_vm), where=st.used > 0)
    write_state(st, vms)


def write_state(st, vms) -> None:
    n_vm = vms.n
    vms.balloon_mb[:n_vm] = st.balloon
    vms.mem_target_mb[:n_vm] = st.target
    vms.hv_swap_mb[:n_vm] = st.hv_swap
    vms.mem_held_mb[:n_vm] = st.held
    vms.mem_touched_mb[:n_vm] = st.heap_touched


@kernel
def reclaim(
    dt: float,
    rates: BalloonRates,
    vms: VMMemory,
    pool_limit: np.ndarray,
    balloon: np.ndarray,
    touched: np.ndarray,
    used: np.ndarray,
    active: np.ndarray,
    cached: np.ndarray,
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """`vcloud.memory.reclaim`'s arithmetic per VM: the target (per VM, or by shares with the idle tax inside a
    host-local pool), the balloon's step, what the guest and the hypervisor swap. Returns target, balloon, guest
    memory, hypervisor swap, held, stall, swapped and touched heap memory."""
    inflate_mb_s, free_mb_s, deflate_mb_s = rates.inflate_mb_s, rates.free_mb_s, rates.deflate_mb_s
    max_fraction, idle_tax = rates.max_fraction, rates.idle_tax
    size, limit_cfg, granted, shares = vms.mem_mb, vms.mem_limit_cfg_mb, vms.mem_granted_mb, vms.mem_shares
    in_pool, vm_host = vms.in_pool, vms.host
    n_vm, n_host = size.size, pool_limit.size
    held_before, top, target = np.empty(n_vm), np.empty(n_vm), np.empty(n_vm)
    for v in range(n_vm):
        held_before[v] = np_min(used[v], size[v] - balloon[v]) + cached[v]
        top[v] = np_min(size[v], limit_cfg[v])
        target[v] = np_min(granted[v], top[v])
    finite = np.empty(n_host, np.bool_)
    any_finite = False
    for h in range(n_host):
        finite[h] = np.isfinite(pool_limit[h])
        any_finite = any_finite or finite[h]
    if any_finite:  # host-local pools: first what each pooled VM holds, then the pool's spare, by taxed shares
        k = 1.0 / (1.0 - idle_tax)
        weight, keep, more = np.empty(n_vm), np.empty(n_vm), np.empty(n_vm)
        pooled = np.empty(n_vm, np.bool_)
        capacity = np.empty(n_host)
        for h in range(n_host):
            capacity[h] = pool_limit[h] if finite[h] else 0.0
        for v in range(n_vm):
            pooled[v] = in_pool[v] and finite[vm_host[v]]
            f = clip_scalar(touched[v] / held_before[v] if held_before[v] > 0 else 1.0, 0.0, 1.0)
            weight[v] = shares[v] / (f + k * (1.0 - f)) * (1.0 if pooled[v] else 0.0)
            keep[v] = np_min(held_before[v], top[v]) if pooled[v] else 0.0
        base = fill(vm_host, weight, keep, capacity, np.zeros(0))
        spare = np.zeros(n_host)
        for v in range(n_vm):
            spare[vm_host[v]] += base[v]
        for h in range(n_host):
            spare[h] = np_max(capacity[h] - spare[h], 0.0)
        for v in range(n_vm):
            more[v] = top[v] - base[v] if pooled[v] else 0.0
        extra = fill(vm_host, weight, more, spare, np.zeros(0))
        for v in range(n_vm):
            if pooled[v]:
                target[v] = base[v] + extra[v]
    new_balloon, guest, hv_swap, held = np.empty(n_vm), np.empty(n_vm), np.empty(n_vm), np.empty(n_vm)
    stall, swapped, heap_touched = np.empty(n_vm), np.empty(n_vm), np.empty(n_vm)
    for v in range(n_vm):
        # the balloon toward balloon + (held - target), within 0 .. max fraction of the VM: inflating it takes the
        # guest's free MB at the non-sleeping rate, then reclaims at the sleeping rate; deflating, the free rate
        free = np_max(size[v] - balloon[v] - used[v] - cached[v], 0.0)
        want = np_min(np_max(balloon[v] + (held_before[v] - target[v]), 0.0), max_fraction * size[v]) - balloon[v]
        quick = np_min(np_min(np_max(want, 0.0), free), free_mb_s * dt)
        slow = np_min(want - quick, inflate_mb_s * (dt - quick / free_mb_s))
        new_balloon[v] = balloon[v] + (quick + slow if want > 0 else np_max(want, -deflate_mb_s * dt))
        guest[v] = size[v] - new_balloon[v]
        guest_swap = np_max(used[v] - guest[v], 0.0)
        resident = used[v] - guest_swap
        held[v] = resident + np_min(cached[v], np_max(guest[v] - used[v], 0.0))
        hv_swap[v] = np_max(held[v] - target[v], 0.0)
        s = guest_swap / used[v] if used[v] > 0 else 0.0
        s += hv_swap[v] / held[v] if held[v] > 0 else 0.0
        stall[v] = np_min(s, 1.0)
        swapped[v] = guest_swap + hv_swap[v]
        heap_touched[v] = np_min(active[v], resident)
    return target, new_balloon, guest, hv_swap, held, stall, swapped, heap_touched


@kernel
def memory_stage(
    dt: float,
    rates: BalloonRates,
    vms: VMMemory,
    state: VMMemoryState,
    pool_limit: np.ndarray,
    item_vm: np.ndarray,
    item_mem: np.ndarray,
    item_active: np.ndarray,
    file_vm: np.ndarray,
    file_cached: np.ndarray,
    resident: np.ndarray,
    count_files: bool,
) -> tuple:
    """`vcloud.engine.stage_memory` with reclamation in one call: each VM's used and active MB (OS + its items' heaps,
    summed in item order), its page cache's MB (if `count_files`: the resident files', in file order; else zeros),
    then `reclaim`, whose balloon, target, hypervisor swap, held and touched MB are written to `state`. Returns used,
    active, cached and `reclaim`'s eight arrays."""
    rates, vms, state = BalloonRates(*rates), VMMemory(*vms), VMMemoryState(*state)  # records come as tuples
    os_mem, os_active, size = vms.os_mem_mb, vms.os_active_fraction, vms.mem_mb
    balloon_mb, target_mb, hv_swap_mb = state.balloon_mb, state.mem_target_mb, state.hv_swap_mb
    held_mb, touched_mb = state.mem_held_mb, state.mem_touched_mb
    n_vm = size.size
    heap, heap_active = sum_by(item_vm, item_mem, n_vm), sum_by(item_vm, item_active, n_vm)
    used, active = np.empty(n_vm), np.empty(n_vm)
    for v in range(n_vm):
        used[v] = os_mem[v] + heap[v]
        active[v] = os_mem[v] * os_active[v] + heap_active[v]
    cached = sum_at(file_vm, file_cached, resident, n_vm) if count_files else np.zeros(n_vm)
    target, balloon, guest, hv_swap, held, stall, swapped, touched = reclaim(
        dt, rates, vms, pool_limit, balloon_mb[:n_vm], touched_mb[:n_vm], used, active, cached
    )
    for v in range(n_vm):
        balloon_mb[v], target_mb[v], hv_swap_mb[v] = balloon[v], target[v], hv_swap[v]
        held_mb[v], touched_mb[v] = held[v], touched[v]
    return used, active, cached, target, balloon, guest, hv_swap, held, stall, swapped, touched
