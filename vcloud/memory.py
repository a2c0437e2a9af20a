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

import math
from dataclasses import dataclass

import numpy as np

# vSphere 5.1 Resource Management guide, "Sample Overhead Memory on Virtual Machines" (MB)
OVERHEAD_MEM_MB = (256.0, 1024.0, 4096.0, 16384.0)
OVERHEAD_VCPUS = (1.0, 2.0, 4.0, 8.0)
OVERHEAD_TABLE_MB = (
    (20.29, 24.28, 32.23, 48.16),
    (25.90, 29.91, 37.86, 53.82),
    (48.64, 52.72, 60.67, 76.78),
    (139.62, 143.98, 151.93, 168.60),
)


@dataclass(frozen=True)
class MemorySettings:
    """The hypervisor's memory management (see the module docstring). `reclaim=False`: the VM's granted memory is
    its guest memory at once, without balloon or hypervisor swap, and active memory is the heaps' (the arithmetic
    before this module)."""

    reclaim: bool = True
    overhead: bool = True  # per-VM overhead memory, paid from the pool
    balloon_inflate_mb_s: float = 8.0  # VMW_BALLOON_RATE_ALLOC_MAX: 2048 pages of 4 KB a second
    balloon_free_mb_s: float = 64.0  # VMW_BALLOON_NOSLEEP_ALLOC_MAX: 16384 pages a second, of free guest memory
    balloon_deflate_mb_s: float = 64.0  # VMW_BALLOON_RATE_FREE_MAX: 16384 pages a second
    balloon_max_fraction: float = 0.65  # Mem.CtlMaxPercent
    idle_tax: float = 0.75  # Mem.IdleTax

    def __post_init__(self) -> None:
        for name in ("balloon_inflate_mb_s", "balloon_free_mb_s", "balloon_deflate_mb_s"):
            value = getattr(self, name)
            if not (value > 0 and math.isfinite(value)):
                raise ValueError(f"memory {name} must be a positive number, got {value}")
        if not 0.0 <= self.balloon_max_fraction <= 1.0:
            raise ValueError(f"memory balloon_max_fraction must be in 0..1, got {self.balloon_max_fraction}")
        if not 0.0 <= self.idle_tax < 1.0:
            raise ValueError(f"memory idle_tax must be in 0..1 (1 excluded), got {self.idle_tax}")


def overhead_mb(mem_mb: float, vcpus: int) -> float:
    """The VM's overhead memory from vSphere 5.1's sample table, interpolated linearly in MB and vCPUs."""
    table = np.asarray(OVERHEAD_TABLE_MB)
    by_vcpus = [float(np.interp(vcpus, OVERHEAD_VCPUS, row)) for row in table]
    return float(np.interp(mem_mb, OVERHEAD_MEM_MB, by_vcpus))


def rates(settings: MemorySettings) -> tuple[float, float, float, float, float]:
    """The balloon's rates and cap and the idle tax, in the order vcloud/kernels.py `memory_stage` takes them."""
    return (settings.balloon_inflate_mb_s, settings.balloon_free_mb_s, settings.balloon_deflate_mb_s,
            settings.balloon_max_fraction, settings.idle_tax)  # fmt: skip


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
