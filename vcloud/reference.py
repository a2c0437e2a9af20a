"""The tick of `engine.step`, written plainly per host, VM and item: the oracle the tests compare to.

Slow on purpose and never used by the model. Keep it in step with engine.py when the physics
changes: the reading order is the same (memory, demand, CPU, I/O, progress, accounting).
"""

from __future__ import annotations

import math

import numpy as np

from vcloud.engine import ENTITLEMENT_FLOOR_MHZ, Physics, TickResult
from vcloud.tables import HostTable, ItemTable, VMTable
from vcloud.waterfill import waterfill_reference
from vcloud.work import DISK_KINDS, Kind


def _share(groups: dict[int, list[int]], weight: dict, cap: dict, capacity: dict) -> dict[int, float]:
    got: dict[int, float] = {}
    for g, members in groups.items():
        alloc = waterfill_reference([weight[i] for i in members], [cap[i] for i in members], capacity[g])
        got.update(zip(members, alloc, strict=True))
    return got


def step(hosts: HostTable, vms: VMTable, items: ItemTable, dt: float, physics: Physics) -> TickResult:
    it = range(items.n)
    vm_of = [int(items.vm[i]) for i in it]
    kind = [Kind(int(items.kind[i])) for i in it]
    host_of_vm = [int(vms.host[v]) for v in range(vms.n)]
    core = [float(hosts.core_mhz[host_of_vm[v]]) for v in range(vms.n)]
    items_of_vm: dict[int, list[int]] = {v: [] for v in range(vms.n)}
    for i in it:
        items_of_vm[vm_of[i]].append(i)

    used, active, swapped, stall = {}, {}, {}, {}
    for v in range(vms.n):
        used[v] = vms.os_mem_mb[v] + sum(items.mem_mb[i] for i in items_of_vm[v])
        active[v] = vms.os_mem_mb[v] * vms.os_active_fraction[v] + sum(items.mem_active_mb[i] for i in items_of_vm[v])
        swapped[v] = max(used[v] - vms.mem_granted_mb[v], 0.0)
        stall[v] = swapped[v] / used[v] if used[v] > 0 else 0.0

    want_cpu, cpu_weight = {}, {}
    for i in it:
        v = vm_of[i]
        if kind[i] == Kind.CPU:
            want_cpu[i] = items.threads[i] * core[v] * (1 - stall[v])
            cpu_weight[i] = items.threads[i]
        elif kind[i] == Kind.LOAD:
            want_cpu[i] = items.load_cpu_mhz[i] * (1 - stall[v])
            cpu_weight[i] = want_cpu[i] / core[v]
        else:
            want_cpu[i], cpu_weight[i] = 0.0, 0.0
    demand = {v: min(sum(want_cpu[i] for i in items_of_vm[v]), vms.vcpus[v] * core[v]) for v in range(vms.n)}

    vms_of_host = {h: [v for v in range(vms.n) if host_of_vm[v] == h] for h in range(hosts.n)}
    vm_got = _share(
        vms_of_host,
        {v: vms.cpu_entitlement_mhz[v] + ENTITLEMENT_FLOOR_MHZ for v in range(vms.n)},
        {v: min(demand[v], vms.cpu_limit_mhz[v]) for v in range(vms.n)},
        {h: hosts.cores[h] * hosts.core_mhz[h] for h in range(hosts.n)},
    )
    got_cpu = _share(items_of_vm, cpu_weight, want_cpu, vm_got)

    # disk streams: ("item", i) and ("swap", v), equal shares per host datastore
    disk_want, disk_groups = {}, {h: [] for h in range(hosts.n)}
    for i in it:
        h = host_of_vm[vm_of[i]]
        if kind[i] in DISK_KINDS and items.remaining[i] > 0:
            disk_want[("item", i)] = min(items.io_mbps_max[i], hosts.disk_mbps[h])
        elif kind[i] == Kind.LOAD:
            disk_want[("item", i)] = min(items.load_disk_mbps[i], hosts.disk_mbps[h])
        else:
            disk_want[("item", i)] = 0.0
        disk_groups[h].append(("item", i))
    for v in range(vms.n):
        h = host_of_vm[v]
        disk_want[("swap", v)] = min(swapped[v] * physics.swap_touch_rate, hosts.disk_mbps[h])
        disk_groups[h].append(("swap", v))
    disk_got = _share(
        disk_groups,
        {k: 1.0 if w > 0 else 0.0 for k, w in disk_want.items()},
        disk_want,
        {h: hosts.disk_mbps[h] for h in range(hosts.n)},
    )
    net_groups = {
        h: [i for i in it if kind[i] == Kind.NET and items.remaining[i] > 0 and host_of_vm[vm_of[i]] == h]
        for h in range(hosts.n)
    }
    net_got = _share(
        net_groups,
        {i: 1.0 for i in it},
        {i: min(items.io_mbps_max[i], hosts.nic_mbps[host_of_vm[vm_of[i]]]) for i in it},
        {h: hosts.nic_mbps[h] for h in range(hosts.n)},
    )

    done_rows, done_offset = [], []
    cpu_s, runnable_s, blocked_s, io_mb = {}, {}, {}, {}
    for i in it:
        v, k = vm_of[i], kind[i]
        rate = {Kind.CPU: got_cpu[i], Kind.NET: net_got.get(i, 0.0), Kind.WAIT: 1.0}.get(k, 0.0)
        if k in DISK_KINDS:
            rate = disk_got[("item", i)]
        frac, progress, waiting_for_work = 1.0, 0.0, False
        if k != Kind.LOAD:
            possible = rate * dt
            waiting_for_work = k in (*DISK_KINDS, Kind.NET) and items.remaining[i] <= 0  # open, nothing left
            if possible >= items.remaining[i]:
                frac = items.remaining[i] / possible if possible > 0 else 0.0  # nothing left: ends at once
                progress = items.remaining[i]
                items.remaining[i] = 0.0
                if not items.open[i]:
                    done_rows.append(i)
                    done_offset.append(frac * dt)
            else:
                progress = possible
                items.remaining[i] -= possible
        cpu_mc = progress if k == Kind.CPU else (got_cpu[i] * dt if k == Kind.LOAD else 0.0)
        cpu_s[i] = cpu_mc / core[v]
        runnable_s[i] = frac * dt * want_cpu[i] / core[v]
        load_io = k == Kind.LOAD and disk_want[("item", i)] > 0
        io_blocked = (k in DISK_KINDS or k == Kind.NET) and not waiting_for_work
        blocked_s[i] = frac * dt * ((io_blocked or load_io) + (stall[v] * items.threads[i] if k == Kind.CPU else 0.0))
        if k in DISK_KINDS or k == Kind.NET:
            io_mb[i] = progress
        elif k == Kind.LOAD:
            io_mb[i] = disk_got[("item", i)] * dt
        else:
            io_mb[i] = 0.0

    for v in range(vms.n):
        mine = items_of_vm[v]
        vcpu_s = vms.vcpus[v] * dt
        total_cpu = sum(cpu_s[i] for i in mine)
        runnable = min(sum(runnable_s[i] for i in mine), vcpu_s)
        steal = max(runnable - total_cpu, 0.0)
        blocked = sum(blocked_s[i] for i in mine)
        iowait = min(vcpu_s - runnable, blocked)
        sys_s = sum(cpu_s[i] * items.sys_fraction[i] for i in mine)
        waiting = sum(runnable_s[i] - cpu_s[i] for i in mine)
        for i in mine:
            items.usr_s[i] += cpu_s[i] * (1 - items.sys_fraction[i])
            items.sys_s[i] += cpu_s[i] * items.sys_fraction[i]
            items.steal_s[i] += (runnable_s[i] - cpu_s[i]) * steal / waiting if waiting > 0 else 0.0
            items.iowait_s[i] += blocked_s[i] * iowait / blocked if blocked > 0 else 0.0
            items.io_mb[i] += io_mb[i]
        used_mc = sum(cpu_s[i] * core[v] for i in mine)
        disk = sum(io_mb[i] for i in mine if kind[i] in DISK_KINDS or kind[i] == Kind.LOAD)
        disk += disk_got[("swap", v)] * dt
        net = sum(io_mb[i] for i in mine if kind[i] == Kind.NET)
        vms.cpu_demand_mhz[v] = demand[v]
        vms.cpu_used_mhz[v] = used_mc / dt
        vms.mem_used_mb[v], vms.mem_active_mb[v], vms.swap_mb[v] = used[v], active[v], swapped[v]
        vms.disk_mbps[v], vms.net_mbps[v] = disk / dt, net / dt
        vms.usr_s[v] += total_cpu - sys_s
        vms.sys_s[v] += sys_s
        vms.steal_s[v] += steal
        vms.iowait_s[v] += iowait
        vms.idle_s[v] += vcpu_s - runnable - iowait
        vms.cpu_used_mhz_s[v] += used_mc
        vms.cpu_demand_mhz_s[v] += demand[v] * dt
        vms.cpu_ready_mhz_s[v] += steal * core[v]
        vms.disk_mb[v] += disk
        vms.net_mb[v] += net
        vms.swap_io_mb[v] += disk_got[("swap", v)] * dt
    assert all(math.isfinite(x) for x in vms.usr_s[: vms.n])
    return TickResult(np.array(done_rows, dtype=np.int64), np.array(done_offset))
