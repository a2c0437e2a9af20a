"""The guest page cache of each VM: file data in the memory the guest does not hold resident.

Linux (reference/algorithms.md 10.3; `Documentation/sysctl/vm.txt`; Do et al., CLUSTER 2021): every page the
guest is granted beyond its resident memory (OS, daemons, task heaps) holds file data. Reads of cached data
cost no disk; a read from disk leaves its data cached. Writes dirty pages in memory: the flusher writes back
dirty data older than `dirty_expire_s`, and any beyond `dirty_background_ratio` of the cache's memory, at
the datastore's pace; a writer is throttled to disk speed (its writes go through) while the dirty data
passes `dirty_ratio`. A file deleted before write-back never reaches the disk. When the cache outgrows its
memory (a heap grows, the hypervisor takes memory back), clean pages are evicted least recently used, the
inactive list before the active one (a file read again is promoted; the active list is kept at most twice
the inactive one, as the kernel does).

Files are extents, not pages: each has a size, MB cached (clean + dirty) and MB dirty, the time it was last
touched and since when it is dirty. A read sees the file's cached share when it began evenly over the bytes it
reads (less, if eviction shrinks it meanwhile), so it needs (1 - that share) MB of disk per MB; what it reads from
disk is cached as it goes, for the next reader. Defaults: Linux 2.6.24, the FlexSlot guests' kernel:
dirty_ratio 10 %, dirty_background_ratio 5 % (the 2.6.22 defaults; 2.6.30 raised them to 20/10),
dirty_expire_centisecs 3000.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
from pydantic import BaseModel, ConfigDict, Field, model_validator

from vcloud.numerics import by_group_then, cum_before, kernel, np_max, np_min, record, sum_at, sum_by
from vcloud.tables import Columns


class PageCacheSettings(BaseModel):
    """The guest kernel's page-cache tunables (vm.* sysctls; Linux 2.6.24's defaults, the FlexSlot guests' kernel);
    `enabled=False` models no cache at all."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    enabled: bool = Field(True, description="free guest memory caches file data (off: every read and write hits disk)")
    dirty_ratio: float = Field(0.10, ge=0, le=1, description="vm.dirty_ratio: writers throttled above this share")
    dirty_background_ratio: float = Field(0.05, ge=0, le=1, description="vm.dirty_background_ratio: write-back")
    dirty_expire_s: float = Field(30.0, ge=0, le=86400, description="vm.dirty_expire_centisecs / 100")

    @model_validator(mode="after")
    def _background_below_throttle(self) -> PageCacheSettings:
        """Write-back starts before writers are throttled (Linux halves a background ratio at or above the other)."""
        if self.dirty_background_ratio > self.dirty_ratio:
            raise ValueError(f"page_cache.dirty_background_ratio={self.dirty_background_ratio:g} is above "
                             f"page_cache.dirty_ratio={self.dirty_ratio:g}")  # fmt: skip
        return self


class FileTable(Columns):
    """Files known to the guests' caches; a row is a file for good (ids are stable), `alive` until deleted."""

    SCHEMA = {
        "vm": np.int64,  # the VM whose cache (and datastore) holds it
        "size_mb": np.float64,
        "cached_mb": np.float64,  # clean + dirty
        "dirty_mb": np.float64,
        "dirty_since_s": np.float64,  # when its oldest dirty data was written
        "last_access_s": np.float64,
        "active": np.bool_,  # on the active LRU list (read again after it was cached)
        "alive": np.bool_,
    }


class PageCache:
    """The files of all VMs and the per-tick cache arithmetic the engines call (see the module docstring)."""

    def __init__(self, settings: PageCacheSettings | None = None) -> None:
        self.settings = settings or PageCacheSettings()
        self.files = FileTable()
        self._free: list[int] = []  # ids of deleted files, for reuse
        self._maybe = np.zeros(0, dtype=bool)  # per file: may hold cached or dirty data
        self._resident: np.ndarray | None = np.zeros(0, dtype=np.int64)  # its rows, ascending (None: rebuild)
        self._kept = np.zeros(0, dtype=np.int64)  # the rows the last rebuild kept, ascending ...
        self._added: list[np.ndarray] = []  # ... and the rows touched since (with them: where `_maybe` is True)

    def touch(self, rows: np.ndarray | list[int]) -> None:
        """These files' cached or dirty data may have grown (everything else only shrinks them)."""
        n = self.files.n
        if len(self._maybe) < n:
            self._maybe = np.concatenate([self._maybe, np.zeros(max(n, 2 * len(self._maybe)) - len(self._maybe), bool)])
        new = cache_touch(self._maybe, np.asarray(rows, dtype=np.int64))  # flags them
        if new.size:
            self._added.append(new)
            self._resident = None

    def resident(self) -> np.ndarray:
        """The files that may hold cached or dirty data, ascending (the rest hold none). The per-tick sums over
        files run over these, not over every file ever created (a day of a 600-node trace creates 400,000 split
        replicas): files holding nothing add exact zeros, so the sums are the same, in the same order. Rebuilt from
        the last rebuild's rows and those touched since (the rows where `_maybe` is True), not from a scan of every
        file's flag."""
        if self._resident is None:
            added = self._added  # rows not in `_kept` (touch adds new rows only), maybe repeated
            added = added[0] if len(added) == 1 else np.concatenate(added)
            files = self.files  # merged, the empty ones left out (their flags cleared), in one compiled pass
            self._resident = self._kept = cache_resident(
                self._kept, added, files.cached_mb, files.dirty_mb, self._maybe
            )
            self._added = []
        return self._resident

    def create(self, vm: int, size_mb: float = 0.0, cached_mb: float = 0.0, now: float = 0.0) -> int:
        """A new file on VM row `vm`: `size_mb` already on disk, `cached_mb` of it in the cache. Returns its id
        (a deleted file's id is reused: the table stays as small as the live files)."""
        if not (size_mb >= 0 and 0 <= cached_mb <= size_mb):
            raise ValueError(f"file: need 0 <= cached_mb <= size_mb, got {cached_mb}, {size_mb}")
        files = self.files
        if self._free:
            f = self._free.pop()
        else:  # a new row: `files.append`, its columns written here as a reused row's are (not by keywords)
            f = files.n
            if f == len(files.vm):
                files._grow(f + 1)
            files.n = f + 1
        files.vm[f], files.size_mb[f], files.cached_mb[f], files.dirty_mb[f] = vm, size_mb, cached_mb, 0.0
        files.dirty_since_s[f], files.last_access_s[f], files.active[f], files.alive[f] = 0.0, now, False, True
        if cached_mb > 0:
            self.touch([f])
        return f

    def cached_share(self, file: int) -> float:
        """The file's cached share (as Python floats: the same IEEE arithmetic as NumPy's scalars, at every read
        phase's start)."""
        files = self.files
        size = files.size_mb.item(file)
        return min(files.cached_mb.item(file) / size, 1.0) if size > 0 else 0.0

    def delete(self, file: int) -> None:
        """The file is removed: its pages are freed, dirty ones are never written."""
        f = self.files
        if not f.alive[file]:
            return
        f.size_mb[file] = f.cached_mb[file] = f.dirty_mb[file] = 0.0
        f.alive[file] = False
        self._free.append(file)

    def shrink(self, file: int, mb: float) -> None:
        """`mb` of the file is removed (part of an aggregate file); cached and dirty data go in proportion."""
        f = self.files
        size = f.size_mb[file]
        if size <= 0:
            return
        keep = max(size - mb, 0.0) / size
        f.size_mb[file] *= keep
        f.cached_mb[file] *= keep
        f.dirty_mb[file] *= keep


# ---- the per-tick arithmetic (compiled: vcloud/py; reference.py has it plainly) ---------------------------
def evict(files: FileTable, resident: np.ndarray, vm_rows: np.ndarray, excess: np.ndarray) -> None:
    """Free `excess[v]` MB of clean cached data on each VM v of `vm_rows`: the inactive list first, least recently
    used first; the active list is first cut to twice the inactive one (its oldest files are demoted).
    `resident`: ascending rows that include every file holding cached data (PageCache.resident)."""
    evict_files(files.vm, files.cached_mb, files.dirty_mb, files.active, files.last_access_s, resident,
                  np.asarray(vm_rows, np.int64), excess)  # fmt: skip


def write_back(files: FileTable, resident: np.ndarray, wb_mb: np.ndarray) -> None:
    """The flusher cleaned `wb_mb[v]` MB on each VM v: the oldest dirty files first. `resident`: ascending rows
    that include every file holding dirty data (PageCache.resident)."""
    write_back_files(files.vm, files.dirty_mb, files.dirty_since_s, resident, wb_mb)


@record
class FileColumns(NamedTuple):
    """The file table's columns a kernel reads and writes (each field a column of that name)."""

    vm: np.ndarray
    size_mb: np.ndarray
    cached_mb: np.ndarray
    dirty_mb: np.ndarray
    dirty_since_s: np.ndarray
    last_access_s: np.ndarray
    active: np.ndarray


@record
class DirtyLimits(NamedTuple):
    """The guest kernel's dirty-data tunables (`PageCacheSettings`), as a kernel reads them."""

    dirty_ratio: float
    background_ratio: float
    expire_s: float


@record
class GuestRoom(NamedTuple):
    """Per VM: the guest's memory, what it holds resident and its host; per host: the datastore's MB/s."""

    guest_mem: np.ndarray
    used: np.ndarray
    vm_host: np.ndarray
    disk_mbps: np.ndarray


@record
class FileStreams(NamedTuple):
    """The tick's streams that go through a page-cache file (`vcloud.items.FlatStreams`' file part)."""

    rows: np.ndarray  # each one's place among all the tick's streams
    file: np.ndarray
    item: np.ndarray
    vm: np.ndarray
    need: np.ndarray  # MB per unit
    write: np.ndarray
    hit: np.ndarray  # reads: the file's cached share when the phase began
    touched: np.ndarray  # the files, ascending ...
    inv: np.ndarray  # ... and each stream's place among them


@record
class ItemReads(NamedTuple):
    """The item table's file-read columns, the items' rows (each field a column of that name)."""

    read_disk_mb: np.ndarray
    read_cache_mb: np.ndarray


@record
class VMReads(NamedTuple):
    """The VM table's file-read columns, the VMs' rows (each field a column of that name)."""

    read_disk_mb: np.ndarray
    read_cache_mb: np.ndarray
    cache_touched_mb: np.ndarray


@kernel
def evict_files(
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
        order = a[by_group_then(vm[a], last[a], excess.size)]
        before = cum_before(vm[order], cached[order])
        for j in range(order.size):
            if before[j] < demote[vm[order[j]]]:
                active_of[rows[order[j]]] = False
    active = active_of[rows]
    order = by_group_then(2 * vm + active, last, 2 * excess.size)  # by VM, inactive first, then LRU first
    before = cum_before(vm[order], clean[order])
    for j in range(order.size):
        o = order[j]
        cached_mb[rows[o]] -= np_min(np_max(excess[vm[o]] - before[j], 0.0), clean[o])


@kernel
def write_back_files(
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
    order = rows[by_group_then(vm, dirty_since_s[rows], wb_mb.size)]  # by VM, the oldest dirty files first
    dirty = dirty_mb[order]
    before = cum_before(vm_of[order], dirty)
    for j in range(order.size):
        dirty_mb[order[j]] -= np_min(np_max(wb_mb[vm_of[order[j]]] - before[j], 0.0), dirty[j])


@kernel
def cache_fit(
    dt: float,
    now: float,
    limits: DirtyLimits,
    room: GuestRoom,
    files: FileColumns,
    resident: np.ndarray,
    vm_cached: np.ndarray,
    streams: FileStreams,
    remaining: np.ndarray,
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """`vcloud.engine.stage_cache` once the guests have files: each VM's cache memory (what the guest does not hold
    resident), its excess evicted; the flusher's write-back want; each file stream's disk MB per MB (reads: 1 - the
    file's cached share) and each writer's share of its VM's headroom below the dirty limit. `vm_cached`: each VM's
    cached MB if the memory stage counted it (else empty). Returns the cache memory, write-back want, disk MB per
    MB and dirty headroom MB/s per file stream."""
    dirty_ratio, background_ratio, expire_s = limits.dirty_ratio, limits.background_ratio, limits.expire_s
    guest_mem, used, disk_mbps, vm_host = room.guest_mem, room.used, room.disk_mbps, room.vm_host
    vm_of, size_mb, cached_mb, dirty_mb = files.vm, files.size_mb, files.cached_mb, files.dirty_mb
    dirty_since_s, last_access_s, active = files.dirty_since_s, files.last_access_s, files.active
    f_file, f_item, f_vm, f_write, f_hit = streams.file, streams.item, streams.vm, streams.write, streams.hit
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
        evict_files(vm_of, cached_mb, dirty_mb, active, last_access_s, resident, over, excess)
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


@kernel
def cache_files_update(
    dt: float,
    now: float,
    progress: np.ndarray,
    s_factor: np.ndarray,
    s_bonus: np.ndarray,
    streams: FileStreams,
    files: FileColumns,
    item_sums: ItemReads,
    vm_sums: VMReads,
    count_touched: bool,
) -> None:
    """`vcloud.engine.stage_cache_update`'s file part: what the tick's file streams read (from the cache: hit; from
    disk: miss, now cached) and wrote (dirty below the dirty limit, through to disk beyond it), into the files they
    touched and per item and VM (`cache_touched_mb` if `count_touched`)."""
    streams, files = FileStreams(*streams), FileColumns(*files)  # records come as tuples (`record`)
    item_sums, vm_sums = ItemReads(*item_sums), VMReads(*vm_sums)
    file_rows, f_item, f_vm, f_need, f_write = streams.rows, streams.item, streams.vm, streams.need, streams.write
    touched, f_inv = streams.touched, streams.inv
    size_mb, cached_mb, dirty_mb = files.size_mb, files.cached_mb, files.dirty_mb
    dirty_since_s, last_access_s, active = files.dirty_since_s, files.last_access_s, files.active
    item_disk, item_cache = item_sums.read_disk_mb, item_sums.read_cache_mb
    vm_disk, vm_cache, vm_touched = vm_sums.read_disk_mb, vm_sums.read_cache_mb, vm_sums.cache_touched_mb
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


@kernel
def cache_settle(
    dt: float, files: FileColumns, resident: np.ndarray, wb_got: np.ndarray, cache_cap: np.ndarray, batch: float
) -> tuple[np.ndarray, np.ndarray]:
    """`vcloud.engine.stage_cache_update`'s end: the flusher's write-back, then each VM's cache back within its
    memory (evicting `batch` of it beyond the excess). Returns each VM's cached and dirty MB."""
    files = FileColumns(*files)  # records come as tuples (vcloud/numerics.py `record`)
    vm_of, cached_mb, dirty_mb = files.vm, files.cached_mb, files.dirty_mb
    dirty_since_s, last_access_s, active = files.dirty_since_s, files.last_access_s, files.active
    n_vm = wb_got.size
    any_wb = False
    for v in range(n_vm):
        any_wb = any_wb or wb_got[v] != 0
    if any_wb:
        write_back_files(vm_of, dirty_mb, dirty_since_s, resident, wb_got * dt)
    cached = sum_at(vm_of, cached_mb, resident, n_vm)
    excess = cached - cache_cap  # what this tick's reads cached
    over = np.flatnonzero(excess > 0)
    if over.size:  # reclaim in a batch, down to the low watermark (kswapd reclaims to its high watermark)
        budget = np.empty(n_vm)
        for v in range(n_vm):
            budget[v] = np_max(excess[v] + batch * cache_cap[v], 0.0)
        evict_files(vm_of, cached_mb, dirty_mb, active, last_access_s, resident, over, budget)
        cached = sum_at(vm_of, cached_mb, resident, n_vm)
    return cached, sum_at(vm_of, dirty_mb, resident, n_vm)


@kernel
def cache_stage(
    dt: float,
    now: float,
    limits: DirtyLimits,
    room: GuestRoom,
    files: FileColumns,
    resident: np.ndarray,
    vm_cached: np.ndarray,
    k: int,
    streams: FileStreams,
    remaining: np.ndarray,
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """`cache_fit`, then its per file stream factor and headroom placed among all `k` streams (the other streams:
    factor 1, headroom 0). Returns the cache memory, write-back want, and per stream the disk MB per MB and dirty
    headroom MB/s."""
    limits, room = DirtyLimits(*limits), GuestRoom(*room)  # records come as tuples (vcloud/numerics.py `record`)
    files, streams = FileColumns(*files), FileStreams(*streams)
    file_rows = streams.rows
    cap, wb_want, factor, bonus = cache_fit(dt, now, limits, room, files, resident, vm_cached, streams, remaining)
    s_factor, s_bonus = np.ones(k), np.zeros(k)
    for j in range(file_rows.size):
        s_factor[file_rows[j]] = factor[j]
        s_bonus[file_rows[j]] = bonus[j]
    return cap, wb_want, s_factor, s_bonus


@kernel
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


@kernel
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
