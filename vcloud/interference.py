"""Background tenants: synthetic load on VMs that share hosts with the cluster under study.

A load profile drives a never-ending LOAD work item: it sets the item's CPU demand (as a fraction of
the VM's vCPUs) and disk demand (MB/s), and schedules its own next change as a model event, so the
hot path never looks at profiles.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    from vcloud.agents import WorkItem
    from vcloud.model import CloudModel


class LoadProfile(ABC):
    """Levels over time: `level(t, rng)` -> (cpu fraction of vCPUs, disk MB/s), and when they change."""

    @abstractmethod
    def level(self, t: float, rng: np.random.Generator) -> tuple[float, float]: ...

    def next_change(self, t: float) -> float | None:
        """Time of the next change after `t`, or None if the level never changes again."""
        return None


@dataclass(frozen=True)
class ConstantLoad(LoadProfile):
    cpu: float = 0.5
    disk_mbps: float = 0.0

    def level(self, t: float, rng: np.random.Generator) -> tuple[float, float]:
        return self.cpu, self.disk_mbps


@dataclass(frozen=True)
class PeriodicLoad(LoadProfile):
    """Square wave: `high` for duty x period, then `low` (a batch tenant with a daily-ish cycle)."""

    period_s: float = 600.0
    duty: float = 0.5
    high: float = 1.0
    low: float = 0.1
    disk_mbps_high: float = 0.0

    def _on(self, t: float) -> bool:
        return (t % self.period_s) < self.duty * self.period_s

    def level(self, t: float, rng: np.random.Generator) -> tuple[float, float]:
        return (self.high, self.disk_mbps_high) if self._on(t) else (self.low, 0.0)

    def next_change(self, t: float) -> float:
        start = t - (t % self.period_s)
        edge = start + self.duty * self.period_s
        return edge if t < edge else start + self.period_s


@dataclass(frozen=True)
class RandomLoad(LoadProfile):
    """A new level drawn uniformly from [low, high] every `interval_s` (seeded by the model)."""

    interval_s: float = 60.0
    low: float = 0.0
    high: float = 1.0
    disk_mbps_max: float = 0.0

    def level(self, t: float, rng: np.random.Generator) -> tuple[float, float]:
        return float(rng.uniform(self.low, self.high)), float(rng.uniform(0.0, self.disk_mbps_max))

    def next_change(self, t: float) -> float:
        return (np.floor(t / self.interval_s) + 1) * self.interval_s


@dataclass(frozen=True)
class TraceLoad(LoadProfile):
    """Piecewise-constant levels from a trace: at `times_s[k]` the load becomes `cpu[k]`, `disk_mbps[k]`."""

    times_s: tuple[float, ...] = (0.0,)
    cpu: tuple[float, ...] = (0.5,)
    disk_mbps: tuple[float, ...] = field(default=())

    def __post_init__(self) -> None:
        if len(self.times_s) != len(self.cpu) or (self.disk_mbps and len(self.disk_mbps) != len(self.cpu)):
            raise ValueError("trace load: times_s, cpu and disk_mbps must have the same length")
        if list(self.times_s) != sorted(self.times_s):
            raise ValueError("trace load: times_s must be increasing")

    def level(self, t: float, rng: np.random.Generator) -> tuple[float, float]:
        k = max(int(np.searchsorted(self.times_s, t, side="right")) - 1, 0)
        return self.cpu[k], (self.disk_mbps[k] if self.disk_mbps else 0.0)

    def next_change(self, t: float) -> float | None:
        k = int(np.searchsorted(self.times_s, t, side="right"))
        return self.times_s[k] if k < len(self.times_s) else None


class LoadDriver:
    """Applies a profile to one LOAD item, rescheduling itself at each change."""

    def __init__(self, model: CloudModel, item: WorkItem, profile: LoadProfile) -> None:
        self.model, self.item, self.profile = model, item, profile
        self.apply()

    def apply(self) -> None:
        if self.item.row is None:
            return
        t = float(self.model.time)
        cpu, disk = self.profile.level(t, self.model.rng)
        vcpus = self.item.vm.vcpus
        core = self.item.vm.host.core_mhz
        self.model.items.load_cpu_mhz[self.item.row] = max(cpu, 0.0) * vcpus * core
        self.model.items.load_disk_mbps[self.item.row] = max(disk, 0.0)
        nxt = self.profile.next_change(t)
        if nxt is not None:
            self.model.schedule_event(self.apply, at=float(nxt))
