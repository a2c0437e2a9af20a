"""One tick of the cloud, vectorized over all VMs, work items and I/O streams (DESIGN.md section 3, steps 2-4).

The tick is a sequence of named stages over one `TickState` (`STAGES`); `reference.py` computes the same
stages with plain loops, and the oracle test compares the two stage by stage, so a difference names its stage.

  memory    guest memory in use vs granted -> swapped MB, a page-in stream and a stall fraction per VM;
  cache     each VM's page cache fits in what the grant leaves (evictions); a file stream needs disk for its
            uncached share (reads) or only while the VM's dirty data is over its limit (writes); the
            flusher's write-back of expired and excess dirty data is a stream on the VM's datastore;
  demand    every item with CPU work wants its threads' cores (less the stall); its I/O streams want their
            device's bandwidth (or the item's per-stream ceiling); the VM's demand is capped by its vCPUs;
  cpu       each host's cores go to its VMs by entitlement (weighted max-min, capped by min(demand, limit));
            each VM's grant goes to its threads (CFS: equal per thread, capped by want);
  io        each host's datastore bandwidth goes to the streams on it (equal per stream, swap streams
            included), each NIC's likewise; a stream may sit on another VM's host (a storage daemon serving);
  pipeline  a phase advances at one rate, its bottleneck's: min over its needs of grant / need per unit.
            What a multi-resource phase cannot use goes to other work: the cpu and io stages run again, each
            need asking what the phase's other needs let it use (`Physics.pipeline_rounds`, stage_pipeline);
  progress  items advance; a phase that ends inside the tick ends at its interpolated time;
  account   per VM and per item: usr, sys, steal, iowait, idle with usr + sys + steal + iowait + idle = vCPUs x dt;
  cache_update  reads cached, writes dirtied, write-back cleaned (vcloud/pagecache.py).

Guest accounting follows the bottleneck: a thread whose phase CPU bounds is runnable all tick; one that I/O
bounds is runnable for the share of the tick its CPU work takes at the CPU rate it gets when runnable, and
blocked (iowait) for the rest. Steal is runnable vCPU time the hypervisor did not deliver (capped by the VM's
vCPUs: threads beyond that wait in the guest run queue, which is not steal). Iowait is idle vCPU time while a
thread of the VM is blocked on I/O, at most one vCPU per blocked thread, as Linux counts it; a datastore
stream served for another VM's item (a remote block read) blocks a daemon thread of the serving VM for the share
of the tick its requests are outstanding, and that iowait is the VM's, no item's.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
from pydantic import BaseModel, ConfigDict, Field

from vcloud import memory
from vcloud.accounting import ItemCharges, VMCounters, VMTickState, account
from vcloud.diskseek import DiskSeekSettings, stage_disk_seek
from vcloud.hostpool import cpu_setup
from vcloud.items import (
    FlatStreams,
    StreamColumns,
    demand,
    demand_inputs,
    find_idle_rows,
    flatten_streams,
    progress,
    stream_groups,
)
from vcloud.memory import MemorySettings, VMMemory, VMMemoryState, memory_stage
from vcloud.numerics import sum_by
from vcloud.pagecache import (
    DirtyLimits,
    FileColumns,
    FileTable,
    ItemReads,
    PageCache,
    PageCacheSettings,
    VMReads,
    cache_files_update,
    cache_settle,
    cache_stage,
)
from vcloud.sharing import (
    pipeline,
    share_cpu,
    share_io,
)
from vcloud.tables import HostTable, ItemTable, VMTable, columns
from vcloud.work import Device

ENTITLEMENT_FLOOR_MHZ = 1e-6  # a VM with zero entitlement still takes idle cycles (work conserving)
RECLAIM_BATCH = 0.02  # share of a VM's cache memory freed beyond the excess when its cache overflows (fewer passes)

_UPLINK = int(Device.UPLINK)  # a plain int: compiled in as a constant


class Physics(BaseModel):
    """Constants of the cloud physics that are not per-host or per-VM configuration."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    swap_touch_rate: float = Field(0.2, ge=0, le=1, description="fraction of swapped MB paged in per second")
    pipeline_rounds: int = Field(
        3, ge=1, le=50, description="sharing rounds of pipelined phases (1: a phase keeps what it cannot use)"
    )
    memory: MemorySettings = Field(default_factory=MemorySettings, description="ESX memory reclamation")
    disk_seek: DiskSeekSettings = Field(
        default_factory=DiskSeekSettings, description="datastores lose throughput to seeks between streams"
    )
    rack_oversubscription: float | None = Field(
        None,
        ge=1,
        le=1000,
        description="a rack's hosts' NIC bandwidth over its uplink to the core, each way (None: no rack limit)",
    )


@dataclass
class TickResult:
    """Items whose phase ended in this tick, and when (seconds after the tick's start); the tick's state."""

    done_rows: np.ndarray
    done_offset_s: np.ndarray
    state: TickState | None = None


@dataclass
class StreamLayout:
    """The running items' streams (`FlatStreams`) and what the first tick that uses them works out once: hosts and VMs
    stay where they are, and a row's ceiling is set at its start."""

    flat: FlatStreams
    group: np.ndarray | None = None  # each stream's row of `io_bw` (vcloud/items.py `stream_groups`) ...
    ceiling: np.ndarray | None = None  # ... its MB/s at most: min(the item's per-stream ceiling, the device's)
    shared_rows: np.ndarray | None = None  # the io stage's groups: the streams', then each VM's datastore twice
    files: tuple | None = None  # the streams through a page-cache file (`file_streams`: a FileStreams' fields)


@dataclass(init=False)
class TickState:
    """Everything one tick computes, stage by stage (`STAGE_FIELDS`). No generated __init__: the fields' defaults are
    class attributes until a stage sets them, so a tick does not pay ~60 assignments to make one."""

    # memory (per VM)
    used: np.ndarray = field(default=None)
    active: np.ndarray = field(default=None)
    swapped: np.ndarray = field(default=None)
    stall: np.ndarray = field(default=None)
    guest_mem: np.ndarray = field(default=None)  # the guest's memory: configured less the balloon (vcloud/memory.py)
    target: np.ndarray = field(default=None)  # the hypervisor's memory target
    balloon: np.ndarray = field(default=None)
    hv_swap: np.ndarray = field(default=None)
    held: np.ndarray = field(default=None)  # resident + cached, MB in the guest's memory
    heap_touched: np.ndarray = field(default=None)
    # cache (per stream of the items, then per VM)
    s_factor: np.ndarray = field(default=None)  # disk MB per logical MB: 1 - cached share (reads), 0 or 1 (writes)
    s_bonus: np.ndarray = field(default=None)  # writes: MB/s each may dirty in the cache this tick (its share of the
    # VM's headroom below the dirty limit); what it writes beyond goes through to the disk
    cache_cap: np.ndarray = field(default=None)  # memory the page cache may use, MB
    wb_want: np.ndarray = field(default=None)  # the flusher's write-back, MB/s
    # demand
    want_cpu: np.ndarray = field(default=None)  # per item, standalone (threads x core x (1 - stall))
    cpu_weight: np.ndarray = field(default=None)
    s_item: np.ndarray = field(default=None)  # streams (items' first, then LOAD items' disk streams)
    s_group: np.ndarray = field(default=None)  # io_bw's rows: datastores, NICs, rack uplinks out, rack uplinks in
    s_vm: np.ndarray = field(default=None)
    s_need: np.ndarray = field(default=None)  # MB per unit (0 for LOAD streams)
    s_want: np.ndarray = field(default=None)  # standalone MB/s (an open phase's: no more than it has)
    s_full: np.ndarray = field(default=None)  # standalone MB/s at the stream's full speed
    swap_want: np.ndarray = field(default=None)  # per VM, MB/s
    # cpu (first round)
    vm_got1: np.ndarray = field(default=None)
    got_cpu1: np.ndarray = field(default=None)
    # io (first round)
    got_io1: np.ndarray = field(default=None)
    # pipeline
    rate: np.ndarray = field(default=None)  # units per second
    got_cpu: np.ndarray = field(default=None)  # MHz granted in the last round
    got_io: np.ndarray = field(default=None)  # streams, MB/s granted in the last round
    swap_got: np.ndarray = field(default=None)
    wb_got: np.ndarray = field(default=None)
    runnable_mhz: np.ndarray = field(default=None)  # the CPU rate the item's threads get while runnable
    # progress
    progress: np.ndarray = field(default=None)  # units done in the tick
    frac_dt: np.ndarray = field(default=None)  # seconds each item spent in its phase in the tick
    done_rows: np.ndarray = field(default=None)
    # inputs and intermediate values the stages share
    dt: float = 1.0
    now: float = 0.0  # the tick's start, s
    cache: PageCache | None = None
    streams: FlatStreams | None = None
    layout: StreamLayout | None = None
    has_load: bool = False
    is_load: np.ndarray = field(default=None)  # per item: a LOAD phase (a background tenant)
    core_mhz_vm: np.ndarray = field(default=None)  # per VM: its host's core MHz ...
    core_mhz: np.ndarray = field(default=None)  # ... and per item
    vm_host: np.ndarray = field(default=None)
    io_bw: np.ndarray = field(default=None)  # datastores then NICs, MB/s
    io_group: np.ndarray = field(default=None)  # the streams' devices, then each VM's datastore twice (swap, flusher)
    vm_vcpu_mhz: np.ndarray = field(default=None)  # per VM: vCPUs x core MHz
    vm_limit: np.ndarray = field(default=None)
    vm_weight: np.ndarray = field(default=None)  # entitlement + floor
    host_mhz: np.ndarray = field(default=None)
    pools: tuple | None = None  # host-local pools (HostPools' fields) for vcloud/sharing.py `share_cpu` (empty: none)
    cores: tuple | None = None  # per VM (and host) what the sharing rounds read again (VMCores' fields)
    swap_got1: np.ndarray = field(default=None)
    wb_got1: np.ndarray = field(default=None)
    vm_cached: np.ndarray | None = None  # per VM: cached MB as the memory stage counted it (None: not counted)
    rows: np.ndarray | None = None  # the item table's rows that the per-item and stream arrays are of (None: all)


STAGE_FIELDS = {
    "memory": ("used", "active", "swapped", "stall", "guest_mem", "target", "balloon", "hv_swap", "held"),
    "memory_touched": ("heap_touched",),
    "cache": ("s_factor", "s_bonus", "cache_cap", "wb_want"),
    "demand": ("want_cpu", "cpu_weight", "s_item", "s_group", "s_vm", "s_need", "s_want", "s_full", "swap_want"),
    "cpu": ("vm_got1", "got_cpu1"),
    "io": ("got_io1",),
    "pipeline": ("rate", "got_cpu", "got_io", "swap_got", "wb_got", "runnable_mhz"),
    "progress": ("progress", "frac_dt", "done_rows"),
}


def memory_state(vms: VMTable, items: ItemTable) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Used MB, active MB and swapped-out MB per VM."""
    n_vm, n = vms.n, items.n
    vm = items.vm[:n]
    os_mem = vms.os_mem_mb[:n_vm]
    used = os_mem + sum_by(vm, items.mem_mb[:n], n_vm)
    active = os_mem * vms.os_active_fraction[:n_vm] + sum_by(vm, items.mem_active_mb[:n], n_vm)
    swapped = np.maximum(used - vms.mem_granted_mb[:n_vm], 0.0)
    return used, active, swapped


def flat_streams(items: ItemTable) -> StreamLayout:
    """The items' streams as flat arrays; cached on the table until its layout changes (rows or phases). Ordered by
    item, then column; built in one compiled pass (vcloud/items.py `flatten_streams`)."""
    cached = getattr(items, "_flat_streams", None)
    if cached is not None and cached[0] == items.layout:
        return cached[1]
    streams = _flat_streams_of(items, np.arange(items.n), items)
    items._flat_streams = (items.layout, streams)
    return streams


def _flat_streams_of(table: ItemTable, rows: np.ndarray, items: ItemTable) -> StreamLayout:
    """The streams of `items` (CPU needs and kinds), which are rows `rows` of `table`'s stream columns."""
    return StreamLayout(flatten_streams(columns(StreamColumns, table), rows, items.need_cpu, items.kind, items.n))


# what a tick reads of an item's row besides its streams, and what it writes (live_items)
_TICK_READS = ("vm", "kind", "need_cpu", "open", "threads", "io_mbps_max", "load_cpu_mhz", "load_disk_mbps",
               "sys_fraction")  # fmt: skip
_TICK_WRITES = ("remaining", "usr_s", "sys_s", "steal_s", "iowait_s", "io_mb", "read_disk_mb", "read_cache_mb")
FULL_TABLE_STAGES = frozenset({"memory"})  # stages that read every row: an idle item still holds its memory
# fewer idle rows than this are ticked with the rest: copying the live rows' columns (and writing them back) costs
# ~20 us a tick, about what ~100 idle rows cost (FlexSlot's ~60 of ~220 rows made its ticks 3 % slower left out)
MIN_IDLE_ROWS = 128


def idle_rows(items: ItemTable) -> np.ndarray:
    """Rows whose phase is open with nothing left and needs no CPU (a daemon's drained queue, a consumer waiting for
    its producers), ascending. Every stage but memory gives such a row exact zeros: no CPU want (threads count only
    with a CPU need), no stream want (nothing left), no grant, no progress (at most its 0 left), no charge, no
    write-back share and no dirty headroom (it writes nothing); the tick adds 0.0 for it wherever it sums."""
    return find_idle_rows(items.open, items.remaining, items.need_cpu, items.n)


def live_items(items: ItemTable) -> ItemTable:
    """The table the tick works on: `items` itself, or, when many rows idle (`idle_rows`, MIN_IDLE_ROWS), a copy of
    the other rows' columns in table order (`rows`: their rows in `items`). Every sum of the tick then adds the same
    values in the same order without the exact zeros of the idle rows, so the numbers are bit for bit the same; on
    a busy day ~96 % of the rows can be idle queue servers. The copy's streams are kept while the layout and the idle
    rows stay."""
    if items.n < MIN_IDLE_ROWS:  # (so fewer idle rows: not looked for)
        return items
    idle = idle_rows(items)
    if idle.size < MIN_IDLE_ROWS:
        return items
    cached = getattr(items, "_live", None)
    if cached is not None and cached[0] == items.layout and np.array_equal(cached[1], idle):
        rows, streams = cached[2], cached[3]
        live = items.take(rows, _TICK_READS + _TICK_WRITES)
        live._flat_streams = (live.layout, streams)
    else:
        keep = np.ones(items.n, dtype=bool)
        keep[idle] = False
        rows = np.flatnonzero(keep)
        live = items.take(rows, _TICK_READS + _TICK_WRITES)
        streams = _flat_streams_of(items, rows, live)  # read from the table's rows: no copy of the wide columns
        live._flat_streams = (live.layout, streams)
        items._live = (items.layout, idle, rows, streams)
    return live


# ---- stages -------------------------------------------------------------------------------------------
def stage_memory(st: TickState, hosts: HostTable, vms: VMTable, items: ItemTable, physics: Physics) -> None:
    """Used / active MB per VM; memory targets, the balloon, guest and hypervisor swap, the stall."""
    settings = physics.memory
    if not settings.reclaim:
        st.used, st.active, st.swapped = memory_state(vms, items)
        memory.no_reclaim(st, vms)
        return
    n_vm, n = vms.n, items.n
    cache = st.cache
    count = cache is not None and cache.settings.enabled and cache.files.n > 0
    files = cache.files if count else _NO_FILES
    resident = cache.resident() if count else _NO_ROWS
    (st.used, st.active, cached, st.target, st.balloon, st.guest_mem, st.hv_swap, st.held, st.stall, st.swapped,
     st.heap_touched) = memory_stage(
        st.dt, tuple(memory.rates(settings)), columns(VMMemory, vms, n_vm), columns(VMMemoryState, vms),
        hosts.pool_mem_limit_mb[: hosts.n], items.vm[:n], items.mem_mb[:n], items.mem_active_mb[:n], files.vm,
        files.cached_mb, resident, count,
    )  # fmt: skip
    if count:
        st.vm_cached = cached  # the cache stage's count too: nothing changes the files in between


_NO_FILES = FileTable()
_NO_ROWS = np.zeros(0, dtype=np.int64)


def stage_cache(st: TickState, hosts: HostTable, vms: VMTable, items: ItemTable, physics: Physics) -> None:
    """Fit each VM's cache in the memory it may use (evictions), then price each file stream's disk I/O."""
    n_vm, fs = vms.n, st.streams
    cache = st.cache
    files = None if cache is None or not cache.settings.enabled else cache.files
    if files is None or files.n == 0:
        st.s_factor = np.ones(fs.item.size)
        st.s_bonus = np.zeros(fs.item.size)
        st.cache_cap = np.zeros(n_vm) if files is None else np.maximum(st.guest_mem - st.used, 0.0)
        st.wb_want = np.zeros(n_vm)
        return
    cfg, n_host = cache.settings, hosts.n
    st.cache_cap, st.wb_want, st.s_factor, st.s_bonus = cache_stage(
        st.dt,
        st.now,
        dirty_limits(cfg),
        (st.guest_mem, st.used, st.vm_host, hosts.disk_mbps[:n_host]),  # GuestRoom
        columns(FileColumns, files),
        cache.resident(),
        _NO_VALUES if st.vm_cached is None else st.vm_cached,
        fs.item.size,
        file_streams(st.layout),
        items.remaining[: items.n],
    )


_LIMITS: tuple[PageCacheSettings | None, tuple] = (None, ())


def dirty_limits(cfg: PageCacheSettings) -> tuple:
    """The settings' `DirtyLimits` as kernels take a record (a plain tuple of its fields: vcloud/numerics.py
    `record`), made once per settings object (frozen) rather than once a tick."""
    global _LIMITS
    if _LIMITS[0] is not cfg:
        _LIMITS = (cfg, tuple(DirtyLimits(cfg.dirty_ratio, cfg.dirty_background_ratio, cfg.dirty_expire_s)))
    return _LIMITS[1]


def file_streams(layout: StreamLayout) -> tuple:
    """The streams through a page-cache file (`FlatStreams`' file part), as kernels take a `FileStreams` (its fields
    in order), made once per layout."""
    found = layout.files
    if found is None:
        fs = layout.flat
        found = layout.files = (fs.file_rows, fs.f_file, fs.f_item, fs.f_vm, fs.f_need, fs.f_write, fs.f_hit,
                                fs.f_touched, fs.f_inv)  # fmt: skip
    return found


_NO_VALUES = np.zeros(0)


def stage_demand(st: TickState, hosts: HostTable, vms: VMTable, items: ItemTable, physics: Physics) -> None:
    """CPU wants of threads, stream wants on datastores and NICs (own host or another's)."""
    n_host, n = hosts.n, items.n
    vm, vm_host = items.vm[:n], st.vm_host
    is_load = st.is_load
    fs = st.streams
    oversubscription = physics.rack_oversubscription
    st.core_mhz_vm, st.core_mhz, io_bw, s_need, st.swap_want = demand_inputs(
        hosts.core_mhz[:n_host], hosts.disk_mbps[:n_host], hosts.nic_mbps[:n_host], hosts.rack[:n_host],
        0.0 if oversubscription is None else oversubscription, vm_host, vm, fs.need, st.s_factor, st.swapped,
        physics.swap_touch_rate,
    )  # fmt: skip
    core_mhz, s_item, s_vm = st.core_mhz, fs.item, fs.vm
    layout = st.layout
    if layout.group is None:
        racks = (io_bw.size - 2 * n_host) // 2  # io_bw: datastores, NICs, then each rack's uplink out and in
        layout.group, layout.ceiling = stream_groups(
            vm_host[s_vm], fs.device, hosts.rack[:n_host], racks, _UPLINK, items.io_mbps_max[:n], s_item, io_bw
        )
    s_group, s_base, load_want = layout.group, layout.ceiling, _NO_VALUES
    if st.has_load:  # a load's disk stream after the items' streams
        load = fs.load_rows
        s_item = np.concatenate((s_item, load))
        s_vm = np.concatenate((s_vm, vm[load]))
        s_need = np.concatenate((s_need, np.zeros(load.size)))
        s_group = np.concatenate((s_group, vm_host[vm[load]]))
        s_base = np.minimum(items.io_mbps_max[:n][s_item], io_bw[s_group])
        load_want = np.minimum(items.load_disk_mbps[:n][load], io_bw[s_group[fs.item.size :]])
    st.want_cpu, st.cpu_weight, st.s_want, st.s_full = demand(
        st.dt, fs.item.size, st.has_load,
        # the records as plain tuples of their fields, in order (vcloud/numerics.py `record`)
        (items.threads[:n], items.need_cpu[:n], core_mhz, items.load_cpu_mhz[:n], items.remaining[:n], items.open[:n],
         vm, is_load),  # ItemDemand
        st.stall,
        (s_item, s_need, s_base, fs.need, st.s_bonus, load_want),  # StreamDemand
    )  # fmt: skip
    st.s_item, st.s_group, st.s_vm, st.s_need = s_item, s_group, s_vm, s_need
    st.io_bw = io_bw


def stage_cpu(st: TickState, hosts: HostTable, vms: VMTable, items: ItemTable, physics: Physics) -> None:
    """Host cores -> VMs by entitlement -> threads."""
    n_host, n_vm = hosts.n, vms.n
    # what the rounds of the pipeline stage share again, and vSphere's host-local pools (vcloud/hostpool.py;
    # empty arrays: none): computed once per tick, in one compiled call
    st.vm_vcpu_mhz, st.vm_weight, st.host_mhz, st.pools = cpu_setup(
        vms.vcpus[:n_vm], st.core_mhz_vm, vms.cpu_entitlement_mhz[:n_vm], ENTITLEMENT_FLOOR_MHZ, hosts.cores[:n_host],
        hosts.core_mhz[:n_host], hosts.pool_cpu_limit_mhz[:n_host], hosts.pool_cpu_reservation_mhz[:n_host],
        vms.in_pool[:n_vm], st.vm_host, vms.cpu_shares[:n_vm],
    )  # fmt: skip
    st.vm_limit = vms.cpu_limit_mhz[:n_vm]
    st.pools = tuple(st.pools)  # the records as kernels take them: plain tuples of their fields
    st.cores = (st.vm_vcpu_mhz, st.vm_limit, st.vm_host, st.vm_weight, st.host_mhz)  # VMCores
    # host cores -> VMs by entitlement (capped by demand and limit) -> threads by weight (capped by want)
    st.vm_got1, st.got_cpu1 = share_cpu(st.want_cpu, st.cpu_weight, items.vm[: items.n], st.cores, st.pools)


def stage_io(st: TickState, hosts: HostTable, vms: VMTable, items: ItemTable, physics: Physics) -> None:
    """Devices -> streams, equal shares."""
    if st.has_load:
        st.io_group = np.concatenate((st.s_group, st.vm_host, st.vm_host))
    else:
        layout = st.layout
        if layout.shared_rows is None:
            layout.shared_rows = np.concatenate((st.s_group, st.vm_host, st.vm_host))
        st.io_group = layout.shared_rows
    st.got_io1, st.swap_got1, st.wb_got1 = share_io(st.s_want, st.swap_want, st.wb_want, st.io_group, st.io_bw)


def stage_pipeline(st: TickState, hosts: HostTable, vms: VMTable, items: ItemTable, physics: Physics) -> None:
    """Rounds of sharing in which each need of a multi-resource phase asks only what the phase's other needs let it
    use: what a phase cannot use goes to the phases that can (a Jacobi iteration toward the allocation where every
    phase's grants match one rate; `Physics.pipeline_rounds` rounds at most, fewer once the rates settle;
    vcloud/sharing.py `pipeline`)."""
    fs, n = st.streams, items.n
    st.rate, st.got_cpu, st.got_io, st.swap_got, st.wb_got, st.runnable_mhz = pipeline(
        physics.pipeline_rounds, fs.any_multi,
        (st.got_cpu1, st.got_io1, st.swap_got1, st.wb_got1),  # Grants (each record: a plain tuple of its fields)
        (items.need_cpu[:n], items.vm[:n], st.want_cpu, st.cpu_weight, fs.wait_rows, fs.load_rows),  # PipelineItems
        (fs.item, fs.starts, fs.owners, fs.multi, st.s_want, st.s_need, st.s_bonus),  # PipelineStreams
        st.cores, st.pools, (st.swap_want, st.wb_want, st.io_group, st.io_bw),  # DeviceShares
    )  # fmt: skip


def stage_progress(st: TickState, hosts: HostTable, vms: VMTable, items: ItemTable, physics: Physics) -> None:
    """Items advance; a phase that runs out of work in the tick (open ones wait for more; loads never) ends at its
    interpolated time (vcloud/items.py `progress`)."""
    st.progress, st.frac_dt, st.done_rows = progress(
        st.dt, st.rate, items.remaining[: items.n], st.has_load, st.is_load
    )


def stage_account(st: TickState, hosts: HostTable, vms: VMTable, items: ItemTable, physics: Physics) -> None:
    """What each item and VM did in the tick, and each guest's /proc/stat accounting (vcloud/accounting.py `account`:
    CPU and I/O per item and VM, the share of the tick each item's threads were runnable, blocked on I/O or stalled
    on page-ins; steal and iowait per VM attributed to items in proportion to what each contributed)."""
    n_vm, n = vms.n, items.n
    account(
        st.dt, hosts.n, st.streams.item.size, st.has_load,
        # the records as plain tuples of their fields, in order (vcloud/numerics.py `record`): ItemUse, StreamUse, VMUse
        (items.vm[:n], st.is_load, items.need_cpu[:n], items.threads[:n], items.open[:n], items.sys_fraction[:n],
         st.core_mhz, st.progress, st.rate, st.want_cpu, st.frac_dt, st.got_cpu, st.got_cpu1, st.runnable_mhz),
        (st.s_item, st.s_vm, st.s_group, st.s_need, st.s_bonus, st.s_want, st.s_full, st.got_io, st.got_io1),
        (vms.vcpus[:n_vm], st.core_mhz_vm, st.stall, st.swap_got, st.wb_got),
        columns(ItemCharges, items), columns(VMTickState, vms), columns(VMCounters, vms),  # the kernel writes n rows
    )  # fmt: skip
    vms.mem_used_mb[:n_vm] = st.used
    vms.mem_active_mb[:n_vm] = st.active
    vms.swap_mb[:n_vm] = st.swapped


def stage_cache_update(st: TickState, hosts: HostTable, vms: VMTable, items: ItemTable, physics: Physics) -> None:
    """What the tick read and wrote through the caches: misses are cached, writes dirty (unless throttled), the
    flusher cleaned what it wrote back; per item and VM, file MB read from cache and from disk."""
    cache, fs, n_vm = st.cache, st.streams, vms.n
    if cache is None or not cache.settings.enabled:
        return
    files = columns(FileColumns, cache.files)
    if fs.any_file:
        n = items.n
        cache.touch(fs.f_touched)  # the files the tick's streams read or wrote (a handful of the table)
        cache_files_update(
            st.dt, st.now, st.progress, st.s_factor, st.s_bonus, file_streams(st.layout), files,
            columns(ItemReads, items, n), columns(VMReads, vms, n_vm), physics.memory.reclaim,
        )  # fmt: skip
    cached, dirty = cache_settle(st.dt, files, cache.resident(), st.wb_got, st.cache_cap, RECLAIM_BATCH)
    vms.cache_mb[:n_vm] = cached
    vms.dirty_mb[:n_vm] = dirty


STAGES = (
    ("memory", stage_memory),
    ("cache", stage_cache),
    ("demand", stage_demand),
    ("disk_seek", stage_disk_seek),
    ("cpu", stage_cpu),
    ("io", stage_io),
    ("pipeline", stage_pipeline),
    ("progress", stage_progress),
    ("account", stage_account),
    ("cache_update", stage_cache_update),
)


def begin(
    hosts: HostTable, vms: VMTable, items: ItemTable, dt: float, cache: PageCache | None = None, now: float = 0.0
) -> TickState:
    st = TickState()
    st.dt, st.cache, st.now = dt, cache, now
    st.layout = flat_streams(items)
    st.streams = fs = st.layout.flat
    st.is_load, st.has_load = fs.is_load, fs.has_load
    st.vm_host = vms.host[: vms.n]
    return st


def finish(st: TickState, items: ItemTable) -> TickResult:
    rows = st.done_rows
    if rows.size:
        ended = rows[~items.open[rows]]
        return TickResult(ended, st.frac_dt[ended], st)
    return TickResult(rows, np.zeros(0), st)


def step(
    hosts: HostTable,
    vms: VMTable,
    items: ItemTable,
    dt: float,
    physics: Physics,
    cache: PageCache | None = None,
    now: float = 0.0,
) -> TickResult:
    """One tick of `dt` seconds from time `now`; `cache`: the guests' page caches (None: no cache)."""
    live = live_items(items)
    st = begin(hosts, vms, live, dt, cache, now)
    for name, stage in STAGES:
        stage(st, hosts, vms, items if name in FULL_TABLE_STAGES else live, physics)
    result = finish(st, live)
    if live is not items:  # the live rows' new values back into the table
        rows = st.rows = live.rows
        cols = items.__dict__
        for name in _TICK_WRITES:
            cols[name][rows] = getattr(live, name)
        result.done_rows = rows[result.done_rows]
    return result
