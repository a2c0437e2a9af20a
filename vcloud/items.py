"""The item table's per-tick arithmetic: what each running item wants (demand), its streams laid out flat, and
how far it gets (progress); the phase-progress reads the layer above asks for between ticks.

Items are the units of work the layers above put on VMs (a task's phase, a background load); the plain form of the
same steps is `vcloud.reference`.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from vcloud.numerics import distinct_ascending, kernel, np_min, record
from vcloud.work import Device, Kind

# the kinds as plain ints (compiled in as constants)
_DISK = int(Device.DISK)
_WAIT, _LOAD = int(Kind.WAIT), int(Kind.LOAD)


@record
class ItemDemand(NamedTuple):
    """Per running item: what sets its standalone wants."""

    threads: np.ndarray
    need_cpu: np.ndarray  # megacycles per unit
    core_mhz: np.ndarray  # its host's core MHz
    load_cpu_mhz: np.ndarray  # a LOAD phase's own CPU want
    remaining: np.ndarray  # units left in its phase
    open: np.ndarray  # a queue fed by others: wants no more than it has
    vm: np.ndarray
    is_load: np.ndarray


@record
class StreamDemand(NamedTuple):
    """Per stream (the items' `k` first, then the LOAD items' disk streams): what sets its standalone want."""

    item: np.ndarray
    need: np.ndarray  # disk MB per unit (less what the page cache holds)
    base: np.ndarray  # its ceiling: the item's per-stream ceiling and the device's bandwidth, the smaller
    logical_need: np.ndarray  # MB per unit through the page cache (the items' streams)
    bonus: np.ndarray  # MB/s a write may dirty in the cache (the items' streams)
    load_want: np.ndarray  # a LOAD stream's want (the LOAD streams)


@kernel
def demand(
    dt: float, k: int, has_load: bool, items: ItemDemand, stall: np.ndarray, streams: StreamDemand
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """`vcloud.engine.stage_demand`'s arithmetic: each item's standalone CPU want (its threads' cores, less the page-in
    stall of its VM; a load its own) and weight, each stream's standalone MB/s (at most its ceiling; nothing when
    nothing is left, all of it is cached or all of it fits below the dirty limit; a load stream its `load_want`), and
    an open phase's want of no more than it has. Returns want_cpu, cpu_weight, s_want and s_full (the want at full
    speed)."""
    items, streams = ItemDemand(*items), StreamDemand(*streams)  # records come as tuples (vcloud/numerics.py `record`)
    threads, need_cpu, core_mhz, load_cpu_mhz = items.threads, items.need_cpu, items.core_mhz, items.load_cpu_mhz
    remaining, open_, vm, is_load = items.remaining, items.open, items.vm, items.is_load
    s_item, s_need, s_base, f_need = streams.item, streams.need, streams.base, streams.logical_need
    s_bonus, load_want = streams.bonus, streams.load_want
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
        s_want[s] = np_min(s_full[s], left[s] * (s_need[s] / dt) if open_[s_item[s]] else np.inf)
    return want_cpu, cpu_weight, s_want, s_full


@kernel
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
    uplink = np.full(n_rack, np.inf)
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


@kernel
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


@record
class StreamColumns(NamedTuple):
    """The item table's stream columns (rows: items, columns: an item's streams; each field a column of that name)."""

    stream_vm: np.ndarray  # the VM whose host's device carries it (-1: no stream)
    stream_device: np.ndarray
    stream_file: np.ndarray
    stream_need: np.ndarray
    stream_write: np.ndarray
    stream_hit: np.ndarray


@record
class FlatStreams(NamedTuple):
    """The running items' I/O streams, flattened: one entry per (item, stream column) in use, ordered by item, then
    column; with what the stages need of them per item and per file stream (fixed while the table's layout is)."""

    item: np.ndarray  # item row
    col: np.ndarray  # stream column
    vm: np.ndarray  # the VM whose host's device carries it
    device: np.ndarray  # work.Device
    need: np.ndarray  # MB per unit of progress
    file: np.ndarray  # the file it reads or writes through the page cache (-1: none)
    write: np.ndarray
    multi: np.ndarray  # per item: the phase needs more than one resource
    starts: np.ndarray  # where each item's streams start (the streams are ordered by item) ...
    owners: np.ndarray  # ... and those items, ascending
    any_multi: bool
    file_rows: np.ndarray  # the streams that go through a page-cache file
    any_file: bool
    f_file: np.ndarray  # per file stream (of `file_rows`): its file, item, VM, MB per unit, direction ...
    f_item: np.ndarray
    f_vm: np.ndarray
    f_need: np.ndarray
    f_write: np.ndarray
    f_hit: np.ndarray  # ... and, reads, the file's cached share when the phase began (ItemTable.stream_hit)
    f_touched: np.ndarray  # the files, ascending (np.unique of f_file) ...
    f_inv: np.ndarray  # ... and each file stream's place among them
    is_load: np.ndarray  # per item: a LOAD phase (a background tenant) ...
    has_load: bool
    wait_rows: np.ndarray  # ... the WAIT and LOAD items (a row's kind changes only with the layout)
    load_rows: np.ndarray


@kernel
def flatten_streams(
    columns: StreamColumns, rows: np.ndarray, need_cpu: np.ndarray, kind: np.ndarray, n: int
) -> FlatStreams:
    """The streams of `n` items whose streams are rows `rows[:n]` of the stream columns (the item table's own rows,
    or the live rows of `engine.live_items`: read in place, not copied out first) and whose CPU needs and kinds are
    `need_cpu` and `kind`: the streams in use (stream_vm >= 0) by item, then column (`FlatStreams`). Integer gathers
    only: the NumPy form's values exactly (tests/test_kernels.py)."""
    columns = StreamColumns(*columns)  # records come as tuples (vcloud/numerics.py `record`)
    stream_vm, stream_device, stream_file = columns.stream_vm, columns.stream_device, columns.stream_file
    stream_need, stream_write, stream_hit = columns.stream_need, columns.stream_write, columns.stream_hit
    disk, wait, load = _DISK, _WAIT, _LOAD
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
    f_touched, f_inv = distinct_ascending(f_file)
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
    return FlatStreams(item, col, vm, device, need, file, write, multi, starts, owners, any_multi, file_rows,
                       n_file > 0, f_file, f_item, f_vm, f_need, f_write, f_hit, f_touched, f_inv, is_load, has_load,
                       wait_rows, load_rows)  # fmt: skip


@kernel
def find_idle_rows(open_: np.ndarray, remaining: np.ndarray, need_cpu: np.ndarray, n: int) -> np.ndarray:
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


@kernel
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


@kernel
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


@kernel
def set_remaining(
    rows: np.ndarray, remaining: np.ndarray, item_remaining: np.ndarray, phase_amount: np.ndarray
) -> bool:
    """`vcloud.model.CloudModel.set_remaining_rows`' arithmetic: each of the distinct `rows` gets `remaining` left of
    its phase, whose amount changes by as much (remaining - what it had, added). Returns False, changing nothing, if
    a remaining is below 0. The NumPy form's bits: the same operations per row (a queue server's tick sets every
    serving item's, some 1,200 rows in a busy day: three fancy-indexed passes cost four times this loop)."""
    for i in range(rows.size):
        if remaining[i] < 0:
            return False
    for i in range(rows.size):
        r = rows[i]
        phase_amount[r] += remaining[i] - item_remaining[r]
        item_remaining[r] = remaining[i]
    return True
