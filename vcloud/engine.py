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

from vcloud.tables import HostTable, ItemTable, VMTable
from vcloud.waterfill import waterfill
from vcloud.work import Kind

ENTITLEMENT_FLOOR_MHZ = 1e-6  # a VM with zero entitlement still takes idle cycles (work conserving)

# the kinds as plain ints: comparing an int8 column with a plain int is cheaper than with an IntEnum member
_CPU, _DISK_READ, _DISK_WRITE, _NET, _WAIT, _LOAD = (
    int(k) for k in (Kind.CPU, Kind.DISK_READ, Kind.DISK_WRITE, Kind.NET, Kind.WAIT, Kind.LOAD)
)


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
    n_vm, n = vms.n, items.n
    vm = items.vm[:n]
    os_mem = vms.os_mem_mb[:n_vm]
    used = os_mem + np.bincount(vm, items.mem_mb[:n], minlength=n_vm)
    active = os_mem * vms.os_active_fraction[:n_vm] + np.bincount(vm, items.mem_active_mb[:n], minlength=n_vm)
    swapped = np.maximum(used - vms.mem_granted_mb[:n_vm], 0.0)
    return used, active, swapped


def step(hosts: HostTable, vms: VMTable, items: ItemTable, dt: float, physics: Physics) -> TickResult:
    # Speed notes (benchmarks/engine.py). Masks multiply values that are finite (x * True = x and
    # x * False = 0, exactly), which is cheaper than np.where. LOAD items and phase ends are rare: their
    # extra work runs only when present. Per-item arrays are updated in place once their old value is dead
    # (fewer large temporaries, less time in the allocator). None of this changes a bit of the results:
    # each value goes through the same floating-point operations as in the plain form of this function
    # (up to commuting a product or a sum of two terms).
    n_host, n_vm, n = hosts.n, vms.n, items.n
    vm = items.vm[:n]
    kind = items.kind[:n]
    remaining = items.remaining[:n]
    vm_host = vms.host[:n_vm]
    vcpus = vms.vcpus[:n_vm]
    core_mhz_vm = hosts.core_mhz[:n_host][vm_host]
    core_mhz = core_mhz_vm[vm]

    # memory: what does not fit in the grant is swapped; page-ins stall the VM's threads
    used, active, swapped = memory_state(vms, items)
    stall_vm = np.divide(swapped, used, out=np.zeros(n_vm), where=used > 0)

    # demand
    is_cpu = kind == _CPU
    is_load = kind == _LOAD
    has_load = bool(is_load.any())
    cpu_threads = items.threads[:n] * is_cpu
    want_cpu = cpu_threads * core_mhz
    if has_load:
        want_cpu = np.where(is_load, items.load_cpu_mhz[:n], want_cpu)
    want_cpu *= (1.0 - stall_vm)[vm]
    vm_want = np.bincount(vm, want_cpu, minlength=n_vm)
    vm_demand = np.minimum(vm_want, vcpus * core_mhz_vm)

    # CPU delivery: host -> VM by entitlement, VM -> thread equally
    vm_cap = np.minimum(vm_demand, vms.cpu_limit_mhz[:n_vm])
    host_mhz = hosts.cores[:n_host] * hosts.core_mhz[:n_host]
    weight_vm = vms.cpu_entitlement_mhz[:n_vm] + ENTITLEMENT_FLOOR_MHZ
    vm_got = waterfill(vm_host, weight_vm, vm_cap, host_mhz)
    cpu_weight = np.where(is_load, want_cpu / core_mhz, cpu_threads) if has_load else cpu_threads
    got_cpu = waterfill(vm, cpu_weight, want_cpu, vm_got, cap_sum=vm_want)

    # disk and network: equal share per outstanding stream on the host's datastore / NIC. One water-filling
    # for all streams: groups 0..n_host-1 are the datastores, n_host..2*n_host-1 the NICs; the items' streams
    # come first, then one swap stream per VM.
    is_disk = (kind == _DISK_READ) | (kind == _DISK_WRITE)
    is_net = kind == _NET
    is_io = (is_disk | is_net) & (remaining > 0)  # an open phase with nothing left waits without I/O
    disk_bw = hosts.disk_mbps[:n_host]
    io_bw = np.concatenate((disk_bw, hosts.nic_mbps[:n_host]))
    stream_group = np.empty(n + n_vm, dtype=np.int64)
    io_group = stream_group[:n]
    np.add(vm_host[vm], n_host * is_net, out=io_group)
    stream_group[n:] = vm_host
    stream_want = np.empty(n + n_vm)
    want_io = stream_want[:n]
    np.take(io_bw, io_group, out=want_io, mode="clip")  # indices valid by construction; "clip" is not buffered
    np.minimum(items.io_mbps_max[:n], want_io, out=want_io)
    want_io *= is_io
    io_active = is_io
    if has_load:
        load_disk = items.load_disk_mbps[:n]
        np.copyto(want_io, np.minimum(load_disk, io_bw[io_group]), where=is_load)
        io_active = is_io | (is_load & (load_disk > 0))
    np.minimum(swapped * physics.swap_touch_rate, disk_bw[vm_host], out=stream_want[n:])
    got_io = waterfill(stream_group, None, stream_want, io_bw)
    swap_mb = got_io[n:] * dt
    got_io = got_io[:n]

    # progress: a phase that ends inside the tick ends at its interpolated time
    if has_load:
        load_cpu_mc, load_disk_mb = got_cpu * dt, got_io * dt
    progress = got_cpu + got_io  # the rate of each item's phase (other grants are 0)
    progress += kind == _WAIT
    progress *= dt
    done = progress >= remaining
    if has_load:
        done &= ~is_load
    rows = np.flatnonzero(done)  # phases that run out of work in this tick; open ones wait for more
    frac_dt = dt  # the time each item spent in its phase during the tick
    if rows.size:
        possible, left = progress[rows], remaining[rows]
        frac = np.ones(n)
        frac[rows] = np.divide(left, possible, out=np.zeros(rows.size), where=possible > 0)
        frac_dt = frac * dt
        progress[rows] = left
    remaining -= np.where(is_load, 0.0, progress) if has_load else progress
    if rows.size:
        remaining[rows] = 0.0

    # what each item was charged
    cpu_mc = progress * is_cpu
    disk_mb = progress * is_disk
    if has_load:
        np.copyto(cpu_mc, load_cpu_mc, where=is_load)
        np.copyto(disk_mb, load_disk_mb, where=is_load)
    net_mb = progress
    net_mb *= is_net
    items.io_mb[:n] += disk_mb + net_mb
    vm_used_mhz = np.bincount(vm, cpu_mc, minlength=n_vm) / dt
    vm_disk = np.bincount(vm, disk_mb, minlength=n_vm) + swap_mb
    vm_net = np.bincount(vm, net_mb, minlength=n_vm)
    cpu_s = cpu_mc
    cpu_s /= core_mhz
    runnable_s = want_cpu
    runnable_s *= frac_dt
    runnable_s /= core_mhz
    blocked_s = stall_vm[vm]
    blocked_s *= cpu_threads
    blocked_s += io_active
    blocked_s *= frac_dt

    # guest accounting per VM: the /proc/stat identity by construction
    vcpu_s = vcpus * dt
    vm_cpu_s = np.bincount(vm, cpu_s, minlength=n_vm)
    vm_runnable = np.minimum(np.bincount(vm, runnable_s, minlength=n_vm), vcpu_s)
    vm_steal = np.maximum(vm_runnable - vm_cpu_s, 0.0)
    vm_idle_all = vcpu_s - vm_runnable
    vm_blocked = np.bincount(vm, blocked_s, minlength=n_vm)
    vm_iowait = np.minimum(vm_idle_all, vm_blocked)
    vm_idle = vm_idle_all - vm_iowait
    sys_fraction = items.sys_fraction[:n]
    sys_s = cpu_s * sys_fraction
    vm_sys = np.bincount(vm, sys_s, minlength=n_vm)

    # attribution to items, in proportion to what each contributed
    items.sys_s[:n] += sys_s
    usr_s = 1.0 - sys_fraction
    usr_s *= cpu_s
    items.usr_s[:n] += usr_s
    waiting = runnable_s
    waiting -= cpu_s
    vm_waiting = np.bincount(vm, waiting, minlength=n_vm)
    waiting *= np.divide(vm_steal, vm_waiting, out=np.zeros(n_vm), where=vm_waiting > 0)[vm]
    items.steal_s[:n] += waiting
    blocked_s *= np.divide(vm_iowait, vm_blocked, out=np.zeros(n_vm), where=vm_blocked > 0)[vm]
    items.iowait_s[:n] += blocked_s

    # VM state of this tick and cumulative counters
    vms.cpu_demand_mhz[:n_vm] = vm_demand
    vms.cpu_used_mhz[:n_vm] = vm_used_mhz
    vms.mem_used_mb[:n_vm] = used
    vms.mem_active_mb[:n_vm] = active
    vms.swap_mb[:n_vm] = swapped
    vms.disk_mbps[:n_vm] = vm_disk / dt
    vms.net_mbps[:n_vm] = vm_net / dt
    vms.usr_s[:n_vm] += vm_cpu_s - vm_sys
    vms.sys_s[:n_vm] += vm_sys
    vms.steal_s[:n_vm] += vm_steal
    vms.iowait_s[:n_vm] += vm_iowait
    vms.idle_s[:n_vm] += vm_idle
    vms.cpu_used_mhz_s[:n_vm] += vm_used_mhz * dt
    vms.cpu_demand_mhz_s[:n_vm] += vm_demand * dt
    vms.cpu_ready_mhz_s[:n_vm] += vm_steal * core_mhz_vm
    vms.disk_mb[:n_vm] += vm_disk
    vms.net_mb[:n_vm] += vm_net
    vms.swap_io_mb[:n_vm] += swap_mb

    if rows.size:
        ended = rows[~items.open[rows]]
        return TickResult(ended, frac_dt[ended])
    return TickResult(rows, np.zeros(0))
