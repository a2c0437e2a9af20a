"""The guest's /proc/stat accounting of a tick: usr, sys, steal, iowait and idle per VM, attributed to its items.

`usr+sys + steal + iowait + idle = vCPUs x dt` holds by construction (DESIGN.md 4); steal is runnable time the
hypervisor gave to others, iowait idle time with an I/O of the VM outstanding. The plain form is `vcloud.reference`.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from vcloud.numerics import kernel, np_max, np_min, record


@record
class ItemUse(NamedTuple):
    """Per running item: what it is and what the tick's stages gave it."""

    vm: np.ndarray
    is_load: np.ndarray  # a LOAD phase (a background tenant)
    need_cpu: np.ndarray  # megacycles per unit of progress
    threads: np.ndarray
    fed: np.ndarray  # an open phase: a queue fed by others
    sys_fraction: np.ndarray
    core_mhz: np.ndarray  # its host's core MHz
    progress: np.ndarray  # units done in the tick
    rate: np.ndarray
    want_cpu: np.ndarray
    frac_dt: np.ndarray  # seconds in its phase
    got_cpu: np.ndarray  # MHz, the last sharing round's
    got_cpu1: np.ndarray  # MHz, the first round's (competing as a runnable thread)
    runnable_mhz: np.ndarray  # its CPU rate while runnable


@record
class StreamUse(NamedTuple):
    """Per I/O stream (the items' first, then the LOAD items' disk streams): where it ran and what it got."""

    item: np.ndarray
    vm: np.ndarray  # the VM whose host's device carries it
    group: np.ndarray  # its device's row of io_bw: datastores, NICs, rack uplinks
    need: np.ndarray  # MB per unit
    bonus: np.ndarray  # MB/s a write may dirty in the cache
    want: np.ndarray
    full: np.ndarray  # its want at full speed
    got: np.ndarray  # MB/s, the last round's
    got1: np.ndarray  # MB/s, the first round's


@record
class VMUse(NamedTuple):
    """Per VM: its vCPUs, core speed, page-in stall and what its swap and write-back streams got."""

    vcpus: np.ndarray
    core_mhz: np.ndarray
    stall: np.ndarray
    swap_got: np.ndarray
    wb_got: np.ndarray


@record
class ItemCharges(NamedTuple):
    """The item table's columns the tick adds to (each field a column of that name)."""

    io_mb: np.ndarray
    sys_s: np.ndarray
    usr_s: np.ndarray
    steal_s: np.ndarray
    iowait_s: np.ndarray


@record
class VMTickState(NamedTuple):
    """The VM table's columns the tick sets (each field a column of that name)."""

    cpu_demand_mhz: np.ndarray
    cpu_used_mhz: np.ndarray
    disk_mbps: np.ndarray
    net_mbps: np.ndarray


@record
class VMCounters(NamedTuple):
    """The VM table's cumulative columns the tick adds to (each field a column of that name)."""

    usr_s: np.ndarray
    sys_s: np.ndarray
    steal_s: np.ndarray
    iowait_s: np.ndarray
    idle_s: np.ndarray
    cpu_used_mhz_s: np.ndarray
    cpu_demand_mhz_s: np.ndarray
    cpu_ready_mhz_s: np.ndarray
    disk_mb: np.ndarray
    net_mb: np.ndarray
    swap_io_mb: np.ndarray
    writeback_mb: np.ndarray


@kernel
def account(
    dt: float,
    n_host: int,
    k: int,
    has_load: bool,
    items: ItemUse,
    streams: StreamUse,
    vms: VMUse,
    item_out: ItemCharges,
    vm_now: VMTickState,
    vm_sum: VMCounters,
) -> None:
    """`vcloud.engine.stage_account`: what each item and VM did in the tick, and the guest's /proc/stat accounting
    per VM. Adds to the item columns (`item_out`) and the VM counters (`vm_sum`), and sets the VM's state of the
    tick (`vm_now`); `k`: the streams of the items (the LOAD items' disk streams follow them)."""
    items, streams, vms = ItemUse(*items), StreamUse(*streams), VMUse(*vms)  # records come as tuples (`record`)
    item_out, vm_now, vm_sum = ItemCharges(*item_out), VMTickState(*vm_now), VMCounters(*vm_sum)
    vm, is_load, need_cpu, threads, fed = items.vm, items.is_load, items.need_cpu, items.threads, items.fed
    sys_fraction, core_mhz, progress, rate, want_cpu = (
        items.sys_fraction,
        items.core_mhz,
        items.progress,
        items.rate,
        items.want_cpu,
    )
    frac_dt, got_cpu, got_cpu1, runnable_mhz = items.frac_dt, items.got_cpu, items.got_cpu1, items.runnable_mhz
    s_item, s_vm, s_group, s_need, s_bonus = streams.item, streams.vm, streams.group, streams.need, streams.bonus
    s_want, s_full, got_io, got_io1 = streams.want, streams.full, streams.got, streams.got1
    vcpus, core_mhz_vm, stall, swap_got, wb_got = vms.vcpus, vms.core_mhz, vms.stall, vms.swap_got, vms.wb_got
    n, n_vm, n_s = need_cpu.size, vcpus.size, s_item.size
    io_mb, sys_s_out, usr_s_out = item_out.io_mb, item_out.sys_s, item_out.usr_s
    steal_s_out, iowait_s_out = item_out.steal_s, item_out.iowait_s
    cpu_demand_mhz, cpu_used_mhz, disk_mbps, net_mbps = (
        vm_now.cpu_demand_mhz,
        vm_now.cpu_used_mhz,
        vm_now.disk_mbps,
        vm_now.net_mbps,
    )
    usr_vm, sys_vm, steal_vm, iowait_vm, idle_vm = (
        vm_sum.usr_s,
        vm_sum.sys_s,
        vm_sum.steal_s,
        vm_sum.iowait_s,
        vm_sum.idle_s,
    )
    used_mhz_s, demand_mhz_s, ready_mhz_s = vm_sum.cpu_used_mhz_s, vm_sum.cpu_demand_mhz_s, vm_sum.cpu_ready_mhz_s
    disk_mb, net_mb, swap_io_mb, writeback_mb = vm_sum.disk_mb, vm_sum.net_mb, vm_sum.swap_io_mb, vm_sum.writeback_mb

    # what each item and stream moved in the tick
    cpu_mc = np.empty(n)
    for i in range(n):
        cpu_mc[i] = got_cpu[i] * dt if has_load and is_load[i] else progress[i] * need_cpu[i]
    s_mb = np.empty(n_s)
    for s in range(n_s):
        s_mb[s] = progress[s_item[s]] * s_need[s]
    any_bonus = False
    for s in range(k):
        any_bonus = any_bonus or s_bonus[s] != 0
    if any_bonus:  # what fit below the dirty limit went to the cache, not the disk
        for s in range(k):
            s_mb[s] = np_max(s_mb[s] - s_bonus[s] * dt, 0.0)
    if has_load:
        for s in range(k, n_s):
            s_mb[s] = got_io[s] * dt
    item_io = np.zeros(n)
    vm_disk, vm_net = np.zeros(n_vm), np.zeros(n_vm)
    remote = np.zeros(n_s, np.bool_)
    for s in range(n_s):
        disk = s_group[s] < n_host
        net = s_group[s] >= n_host and s_group[s] < 2 * n_host  # the VM's NIC (rack links are the switch's)
        own = s_vm[s] == vm[s_item[s]]
        item_io[s_item[s]] += s_mb[s] * (1.0 if own and (disk or net) else 0.0)
        vm_disk[s_vm[s]] += s_mb[s] * (1.0 if disk else 0.0)
        vm_net[s_vm[s]] += s_mb[s] * (1.0 if net else 0.0)
        remote[s] = disk and not own and got_io[s] > 0 and got_io1[s] > 0
    for v in range(n_vm):
        vm_disk[v] = vm_disk[v] + swap_got[v] * dt + wb_got[v] * dt
    vm_used_mhz = np.zeros(n_vm)
    for i in range(n):
        vm_used_mhz[vm[i]] += cpu_mc[i]
    for v in range(n_vm):
        vm_used_mhz[v] = vm_used_mhz[v] / dt

    # the share of the tick CPU bounds each item's threads (1 for CPU-bound and LOAD items)
    cpu_s, f_run, runnable_s = np.empty(n), np.empty(n), np.empty(n)
    for i in range(n):
        cpu_s[i] = cpu_mc[i] / core_mhz[i]
        used_mhz = rate[i] * need_cpu[i] if need_cpu[i] > 0 else 0.0  # all-cached phases: rate inf
        # CPU binds if the CPU it gets competing as a runnable thread (the first round's) is what limits it
        cpu_bound = need_cpu[i] > 0 and got_cpu1[i] / need_cpu[i] <= rate[i]
        f = used_mhz / runnable_mhz[i] if runnable_mhz[i] > 0 else 0.0
        f_run[i] = 1.0 if cpu_bound or (has_load and is_load[i]) else np_min(f, 1.0)
        runnable_s[i] = f_run[i] * want_cpu[i] * frac_dt[i] / core_mhz[i]
    io_active = np.zeros(n)
    for s in range(n_s):
        io_active[s_item[s]] += 1.0 if s_want[s] > 0 else 0.0
    for i in range(n):
        io_active[i] = 1.0 if io_active[i] > 0 else 0.0
    any_fed = False
    for i in range(n):
        any_fed = any_fed or fed[i]
    if any_fed:  # a fed queue waits on its I/O for the time its bytes take at its streams' full speed
        busy = np.zeros(n)
        for s in range(n_s):
            took = s_mb[s] / (s_full[s] * dt) if s_full[s] > 0 else 0.0
            busy[s_item[s]] = np_max(busy[s_item[s]], np_min(took, 1.0))
        for i in range(n):
            if fed[i]:
                io_active[i] = busy[i] * dt / frac_dt[i] if frac_dt[i] > 0 else 0.0
    # page-ins stall the threads in the share they run, I/O blocks one thread in the share it binds
    blocked_s = np.empty(n)
    for i in range(n):
        cpu_threads = threads[i] * (1.0 if need_cpu[i] > 0 else 0.0)
        not_load = 1.0 - f_run[i] * (0.0 if is_load[i] else 1.0) if has_load else 1.0 - f_run[i]
        blocked_s[i] = (stall[vm[i]] * cpu_threads * f_run[i] + io_active[i] * not_load) * frac_dt[i]
    # a stream on another VM's datastore: that VM's daemon thread is blocked while its requests are outstanding
    # (outstanding: the share of the tick its requests take at the rate a request is served, the first round's)
    daemon_blocked = np.zeros(n_vm)
    for s in range(n_s):
        if remote[s]:
            daemon_blocked[s_vm[s]] += np_min(got_io[s] / got_io1[s], 1.0) * frac_dt[s_item[s]]

    # guest accounting per VM: the /proc/stat identity by construction
    vm_cpu_s, vm_runnable, vm_item_blocked = np.zeros(n_vm), np.zeros(n_vm), np.zeros(n_vm)
    vm_sys, vm_waiting, vm_wants = np.zeros(n_vm), np.zeros(n_vm), np.zeros(n_vm)
    sys_s, waiting = np.empty(n), np.empty(n)
    for i in range(n):
        v = vm[i]
        sys_s[i] = cpu_s[i] * sys_fraction[i]
        waiting[i] = runnable_s[i] - cpu_s[i]
        vm_cpu_s[v] += cpu_s[i]
        vm_runnable[v] += runnable_s[i]
        vm_item_blocked[v] += blocked_s[i]
        vm_sys[v] += sys_s[i]
        vm_waiting[v] += waiting[i]
        vm_wants[v] += f_run[i] * want_cpu[i]
    steal_per, iowait_per = np.zeros(n_vm), np.zeros(n_vm)
    for v in range(n_vm):
        vcpu_s = vcpus[v] * dt
        runnable = np_min(vm_runnable[v], vcpu_s)
        steal = np_max(runnable - vm_cpu_s[v], 0.0)
        idle_all = vcpu_s - runnable
        blocked = vm_item_blocked[v] + daemon_blocked[v]
        iowait = np_min(idle_all, blocked)
        steal_per[v] = steal / vm_waiting[v] if vm_waiting[v] > 0 else 0.0
        iowait_per[v] = iowait / blocked if blocked > 0 else 0.0
        # VM state of this tick and cumulative counters; demand is what the threads would run if never stolen
        demand = np_min(vm_wants[v], vcpus[v] * core_mhz_vm[v])
        cpu_demand_mhz[v] = demand
        cpu_used_mhz[v] = vm_used_mhz[v]
        disk_mbps[v] = vm_disk[v] / dt
        net_mbps[v] = vm_net[v] / dt
        usr_vm[v] += vm_cpu_s[v] - vm_sys[v]
        sys_vm[v] += vm_sys[v]
        steal_vm[v] += steal
        iowait_vm[v] += iowait
        idle_vm[v] += idle_all - iowait
        used_mhz_s[v] += vm_used_mhz[v] * dt
        demand_mhz_s[v] += demand * dt
        ready_mhz_s[v] += steal * core_mhz_vm[v]
        disk_mb[v] += vm_disk[v]
        net_mb[v] += vm_net[v]
        swap_io_mb[v] += swap_got[v] * dt
        writeback_mb[v] += wb_got[v] * dt

    # attribution to items, in proportion to what each contributed
    for i in range(n):
        io_mb[i] += item_io[i]
        sys_s_out[i] += sys_s[i]
        usr_s_out[i] += (1.0 - sys_fraction[i]) * cpu_s[i]
        steal_s_out[i] += waiting[i] * steal_per[vm[i]]
        iowait_s_out[i] += blocked_s[i] * iowait_per[vm[i]]
