"""One tick of the cloud, vectorized over all VMs and work items (DESIGN.md section 3, steps 2-4).

Order inside the tick:
  memory   guest memory in use vs granted -> swapped MB, a page-in stream and a stall fraction;
  demand   every runnable thread wants one core; the VM's demand is capped by its vCPUs;
  CPU      each host's cores go to its VMs by entitlement (weighted max-min, capped by min(demand,
           limit)); each VM's grant goes to its threads (CFS: equal per thread, capped by want);
  I/O      each host's datastore bandwidth goes to its outstanding streams (equal per stream,
           swap streams included), NIC bandwidth likewise;
  progress items advance; a phase that ends inside the tick ends at its interpolated time;
  account  per VM and per item: usr, sys, steal, iowait, idle with
           usr + sys + steal + iowait + idle = vCPUs x dt.

Steal is runnable vCPU time the hypervisor did not deliver (capped by the VM's vCPUs: threads beyond
that wait in the guest run queue, which is not steal). Iowait is idle vCPU time while a thread of the
VM is blocked on I/O, at most one vCPU per blocked thread, as Linux counts it.
`reference.py` computes exactly the same with plain loops; tests hold the two to 1e-9.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from vcloud.tables import HostTable, ItemTable, VMTable, is_kind
from vcloud.waterfill import waterfill
from vcloud.work import Kind

ENTITLEMENT_FLOOR_MHZ = 1e-6  # a VM with zero entitlement still takes idle cycles (work conserving)


@dataclass(frozen=True)
class Physics:
    """Constants of the cloud physics that are not per-host or per-VM configuration."""

    swap_touch_rate: float = 0.2  # fraction of swapped-out MB touched (paged in) per second

    def __post_init__(self) -> None:
        if not self.swap_touch_rate >= 0:
            raise ValueError(f"swap_touch_rate must be >= 0, got {self.swap_touch_rate}")


@dataclass
class TickResult:
    """Items whose phase ended in this tick, and when (seconds after the tick's start)."""

    done_rows: np.ndarray
    done_offset_s: np.ndarray


def memory_state(vms: VMTable, items: ItemTable) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Used MB, active MB and swapped-out MB per VM."""
    n_vm = vms.n
    vm = items.view("vm")
    used = vms.view("os_mem_mb") + np.bincount(vm, items.view("mem_mb"), minlength=n_vm)
    active = vms.view("os_mem_mb") * vms.view("os_active_fraction") + np.bincount(
        vm, items.view("mem_active_mb"), minlength=n_vm
    )
    swapped = np.maximum(used - vms.view("mem_granted_mb"), 0.0)
    return used, active, swapped


def step(hosts: HostTable, vms: VMTable, items: ItemTable, dt: float, physics: Physics) -> TickResult:
    n_vm = vms.n
    vm = items.view("vm")
    kind = items.view("kind")
    remaining = items.view("remaining")
    vm_host = vms.view("host")
    vcpus = vms.view("vcpus").astype(float)
    core_mhz_vm = hosts.view("core_mhz")[vm_host]
    core_mhz = core_mhz_vm[vm]

    # memory: what does not fit in the grant is swapped; page-ins stall the VM's threads
    used, active, swapped = memory_state(vms, items)
    stall_vm = np.divide(swapped, used, out=np.zeros(n_vm), where=used > 0)
    stall = stall_vm[vm]

    # demand
    is_cpu = kind == Kind.CPU
    is_load = kind == Kind.LOAD
    threads = items.view("threads")
    want_cpu = np.where(is_cpu, threads * core_mhz, 0.0)
    want_cpu = np.where(is_load, items.view("load_cpu_mhz"), want_cpu) * (1.0 - stall)
    vm_demand = np.minimum(np.bincount(vm, want_cpu, minlength=n_vm), vcpus * core_mhz_vm)

    # CPU delivery: host -> VM by entitlement, VM -> thread equally
    vm_cap = np.minimum(vm_demand, vms.view("cpu_limit_mhz"))
    host_mhz = hosts.view("cores") * hosts.view("core_mhz")
    weight_vm = vms.view("cpu_entitlement_mhz") + ENTITLEMENT_FLOOR_MHZ
    vm_got = waterfill(vm_host, weight_vm, vm_cap, host_mhz)
    cpu_weight = np.where(is_load, want_cpu / core_mhz, threads)
    got_cpu = waterfill(vm, cpu_weight, want_cpu, vm_got)

    # disk and network: equal share per outstanding stream on the host's datastore / NIC
    item_host = vm_host[vm]
    io_max = items.view("io_mbps_max")
    is_disk = is_kind(kind, Kind.DISK_READ, Kind.DISK_WRITE)
    want_disk = np.where(is_disk, io_max, 0.0)
    want_disk = np.where(is_load, items.view("load_disk_mbps"), want_disk)
    swap_want = swapped * physics.swap_touch_rate
    disk_bw = hosts.view("disk_mbps")
    streams_host = np.concatenate([item_host, vm_host])
    streams_want = np.minimum(np.concatenate([want_disk, swap_want]), disk_bw[streams_host])
    streams_got = waterfill(streams_host, (streams_want > 0).astype(float), streams_want, disk_bw)
    got_disk, swap_got = streams_got[: items.n], streams_got[items.n :]
    is_net = kind == Kind.NET
    nic_bw = hosts.view("nic_mbps")
    want_net = np.minimum(np.where(is_net, io_max, 0.0), nic_bw[item_host])
    got_net = waterfill(item_host, is_net.astype(float), want_net, nic_bw)

    # progress: a phase that ends inside the tick ends at its interpolated time
    rate = np.select([is_cpu, is_disk, is_net, kind == Kind.WAIT], [got_cpu, got_disk, got_net, 1.0], 0.0)
    finite = ~is_load
    possible = rate * dt
    done = finite & (possible >= remaining)
    frac = np.where(done, np.divide(remaining, possible, out=np.ones(items.n), where=possible > 0), 1.0)
    progress = np.where(done, remaining, possible)
    remaining -= np.where(finite, progress, 0.0)
    remaining[done] = 0.0

    # what each item was charged
    cpu_mc = np.where(is_cpu, progress, 0.0) + np.where(is_load, got_cpu * dt, 0.0)
    cpu_s = cpu_mc / core_mhz
    runnable_s = frac * dt * want_cpu / core_mhz
    io_active = is_disk | is_net | (is_load & (want_disk > 0))
    blocked_s = frac * dt * (io_active + stall * is_cpu * threads)
    io_mb = np.where(is_disk, progress, 0.0) + np.where(is_net, progress, 0.0) + np.where(is_load, got_disk * dt, 0.0)

    # guest accounting per VM: the /proc/stat identity by construction
    vm_cpu_s = np.bincount(vm, cpu_s, minlength=n_vm)
    vm_runnable = np.minimum(np.bincount(vm, runnable_s, minlength=n_vm), vcpus * dt)
    vm_steal = np.maximum(vm_runnable - vm_cpu_s, 0.0)
    vm_idle_all = vcpus * dt - vm_runnable
    vm_blocked = np.bincount(vm, blocked_s, minlength=n_vm)
    vm_iowait = np.minimum(vm_idle_all, vm_blocked)
    vm_idle = vm_idle_all - vm_iowait
    sys_fraction = items.view("sys_fraction")
    vm_sys = np.bincount(vm, cpu_s * sys_fraction, minlength=n_vm)

    # attribution to items, in proportion to what each contributed
    waiting = runnable_s - cpu_s
    vm_waiting = np.bincount(vm, waiting, minlength=n_vm)
    steal_share = np.divide(vm_steal, vm_waiting, out=np.zeros(n_vm), where=vm_waiting > 0)
    iowait_share = np.divide(vm_iowait, vm_blocked, out=np.zeros(n_vm), where=vm_blocked > 0)
    items.view("usr_s")[:] += cpu_s * (1.0 - sys_fraction)
    items.view("sys_s")[:] += cpu_s * sys_fraction
    items.view("steal_s")[:] += waiting * steal_share[vm]
    items.view("iowait_s")[:] += blocked_s * iowait_share[vm]
    items.view("io_mb")[:] += io_mb

    # VM state of this tick and cumulative counters
    vm_used_mhz = np.bincount(vm, cpu_mc, minlength=n_vm) / dt
    vm_disk = np.bincount(vm, np.where(is_disk | is_load, io_mb, 0.0), minlength=n_vm) + swap_got * dt
    vm_net = np.bincount(vm, np.where(is_net, io_mb, 0.0), minlength=n_vm)
    vms.view("cpu_demand_mhz")[:] = vm_demand
    vms.view("cpu_used_mhz")[:] = vm_used_mhz
    vms.view("mem_used_mb")[:] = used
    vms.view("mem_active_mb")[:] = active
    vms.view("swap_mb")[:] = swapped
    vms.view("disk_mbps")[:] = vm_disk / dt
    vms.view("net_mbps")[:] = vm_net / dt
    vms.view("usr_s")[:] += vm_cpu_s - vm_sys
    vms.view("sys_s")[:] += vm_sys
    vms.view("steal_s")[:] += vm_steal
    vms.view("iowait_s")[:] += vm_iowait
    vms.view("idle_s")[:] += vm_idle
    vms.view("cpu_used_mhz_s")[:] += vm_used_mhz * dt
    vms.view("cpu_demand_mhz_s")[:] += vm_demand * dt
    vms.view("cpu_ready_mhz_s")[:] += vm_steal * core_mhz_vm
    vms.view("disk_mb")[:] += vm_disk
    vms.view("net_mb")[:] += vm_net
    vms.view("swap_io_mb")[:] += swap_got * dt

    rows = np.flatnonzero(done)
    return TickResult(rows, frac[rows] * dt)
