"""Guest work: what a VM runs, described without any knowledge of Hadoop.

A work item is a sequence of phases. Each phase needs one resource: CPU megacycles, local disk MB
(read or write), network MB, or a plain wait. Real programs overlap CPU and I/O inside a phase; here
the layer above (Hadoop) expresses overlap by splitting its work into alternating phases. Keeping
phases single-resource makes the tick exact (no coupled allocation inside a VM) and the guest
accounting unambiguous: a thread in a CPU phase is runnable, a thread in an I/O phase is blocked.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from enum import IntEnum


class Kind(IntEnum):
    """Which resource a phase consumes. Stored as int8 in the item table."""

    CPU = 0  # amount: megacycles; rate: MHz granted to the item's threads
    DISK_READ = 1  # amount: MB from the host's datastore
    DISK_WRITE = 2  # amount: MB to the host's datastore
    NET = 3  # amount: MB through the host's NIC (remote read/write)
    WAIT = 4  # amount: seconds (sleep, wait for a peer); consumes nothing
    LOAD = 5  # background tenant: steady CPU/disk demand set by a load profile; never completes


DISK_KINDS = (Kind.DISK_READ, Kind.DISK_WRITE)


@dataclass(frozen=True, slots=True)
class Phase:
    """One step of a work item. `sys_fraction` of its CPU time is counted as sys rather than usr.

    An `open` phase may be given more work while it runs (`CloudModel.add_work`) and only ends once it is
    closed (`CloudModel.close_phase`) with nothing left: a consumer fed by producers, such as a shuffle.
    While it has nothing to do it waits without demanding anything.
    """

    name: str
    kind: Kind
    amount: float
    sys_fraction: float = 0.0
    open: bool = False

    def __post_init__(self) -> None:
        if not (self.amount >= 0 and math.isfinite(self.amount)):
            raise ValueError(f"phase {self.name!r}: amount must be finite and >= 0, got {self.amount}")
        if not 0.0 <= self.sys_fraction <= 1.0:
            raise ValueError(f"phase {self.name!r}: sys_fraction must be in [0, 1], got {self.sys_fraction}")

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
