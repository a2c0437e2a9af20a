"""Mesa agents of the cloud: identities and behaviour; their numbers live in the model's tables."""

from __future__ import annotations

import math
from array import array
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from mesa import Agent

from vcloud.rows import Column
from vcloud.work import EndedPhase, ItemState, Phase, ended_plan

if TYPE_CHECKING:
    from vcloud.model import CloudModel


CHARGES = ("usr_s", "sys_s", "steal_s", "iowait_s", "io_mb", "read_disk_mb", "read_cache_mb")  # item table columns


class Host(Agent):
    """A hypervisor host: cores x MHz, memory, a local datastore and a NIC, in a rack. Its numbers are its row of the
    model's host table (`Column`, vcloud/rows.py), written by the model and its allocator."""

    cores = Column[int]("model.hosts")
    core_mhz = Column[float]("model.hosts")
    mem_mb = Column[float]("model.hosts")
    disk_mbps = Column[float]("model.hosts")
    nic_mbps = Column[float]("model.hosts")
    rack = Column[int]("model.hosts")
    pool_cpu_limit_mhz = Column[float]("model.hosts")
    pool_cpu_reservation_mhz = Column[float]("model.hosts")
    pool_mem_limit_mb = Column[float]("model.hosts")

    def __init__(self, model: CloudModel, name: str, row: int) -> None:
        super().__init__(model)
        self.name, self.row = name, row

    def __repr__(self) -> str:
        return f"Host({self.name})"


class VM(Agent):
    """A virtual machine placed on a host. Reads its configuration and accounting from the VM table (its `host`
    is the Host agent; the table's `host` column is that agent's row)."""

    vcpus = Column[int]("model.vms")
    mem_mb = Column[float]("model.vms")
    os_mem_mb = Column[float]("model.vms")
    os_active_fraction = Column[float]("model.vms")
    in_pool = Column[bool]("model.vms")
    cpu_reservation_mhz = Column[float]("model.vms")
    cpu_limit_cfg_mhz = Column[float]("model.vms")
    cpu_shares = Column[float]("model.vms")
    mem_reservation_mb = Column[float]("model.vms")
    mem_limit_cfg_mb = Column[float]("model.vms")
    mem_shares = Column[float]("model.vms")
    cpu_entitlement_mhz = Column[float]("model.vms")
    cpu_limit_mhz = Column[float]("model.vms")
    mem_granted_mb = Column[float]("model.vms")
    cpu_demand_mhz = Column[float]("model.vms")
    cpu_used_mhz = Column[float]("model.vms")
    mem_used_mb = Column[float]("model.vms")
    mem_active_mb = Column[float]("model.vms")
    swap_mb = Column[float]("model.vms")
    disk_mbps = Column[float]("model.vms")
    net_mbps = Column[float]("model.vms")
    usr_s = Column[float]("model.vms")
    sys_s = Column[float]("model.vms")
    steal_s = Column[float]("model.vms")
    iowait_s = Column[float]("model.vms")
    idle_s = Column[float]("model.vms")
    cpu_used_mhz_s = Column[float]("model.vms")
    cpu_demand_mhz_s = Column[float]("model.vms")
    cpu_ready_mhz_s = Column[float]("model.vms")
    disk_mb = Column[float]("model.vms")
    net_mb = Column[float]("model.vms")
    swap_io_mb = Column[float]("model.vms")
    cache_mb = Column[float]("model.vms")
    dirty_mb = Column[float]("model.vms")
    read_cache_mb = Column[float]("model.vms")
    read_disk_mb = Column[float]("model.vms")
    writeback_mb = Column[float]("model.vms")
    overhead_mb = Column[float]("model.vms")
    mem_target_mb = Column[float]("model.vms")
    balloon_mb = Column[float]("model.vms")
    hv_swap_mb = Column[float]("model.vms")
    mem_held_mb = Column[float]("model.vms")
    mem_touched_mb = Column[float]("model.vms")
    cache_touched_mb = Column[float]("model.vms")

    def __init__(self, model: CloudModel, name: str, row: int, host: Host) -> None:
        super().__init__(model)
        self.name, self.row, self.host = name, row, host

    def run(self, item: WorkItem) -> WorkItem:
        """Start `item` on this VM now."""
        self.model.start_item(item, self)
        return item

    def __repr__(self) -> str:
        return f"VM({self.name})"


class ChargeTotals:
    """What a work item's readers ask of its charges, from `charged(column)` (a running or stopped item, or an ended
    item's row kept by the layer above)."""

    __slots__ = ()

    def charged(self, column: str) -> float:
        raise NotImplementedError

    @property
    def cputime_s(self) -> float:
        return self.charged("usr_s") + self.charged("sys_s")

    @property
    def steal_s(self) -> float:
        return self.charged("steal_s")

    @property
    def iowait_s(self) -> float:
        return self.charged("iowait_s")


class WorkItem(ChargeTotals, Agent):
    """A unit of guest work: phases run one after another on one VM.

    While it runs, its current phase and its charges live in the item table; when it ends (done or
    killed) the charges are copied to the model's `ended_charges`. `on_finish(item)` is called when the last phase ends.
    """

    # Defaults kept on the class and set on an item only when they differ: a subclass's instances then stay
    # within CPython's shared-key instance layout; past it each attempt holds its own dict (0.8 KB).
    threads = 1.0
    io_mbps_max = math.inf
    name = ""

    def __init__(
        self,
        model: CloudModel,
        phases: Sequence[Phase],
        *,
        threads: float = 1.0,
        mem_mb: float = 0.0,
        mem_active_fraction: float = 1.0,
        io_mbps_max: float = math.inf,
        name: str = "",
        on_finish: Callable[[WorkItem], None] | None = None,
        progress_marks: Sequence[tuple[float, float]] | None = None,
    ) -> None:
        super().__init__(model)
        if threads <= 0:
            raise ValueError(f"work item {name!r}: threads must be > 0, got {threads}")
        if mem_mb < 0:
            raise ValueError(f"work item {name!r}: mem_mb must be >= 0, got {mem_mb}")
        if not 0 <= mem_active_fraction <= 1:
            raise ValueError(f"work item {name!r}: mem_active_fraction must be in [0, 1], got {mem_active_fraction}")
        if name:
            self.name = name
        self.phases: list[Phase] | tuple[EndedPhase, ...] = list(phases)
        self.mem_mb, self.mem_active_fraction = mem_mb, mem_active_fraction
        if threads != 1.0:
            self.threads = threads
        if io_mbps_max != math.inf:
            self.io_mbps_max = io_mbps_max
        self.on_finish = on_finish
        self.progress_marks = list(progress_marks) if progress_marks is not None else None
        self.vm: VM | None = None
        self.row: int | None = None
        self.phase_index = 0
        self.phase_end_s: list[float] | array[float] = []  # an array once it has ended (`settle`)
        self.start_s: float | None = None
        self.end_s: float | None = None
        self.state = ItemState.NEW  # new -> running -> done | killed
        self.ended_row = -1  # its row in the model's `ended_charges` once it has stopped; -1: never ran

    @property
    def phase(self) -> Phase | None:
        return self.phases[self.phase_index] if self.phase_index < len(self.phases) else None

    def charged(self, column: str) -> float:
        """usr_s, sys_s, steal_s, iowait_s, io_mb, read_disk_mb or read_cache_mb charged so far."""
        if self.row is not None:
            return float(self.model.items.view(column)[self.row])
        if self.ended_row < 0:
            return 0.0
        return float(self.model.ended_charges.of(self.ended_row, column))

    @property
    def progress(self) -> float:
        """Progress score in [0, 1]: `progress_marks[i]` = (score at the start, at the end) of phase i, moved
        through linearly with the phase's work (default: equal steps per phase). As of the last tick."""
        if self.row is None:
            return 1.0 if self.state == ItemState.DONE else 0.0
        return float(self.model.item_progress()[self.row])

    def phase_marks(self, index: int) -> tuple[float, float]:
        if self.progress_marks is not None:
            return self.progress_marks[index]
        n = len(self.phases)
        return index / n, (index + 1) / n

    def settle(self) -> None:
        """An ended item becomes its record: the numbers read after its end (times, state, charges, its phases'
        names, their end times as a float array) stay; its plan's phases, progress marks and callback go, and it
        leaves Mesa's agent registry (`model.agents`: the live agents). A long run ends hundreds of thousands of
        items, and their plans were most of its memory (issue 16: 3.6 KB an attempt). Its owner calls this once done
        with the item."""
        if self.row is not None:
            raise RuntimeError(f"{self!r} is still running: only an ended item settles")
        self.phases = ended_plan(self.phases)  # type: ignore[arg-type]
        self.phase_end_s = array("d", self.phase_end_s)  # 8 B a phase, not a float object of 32 and a tuple's 8
        self.progress_marks = None
        self.on_finish = None
        self.remove()

    def kill(self) -> None:
        """Stop now; the work done is lost (the charges stay on record)."""
        if self.state == ItemState.RUNNING:
            self.model.stop_item(self, ItemState.KILLED)

    def __repr__(self) -> str:
        return f"WorkItem({self.name or self.unique_id}, {self.state})"
