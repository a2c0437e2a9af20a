"""Struct-of-arrays state of record for hosts, VMs and running work items (DESIGN.md section 3).

Agents keep only their row number and read their numbers from here, so one tick is a handful of
NumPy operations over all rows. Host and VM rows are fixed once the model starts; item rows come and
go as work starts and ends (dense storage, the last row moves into a freed slot).
"""

from __future__ import annotations

from collections.abc import Callable
from operator import is_, itemgetter
from typing import NamedTuple

import numpy as np
from numba import literal_unroll

from vcloud.numerics import inline, kernel


def columns(record: type[tuple], table: object, n: int | None = None) -> tuple:
    """The fields of `record` (a NamedTuple whose fields are columns of `table`): those columns, whole or their first
    `n` rows, as a plain tuple in the record's order, as kernels take a record (vcloud/numerics.py `record`): a
    kernel's view of a table, so a new column a kernel needs is one line in its record.

    The tuple is kept on the table (`_records`, one per record type) and given again while `n` and every column it
    holds are the same objects: a column replaced by any means (`Columns._grow`, `widen`, an assignment) is another
    object, and the tuple is built afresh. The stages ask for ~10 such records a tick."""
    fields = _FIELDS.get(record)
    if fields is None:
        names = record._fields
        fields = _FIELDS[record] = itemgetter(*names) if len(names) > 1 else _one(names[0])
    cols = table.__dict__  # the columns are the table's own attributes (Columns.__init__, _grow, widen, take)
    arrays = fields(cols)
    kept = cols.get("_records")
    if kept is None:
        kept = cols["_records"] = {}
    hit = kept.get(record)
    if hit is not None and hit[0] == n and all(map(is_, arrays, hit[1])):
        return hit[2]
    found = arrays if n is None else tuple([a[:n] for a in arrays])
    kept[record] = (n, arrays, found)
    return found


_FIELDS: dict[type, Callable[[dict], tuple]] = {}  # each record type's columns from a table's dict, in one C call


def _one(name: str) -> Callable[[dict], tuple]:
    get = itemgetter(name)
    return lambda cols: (get(cols),)


def grown(a: np.ndarray | None, shape: tuple[int, ...], fill, dtype=None) -> np.ndarray:
    """An array of `shape` filled with `fill`, holding `a` (None: nothing yet) in its leading corner: room for more
    rows or columns of an array kept by position (queues, per-item arrays of the layers above)."""
    dtype = dtype if dtype is not None else (a.dtype if a is not None else np.asarray(fill).dtype)  # np.full's
    # zeros: np.zeros asks the system for zeroed pages, which take no memory until written, so the room not yet used
    # of a column grown by doubling costs nothing (np.full writes every page)
    zero = isinstance(fill, int | float | bool | np.number) and fill == 0 and not np.signbit(fill)
    zero = zero and np.dtype(dtype).kind != "O"
    b = np.zeros(shape, dtype=dtype) if zero else np.full(shape, fill, dtype=dtype)
    if a is not None:
        b[tuple(slice(0, k) for k in a.shape)] = a
    return b


class Columns:
    """A bag of equally long NumPy columns declared by name and dtype.

    `WIDE` columns hold `width` values per row (a 2-D array, rows first), each filled with its default; the
    width grows on demand (`widen`)."""

    SCHEMA: dict[str, type] = {}
    WIDE: dict[str, tuple[type, float]] = {}

    def __init__(self, capacity: int = 0, width: int = 1) -> None:
        self.n = 0
        self.width = width
        for name, dtype in self.SCHEMA.items():
            setattr(self, name, np.zeros(capacity, dtype=dtype))
        for name, (dtype, fill) in self.WIDE.items():
            setattr(self, name, np.full((capacity, width), fill, dtype=dtype))

    @property
    def capacity(self) -> int:
        return len(getattr(self, next(iter(self.SCHEMA))))

    def __getstate__(self) -> dict:
        """Copies and pickles leave out the records `columns` keeps: a copy's views of the first rows would be arrays
        of their own, no longer the copied columns' rows."""
        state = self.__dict__.copy()
        state.pop("_records", None)
        return state

    def _grow(self, need: int) -> None:
        new = max(need, 2 * self.capacity, 16)
        for name in self.SCHEMA:
            old = getattr(self, name)
            col = np.zeros(new, dtype=old.dtype)
            col[: self.n] = old[: self.n]
            setattr(self, name, col)
        for name, (dtype, fill) in self.WIDE.items():
            old = getattr(self, name)
            col = np.full((new, self.width), fill, dtype=dtype)
            col[: self.n] = old[: self.n]
            setattr(self, name, col)

    def widen(self, width: int) -> None:
        """Make room for `width` values per row in the wide columns."""
        if width <= self.width:
            return
        for name, (dtype, fill) in self.WIDE.items():
            old = getattr(self, name)
            col = np.full((old.shape[0], width), fill, dtype=dtype)
            col[:, : self.width] = old
            setattr(self, name, col)
        self.width = width

    def append(self, **values: float) -> int:
        """Add a row with the given values (others zero) and return its index."""
        schema = self.SCHEMA
        if not values.keys() <= schema.keys():
            raise KeyError(f"unknown columns {sorted(set(values) - set(schema))}")
        row = self.n
        if row == self.capacity:
            self._grow(row + 1)
        cols, get = self.__dict__, values.get  # the columns are instance attributes (set in __init__ and _grow)
        for name in schema:
            cols[name][row] = get(name, 0)
        for name, (_, fill) in self.WIDE.items():
            cols[name][row] = fill
        self.n += 1
        return row

    def view(self, name: str) -> np.ndarray:
        """The live rows of one column (a view, writes go through)."""
        return getattr(self, name)[: self.n]


class HostTable(Columns):
    SCHEMA = {
        "cores": np.int64,
        "core_mhz": np.float64,
        "mem_mb": np.float64,
        "disk_mbps": np.float64,
        "nic_mbps": np.float64,
        "rack": np.int64,
        # the host-local copy of the cluster's resource pool (vSphere's enforcement of a DRS pool; inf: none)
        "pool_cpu_limit_mhz": np.float64,
        "pool_cpu_reservation_mhz": np.float64,
        "pool_mem_limit_mb": np.float64,
    }


class VMTable(Columns):
    """Configuration, allocator output and cumulative guest accounting of each VM."""

    SCHEMA = {
        # configuration
        "host": np.int64,
        "vcpus": np.int64,
        "mem_mb": np.float64,  # configured memory
        "os_mem_mb": np.float64,  # guest OS and daemons, always resident
        "os_active_fraction": np.float64,
        "in_pool": np.bool_,  # divided by the pool's allocator; others keep their configured share
        # resource controls (reference/algorithms.md section 1.1); limit inf = unlimited
        "cpu_reservation_mhz": np.float64,
        "cpu_limit_cfg_mhz": np.float64,
        "cpu_shares": np.float64,
        "mem_reservation_mb": np.float64,
        "mem_limit_cfg_mb": np.float64,
        "mem_shares": np.float64,
        # allocator output (CloudAllocator.entitlements)
        "cpu_entitlement_mhz": np.float64,
        "cpu_limit_mhz": np.float64,
        "mem_granted_mb": np.float64,
        # state of the last tick
        "cpu_demand_mhz": np.float64,
        "cpu_used_mhz": np.float64,
        "mem_used_mb": np.float64,
        "mem_active_mb": np.float64,
        "swap_mb": np.float64,
        "disk_mbps": np.float64,
        "net_mbps": np.float64,
        # cumulative since start (seconds of vCPU time, MHz*s, MB)
        "usr_s": np.float64,
        "sys_s": np.float64,
        "steal_s": np.float64,
        "iowait_s": np.float64,
        "idle_s": np.float64,
        "cpu_used_mhz_s": np.float64,
        "cpu_demand_mhz_s": np.float64,
        "cpu_ready_mhz_s": np.float64,
        "disk_mb": np.float64,
        "net_mb": np.float64,
        "swap_io_mb": np.float64,
        # page cache (vcloud/pagecache.py): state of the last tick, then cumulative MB
        "cache_mb": np.float64,
        "dirty_mb": np.float64,
        "read_cache_mb": np.float64,  # file reads served from this VM's cache
        "read_disk_mb": np.float64,  # ... and from its datastore
        "writeback_mb": np.float64,
        # memory reclamation (vcloud/memory.py): configuration, then state of the last tick, then cumulative MB
        "overhead_mb": np.float64,  # the hypervisor's overhead memory for this VM
        "mem_target_mb": np.float64,  # what the hypervisor lets it keep backed
        "balloon_mb": np.float64,
        "hv_swap_mb": np.float64,  # held beyond the target, swapped by the hypervisor
        "mem_held_mb": np.float64,  # resident + page cache the guest holds in its memory (ESX's consumed)
        "mem_touched_mb": np.float64,  # heap and OS memory in use that the guest holds
        "cache_touched_mb": np.float64,  # page-cache data read or written (touched pages)
    }


class ItemTable(Columns):
    """Running work items: the current phase and what the item has been charged so far."""

    SCHEMA = {
        "vm": np.int64,
        "kind": np.int8,
        "need_cpu": np.float64,  # megacycles per unit of progress of the current phase (work.Phase.needs)
        "remaining": np.float64,  # of the current phase, in the phase's unit
        "open": np.bool_,  # the phase may still grow (Phase.open): it does not end when remaining hits 0
        "phase_amount": np.float64,  # the current phase's amount (grows with an open phase)
        "progress_lo": np.float64,  # the item's progress score when the current phase started ...
        "progress_hi": np.float64,  # ... and when it ends (WorkItem.progress_marks)
        "threads": np.float64,
        "io_mbps_max": np.float64,  # per-stream ceiling (inf = only the device limits it)
        "load_cpu_mhz": np.float64,  # LOAD items: current background demand
        "load_disk_mbps": np.float64,
        "sys_fraction": np.float64,
        "mem_mb": np.float64,
        "mem_active_mb": np.float64,
        "tag": np.int64,  # the owner's own number for the item (0: none), for layers above to find their rows
        # charged so far (seconds), over all phases
        "usr_s": np.float64,
        "sys_s": np.float64,
        "steal_s": np.float64,
        "iowait_s": np.float64,
        "io_mb": np.float64,  # MB through its own VM's datastore and NIC (not streams served elsewhere, not rack links)
        "read_disk_mb": np.float64,  # file data it read that came from a datastore (its own or another VM's)
        "read_cache_mb": np.float64,  # ... and from a page cache
    }
    # the current phase's I/O streams (work.Stream), one per column; vm -1 = no stream in this column
    WIDE = {
        "stream_vm": (np.int64, -1),  # the VM whose host's device carries it
        "stream_device": (np.int8, 0),  # work.Device: datastore, NIC, or the rack's uplink out or in
        "stream_need": (np.float64, 0.0),  # MB per unit of progress
        "stream_file": (np.int64, -1),  # datastore streams: the file read or written through the page cache (-1: none)
        "stream_write": (np.bool_, False),  # data written (else read)
        "stream_hit": (np.float64, 0.0),  # reads: the file's cached share when the phase began (its own misses,
        # cached as it goes, are bytes it has read, not bytes it will read)
    }

    def __init__(self, capacity: int = 0) -> None:
        super().__init__(capacity, width=1)
        self.owner: list[object] = []
        self._names = (*self.SCHEMA, *self.WIDE)
        self.layout = 0  # bumped whenever a row's needs change (add, remove, new phase): a key for caches
        self._groups: tuple = (None, None, ((), ()))  # the columns by dimension and type (_column_groups)
        self._views: tuple = (None, None, None)  # memoryviews of the columns a phase's load writes (phase_views)
        # rows from `n` on are blank (zeros, the wide columns' fills), and the last row of the capacity stays so:
        # `remove_rows` copies it over the rows it frees, so a new row needs only its given values (`add_item`)

    def __getstate__(self) -> dict:
        """Copies and pickles leave the memoryviews out too (`phase_views` makes them again; they do not pickle)."""
        state = super().__getstate__()
        if "_views" in state:
            state["_views"] = (None, None, None)
        return state

    def _blank_row(self) -> int:
        """A row past `n` that nobody is given: the capacity's last (`_room` grows before a new row would be it)."""
        return len(self.vm) - 1

    def _room(self) -> None:
        """Room for one more row below the blank row."""
        if self.n + 1 >= len(self.vm):
            self._grow(self.n + 2)

    def add(self, owner: object, **values: float) -> int:
        self._room()
        row = self.append(**values)
        self.owner.append(owner)
        self.layout += 1
        return row

    def add_item(
        self, owner: object, vm: int, threads: float, io_mbps_max: float, mem_mb: float, mem_active_mb: float
    ) -> int:
        """`add(owner, vm=vm, threads=threads, ...)`: a work item's row (`CloudModel.start_item`), written by plain
        scalar writes: the row is blank already (at every task launch)."""
        self._room()
        row = self.n
        self.vm[row], self.threads[row], self.io_mbps_max[row] = vm, threads, io_mbps_max
        self.mem_mb[row], self.mem_active_mb[row] = mem_mb, mem_active_mb
        self.n = row + 1
        self.owner.append(owner)
        self.layout += 1
        return row

    def blank_past_end(self) -> bool:
        """Every row from `n` on is blank (checked with the invariants: a write past the live rows would reach the
        next item started there)."""
        n, cols = self.n, self.__dict__
        return all(not cols[name][n:].any() for name in self.SCHEMA) and all(
            (cols[name][n:] == fill).all() for name, (_, fill) in self.WIDE.items()
        )

    def _column_groups(self) -> tuple[tuple[tuple[np.ndarray, ...], ...], tuple[tuple[np.ndarray, ...], ...]]:
        """The columns as `move_rows` takes them: the one-dimensional ones, then the wide ones, in tuples of
        one dtype each. Kept with `vm` and `stream_vm` as they were: `_grow` replaces every column and `widen` every
        wide one, so when both are the same objects, so are the others."""
        groups = self._groups
        if groups[0] is not self.vm or groups[1] is not self.stream_vm:
            cols = self.__dict__
            by_type: dict[tuple, list[np.ndarray]] = {}
            for name in self._names:
                col = cols[name]
                by_type.setdefault((col.ndim, col.dtype.str), []).append(col)
            flat = tuple(tuple(g) for (ndim, _), g in by_type.items() if ndim == 1)
            wide = tuple(tuple(g) for (ndim, _), g in by_type.items() if ndim == 2)
            groups = self._groups = (self.vm, self.stream_vm, (flat, wide))
        return groups[2]

    def phase_views(self) -> PhaseViews:
        """Memoryviews of the columns `CloudModel._load_phase` writes at every start and phase change, the wide ones
        flat (row r's column k at r * width + k): a memoryview's item write costs ~380 instructions, a NumPy
        scalar write ~670 and a two-dimensional one ~1,170 (the writes of a value into the same float64, int or bool
        cell). Kept with `vm` and `stream_vm` as they were, as `_column_groups` is (`views_current` checks)."""
        views = self._views
        if views[0] is not self.vm or views[1] is not self.stream_vm:
            cols = self.__dict__
            made = PhaseViews(*[memoryview(cols[name].reshape(-1)) for name in PhaseViews._fields])
            views = self._views = (self.vm, self.stream_vm, made)
        return views[2]

    def views_current(self) -> bool:
        """The kept views and column groups (`phase_views`, `_column_groups`) are of the columns as they are: a column
        replaced other than by `_grow` or `widen` would leave them writing an array the table no longer holds
        (checked with the invariants)."""
        cols = self.__dict__
        views, groups = self._views, self._groups
        kept_views = views[2] is not None and views[0] is self.vm and views[1] is self.stream_vm
        if kept_views and any(view.obj.base is not cols[name] for name, view in views[2]._asdict().items()):
            return False
        if groups[0] is self.vm and groups[1] is self.stream_vm:
            kept = {id(col) for group in groups[2] for cols_ in group for col in cols_}
            if kept != {id(cols[name]) for name in self._names}:
                return False
        return True

    def take(self, rows: np.ndarray, names: tuple[str, ...]) -> ItemTable:
        """A table of `rows` only (in this order) holding the columns `names`, without owners: what the engine's tick
        works on when some rows add nothing to it (engine.live_items). Its `layout` is this table's; its `rows` are
        `rows` (the row in this table of each of its rows)."""
        sub = ItemTable.__new__(ItemTable)
        sub.n, sub.width, sub.owner, sub._names, sub.layout = rows.size, self.width, [], names, self.layout
        sub.rows = rows
        cols = self.__dict__
        for name in names:
            setattr(sub, name, cols[name][rows])
        return sub

    def remove_rows(self, rows: list[int]) -> list[tuple[object, int]]:
        """Free `rows` (their items' rows now) one after another, each taking the last row's content, with one compiled
        copy for all of them and every column (`move_rows`): the tick's ended items (`CloudModel.stop_items`; a
        SWIM day ends most attempts in bursts of 30 to 150 a tick). The table ends as the removals one by one leave it
        (an earlier one may move the item of a later one, which is then removed from its new row). Returns the owners
        that moved and their rows now, by row.

        Content only ever moves from the last row: a row below the final count keeps its content unless freed, and
        every row that receives one is below it, every row given is at or above it, so the copies do not overlap. The
        rows freed at the end are then made blank (rows past the items always are: `add_item` writes only its own
        columns)."""
        n = end = self.n
        source: dict[int, int] = {}  # row -> the row its content was in before the first removal, where they differ
        now: dict[int, int] = {}  # the converse, for the contents that moved
        for row in rows:
            at = now.pop(row, row)  # where the content of `row` is now
            n -= 1
            came = source.pop(n, n)  # what the last row holds
            if at != n:
                source[at], now[came] = came, at
        self.layout += len(rows)
        owner = self.owner
        moved = []
        dst = sorted(source)
        src = [source[r] for r in dst]
        # the moves, then the freed rows made blank again (a copy of the blank row): in this order in each column
        freed = range(n, end)
        d = np.array([*dst, *freed], dtype=np.int64)
        s = np.array([*src, *[self._blank_row()] * len(freed)], dtype=np.int64)
        move_rows(d, s, *self._column_groups())
        for r, o in zip(dst, src, strict=True):
            owner[r] = owner[o]
            moved.append((owner[r], r))
        del owner[n:]
        self.n = n
        return moved


class PhaseViews(NamedTuple):
    """`ItemTable.phase_views`: memoryviews of the columns a phase's load writes (the wide ones flat)."""

    kind: memoryview
    need_cpu: memoryview
    remaining: memoryview
    sys_fraction: memoryview
    open: memoryview
    phase_amount: memoryview
    progress_lo: memoryview
    progress_hi: memoryview
    stream_vm: memoryview
    stream_device: memoryview
    stream_need: memoryview
    stream_file: memoryview
    stream_write: memoryview
    stream_hit: memoryview


class EndedCharges:
    """What each ended work item was charged (`CHARGES` of vcloud/agents.py), one row per item in the order they
    ended: a float64 array grown by doubling. A tuple of seven floats per item held 264 B; a row holds 56 (a SWIM
    day ends 476,734 attempts; issue 16)."""

    def __init__(self, columns: tuple[str, ...]) -> None:
        self.rows = np.zeros((0, len(columns)))
        self.n = 0
        self.index = {column: i for i, column in enumerate(columns)}

    def of(self, rows, column: str):
        """One charge of the given rows (an index or an array of them)."""
        return self.rows[rows, self.index[column]]

    def add_rows(self, values: np.ndarray) -> int:
        """Keep items' charges (a row each, in order: `CloudModel.stop_items`); returns the first's row."""
        k, m = self.n, len(values)
        if k + m > len(self.rows):
            self.rows = grown(self.rows, (max(1024, 2 * (k + m)), self.rows.shape[1]), 0.0)
        self.rows[k : k + m] = values
        self.n = k + m
        return k


@inline
def _move_flat(cols: tuple, dst: np.ndarray, src: np.ndarray) -> None:
    for col in cols:
        for j in range(dst.size):
            col[dst[j]] = col[src[j]]


@inline
def _move_wide(cols: tuple, dst: np.ndarray, src: np.ndarray) -> None:
    for col in cols:
        for j in range(dst.size):
            col[dst[j], :] = col[src[j], :]


@kernel
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
