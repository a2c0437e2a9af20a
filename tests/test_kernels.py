"""The compiled rounds of the pipeline stage against the NumPy calls they replaced, bit for bit (the water-fill
kernel: tests/test_waterfill.py)."""

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from hadoop_layer.copiers import CopierColumns, CopyRates, backlog_add, copiers_look, copiers_release, copiers_take
from hadoop_layer.ledger import running_entries
from hadoop_layer.shuffle_queue import (
    SparseQueue,
    closing_drained,
    held_ready,
    queue_add,
    queue_dense,
    queue_drop_col,
    resum_rows,
    serving_rows,
    shuffle_move,
)
from policies.speculation.lag_bounds import running_lag_bounds
from vcloud.accounting import ItemCharges, ItemUse, StreamUse, VMCounters, VMTickState, VMUse, account
from vcloud.arrays import run_starts
from vcloud.hostpool import HostPools, cpu_setup, host_pool_share
from vcloud.items import (
    ItemDemand,
    StreamColumns,
    StreamDemand,
    demand,
    demand_inputs,
    find_idle_rows,
    flatten_streams,
    item_progress,
    progress,
    set_remaining,
    stream_groups,
)
from vcloud.memory import BalloonRates, VMMemory, VMMemoryState, memory_stage, reclaim
from vcloud.numerics import ascending_order, by_group_then, distinct_ascending, np_sum, np_sum_sparse
from vcloud.pagecache import (
    DirtyLimits,
    FileColumns,
    FileStreams,
    GuestRoom,
    ItemReads,
    VMReads,
    cache_files_update,
    cache_fit,
    cache_settle,
    cache_stage,
    evict_files,
    write_back_files,
)
from vcloud.sharing import (
    DeviceShares,
    Grants,
    PipelineItems,
    PipelineStreams,
    VMCores,
    asks,
    least,
    pipeline,
    rates,
    share_cpu,
    share_io,
)
from vcloud.tables import HostTable, ItemTable, VMTable, columns
from vcloud.waterfill import waterfill
from vcloud.work import Device, Kind

# few distinct values, so ties (and 0.0 against -0.0) are common
VALUES = [0.0, -0.0, 0.5, 1.0, 2.0, np.inf]


def numpy_least(io, starts, owners, n):
    out = np.full(n, np.inf)
    if starts.size:
        out[owners] = np.minimum.reduceat(io, starts)
    return out


def numpy_rates(got_cpu, need_cpu, got_io, s_bonus, s_need, starts, owners, wait_rows, load_rows):
    n, k = need_cpu.size, s_bonus.size
    cpu = np.divide(got_cpu, need_cpu, out=np.full(n, np.inf), where=need_cpu > 0)
    io = np.divide(got_io[:k] + s_bonus, s_need[:k], out=np.full(k, np.inf), where=s_need[:k] > 0)
    rate = np.minimum(cpu, numpy_least(io, starts, owners, n))
    rate[wait_rows] = 1.0
    rate[load_rows] = 0.0
    return rate, cpu, io


def numpy_asks(cpu, io, item, starts, owners, multi, want_cpu, need_cpu, s_want, s_need, s_bonus):
    n, k = cpu.size, io.size
    other_cpu = numpy_least(io, starts, owners, n)
    other = np.minimum(cpu, other_cpu)[item]
    at = (io == other).nonzero()[0]
    if at.size:
        first = at[run_starts(item[at])]
        rest = io.copy()
        rest[first] = np.inf
        other[first] = np.minimum(cpu, numpy_least(rest, starts, owners, n))[item[first]]
    want = want_cpu.copy()
    np.minimum(want, np.multiply(need_cpu, other_cpu, out=np.full(n, np.inf), where=multi & np.isfinite(other_cpu)),
               out=want)  # fmt: skip
    s_ask = s_want.copy()
    ask = np.multiply(s_need[:k], other, out=np.full(k, np.inf), where=multi[item] & np.isfinite(other))
    np.minimum(s_ask[:k], np.maximum(ask - s_bonus, 0.0), out=s_ask[:k])
    return want, s_ask


@st.composite
def layouts(draw):
    """Items with 0-3 streams each (ordered by item), a few trailing load streams, values with many ties."""
    per_item = draw(st.lists(st.integers(0, 3), min_size=1, max_size=12))
    n = len(per_item)
    item = np.repeat(np.arange(n), per_item).astype(np.int64)
    k, extra = item.size, draw(st.integers(0, 2))
    value = st.sampled_from(VALUES[:-1])

    def arr(size, values=value):
        return np.array(draw(st.lists(values, min_size=size, max_size=size)), dtype=float)

    starts = run_starts(item).nonzero()[0]
    return {
        "n": n, "item": item, "starts": starts, "owners": item[starts],
        "multi": np.array(per_item) + draw(st.lists(st.integers(0, 1), min_size=n, max_size=n)) > 1,
        "got_cpu": arr(n), "need_cpu": arr(n), "got_io": arr(k + extra), "s_bonus": arr(k), "s_need": arr(k + extra),
        "want_cpu": arr(n, st.sampled_from(VALUES)), "s_want": arr(k + extra, st.sampled_from(VALUES)),
        "wait": np.flatnonzero(arr(n) == 2.0), "load": np.flatnonzero(arr(n) == 0.5),
    }  # fmt: skip


def same_bits(a: np.ndarray, b: np.ndarray) -> bool:
    return a.dtype == b.dtype and a.tobytes() == b.tobytes()


@settings(max_examples=300, deadline=None)
@given(layouts())
def test_rates_and_asks_are_numpys_bits(c):
    args = (c["got_cpu"], c["need_cpu"], c["got_io"], c["s_bonus"], c["s_need"], c["starts"], c["owners"],
            c["wait"], c["load"])  # fmt: skip
    got, expect = rates(*args), numpy_rates(*args)
    assert all(same_bits(a, b) for a, b in zip(got, expect, strict=True))
    cpu, io = expect[1], expect[2]
    args = (cpu, io, c["item"], c["starts"], c["owners"], c["multi"], c["want_cpu"], c["need_cpu"], c["s_want"],
            c["s_need"], c["s_bonus"])  # fmt: skip
    got, expect = asks(*args), numpy_asks(*args)
    assert all(same_bits(a, b) for a, b in zip(got, expect, strict=True))


def test_least_hand_worked():
    # items 0 and 2 have streams (0: two, 2: one); item 1 has none: inf; the tie 0.0 / -0.0 keeps the later one
    io = np.array([0.0, -0.0, 3.0])
    starts, owners = np.array([0, 2]), np.array([0, 2])
    got = least(io, starts, owners, 3)
    assert got.tolist() == [0.0, np.inf, 3.0] and np.signbit(got[0])


def numpy_account(dt, n_host, k, has_load, vm, is_load, need_cpu, threads, fed, sys_fraction, core_mhz, progress,
                  rate, want_cpu, frac_dt, got_cpu, got_cpu1, runnable_mhz, s_item, s_vm, s_group, s_need, s_bonus,
                  s_want, s_full, got_io, got_io1, vcpus, core_mhz_vm, stall, swap_got, wb_got, item_out, vm_now,
                  vm_sum):  # fmt: skip
    """The engine's account stage as NumPy calls (before it was compiled), on the kernel's arguments."""
    n, n_vm = need_cpu.size, vcpus.size
    io_mb, sys_s_out, usr_s_out, steal_s_out, iowait_s_out = item_out
    cpu_demand_mhz, cpu_used_mhz, disk_mbps, net_mbps = vm_now
    usr_vm, sys_vm, steal_vm, iowait_vm, idle_vm, used_mhz_s, demand_mhz_s, ready_mhz_s, disk_mb, net_mb, swap_io_mb, \
        writeback_mb = vm_sum  # fmt: skip
    cpu_mc = progress * need_cpu
    s_mb = progress[s_item] * s_need
    if s_bonus.any():
        s_mb[:k] = np.maximum(s_mb[:k] - s_bonus * dt, 0.0)
    if has_load:
        cpu_mc = np.where(is_load, got_cpu * dt, cpu_mc)
        s_mb[k:] = got_io[k:] * dt
    s_disk = s_group < n_host
    s_net = (s_group >= n_host) & (s_group < 2 * n_host)
    own = s_vm == vm[s_item]
    io_mb += np.bincount(s_item, s_mb * (own & (s_disk | s_net)), minlength=n)
    swap_mb, wb_mb = swap_got * dt, wb_got * dt
    vm_disk = np.bincount(s_vm, s_mb * s_disk, minlength=n_vm) + swap_mb + wb_mb
    vm_net = np.bincount(s_vm, s_mb * s_net, minlength=n_vm)
    vm_used_mhz = np.bincount(vm, cpu_mc, minlength=n_vm) / dt
    cpu_s = cpu_mc / core_mhz
    used_mhz = np.multiply(rate, need_cpu, out=np.zeros(n), where=need_cpu > 0)
    cpu_bound = (need_cpu > 0) & (np.divide(got_cpu1, need_cpu, out=np.full(n, np.inf), where=need_cpu > 0) <= rate)
    f_run = np.divide(used_mhz, runnable_mhz, out=np.zeros(n), where=runnable_mhz > 0)
    np.minimum(f_run, 1.0, out=f_run)
    f_run[(cpu_bound | is_load) if has_load else cpu_bound] = 1.0
    runnable_s = f_run * want_cpu * frac_dt / core_mhz
    io_active = (np.bincount(s_item, s_want > 0, minlength=n) > 0).astype(float)
    if fed.any():
        took = np.divide(s_mb, s_full * dt, out=np.zeros(s_mb.size), where=s_full > 0)
        busy = np.zeros(n)
        np.maximum.at(busy, s_item, np.minimum(took, 1.0))
        io_active = np.where(fed, np.divide(busy * dt, frac_dt, out=np.zeros(n), where=frac_dt > 0), io_active)
    cpu_threads = threads * (need_cpu > 0)
    not_load = 1.0 - f_run * ~is_load if has_load else 1.0 - f_run
    blocked_s = (stall[vm] * cpu_threads * f_run + io_active * not_load) * frac_dt
    remote = s_disk & ~own & (got_io > 0) & (got_io1 > 0)
    daemon_blocked = np.zeros(n_vm)
    if remote.any():
        r = remote.nonzero()[0]
        busy = np.minimum(got_io[r] / got_io1[r], 1.0)
        daemon_blocked = np.bincount(s_vm[r], busy * frac_dt[s_item[r]], minlength=n_vm)
    vcpu_s = vcpus * dt
    vm_cpu_s = np.bincount(vm, cpu_s, minlength=n_vm)
    vm_runnable = np.minimum(np.bincount(vm, runnable_s, minlength=n_vm), vcpu_s)
    vm_steal = np.maximum(vm_runnable - vm_cpu_s, 0.0)
    vm_idle_all = vcpu_s - vm_runnable
    vm_blocked = np.bincount(vm, blocked_s, minlength=n_vm) + daemon_blocked
    vm_iowait = np.minimum(vm_idle_all, vm_blocked)
    sys_s = cpu_s * sys_fraction
    vm_sys = np.bincount(vm, sys_s, minlength=n_vm)
    sys_s_out += sys_s
    usr_s_out += (1.0 - sys_fraction) * cpu_s
    waiting = runnable_s - cpu_s
    vm_waiting = np.bincount(vm, waiting, minlength=n_vm)
    steal_s_out += waiting * np.divide(vm_steal, vm_waiting, out=np.zeros(n_vm), where=vm_waiting > 0)[vm]
    iowait_s_out += blocked_s * np.divide(vm_iowait, vm_blocked, out=np.zeros(n_vm), where=vm_blocked > 0)[vm]
    vm_demand = np.minimum(np.bincount(vm, f_run * want_cpu, minlength=n_vm), vcpus * core_mhz_vm)
    cpu_demand_mhz[:], cpu_used_mhz[:], disk_mbps[:], net_mbps[:] = vm_demand, vm_used_mhz, vm_disk / dt, vm_net / dt
    usr_vm += vm_cpu_s - vm_sys
    sys_vm += vm_sys
    steal_vm += vm_steal
    iowait_vm += vm_iowait
    idle_vm += vm_idle_all - vm_iowait
    used_mhz_s += vm_used_mhz * dt
    demand_mhz_s += vm_demand * dt
    ready_mhz_s += vm_steal * core_mhz_vm
    disk_mb += vm_disk
    net_mb += vm_net
    swap_io_mb += swap_mb
    writeback_mb += wb_mb


@st.composite
def tick_accounts(draw):
    """A tick's results for the account stage: items on VMs on hosts, streams (some to another VM's datastore, some
    on NICs or rack links, trailing load streams), values with ties, zeros and a few infinite rates."""
    n_host, n_vm, n = draw(st.integers(1, 3)), draw(st.integers(1, 4)), draw(st.integers(1, 10))
    k, extra = draw(st.integers(0, 12)), draw(st.integers(0, 3))
    has_load = extra > 0 or draw(st.booleans())
    ints = lambda size, hi: np.array(draw(st.lists(st.integers(0, hi - 1), min_size=size, max_size=size)), np.int64)  # noqa: E731
    value = st.sampled_from([0.0, 0.1, 0.25, 0.3, 1 / 3, 1.0, 2.0, 3.0])  # some round: sums must add in order

    def arr(size, values=value):
        return np.array(draw(st.lists(values, min_size=size, max_size=size)), dtype=float)

    def flags(size):
        return np.array(draw(st.lists(st.booleans(), min_size=size, max_size=size)), dtype=bool)

    n_s = k + extra
    is_load = flags(n) if has_load else np.zeros(n, bool)
    s_item = np.sort(ints(k, n))
    if extra:
        s_item = np.concatenate((s_item, ints(extra, n)))
    bonus = arr(k) * draw(st.booleans())
    return (1.0, n_host, k, has_load, ints(n, n_vm), is_load, arr(n), arr(n) + 1.0, flags(n), arr(n) / 4,
            arr(n) + 100.0, arr(n), arr(n, st.sampled_from([0.0, 0.5, 1.0, np.inf])), arr(n), arr(n) / 3, arr(n) * 50,
            arr(n) * 50, arr(n) * 40, s_item, ints(n_s, n_vm), ints(n_s, 3 * n_host), arr(n_s), bonus, arr(n_s),
            arr(n_s), arr(n_s), arr(n_s), ints(n_vm, 4) + 1, arr(n_vm) + 1000.0, arr(n_vm) / 4, arr(n_vm), arr(n_vm),
            tuple(arr(n) for _ in range(5)), tuple(arr(n_vm) for _ in range(4)),
            tuple(arr(n_vm) for _ in range(12)))  # fmt: skip


@settings(max_examples=300, deadline=None)
@given(tick_accounts())
def test_account_is_numpys_bits(args):
    # both write into their own copies of the item and VM columns; every column must come out the same bits
    import copy

    mine, theirs = copy.deepcopy(args), copy.deepcopy(args)
    records = (ItemUse(*mine[4:18]), StreamUse(*mine[18:27]), VMUse(*mine[27:32]), ItemCharges(*mine[32]),
               VMTickState(*mine[33]), VMCounters(*mine[34]))  # fmt: skip
    account(*mine[:4], *map(tuple, records))  # a kernel takes a record as a plain tuple of its fields
    with np.errstate(divide="ignore", invalid="ignore"):
        numpy_account(*theirs)
    for a, b in zip(mine[-3:], theirs[-3:], strict=True):
        assert all(same_bits(x, y) for x, y in zip(a, b, strict=True))


def numpy_cum_before(group, amount):
    cum = np.cumsum(amount)
    first = run_starts(group)
    start = first.nonzero()[0]
    return cum - amount - (cum[start] - amount[start])[np.cumsum(first) - 1]


def numpy_evict(files, resident, vm_rows, excess):
    """vcloud.pagecache.evict as NumPy calls (before it was compiled)."""
    vm_r = files["vm"][resident]
    clean_r = files["cached_mb"][resident] - files["dirty_mb"][resident]
    over = np.zeros(excess.size, dtype=bool)
    over[vm_rows] = True
    on = (clean_r > 0) & over[vm_r]
    if not on.any():
        return
    rows, vm, clean = resident[on], vm_r[on], clean_r[on]
    active, cached, last = files["active"][rows], files["cached_mb"][rows], files["last_access_s"][rows]
    act = np.bincount(vm, cached * active, minlength=excess.size)
    inact = np.bincount(vm, cached * ~active, minlength=excess.size)
    demote = np.maximum(act - 2.0 * inact, 0.0) / 3.0
    if demote.any():
        a = active.nonzero()[0]
        order = a[np.lexsort((last[a], vm[a]))]
        before = numpy_cum_before(vm[order], cached[order])
        files["active"][rows[order[before < demote[vm[order]]]]] = False
        active = files["active"][rows]
    order = np.lexsort((last, active, vm))
    before = numpy_cum_before(vm[order], clean[order])
    files["cached_mb"][rows[order]] -= np.minimum(np.maximum(excess[vm[order]] - before, 0.0), clean[order])


def numpy_write_back(files, resident, wb_mb):
    vm = files["vm"]
    rows = resident[(files["dirty_mb"][resident] > 0) & (wb_mb[vm[resident]] > 0)]
    if rows.size == 0:
        return
    order = rows[np.lexsort((files["dirty_since_s"][rows], vm[rows]))]
    dirty = files["dirty_mb"][order]
    files["dirty_mb"][order] -= np.minimum(np.maximum(wb_mb[vm[order]] - numpy_cum_before(vm[order], dirty), 0.0),
                                           dirty)  # fmt: skip


@st.composite
def file_tables(draw):
    """Files on a few VMs with cached, dirty (<= cached) MB, LRU times with ties, some active; a VM budget each."""
    n, n_vm = draw(st.integers(1, 20)), draw(st.integers(1, 4))
    mb = st.sampled_from([0.0, 0.1, 1 / 3, 1.0, 2.5, 7.0])

    def arr(values, dtype=float):
        return np.array(draw(st.lists(values, min_size=n, max_size=n)), dtype=dtype)

    cached = arr(mb)
    files = {"vm": arr(st.integers(0, n_vm - 1), np.int64), "cached_mb": cached, "dirty_mb": cached * arr(mb) / 7.0,
             "active": arr(st.booleans(), bool), "last_access_s": arr(st.sampled_from([0.0, 1.0, 2.0])),
             "dirty_since_s": arr(st.sampled_from([0.0, 5.0, 6.0]))}  # fmt: skip
    resident = np.flatnonzero(arr(st.booleans(), bool) | (cached > 0))
    budget = np.array(draw(st.lists(mb, min_size=n_vm, max_size=n_vm))) * 3
    vm_rows = np.flatnonzero(np.array(draw(st.lists(st.booleans(), min_size=n_vm, max_size=n_vm))))
    return files, resident, vm_rows, budget


@settings(max_examples=300, deadline=None)
@given(file_tables())
def test_evict_and_write_back_are_numpys_bits(case):

    files, resident, vm_rows, budget = case
    mine, theirs = {k: v.copy() for k, v in files.items()}, {k: v.copy() for k, v in files.items()}
    evict_files(mine["vm"], mine["cached_mb"], mine["dirty_mb"], mine["active"], mine["last_access_s"], resident,
                vm_rows, budget)  # fmt: skip
    numpy_evict(theirs, resident, vm_rows, budget)
    write_back_files(mine["vm"], mine["dirty_mb"], mine["dirty_since_s"], resident, budget)
    numpy_write_back(theirs, resident, budget)
    assert all(same_bits(mine[k], theirs[k]) for k in files)


def numpy_reclaim(dt, inflate, free_rate, deflate, max_fraction, idle_tax, size, limit_cfg, granted, shares, in_pool,
                  vm_host, pool_limit, balloon, touched, used, active, cached):  # fmt: skip
    """vcloud.memory's targets, balloon_step and reclaim as NumPy calls (before they were compiled)."""
    n_vm, n_host = size.size, pool_limit.size
    held_before = np.minimum(used, size - balloon) + cached
    top = np.minimum(size, limit_cfg)
    target = np.minimum(granted, top)
    finite = np.isfinite(pool_limit)
    if finite.any():
        pooled = in_pool & finite[vm_host]
        f = np.clip(np.divide(touched, held_before, out=np.ones(n_vm), where=held_before > 0), 0.0, 1.0)
        k = 1.0 / (1.0 - idle_tax)
        weight = shares / (f + k * (1.0 - f)) * pooled
        capacity = np.where(finite, pool_limit, 0.0)
        base = waterfill(vm_host, weight, np.where(pooled, np.minimum(held_before, top), 0.0), capacity)
        spare = np.maximum(capacity - np.bincount(vm_host, base, minlength=n_host), 0.0)
        extra = waterfill(vm_host, weight, np.where(pooled, top - base, 0.0), spare)
        target = np.where(pooled, base + extra, target)
    free = np.maximum(size - balloon - used - cached, 0.0)
    want = np.clip(balloon + (held_before - target), 0.0, max_fraction * size) - balloon
    quick = np.minimum(np.minimum(np.maximum(want, 0.0), free), free_rate * dt)
    slow = np.minimum(want - quick, inflate * (dt - quick / free_rate))
    balloon = balloon + np.where(want > 0, quick + slow, np.maximum(want, -deflate * dt))
    guest = size - balloon
    guest_swap = np.maximum(used - guest, 0.0)
    resident = used - guest_swap
    held = resident + np.minimum(cached, np.maximum(guest - used, 0.0))
    hv_swap = np.maximum(held - target, 0.0)
    stall = np.divide(guest_swap, used, out=np.zeros(n_vm), where=used > 0)
    stall += np.divide(hv_swap, held, out=np.zeros(n_vm), where=held > 0)
    return (target, balloon, guest, hv_swap, held, np.minimum(stall, 1.0), guest_swap + hv_swap,
            np.minimum(active, resident))  # fmt: skip


@st.composite
def vm_memories(draw):
    """VMs on hosts with and without a host-local pool limit, balloons, used, cached and touched MB with ties."""
    n_host, n_vm = draw(st.integers(1, 3)), draw(st.integers(1, 6))
    mb = st.sampled_from([0.0, 100.0, 1000 / 3, 1024.0, 2048.0, 4096.0])

    def arr(size, values=mb, dtype=float):
        return np.array(draw(st.lists(values, min_size=size, max_size=size)), dtype=dtype)

    size = arr(n_vm, st.sampled_from([1024.0, 4096.0]))
    return (1.0, 8.0, 64.0, 64.0, 0.65, 0.75, size, arr(n_vm, st.sampled_from([np.inf, 1024.0, 3000.0])),
            arr(n_vm), arr(n_vm, st.sampled_from([1.0, 2.0, 10.0])), arr(n_vm, st.booleans(), bool),
            arr(n_vm, st.integers(0, n_host - 1), np.int64), arr(n_host, st.sampled_from([np.inf, 2000.0, 5000.0])),
            np.minimum(arr(n_vm), 0.65 * size), arr(n_vm), arr(n_vm), arr(n_vm), arr(n_vm))  # fmt: skip


def reclaim_of(dt, inflate, free, deflate, max_fraction, idle_tax, size, limit_cfg, granted, shares, in_pool,
               vm_host, pool_limit, balloon, touched, used, active, cached):  # fmt: skip
    """`reclaim` called with the arguments of its NumPy form (the records built from them)."""
    none = np.zeros(size.size)
    vms = VMMemory(none, none, size, limit_cfg, granted, shares, in_pool, vm_host)
    rates = BalloonRates(inflate, free, deflate, max_fraction, idle_tax)
    return reclaim(dt, rates, vms, pool_limit, balloon, touched, used, active, cached)


@settings(max_examples=300, deadline=None)
@given(vm_memories())
def test_reclaim_is_numpys_bits(args):

    assert all(same_bits(a, b) for a, b in zip(reclaim_of(*args), numpy_reclaim(*args), strict=True))


def test_host_pool_spare_goes_by_taxed_shares():
    # one host pool of 3000 MB, two 4 GB VMs of equal shares: A holds nothing (f = 1: counts as all touched), B holds
    # 1000 MB it never touched (f = 0: taxed, weight S / k = S / 4). Base: what each holds (0, 1000); the spare 2000
    # goes 4 : 1 -> A 1600, B 400: targets 1600 and 1400

    vm = np.zeros(2)
    got = reclaim_of(1.0, 8.0, 64.0, 64.0, 0.65, 0.75, np.full(2, 4096.0), np.full(2, np.inf), np.full(2, 4096.0),
                  np.ones(2), np.ones(2, bool), np.zeros(2, np.int64), np.array([3000.0]), vm, vm,
                  np.array([0.0, 1000.0]), vm, vm)  # fmt: skip
    np.testing.assert_allclose(got[0], [1600.0, 1400.0])


def numpy_cache_fit(dt, now, dirty_ratio, background_ratio, expire_s, guest_mem, used, disk_mbps, vm_host, files, r,
                    vm_cached, f_file, f_item, f_vm, f_write, f_hit, remaining):  # fmt: skip
    """The engine's cache stage as NumPy calls (before it was compiled), on the kernel's arguments."""
    n_vm = used.size
    cap = np.maximum(guest_mem - used, 0.0)
    fvm = files["vm"][r]
    cached = vm_cached if vm_cached.size else np.bincount(fvm, files["cached_mb"][r], minlength=n_vm)
    excess = cached - cap
    over = (excess > 0).nonzero()[0]
    if over.size:
        numpy_evict(files, r, over, np.maximum(excess, 0.0))
    dirty = files["dirty_mb"][r]
    dirty_vm = np.bincount(fvm, dirty, minlength=n_vm)
    expired = np.bincount(fvm, dirty * (now - files["dirty_since_s"][r] >= expire_s), minlength=n_vm)
    due = np.maximum(np.maximum(expired, dirty_vm - background_ratio * cap), 0.0)
    wb_want = np.minimum(due / dt, disk_mbps[vm_host])
    size = files["size_mb"][f_file]
    hit = np.divide(files["cached_mb"][f_file], size, out=np.zeros(f_file.size), where=size > 0)
    np.minimum(hit, f_hit, out=hit)
    factor = np.where(f_write, 1.0, 1.0 - hit)
    writing = f_write & (remaining[f_item] > 0)
    writers = np.bincount(f_vm, writing, minlength=n_vm)
    headroom = np.maximum(dirty_ratio * cap - dirty_vm, 0.0) / dt
    return cap, wb_want, factor, np.divide(headroom, writers, out=np.zeros(n_vm), where=writers > 0)[f_vm] * writing


def numpy_cache_update(dt, now, progress, s_factor, s_bonus, file_rows, f_item, f_vm, f_need, f_write, u, inv, files,
                       item_sums, vm_sums, count_touched, wb_got, cache_cap, batch):  # fmt: skip
    """The engine's cache_update stage as NumPy calls (before it was compiled); `files` holds only resident rows."""
    logical = progress[f_item] * f_need
    dirtied = np.minimum(logical, s_bonus[file_rows] * dt) * f_write
    disk_mb = logical * s_factor[file_rows] - dirtied
    hit, miss, written = (logical - disk_mb) * ~f_write, disk_mb * ~f_write, logical * f_write
    m, n, n_vm = u.size, progress.size, wb_got.size
    files["size_mb"][u] += np.bincount(inv, written, minlength=m)
    files["cached_mb"][u] = np.minimum(files["cached_mb"][u] + np.bincount(inv, miss + written, minlength=m),
                                       files["size_mb"][u])  # fmt: skip
    was_clean = files["dirty_mb"][u] <= 0
    files["dirty_mb"][u] += np.bincount(inv, dirtied, minlength=m)
    files["dirty_since_s"][u[was_clean & (files["dirty_mb"][u] > 0)]] = now
    files["last_access_s"][u[np.bincount(inv, logical, minlength=m) > 0]] = now
    files["active"][u[np.bincount(inv, hit, minlength=m) > 0]] = True
    item_sums[0][:] += np.bincount(f_item, miss, minlength=n)
    item_sums[1][:] += np.bincount(f_item, hit, minlength=n)
    vm_sums[0][:] += np.bincount(f_vm, miss, minlength=n_vm)
    vm_sums[1][:] += np.bincount(f_vm, hit, minlength=n_vm)
    if count_touched:
        vm_sums[2][:] += np.bincount(f_vm, logical, minlength=n_vm)
    r = np.arange(files["vm"].size)
    if wb_got.any():
        numpy_write_back(files, r, wb_got * dt)
    fvm = files["vm"][r]
    cached = np.bincount(fvm, files["cached_mb"][r], minlength=n_vm)
    excess = cached - cache_cap
    over = (excess > 0).nonzero()[0]
    if over.size:
        numpy_evict(files, r, over, np.maximum(excess + batch * cache_cap, 0.0))
        cached = np.bincount(fvm, files["cached_mb"][r], minlength=n_vm)
    return cached, np.bincount(fvm, files["dirty_mb"][r], minlength=n_vm)


FILE_COLUMNS = ("vm", "size_mb", "cached_mb", "dirty_mb", "dirty_since_s", "last_access_s", "active")


def file_streams_of(f_file, f_item, f_vm, f_write, f_hit, rows=None, f_need=None):
    """The `FileStreams` record of the NumPy forms' per-stream arrays."""
    touched, inv = np.unique(f_file, return_inverse=True)
    rows = np.arange(f_file.size, dtype=np.int64) if rows is None else rows
    need = np.zeros(f_file.size) if f_need is None else f_need
    return FileStreams(rows, f_file, f_item, f_vm, need, f_write, f_hit, touched, inv.astype(np.int64))


def cache_fit_of(dt, now, dirty_ratio, background_ratio, expire_s, guest_mem, used, disk_mbps, vm_host, files,
                 resident, vm_cached, f_file, f_item, f_vm, f_write, f_hit, remaining):  # fmt: skip
    """`cache_fit` called with the arguments of its NumPy form (`files`: the columns in FILE_COLUMNS' order)."""
    return cache_fit(dt, now, DirtyLimits(dirty_ratio, background_ratio, expire_s),
                     GuestRoom(guest_mem, used, vm_host, disk_mbps), FileColumns(*files), resident, vm_cached,
                     file_streams_of(f_file, f_item, f_vm, f_write, f_hit), remaining)  # fmt: skip


@st.composite
def cache_ticks(draw):
    """A file table on a few VMs (every file resident), file streams reading and writing them, a tick's grants."""
    files, _, _, budget = draw(file_tables())
    n_files, n_vm = files["vm"].size, budget.size
    files["size_mb"] = files["cached_mb"] + np.array(draw(st.lists(st.sampled_from([0.0, 0.1, 3.0]), min_size=n_files,
                                                                   max_size=n_files)))  # fmt: skip
    k, n = draw(st.integers(0, 8)), draw(st.integers(1, 5))
    mb = st.sampled_from([0.0, 0.1, 1 / 3, 1.0, 2.5])

    def arr(size, values=mb, dtype=float):
        return np.array(draw(st.lists(values, min_size=size, max_size=size)), dtype=dtype)

    f_file = arr(k, st.integers(0, n_files - 1), np.int64)
    u, inv = np.unique(f_file, return_inverse=True)
    return {"files": files, "n": n, "n_vm": n_vm, "f_file": f_file, "u": u, "inv": inv.astype(np.int64),
            "f_item": np.sort(arr(k, st.integers(0, n - 1), np.int64)), "f_vm": files["vm"][f_file],
            "f_write": arr(k, st.booleans(), bool), "f_hit": arr(k), "f_need": arr(k) + 0.5, "remaining": arr(n),
            "progress": arr(n), "guest_mem": arr(n_vm) * 3, "used": arr(n_vm), "wb_got": arr(n_vm),
            "vm_cached": arr(n_vm) * 2 if draw(st.booleans()) else np.zeros(0)}  # fmt: skip


@settings(max_examples=300, deadline=None)
@given(cache_ticks())
def test_cache_stages_are_numpys_bits(c):

    n_vm, k, r = c["n_vm"], c["f_file"].size, np.arange(c["files"]["vm"].size)
    mine, theirs = ({key: v.copy() for key, v in c["files"].items()} for _ in range(2))
    # now 35: a file dirty since 0, 5 or 6 is 35, 30 (a tie with dirty_expire_s) or 29 s old
    fit = (1.0, 35.0, 0.1, 0.05, 30.0, c["guest_mem"], c["used"], np.full(3, 50.0), np.zeros(n_vm, np.int64))
    rest = (c["vm_cached"], c["f_file"], c["f_item"], c["f_vm"], c["f_write"], c["f_hit"], c["remaining"])
    got = cache_fit_of(*fit, tuple(mine[col] for col in FILE_COLUMNS), r, *rest)
    expect = numpy_cache_fit(*fit, theirs, r, *rest)
    assert all(same_bits(a, b) for a, b in zip(got, expect, strict=True))
    cap, _, factor, bonus = expect
    sums = [(np.ones(c["n"]), np.ones(c["n"])), (np.ones(n_vm), np.ones(n_vm), np.ones(n_vm))]
    their_sums = [tuple(a.copy() for a in s) for s in sums]
    update = (1.0, 10.0, c["progress"], factor, bonus, np.arange(k), c["f_item"], c["f_vm"], c["f_need"],
              c["f_write"], c["u"], c["inv"])  # fmt: skip
    touched_streams = FileStreams(np.arange(k), c["f_file"], c["f_item"], c["f_vm"], c["f_need"], c["f_write"],
                                  c["f_hit"], c["u"], c["inv"])  # fmt: skip
    mine_files = tuple(FileColumns(*(mine[col] for col in FILE_COLUMNS)))  # records go in as plain tuples
    cache_files_update(*update[:5], tuple(touched_streams), mine_files, tuple(ItemReads(*sums[0])),
                       tuple(VMReads(*sums[1])), True)  # fmt: skip
    got = cache_settle(1.0, mine_files, r, c["wb_got"], cap, 0.02)
    expect = numpy_cache_update(*update, theirs, *their_sums, True, c["wb_got"], cap, 0.02)
    assert all(same_bits(a, b) for a, b in zip(got, expect, strict=True))
    assert all(same_bits(a, b) for s, t in zip(sums, their_sums, strict=True) for a, b in zip(s, t, strict=True))
    assert all(same_bits(mine[col], theirs[col]) for col in FILE_COLUMNS)


def numpy_host_pool_share(vm_cap, vm_host, host_mhz, pooled, limit0, reservation, group, w, shares):
    """Sharing a host's cores through host-local pools as NumPy calls (before it was compiled)."""
    n_host = host_mhz.size
    pooled_cap = vm_cap * pooled
    pooled_sum = np.bincount(vm_host, pooled_cap, minlength=n_host)
    pool_cap = np.minimum(pooled_sum, limit0)
    floor = np.minimum(np.minimum(reservation, pool_cap), host_mhz)
    cap = np.concatenate((pool_cap - floor, vm_cap * ~pooled))
    got = waterfill(group, w, cap, host_mhz - floor)
    inner = waterfill(vm_host, shares, pooled_cap, got[:n_host] + floor, cap_sum=pooled_sum)
    return np.where(pooled, inner, got[n_host:])


@st.composite
def host_pools(draw):
    n_host, n_vm = draw(st.integers(1, 3)), draw(st.integers(1, 8))
    mhz = st.sampled_from([0.0, 500.0, 1000 / 3, 2400.0, 4800.0])

    def arr(size, values=mhz, dtype=float):
        return np.array(draw(st.lists(values, min_size=size, max_size=size)), dtype=dtype)

    vm_host = arr(n_vm, st.integers(0, n_host - 1), np.int64)
    limit = arr(n_host, st.sampled_from([np.inf, 1000.0, 3000.0]))
    pooled = arr(n_vm, st.booleans(), bool) & np.isfinite(limit)[vm_host]
    weight = arr(n_vm) + 10.0
    w = np.concatenate((np.bincount(vm_host, weight * pooled, minlength=n_host), weight * ~pooled))
    return (arr(n_vm), vm_host, arr(n_host, st.sampled_from([4800.0, 9600.0])), pooled,
            np.where(np.isfinite(limit), limit, 0.0), arr(n_host), np.concatenate((np.arange(n_host), vm_host)), w,
            arr(n_vm, st.sampled_from([1000.0, 2000.0])) * pooled)  # fmt: skip


@settings(max_examples=300, deadline=None)
@given(host_pools())
def test_host_pool_share_is_numpys_bits(args):

    assert same_bits(host_pool_share(*args), numpy_host_pool_share(*args))


def python_pipeline(rounds, any_multi, firsts, items, streams, vms, pools, io):
    """stage_pipeline's loop as it was written in Python around NumPy calls (the kernels for the pieces)."""

    def close(a, b):
        return bool((np.abs(a - b) <= 1e-8 + 1e-5 * np.abs(b)).all())

    got_cpu1, got_io1, swap_got1, wb_got1 = firsts
    need_cpu, vm, want_cpu, cpu_weight, wait_rows, load_rows = items
    item, starts, owners, multi, s_want, s_need, s_bonus = streams
    rate, cpu, io_ratio = rates(got_cpu1, need_cpu, got_io1, s_bonus, s_need, starts, owners, wait_rows, load_rows)
    got_cpu, got_io, swap_got, wb_got = got_cpu1, got_io1, swap_got1, wb_got1
    if any_multi:
        first, asked = (cpu, io_ratio), None
        shared_cpu, shared_io = want_cpu, s_want
        for _ in range(rounds - 1):
            want, ask_io = asks(np.maximum(first[0], cpu), np.maximum(first[1], io_ratio), item, starts, owners, multi,
                                want_cpu, need_cpu, s_want, s_need, s_bonus)  # fmt: skip
            if asked is not None and close(want, asked[0]) and close(ask_io, asked[1]):
                break
            asked = (want, ask_io)
            if not (want == shared_cpu).all():
                got_cpu = share_cpu(want, cpu_weight, vm, tuple(VMCores(*vms)), tuple(HostPools(*pools)))[1]
                shared_cpu = want
            if not (ask_io == shared_io).all():
                got_io, swap_got, wb_got = share_io(ask_io, *io)
                shared_io = ask_io
            rate, cpu, io_ratio = rates(got_cpu, need_cpu, got_io, s_bonus, s_need, starts, owners, wait_rows,
                                        load_rows)  # fmt: skip
    runnable = np.maximum(got_cpu1, np.where(np.isfinite(rate), rate, 0.0) * need_cpu)
    return rate, got_cpu, got_io, swap_got, wb_got, runnable


@settings(max_examples=200, deadline=None)
@given(layouts(), st.integers(1, 4), st.integers(1, 2))
def test_pipeline_rounds_are_the_python_loops_bits(c, rounds, n_vm):

    n, k = c["n"], c["item"].size
    rng = np.random.default_rng(n * 31 + k)
    vm = rng.integers(0, n_vm, n)
    need_cpu = c["need_cpu"] * 100
    want_cpu = np.where(need_cpu > 0, rng.choice([400.0, 2400.0], n), 0.0)
    vms = (np.full(n_vm, 4800.0), np.full(n_vm, np.inf), np.zeros(n_vm, np.int64), np.full(n_vm, 100.0),
           np.array([rng.choice([2400.0, 9600.0])]))  # fmt: skip
    pools = (np.zeros(0, bool), np.zeros(0), np.zeros(0), np.zeros(0, np.int64), np.zeros(0), np.zeros(0))
    s_want = np.where(c["s_need"][:k] > 0, rng.choice([10.0, 40.0], k), 0.0)
    io = (np.zeros(n_vm), np.zeros(n_vm), np.concatenate((rng.integers(0, 2, k), np.zeros(2 * n_vm, np.int64))),
          np.array([50.0, 80.0]))  # fmt: skip
    weight = np.where(need_cpu > 0, 1.0, 0.0)
    got_cpu1 = share_cpu(want_cpu, weight, vm, tuple(VMCores(*vms)), tuple(HostPools(*pools)))[1]
    firsts = (got_cpu1, *share_io(s_want, *io))
    args = (
        rounds,
        bool(c["multi"].any()),
        firsts,
        (need_cpu, vm, want_cpu, weight, c["wait"], c["load"]),
        (c["item"], c["starts"], c["owners"], c["multi"], s_want, c["s_need"][:k], c["s_bonus"]),
        vms,
        pools,
        io,
    )
    rounds_, multi, firsts, items, streams, vms, pools, io = args
    records = (Grants(*firsts), PipelineItems(*items), PipelineStreams(*streams), VMCores(*vms), HostPools(*pools),
               DeviceShares(*io))  # fmt: skip
    got, expect = pipeline(rounds_, multi, *map(tuple, records)), python_pipeline(*args)  # records as plain tuples
    assert all(same_bits(a, b) for a, b in zip(got, expect, strict=True))


def numpy_demand(dt, k, has_load, items, vm, is_load, stall, s_item, s_need, s_base, f_need, s_bonus, load_want):
    """The engine's demand stage arithmetic as NumPy calls (before it was compiled), on the kernel's arguments."""
    threads, need_cpu, core_mhz, load_cpu_mhz, remaining, open_ = items
    cpu_threads = threads * (need_cpu > 0)
    want_cpu, cpu_weight = cpu_threads * core_mhz, cpu_threads
    if has_load:
        want_cpu = np.where(is_load, load_cpu_mhz, want_cpu)
        cpu_weight = np.where(is_load, want_cpu / core_mhz, cpu_threads)
    want_cpu *= (1.0 - stall)[vm]
    s_want = s_base.copy()
    left = remaining[s_item]
    s_want *= (left > 0) & (s_need > 0)
    if s_bonus.any():
        s_want[:k] *= left[:k] * f_need > s_bonus * dt
    if has_load:
        s_want[k:] = load_want
    s_full = s_want
    fed = open_[s_item]
    if fed.any():
        s_want = np.minimum(s_want, np.multiply(left, s_need / dt, out=np.full(left.size, np.inf), where=fed))
    return want_cpu, cpu_weight, s_want, s_full


@st.composite
def demands(draw):
    n, n_vm, k, extra = (
        draw(st.integers(1, 8)),
        draw(st.integers(1, 3)),
        draw(st.integers(0, 10)),
        draw(st.integers(0, 3)),
    )
    value, ceiling = st.sampled_from([0.0, 0.1, 1 / 3, 1.0, 2.5]), st.sampled_from([0.0, 0.1, 1 / 3, 1.0, np.inf])

    def arr(size, values=value, dtype=float):
        return np.array(draw(st.lists(values, min_size=size, max_size=size)), dtype=dtype)

    has_load = extra > 0 or draw(st.booleans())
    is_load = arr(n, st.booleans(), bool) if has_load else np.zeros(n, bool)
    s_item = np.concatenate(
        (np.sort(arr(k, st.integers(0, n - 1), np.int64)), arr(extra, st.integers(0, n - 1), np.int64))
    )
    items = (arr(n) * 4, arr(n), arr(n) + 2400.0, arr(n) * 1000, arr(n), arr(n, st.booleans(), bool))
    return (1.0, k, has_load, items, arr(n, st.integers(0, n_vm - 1), np.int64), is_load, arr(n_vm) / 3, s_item,
            arr(k + extra), arr(k + extra, ceiling) * 40, arr(k), arr(k) * draw(st.booleans()),
            arr(extra) * 50)  # fmt: skip


@settings(max_examples=300, deadline=None)
@given(demands())
def test_demand_is_numpys_bits(args):

    with np.errstate(invalid="ignore"):
        expect = numpy_demand(*args)
    dt, k, has_load, items, vm, is_load, stall, *streams = args
    got = demand(dt, k, has_load, tuple(ItemDemand(*items, vm, is_load)), stall, tuple(StreamDemand(*streams)))
    assert all(same_bits(a, b) for a, b in zip(got, expect, strict=True))


def numpy_shuffle_move(queue, width, n, left, serve_row, remaining, col_node, held, served_read, served_sent, row_sum,
                       stale, drained):  # fmt: skip
    """ShuffleServer.tick's arithmetic as NumPy calls (the form `shuffle_move` replaced; `remote`: 1.0 where the
    serving node is not the reduce's, as the matrix it kept)."""
    remote = (np.arange(n)[:, None] != col_node[None, :]).astype(float)
    rows = serve_row
    q = queue[:, :width]
    done = left - np.where(rows >= 0, remaining[np.maximum(rows, 0)], 0.0)
    served = np.flatnonzero(done > 0)
    d, total = done[served], left[served]
    sub_all = q[served]
    got = sub_all * (d >= total)[:, None]
    part = np.flatnonzero(d < total)
    if part.size:
        sub = sub_all[part]
        nodes, cols = np.nonzero(sub)
        got[part[nodes], cols] = waterfill(nodes, None, sub[nodes, cols], d[part])
    q[served] -= got
    by_server = np.zeros(2 * n)
    by_server[served] = got.sum(axis=1)
    served_read += by_server[:n]
    served_sent += by_server[n:]
    sent = served >= n
    if sent.any():
        held[:width] += got[sent].sum(axis=0)
    readers = served[~sent]
    fetched = got[~sent] * remote[readers, :width]
    local = float(by_server[:n].sum() - fetched.sum())
    q[n + readers] += fetched
    stale[served] = True
    stale[n + readers] = True
    again = stale.nonzero()[0]
    row_sum[again] = q[again].sum(axis=1)
    stale[again] = False
    want = row_sum.copy()
    moved = np.zeros(queue.shape[1], dtype=bool)
    moved[:width] = got.any(axis=0)
    dust = (want > 0) & (want <= drained)
    if dust.any():
        moved[:width] |= (q[dust] != 0).any(axis=0)
        q[dust] = 0.0
        want[dust] = 0.0
    row_sum[:] = want  # ShuffleServer._set_work(want)'s bookkeeping
    stale[:] = False
    live = serve_row >= 0
    left[:] = want
    return want, moved, local, serve_row[live], want[live], bool((~live & (want > 0)).any()), bool(held.any())


@st.composite
def shuffle_queues(draw):
    """Queue matrices of 1-40 nodes (some up to 200 columns wide: pairwise sums over several blocks), sparse, with
    ties, dust and servers that moved all, part or none of their queue."""
    n = draw(st.integers(1, 40))
    cols = draw(st.sampled_from([16, 32, 64, 256]))
    width = draw(st.sampled_from([w for w in (16, 32, 64, 128, 256) if w <= cols]))
    seed = draw(st.integers(0, 2**32 - 1))
    r = np.random.default_rng(seed)
    queue = np.zeros((2 * n, cols))
    density = draw(st.sampled_from([0.05, 0.3, 1.0]))
    on = r.random((2 * n, width)) < density
    shape = (2 * n, width)
    values = r.choice([0.5, 1.0, 3.0, 1e-10, 7.25], size=shape) * r.choice([1.0, 1.0, 1e-3, 1e3], shape)
    values = np.where(r.random((2 * n, width)) < 0.5, values, r.random((2 * n, width)) * 10.0 ** r.integers(-4, 4))
    values[r.random(2 * n) < 0.1] *= 1e-12  # rows of float dust only
    queue[:, :width] = np.where(on, values, 0.0)
    row_sum = queue[:, :width].sum(axis=1)
    stale = r.random(2 * n) < 0.2
    serve_row = np.where(r.random(2 * n) < 0.8, r.permutation(2 * n), -1).astype(np.int64)
    left = np.where(serve_row >= 0, row_sum, 0.0)
    how = r.integers(0, 3, 2 * n)  # 0: moved all, 1: part, 2: nothing
    remaining = np.zeros(2 * n)
    frac = r.choice([0.0, 0.25, 0.5, 0.999], 2 * n)
    remaining[np.maximum(serve_row, 0)] = np.where(how == 0, 0.0, np.where(how == 1, left * frac, left))
    col_node = r.integers(-1, n, cols)  # each reduce column's node (-1: no reduce)
    held = np.where(r.random(cols) < 0.3, r.random(cols), 0.0)
    served = r.random((2, n)) * 5
    return queue, width, n, left, serve_row, remaining, col_node, held, served[0].copy(), served[1].copy(), row_sum, \
        stale, 1e-9  # fmt: skip


def _copies(args):
    return [a.copy() if isinstance(a, np.ndarray) else a for a in args]


def sparse_queue(dense, room=0, drained=1e-9):
    """A dense queue in the sparse layout of `shuffle_move` (each row's nonzero cells at ascending columns)
    with its column counts; `room` spare places in the fullest row (0: a kernel adding an entry there must widen)."""
    assert not (np.signbit(dense) & (dense == 0)).any()  # the layout has no -0.0 (ShuffleServer's cells never are)
    q_len = np.count_nonzero(dense, axis=1).astype(np.int64)
    cap = int(q_len.max(initial=0)) + room
    q_col, q_val = np.zeros((dense.shape[0], max(cap, 1)), np.int64), np.full((dense.shape[0], max(cap, 1)), 7.0)
    for r in range(dense.shape[0]):
        at = np.flatnonzero(dense[r])
        q_col[r, : at.size], q_val[r, : at.size] = at, dense[r, at]
    col_nnz = np.count_nonzero(dense, axis=0).astype(np.int64)
    col_big = np.count_nonzero(dense > drained, axis=0).astype(np.int64)
    return q_col, q_val, q_len, col_nnz, col_big


def dense_of(q_col, q_val, q_len, cols, col_nnz, col_big, drained=1e-9):
    """The dense queue a sparse one stands for; asserts its layout (nonzero entries, ascending columns) and counts."""
    out = np.zeros((q_len.size, cols))
    for r in range(q_len.size):
        c, v = q_col[r, : q_len[r]], q_val[r, : q_len[r]]
        assert (np.diff(c) > 0).all() and (v != 0).all() and not np.signbit(v).any()
        out[r, c] = v
    assert np.array_equal(col_nnz, np.count_nonzero(out, axis=0))
    assert np.array_equal(col_big, np.count_nonzero(out > drained, axis=0))
    return out


def sparse_args(args, room):
    """`shuffle_queues`' dense arguments as the sparse kernel's."""
    queue, width, n, left, serve_row, remaining, col_node, held, served_read, served_sent, row_sum, stale, drained = (
        args
    )
    q_col, q_val, q_len, col_nnz, col_big = sparse_queue(queue, room, drained)
    return (q_col, q_val, q_len, width, n, left, serve_row, remaining, col_node, held, served_read, served_sent,
            row_sum, stale, col_nnz, col_big, drained)  # fmt: skip


@settings(max_examples=400, deadline=None)
@given(shuffle_queues(), st.sampled_from([0, 1, 64]))
def test_shuffle_move_is_the_dense_numpy_forms_bits(args, room):
    """The sparse queue's tick against the dense queue's NumPy form: the same returns, the same bits in every array,
    the queue left as the dense one (cells served in full and dust rows gone, read bytes joining the send rows, rows
    widened when a send row had no room) and its column counts."""
    theirs = _copies(args)
    mine = sparse_args(_copies(args), room)
    q_col, q_val, q_len, width, n, left, serve_row, remaining, col_node, held, read, sent, row_sum, stale = mine[:14]
    queue = tuple(SparseQueue(q_col, q_val, q_len, row_sum, stale, *mine[14:16]))  # a record: a plain tuple
    got = shuffle_move(queue, width, n, left, serve_row, remaining, col_node, held, read, sent)
    want, moved, local, rows, rows_want, start, held = got[:7]
    want_np, moved_np, local_np, rows_np, rows_want_np, start_np, held_np = numpy_shuffle_move(*theirs)
    assert same_bits(want, want_np) and np.array_equal(moved, moved_np)
    assert same_bits(np.array([local]), np.array([local_np]))
    assert np.array_equal(rows, rows_np) and same_bits(rows_want, rows_want_np)
    assert start == start_np and held == held_np
    queue = theirs[0]
    assert same_bits(dense_of(got[7], got[8], mine[2], queue.shape[1], mine[14], mine[15]), queue)
    for a, b in zip(mine[3:14], theirs[1:12], strict=True):
        if isinstance(a, np.ndarray):
            assert same_bits(a, b) if a.dtype == float else np.array_equal(a, b)


@settings(max_examples=300, deadline=None)
@given(st.integers(0, 2**32 - 1), st.sampled_from([0, 1, 7, 8, 9, 15, 16, 127, 128, 129, 200, 256, 1000, 4096, 5000]),
       st.sampled_from([0.0, 0.01, 0.1, 0.5, 1.0]))  # fmt: skip
def test_np_sum_sparse_is_the_dense_arrays_pairwise_sum(seed, n, density):
    """Entries at sorted places of a zero array, with a slice of the entries (lo:hi) given as the whole."""
    r = np.random.default_rng(seed)
    a = np.where(r.random(n) < density, r.random(n) * 10.0 ** r.integers(-8, 8, n), 0.0)
    pos = np.flatnonzero(a)
    pad = int(r.integers(0, 3))  # entries of other rows before and after
    all_pos = np.concatenate([np.full(pad, -5), pos, np.full(pad, n + 7)]).astype(np.int64)
    all_val = np.concatenate([np.full(pad, 99.0), a[pos], np.full(pad, 99.0)])
    got = np_sum_sparse(all_pos, all_val, pad, pad + pos.size, n)
    assert same_bits(np.array([got]), np.array([a.sum()]))


def test_np_sum_is_numpys_pairwise_sum():
    r = np.random.default_rng(5)
    for n in (0, 1, 7, 8, 9, 15, 16, 127, 128, 129, 200, 1000, 5000):
        a = r.random(n) * 10.0 ** r.integers(-8, 8, n)
        assert same_bits(np.array([np_sum(a, 0, n)]), np.array([a.sum()]))


def numpy_lag_bounds(done, size, gid, kind, job, task_start, progress, attempts, max_execs, sure_at, maybe_at):
    """policies.speculation.hadoop_lookahead.lag_bounds' arithmetic as the NumPy calls `running_lag_bounds` replaced."""
    single = attempts <= max_execs
    weight = progress
    if not single.all():
        best = np.zeros(int(gid.max()) + 1)
        np.maximum.at(best, gid, progress)
        weight = best[gid] / attempts
    group = 2 * job + kind
    by_group = (done + np.bincount(group, weights=weight, minlength=done.size)) / size
    average = by_group[group]
    gap = average - progress
    sure = single & (average >= sure_at) & (gap >= sure_at)
    maybe = single & (average >= maybe_at) & (gap >= maybe_at)

    def earliest(mask):
        return float(task_start[mask].min()) if mask.any() else np.inf

    bounds = []
    for code in (0, 1):
        mine = kind == code
        bounds += [earliest(sure & mine), earliest(maybe & mine)]
    return (*bounds, by_group)


@st.composite
def running_attempts(draw):
    """Running attempts of a few jobs, some tasks with backups, progress with ties near the gap."""
    seed, m = draw(st.integers(0, 2**32 - 1)), draw(st.integers(0, 30))
    r = np.random.default_rng(seed)
    tasks = r.integers(0, max(m, 1), m)
    gid = r.permutation(tasks).astype(np.int64)  # a task's entries apart, as rows and ending entries come
    attempts = np.bincount(gid)[gid].astype(np.int64) if m else np.zeros(0, np.int64)
    n_jobs = int(r.integers(1, 4))
    job = (gid % n_jobs).astype(np.int64)
    kind = ((gid // n_jobs) % 2).astype(np.int8)
    progress = r.choice([0.0, 0.1, 0.2, 0.4, 0.2 + 1e-10, 0.6, 1.0, 1 / 3], m) if draw(st.booleans()) else r.random(m)
    task_start = r.choice([0.0, 3.0, 60.0, 61.5, 100.0], m)
    top = int(job.max()) + 1 if m else 1
    done = r.integers(0, 5, 2 * top).astype(float)
    size = np.maximum(done + r.integers(0, 8, 2 * top), 1).astype(float)
    return done, size, gid, kind, job, task_start, progress, attempts, 1, 0.2 + 1e-9, 0.2 - 1e-9


@settings(max_examples=300, deadline=None)
@given(running_attempts())
def test_lag_bounds_is_numpys_bits(args):
    """The kernel reads the ledger's columns (`finished`, `tasks`) up to the highest job with an entry: columns past
    it are left out, and columns the ledger does not have yet are 0 finished of 1 (the NumPy form is given those)."""
    done, size, gid, kind, job, *rest = args
    task_start, progress, attempts, max_execs, _, maybe_at = rest
    top = done.size // 2
    entered = 2 * job + kind
    _, first = np.unique(entered, return_index=True)
    groups = entered[np.sort(first)]  # the groups with entries, in order of their first entry

    def check(got, want):
        assert same_bits(np.array(got[:4]), np.array(want[:4]))
        by_group = got[4]  # rows: the groups (floats), their averages, their own "maybe" bounds
        assert by_group.shape == (3, groups.size) and np.array_equal(by_group[0], groups.astype(float))
        assert same_bits(by_group[1], want[4][groups])
        average = want[4][entered]  # each group's "maybe" bound: its own of the kind's
        maybe = (attempts <= max_execs) & (average >= maybe_at) & (average - progress >= maybe_at)
        own = [task_start[maybe & (entered == g)].min(initial=np.inf) for g in groups]
        assert same_bits(by_group[2], np.array(own, dtype=float))

    more_done, more_size = np.concatenate((done, [5.0, 5.0])), np.concatenate((size, [7.0, 7.0]))
    check(running_lag_bounds(more_done, more_size, gid, kind, job, *rest), numpy_lag_bounds(*args))
    cut = 2 * (top - 1)
    got = running_lag_bounds(done[:cut], size[:cut], gid, kind, job, *rest)
    done[cut:], size[cut:] = 0.0, 1.0
    check(got, numpy_lag_bounds(done, size, gid, kind, job, *rest))


@settings(max_examples=200, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), n=st.integers(0, 60))
def test_serving_rows_are_numpys(seed, n):
    r = np.random.default_rng(seed)
    serve_row = np.where(r.random(n) < 0.5, -1, r.permutation(2 * n + 1)[:n]).astype(np.int64)
    want = r.choice([0.0, -0.0, 1.5, 3.0, np.nan, 1e-300], n)
    live = serve_row >= 0
    got = serving_rows(serve_row, want)
    assert np.array_equal(got[0], serve_row[live]) and same_bits(got[1], want[live])
    assert np.array_equal(got[2], np.flatnonzero(~live & (want > 0))) and got[2].dtype == np.int64


@settings(max_examples=200, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), n=st.integers(0, 300))
def test_held_ready_is_numpys_choice_and_sum(seed, n):
    """ShuffleServer._deliver's NumPy form: held columns whose reduce's phase is not the JVM start, their rows, MB
    and pairwise sum; `held` zeroed there only (unused columns have row -1 and nothing held)."""
    r = np.random.default_rng(seed)
    col_row = np.where(r.random(n) < 0.2, -1, r.permutation(n + 3)[:n]).astype(np.int64)
    held = np.where((col_row >= 0) & (r.random(n) < 0.6), r.random(n) * 10.0 ** r.integers(-3, 4, n), 0.0)
    kind = r.integers(0, 7, n + 3).astype(np.int8)
    cols = np.flatnonzero(held)
    cols = cols[(kind[col_row[cols]] != 1) & (kind[col_row[cols]] != 4)]
    want_mb, want_held = held[cols], held.copy()
    want_held[cols] = 0.0
    got = held_ready(held, col_row, kind, 0b10010)  # a bit per kind: 1 and 4
    assert np.array_equal(got[0], cols) and np.array_equal(got[1], col_row[cols]) and same_bits(got[2], want_mb)
    assert same_bits(np.array([got[3]]), np.array([want_mb.sum()])) and np.array_equal(held, want_held)


@settings(max_examples=200, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), n=st.integers(0, 12), copiers=st.integers(1, 5))
def test_copiers_look_is_numpys_any(seed, n, copiers):
    r = np.random.default_rng(seed)
    changed, waiting = r.random(n) < 0.5, r.integers(0, 3, n).astype(np.int64)
    in_flight, hi = r.integers(0, copiers + 1, n).astype(np.int64), int(r.integers(0, n + 1))
    want = bool((changed[:hi] & (waiting[:hi] > 0) & (in_flight[:hi] < copiers)).any())
    assert copiers_look(changed, waiting, in_flight, copiers, hi) is want


def numpy_running_entries(tag, n, extra_gid, task_kind, task_job, task_start):
    """RunningEntries.arrays' entries as the NumPy calls `running_entries` replaced."""
    tag = tag[:n]
    rows = np.flatnonzero(tag)
    gid = np.concatenate((tag[rows], extra_gid)) if extra_gid.size else tag[rows]
    ordered = np.sort(gid)
    tasks = len(gid) - int(np.count_nonzero(ordered[1:] == ordered[:-1]))
    attempts = np.bincount(gid)[gid] if tasks < len(gid) else np.ones(len(gid), dtype=np.int64)
    return rows, gid, task_kind[gid], task_job[gid], task_start[gid], attempts, tasks


@settings(max_examples=300, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), n=st.integers(0, 40), extra=st.integers(0, 4), width=st.integers(1, 60))
def test_running_entries_are_numpys_values(seed, n, extra, width):
    """Rows with a gid (0: none) ascending, then the extra gids; some tasks with several entries (backups)."""
    r = np.random.default_rng(seed)
    tasks = width + 1
    tag = np.where(r.random(n + 5) < 0.6, r.integers(1, tasks, n + 5), 0).astype(np.int64)
    extra_gid = r.integers(1, tasks, extra).astype(np.int64)
    task_kind = r.integers(0, 2, tasks).astype(np.int8)
    task_job = r.integers(0, 5, tasks).astype(np.int64)
    task_start = np.where(r.random(tasks) < 0.2, np.nan, r.random(tasks) * 100)
    got = running_entries(tag, n, extra_gid, task_kind, task_job, task_start)
    want = numpy_running_entries(tag, n, extra_gid, task_kind, task_job, task_start)
    assert got[6] == want[6]
    for g, w in zip(got[:6], want[:6], strict=True):
        assert g.dtype == w.dtype
        assert same_bits(g, w) if g.dtype.kind == "f" else np.array_equal(g, w)


def numpy_item_progress(remaining, amount, lo, hi, n):
    """CloudModel.item_progress as the NumPy calls `item_progress` replaced."""
    amount = amount[:n]
    with np.errstate(invalid="ignore"):  # inf / inf: NaN, as the kernel's
        done = np.divide(remaining[:n], amount, out=np.zeros(n), where=amount > 0)
    np.clip(1.0 - done, 0.0, 1.0, out=done)
    lo = lo[:n]
    return lo + (hi[:n] - lo) * done


@settings(max_examples=300, deadline=None)
@given(st.integers(0, 2**32 - 1), st.integers(0, 30))
def test_item_progress_is_numpys_bits(seed, n):
    """Phases not started, half done, done, over-done (remaining below 0 or above the amount), empty or open-ended
    (inf), progress marks in any order; rows past `n` are not read."""
    r = np.random.default_rng(seed)
    size = n + int(r.integers(0, 3))
    remaining = r.choice([0.0, -0.0, 0.1, 0.5, 1.0, 1 / 3, 7.0, -1.0, np.inf, np.nan], size)
    amount = r.choice([0.0, -0.0, 0.5, 1.0, 1 / 3, 7.0, -2.0, np.inf], size)
    lo, hi = r.choice([0.0, 1 / 3, 0.25, 0.5, 2 / 3, 1.0], (2, size))
    got = item_progress(remaining, amount, lo, hi, n)
    assert got.shape == (n,) and same_bits(got, numpy_item_progress(remaining, amount, lo, hi, n))


def numpy_set_remaining(rows, remaining, item_remaining, phase_amount):
    """CloudModel.set_remaining_rows as the NumPy calls `set_remaining` replaced."""
    if np.any(remaining < 0):
        return False
    phase_amount[rows] += remaining - item_remaining[rows]
    item_remaining[rows] = remaining
    return True


@settings(max_examples=300, deadline=None)
@given(st.integers(0, 2**32 - 1), st.integers(0, 30), st.booleans())
def test_set_remaining_is_numpys_bits(seed, n, negative):
    """Distinct rows in any order; amounts with inf, NaN and -0.0; a negative remaining changes nothing."""
    r = np.random.default_rng(seed)
    size = n + int(r.integers(0, 4))
    rows = r.permutation(size)[:n].astype(np.int64)
    remaining = r.choice([0.0, -0.0, 0.1, 1 / 3, 7.0, 1e-12, np.inf, np.nan], n)
    if negative and n:
        remaining[r.integers(0, n)] = -1.0
    item_remaining, phase_amount = r.choice([0.0, -0.0, 0.5, 1 / 3, 9.0, np.inf], (2, size))
    mine, theirs = (item_remaining.copy(), phase_amount.copy()), (item_remaining.copy(), phase_amount.copy())
    with np.errstate(invalid="ignore"):  # inf - inf: NaN, as the kernel's
        want = numpy_set_remaining(rows, remaining, *theirs)
    assert set_remaining(rows, remaining, *mine) == want
    assert same_bits(mine[0], theirs[0]) and same_bits(mine[1], theirs[1])


@settings(max_examples=300, deadline=None)
@given(st.integers(0, 2**32 - 1), st.integers(0, 12), st.sampled_from([1, 7, 16, 130, 256]))
def test_resum_rows_is_numpys_bits(seed, rows, width):
    """ShuffleServer._sums' stale rows summed again (sparse) as the dense gathered block's `sum(axis=1)`: none, some
    or all stale."""
    r = np.random.default_rng(seed)
    queue = np.where(r.random((rows, width + 3)) < 0.5, r.random((rows, width + 3)) * 10.0 ** r.integers(-9, 4), 0.0)
    row_sum, stale = r.random(rows), r.random(rows) < r.choice([0.0, 0.5, 1.0])
    queue[:, width:] = 0.0  # the columns beyond the width in use hold nothing
    want_sum, want_stale = row_sum.copy(), stale.copy()
    at = want_stale.nonzero()[0]
    if at.size:
        want_sum[at] = queue[at, :width].sum(axis=1)
        want_stale[at] = False
    q_col, q_val, q_len, _, _ = sparse_queue(queue)
    resum_rows(q_col, q_val, q_len, width, row_sum, stale)
    assert same_bits(row_sum, want_sum) and np.array_equal(stale, want_stale)


def numpy_copiers_take(copiers, changed, waiting, in_flight, col_row, item_kind, starting, backlog, position, next_at,
                       to_node, fetch_node, fetch_col, disk_mb, send_mb, nic_mb, queue, stale):  # fmt: skip
    """CopierShuffle.before_tick and _take as the NumPy calls `copiers_take` replaced."""
    cols = np.flatnonzero(changed & (waiting > 0) & (in_flight < copiers))
    cols = cols[(np.right_shift(starting, item_kind[col_row[cols]].astype(np.int64)) & 1) == 0]  # a bit per kind
    if not cols.size:
        return fetch_node, fetch_col, False
    changed[cols] = False
    n, sub = backlog.shape[1], backlog[cols]
    waits = sub > 0
    if fetch_col.size:
        k_of = np.full(changed.size, -1, dtype=np.int64)
        k_of[cols] = np.arange(cols.size)
        mine = k_of[fetch_col] >= 0
        waits[k_of[fetch_col[mine]], fetch_node[mine]] = False
    k, node = np.nonzero(waits)
    if not k.size:
        return fetch_node, fetch_col, False
    c = cols[k]
    at = (position[c, node] - next_at[c]) % n
    free = copiers - in_flight[c]
    if (np.bincount(k, minlength=cols.size)[k] > free).any():
        order = np.lexsort((at, k))
        k, node, c, at, free = k[order], node[order], c[order], at[order], free[order]
        mb = sub[k, node]
        to = to_node[c]
        cost = mb / np.where(node == to, disk_mb[node], np.minimum(send_mb[node], nic_mb[to]))
        rank = np.arange(k.size) - np.searchsorted(k, k)
        spent = np.zeros((cols.size, int(rank.max()) + 1))
        spent[k, rank] = cost
        before = np.cumsum(spent, axis=1)[k, rank] - cost
        take = (before < free) | (rank < free)
        node, c, k, at, mb = node[take], c[take], k[take], at[take], mb[take]
    else:
        mb = sub[k, node]
    queue[node, c] += mb
    backlog[c, node] = 0.0
    fetch_node, fetch_col = np.concatenate((fetch_node, node)), np.concatenate((fetch_col, c))
    stale[node] = True
    taken = np.bincount(k, minlength=cols.size)
    in_flight[cols] += taken
    waiting[cols] -= taken
    last = np.full(cols.size, -1, dtype=np.int64)
    np.maximum.at(last, k, at)
    moved = taken > 0
    next_at[cols[moved]] = (next_at[cols[moved]] + last[moved] + 1) % n
    return fetch_node, fetch_col, True


@st.composite
def copier_states(draw):
    """Reduce columns with backlogs on some nodes, fetches under way, copiers free or not, some JVMs starting; a few
    nodes or enough for a reduce's candidates to be put in rotation order by argsort (more than 24)."""
    seed = draw(st.integers(0, 2**32 - 1))
    r = np.random.default_rng(seed)
    n = int(r.integers(1, draw(st.sampled_from([12, 80]))))
    cols, copiers = int(r.integers(1, 10)), int(r.integers(1, 6))
    backlog = np.where(r.random((cols, n)) < draw(st.sampled_from([0.2, 0.6, 1.0])),
                       r.choice([0.5, 1.0, 30.0, 100.0, 1e-3], (cols, n)), 0.0)  # fmt: skip
    position = np.array([r.permutation(n) for _ in range(cols)], dtype=np.int64)
    next_at = r.integers(0, n, cols).astype(np.int64)
    pairs = [(v, c) for c in range(cols) for v in range(n) if r.random() < 0.15]  # by column, then node
    fetch_node = np.array([p[0] for p in pairs], dtype=np.int64)
    fetch_col = np.array([p[1] for p in pairs], dtype=np.int64)
    in_flight = np.minimum(np.bincount(fetch_col, minlength=cols), copiers).astype(np.int64)
    waiting = np.count_nonzero(backlog, axis=1).astype(np.int64)
    changed = r.random(cols) < 0.8
    col_row = np.where(r.random(cols) < 0.9, r.integers(0, 20, cols), -1).astype(np.int64)
    item_kind = r.integers(0, 7, 20).astype(np.int8)
    to_node = r.integers(0, n, cols).astype(np.int64)
    disk_mb, send_mb, nic_mb = (r.choice([10.0, 50.0, 125.0], n) for _ in range(3))
    queue = np.where(r.random((2 * n, cols)) < 0.3, r.random((2 * n, cols)), 0.0)
    stale = r.random(2 * n) < 0.2
    return copiers, changed, waiting, in_flight, col_row, item_kind, 0b10010, backlog, position, next_at, to_node, \
        fetch_node, fetch_col, disk_mb, send_mb, nic_mb, queue, stale  # fmt: skip


def copiers_take_of(copiers, changed, waiting, in_flight, col_row, item_kind, starting, backlog, position, next_at,
                    to_node, fetch_node, fetch_col, disk_mb, send_mb, nic_mb, q_col, q_val, q_len, stale, col_nnz,
                    col_big):  # fmt: skip
    """`copiers_take` called with the arguments of its NumPy form and the sparse queue (the records built from them)."""
    reduces = CopierColumns(changed, waiting, in_flight, col_row, backlog, position, next_at, to_node)
    queue = SparseQueue(q_col, q_val, q_len, np.zeros(q_len.size), stale, col_nnz, col_big)
    rates = CopyRates(disk_mb, send_mb, nic_mb)
    return copiers_take(copiers, tuple(reduces), item_kind, starting, fetch_node, fetch_col, tuple(rates), tuple(queue))


@settings(max_examples=400, deadline=None)
@given(copier_states(), st.sampled_from([0, 1, 64]))
def test_copiers_take_is_numpys_bits(args, room):
    """Against the NumPy form on the dense queue: the sparse queue's read rows end as the dense ones (an entry grown
    or put at its place, rows widened when one had no room), with their column counts."""
    mine, theirs = _copies(args), _copies(args)
    queue = mine[16]
    q_col, q_val, q_len, col_nnz, col_big = sparse_queue(queue, room)
    got = copiers_take_of(*mine[:16], q_col, q_val, q_len, mine[17], col_nnz, col_big)
    want = numpy_copiers_take(*theirs)
    by_col = np.lexsort((want[0], want[1]))  # the kernel keeps them by column, then node (their order moves nothing)
    assert got[2] == want[2] and np.array_equal(got[0], want[0][by_col]) and np.array_equal(got[1], want[1][by_col])
    assert same_bits(dense_of(got[3], got[4], q_len, queue.shape[1], col_nnz, col_big), theirs[16])
    for a, b in zip(mine[:16] + mine[17:], theirs[:16] + theirs[17:], strict=True):
        if isinstance(a, np.ndarray):
            assert same_bits(a, b) if a.dtype == float else np.array_equal(a, b)


@st.composite
def cpu_clouds(draw):
    """Hosts with or without pool limits (inf: none), VMs pooled or not, entitlements with zeros."""
    seed = draw(st.integers(0, 2**32 - 1))
    r = np.random.default_rng(seed)
    hosts, vms = HostTable(), VMTable()
    n_host, n_vm = int(r.integers(1, 5)), int(r.integers(1, 12))
    limits = draw(st.sampled_from(["none", "some", "all"]))
    for _ in range(n_host):
        finite = limits == "all" or (limits == "some" and r.random() < 0.5)
        hosts.append(cores=int(r.integers(1, 17)), core_mhz=float(r.choice([2400.0, 2933.3, 1e3 / 3])),
                     pool_cpu_limit_mhz=float(r.uniform(0, 9000)) if finite else np.inf,
                     pool_cpu_reservation_mhz=float(r.choice([0.0, 500.0, r.uniform(0, 3000)])))  # fmt: skip
    for _ in range(n_vm):
        vms.append(host=int(r.integers(0, n_host)), vcpus=int(r.integers(1, 5)), in_pool=bool(r.random() < 0.7),
                   cpu_entitlement_mhz=float(r.choice([0.0, 1000.0, r.uniform(0, 5000)])),
                   cpu_shares=float(r.choice([1000.0, 2000.0, r.uniform(0, 4000)])))  # fmt: skip
    return hosts, vms


@settings(max_examples=300, deadline=None)
@given(cpu_clouds())
def test_cpu_setup_is_numpys_bits(cloud):
    hosts, vms = cloud
    n_host, n_vm = hosts.n, vms.n
    floor = 1e-6
    core_mhz_vm = hosts.core_mhz[:n_host][vms.host[:n_vm]]
    vcpu_mhz, weight, host_mhz, pools = cpu_setup(
        vms.vcpus[:n_vm], core_mhz_vm, vms.cpu_entitlement_mhz[:n_vm], floor, hosts.cores[:n_host],
        hosts.core_mhz[:n_host], hosts.pool_cpu_limit_mhz[:n_host], hosts.pool_cpu_reservation_mhz[:n_host],
        vms.in_pool[:n_vm], vms.host[:n_vm], vms.cpu_shares[:n_vm],
    )  # fmt: skip
    assert same_bits(vcpu_mhz, vms.vcpus[:n_vm] * core_mhz_vm)
    assert same_bits(weight, vms.cpu_entitlement_mhz[:n_vm] + floor)
    assert same_bits(host_mhz, hosts.cores[:n_host] * hosts.core_mhz[:n_host])
    if np.isfinite(hosts.pool_cpu_limit_mhz[:n_host]).any():
        want = numpy_pool_arrays(hosts, vms, floor)
    else:
        want = (np.zeros(0, bool), np.zeros(0), np.zeros(0), np.zeros(0, np.int64), np.zeros(0), np.zeros(0))
    assert len(pools) == len(want)
    for a, b in zip(pools, want, strict=True):
        assert a.dtype == b.dtype and (same_bits(a, b) if a.dtype == float else np.array_equal(a, b))


def numpy_pool_arrays(hosts, vms, floor_mhz: float) -> tuple[np.ndarray, ...]:
    """`cpu_setup`'s pool arrays as the NumPy calls it replaced: each VM pooled or not, each host's pool limit
    (0: no pool) and reservation, the first level's items (the host pools, then every VM) and weights (the pool: what
    its VMs are entitled to; a VM outside the pool its own entitlement; a pooled VM 0), each VM's shares in its pool."""
    n_host, n_vm = hosts.n, vms.n
    vm_host = vms.host[:n_vm]
    weight = vms.cpu_entitlement_mhz[:n_vm] + floor_mhz
    limit = hosts.pool_cpu_limit_mhz[:n_host]
    finite = np.isfinite(limit)
    pooled = vms.in_pool[:n_vm] & finite[vm_host]
    group = np.concatenate((np.arange(n_host), vm_host))
    w = np.concatenate((np.bincount(vm_host, weight * pooled, minlength=n_host), weight * ~pooled))
    return (pooled, np.where(finite, limit, 0.0), hosts.pool_cpu_reservation_mhz[:n_host].copy(), group, w,
            vms.cpu_shares[:n_vm] * pooled)  # fmt: skip


def rack_count(hosts: HostTable) -> int:
    """Racks 0..highest of the hosts' (the engine reads it off `io_bw`'s length)."""
    return int(hosts.rack[: hosts.n].max()) + 1 if hosts.n else 0


def numpy_rack_uplink_mbps(hosts: HostTable, physics) -> np.ndarray:
    """`demand_inputs`' rack uplinks as the NumPy calls it replaced: each rack's bandwidth per direction, its
    hosts' NICs over the oversubscription (inf: no limit)."""
    if physics.rack_oversubscription is None:
        return np.full(rack_count(hosts), np.inf)
    nics = np.bincount(hosts.rack[: hosts.n], hosts.nic_mbps[: hosts.n], minlength=rack_count(hosts))
    return nics / physics.rack_oversubscription


def numpy_flat_streams(items):
    """vcloud.engine.flat_streams as the NumPy calls `flatten_streams` replaced (field name -> value)."""
    n, width = items.n, items.width
    svm = items.stream_vm[:n].ravel()
    at = np.flatnonzero(svm >= 0)
    item, col = np.divmod(at, width)
    multi = np.bincount(item, minlength=n) + (items.need_cpu[:n] > 0) > 1
    device = items.stream_device[:n].ravel()[at].astype(np.int64)
    file = np.where(device == int(Device.DISK), items.stream_file[:n].ravel()[at], -1)
    need, write = items.stream_need[:n].ravel()[at], items.stream_write[:n].ravel()[at]
    file_rows = (file >= 0).nonzero()[0]
    f_touched, f_inv = np.unique(file[file_rows], return_inverse=True)
    starts = run_starts(item).nonzero()[0]
    kind = items.kind[:n]
    return dict(item=item, col=col, vm=svm[at], device=device, need=need, file=file, write=write, multi=multi,
                starts=starts, owners=item[starts], any_multi=bool(multi.any()), file_rows=file_rows,
                any_file=file_rows.size > 0, f_file=file[file_rows], f_item=item[file_rows], f_vm=svm[at][file_rows],
                f_need=need[file_rows], f_write=write[file_rows], f_hit=items.stream_hit[:n].ravel()[at[file_rows]],
                f_touched=f_touched, f_inv=f_inv, is_load=kind == int(Kind.LOAD),
                has_load=bool((kind == int(Kind.LOAD)).any()), wait_rows=(kind == int(Kind.WAIT)).nonzero()[0],
                load_rows=(kind == int(Kind.LOAD)).nonzero()[0])  # fmt: skip


@st.composite
def item_tables(draw):
    """Item tables (with spare capacity) of 0-15 rows, 0-4 streams each on any device, files shared between rows."""
    seed = draw(st.integers(0, 2**32 - 1))
    r = np.random.default_rng(seed)
    items = ItemTable(capacity=int(r.integers(0, 4)))
    for _ in range(int(r.integers(0, 16))):
        row = items.add(None, vm=int(r.integers(0, 5)), kind=int(r.choice([int(k) for k in Kind])),
                        need_cpu=float(r.choice([0.0, 1.0, 2.5])))  # fmt: skip
        streams = int(r.integers(0, 5))
        items.widen(max(streams, 1))
        for c in range(streams):
            if r.random() < 0.8:  # a row may leave a column unused
                items.stream_vm[row, c] = int(r.integers(0, 5))
                items.stream_device[row, c] = int(r.choice([int(d) for d in Device]))
                items.stream_file[row, c] = int(r.integers(-1, 6))
                items.stream_need[row, c] = float(r.choice([0.5, 1.0, 3.0]))
                items.stream_write[row, c] = bool(r.random() < 0.4)
                items.stream_hit[row, c] = float(r.random())
    return items


@settings(max_examples=300, deadline=None)
@given(st.lists(st.integers(0, 2**40), max_size=40), st.integers(0, 2**32 - 1))
def test_distinct_ascending_is_numpys_unique(ids, seed):
    """Narrow ranges (the bitmap) and wide ones (the radix sort: one pass or several), repeats included."""
    r = np.random.default_rng(seed)
    values = np.array(ids, dtype=np.int64)
    if seed % 3 == 1:  # narrow
        values = r.integers(0, 1 + 3 * len(ids), len(ids))
    elif seed % 3 == 2 and ids:  # wide, each id repeated: a busy tick's file streams (several read one file)
        values = r.choice(values, size=int(r.integers(1, 300)))
    want, inverse = np.unique(values, return_inverse=True)
    got = distinct_ascending(values)
    assert np.array_equal(got[0], want) and np.array_equal(got[1], inverse) and got[1].dtype == np.int64


@settings(max_examples=300, deadline=None)
@given(st.lists(st.integers(-(2**40), 2**40), max_size=60), st.integers(0, 2**32 - 1))
def test_ascending_order_is_numpys_stable_argsort(ids, seed):
    """Task ids in any range (one radix pass or four), repeated (a task's attempts), or none."""
    r = np.random.default_rng(seed)
    values = np.array(ids, dtype=np.int64)
    if seed % 2 and ids:
        values = r.choice(values, size=int(r.integers(1, 400)))
    assert np.array_equal(ascending_order(values), np.argsort(values, kind="stable"))


@settings(max_examples=300, deadline=None)
@given(item_tables(), st.integers(0, 2**32 - 1))
def test_flat_streams_is_numpys(items, seed):
    """Of all rows or of some (engine.live_items: the streams read in place from the table's rows) against the NumPy
    form of a table holding only those rows."""
    rows = np.arange(items.n)
    if seed % 2:
        rows = rows[np.random.default_rng(seed).random(items.n) < 0.6]
    live = items.take(rows, ("kind", "need_cpu", *ItemTable.WIDE))
    got = flatten_streams(columns(StreamColumns, items), rows, live.need_cpu, live.kind, live.n)
    want = numpy_flat_streams(live)
    assert got._fields == tuple(want)
    for value, (name, expected) in zip(got, want.items(), strict=True):
        if isinstance(expected, np.ndarray):
            assert value.dtype == expected.dtype and np.array_equal(value, expected), name
        else:
            assert value == expected, name


@settings(max_examples=300, deadline=None)
@given(st.integers(0, 2**32 - 1), st.integers(1, 6), st.integers(0, 120))
def test_by_group_then_is_the_two_stable_sorts(seed, n_groups, m):
    """by_group_then (bucket by group, each group by key) against NumPy's stable argsort by key, then by
    group: groups small (insertion sort) and large (argsort), keys with ties, -0.0 and NaN."""
    r = np.random.default_rng(seed)
    group = r.integers(0, n_groups, m).astype(np.int64)
    key = r.choice([0.0, -0.0, 1.0, 2.5, np.nan, 7.0, -3.0], m) if seed % 2 else r.random(m)
    order = np.argsort(key, kind="stable")
    want = order[np.argsort(group[order], kind="stable")]
    assert np.array_equal(by_group_then(group, key, n_groups), want)


def numpy_progress(dt, rate, remaining, has_load, is_load):
    """vcloud.engine.stage_progress as the NumPy calls `progress` replaced."""
    n = rate.size
    progress = rate * dt
    done = progress >= remaining
    if has_load:
        done &= ~is_load
    rows = done.nonzero()[0]
    frac_dt = np.full(n, dt)
    if rows.size:
        possible, left = progress[rows], remaining[rows]
        frac_dt[rows] = np.divide(left, possible, out=np.zeros(rows.size), where=possible > 0) * dt
        progress[rows] = left
    remaining -= np.where(is_load, 0.0, progress) if has_load else progress
    if rows.size:
        remaining[rows] = 0.0
    return progress, frac_dt, rows


@settings(max_examples=300, deadline=None)
@given(st.integers(0, 2**32 - 1), st.integers(0, 20), st.sampled_from([1.0, 0.25, 0.1]))
def test_progress_is_numpys_bits(seed, n, dt):
    r = np.random.default_rng(seed)
    rate = r.choice([0.0, -0.0, 0.5, 1.0, 3.0, 1 / 3, 40.0], n)
    remaining = r.choice([0.0, 0.1, 0.5, 1.0, 2.0, 1 / 3, 10.0, np.inf], n)
    is_load = r.random(n) < 0.2
    has_load = bool(is_load.any())
    remaining[is_load] = np.inf
    mine, theirs = remaining.copy(), remaining.copy()
    got, want = progress(dt, rate, mine, has_load, is_load), numpy_progress(dt, rate, theirs, has_load, is_load)
    assert same_bits(got[0], want[0]) and same_bits(got[1], want[1]) and np.array_equal(got[2], want[2])
    assert got[2].dtype == want[2].dtype and same_bits(mine, theirs)


@settings(max_examples=300, deadline=None)
@given(vm_memories(), st.integers(0, 2**32 - 1), st.booleans())
def test_memory_stage_is_the_sums_then_reclaim(args, seed, count_files):
    """kernels.memory_stage against its parts as the engine called them: used and active MB by np.bincount over the
    items, the resident files' cached MB likewise, then reclaim (tested against NumPy above), and the VM
    columns it writes."""
    (dt, inflate, free_rate, deflate, max_fraction, idle_tax, size, limit_cfg, granted, shares, in_pool, vm_host,
     pool_limit, balloon, touched, _used, _active, _cached) = args  # fmt: skip
    r = np.random.default_rng(seed)
    n_vm, n, n_file = size.size, int(r.integers(0, 12)), int(r.integers(0, 12))
    os_mem, os_active = r.choice([256.0, 300.5], n_vm), r.choice([0.5, 1 / 3], n_vm)
    item_vm = r.integers(0, n_vm, n).astype(np.int64)
    item_mem, item_active = r.choice([0.0, 200.0, 1000 / 3, 700.0], n), r.choice([0.0, 100.0, 1 / 7], n)
    file_vm = r.integers(0, n_vm, n_file).astype(np.int64)
    file_cached = r.choice([0.0, 64.0, 1000 / 3], n_file)
    resident = np.flatnonzero(r.random(n_file) < 0.7).astype(np.int64)
    used = os_mem + np.bincount(item_vm, item_mem, minlength=n_vm)
    active = os_mem * os_active + np.bincount(item_vm, item_active, minlength=n_vm)
    cached = np.bincount(file_vm[resident], file_cached[resident], minlength=n_vm).astype(float)
    if not count_files:
        cached = np.zeros(n_vm)
    want = reclaim_of(dt, inflate, free_rate, deflate, max_fraction, idle_tax, size, limit_cfg, granted, shares,
                           in_pool, vm_host, pool_limit, balloon, touched, used, active, cached)  # fmt: skip
    state = tuple(np.full(n_vm + 2, 7.0) for _ in range(5))  # VM columns with spare capacity
    state[0][:n_vm], state[4][:n_vm] = balloon, touched
    got = memory_stage(
        dt, tuple(BalloonRates(inflate, free_rate, deflate, max_fraction, idle_tax)),
        tuple(VMMemory(os_mem, os_active, size, limit_cfg, granted, shares, in_pool, vm_host)),
        tuple(VMMemoryState(*state)),
        pool_limit, item_vm, item_mem,
        item_active, file_vm, file_cached, resident, count_files,
    )  # fmt: skip
    assert all(same_bits(a, b) for a, b in zip(got, (used, active, cached, *want), strict=True))
    target, new_balloon, _guest, hv_swap, held, _stall, _swapped, heap_touched = want
    for column, value in zip(state, (new_balloon, target, hv_swap, held, heap_touched), strict=True):
        assert same_bits(column[:n_vm], value) and (column[n_vm:] == 7.0).all()


@settings(max_examples=200, deadline=None)
@given(st.integers(0, 2**32 - 1), st.integers(0, 30))
def test_idle_rows_is_numpys(seed, n):
    r = np.random.default_rng(seed)
    size = n + int(r.integers(0, 3))  # columns with spare capacity
    open_, remaining = r.random(size) < 0.6, r.choice([0.0, -0.0, 1.0, np.inf], size)
    need_cpu = r.choice([0.0, 0.0, 2.0], size)
    rows = np.flatnonzero(open_[:n])
    want = rows[(remaining[rows] == 0) & (need_cpu[rows] == 0)]
    got = find_idle_rows(open_, remaining, need_cpu, n)
    assert got.dtype == want.dtype and np.array_equal(got, want)


@settings(max_examples=200, deadline=None)
@given(copier_states())
def test_copiers_release_is_numpys(args):
    queue, fetch_node, fetch_col, in_flight, changed = args[16], args[11], args[12], args[3], args[1]
    queue = queue.copy()
    third = np.arange(fetch_node.size) % 3  # drained, float dust, or as drawn
    queue[fetch_node, fetch_col] = np.select([third == 0, third == 1], [0.0, 1e-10], queue[fetch_node, fetch_col])
    mine_flight, mine_changed = in_flight.copy(), changed.copy()
    q_col, q_val, q_len, _, _ = sparse_queue(queue)
    got = copiers_release(q_col, q_val, q_len, fetch_node, fetch_col, mine_flight, mine_changed)
    done = queue[fetch_node, fetch_col] <= 1e-9
    want_flight, want_changed = in_flight.copy(), changed.copy()
    if done.any():
        want_flight -= np.bincount(fetch_col[done], minlength=in_flight.size)
        want_changed[fetch_col[done]] = True
    assert np.array_equal(got[0], fetch_node[~done]) and np.array_equal(got[1], fetch_col[~done])
    assert np.array_equal(mine_flight, want_flight) and np.array_equal(mine_changed, want_changed)


@settings(max_examples=200, deadline=None)
@given(st.integers(0, 2**32 - 1), st.sampled_from([None, 1.0, 2.5, 10 / 3]))
def test_demand_inputs_are_numpys_bits(seed, oversubscription):
    from vcloud.engine import Physics

    r = np.random.default_rng(seed)
    hosts = HostTable()
    n_host, n_vm, n, k = int(r.integers(1, 6)), int(r.integers(1, 9)), int(r.integers(0, 12)), int(r.integers(0, 20))
    racks = r.integers(0, 3, n_host)
    for h in range(n_host):
        hosts.append(core_mhz=float(r.choice([2400.0, 1e3 / 3])), disk_mbps=float(r.choice([80.0, 1e3 / 7])),
                     nic_mbps=float(r.choice([125.0, 1e3 / 9])), rack=int(racks[h]))  # fmt: skip
    vm_host = r.integers(0, n_host, n_vm).astype(np.int64)
    vm = r.integers(0, n_vm, n).astype(np.int64)
    need, factor = r.choice([0.5, 1.0, 1 / 3], k), r.choice([0.0, 1.0, 0.7, 1 / 3], k)
    swapped = r.choice([0.0, 10.0, 1e3 / 3, 1e6], n_vm)
    physics = Physics(rack_oversubscription=oversubscription)
    got = demand_inputs(hosts.core_mhz[:n_host], hosts.disk_mbps[:n_host], hosts.nic_mbps[:n_host],
                                hosts.rack[:n_host], oversubscription or 0.0, vm_host, vm, need, factor, swapped,
                                physics.swap_touch_rate)  # fmt: skip
    core_mhz_vm = hosts.core_mhz[:n_host][vm_host]
    uplink = numpy_rack_uplink_mbps(hosts, physics)
    want = (core_mhz_vm, core_mhz_vm[vm],
            np.concatenate((hosts.disk_mbps[:n_host], hosts.nic_mbps[:n_host], uplink, uplink)), need * factor,
            np.minimum(swapped * physics.swap_touch_rate, hosts.disk_mbps[:n_host][vm_host]))  # fmt: skip
    assert all(same_bits(a, b) for a, b in zip(got, want, strict=True))


def numpy_stream_groups(hosts, host, device, io_mbps_max, item, io_bw):
    """The NumPy form stream_groups replaced (the engine's io_group and ceiling)."""
    n_host, uplink = hosts.n, int(Device.UPLINK)
    rack_row = 2 * n_host + (device - uplink) * rack_count(hosts) + hosts.rack[:n_host][host]
    group = np.where(device >= uplink, rack_row, host + n_host * device)
    return group, np.minimum(io_mbps_max[item], io_bw[group])


@settings(max_examples=200, deadline=None)
@given(st.integers(0, 2**32 - 1))
def test_stream_groups_are_numpys_bits(seed):
    r = np.random.default_rng(seed)
    hosts = HostTable()
    n_host, n, k = int(r.integers(1, 6)), int(r.integers(1, 8)), int(r.integers(0, 30))
    racks = r.integers(0, 3, n_host)
    for h in range(n_host):
        hosts.append(rack=int(racks[h]))
    host = r.integers(0, n_host, k).astype(np.int64)
    device = r.integers(0, 4, k).astype(np.int64)
    item = r.integers(0, n, k).astype(np.int64)
    io_mbps_max = r.choice([0.0, -0.0, 50.0, np.inf, np.nan], n)
    io_bw = r.choice([0.0, -0.0, 80.0, 125.0, np.inf], 2 * n_host + 2 * rack_count(hosts))
    got = stream_groups(host, device, hosts.rack[:n_host], rack_count(hosts), int(Device.UPLINK), io_mbps_max,
                                item, io_bw)  # fmt: skip
    want = numpy_stream_groups(hosts, host, device, io_mbps_max, item, io_bw)
    assert np.array_equal(got[0], want[0]) and same_bits(got[1], want[1])


@settings(max_examples=200, deadline=None)
@given(cache_ticks(), st.integers(0, 5))
def test_cache_stage_places_cache_fit_among_the_streams(c, others):
    """kernels.cache_stage is cache_fit with its file streams' factor and headroom scattered among all streams
    (`others` non-file streams interleaved: factor 1, headroom 0), as stage_cache did with NumPy."""
    n_vm, k, r = c["n_vm"], c["f_file"].size, np.arange(c["files"]["vm"].size)
    mine, theirs = ({key: v.copy() for key, v in c["files"].items()} for _ in range(2))
    fit = (1.0, 35.0, 0.1, 0.05, 30.0, c["guest_mem"], c["used"], np.full(3, 50.0), np.zeros(n_vm, np.int64))
    rest = (c["vm_cached"], c["f_file"], c["f_item"], c["f_vm"], c["f_write"], c["f_hit"])
    total = k + others
    file_rows = np.sort(np.random.default_rng(k + 7 * others).permutation(total)[:k]).astype(np.int64)
    dt, now, dirty_ratio, background_ratio, expire_s, guest_mem, used, disk_mbps, vm_host = fit
    records = (DirtyLimits(dirty_ratio, background_ratio, expire_s), GuestRoom(guest_mem, used, vm_host, disk_mbps),
               FileColumns(*(mine[col] for col in FILE_COLUMNS)))  # fmt: skip
    got = cache_stage(dt, now, *map(tuple, records), r, rest[0], total,
                      tuple(file_streams_of(*rest[1:], rows=file_rows)), c["remaining"])  # fmt: skip
    cap, wb_want, factor, bonus = cache_fit_of(*fit, tuple(theirs[col] for col in FILE_COLUMNS), r, *rest,
                                               c["remaining"])  # fmt: skip
    s_factor, s_bonus = np.ones(total), np.zeros(total)
    s_factor[file_rows], s_bonus[file_rows] = factor, bonus
    assert all(same_bits(a, b) for a, b in zip(got, (cap, wb_want, s_factor, s_bonus), strict=True))
    assert all(same_bits(mine[col], theirs[col]) for col in FILE_COLUMNS)


@settings(max_examples=400, deadline=None)
@given(st.integers(0, 2**32 - 1), st.integers(1, 300), st.integers(1, 40), st.integers(1, 12))
def test_closing_drained_is_numpys_gathered_sum(seed, n_rows, cols, k):
    """`ShuffleServer._close_drained`'s former NumPy form, bit for bit: the gathered pending MB (one closing column:
    NumPy sums it pairwise; several: row after row) at most the drained level, rows that hold nothing left out; columns
    with entries above the level, none, or float dust only, and a level exactly at one dust column's sum (a sum in
    another order, an ulp off, would decide otherwise)."""
    r = np.random.default_rng(seed)
    shape = (n_rows, cols)
    queue = np.where(r.random(shape) < 0.4, r.random(shape) * 10.0 ** r.integers(-6, 6, shape), 0.0)
    dust = r.random(cols) < 0.5
    queue[:, dust] = np.where(r.random((n_rows, dust.sum())) < 0.5, r.random((n_rows, dust.sum())) * 1e-11, 0.0)
    stale = r.random(n_rows) < 0.2
    row_sum = np.where(r.random(n_rows) < 0.7, queue.sum(axis=1), 0.0)
    queue[(row_sum == 0) & ~stale] = 0.0  # a row known to hold nothing holds nothing
    held = np.where(r.random(cols) < 0.3, r.random(cols) * r.choice([1.0, 1e-11]), 0.0)
    closing = np.sort(r.choice(cols, size=min(k, cols), replace=False)).astype(np.int64)
    rows = np.flatnonzero((row_sum > 0) | stale)
    pending = queue[np.ix_(rows, closing)].sum(axis=0) + held[closing]
    drained = float(r.choice(pending)) if r.random() < 0.7 else 1e-9
    q_col, q_val, q_len, col_nnz, col_big = sparse_queue(queue, drained=drained)
    queue = tuple(SparseQueue(q_col, q_val, q_len, row_sum, stale, col_nnz, col_big))  # a record: a plain tuple
    got = closing_drained(queue, held, closing, drained)
    assert np.array_equal(got, pending <= drained)


@settings(max_examples=300, deadline=None)
@given(st.integers(0, 2**32 - 1), st.integers(1, 30), st.integers(1, 40), st.sampled_from([0, 1, 64]))
def test_queue_add_and_drop_col_are_the_dense_forms(seed, n, cols, room):
    """ShuffleServer's events on the sparse queue against the dense forms they replaced: `queue[rows, cols] +=
    amount` (distinct cells, some amounts 0.0: no entry; rows widened when one had no room) and a column dropped
    (`_stale |= queue[:, c] != 0; queue[:, c] = 0.0`), whose former read and send sums (`read_q[:, c].sum()`, a
    strided column) are the returned column's, bit for bit."""
    r = np.random.default_rng(seed)
    queue = np.where(r.random((2 * n, cols)) < 0.3, r.random((2 * n, cols)) * 10.0 ** r.integers(-12, 4), 0.0)
    q_col, q_val, q_len, col_nnz, col_big = sparse_queue(queue, room)
    cells = r.choice(2 * n * cols, size=int(r.integers(0, 2 * n * cols)), replace=False)
    rows, at = (cells // cols).astype(np.int64), (cells % cols).astype(np.int64)
    amount = np.where(r.random(cells.size) < 0.2, 0.0, r.random(cells.size) * 10.0 ** r.integers(-12, 3))
    q_col, q_val = queue_add(q_col, q_val, q_len, rows, at, amount, col_nnz, col_big)
    queue[rows, at] += amount
    assert same_bits(dense_of(q_col, q_val, q_len, cols, col_nnz, col_big), queue)
    assert same_bits(queue_dense(q_col, q_val, q_len, cols), queue)
    c = int(r.integers(0, cols))
    stale = r.random(2 * n) < 0.3
    want_stale = stale | (queue[:, c] != 0)
    want_read, want_send = queue[:n, c].sum(), queue[n:, c].sum()
    column = queue_drop_col(q_col, q_val, q_len, c, stale, col_nnz, col_big)
    assert same_bits(column, queue[:, c].copy()) and np.array_equal(stale, want_stale)
    assert same_bits(np.array([column[:n].sum(), column[n:].sum()]), np.array([want_read, want_send]))
    queue[:, c] = 0.0
    assert same_bits(dense_of(q_col, q_val, q_len, cols, col_nnz, col_big), queue)


def numpy_backlog_add(backlog, node, cols, share_mb, waiting, changed):
    """CopierShuffle.map_done's NumPy form before the kernel."""
    column = backlog[:, node]
    had = column[cols]
    waiting[cols] += had == 0
    column[cols] = had + share_mb
    changed[cols] = True


@settings(max_examples=60, deadline=None)
@given(st.integers(0, 2**32 - 1), st.integers(1, 6), st.integers(1, 5), st.sampled_from([0.25, 1.0, 3.5]))
def test_backlog_add_is_map_dones_numpy_form(seed, n_cols, n_nodes, share):
    rng = np.random.default_rng(seed)
    backlog = rng.choice(np.array([0.0, -0.0, 0.5, 2.0]), size=(n_cols, n_nodes))
    waiting = np.count_nonzero(backlog, axis=1).astype(np.int64)
    changed = rng.random(n_cols) < 0.5
    node = int(rng.integers(n_nodes))
    cols = rng.permutation(n_cols)[: int(rng.integers(0, n_cols + 1))].astype(np.int64)  # distinct, any order
    expected = [a.copy() for a in (backlog, waiting, changed)]
    numpy_backlog_add(*expected[:1], node, cols, share, *expected[1:])
    backlog_add(backlog, node, cols, share, waiting, changed)
    for got, want in zip((backlog, waiting, changed), expected, strict=True):
        assert got.dtype == want.dtype and np.array_equal(got, want)
    assert np.array_equal(np.signbit(backlog), np.signbit(expected[0]))
    assert np.array_equal(waiting, np.count_nonzero(backlog, axis=1))
