"""The tick's compiled loops: water-filling and the pipeline stage's per-round arithmetic.

A tick shares and re-shares a few hundred items a dozen times (vcloud/engine.py `stage_cpu`, `stage_io`,
`stage_pipeline`); written as NumPy calls that was ~40 calls a round, where NumPy's per-call cost, not the arithmetic,
was the time. These loops do the arithmetic of those NumPy calls in the same order (`np_min`/`np_max` are NumPy's
minimum/maximum, ties and NaN included; sums add in item order as `np.bincount` does), so the numbers are the same
bits (tests/test_kernels.py against the NumPy forms; the golden digests did not move).

One module on purpose: numba's on-disk cache (`cache=True`) is keyed on the source file of each compiled function, not
on what it calls, so a kernel calling a changed kernel of another module would run the stale compiled code.
"""

from __future__ import annotations

import numba
import numpy as np
from numba import literal_unroll

_INF = np.inf


@numba.njit(inline="always")
def np_min(a: float, b: float) -> float:
    """`np.minimum(a, b)`: NaN if either is NaN; on a tie (0.0 vs -0.0) the second."""
    return a if (a < b or a != a) else b


@numba.njit(inline="always")
def np_max(a: float, b: float) -> float:
    """`np.maximum(a, b)`: NaN if either is NaN; on a tie the second."""
    return a if (a > b or a != a) else b


@numba.njit(cache=True, nogil=True)
def fill(
    group: np.ndarray, weight: np.ndarray, cap: np.ndarray, capacity: np.ndarray, cap_sum: np.ndarray
) -> np.ndarray:
    """`vcloud.waterfill.waterfill` (empty `weight`: equal shares; empty `cap_sum`: computed here). The arithmetic
    of the NumPy form it replaced, in the same order: sums in item order as `np.bincount` adds."""
    n, n_groups = cap.size, capacity.size
    weighted = weight.size > 0
    if cap_sum.size == 0:
        cap_sum = np.zeros(n_groups)
        for i in range(n):
            cap_sum[group[i]] += cap[i]
    short = np.empty(n_groups, np.bool_)
    for j in range(n_groups):
        short[j] = not (cap_sum[j] <= capacity[j])
    alloc = np.empty(n)
    rows = np.empty(n, np.int64)
    m = 0
    for i in range(n):
        c = cap[i]
        if c > 0 and (not weighted or weight[i] > 0):
            alloc[i] = c
            if short[group[i]]:
                rows[m] = i
                m += 1
        else:
            alloc[i] = 0.0
    if m == 0:
        return alloc
    # Each group's level depends on its own rows alone, so a group is filled to the end before the next (a group that
    # settles keeps its level: the rounds of the others do not touch it), its rows in item order as before: the same
    # sums in the same order, without passing over every group's rows as often as the slowest group needs.
    start = np.zeros(n_groups + 1, np.int64)
    for j in range(m):
        start[group[rows[j]] + 1] += 1
    for k in range(n_groups):
        start[k + 1] += start[k]
    ordered = np.empty(m, np.int64)
    at = start[:n_groups].copy()
    for j in range(m):
        k = group[rows[j]]
        ordered[at[k]] = rows[j]
        at[k] += 1
    passes, sizes = np.zeros(n_groups, np.int64), np.zeros(n_groups, np.int64)
    settled, totals = np.empty(n_groups), np.empty(n_groups)
    for k in range(n_groups):
        lo, size = start[k], start[k + 1] - start[k]
        if size == 0:
            continue
        remaining, level = capacity[k], 0.0
        while True:
            passes[k] += 1
            total = 0.0
            for j in range(lo, lo + size):
                total += weight[ordered[j]] if weighted else 1.0
            if total > 0:
                level = remaining / total
            taken = 0.0
            kept = 0
            for j in range(lo, lo + size):
                i = ordered[j]
                offer = weight[i] * level if weighted else level
                if offer >= cap[i]:
                    taken += cap[i]
                else:
                    ordered[lo + kept] = i
                    kept += 1
            if kept == size:
                for j in range(lo, lo + size):
                    i = ordered[j]
                    alloc[i] = weight[i] * level if weighted else level
                settled[k], totals[k], sizes[k] = remaining, total, size
                break
            remaining = np_max(remaining - taken, 0.0)
            size = kept
    # The rounds of all groups at once also clipped a settled group's capacity at 0 while others went on: that changes
    # its level only if it never gave anything out and its capacity was below 0 (or -0.0); as they did, so here.
    last = passes.max()
    for k in range(n_groups):
        if 0 < passes[k] < last and sizes[k] and (settled[k] < 0 or (settled[k] == 0 and np.signbit(settled[k]))):
            level = np_max(settled[k] - 0.0, 0.0) / totals[k]  # a group with rows has weight
            for j in range(start[k], start[k] + sizes[k]):
                i = ordered[j]
                alloc[i] = weight[i] * level if weighted else level
    return alloc


@numba.njit(cache=True, nogil=True)
def least(io: np.ndarray, starts: np.ndarray, owners: np.ndarray, n: int) -> np.ndarray:
    """Each item's least ratio over its streams (inf if it has none); streams are ordered by item, `starts` are
    where each owner's run begins (`np.minimum.reduceat`)."""
    out = np.full(n, _INF)
    for j in range(starts.size):
        end = starts[j + 1] if j + 1 < starts.size else io.size
        m = io[starts[j]]
        for s in range(starts[j] + 1, end):
            m = np_min(m, io[s])
        out[owners[j]] = m
    return out


@numba.njit(cache=True, nogil=True)
def rates(
    got_cpu: np.ndarray,
    need_cpu: np.ndarray,
    got_io: np.ndarray,
    s_bonus: np.ndarray,
    s_need: np.ndarray,
    starts: np.ndarray,
    owners: np.ndarray,
    wait_rows: np.ndarray,
    load_rows: np.ndarray,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Each item's rate (min over its needs of grant / need) and the ratios grant / need: per item of its CPU, per
    stream of the stream (inf where there is no such need). A waiting phase runs at rate 1, a load never ends."""
    n, k = need_cpu.size, s_bonus.size
    cpu = np.full(n, _INF)
    for i in range(n):
        if need_cpu[i] > 0:
            cpu[i] = got_cpu[i] / need_cpu[i]
    io = np.full(k, _INF)
    for s in range(k):
        if s_need[s] > 0:
            io[s] = (got_io[s] + s_bonus[s]) / s_need[s]
    rate = least(io, starts, owners, n)
    for i in range(n):
        rate[i] = np_min(cpu[i], rate[i])
    for i in wait_rows:
        rate[i] = 1.0
    for i in load_rows:
        rate[i] = 0.0  # never progresses; a phase whose every need is in the cache ends at once (inf)
    return rate, cpu, io


@numba.njit(cache=True, nogil=True)
def asks(
    cpu: np.ndarray,
    io: np.ndarray,
    item: np.ndarray,
    starts: np.ndarray,
    owners: np.ndarray,
    multi: np.ndarray,
    want_cpu: np.ndarray,
    need_cpu: np.ndarray,
    s_want: np.ndarray,
    s_need: np.ndarray,
    s_bonus: np.ndarray,
) -> tuple[np.ndarray, np.ndarray]:
    """What each need of a multi-resource phase asks for in the next round: as much as the phase's other needs let
    it use (the ratios `cpu`, `io` of their grants), never more than its standalone want. A stream's other needs are
    the item's lowest ratio, except for its first stream that has the lowest (argmin's choice, the CPU coming after
    the streams): for that one the least of the CPU and of the other streams."""
    n, k = cpu.size, io.size
    other_cpu = least(io, starts, owners, n)
    other = np.empty(k)
    for s in range(k):
        other[s] = np_min(cpu[item[s]], other_cpu[item[s]])
    for j in range(starts.size):
        end = starts[j + 1] if j + 1 < starts.size else k
        for first in range(starts[j], end):
            if io[first] == other[first]:
                m = _INF if first == starts[j] else io[starts[j]]
                for s in range(starts[j] + 1, end):
                    m = np_min(m, _INF if s == first else io[s])
                other[first] = np_min(cpu[owners[j]], m)
                break
    want = want_cpu.copy()
    for i in range(n):
        ask = need_cpu[i] * other_cpu[i] if multi[i] and np.isfinite(other_cpu[i]) else _INF
        want[i] = np_min(want[i], ask)
    s_ask = s_want.copy()
    for s in range(k):
        ask = s_need[s] * other[s] if multi[item[s]] and np.isfinite(other[s]) else _INF
        s_ask[s] = np_min(s_ask[s], np_max(ask - s_bonus[s], 0.0))
    return want, s_ask


@numba.njit(cache=True, nogil=True)
def account(
    dt: float,
    n_host: int,
    k: int,
    has_load: bool,
    vm: np.ndarray,
    is_load: np.ndarray,
    need_cpu: np.ndarray,
    threads: np.ndarray,
    fed: np.ndarray,
    sys_fraction: np.ndarray,
    core_mhz: np.ndarray,
    progress: np.ndarray,
    rate: np.ndarray,
    want_cpu: np.ndarray,
    frac_dt: np.ndarray,
    got_cpu: np.ndarray,
    got_cpu1: np.ndarray,
    runnable_mhz: np.ndarray,
    s_item: np.ndarray,
    s_vm: np.ndarray,
    s_group: np.ndarray,
    s_need: np.ndarray,
    s_bonus: np.ndarray,
    s_want: np.ndarray,
    s_full: np.ndarray,
    got_io: np.ndarray,
    got_io1: np.ndarray,
    vcpus: np.ndarray,
    core_mhz_vm: np.ndarray,
    stall: np.ndarray,
    swap_got: np.ndarray,
    wb_got: np.ndarray,
    item_out: tuple,
    vm_now: tuple,
    vm_sum: tuple,
) -> None:
    """`vcloud.engine.stage_account`: what each item and VM did in the tick, and the guest's /proc/stat accounting
    per VM. Adds to the item columns (io_mb, sys_s, usr_s, steal_s, iowait_s) and the VM counters (`vm_sum`), and
    sets the VM's state of the tick (`vm_now`: cpu_demand_mhz, cpu_used_mhz, disk_mbps, net_mbps)."""
    n, n_vm, n_s = need_cpu.size, vcpus.size, s_item.size
    io_mb, sys_s_out, usr_s_out, steal_s_out, iowait_s_out = item_out
    cpu_demand_mhz, cpu_used_mhz, disk_mbps, net_mbps = vm_now
    usr_vm, sys_vm, steal_vm, iowait_vm, idle_vm, used_mhz_s, demand_mhz_s, ready_mhz_s = vm_sum[:8]
    disk_mb, net_mb, swap_io_mb, writeback_mb = vm_sum[8:]

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


@numba.njit(cache=True, nogil=True)
def _then_by(order: np.ndarray, key: np.ndarray) -> np.ndarray:
    """`order` stably sorted by `key`: `np.lexsort((minor, ..., major))` is `np.argsort(minor)` then by each next key
    (mergesort is stable: ties keep the earlier keys' order)."""
    return order[np.argsort(key[order], kind="mergesort")]


@numba.njit(cache=True, nogil=True)
def _by_group_then(group: np.ndarray, key: np.ndarray, n_groups: int) -> np.ndarray:
    """`_then_by(np.argsort(key, kind="mergesort"), group)` for groups 0..n_groups-1: the order by group, then key
    (NaN last), then position. A stable bucket pass by group, then each group's positions sorted by key (insertion
    sort for a few, else a stable argsort): the same permutation as the two sorts of the whole array, which cost
    more (a tick writes back on most VMs)."""
    m = group.size
    end = np.zeros(n_groups + 1, np.int64)
    for j in range(m):
        end[group[j] + 1] += 1
    for g in range(n_groups):
        end[g + 1] += end[g]
    order = np.empty(m, np.int64)
    for j in range(m):
        g = group[j]
        order[end[g]] = j
        end[g] += 1
    start = 0
    for g in range(n_groups):
        stop = end[g]
        if stop - start > 24:
            part = order[start:stop].copy()
            order[start:stop] = part[np.argsort(key[part], kind="mergesort")]
        else:
            for a in range(start + 1, stop):
                x = order[a]
                kx = key[x]
                b = a - 1
                while b >= start and (key[order[b]] > kx or (kx == kx and key[order[b]] != key[order[b]])):
                    order[b + 1] = order[b]
                    b -= 1
                order[b + 1] = x
        start = stop
    return order


@numba.njit(cache=True, nogil=True)
def _cum_before(group: np.ndarray, amount: np.ndarray) -> np.ndarray:
    """For rows sorted by group: the sum of `amount` over the earlier rows of the same group, as NumPy computed it
    (a running sum less its value where the row's group starts)."""
    before = np.empty(amount.size)
    cum = base = 0.0
    for j in range(amount.size):
        cum += amount[j]
        if j == 0 or group[j] != group[j - 1]:
            base = cum - amount[j]
        before[j] = cum - amount[j] - base
    return before


@numba.njit(cache=True, nogil=True)
def evict(
    vm_of: np.ndarray,
    cached_mb: np.ndarray,
    dirty_mb: np.ndarray,
    active_of: np.ndarray,
    last_access_s: np.ndarray,
    resident: np.ndarray,
    vm_rows: np.ndarray,
    excess: np.ndarray,
) -> None:
    """`vcloud.pagecache.evict` on the file table's columns (`cached_mb` and `active_of` are changed in place)."""
    over = np.zeros(excess.size, np.bool_)
    for v in vm_rows:
        over[v] = True
    on = np.zeros(resident.size, np.bool_)
    for j in range(resident.size):
        f = resident[j]
        on[j] = cached_mb[f] - dirty_mb[f] > 0 and over[vm_of[f]]
    rows = resident[on]  # ascending file rows with clean data on a VM over its cache, their VMs and clean MB
    if rows.size == 0:
        return
    vm = vm_of[rows]
    clean = cached_mb[rows] - dirty_mb[rows]
    cached = cached_mb[rows]
    last = last_access_s[rows]
    act, inact = np.zeros(excess.size), np.zeros(excess.size)
    for j in range(rows.size):
        act[vm[j]] += cached[j] * (1.0 if active_of[rows[j]] else 0.0)
        inact[vm[j]] += cached[j] * (0.0 if active_of[rows[j]] else 1.0)
    demote = np.empty(excess.size)
    any_demote = False
    for v in range(excess.size):
        demote[v] = np_max(act[v] - 2.0 * inact[v], 0.0) / 3.0
        any_demote = any_demote or demote[v] != 0
    if any_demote:  # the active list is cut to twice the inactive one: its least recently used files first
        a = np.flatnonzero(active_of[rows])
        order = a[_by_group_then(vm[a], last[a], excess.size)]
        before = _cum_before(vm[order], cached[order])
        for j in range(order.size):
            if before[j] < demote[vm[order[j]]]:
                active_of[rows[order[j]]] = False
    active = active_of[rows]
    order = _by_group_then(2 * vm + active, last, 2 * excess.size)  # by VM, inactive first, then LRU first
    before = _cum_before(vm[order], clean[order])
    for j in range(order.size):
        o = order[j]
        cached_mb[rows[o]] -= np_min(np_max(excess[vm[o]] - before[j], 0.0), clean[o])


@numba.njit(cache=True, nogil=True)
def write_back(
    vm_of: np.ndarray, dirty_mb: np.ndarray, dirty_since_s: np.ndarray, resident: np.ndarray, wb_mb: np.ndarray
) -> None:
    """`vcloud.pagecache.write_back` on the file table's columns (`dirty_mb` is changed in place)."""
    keep = np.zeros(resident.size, np.bool_)
    for j in range(resident.size):
        f = resident[j]
        keep[j] = dirty_mb[f] > 0 and wb_mb[vm_of[f]] > 0
    rows = resident[keep]
    if rows.size == 0:
        return
    vm = vm_of[rows]
    order = rows[_by_group_then(vm, dirty_since_s[rows], wb_mb.size)]  # by VM, the oldest dirty files first
    dirty = dirty_mb[order]
    before = _cum_before(vm_of[order], dirty)
    for j in range(order.size):
        dirty_mb[order[j]] -= np_min(np_max(wb_mb[vm_of[order[j]]] - before[j], 0.0), dirty[j])


@numba.njit(inline="always")
def _clip_scalar(x: float, low: float, high: float) -> float:
    """`np.clip(x, low, high)` with scalar bounds: x itself on a tie (0.0 vs -0.0) and if NaN."""
    return low if x < low else (high if x > high else x)


@numba.njit(cache=True, nogil=True)
def reclaim(
    dt: float,
    inflate_mb_s: float,
    free_mb_s: float,
    deflate_mb_s: float,
    max_fraction: float,
    idle_tax: float,
    size: np.ndarray,
    limit_cfg: np.ndarray,
    granted: np.ndarray,
    shares: np.ndarray,
    in_pool: np.ndarray,
    vm_host: np.ndarray,
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
            f = _clip_scalar(touched[v] / held_before[v] if held_before[v] > 0 else 1.0, 0.0, 1.0)
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


@numba.njit(cache=True, nogil=True)
def sum_by(vm: np.ndarray, values: np.ndarray, n_vm: int) -> np.ndarray:
    """`np.bincount(vm, values, minlength=n_vm)`, always floats (NumPy gives int64 zeros for no rows): sums in row
    order."""
    out = np.zeros(n_vm)
    for j in range(vm.size):
        out[vm[j]] += values[j]
    return out


@numba.njit(inline="always")
def sum_at(vm: np.ndarray, values: np.ndarray, rows: np.ndarray, n_vm: int) -> np.ndarray:
    """`sum_by(vm[rows], values[rows], n_vm)` without the two gathered copies: the same adds in the same order (the
    page cache's resident files are thousands on a 600-node cluster, read three times a tick)."""
    out = np.zeros(n_vm)
    for j in range(rows.size):
        f = rows[j]
        out[vm[f]] += values[f]
    return out


@numba.njit(cache=True, nogil=True)
def cache_fit(
    dt: float,
    now: float,
    dirty_ratio: float,
    background_ratio: float,
    expire_s: float,
    guest_mem: np.ndarray,
    used: np.ndarray,
    disk_mbps: np.ndarray,
    vm_host: np.ndarray,
    files: tuple,
    resident: np.ndarray,
    vm_cached: np.ndarray,
    f_file: np.ndarray,
    f_item: np.ndarray,
    f_vm: np.ndarray,
    f_write: np.ndarray,
    f_hit: np.ndarray,
    remaining: np.ndarray,
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """`vcloud.engine.stage_cache` once the guests have files: each VM's cache memory (what the guest does not hold
    resident), its excess evicted; the flusher's write-back want; each file stream's disk MB per MB (reads: 1 - the
    file's cached share) and each writer's share of its VM's headroom below the dirty limit. `files`: the file
    table's vm, size_mb, cached_mb, dirty_mb, dirty_since_s, last_access_s, active columns. `vm_cached`: each VM's
    cached MB if the memory stage counted it (else empty). Returns the cache memory, write-back want, disk MB per
    MB and dirty headroom MB/s per file stream."""
    vm_of, size_mb, cached_mb, dirty_mb, dirty_since_s, last_access_s, active = files
    n_vm, k = used.size, f_file.size
    cap = np.empty(n_vm)
    for v in range(n_vm):
        cap[v] = np_max(guest_mem[v] - used[v], 0.0)
    cached = vm_cached if vm_cached.size else sum_at(vm_of, cached_mb, resident, n_vm)
    excess = cached - cap
    over = np.flatnonzero(excess > 0)
    if over.size:
        for v in range(n_vm):
            excess[v] = np_max(excess[v], 0.0)
        evict(vm_of, cached_mb, dirty_mb, active, last_access_s, resident, over, excess)
    dirty_vm, expired = np.zeros(n_vm), np.zeros(n_vm)  # each VM's dirty MB, and its dirty MB past expire_s
    for j in range(resident.size):
        f = resident[j]
        v, dirty = vm_of[f], dirty_mb[f]
        dirty_vm[v] += dirty
        expired[v] += dirty * (1.0 if now - dirty_since_s[f] >= expire_s else 0.0)
    wb_want, headroom = np.empty(n_vm), np.empty(n_vm)
    for v in range(n_vm):
        due = np_max(np_max(expired[v], dirty_vm[v] - background_ratio * cap[v]), 0.0)
        wb_want[v] = np_min(due / dt, disk_mbps[vm_host[v]])
        headroom[v] = np_max(dirty_ratio * cap[v] - dirty_vm[v], 0.0) / dt
    factor, bonus, writing = np.empty(k), np.empty(k), np.empty(k)
    for j in range(k):
        f = f_file[j]
        hit = np_min(cached_mb[f] / size_mb[f] if size_mb[f] > 0 else 0.0, f_hit[j])
        factor[j] = 1.0 if f_write[j] else 1.0 - hit
        # the headroom below the dirty limit, shared by the VM's writers that still have something to write
        writing[j] = 1.0 if f_write[j] and remaining[f_item[j]] > 0 else 0.0
    writers = sum_by(f_vm, writing, n_vm)
    for j in range(k):
        v = f_vm[j]
        bonus[j] = (headroom[v] / writers[v] if writers[v] > 0 else 0.0) * writing[j]
    return cap, wb_want, factor, bonus


@numba.njit(cache=True, nogil=True)
def cache_files_update(
    dt: float,
    now: float,
    progress: np.ndarray,
    s_factor: np.ndarray,
    s_bonus: np.ndarray,
    file_rows: np.ndarray,
    f_item: np.ndarray,
    f_vm: np.ndarray,
    f_need: np.ndarray,
    f_write: np.ndarray,
    touched: np.ndarray,
    f_inv: np.ndarray,
    files: tuple,
    item_sums: tuple,
    vm_sums: tuple,
    count_touched: bool,
) -> None:
    """`vcloud.engine.stage_cache_update`'s file part: what the tick's file streams read (from the cache: hit; from
    disk: miss, now cached) and wrote (dirty below the dirty limit, through to disk beyond it), into the files
    `touched` (`f_inv`: each stream's place among them) and per item (read_disk_mb, read_cache_mb) and VM
    (read_disk_mb, read_cache_mb, cache_touched_mb if `count_touched`)."""
    _vm_of, size_mb, cached_mb, dirty_mb, dirty_since_s, last_access_s, active = files
    item_disk, item_cache = item_sums
    vm_disk, vm_cache, vm_touched = vm_sums
    k, m, n, n_vm = file_rows.size, touched.size, progress.size, vm_disk.size
    logical, dirtied, hit, miss, written = np.empty(k), np.empty(k), np.empty(k), np.empty(k), np.empty(k)
    for j in range(k):
        write = 1.0 if f_write[j] else 0.0
        read = 0.0 if f_write[j] else 1.0
        logical[j] = progress[f_item[j]] * f_need[j]
        dirtied[j] = np_min(logical[j], s_bonus[file_rows[j]] * dt) * write
        disk_mb = logical[j] * s_factor[file_rows[j]] - dirtied[j]
        hit[j] = (logical[j] - disk_mb) * read
        miss[j] = disk_mb * read
        written[j] = logical[j] * write
    grown, filled_mb = sum_by(f_inv, written, m), sum_by(f_inv, miss + written, m)
    dirtier, used_mb, hit_mb = sum_by(f_inv, dirtied, m), sum_by(f_inv, logical, m), sum_by(f_inv, hit, m)
    for j in range(m):
        f = touched[j]
        size_mb[f] += grown[j]
        cached_mb[f] = np_min(cached_mb[f] + filled_mb[j], size_mb[f])
        was_clean = dirty_mb[f] <= 0
        dirty_mb[f] += dirtier[j]
        if was_clean and dirty_mb[f] > 0:
            dirty_since_s[f] = now
        if used_mb[j] > 0:
            last_access_s[f] = now
        if hit_mb[j] > 0:
            active[f] = True
    add_disk, add_cache = sum_by(f_item, miss, n), sum_by(f_item, hit, n)
    for i in range(n):
        item_disk[i] += add_disk[i]
        item_cache[i] += add_cache[i]
    add_disk, add_cache, add_touched = sum_by(f_vm, miss, n_vm), sum_by(f_vm, hit, n_vm), sum_by(f_vm, logical, n_vm)
    for v in range(n_vm):
        vm_disk[v] += add_disk[v]
        vm_cache[v] += add_cache[v]
        if count_touched:
            vm_touched[v] += add_touched[v]


@numba.njit(cache=True, nogil=True)
def cache_settle(
    dt: float, files: tuple, resident: np.ndarray, wb_got: np.ndarray, cache_cap: np.ndarray, batch: float
) -> tuple[np.ndarray, np.ndarray]:
    """`vcloud.engine.stage_cache_update`'s end: the flusher's write-back, then each VM's cache back within its
    memory (evicting `batch` of it beyond the excess). Returns each VM's cached and dirty MB."""
    vm_of, _size_mb, cached_mb, dirty_mb, dirty_since_s, last_access_s, active = files
    n_vm = wb_got.size
    any_wb = False
    for v in range(n_vm):
        any_wb = any_wb or wb_got[v] != 0
    if any_wb:
        write_back(vm_of, dirty_mb, dirty_since_s, resident, wb_got * dt)
    cached = sum_at(vm_of, cached_mb, resident, n_vm)
    excess = cached - cache_cap  # what this tick's reads cached
    over = np.flatnonzero(excess > 0)
    if over.size:  # reclaim in a batch, down to the low watermark (kswapd reclaims to its high watermark)
        budget = np.empty(n_vm)
        for v in range(n_vm):
            budget[v] = np_max(excess[v] + batch * cache_cap[v], 0.0)
        evict(vm_of, cached_mb, dirty_mb, active, last_access_s, resident, over, budget)
        cached = sum_at(vm_of, cached_mb, resident, n_vm)
    return cached, sum_at(vm_of, dirty_mb, resident, n_vm)


@numba.njit(cache=True, nogil=True)
def host_pool_share(
    vm_cap: np.ndarray,
    vm_host: np.ndarray,
    host_mhz: np.ndarray,
    pooled: np.ndarray,
    limit0: np.ndarray,
    reservation: np.ndarray,
    group: np.ndarray,
    w: np.ndarray,
    shares: np.ndarray,
) -> np.ndarray:
    """A host's cores through host-local pools (vcloud/hostpool.py): each host's pool first gets its reservation (at
    most what its VMs can use), then it and the host's other VMs share the rest by weight; the pool's grant goes to
    its VMs by their shares. `group`/`w`: the first level's items (the host pools, then every VM: a pooled VM with
    weight 0)."""
    n_host, n_vm = host_mhz.size, vm_cap.size
    pooled_cap = np.empty(n_vm)
    cap = np.empty(n_host + n_vm)
    for v in range(n_vm):
        pooled_cap[v] = vm_cap[v] * (1.0 if pooled[v] else 0.0)
        cap[n_host + v] = vm_cap[v] * (0.0 if pooled[v] else 1.0)
    pooled_sum = sum_by(vm_host, pooled_cap, n_host)
    floor, free = np.empty(n_host), np.empty(n_host)
    for h in range(n_host):
        pool_cap = np_min(pooled_sum[h], limit0[h])
        floor[h] = np_min(np_min(reservation[h], pool_cap), host_mhz[h])
        cap[h] = pool_cap - floor[h]
        free[h] = host_mhz[h] - floor[h]
    got = fill(group, w, cap, free, np.zeros(0))
    for h in range(n_host):
        free[h] = got[h] + floor[h]
    inner = fill(vm_host, shares, pooled_cap, free, pooled_sum)
    for v in range(n_vm):
        if not pooled[v]:
            inner[v] = got[n_host + v]
    return inner


@numba.njit(cache=True, nogil=True)
def share_cpu(
    want: np.ndarray,
    weight: np.ndarray,
    vm: np.ndarray,
    vm_vcpu_mhz: np.ndarray,
    vm_limit: np.ndarray,
    vm_host: np.ndarray,
    vm_weight: np.ndarray,
    host_mhz: np.ndarray,
    pools: tuple,
) -> tuple[np.ndarray, np.ndarray]:
    """Host cores -> VMs by entitlement (capped by demand and limit; through host-local pools if `pools` holds
    `cpu_setup`'s pool arrays, else empty arrays) -> threads by weight (capped by
    want). Returns each VM's and each item's MHz."""
    pooled, limit0, reservation, group, w, shares = pools
    n_vm = vm_host.size
    vm_want = sum_by(vm, want, n_vm)
    vm_cap = np.empty(n_vm)
    for v in range(n_vm):
        vm_cap[v] = np_min(np_min(vm_want[v], vm_vcpu_mhz[v]), vm_limit[v])
    if pooled.size:
        vm_got = host_pool_share(vm_cap, vm_host, host_mhz, pooled, limit0, reservation, group, w, shares)
    else:
        vm_got = fill(vm_host, vm_weight, vm_cap, host_mhz, np.zeros(0))
    return vm_got, fill(vm, weight, want, vm_got, vm_want)


@numba.njit(cache=True, nogil=True)
def share_io(
    s_want: np.ndarray, swap_want: np.ndarray, wb_want: np.ndarray, io_group: np.ndarray, io_bw: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Equal shares per stream on each datastore and NIC; a swap and a write-back stream per VM on its datastore.
    Returns the streams', the swap streams' and the write-back streams' MB/s."""
    k, n_vm = s_want.size, swap_want.size
    got = fill(io_group, np.zeros(0), np.concatenate((s_want, swap_want, wb_want)), io_bw, np.zeros(0))
    return got[:k].copy(), got[k : k + n_vm].copy(), got[k + n_vm :].copy()


@numba.njit(inline="always")
def _close(a: np.ndarray, b: np.ndarray) -> bool:
    """`np.allclose(a, b)` (rtol 1e-5, atol 1e-8) for finite arrays; an infinite or NaN entry is never close."""
    for i in range(a.size):  # noqa: SIM110 (a loop, not a generator: numba compiles it)
        if not abs(a[i] - b[i]) <= 1e-8 + 1e-5 * abs(b[i]):
            return False
    return True


@numba.njit(inline="always")
def _equal(a: np.ndarray, b: np.ndarray) -> bool:
    for i in range(a.size):  # noqa: SIM110 (a loop, not a generator: numba compiles it)
        if a[i] != b[i]:
            return False
    return True


@numba.njit(inline="always")
def _larger(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    out = np.empty(a.size)
    for i in range(a.size):
        out[i] = np_max(a[i], b[i])
    return out


@numba.njit(cache=True, nogil=True)
def pipeline(
    rounds: int,
    any_multi: bool,
    firsts: tuple,
    items: tuple,
    streams: tuple,
    vms: tuple,
    pools: tuple,
    io: tuple,
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """`vcloud.engine.stage_pipeline`: rounds of sharing in which each need of a multi-resource phase asks only what
    the phase's other needs let it use (`asks`); a resource whose asks did not change is not shared again, and the
    rounds stop once the asks settle. `firsts`: the first round's grants (CPU, streams, swap, write-back). Returns
    each item's rate, the last round's grants and each item's CPU rate while runnable."""
    got_cpu1, got_io1, swap_got1, wb_got1 = firsts
    need_cpu, vm, want_cpu, cpu_weight, wait_rows, load_rows = items
    item, starts, owners, multi, s_want, s_need, s_bonus = streams
    vm_vcpu_mhz, vm_limit, vm_host, vm_weight, host_mhz = vms
    swap_want, wb_want, io_group, io_bw = io
    rate, cpu, ratio_io = rates(got_cpu1, need_cpu, got_io1, s_bonus, s_need, starts, owners, wait_rows, load_rows)
    got_cpu, got_io, swap_got, wb_got = got_cpu1, got_io1, swap_got1, wb_got1
    if any_multi:
        first_cpu, first_io = cpu, ratio_io
        shared_cpu, shared_io = want_cpu, s_want  # the asks the current grants answer
        asked_cpu, asked_io = np.zeros(0), np.zeros(0)
        for r in range(rounds - 1):
            # a need's potential: the larger of what it got competing with its standalone want (round 1) and now
            # (two needs that cap each other's asks would otherwise never grow again)
            want, ask_io = asks(_larger(first_cpu, cpu), _larger(first_io, ratio_io), item, starts, owners, multi,
                                want_cpu, need_cpu, s_want, s_need, s_bonus)  # fmt: skip
            if r > 0 and _close(want, asked_cpu) and _close(ask_io, asked_io):
                break
            asked_cpu, asked_io = want, ask_io
            if not _equal(want, shared_cpu):
                got_cpu = share_cpu(want, cpu_weight, vm, vm_vcpu_mhz, vm_limit, vm_host, vm_weight, host_mhz, pools)[1]
                shared_cpu = want
            if not _equal(ask_io, shared_io):
                got_io, swap_got, wb_got = share_io(ask_io, swap_want, wb_want, io_group, io_bw)
                shared_io = ask_io
            rate, cpu, ratio_io = rates(got_cpu, need_cpu, got_io, s_bonus, s_need, starts, owners, wait_rows,
                                        load_rows)  # fmt: skip
    runnable = np.empty(rate.size)
    for i in range(rate.size):
        runnable[i] = np_max(got_cpu1[i], (rate[i] if np.isfinite(rate[i]) else 0.0) * need_cpu[i])
    return rate, got_cpu, got_io, swap_got, wb_got, runnable


@numba.njit(cache=True, nogil=True)
def demand(
    dt: float,
    k: int,
    has_load: bool,
    items: tuple,
    vm: np.ndarray,
    is_load: np.ndarray,
    stall: np.ndarray,
    s_item: np.ndarray,
    s_need: np.ndarray,
    s_base: np.ndarray,
    f_need: np.ndarray,
    s_bonus: np.ndarray,
    load_want: np.ndarray,
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """`vcloud.engine.stage_demand`'s arithmetic: each item's standalone CPU want (its threads' cores, less the page-in
    stall; a load its own) and weight, each stream's standalone MB/s (`s_base`: at most the item's and the device's
    ceiling; nothing when nothing is left, all of it is cached or all of it fits below the dirty limit; a load
    stream `load_want`), and an open phase's want of no more than it has. `items`: threads, need_cpu, core_mhz,
    load_cpu_mhz, remaining, open. Returns want_cpu, cpu_weight, s_want and s_full (the want at full speed)."""
    threads, need_cpu, core_mhz, load_cpu_mhz, remaining, open_ = items
    n, n_s = need_cpu.size, s_item.size
    want_cpu, cpu_weight = np.empty(n), np.empty(n)
    for i in range(n):
        cpu_threads = threads[i] * (1.0 if need_cpu[i] > 0 else 0.0)
        want, weight = cpu_threads * core_mhz[i], cpu_threads
        if has_load and is_load[i]:
            want = load_cpu_mhz[i]
            weight = want / core_mhz[i]
        want_cpu[i] = want * (1.0 - stall[vm[i]])
        cpu_weight[i] = weight
    s_full, left = s_base.copy(), np.empty(n_s)
    any_fed = False
    for s in range(n_s):
        left[s] = remaining[s_item[s]]
        s_full[s] *= 1.0 if left[s] > 0 and s_need[s] > 0 else 0.0
        any_fed = any_fed or open_[s_item[s]]
    any_bonus = False
    for s in range(k):
        any_bonus = any_bonus or s_bonus[s] != 0
    if any_bonus:
        for s in range(k):
            s_full[s] *= 1.0 if left[s] * f_need[s] > s_bonus[s] * dt else 0.0
    if has_load:
        for s in range(k, n_s):
            s_full[s] = load_want[s - k]
    if not any_fed:
        return want_cpu, cpu_weight, s_full, s_full
    s_want = np.empty(n_s)  # an open phase (a queue fed by others) wants no more than it has in the tick
    for s in range(n_s):
        s_want[s] = np_min(s_full[s], left[s] * (s_need[s] / dt) if open_[s_item[s]] else _INF)
    return want_cpu, cpu_weight, s_want, s_full


@numba.njit(inline="always")
def _sum_block(a: np.ndarray, start: int, n: int) -> float:
    """NumPy's pairwise sum of at most 128 float64s (`np_sum`'s leaves): a plain loop below 8, else 8 accumulators."""
    if n < 8:
        res = 0.0
        for i in range(n):
            res += a[start + i]
        return res
    r0, r1, r2, r3 = a[start], a[start + 1], a[start + 2], a[start + 3]
    r4, r5, r6, r7 = a[start + 4], a[start + 5], a[start + 6], a[start + 7]
    i, end = 8, n - n % 8
    while i < end:
        j = start + i
        r0 += a[j]
        r1 += a[j + 1]
        r2 += a[j + 2]
        r3 += a[j + 3]
        r4 += a[j + 4]
        r5 += a[j + 5]
        r6 += a[j + 6]
        r7 += a[j + 7]
        i += 8
    res = ((r0 + r1) + (r2 + r3)) + ((r4 + r5) + (r6 + r7))
    while i < n:
        res += a[start + i]
        i += 1
    return res


@numba.njit(cache=True, nogil=True)
def np_sum(a: np.ndarray, start: int, n: int) -> float:
    """`a[start:start + n].sum()` for float64 as NumPy adds it: its pairwise summation (blocks of at most 128 with 8
    accumulators, `_sum_block`; above, the first n/2 rounded down to a multiple of 8 plus the rest, each summed the
    same way; the sum starts from 0.0). A contiguous 1-D array's sum, a C-ordered row's (`sum(axis=1)`) and a
    C-contiguous matrix's whole sum (its elements in order). The halving is walked with a stack, not recursion
    (numba's on-disk cache of a recursive function crashed when loaded)."""
    return _sum_block(a, start, n) if n <= 128 else _np_sum_on(a, start, n, _halving_stack())


@numba.njit(inline="always")
def _halving_stack() -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """The stack `np_sum` and `np_sum_sparse` walk the halving with, and the sparse blocks' 8 lanes (a caller summing
    many rows makes one: an allocation per block was a third of a sparse sum)."""
    depth = 4 * 64
    return np.empty(depth, np.int64), np.empty(depth, np.int64), np.empty(depth, np.bool_), np.empty(depth), np.empty(8)


@numba.njit(inline="always")
def _push_halves(f_start: np.ndarray, f_n: np.ndarray, f_join: np.ndarray, top: int, s: int, m: int) -> int:
    """NumPy's pairwise split of [s, s + m): push the join, then the right half, then the left (visited first; the
    left half's length a multiple of 8). Returns the new top."""
    n2 = m // 2
    n2 -= n2 % 8
    f_start[top + 1], f_n[top + 1], f_join[top + 1] = s, m, True
    f_start[top + 2], f_n[top + 2], f_join[top + 2] = s + n2, m - n2, False
    f_start[top + 3], f_n[top + 3], f_join[top + 3] = s, n2, False
    return top + 3


@numba.njit(cache=True, nogil=True)
def _np_sum_on(a: np.ndarray, start: int, n: int, stack: tuple) -> float:
    """`np_sum` with its stack given."""
    if n <= 128:
        return _sum_block(a, start, n)
    f_start, f_n, f_join, vals, _ = stack
    top, nv = 0, 0
    f_start[0], f_n[0], f_join[0] = start, n, False
    while top >= 0:
        s, m, join = f_start[top], f_n[top], f_join[top]
        top -= 1
        if join:  # both halves are summed: left + right
            vals[nv - 2] = vals[nv - 2] + vals[nv - 1]
            nv -= 1
        elif m <= 128:
            vals[nv] = _sum_block(a, s, m)
            nv += 1
        else:
            top = _push_halves(f_start, f_n, f_join, top, s, m)
    return vals[0]


@numba.njit(cache=True, nogil=True)
def np_sum_sparse(pos: np.ndarray, val: np.ndarray, lo: int, hi: int, n: int) -> float:
    """`np_sum` of a length-`n` array that is zero but for `val[lo:hi]` at the ascending positions `pos[lo:hi]`, without
    the array: the same halving and 8-lane blocks, each lane and tail adding only its entries (0.0 + x is x, and a
    half with no entry adds 0.0). Equal to the dense sum bit for bit for values that are not -0.0 (MB here)."""
    return _np_sum_sparse_on(pos, val, lo, hi, n, _halving_stack())


@numba.njit(inline="always")
def _sparse_block(
    pos: np.ndarray, val: np.ndarray, k: int, hi: int, s: int, m: int, r: np.ndarray
) -> tuple[float, int]:
    """`_sum_block` of the entries k.. that fall in [s, s + m) (m <= 128), `r` its 8 lanes; returns the sum and the
    next entry. Each entry is added to its lane by index, not through a chain of branches on the lane (the entries'
    lanes are too mixed for those to be predicted: twice the time)."""
    end = s + m
    if m < 8:
        res = 0.0
        while k < hi and pos[k] < end:
            res += val[k]
            k += 1
        return res, k
    for j in range(8):
        r[j] = 0.0
    body = end - m % 8
    while k < hi and pos[k] < body:
        r[(pos[k] - s) & 7] += val[k]
        k += 1
    res = ((r[0] + r[1]) + (r[2] + r[3])) + ((r[4] + r[5]) + (r[6] + r[7]))
    while k < hi and pos[k] < end:
        res += val[k]
        k += 1
    return res, k


@numba.njit(cache=True, nogil=True)
def _np_sum_sparse_on(pos: np.ndarray, val: np.ndarray, lo: int, hi: int, n: int, stack: tuple) -> float:
    """`np_sum_sparse` with its stack given."""
    if n <= 128:
        return _sparse_block(pos, val, lo, hi, 0, n, stack[4])[0]
    f_start, f_n, f_join, vals, lanes = stack
    top, nv, k = 0, 0, lo  # k: the next entry (halves are visited left to right)
    f_start[0], f_n[0], f_join[0] = 0, n, False
    while top >= 0:
        s, m, join = f_start[top], f_n[top], f_join[top]
        top -= 1
        if join:
            vals[nv - 2] = vals[nv - 2] + vals[nv - 1]
            nv -= 1
        elif k >= hi or pos[k] >= s + m:  # no entry in this half
            vals[nv] = 0.0
            nv += 1
        elif m <= 128:
            vals[nv], k = _sparse_block(pos, val, k, hi, s, m, lanes)
            nv += 1
        else:
            top = _push_halves(f_start, f_n, f_join, top, s, m)
    return vals[0]


@numba.njit(inline="always")
def _find(cols: np.ndarray, length: int, c: int) -> int:
    """Where column `c` is (or would go) among a queue row's ascending columns `cols[:length]`: a binary search."""
    lo, hi = 0, length
    while lo < hi:
        mid = (lo + hi) >> 1
        if cols[mid] < c:
            lo = mid + 1
        else:
            hi = mid
    return lo


@numba.njit(cache=True, nogil=True)
def queue_widened(q_col: np.ndarray, q_val: np.ndarray, q_len: np.ndarray, need: int) -> tuple[np.ndarray, np.ndarray]:
    """The sparse queue's rows with room for `need` entries each (at least twice the room they had), entries kept."""
    rows, cap = q_col.shape
    room = max(need, 2 * cap)
    new_col, new_val = np.zeros((rows, room), np.int64), np.zeros((rows, room))
    for r in range(rows):
        for t in range(q_len[r]):
            new_col[r, t], new_val[r, t] = q_col[r, t], q_val[r, t]
    return new_col, new_val


@numba.njit(inline="always")
def _count(col_nnz: np.ndarray, col_big: np.ndarray, c: int, old: float, new: float, drained_mb: float) -> None:
    """Keep a column's counts of entries (nonzero cells) and of entries above `drained_mb` as cell `c` goes from
    `old` to `new` (0.0: no entry)."""
    col_nnz[c] += (1 if new != 0 else 0) - (1 if old != 0 else 0)
    col_big[c] += (1 if new > drained_mb else 0) - (1 if old > drained_mb else 0)


@numba.njit(inline="always")
def _add_cell(
    q_col: np.ndarray,
    q_val: np.ndarray,
    q_len: np.ndarray,
    r: int,
    c: int,
    x: float,
    col_nnz: np.ndarray,
    col_big: np.ndarray,
    drained_mb: float,
) -> None:
    """`queue[r, c] += x` on the sparse queue (the row has room): an entry grows, or one is put at its place; an entry
    that becomes 0.0 is taken out."""
    length = q_len[r]
    p = _find(q_col[r], length, c)
    if p < length and q_col[r, p] == c:
        old = q_val[r, p]
        new = old + x
        _count(col_nnz, col_big, c, old, new, drained_mb)
        if new != 0:
            q_val[r, p] = new
            return
        for t in range(p, length - 1):
            q_col[r, t], q_val[r, t] = q_col[r, t + 1], q_val[r, t + 1]
        q_len[r] = length - 1
    elif x != 0:
        for t in range(length, p, -1):
            q_col[r, t], q_val[r, t] = q_col[r, t - 1], q_val[r, t - 1]
        q_col[r, p], q_val[r, p] = c, x
        q_len[r] = length + 1
        _count(col_nnz, col_big, c, 0.0, x, drained_mb)


@numba.njit(inline="always")
def _add_row(
    q_col: np.ndarray,
    q_val: np.ndarray,
    q_len: np.ndarray,
    r: int,
    add_col: np.ndarray,
    add_val: np.ndarray,
    lo: int,
    hi: int,
    place: np.ndarray,
    col_nnz: np.ndarray,
    col_big: np.ndarray,
    drained_mb: float,
) -> None:
    """`queue[r, c] += x` for `add_val[lo:hi]` (> 0) at the distinct ascending columns `add_col[lo:hi]` (the row has
    room): entries grow; the new ones go to their places in one backward pass from the row's end, which moves only
    the entries after the first new place (`place`: scratch, as long as `add_col`)."""
    length = q_len[r]
    rc, rv = q_col[r], q_val[r]
    new, p = 0, 0
    for k in range(lo, hi):
        c = add_col[k]
        while p < length and rc[p] < c:  # the columns ascend: the search goes on from the last place
            p += 1
        if p < length and rc[p] == c:
            old = rv[p]
            rv[p] = old + add_val[k]
            _count(col_nnz, col_big, c, old, rv[p], drained_mb)
            place[k] = -1
        else:
            place[k] = p
            new += 1
    if new == 0:
        return
    w, i = length + new - 1, length - 1
    for k in range(hi - 1, lo - 1, -1):
        if place[k] < 0:
            continue
        while i >= place[k]:
            rc[w], rv[w] = rc[i], rv[i]
            w -= 1
            i -= 1
        rc[w], rv[w] = add_col[k], add_val[k]
        _count(col_nnz, col_big, add_col[k], 0.0, add_val[k], drained_mb)
        w -= 1
    q_len[r] = length + new


@numba.njit(cache=True, nogil=True)
def queue_add(
    q_col: np.ndarray,
    q_val: np.ndarray,
    q_len: np.ndarray,
    rows: np.ndarray,
    cols: np.ndarray,
    amount: np.ndarray,
    col_nnz: np.ndarray,
    col_big: np.ndarray,
    drained_mb: float,
) -> tuple[np.ndarray, np.ndarray]:
    """`queue[rows, cols] += amount` on the sparse queue (distinct cells; an amount of 0.0 makes no entry). Returns
    its rows, widened if some row had no room."""
    extra = np.zeros(q_len.size, np.int64)
    for i in range(rows.size):
        extra[rows[i]] += 1
    need = 0
    for r in range(q_len.size):
        if extra[r]:
            need = max(need, q_len[r] + extra[r])
    if need > q_col.shape[1]:
        q_col, q_val = queue_widened(q_col, q_val, q_len, need)
    for i in range(rows.size):
        _add_cell(q_col, q_val, q_len, rows[i], cols[i], amount[i], col_nnz, col_big, drained_mb)
    return q_col, q_val


@numba.njit(cache=True, nogil=True)
def queue_drop_col(
    q_col: np.ndarray,
    q_val: np.ndarray,
    q_len: np.ndarray,
    c: int,
    stale: np.ndarray,
    col_nnz: np.ndarray,
    col_big: np.ndarray,
) -> np.ndarray:
    """`queue[:, c] = 0.0` on the sparse queue, the rows that held some of it marked stale; returns the column as it
    was, dense (its sums then are NumPy's of the former column). Looks at no row when the column has no entry."""
    rows = q_len.size
    out = np.zeros(rows)
    if col_nnz[c] == 0:
        return out
    for r in range(rows):
        length = q_len[r]
        if length == 0:
            continue
        p = _find(q_col[r], length, c)
        if p < length and q_col[r, p] == c:
            out[r] = q_val[r, p]
            for t in range(p, length - 1):
                q_col[r, t], q_val[r, t] = q_col[r, t + 1], q_val[r, t + 1]
            q_len[r] = length - 1
            stale[r] = True
    col_nnz[c] = col_big[c] = 0
    return out


@numba.njit(cache=True, nogil=True)
def queue_dense(q_col: np.ndarray, q_val: np.ndarray, q_len: np.ndarray, cols: int) -> np.ndarray:
    """The sparse queue as the dense rows x `cols` matrix it stands for (inspection, tests, invariants)."""
    out = np.zeros((q_len.size, cols))
    for r in range(q_len.size):
        for t in range(q_len[r]):
            out[r, q_col[r, t]] = q_val[r, t]
    return out


@numba.njit(inline="always")
def _merge_row(
    q_col: np.ndarray,
    q_val: np.ndarray,
    q_len: np.ndarray,
    r: int,
    add_col: np.ndarray,
    add_val: np.ndarray,
    lo: int,
    hi: int,
    tmp_col: np.ndarray,
    tmp_val: np.ndarray,
    col_nnz: np.ndarray,
    col_big: np.ndarray,
    drained_mb: float,
) -> None:
    """Row `r` of the sparse queue plus `add_val[lo:hi]` at the ascending columns `add_col[lo:hi]` (each cell
    `queue[r, c] += x`), its entries that are 0.0 taken out: one merge of the two sorted lists through `tmp_*`."""
    length = q_len[r]
    rc, rv = q_col[r], q_val[r]
    i, k, o = 0, lo, 0
    while i < length or k < hi:
        if k >= hi or (i < length and rc[i] < add_col[k]):
            c, new = rc[i], rv[i]
            i += 1
            if new == 0:
                col_nnz[c] -= 1
                continue
        elif i >= length or add_col[k] < rc[i]:
            c, new = add_col[k], add_val[k]
            k += 1
            if new == 0:
                continue
            _count(col_nnz, col_big, c, 0.0, new, drained_mb)
        else:
            c, old = rc[i], rv[i]  # an entry, maybe 0.0 (served in full this tick): counted among the entries
            new = old + add_val[k]
            i += 1
            k += 1
            col_big[c] += (1 if new > drained_mb else 0) - (1 if old > drained_mb else 0)
            if new == 0:
                col_nnz[c] -= 1
                continue
        tmp_col[o], tmp_val[o] = c, new
        o += 1
    for t in range(o):
        rc[t], rv[t] = tmp_col[t], tmp_val[t]
    q_len[r] = o


@numba.njit(cache=True, nogil=True)
def shuffle_move(
    q_col: np.ndarray,
    q_val: np.ndarray,
    q_len: np.ndarray,
    width: int,
    n: int,
    left: np.ndarray,
    serve_row: np.ndarray,
    remaining: np.ndarray,
    col_node: np.ndarray,
    held: np.ndarray,
    served_read_mb: np.ndarray,
    served_sent_mb: np.ndarray,
    row_sum: np.ndarray,
    stale: np.ndarray,
    col_nnz: np.ndarray,
    col_big: np.ndarray,
    drained_mb: float,
) -> tuple[np.ndarray, np.ndarray, float, np.ndarray, np.ndarray, bool, bool, np.ndarray, np.ndarray]:
    """`hadoop_layer.shuffle.ShuffleServer.tick`'s arithmetic on the sparse queue (row r's requests: `q_val[r,
    :q_len[r]]` at the ascending reduce columns `q_col[r, :q_len[r]]`, all below `width`; `n` serving nodes: rows 0..n-1
    read, n..2n-1 send; `col_node`: each column's reduce's node): what each servlet moved in the tick (`left` less its
    item's remaining) is shared among its requests (water-filling), taken off its queue row, added to the served
    totals; what was read for a reduce on another node joins the send queue, what was sent is held for the reduce.
    Then the changed and stale rows are summed again (`row_sum`, `stale`), rows left with float dust are emptied,
    entries that reached 0.0 are taken out, and `left` becomes what each row has left (`ShuffleServer._set_work`'s
    bookkeeping). The queue, `held`, the served totals, `row_sum`, `stale`, `left` and the column counts (`col_nnz`:
    entries, `col_big`: entries above `drained_mb`) change in place. Returns each row's MB left, the reduce columns
    whose queues or held bytes changed (they may have drained), the MB fetched on the serving node, the running items'
    rows and their MB left (in row order), whether a row with no item has something to serve, whether any bytes are
    held, and the queue's rows (widened if a send row had no room).

    The sums of the dense queue's NumPy form, bit for bit: row sums and whole sums pairwise over the `width` columns
    (`_np_sum_sparse_on`: the entries at their places, the zeros left out, exact since no cell is -0.0), the sent
    rows' column sums in row order; each cell sees the same operations in the same order (taken off, then what its
    node read added). Only the served rows' entries are read, each served row's in one pass while they are at hand
    (its share of the served MB, its sums, what it sends on or holds, and the entries left): a row served in full is
    emptied at once; then the read rows' bytes join their send rows."""
    rows2 = 2 * n
    done = np.empty(rows2)
    for i in range(rows2):
        r = serve_row[i]
        done[i] = left[i] - (remaining[r] if r >= 0 else 0.0)
    served = np.flatnonzero(done > 0)
    m = served.size
    need = 0  # a served read row's requests may each join its node's send row
    n_read = n_fetched = n_part = n_nz = 0
    for i in range(m):
        s = served[i]
        if s < n:
            need = max(need, q_len[n + s] + q_len[s])
            n_read += 1
            n_fetched += q_len[s]
        if done[s] < left[s]:
            n_part += 1
            n_nz += q_len[s]
    if need > q_col.shape[1]:
        q_col, q_val = queue_widened(q_col, q_val, q_len, need)
    share = np.zeros(0)
    if n_part:  # servers that could not serve their whole queue: water-fill their requests
        group = np.empty(n_nz, np.int64)
        cap = np.empty(n_nz)
        capacity = np.empty(n_part)
        p = q = 0
        for i in range(m):
            s = served[i]
            if done[s] < left[s]:
                capacity[p] = done[s]
                for t in range(q_len[s]):
                    group[q], cap[q] = p, q_val[s, t]
                    q += 1
                p += 1
        share = fill(group, np.zeros(0), cap, capacity, np.zeros(0))
    moved = np.zeros(held.size, np.bool_)  # the reduces whose queues or held bytes changed
    by_server = np.zeros(rows2)
    stack = _halving_stack()
    col_sum = np.zeros(width)  # the sent rows' column sums, in row order (the first row, then each next added)
    # read for reduces elsewhere: to send; the rest was fetched locally. The read rows' requests one after the other,
    # at their places in an n_read x width matrix (its whole sum is NumPy's pairwise sum of that matrix)
    f_pos, f_col, fetched = np.empty(n_fetched, np.int64), np.empty(n_fetched, np.int64), np.empty(n_fetched)
    got_row = np.empty(q_col.shape[1])  # a partly served row's shares
    q = fq = 0
    n_sent = 0
    for i in range(m):  # the read rows first (served is ascending)
        s = served[i]
        length = q_len[s]
        rc, rv = q_col[s], q_val[s]
        full = done[s] >= left[s]
        got = rv  # served in full: each request gets what it had
        if not full:
            got = got_row
            for t in range(length):
                got_row[t] = share[q + t]
            q += length
        by_server[s] = _np_sum_sparse_on(rc, got, 0, length, width, stack)
        if s >= n:
            n_sent += 1
            for t in range(length):
                col_sum[rc[t]] += got[t]
        else:
            for t in range(length):
                c = rc[t]
                f_pos[fq], f_col[fq], fetched[fq] = i * width + c, c, got[t] * (1.0 if col_node[c] != s else 0.0)
                fq += 1
        if full:  # every entry reaches 0.0: the row is emptied
            for t in range(length):
                c = rc[t]
                moved[c] = True
                col_nnz[c] -= 1
                if rv[t] > drained_mb:
                    col_big[c] -= 1
            q_len[s] = 0
        else:  # taken off; the entries that reach 0.0 are taken out
            o = 0
            for t in range(length):
                c, old, g = rc[t], rv[t], got[t]
                new = old
                if g != 0:
                    new = old - g
                    moved[c] = True
                    if old > drained_mb and not new > drained_mb:
                        col_big[c] -= 1
                if new != 0:
                    rc[o], rv[o] = c, new
                    o += 1
                else:
                    col_nnz[c] -= 1
            q_len[s] = o
        stale[s] = True
    for i in range(n):
        served_read_mb[i] += by_server[i]
        served_sent_mb[i] += by_server[n + i]
    if n_sent:
        for j in range(width):
            held[j] += col_sum[j]
    local = _np_sum_on(by_server, 0, n, stack) - _np_sum_sparse_on(f_pos, fetched, 0, n_fetched, n_read * width, stack)
    # what each read row read joins its node's send row (after every served row was taken off, as the dense form)
    tmp_col, tmp_val = np.empty(q_col.shape[1], np.int64), np.empty(q_col.shape[1])
    fq = 0
    for i in range(n_read):
        s = served[i]
        hi = fq
        while hi < n_fetched and f_pos[hi] < (i + 1) * width:
            hi += 1
        _merge_row(q_col, q_val, q_len, n + s, f_col, fetched, fq, hi, tmp_col, tmp_val, col_nnz, col_big, drained_mb)
        stale[n + s] = True
        fq = hi
    for r in range(rows2):
        if stale[r]:
            row_sum[r] = _np_sum_sparse_on(q_col[r], q_val[r], 0, q_len[r], width, stack)
            stale[r] = False
    want = row_sum.copy()
    for r in range(rows2):
        if want[r] > 0 and want[r] <= drained_mb:  # float dust of repeated subtraction: served
            for t in range(q_len[r]):
                c = q_col[r, t]
                moved[c] = True
                _count(col_nnz, col_big, c, q_val[r, t], 0.0, drained_mb)
            q_len[r] = 0
            want[r] = row_sum[r] = 0.0
    n_live, start = 0, False
    for r in range(rows2):
        left[r] = want[r]
        if serve_row[r] >= 0:
            n_live += 1
        elif want[r] > 0:
            start = True
    rows, rows_want = np.empty(n_live, np.int64), np.empty(n_live)
    k = 0
    for r in range(rows2):
        if serve_row[r] >= 0:
            rows[k], rows_want[k] = serve_row[r], want[r]
            k += 1
    any_held = False
    for j in range(held.size):
        any_held = any_held or held[j] != 0
    return want, moved, local, rows, rows_want, start, any_held, q_col, q_val


@numba.njit(cache=True, nogil=True)
def closing_drained(
    q_col: np.ndarray,
    q_val: np.ndarray,
    q_len: np.ndarray,
    row_sum: np.ndarray,
    stale: np.ndarray,
    held: np.ndarray,
    closing: np.ndarray,
    col_nnz: np.ndarray,
    col_big: np.ndarray,
    drained_mb: float,
) -> np.ndarray:
    """`hadoop_layer.shuffle.ShuffleServer._close_drained`'s test per closing reduce column: is what it still has
    pending (its cells in the rows that may hold something, `row_sum > 0` or `stale`, plus what is held for it) at most
    `drained_mb`? A sum of cells >= 0 is at least its largest (rounding is monotonic), so a column with an entry above
    `drained_mb` (`col_big`) is not drained, and one without entries has its held bytes pending (0.0 + x is x); only a
    column of float dust is summed, as NumPy sums the gathered `queue[np.ix_(rows, closing)]` along its rows (one
    column: pairwise, a contiguous array; more: row after row, each column alone)."""
    k, n_rows = closing.size, row_sum.size
    out = np.empty(k, np.bool_)
    for j in range(k):
        c = closing[j]
        if col_big[c] > 0:
            out[j] = False
            continue
        pending = 0.0
        if col_nnz[c] > 0:
            pos, val = np.empty(col_nnz[c], np.int64), np.empty(col_nnz[c])
            m = e = 0  # m: the rows that may hold something so far; e: the column's entries among them
            for r in range(n_rows):
                if row_sum[r] > 0 or stale[r]:
                    length = q_len[r]
                    p = _find(q_col[r], length, c)
                    if p < length and q_col[r, p] == c:
                        pos[e], val[e] = m, q_val[r, p]
                        e += 1
                    m += 1
            if k == 1:
                pending = np_sum_sparse(pos, val, 0, e, m)
            else:
                for t in range(e):
                    pending = pending + val[t]
        out[j] = pending + held[c] <= drained_mb
    return out


@numba.njit(cache=True, nogil=True)
def resum_rows(
    q_col: np.ndarray, q_val: np.ndarray, q_len: np.ndarray, width: int, row_sum: np.ndarray, stale: np.ndarray
) -> None:
    """`hadoop_layer.shuffle.ShuffleServer._sums`: the `stale` rows of the sparse queue summed again into `row_sum`
    (over its first `width` columns), their flags cleared. The dense row's NumPy sum, bit for bit: its pairwise sum over
    the entries alone (`_np_sum_sparse_on`; no cell is -0.0)."""
    stack = _halving_stack()
    for r in range(row_sum.size):
        if stale[r]:
            row_sum[r] = _np_sum_sparse_on(q_col[r], q_val[r], 0, q_len[r], width, stack)
            stale[r] = False


@numba.njit(inline="always")
def _move_flat(cols: tuple, dst: np.ndarray, src: np.ndarray) -> None:
    for col in cols:
        for j in range(dst.size):
            col[dst[j]] = col[src[j]]


@numba.njit(inline="always")
def _move_wide(cols: tuple, dst: np.ndarray, src: np.ndarray) -> None:
    for col in cols:
        for j in range(dst.size):
            col[dst[j], :] = col[src[j], :]


@numba.njit(cache=True, nogil=True)
def move_rows(dst: np.ndarray, src: np.ndarray, flat: tuple, wide: tuple) -> None:
    """`vcloud.tables.ItemTable.remove_rows`' copies: row `src[j]` of every column into row `dst[j]`. `flat` and
    `wide` hold the table's one- and two-dimensional columns in tuples of one type each (numba iterates a tuple of
    one type): a tick's ended items leave with one call, not one NumPy copy a column (29). Each column's copies are
    made in list order, so a row may be given and later received (a freed row's content moves down, then the row is
    made blank from the blank row)."""
    for flat_cols in literal_unroll(flat):
        _move_flat(flat_cols, dst, src)
    for wide_cols in literal_unroll(wide):
        _move_wide(wide_cols, dst, src)


@numba.njit(cache=True, nogil=True)
def running_entries(
    tag: np.ndarray, n: int, extra_gid: np.ndarray, task_kind: np.ndarray, task_job: np.ndarray, task_start: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray, int]:
    """`hadoop_layer.interfaces.ClusterView.running_arrays`' entries in one pass: the rows of the first `n` whose tag
    (a task gid) is not 0, ascending; their gids, then `extra_gid`'s; each entry's task kind, job and first launch,
    how many entries its task has, and the number of distinct tasks. Integer gathers and counts: the NumPy form's
    values (np.flatnonzero, fancy indexing, np.sort's distinct count, np.bincount(gid)[gid]; tests/test_kernels.py),
    without its ten calls at every change of the item table's rows (FlexSlot: most ticks)."""
    m = 0
    for r in range(n):
        if tag[r] != 0:
            m += 1
    total = m + extra_gid.size
    rows, gid = np.empty(m, np.int64), np.empty(total, np.int64)
    j = 0
    for r in range(n):
        if tag[r] != 0:
            rows[j], gid[j] = r, tag[r]
            j += 1
    for e in range(extra_gid.size):
        gid[m + e] = extra_gid[e]
    kind, job, start = np.empty(total, task_kind.dtype), np.empty(total, np.int64), np.empty(total)
    for e in range(total):
        g = gid[e]
        kind[e], job[e], start[e] = task_kind[g], task_job[g], task_start[g]
    attempts = np.ones(total, np.int64)
    order = _ascending_order(gid)
    tasks, a = 0, 0
    while a < total:  # each run of equal gids: one task, its entries' count
        b = a + 1
        while b < total and gid[order[b]] == gid[order[a]]:
            b += 1
        tasks += 1
        if b - a > 1:
            for c in range(a, b):
                attempts[order[c]] = b - a
        a = b
    return rows, gid, kind, job, start, attempts, tasks


@numba.njit(cache=True, nogil=True)
def lag_bounds(
    finished: np.ndarray,
    tasks: np.ndarray,
    gid: np.ndarray,
    kind: np.ndarray,
    job: np.ndarray,
    task_start: np.ndarray,
    progress: np.ndarray,
    attempts: np.ndarray,
    max_execs: int,
    sure_at: float,
    maybe_at: float,
) -> tuple[float, float, float, float, np.ndarray]:
    """`policies.speculation.hadoop.lag_bounds`' arithmetic over the running attempts: each (job, kind)'s average
    progress, (`done` finished tasks + the running ones' progress, a task with backups counted once at its best
    attempt's) / `size` tasks, by 2 x job + kind; then per kind the earliest task start among the single-attempt
    tasks whose job average and gap below it are at least `sure_at`, and `maybe_at`. Returns the map bounds (sure,
    maybe), the reduce bounds, and a 3 x groups array: the groups with entries (in order of their first entry, as
    floats), their averages and their own "maybe" bounds (the earliest start of such a task of the group; inf if
    none). The NumPy form's bits: np.maximum.at and the bincount in entry order, minimum in entry order (the starts
    are times: no NaN, no -0.0). `finished` and `tasks`: by 2 x job + kind, the running jobs' finished tasks and tasks
    (`hadoop_layer.ledger.RunningLedger`; 0 of 1 past their end). Only the entries' groups are worked out: the highest
    job number with an entry nears the run's job count (5,000 on the SWIM day) while a few jobs run, and arrays over
    every group were most of a verdict there (31 us of 76 entries). The best attempts are found among the entries of
    tasks with backups, grouped by a sort of their gids, not in an array indexed by gid (the run's task count)."""
    m = progress.size
    top = 1
    for i in range(m):
        top = max(top, job[i] + 1)
    weight = progress
    spread = False
    for i in range(m):
        spread = spread or not attempts[i] <= max_execs
    if spread:  # a task with a backup counts once, at its best attempt's progress
        weight = np.empty(m)
        for i in range(m):
            weight[i] = np_max(0.0, progress[i]) / attempts[i]
        shared = np.flatnonzero(attempts > 1)  # the entries of tasks with backups, grouped by gid in entry order
        order = shared[_ascending_order(gid[shared])]
        a = 0
        while a < order.size:
            b, best = a, 0.0
            while b < order.size and gid[order[b]] == gid[order[a]]:
                best = np_max(best, progress[order[b]])
                b += 1
            for c in range(a, b):
                weight[order[c]] = best / attempts[order[c]]
            a = b
    # the groups with entries, in order of their first entry: `place` (by group, written for those only) holds each
    # one's place among them; each sum starts at 0.0 and adds its entries' weights in entry order (the bincount's)
    place = np.empty(2 * top, np.int64)
    for i in range(m):
        place[2 * job[i] + kind[i]] = -1
    groups, sums = np.empty(m, np.int64), np.empty(m)
    count = 0
    for i in range(m):
        g = 2 * job[i] + kind[i]
        if place[g] < 0:
            place[g], groups[count], sums[count] = count, g, 0.0
            count += 1
        sums[place[g]] += weight[i]
    averages = np.empty(count)
    for c in range(count):
        g = groups[c]
        done, size = (finished[g], tasks[g]) if g < finished.size else (0.0, 1.0)
        averages[c] = (done + sums[c]) / size
    sure = np.full(2, np.inf)
    maybe = np.full(2, np.inf)
    # the groups (as floats: exact below 2**53), their averages and own "maybe" bounds, one array (one boxing a call)
    by_group = np.empty((3, count))
    group_maybe = by_group[2]
    group_maybe[:] = np.inf
    for i in range(m):
        if attempts[i] <= max_execs:
            k = kind[i]
            c = place[2 * job[i] + k]
            average = averages[c]
            gap = average - progress[i]
            if average >= sure_at and gap >= sure_at:
                sure[k] = np_min(sure[k], task_start[i])
            if average >= maybe_at and gap >= maybe_at:
                maybe[k] = np_min(maybe[k], task_start[i])
                group_maybe[c] = np_min(group_maybe[c], task_start[i])
    for c in range(count):
        by_group[0, c], by_group[1, c] = groups[c], averages[c]
    return sure[0], maybe[0], sure[1], maybe[1], by_group


@numba.njit(cache=True, nogil=True)
def item_progress(remaining: np.ndarray, amount: np.ndarray, lo: np.ndarray, hi: np.ndarray, n: int) -> np.ndarray:
    """`vcloud.model.CloudModel.item_progress`' arithmetic over the first `n` rows: the share of the current phase
    done, 1 - remaining / amount (nothing done where the amount is not positive) clipped to [0, 1], placed between the
    phase's progress marks, lo + (hi - lo) x done. One pass instead of five NumPy calls (a tick's first progress read,
    every tick a backup could be asked for). The NumPy form's bits: the same operations per row, in its order."""
    out = np.empty(n)
    for i in range(n):
        done = 1.0 - (remaining[i] / amount[i] if amount[i] > 0 else 0.0)
        if done < 0.0:
            done = 0.0
        elif done > 1.0:
            done = 1.0
        out[i] = lo[i] + (hi[i] - lo[i]) * done
    return out


@numba.njit(cache=True, nogil=True)
def set_remaining(
    rows: np.ndarray, remaining: np.ndarray, item_remaining: np.ndarray, phase_amount: np.ndarray
) -> bool:
    """`vcloud.model.CloudModel.set_remaining_rows`' arithmetic: each of the distinct `rows` gets `remaining` left of
    its phase, whose amount changes by as much (remaining - what it had, added). Returns False, changing nothing, if
    a remaining is below 0. The NumPy form's bits: the same operations per row (a shuffle tick sets every serving
    item's, some 1,200 rows in the SWIM day: three fancy-indexed passes cost four times this loop)."""
    for i in range(rows.size):
        if remaining[i] < 0:
            return False
    for i in range(rows.size):
        r = rows[i]
        phase_amount[r] += remaining[i] - item_remaining[r]
        item_remaining[r] = remaining[i]
    return True


@numba.njit(inline="always")
def _take_in_rotation(
    cum: float, r: int, mb: float, v: int, to: int, free: int, disk_mb: np.ndarray, send_mb: np.ndarray,
    nic_mb: np.ndarray,
) -> tuple[float, bool]:
    """A crowded reduce's `r`-th candidate in rotation order, node `v` with `mb` for it (`cum`: the costs of those
    before it, summed in that order): the sum with its cost (`mb` over what one stream moves in a tick: the serving
    disk on the reduce's own node `to`, else the serving node's send and the reduce's NIC), and whether a copier takes
    it (the time taken before it is below the free copiers', or fewer than those were taken)."""
    cost = mb / (disk_mb[v] if v == to else np_min(send_mb[v], nic_mb[to]))
    cum = cost if r == 0 else cum + cost
    return cum, (cum - cost < free) or (r < free)


@numba.njit(cache=True, nogil=True)
def serving_rows(serve_row: np.ndarray, want: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """`hadoop_layer.shuffle.ShuffleServer._set_work`'s split of the queue rows: the item rows of those whose item
    runs (`serve_row` >= 0) and what they want, in row order, and the rows with no item yet that want more than 0
    (NumPy's `serve_row[live]`, `want[live]`, `np.flatnonzero(~live & (want > 0))`: seven calls)."""
    m = k = 0
    for i in range(serve_row.size):
        if serve_row[i] >= 0:
            m += 1
        elif want[i] > 0:
            k += 1
    rows, rows_want, idle = np.empty(m, np.int64), np.empty(m), np.empty(k, np.int64)
    m = k = 0
    for i in range(serve_row.size):
        if serve_row[i] >= 0:
            rows[m], rows_want[m] = serve_row[i], want[i]
            m += 1
        elif want[i] > 0:
            idle[k] = i
            k += 1
    return rows, rows_want, idle


@numba.njit(cache=True, nogil=True)
def held_ready(
    held: np.ndarray, col_row: np.ndarray, item_kind: np.ndarray, starting: int
) -> tuple[np.ndarray, np.ndarray, np.ndarray, float]:
    """`hadoop_layer.shuffle.ShuffleServer._deliver`'s choice: the reduce columns holding bytes (not 0) whose item's
    phase is not `starting` (the JVM start) ascending, their item rows and held MB (then set to 0 in `held`), and
    the MB's sum as NumPy's `held[cols].sum()` adds it (pairwise: `np_sum`). Nine NumPy calls a tick before."""
    m = 0
    for c in range(held.size):
        if held[c] != 0 and item_kind[col_row[c]] != starting:
            m += 1
    cols, rows, mb = np.empty(m, np.int64), np.empty(m, np.int64), np.empty(m)
    j = 0
    for c in range(held.size):
        if held[c] != 0 and item_kind[col_row[c]] != starting:
            cols[j], rows[j], mb[j] = c, col_row[c], held[c]
            held[c] = 0.0
            j += 1
    return cols, rows, mb, np_sum(mb, 0, m)


@numba.njit(cache=True, nogil=True)
def copiers_look(changed: np.ndarray, waiting: np.ndarray, in_flight: np.ndarray, copiers: int, hi: int) -> bool:
    """Some of the first `hi` reduce columns changed, has a backlog and a free copier: `copiers_take` may take a node
    at the next look (`CopierShuffle.before_tick`; NumPy's `(changed & (waiting > 0) & (in_flight < copiers)).any()`
    was five calls a tick)."""
    for c in range(hi):  # noqa: SIM110  (a loop: numba compiles no generator for any())
        if changed[c] and waiting[c] > 0 and in_flight[c] < copiers:
            return True
    return False


@numba.njit(cache=True, nogil=True)
def copiers_take(
    copiers: int,
    changed: np.ndarray,
    waiting: np.ndarray,
    in_flight: np.ndarray,
    col_row: np.ndarray,
    item_kind: np.ndarray,
    starting: int,
    backlog: np.ndarray,
    position: np.ndarray,
    next_at: np.ndarray,
    to_node: np.ndarray,
    fetch_node: np.ndarray,
    fetch_col: np.ndarray,
    disk_mb: np.ndarray,
    send_mb: np.ndarray,
    nic_mb: np.ndarray,
    q_col: np.ndarray,
    q_val: np.ndarray,
    q_len: np.ndarray,
    stale: np.ndarray,
    col_nnz: np.ndarray,
    col_big: np.ndarray,
    drained_mb: float,
) -> tuple[np.ndarray, np.ndarray, bool, np.ndarray, np.ndarray]:
    """`hadoop_layer.copiers.CopierShuffle.before_tick`: the reduce columns whose backlog or copiers changed, that
    have a backlog, a free copier and a running shuffle phase (the kind of their item row, `col_row`, is not
    `starting`: the JVM start) are looked at; their free
    copiers take nodes in rotation (`_take`'s rule: each free copier at least one node, more while the copier-ticks
    spent before a node are below the free copiers). Changes the per-column state, `backlog`, the sparse queue's read
    rows (`queue[node, c] += backlog[c, node]`, `shuffle_move`'s layout, with its column counts) and `stale` in place;
    returns the fetches under way (`fetch_node`, `fetch_col`: by column, then node, as they come, the new ones among
    them: `copiers_release` walks them along the queue's rows; their order moves no number), whether any node was
    taken and the queue's rows (widened if a read row had no room). The NumPy form's bits: cost = MB / one stream's
    MB a tick, the costs before a node summed in rotation order as np.cumsum does (less the node's own).

    A column's candidates are its nodes with a backlog (`waiting` counts them) but those with a fetch under way
    (uniqueHosts), so their number is known before its row is read, and the scan of the row stops at the last one;
    a crowded reduce's few candidates are put in rotation order by insertion, and one with many (hundreds on a busy
    cluster) walks its rotation instead (the inverse of `position`'s row): they come in its order without a sort.
    Only the nodes taken are kept."""
    n, n_cols = backlog.shape[1], changed.size
    cols = np.empty(n_cols, np.int64)
    m = 0
    for c in range(n_cols):
        if changed[c] and waiting[c] > 0 and in_flight[c] < copiers and item_kind[col_row[c]] != starting:
            cols[m] = c
            m += 1
    if m == 0:
        return fetch_node, fetch_col, False, q_col, q_val
    k_of = np.full(n_cols, -1, np.int64)
    for j in range(m):
        changed[cols[j]] = False
        k_of[cols[j]] = j
    # the looked-at columns' fetches under way, grouped by column (`first_busy[j]:first_busy[j + 1]`); their nodes'
    # backlogs are not candidates
    count = np.zeros(m, np.int64)
    first_busy = np.zeros(m + 1, np.int64)
    for f in range(fetch_col.size):
        j = k_of[fetch_col[f]]
        if j >= 0:
            first_busy[j + 1] += 1
            if backlog[fetch_col[f], fetch_node[f]] > 0:
                count[j] -= 1
    for j in range(m):
        first_busy[j + 1] += first_busy[j]
    busy_nodes = np.empty(first_busy[m], np.int64)
    at_busy = first_busy[:m].copy()
    for f in range(fetch_col.size):
        j = k_of[fetch_col[f]]
        if j >= 0:
            busy_nodes[at_busy[j]] = fetch_node[f]
            at_busy[j] += 1
    total = 0
    crowded = False  # some reduce has more nodes than free copiers: it takes them in rotation order
    for j in range(m):
        c = cols[j]
        count[j] += waiting[c]
        total += count[j]
        crowded = crowded or count[j] > copiers - in_flight[c]
    if total == 0:
        return fetch_node, fetch_col, False, q_col, q_val
    # the nodes taken, by reduce: one with no more candidates than free copiers takes them all (found by node); a
    # crowded one walks its rotation from where it stopped and takes each candidate while the time taken before it is
    # below the free copiers' (or fewer than those were taken): the costs summed in rotation order as np.cumsum does,
    # less the node's own. Each candidate's `at` is its place in the rotation from where it stopped.
    k, node, at = np.empty(total, np.int64), np.empty(total, np.int64), np.empty(total, np.int64)
    busy = np.zeros(n, np.bool_)
    node_at = np.empty(n, np.int64)  # a crowded reduce's rotation: the node at each place
    e = 0
    for j in range(m):
        if count[j] == 0:
            continue
        c = cols[j]
        for f in range(first_busy[j], first_busy[j + 1]):
            busy[busy_nodes[f]] = True
        row, shift, free, to = backlog[c], next_at[c], copiers - in_flight[c], to_node[c]
        if count[j] <= max(free, 24):  # found by node (stopping at the last candidate), then, if crowded, put in
            first = e  # rotation order by insertion and taken while time is left
            for v in range(n):
                if row[v] > 0 and not busy[v]:
                    place = position[c, v] - shift
                    k[e], node[e], at[e] = j, v, place + n if place < 0 else place
                    e += 1
                    if e - first == count[j]:
                        break
            if count[j] > free:
                for i in range(first + 1, e):
                    place, v = at[i], node[i]
                    p = i - 1
                    while p >= first and at[p] > place:
                        at[p + 1], node[p + 1] = at[p], node[p]
                        p -= 1
                    at[p + 1], node[p + 1] = place, v
                cum, kept = 0.0, first
                for i in range(first, e):
                    v = node[i]
                    cum, take = _take_in_rotation(cum, i - first, row[v], v, to, free, disk_mb, send_mb, nic_mb)
                    if take:
                        k[kept], node[kept], at[kept] = j, v, at[i]
                        kept += 1
                e = kept
        else:  # many: walk the rotation, the candidates coming in its order
            for v in range(n):
                node_at[position[c, v]] = v
            cum, r = 0.0, 0
            for a in range(n):
                place = shift + a
                v = node_at[place - n if place >= n else place]
                if row[v] > 0 and not busy[v]:
                    cum, take = _take_in_rotation(cum, r, row[v], v, to, free, disk_mb, send_mb, nic_mb)
                    if take:
                        k[e], node[e], at[e] = j, v, a
                        e += 1
                    r += 1
                    if r == count[j]:
                        break
        for f in range(first_busy[j], first_busy[j + 1]):
            busy[busy_nodes[f]] = False
    n_new = e
    extra = np.zeros(n, np.int64)  # new entries per read row
    for f in range(n_new):
        extra[node[f]] += 1
    need = 0
    for v in range(n):
        if extra[v]:
            need = max(need, q_len[v] + extra[v])
    if need > q_col.shape[1]:
        q_col, q_val = queue_widened(q_col, q_val, q_len, need)
    last = np.full(m, -1, np.int64)
    taken = np.zeros(m, np.int64)
    new_c, new_v = np.empty(n_new, np.int64), np.empty(n_new, np.int64)  # by column, then node
    for f in range(n_new):
        j = k[f]
        new_c[f], new_v[f] = cols[j], node[f]
        taken[j] += 1
        last[j] = max(last[j], at[f])
    for j in range(m):
        c = cols[j]
        in_flight[c] += taken[j]
        waiting[c] -= taken[j]
        if taken[j] > 0:
            next_at[c] = (next_at[c] + last[j] + 1) % n
    if crowded:  # a crowded column's nodes came in rotation order: by node within each column
        lo = 0
        while lo < n_new:
            hi = lo + 1
            while hi < n_new and new_c[hi] == new_c[lo]:
                hi += 1
            if hi - lo > 24:
                new_v[lo:hi] = np.sort(new_v[lo:hi])
            else:
                for i in range(lo + 1, hi):
                    v = new_v[i]
                    p = i - 1
                    while p >= lo and new_v[p] > v:
                        new_v[p + 1] = new_v[p]
                        p -= 1
                    new_v[p + 1] = v
            lo = hi
    # queue[node, c] += backlog[c, node], row by row: the new fetches by node (a counting sort: by column within)
    start = np.zeros(n + 1, np.int64)
    for f in range(n_new):
        start[new_v[f] + 1] += 1
    for v in range(n):
        start[v + 1] += start[v]
    add_col, add_val = np.empty(n_new, np.int64), np.empty(n_new)
    at_v = start[:n].copy()
    for f in range(n_new):
        v, c = new_v[f], new_c[f]
        add_col[at_v[v]], add_val[at_v[v]] = c, backlog[c, v]
        backlog[c, v] = 0.0
        at_v[v] += 1
    place = np.empty(n_new, np.int64)
    for v in range(n):
        if start[v + 1] > start[v]:
            _add_row(q_col, q_val, q_len, v, add_col, add_val, start[v], start[v + 1], place, col_nnz, col_big,
                     drained_mb)  # fmt: skip
            stale[v] = True
    new_node = np.empty(fetch_node.size + n_new, np.int64)
    new_col = np.empty(fetch_col.size + n_new, np.int64)
    i = o = 0  # the new fetches put at their places among those under way (no pair in both): a few among many
    for f in range(n_new):
        c, v = new_c[f], new_v[f]
        lo, hi = i, fetch_node.size  # the first fetch under way after (c, v)
        while lo < hi:
            mid = (lo + hi) >> 1
            if fetch_col[mid] < c or (fetch_col[mid] == c and fetch_node[mid] < v):
                lo = mid + 1
            else:
                hi = mid
        span = lo - i
        new_node[o : o + span] = fetch_node[i:lo]
        new_col[o : o + span] = fetch_col[i:lo]
        o += span
        new_node[o], new_col[o] = v, c
        o += 1
        i = lo
    new_node[o:] = fetch_node[i:]
    new_col[o:] = fetch_col[i:]
    return new_node, new_col, True, q_col, q_val


@numba.njit(cache=True, nogil=True)
def cpu_setup(
    vcpus: np.ndarray,
    core_mhz_vm: np.ndarray,
    entitlement: np.ndarray,
    floor_mhz: float,
    cores: np.ndarray,
    core_mhz: np.ndarray,
    pool_limit: np.ndarray,
    pool_reservation: np.ndarray,
    in_pool: np.ndarray,
    vm_host: np.ndarray,
    cpu_shares: np.ndarray,
) -> tuple:
    """`vcloud.engine.stage_cpu`'s per-tick inputs of the sharing rounds in one call: each VM's vCPUs x core MHz and
    weight (entitlement + floor), each host's MHz, and, if some host has a finite pool limit, the host pools' arrays
    (else empty arrays): each VM pooled or not, each host's pool limit (0: none) and reservation, the first level's
    items and weights, each VM's shares inside its pool (the pools as one tuple). The NumPy form's bits (the bincount
    in VM order; the form: tests/test_kernels.py `numpy_pool_arrays`)."""
    n_host, n_vm = cores.size, vcpus.size
    vm_vcpu_mhz, weight, host_mhz = np.empty(n_vm), np.empty(n_vm), np.empty(n_host)
    for v in range(n_vm):
        vm_vcpu_mhz[v] = vcpus[v] * core_mhz_vm[v]
        weight[v] = entitlement[v] + floor_mhz
    any_pool = False
    for h in range(n_host):
        host_mhz[h] = cores[h] * core_mhz[h]
        any_pool = any_pool or np.isfinite(pool_limit[h])
    if not any_pool:
        none = (np.zeros(0, np.bool_), np.zeros(0), np.zeros(0), np.zeros(0, np.int64), np.zeros(0), np.zeros(0))
        return vm_vcpu_mhz, weight, host_mhz, none
    pooled = np.empty(n_vm, np.bool_)
    limit0, reservation = np.empty(n_host), pool_reservation.copy()
    group, w, shares = np.empty(n_host + n_vm, np.int64), np.zeros(n_host + n_vm), np.empty(n_vm)
    for h in range(n_host):
        limit0[h] = pool_limit[h] if np.isfinite(pool_limit[h]) else 0.0
        group[h] = h
    for v in range(n_vm):
        h = vm_host[v]
        pooled[v] = in_pool[v] and np.isfinite(pool_limit[h])
        w[h] += weight[v] * (1.0 if pooled[v] else 0.0)
        w[n_host + v] = weight[v] * (0.0 if pooled[v] else 1.0)
        group[n_host + v] = h
        shares[v] = cpu_shares[v] * (1.0 if pooled[v] else 0.0)
    return vm_vcpu_mhz, weight, host_mhz, (pooled, limit0, reservation, group, w, shares)


@numba.njit(cache=True, nogil=True)
def stream_groups(
    host: np.ndarray,
    device: np.ndarray,
    rack: np.ndarray,
    racks: int,
    uplink: int,
    io_mbps_max: np.ndarray,
    item: np.ndarray,
    io_bw: np.ndarray,
) -> tuple[np.ndarray, np.ndarray]:
    """Each stream's row of `io_bw` (on `device` of host row `host`: the host's datastore or NIC, or its rack's uplink
    out or in; `io_bw` holds the datastores, the NICs, then each rack's uplink out and in) and its ceiling, the smaller
    of its item's per-stream ceiling and the device's bandwidth (`np.minimum`'s). One compiled pass: the NumPy form
    (tests/test_kernels.py) was ~10 calls at every change of the item table's layout."""
    n_host, k = rack.size, host.size
    group, ceiling = np.empty(k, np.int64), np.empty(k)
    for j in range(k):
        d, h = device[j], host[j]
        group[j] = 2 * n_host + (d - uplink) * racks + rack[h] if d >= uplink else h + n_host * d
        ceiling[j] = np_min(io_mbps_max[item[j]], io_bw[group[j]])
    return group, ceiling


@numba.njit(cache=True, nogil=True)
def _distinct_ascending(values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """`np.unique(values, return_inverse=True)` of non-negative ids: by marking them in a bitmap over their range
    when it is narrow (a sort of ~1,150 file streams cost more than half of `flat_streams` on the SWIM day's busy
    ticks), else by a radix sort (`_ascending_order`: the range of file ids in use widens as a long run creates files,
    240,000 by mid-day, and a bitmap up to the highest id was swept every tick; numba's `np.sort` took ~0.9 ms for the
    ~8,700 file streams, ~3,000 files, of the day's busiest ticks)."""
    n = values.size
    lo, hi = 0, -1
    if n:
        lo, hi = values[0], values[0]
        for f in range(n):
            lo, hi = min(lo, values[f]), max(hi, values[f])
    inverse = np.empty(n, np.int64)
    if hi - lo < 8 * n + 64:
        marked, place = np.zeros(hi - lo + 1, np.bool_), np.empty(hi - lo + 1, np.int64)
        for f in range(n):
            marked[values[f] - lo] = True
        count = 0
        for x in range(hi - lo + 1):
            if marked[x]:
                place[x] = count
                count += 1
        distinct = np.empty(count, np.int64)
        for f in range(n):
            inverse[f] = place[values[f] - lo]
            distinct[inverse[f]] = values[f]
        return distinct, inverse
    order = _ascending_order(values)
    found = np.empty(n, np.int64)
    count = 0
    for j in range(n):
        f = order[j]
        if j == 0 or values[f] != values[order[j - 1]]:
            found[count] = values[f]
            count += 1
        inverse[f] = count - 1
    return found[:count].copy(), inverse


_RADIX_BITS = 11  # 2,048 buckets a pass: ids up to 2**22 above the smallest in two passes


@numba.njit(cache=True, nogil=True)
def _ascending_order(values: np.ndarray) -> np.ndarray:
    """`np.argsort(values, kind="stable")` of integers by a least-significant-digit radix sort of `values` less the
    smallest, _RADIX_BITS a pass (stable: equal values in place order). numba's own sorts are several times slower
    than NumPy's on thousands of integers: its merge argsort of 3,000 task ids took 5-7x this one's time (145 against
    19 us, 183 against 33 us in a slower minute)."""
    n, buckets = values.size, 1 << _RADIX_BITS
    if n == 0:
        return np.zeros(0, np.int64)
    lo, hi = values[0], values[0]
    for v in values:
        lo, hi = min(lo, v), max(hi, v)
    order, spare = np.arange(n), np.empty(n, np.int64)
    start = np.empty(buckets + 1, np.int64)
    shift = 0
    while shift == 0 or (hi - lo) >> shift:
        start[:] = 0
        for f in range(n):
            start[(((values[f] - lo) >> shift) & (buckets - 1)) + 1] += 1
        for b in range(buckets):
            start[b + 1] += start[b]
        for j in range(n):
            f = order[j]
            b = ((values[f] - lo) >> shift) & (buckets - 1)
            spare[start[b]] = f
            start[b] += 1
        order, spare = spare, order
        shift += _RADIX_BITS
    return order


@numba.njit(cache=True, nogil=True)
def flat_streams(
    stream_vm: np.ndarray,
    stream_device: np.ndarray,
    stream_file: np.ndarray,
    stream_need: np.ndarray,
    stream_write: np.ndarray,
    stream_hit: np.ndarray,
    rows: np.ndarray,
    need_cpu: np.ndarray,
    kind: np.ndarray,
    n: int,
    disk: int,
    wait: int,
    load: int,
) -> tuple:
    """`vcloud.engine.flat_streams`' arrays of `n` items whose streams are rows `rows[:n]` of the stream columns
    (the item table's own rows, or the live rows of `engine.live_items`: read in place, not copied out first) and
    whose CPU needs and kinds are `need_cpu` and `kind`: the streams in use (stream_vm >= 0) by item, then column,
    with their item, column, VM, device, MB per unit, file (-1 unless a datastore stream) and direction; per item
    whether its phase needs more than one resource (and whether any does); the file streams' places and columns,
    their files' distinct rows ascending and each one's place among them; where each item's streams start and those
    items; per item whether it is a LOAD phase (and whether any is), and the WAIT and LOAD rows. Integer gathers
    only: the NumPy form's values exactly (tests/test_kernels.py)."""
    width = stream_vm.shape[1]
    k = 0
    for i in range(n):
        r = rows[i]
        for c in range(width):
            if stream_vm[r, c] >= 0:
                k += 1
    item, col, vm = np.empty(k, np.int64), np.empty(k, np.int64), np.empty(k, np.int64)
    device, file = np.empty(k, np.int64), np.empty(k, np.int64)
    need, write = np.empty(k), np.empty(k, np.bool_)
    count = np.zeros(n, np.int64)
    j, n_file = 0, 0
    for i in range(n):
        r = rows[i]
        for c in range(width):
            if stream_vm[r, c] >= 0:
                item[j], col[j], vm[j] = i, c, stream_vm[r, c]
                device[j] = stream_device[r, c]
                file[j] = stream_file[r, c] if device[j] == disk else -1
                need[j], write[j] = stream_need[r, c], stream_write[r, c]
                count[i] += 1
                if file[j] >= 0:
                    n_file += 1
                j += 1
    multi = np.empty(n, np.bool_)
    any_multi = False
    for i in range(n):
        multi[i] = count[i] + (1 if need_cpu[i] > 0 else 0) > 1
        any_multi = any_multi or multi[i]
    file_rows = np.empty(n_file, np.int64)
    f_file, f_item, f_vm = np.empty(n_file, np.int64), np.empty(n_file, np.int64), np.empty(n_file, np.int64)
    f_need, f_write, f_hit = np.empty(n_file), np.empty(n_file, np.bool_), np.empty(n_file)
    f = 0
    for j in range(k):
        if file[j] >= 0:
            file_rows[f], f_file[f], f_item[f], f_vm[f] = j, file[j], item[j], vm[j]
            f_need[f], f_write[f], f_hit[f] = need[j], write[j], stream_hit[rows[item[j]], col[j]]
            f += 1
    f_touched, f_inv = _distinct_ascending(f_file)
    n_owner = 0
    for j in range(k):
        if j == 0 or item[j] != item[j - 1]:
            n_owner += 1
    starts, owners = np.empty(n_owner, np.int64), np.empty(n_owner, np.int64)
    o = 0
    for j in range(k):
        if j == 0 or item[j] != item[j - 1]:
            starts[o], owners[o] = j, item[j]
            o += 1
    is_load = np.empty(n, np.bool_)
    has_load = False
    n_wait = n_load = 0
    for i in range(n):
        is_load[i] = kind[i] == load
        has_load = has_load or is_load[i]
        n_wait += kind[i] == wait
        n_load += kind[i] == load
    wait_rows, load_rows = np.empty(n_wait, np.int64), np.empty(n_load, np.int64)
    n_wait = n_load = 0
    for i in range(n):
        if kind[i] == wait:
            wait_rows[n_wait] = i
            n_wait += 1
        if kind[i] == load:
            load_rows[n_load] = i
            n_load += 1
    return (item, col, vm, device, need, file, write, multi, starts, owners, any_multi, file_rows, n_file > 0,
            f_file, f_item, f_vm, f_need, f_write, f_hit, f_touched, f_inv, is_load, has_load, wait_rows,
            load_rows)  # fmt: skip


@numba.njit(cache=True, nogil=True)
def progress(
    dt: float, rate: np.ndarray, remaining: np.ndarray, has_load: bool, is_load: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """`vcloud.engine.stage_progress`: each item advances rate x dt units; a phase (not a LOAD) with no more left
    than that runs out in the tick, at the share of the tick its remaining work took (0 if it could not move) and
    with only its remaining work as progress. `remaining` is lowered in place (to 0 where a phase ran out; a LOAD's
    stays). Returns the progress, each item's seconds in its phase and the rows that ran out, ascending."""
    n = rate.size
    step, frac_dt = np.empty(n), np.empty(n)
    done = np.empty(n, np.int64)
    m = 0
    for i in range(n):
        p = rate[i] * dt
        frac_dt[i] = dt
        if p >= remaining[i] and not (has_load and is_load[i]):
            left = remaining[i]
            frac_dt[i] = (left / p if p > 0 else 0.0) * dt
            p = left
            done[m] = i
            m += 1
        step[i] = p
    for i in range(n):
        if has_load and is_load[i]:
            remaining[i] -= 0.0
        else:
            remaining[i] -= step[i]
    for j in range(m):
        remaining[done[j]] = 0.0
    return step, frac_dt, done[:m].copy()


@numba.njit(cache=True, nogil=True)
def memory_stage(
    dt: float,
    rates: tuple,
    vm_config: tuple,
    vm_state: tuple,
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
    then `reclaim`, whose balloon, target, hypervisor swap, held and touched MB are written to the VM columns
    `vm_state` (balloon_mb, mem_target_mb, hv_swap_mb, mem_held_mb, mem_touched_mb). `rates`: the balloon's
    inflate, free and deflate rates, its maximum fraction and the idle tax; `vm_config`: os_mem_mb,
    os_active_fraction, mem_mb, mem_limit_cfg_mb, mem_granted_mb, mem_shares, in_pool, host (the VMs' rows only).
    Returns used, active, cached and `reclaim`'s eight arrays."""
    inflate, free_rate, deflate, max_fraction, idle_tax = rates
    os_mem, os_active, size, limit_cfg, granted, shares, in_pool, vm_host = vm_config
    balloon_mb, target_mb, hv_swap_mb, held_mb, touched_mb = vm_state
    n_vm = size.size
    heap, heap_active = sum_by(item_vm, item_mem, n_vm), sum_by(item_vm, item_active, n_vm)
    used, active = np.empty(n_vm), np.empty(n_vm)
    for v in range(n_vm):
        used[v] = os_mem[v] + heap[v]
        active[v] = os_mem[v] * os_active[v] + heap_active[v]
    cached = sum_at(file_vm, file_cached, resident, n_vm) if count_files else np.zeros(n_vm)
    target, balloon, guest, hv_swap, held, stall, swapped, touched = reclaim(
        dt, inflate, free_rate, deflate, max_fraction, idle_tax, size, limit_cfg, granted, shares, in_pool, vm_host,
        pool_limit, balloon_mb[:n_vm], touched_mb[:n_vm], used, active, cached,
    )  # fmt: skip
    for v in range(n_vm):
        balloon_mb[v], target_mb[v], hv_swap_mb[v] = balloon[v], target[v], hv_swap[v]
        held_mb[v], touched_mb[v] = held[v], touched[v]
    return used, active, cached, target, balloon, guest, hv_swap, held, stall, swapped, touched


@numba.njit(cache=True, nogil=True)
def idle_rows(open_: np.ndarray, remaining: np.ndarray, need_cpu: np.ndarray, n: int) -> np.ndarray:
    """`vcloud.engine.idle_rows` over the first `n` rows: open phases with nothing left that need no CPU, ascending."""
    m = 0
    for i in range(n):
        if open_[i] and remaining[i] == 0 and need_cpu[i] == 0:
            m += 1
    rows = np.empty(m, np.int64)
    m = 0
    for i in range(n):
        if open_[i] and remaining[i] == 0 and need_cpu[i] == 0:
            rows[m] = i
            m += 1
    return rows


@numba.njit(cache=True, nogil=True)
def copiers_release(
    q_col: np.ndarray,
    q_val: np.ndarray,
    q_len: np.ndarray,
    fetch_node: np.ndarray,
    fetch_col: np.ndarray,
    in_flight: np.ndarray,
    changed: np.ndarray,
    drained_mb: float,
) -> tuple[np.ndarray, np.ndarray]:
    """`hadoop_layer.copiers.CopierShuffle._release`: the fetches whose read queue cell (sparse: `shuffle_move`'s
    layout) is drained free their copier (the reduce's count under way drops, its copiers look again); returns the
    fetches still under way, in order. The fetches come by column, then node (`copiers_take`), so each node's come by
    column: each is found by walking its node's row from where that node's last one stopped (one pass, no search)."""
    k = fetch_node.size
    keep = np.empty(k, np.bool_)
    at = np.zeros(q_len.size, np.int64)  # per row, where the walk is
    m = 0
    for f in range(k):
        v, c = fetch_node[f], fetch_col[f]
        t = at[v]
        while t < q_len[v] and q_col[v, t] < c:
            t += 1
        at[v] = t
        keep[f] = not (q_val[v, t] if t < q_len[v] and q_col[v, t] == c else 0.0) <= drained_mb
        if keep[f]:
            m += 1
        else:
            in_flight[fetch_col[f]] -= 1
            changed[fetch_col[f]] = True
    if m == k:
        return fetch_node, fetch_col
    nodes, cols = np.empty(m, np.int64), np.empty(m, np.int64)
    m = 0
    for f in range(k):
        if keep[f]:
            nodes[m], cols[m] = fetch_node[f], fetch_col[f]
            m += 1
    return nodes, cols


@numba.njit(cache=True, nogil=True)
def backlog_add(
    backlog: np.ndarray, node: int, cols: np.ndarray, share_mb: float, waiting: np.ndarray, changed: np.ndarray
) -> None:
    """`hadoop_layer.copiers.CopierShuffle.map_done`'s writes: `share_mb` more in node `node`'s backlog of each reduce
    column of `cols` (distinct), a column whose backlog there was empty counting one more node in `waiting`, each
    marked `changed`. One call instead of five NumPy calls (~4 us) at every map's end (140,000 in the SWIM day's
    first 20,000 s)."""
    for j in range(cols.size):
        c = cols[j]
        had = backlog[c, node]
        if had == 0:
            waiting[c] += 1
        backlog[c, node] = had + share_mb
        changed[c] = True


@numba.njit(cache=True, nogil=True)
def demand_inputs(
    core_mhz: np.ndarray,
    disk_mbps: np.ndarray,
    nic_mbps: np.ndarray,
    rack: np.ndarray,
    oversubscription: float,
    vm_host: np.ndarray,
    vm: np.ndarray,
    need: np.ndarray,
    factor: np.ndarray,
    swapped: np.ndarray,
    swap_touch_rate: float,
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """`vcloud.engine.stage_demand`'s per-tick inputs (the hosts' rows only): each VM's and item's core MHz, `io_bw`
    (datastores, NICs, then each rack's uplink out and in: its hosts' NICs summed in host order over the
    oversubscription, or inf if it is 0: no rack limit), each stream's disk MB per unit (`need` x the cache's
    factor) and each VM's page-in want (swapped x touch rate, at most its datastore)."""
    n_host, n_vm = core_mhz.size, vm_host.size
    n_rack = 0
    for h in range(n_host):
        n_rack = max(n_rack, rack[h] + 1)
    uplink = np.full(n_rack, _INF)
    if oversubscription > 0:
        nics = np.zeros(n_rack)
        for h in range(n_host):
            nics[rack[h]] += nic_mbps[h]
        for r in range(n_rack):
            uplink[r] = nics[r] / oversubscription
    io_bw = np.empty(2 * n_host + 2 * n_rack)
    for h in range(n_host):
        io_bw[h], io_bw[n_host + h] = disk_mbps[h], nic_mbps[h]
    for r in range(n_rack):
        io_bw[2 * n_host + r] = io_bw[2 * n_host + n_rack + r] = uplink[r]
    core_mhz_vm, swap_want = np.empty(n_vm), np.empty(n_vm)
    for v in range(n_vm):
        core_mhz_vm[v] = core_mhz[vm_host[v]]
        swap_want[v] = np_min(swapped[v] * swap_touch_rate, disk_mbps[vm_host[v]])
    core_mhz_item = np.empty(vm.size)
    for i in range(vm.size):
        core_mhz_item[i] = core_mhz_vm[vm[i]]
    s_need = np.empty(need.size)
    for s in range(need.size):
        s_need[s] = need[s] * factor[s]
    return core_mhz_vm, core_mhz_item, io_bw, s_need, swap_want


@numba.njit(cache=True, nogil=True)
def cache_stage(
    dt: float,
    now: float,
    dirty_ratio: float,
    background_ratio: float,
    expire_s: float,
    guest_mem: np.ndarray,
    used: np.ndarray,
    disk_mbps: np.ndarray,
    vm_host: np.ndarray,
    files: tuple,
    resident: np.ndarray,
    vm_cached: np.ndarray,
    streams: tuple,
    remaining: np.ndarray,
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """`cache_fit`, then its per file stream factor and headroom placed among all `k` streams (`streams`: k,
    file_rows, f_file, f_item, f_vm, f_write, f_hit; the other streams: factor 1, headroom 0). Returns the cache
    memory, write-back want, and per stream the disk MB per MB and dirty headroom MB/s."""
    k, file_rows, f_file, f_item, f_vm, f_write, f_hit = streams
    cap, wb_want, factor, bonus = cache_fit(dt, now, dirty_ratio, background_ratio, expire_s, guest_mem, used,
                                            disk_mbps, vm_host, files, resident, vm_cached, f_file, f_item, f_vm,
                                            f_write, f_hit, remaining)  # fmt: skip
    s_factor, s_bonus = np.ones(k), np.zeros(k)
    for j in range(file_rows.size):
        s_factor[file_rows[j]] = factor[j]
        s_bonus[file_rows[j]] = bonus[j]
    return cap, wb_want, s_factor, s_bonus


# ---- the heartbeat clock's chain (hadoop_layer/heartbeats.py, issue 16) ------------------------------------------
# A link of the chain ran ~20 NumPy calls on the trackers' few hundred rows, ~70,000 links in the SWIM day's first
# 20,000 s: NumPy's per-call cost was the time, as in the tick's loops above.


@numba.njit(cache=True, nogil=True)
def beat_first(due: np.ndarray, slots: np.ndarray, busy: np.ndarray) -> tuple[float, int, int, bool, bool]:
    """The earliest due beat: `due.min()`, `due.argmin()` (NaN: the first NaN, as NumPy's), how many rows are due
    then (`(due <= due.min()).sum()`: 1 unless ties, which random offsets never make) and whether that tracker has a
    free map and reduce slot (`slots[first] > busy[first]`). No rows: (inf, -1, 0, False, False) where NumPy raises
    (the chain never runs without trackers). Of tied zeros the first (NumPy's min keeps either, by its SIMD order;
    beat times are never -0.0: offsets are >= +0.0 and beats come at offset + k x interval, k >= 0). One pass instead
    of the chain's `np.flatnonzero(due <= now)`, `due.min()` and the look-ahead's `argmin` and row reads, a link
    each."""
    n = due.size
    if n == 0:
        return _INF, -1, 0, False, False
    first, low, ties = 0, due[0], 1
    if low == low:
        for i in range(1, n):
            d = due[i]
            if d < low:
                first, low, ties = i, d, 1
            elif d == low:
                ties += 1
            elif d != d:  # NaN: NumPy's min and argmin stop at the first
                first, low, ties = i, d, 0
                break
    else:
        ties = 0
    return low, first, ties, slots[first, 0] > busy[first, 0], slots[first, 1] > busy[first, 1]


@numba.njit(cache=True, nogil=True)
def beat_any_free(due: np.ndarray, until: float, slots: np.ndarray, busy: np.ndarray) -> bool:
    """Has any tracker due before `until` a free slot: `(slots[rows] > busy[rows]).any()` of
    `rows = np.flatnonzero(due < until)`, whether the look-ahead asks the JobTracker's outlook."""
    for i in range(due.size):  # noqa: SIM110  (a loop numba compiles; it stops at the first)
        if due[i] < until and (slots[i, 0] > busy[i, 0] or slots[i, 1] > busy[i, 1]):
            return True
    return False


@numba.njit(inline="always")
def _beat_after(offset: float, interval: float, now: float) -> float:
    """`HeartbeatClock._next_beats` of one row: the same IEEE operations (`np.floor`, not `math.floor`, which would
    round to an integer; the count stays a float as NumPy's `k` does)."""
    k = np.floor((now - offset) / interval) + 1
    at = offset + k * interval
    while at <= now:
        k += 1
        at = offset + k * interval
    return at


@numba.njit(cache=True, nogil=True)
def beat_ahead(
    due: np.ndarray,
    count: np.ndarray,
    offset: np.ndarray,
    interval: np.ndarray,
    slots: np.ndarray,
    busy: np.ndarray,
    until: float,
    wants: bool,
    stopped: bool,
    quiet_until: float,
    map_from: float,
    reduce_from: float,
) -> int:
    """The array part of `HeartbeatClock._look_ahead` after the JobTracker's outlook (`wants`, `quiet_until`,
    `map_from`, `reduce_from`): counts in `count` the beats due before `until` that cannot launch anything, writes
    `due` (inf: asleep; kept awake: the next beat), and returns how many beats kept their tracker awake. Round by
    round as the NumPy form went (each round's `until` bounds that round's beats; its kept-awake beats may lower it
    for the next), rows in tracker order. `until` is only compared with, so which of two equal zeros a `min` keeps
    does not matter; beat times are never NaN where a `min` is taken (`at < until` holds for them)."""
    n = due.size
    rows = np.empty(n, np.int64)
    at = np.empty(n)
    free_map = np.empty(n, np.bool_)
    free_reduce = np.empty(n, np.bool_)
    m = 0
    for i in range(n):
        if due[i] < until:
            rows[m], at[m] = i, due[i]
            free_map[m], free_reduce[m] = slots[i, 0] > busy[i, 0], slots[i, 1] > busy[i, 1]
            m += 1
    found, low = False, _INF
    for j in range(m):
        may_launch = (free_map[j] and at[j] >= map_from) or (free_reduce[j] and at[j] >= reduce_from)
        if may_launch and (not found or at[j] < low):
            found, low = True, at[j]
    if found and low < until:  # Python's min(until, low)
        until = low
    if not wants and quiet_until < until:
        until = quiet_until
    wants = wants and not stopped  # a stopped clock wakes nobody
    kept = 0
    while True:
        idle = 0
        kept_rows = 0
        for j in range(m):
            if not at[j] < until:
                continue
            i = rows[j]
            count[i] += 1
            idle += 1
            if wants and (free_map[j] or free_reduce[j]):
                rows[kept_rows], at[kept_rows] = i, at[j]
                free_map[kept_rows], free_reduce[kept_rows] = free_map[j], free_reduce[j]
                kept_rows += 1
            else:
                due[i] = _INF
        if idle == 0 or not wants:
            break
        m = kept_rows
        found = False
        for j in range(m):
            i = rows[j]
            at[j] = _beat_after(offset[i], interval[i], at[j])
            due[i] = at[j]
            later = (free_map[j] and at[j] >= map_from) or (free_reduce[j] and at[j] >= reduce_from)
            if later and (not found or at[j] < low):
                found, low = True, at[j]
        kept += m
        if found and low < until:
            until = low
    return kept


# ---- the page cache's bookkeeping (vcloud/pagecache.py `PageCache.touch` and `resident`; issue 16): in a SWIM day's
# busy tick its rebuild of the resident rows was ~15 NumPy calls over ~10,000 rows, their per-call cost again the time.


@numba.njit(cache=True, nogil=True)
def cache_touch(maybe: np.ndarray, rows: np.ndarray) -> np.ndarray:
    """`PageCache.touch`'s `new = rows[~maybe[rows]]; maybe[new] = True`: the rows not flagged before the call, in
    order (a repeated one as often as it comes), flagged now."""
    m = 0
    for r in rows:
        if not maybe[r]:
            m += 1
    new = np.empty(m, np.int64)
    m = 0
    for r in rows:
        if not maybe[r]:
            new[m] = r
            m += 1
    for r in new:
        maybe[r] = True
    return new


@numba.njit(cache=True, nogil=True)
def cache_resident(
    kept: np.ndarray, added: np.ndarray, cached_mb: np.ndarray, dirty_mb: np.ndarray, maybe: np.ndarray
) -> np.ndarray:
    """`PageCache.resident`'s rebuild: of the rows `np.sort(np.concatenate((kept, np.unique(added))))` (`kept`
    ascending, `added` in any order with repeats: merged in one pass), those holding cached or dirty data
    (`cached_mb > 0 or dirty_mb > 0`), in order; the others' `maybe` flags are cleared. One pass over the merge
    (NumPy's form: a sort of the added rows, a dedup, a concatenation, a sort of the whole and a keep mask)."""
    a = np.sort(added)
    na, nk = a.size, kept.size
    out = np.empty(nk + na, np.int64)
    m = 0
    j = 0  # next of `a`
    k = 0  # next of `kept`
    while j < na or k < nk:
        if j < na and j > 0 and a[j] == a[j - 1]:  # a repeat of the added rows: taken once
            j += 1
            continue
        if k < nk and (j >= na or kept[k] <= a[j]):  # of equal rows the kept one first (any order: they are equal)
            r = kept[k]
            k += 1
        else:
            r = a[j]
            j += 1
        if cached_mb[r] > 0 or dirty_mb[r] > 0:
            out[m] = r
            m += 1
        else:
            maybe[r] = False
    return out[:m].copy()
