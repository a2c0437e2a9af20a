"""Guest work: what a VM runs, described without any knowledge of Hadoop.

A work item is a sequence of phases. A phase advances in *units* of progress and needs, per unit, some
CPU megacycles and some MB on I/O streams (a datastore or a NIC, its own host's or another's). All of a
phase's needs are served at once and the phase advances at one rate, set by its bottleneck (SimGrid's
`ptask_L07` model of a parallel task; reference/algorithms.md 10.2): a program that streams its input
while it computes is one phase, not a read followed by a compute. What the phase cannot use of its other
resources in a tick goes to other work (`engine.py`, stage `pipeline`).

The single-resource kinds (CPU, DISK_READ, DISK_WRITE, NET) are phases with one need of 1 per unit; WAIT
advances one unit per second and needs nothing; LOAD is a background tenant's never-ending demand.
Guest accounting follows the bottleneck: the share of a tick that CPU bounds the thread counts as
runnable (CPU or steal), the share that I/O bounds it as blocked (iowait).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from enum import IntEnum, StrEnum
from functools import lru_cache


class ItemState(StrEnum):
    """A work item's life: new -> running -> done | killed (a layer above may also end one failed)."""

    NEW = "new"
    RUNNING = "running"
    DONE = "done"
    KILLED = "killed"
    FAILED = "failed"


class Kind(IntEnum):
    """What a phase is made of. Stored as int8 in the item table."""

    CPU = 0  # amount: megacycles; rate: MHz granted to the item's threads
    DISK_READ = 1  # amount: MB from the host's datastore
    DISK_WRITE = 2  # amount: MB to the host's datastore
    NET = 3  # amount: MB through the host's NIC (remote read/write)
    WAIT = 4  # amount: seconds (sleep, wait for a peer); consumes nothing
    LOAD = 5  # background tenant: steady CPU/disk demand set by a load profile; never completes
    PIPE = 6  # amount: units; per unit `cpu_per_unit` megacycles and each stream's MB, all at once


DISK_KINDS = (Kind.DISK_READ, Kind.DISK_WRITE)


class Device(IntEnum):
    DISK = 0  # a host's datastore
    NIC = 1  # a host's network interface
    UPLINK = 2  # the rack switch's link to the core, out of the rack of the VM's host (Physics.rack_oversubscription)
    DOWNLINK = 3  # the same link, into that rack (full duplex: each direction has the uplink's bandwidth)


@dataclass(frozen=True, slots=True)
class Stream:
    """`mb_per_unit` MB through `device` of the host of VM row `vm` (-1: the item's own VM) per unit of progress.

    A stream on another VM's host is work done there for this item (a storage daemon serving a block, a
    replica's disk in a write pipeline): it loads that host's device and shows in that VM's disk, network and iowait,
    not in this item's charges. `write` marks data written; `file` names the file the page cache keeps."""

    device: Device
    mb_per_unit: float = 1.0
    vm: int = -1
    write: bool = False
    file: int = -1  # datastore streams: the file (vcloud/pagecache.py) read or written through the page cache

    def __init__(self, device: Device, mb_per_unit: float = 1.0, vm: int = -1, write: bool = False, file: int = -1):
        """The dataclass's fields, checked, set through their slots: a frozen dataclass's own `__init__` sets each
        through `object.__setattr__` and then calls `__post_init__`, twice the time (task plans make streams at every
        launch)."""
        if not (mb_per_unit >= 0 and math.isfinite(mb_per_unit)):
            raise ValueError(f"stream mb_per_unit must be finite and >= 0, got {mb_per_unit}")
        _STREAM_SLOTS[0](self, device)
        _STREAM_SLOTS[1](self, mb_per_unit)
        _STREAM_SLOTS[2](self, vm)
        _STREAM_SLOTS[3](self, write)
        _STREAM_SLOTS[4](self, file)

    def scaled(self, factor: float) -> Stream:
        """This stream with `factor` times its MB per unit: `dataclasses.replace(self, mb_per_unit=...)`, without its
        look at every field."""
        return Stream(self.device, self.mb_per_unit * factor, self.vm, self.write, self.file)


_STREAM_SLOTS = tuple(getattr(Stream, f).__set__ for f in Stream.__slots__)  # the fields' slot setters, in order


def disk(mb_per_unit: float = 1.0, vm: int = -1, write: bool = False, file: int = -1) -> Stream:
    return Stream(Device.DISK, mb_per_unit, vm, write, file)


@lru_cache(maxsize=4096, typed=True)
def _link(device: Device, mb_per_unit: float, vm: int) -> Stream:
    """A stream of no file (a NIC, a rack link): streams are frozen, and these are few per run (a device of each VM
    at one or two rates), so each is made once. Task plans make them at every launch."""
    return Stream(device, mb_per_unit, vm)


def _link_of(device: Device, mb_per_unit: float, vm: int) -> Stream:
    # a zero rate is made anew: 0.0 and -0.0 are one key of the cache
    return _link(device, mb_per_unit, vm) if mb_per_unit > 0 else Stream(device, mb_per_unit, vm)


def nic(mb_per_unit: float = 1.0, vm: int = -1) -> Stream:
    return _link_of(Device.NIC, mb_per_unit, vm)


def rack_hop(mb_per_unit: float, from_vm: int = -1, to_vm: int = -1) -> list[Stream]:
    """A transfer between two racks: out through the rack uplink of `from_vm`'s host, in through `to_vm`'s."""
    return [_link_of(Device.UPLINK, mb_per_unit, from_vm), _link_of(Device.DOWNLINK, mb_per_unit, to_vm)]


_READ, _WRITE, _NET = (disk(),), (disk(write=True),), (nic(),)  # the streams of the one-resource kinds (frozen)


@dataclass(frozen=True, slots=True)
class Phase:
    """One step of a work item. `sys_fraction` of its CPU time is counted as sys rather than usr.

    An `open` phase may be given more work while it runs (`CloudModel.add_work`) and only ends once it is
    closed (`CloudModel.close_phase`) with nothing left: a consumer fed by producers, such as a queue server.
    While it has nothing to do it waits without demanding anything.
    """

    name: str
    kind: Kind
    amount: float
    sys_fraction: float = 0.0
    open: bool = False
    cpu_per_unit: float = 0.0  # PIPE: megacycles per unit
    streams: tuple[Stream, ...] = ()  # PIPE: I/O per unit

    def __init__(
        self,
        name: str,
        kind: Kind,
        amount: float,
        sys_fraction: float = 0.0,
        open: bool = False,
        cpu_per_unit: float = 0.0,
        streams: tuple[Stream, ...] = (),
    ) -> None:
        """The fields, checked, set through their slots (as `Stream.__init__`: plans make phases at every launch)."""
        if not (amount >= 0 and math.isfinite(amount)):
            raise ValueError(f"phase {name!r}: amount must be finite and >= 0, got {amount}")
        if not 0.0 <= sys_fraction <= 1.0:
            raise ValueError(f"phase {name!r}: sys_fraction must be in [0, 1], got {sys_fraction}")
        if kind == Kind.PIPE and not cpu_per_unit > 0:
            for s in streams:  # (a loop, not any() of a generator: most of the check's time)
                if s.mb_per_unit > 0:
                    break
            else:
                raise ValueError(f"phase {name!r}: a pipelined phase needs CPU or I/O per unit")
        if not (cpu_per_unit >= 0 and math.isfinite(cpu_per_unit)):
            raise ValueError(f"phase {name!r}: cpu_per_unit must be finite and >= 0, got {cpu_per_unit}")
        slots = _PHASE_SLOTS
        slots[0](self, name)
        slots[1](self, kind)
        slots[2](self, amount)
        slots[3](self, sys_fraction)
        slots[4](self, open)
        slots[5](self, cpu_per_unit)
        slots[6](self, streams)

    def needs(self) -> tuple[float, tuple[Stream, ...]]:
        """(megacycles per unit, streams per unit): every kind but WAIT and LOAD in one form."""
        kind = self.kind
        if kind == Kind.PIPE:
            return self.cpu_per_unit, self.streams
        if kind == Kind.CPU:
            return 1.0, ()
        if kind == Kind.DISK_READ:
            return 0.0, _READ
        if kind == Kind.DISK_WRITE:
            return 0.0, _WRITE
        if kind == Kind.NET:
            return 0.0, _NET
        return 0.0, ()

    @classmethod
    def cpu(cls, name: str, megacycles: float, sys_fraction: float = 0.0) -> Phase:
        return cls(name, Kind.CPU, megacycles, sys_fraction)

    @classmethod
    def read(cls, name: str, mb: float) -> Phase:
        return cls(name, Kind.DISK_READ, mb)

    @classmethod
    def write(cls, name: str, mb: float) -> Phase:
        return cls(name, Kind.DISK_WRITE, mb)

    @classmethod
    def net(cls, name: str, mb: float, open: bool = False) -> Phase:
        return cls(name, Kind.NET, mb, open=open)

    @classmethod
    def wait(cls, name: str, seconds: float) -> Phase:
        return cls(name, Kind.WAIT, seconds)

    @classmethod
    def pipe(
        cls,
        name: str,
        units: float,
        cpu_per_unit: float,
        streams: tuple[Stream, ...] | list[Stream] = (),
        sys_fraction: float = 0.0,
    ) -> Phase:
        """A pipelined phase: `units` of progress, each needing `cpu_per_unit` megacycles and each stream's MB.
        Streams on the same device of the same VM, file and direction are merged."""
        kept = tuple(streams)
        if len(kept) > 1 or (kept and not kept[0].mb_per_unit > 0):  # (one stream of some MB: nothing to do)
            kept = _merged(kept)
        return cls(name, Kind.PIPE, units, sys_fraction, False, cpu_per_unit, kept)


_PHASE_SLOTS = tuple(getattr(Phase, f).__set__ for f in Phase.__slots__)


def _merged(streams: tuple[Stream, ...]) -> tuple[Stream, ...]:
    """`Phase.pipe`'s streams: empty ones dropped (a phase's second write when it has none), those on the same device
    of the same VM, file and direction merged in order of first appearance (their MB summed in order). A stream with
    nothing to merge is kept as it is (the merge would make an equal one: 0.0 + x == x). This runs at every task
    launch: most plans' streams have nothing to merge, found in one pass."""
    seen: dict[tuple[Device, int, bool, int], Stream] = {}
    for s in streams:
        if s.mb_per_unit > 0:
            key = (s.device, s.vm, s.write, s.file)
            if key in seen:
                break
            seen[key] = s
    else:
        return tuple(seen.values())
    groups: dict[tuple[Device, int, bool, int], list] = {}  # key: [first stream, MB summed, merged?]
    for s in streams:
        mb = s.mb_per_unit
        if mb > 0:
            key = (s.device, s.vm, s.write, s.file)
            group = groups.get(key)
            if group is None:
                groups[key] = [s, 0.0 + mb, False]
            else:
                group[1] += mb
                group[2] = True
    return tuple(Stream(s.device, mb, s.vm, s.write, s.file) if merged else s for s, mb, merged in groups.values())


@dataclass(frozen=True, slots=True)
class EndedPhase:
    """What an ended work item keeps of a phase: its name (`WorkItem.settle`). Shared: one per name."""

    name: str


_ENDED_PLANS: dict[tuple[str, ...], tuple[EndedPhase, ...]] = {}
_ENDED_PHASES: dict[str, EndedPhase] = {}


def ended_plan(phases: list[Phase]) -> tuple[EndedPhase, ...]:
    """The names of a plan's phases as one shared tuple per sequence of names: the thousands of ended items of a
    long run that ran the same plan shape hold one tuple between them."""
    names = tuple([p.name for p in phases])
    found = _ENDED_PLANS.get(names)
    if found is None:
        found = tuple(_ENDED_PHASES.setdefault(n, EndedPhase(n)) for n in names)
        if len(_ENDED_PLANS) < 100_000:  # plan shapes are few; never let a pathological run grow this unbounded
            _ENDED_PLANS[names] = found
    return found
