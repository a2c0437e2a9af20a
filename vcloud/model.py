"""`CloudModel`: the Mesa model that owns the cloud's tables, its clock and its allocator.

Time is in simulated seconds (`model.time`). The model ticks every `dt` seconds through its own event
chain (tick k at k*dt, no drift); Mesa's one-second step is stopped (vcloud/clock.py), so `model.step()` means
"advance one second" and `run_for`/`run_until` work in seconds. Ticks run at HIGH priority, so events
at the same time (allocator periods, the layers' events) see the tick's result (DESIGN.md 3, step 5).
Layers above subclass it and extend `before_tick` / `after_step` / `after_tick`.

One instant t = k * dt runs in the order of `INSTANT` (below: one list, which tests/test_tick_order.py checks
against a recorded run): the tick is the HIGH-priority event at t, scheduled by the tick before; in it the layers'
hooks and the engine's stages (`engine.STAGES`); then Mesa's other events at t, by priority, ties in the order
they were scheduled.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator, Sequence

import numpy as np
import pandas as pd
from mesa import Model
from mesa.time import Priority

from vcloud import engine
from vcloud.agents import CHARGES, VM, Host, WorkItem
from vcloud.allocator import CloudAllocator, CloudView, Entitlements
from vcloud.clock import stop_mesa_step
from vcloud.engine import Physics
from vcloud.interference import LoadDriver, LoadProfile
from vcloud.items import item_progress, set_remaining
from vcloud.memory import overhead_mb
from vcloud.pagecache import PageCache, PageCacheSettings
from vcloud.tables import EndedCharges, HostTable, ItemTable, VMTable
from vcloud.trace import TraceRecorder
from vcloud.work import ItemState, Kind, Phase


# One instant t = k * dt, in order: (who, what). `CloudModel._tick` runs the rows from "before_tick" to
# "after_tick" (the engine's rows are `engine.STAGES`, in its order); then Mesa runs the instant's other events.
def _summary(stage: Callable) -> str:
    """A stage's first sentence (its docstring says what it does; the order is engine.STAGES')."""
    return " ".join((stage.__doc__ or "").split()).split(". ")[0].rstrip(".")


INSTANT: tuple[tuple[str, str], ...] = (
    ("before_tick", "hook of the layers above: what must be in place before the physics"),
    *((name, f"engine: {_summary(stage)}") for name, stage in engine.STAGES),
    ("after_step", "hook of the layers above: producer/consumer syncs, while every item's remaining is the tick's"),
    ("finished", "finished phases load the next; finished items stop, then their `on_finish` callbacks"),
    ("after_tick", "hook of the layers above: reactions to the finished items"),
    ("DEFAULT events", "the layers' events at t (arrivals, periodic work: `every`), allocator periods, load changes"),
    ("LOW events", "the trace sample"),
)

StepFunction = Callable[[HostTable, VMTable, ItemTable, float, Physics, PageCache, float], engine.TickResult]


class InvariantError(AssertionError):
    """A physical invariant of the cloud was broken (raised by `check_invariants`)."""


class CloudModel(Model):
    advancing_until = -math.inf  # the end of the clock loop running now (`run_for`, `run_until`); -inf outside one

    def __init__(
        self,
        *,
        rng: int | None = None,
        dt: float = 1.0,
        physics: Physics | None = None,
        allocator: CloudAllocator | None = None,
        trace_interval_s: float = 10.0,
        check: bool = False,
        step_function: StepFunction = engine.step,
        page_cache: PageCacheSettings | None = None,
    ) -> None:
        super().__init__(rng=rng)
        if not (dt > 0 and math.isfinite(dt)):
            raise ValueError(f"dt must be a positive number of seconds, got {dt}")
        stop_mesa_step(self)  # we tick every dt, not every 1.0 (vcloud/clock.py)
        self.dt = dt
        self.physics = physics or Physics()
        self.allocator = allocator
        self.check = check
        self.step_function = step_function
        self.cache = PageCache(page_cache)  # the guests' page caches (vcloud/pagecache.py)
        self.hosts, self.vms, self.items = HostTable(), VMTable(), ItemTable()
        self.host_agents: list[Host] = []
        self.vm_agents: list[VM] = []
        self.tracer = TraceRecorder(trace_interval_s)
        self.ended_charges = EndedCharges(CHARGES)  # the charges of the items that stopped (WorkItem.charged)
        self.ticks = 0
        self._started = False
        self._periodic: list[_Periodic] = []
        # the background loads' drivers: Mesa's events hold only weak references to the methods they call, so a driver
        # nothing else holds would be gone after its first level (its next change never applied)
        self._load_drivers: list[LoadDriver] = []
        self._progress_tick, self._progress = -1, np.zeros(0)
        self.progress_version = 0  # bumped whenever `item_progress` is recomputed: a key for caches of progress
        # bumped whenever a running item's progress may move between ticks (work added, phases re-marked, an item
        # stopped), not when an item starts: with `ticks`, a key for caches that a start leaves valid
        self.progress_moves = 0
        self.pool_cpu_mhz: float | None = None  # None: the capacity of the hosts that carry pool VMs
        self.pool_mem_mb: float | None = None
        self.allocations: list[tuple[float, np.ndarray, np.ndarray]] = []  # (time, CPU MHz, memory MB) per allocation

    # ---- building the cloud -------------------------------------------------------------------
    def add_host(
        self,
        name: str,
        *,
        cores: int,
        core_mhz: float,
        mem_mb: float,
        disk_mbps: float,
        nic_mbps: float,
        rack: int = 0,
    ) -> Host:
        for field, value in (("cores", cores), ("core_mhz", core_mhz), ("mem_mb", mem_mb),
                             ("disk_mbps", disk_mbps), ("nic_mbps", nic_mbps)):  # fmt: skip
            if not value > 0:
                raise ValueError(f"host {name}: {field} must be > 0, got {value}")
        row = self.hosts.append(cores=cores, core_mhz=core_mhz, mem_mb=mem_mb, disk_mbps=disk_mbps,
                                nic_mbps=nic_mbps, rack=rack, pool_cpu_limit_mhz=math.inf,
                                pool_mem_limit_mb=math.inf)  # fmt: skip
        host = Host(self, name, row)
        self.host_agents.append(host)
        return host

    def add_vm(
        self,
        name: str,
        host: Host,
        *,
        vcpus: int,
        mem_mb: float,
        os_mem_mb: float = 256.0,
        os_active_fraction: float = 0.25,
        in_pool: bool = True,
        cpu_reservation_mhz: float = 0.0,
        cpu_limit_mhz: float = math.inf,
        cpu_shares: float | None = None,
        mem_reservation_mb: float = 0.0,
        mem_limit_mb: float = math.inf,
        mem_shares: float | None = None,
        cpu_entitlement_mhz: float | None = None,
    ) -> VM:
        """Place a VM. Shares default to VMware's NORMAL level (1000/vCPU, 10/MB; algorithms.md 1.1).

        VMs outside the pool (`in_pool=False`, e.g. other tenants) keep `cpu_entitlement_mhz`
        (default: their vCPUs' full speed) and their configured memory.
        """
        if self._started:
            raise RuntimeError("VMs must be added before the model starts")
        if vcpus < 1 or mem_mb <= 0:
            raise ValueError(f"vm {name}: vcpus must be >= 1 and mem_mb > 0, got {vcpus}, {mem_mb}")
        full = vcpus * self.hosts.core_mhz[host.row]
        row = self.vms.append(
            host=host.row, vcpus=vcpus, mem_mb=mem_mb, os_mem_mb=os_mem_mb, os_active_fraction=os_active_fraction,
            in_pool=in_pool, cpu_reservation_mhz=cpu_reservation_mhz, cpu_limit_cfg_mhz=cpu_limit_mhz,
            cpu_shares=1000.0 * vcpus if cpu_shares is None else cpu_shares,
            mem_reservation_mb=mem_reservation_mb, mem_limit_cfg_mb=mem_limit_mb,
            mem_shares=10.0 * mem_mb if mem_shares is None else mem_shares,
            cpu_entitlement_mhz=full if cpu_entitlement_mhz is None else cpu_entitlement_mhz,
            cpu_limit_mhz=cpu_limit_mhz, mem_granted_mb=mem_mb, mem_target_mb=mem_mb,
            overhead_mb=overhead_mb(mem_mb, vcpus) if self.physics.memory.overhead else 0.0,
        )  # fmt: skip
        vm = VM(self, name, row, host)
        self.vm_agents.append(vm)
        return vm

    @property
    def pool_rows(self) -> np.ndarray:
        return np.flatnonzero(self.vms.view("in_pool"))

    def set_pool(self, cpu_mhz: float | None = None, mem_mb: float | None = None) -> None:
        """Size the resource pool (e.g. FlexSlot's 153.6 GHz and 128 GB); None = the hosts' capacity."""
        for field, value in (("pool cpu_mhz", cpu_mhz), ("pool mem_mb", mem_mb)):
            if value is not None and not value > 0:
                raise ValueError(f"{field} must be > 0, got {value}")
        self.pool_cpu_mhz, self.pool_mem_mb = cpu_mhz, mem_mb

    def pool_capacity(self) -> tuple[float, float]:
        """CPU MHz and memory MB of the resource pool (DESIGN.md 4): as set, else the hosts' capacity."""
        hosts = np.unique(self.vms.view("host")[self.pool_rows])
        cpu = float((self.hosts.view("cores") * self.hosts.view("core_mhz"))[hosts].sum())
        mem = float(self.hosts.view("mem_mb")[hosts].sum())
        return self.pool_cpu_mhz or cpu, self.pool_mem_mb or mem

    def view(self) -> CloudView:
        """The allocators' window; the pool's memory net of its VMs' overhead memory (vcloud/memory.py)."""
        cpu, mem = self.pool_capacity()
        mem -= float(self.vms.view("overhead_mb")[self.pool_rows].sum())
        return CloudView(self.hosts, self.vms, cpu, max(mem, 0.0))

    def add_background(self, vm: VM, profile: LoadProfile) -> WorkItem:
        """Run a never-ending synthetic load on `vm` (another tenant)."""
        item = WorkItem(self, [Phase("load", Kind.LOAD, 0.0)], threads=vm.vcpus, name=f"load@{vm.name}")
        self.start_item(item, vm)
        self._load_drivers.append(LoadDriver(self, item, profile))
        return item

    # ---- work items -----------------------------------------------------------------------------
    def start_item(self, item: WorkItem, vm: VM) -> None:
        if item.state != ItemState.NEW:
            raise RuntimeError(f"{item} was already started")
        item.vm, item.state, item.start_s = vm, ItemState.RUNNING, float(self.time)
        mem_mb = item.mem_mb
        item.row = self.items.add_item(item, vm.row, item.threads, item.io_mbps_max, mem_mb,
                                       mem_mb * item.mem_active_fraction)  # fmt: skip
        self._load_phase(item, start=True)

    def _load_phase(self, item: WorkItem, start: bool = False) -> None:
        """Write the item's current phase into its row (at every start and phase change: kept to plain scalar writes).
        Streams fill a row from column 0 and the columns past them hold no stream (`stream_vm` -1, no need, no file):
        the new phase's streams overwrite the first columns, and only those past them that the former phase used are
        reset (none if its column after the new streams is -1: a new row, or a phase with no more streams before).
        The cells are written through memoryviews (`ItemTable.phase_views`: half the cost of NumPy's scalar writes)."""
        phase, items, row = item.phase, self.items, item.row
        kind = phase.kind
        need_cpu, streams = phase.needs()
        if streams:
            streams = [s for s in streams if s.mb_per_unit > 0]
        m = len(streams)
        if m > items.width:
            items.widen(m)
        v = items.phase_views()
        v.kind[row] = int(kind)
        v.need_cpu[row] = need_cpu
        width = items.width
        at = row * width  # the row's first cell in the flat views of the wide columns
        if m < width and v.stream_vm[at + m] >= 0:
            items.stream_vm[row, m:] = -1
            items.stream_need[row, m:] = 0.0
            items.stream_file[row, m:] = -1
        if streams:
            stream_vm, stream_device, stream_need = v.stream_vm, v.stream_device, v.stream_need
            stream_file, stream_write, stream_hit = v.stream_file, v.stream_write, v.stream_hit
            own_vm = item.vm.row
            for s in streams:
                file, write = s.file, s.write
                stream_vm[at] = own_vm if s.vm < 0 else s.vm
                stream_device[at] = int(s.device)
                stream_need[at] = s.mb_per_unit
                stream_file[at] = file
                stream_write[at] = write
                stream_hit[at] = self.cache.cached_share(file) if file >= 0 and not write else 0.0
                at += 1
        items.layout += 1
        amount = phase.amount
        v.remaining[row] = math.inf if kind == Kind.LOAD else amount
        v.sys_fraction[row] = phase.sys_fraction
        v.open[row] = phase.open
        self._progress_tick = -1  # `_progress_moved(not start)`, inline: at every phase of every attempt
        self.progress_moves += not start
        v.phase_amount[row] = amount
        i, marks = item.phase_index, item.progress_marks  # `item.phase_marks(i)`, inline
        v.progress_lo[row], v.progress_hi[row] = marks[i] if marks is not None else item.phase_marks(i)

    def set_progress(self, item: WorkItem, lo: float, hi: float, amount: float | None = None) -> None:
        """Re-mark the current phase of a running item (an open phase whose share of the whole changes)."""
        self.items.progress_lo[item.row], self.items.progress_hi[item.row] = lo, hi
        self._progress_moved()
        if amount is not None:
            self.items.phase_amount[item.row] = amount

    def set_progress_rows(self, rows: np.ndarray, hi: float | np.ndarray) -> None:
        """Re-mark where the current phases of many running items end in progress (their rows): an open phase
        whose share of the whole grows as work is added to it."""
        self.items.progress_hi[rows] = hi
        self._progress_moved()

    def _progress_moved(self, moves: int = 1) -> None:
        """Progress is recomputed when next asked for; `moves` count in `progress_moves` (0: a move nobody reads)."""
        self._progress_tick = -1
        self.progress_moves += moves

    def item_progress(self) -> np.ndarray:
        """Progress scores of all running items (by row); recomputed after a tick or a change of rows or phases."""
        if self._progress_tick != self.ticks:
            it = self.items
            self._progress = item_progress(it.remaining, it.phase_amount, it.progress_lo, it.progress_hi, it.n)
            self._progress_tick = self.ticks
            self.progress_version += 1
        return self._progress

    def add_work(self, item: WorkItem, amount: float) -> None:
        """Give the current (open) phase of a running item more work."""
        if amount < 0:
            raise ValueError(f"add_work: amount must be >= 0, got {amount}")
        self.items.remaining[item.row] += amount
        self.items.phase_amount[item.row] += amount
        self._progress_moved()

    def add_work_rows(self, rows: np.ndarray, amount: float | np.ndarray) -> None:
        """`add_work` for many running items at once (their rows; one amount for all, or one per row)."""
        if np.any(np.asarray(amount) < 0):
            raise ValueError(f"add_work: amount must be >= 0, got {amount}")
        self.items.remaining[rows] += amount
        self.items.phase_amount[rows] += amount
        self._progress_moved()

    def set_remaining_rows(self, rows: np.ndarray, remaining: np.ndarray, counted: bool = True) -> None:
        """Set what is left of the current phases of many running items (a producer-driven queue that grows and
        shrinks); their phase amounts change by as much, so work already done stays done. `counted=False`: items
        whose progress nobody reads (daemons' queues): `progress_moves` stays. `rows` are distinct."""
        rows, remaining = np.asarray(rows, dtype=np.int64), np.asarray(remaining, dtype=np.float64)
        if not set_remaining(rows, remaining, self.items.remaining, self.items.phase_amount):
            raise ValueError("set_remaining_rows: remaining must be >= 0")
        self._progress_moved(counted)

    def replan(self, item: WorkItem, phases: list[Phase], marks: list[tuple[float, float]] | None = None) -> None:
        """Replace a running item's current and later phases by `phases` (the first becomes current, in full).

        The work done so far stays done and charged; the layer above says what is left (e.g. a task told to
        stop early, whose remaining work shrinks). `marks`: progress marks of the new phases."""
        if item.row is None or item.state != ItemState.RUNNING:
            raise RuntimeError(f"replan: {item} is not running")
        if not phases:
            raise ValueError(f"replan: {item} needs at least one phase")
        i = item.phase_index
        item.phases[i:] = list(phases)
        if item.progress_marks is not None:
            if marks is None or len(marks) != len(phases):
                raise ValueError(f"replan: {item} has progress marks: give one per new phase")
            item.progress_marks[i:] = list(marks)
        self._load_phase(item)

    def close_phase(self, item: WorkItem) -> None:
        """No more work will be added to the current open phase: it ends once its work is done."""
        self.items.open[item.row] = False

    def stop_item(self, item: WorkItem, state: str, at: float | None = None) -> None:
        """Take `item` off its VM (done or killed) at `at` (default now): `stop_items` of one."""
        self.stop_items([item], state, [float(self.time) if at is None else at])

    def stop_items(self, items: list[WorkItem], state: str, ends: list[float]) -> list[tuple[WorkItem, int]]:
        """Take `items` off their VMs in turn (`ends`: their end times); their charges are kept in `ended_charges`
        (WorkItem.charged), and their rows leave the item table with one copy per column for all of them, not per item
        and column (the tick's finished items: a SWIM day ends most attempts in bursts of 30 to 150 a tick). Returns
        the items that moved to another row, with it."""
        table = self.items
        rows = [item.row for item in items]
        at = np.array(rows, dtype=np.int64)
        columns = table.__dict__
        charges = np.empty((len(rows), len(CHARGES)))
        for j, column in enumerate(CHARGES):
            charges[:, j] = columns[column][at]
        first = self.ended_charges.add_rows(charges)
        moved = table.remove_rows(rows)
        for owner, row in moved:
            owner.row = row
        for k, (item, end) in enumerate(zip(items, ends, strict=True), first):
            item.ended_row, item.row, item.state, item.end_s = k, None, state, end
        self._progress_moved(len(items))
        return moved

    def charges_of(self, items: Sequence[WorkItem]) -> np.ndarray:
        """`CHARGES` of each item so far, a row each: `WorkItem.charged` of many items at once, with no float object
        per value (the tables of a long run: 476,734 attempts of a SWIM day)."""
        n = len(items)
        out = np.zeros((n, len(CHARGES)))
        rows = np.fromiter((-1 if i.row is None else i.row for i in items), np.int64, n)
        ended = np.fromiter((i.ended_row for i in items), np.int64, n)
        live = rows >= 0
        stopped = ~live & (ended >= 0)
        out[stopped] = self.ended_charges.rows[ended[stopped]]
        for c, column in enumerate(CHARGES):
            out[live, c] = self.items.view(column)[rows[live]]
        return out

    def set_item_memory(self, item: WorkItem, mem_mb: float, active_fraction: float | None = None) -> None:
        """Change a running item's resident memory (a JVM heap that grows, a resized slot)."""
        if active_fraction is not None:
            item.mem_active_fraction = active_fraction
        item.mem_mb = mem_mb
        if item.row is not None:
            self.items.mem_mb[item.row] = mem_mb
            self.items.mem_active_mb[item.row] = mem_mb * item.mem_active_fraction

    # ---- the clock ------------------------------------------------------------------------------
    def start(self) -> None:
        """Freeze the cloud's layout, apply the first allocation and schedule the periodic work."""
        if self._started:
            return
        self._started = True
        self._apply_allocation()
        if self.allocator is not None and self.allocator.sample_s:
            self._every(self.allocator.sample_s, self._observe)
        if self.allocator is not None and self.allocator.period_s:
            self._every(self.allocator.period_s, self._apply_allocation)
        self._every(self.tracer.interval_s, self._record_trace, Priority.LOW)
        self.schedule_event(self._tick, at=self.dt, priority=Priority.HIGH)

    @property
    def started(self) -> bool:
        """Has the clock been started (the layout frozen, the periodic work scheduled)?"""
        return self._started

    def every(self, interval: float, fn: Callable[[], None], priority: Priority = Priority.DEFAULT) -> None:
        """Run `fn` every `interval` simulated seconds, at exact multiples: for layers above with periodic work."""
        self._every(interval, fn, priority)

    def _every(self, interval: float, fn: Callable[[], None], priority: Priority = Priority.DEFAULT) -> None:
        """Run `fn` at k*interval for the k with k*interval > now (exact multiples, no accumulated rounding)."""
        self._periodic.append(_Periodic(self, interval, fn, priority))

    def run_for(self, duration: float) -> None:
        self.start()
        self._run_to(self.time + duration, super().run_for, duration)  # Mesa's end: `time + duration`

    def run_until(self, end: float) -> None:
        self.start()
        self._run_to(float(end), super().run_until, float(end))

    def _run_to(self, until: float, run: Callable[[float], None], argument: float) -> None:
        """Run Mesa's clock loop (`run`) with its end kept for the events that run in it: a layer's chain of events
        may run its next link at once when no other event comes first and the end allows it. Mesa's own
        `model.step()` (one second) does not keep it: a chain then makes every link an event, with the same
        results."""
        self.advancing_until = until
        try:
            run(argument)
        finally:
            self.advancing_until = -math.inf

    def before_tick(self) -> None:
        """Hook for layers above, at the start of the tick, before the physics (`INSTANT`). Arrivals at t are not
        here: they are events at t (DEFAULT priority), after the tick, so the tick at t + dt is their first."""

    def after_step(self) -> None:
        """Hook for layers above, right after the tick's physics and before items whose phase ended move on:
        a layer that feeds work items from others' progress (a producer-consumer pipeline) syncs here, while every
        item's `remaining` is what the tick left. It may start and stop items, but not the ones that just ended."""

    def after_tick(self, done: list[WorkItem]) -> None:
        """Hook for layers above, with the items that finished in this tick."""

    def _tick(self) -> None:
        if not self.running:  # the layer above has finished: the clock stops ticking
            return
        self.ticks += 1
        self.schedule_event(self._tick, at=(self.ticks + 1) * self.dt, priority=Priority.HIGH)
        self.before_tick()
        start = float(self.time) - self.dt
        result = self.step_function(self.hosts, self.vms, self.items, self.dt, self.physics, self.cache, start)
        owner = self.items.owner
        owners = [owner[r] for r in np.asarray(result.done_rows).tolist()]
        self.after_step()
        # each phase's end, `start + offset` in float64 as Python's own addition gives it, not one NumPy scalar a row
        times = (start + np.asarray(result.done_offset_s, dtype=np.float64)).tolist()
        finished, ends = [], []
        for item, at in zip(owners, times, strict=True):
            item.phase_end_s.append(at)
            item.phase_index += 1
            if item.phase is None:
                finished.append(item)
                ends.append(at)
            else:
                self._load_phase(item)  # at its row now: the finished items leave theirs together, below
        if finished:
            self.stop_items(finished, ItemState.DONE, ends)
        if self.check:
            self.check_invariants()
        for item in finished:
            if item.on_finish is not None:
                item.on_finish(item)
        self.after_tick(finished)

    # ---- allocation, traces, checks -------------------------------------------------------------
    def _observe(self) -> None:
        self.allocator.observe(self.view(), float(self.time))

    def _apply_allocation(self) -> None:
        if self.allocator is None:
            return
        rows = self.pool_rows
        if self.allocator.sample_s and self._started and self.ticks:
            self._observe()  # a sample due at the same instant must count, whatever the events' order
        ent: Entitlements = self.allocator.entitlements(self.view(), float(self.time))
        ent.validate(len(rows))
        self.vms.cpu_entitlement_mhz[rows] = ent.cpu_entitlement_mhz
        self.vms.cpu_limit_mhz[rows] = ent.cpu_limit_mhz
        self.vms.mem_granted_mb[rows] = ent.mem_granted_mb
        hosts = self.hosts
        hosts.view("pool_cpu_limit_mhz")[:] = math.inf if ent.host_cpu_limit_mhz is None else ent.host_cpu_limit_mhz
        hosts.view("pool_mem_limit_mb")[:] = math.inf if ent.host_mem_limit_mb is None else ent.host_mem_limit_mb
        reserved = ent.host_cpu_reservation_mhz
        hosts.view("pool_cpu_reservation_mhz")[:] = 0.0 if reserved is None else reserved
        self.allocations.append((float(self.time), ent.cpu_entitlement_mhz.copy(), ent.mem_granted_mb.copy()))

    def _record_trace(self) -> None:
        if self.running:
            self.tracer.record(float(self.time), self.hosts, self.vms)

    def stop(self) -> None:
        """The layer above is done: record the last (partial) trace interval and stop the clock."""
        if self.running:
            self._record_trace()
            self.running = False

    def vm_trace(self) -> pd.DataFrame:
        """Per-VM trace (columns of `vcloud.trace.COLUMNS`)."""
        return self.tracer.frame(self.vms, [v.name for v in self.vm_agents], [h.name for h in self.host_agents])

    def vm_trace_parts(self, rows: int | None = None) -> Iterator[pd.DataFrame]:
        """`vm_trace` as consecutive frames of about `rows` rows (`TraceRecorder.parts`): what a run writes."""
        return self.tracer.parts(self.vms, [v.name for v in self.vm_agents], [h.name for h in self.host_agents], rows)

    def check_invariants(self, tol: float = 1e-6) -> None:
        """Capacity bounds, the /proc/stat identity, non-negative counters (DESIGN.md 8)."""
        vms, hosts = self.vms, self.hosts
        host = vms.view("host")
        host_mhz = hosts.view("cores") * hosts.view("core_mhz")
        used = np.bincount(host, vms.view("cpu_used_mhz"), minlength=hosts.n)
        if np.any(used > host_mhz * (1 + tol) + tol):
            h = int(np.argmax(used - host_mhz))
            raise InvariantError(f"host {self.host_agents[h].name} delivered {used[h]:.3f} MHz > {host_mhz[h]:.3f}")
        pooled = vms.view("in_pool") & np.isfinite(hosts.view("pool_cpu_limit_mhz"))[host]
        in_pool = np.bincount(host, vms.view("cpu_used_mhz") * pooled, minlength=hosts.n)
        if np.any(in_pool > hosts.view("pool_cpu_limit_mhz") * (1 + tol) + tol):
            raise InvariantError("a host-local pool delivered more than its limit")
        disk = np.bincount(host, vms.view("disk_mbps"), minlength=hosts.n)
        if np.any(disk > hosts.view("disk_mbps") * (1 + tol) + tol):
            raise InvariantError("a datastore delivered more than its bandwidth")
        ceiling = np.minimum(vms.view("cpu_limit_mhz"), vms.view("vcpus") * hosts.view("core_mhz")[host])
        over = vms.view("cpu_used_mhz") > ceiling * (1 + tol) + tol
        if np.any(over):
            raise InvariantError(f"vm {self.vm_agents[int(np.argmax(over))].name} used more than its limit")
        parts = ("usr_s", "sys_s", "steal_s", "iowait_s", "idle_s")
        if any(np.any(vms.view(p) < -tol) for p in parts):
            raise InvariantError("a guest CPU counter went negative")
        total = sum(vms.view(p) for p in parts)
        expect = vms.view("vcpus") * self.ticks * self.dt
        if np.any(np.abs(total - expect) > tol * np.maximum(expect, 1.0)):
            v = int(np.argmax(np.abs(total - expect)))
            raise InvariantError(
                f"vm {self.vm_agents[v].name}: usr+sys+steal+iowait+idle={total[v]:.6f} != vCPUs*t={expect[v]:.6f}"
            )
        if np.any(self.items.view("remaining") < 0):
            raise InvariantError("a work item's remaining work went negative")
        if not self.items.blank_past_end():
            raise InvariantError("a row of the item table past its items is not blank")
        if not self.items.views_current():
            raise InvariantError("a column of the item table was replaced other than by growing or widening it")
        files = self.cache.files
        dirty, cached, size = files.view("dirty_mb"), files.view("cached_mb"), files.view("size_mb")
        if np.any(dirty < -tol) or np.any(dirty > cached + tol) or np.any(cached > size + tol):
            raise InvariantError("a file's cache holds more than the file, or more dirty data than it caches")


class _Periodic:
    """Calls `fn` at k*interval (k = 1, 2, ... from the start; from the first multiple after now if made later) as
    a chain of single events."""

    def __init__(self, model: Model, interval: float, fn: Callable[[], None], priority: Priority) -> None:
        if not interval > 0:
            raise ValueError(f"period must be > 0, got {interval}")
        self.model, self.interval, self.fn, self.priority = model, interval, fn, priority
        self.k = math.floor(float(model.time) / interval) + 1
        while self.k * interval <= float(model.time):  # rounding must not give "now" again
            self.k += 1
        model.schedule_event(self.fire, at=self.k * interval, priority=priority)

    def fire(self) -> None:
        self.k += 1
        self.model.schedule_event(self.fire, at=self.k * self.interval, priority=self.priority)
        self.fn()
