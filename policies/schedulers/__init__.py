"""Task schedulers behind `hadoop_layer.interfaces.TaskScheduler`: one module each, one registry line each."""

from policies.registry import Entry
from policies.schedulers.capacity import CapacityScheduler, CapacitySettings
from policies.schedulers.coupling import CouplingScheduler, CouplingSettings
from policies.schedulers.fair import FairScheduler, FairSettings
from policies.schedulers.fifo import FifoScheduler
from policies.schedulers.quincy import QuincyScheduler, QuincySettings

# name -> how to make it; each scheduler's knobs are `--set <name>.*` (policies/registry.py)
SCHEDULERS: dict[str, Entry] = {
    "fifo": Entry(lambda _: FifoScheduler()),
    "fair": Entry(FairScheduler, FairSettings),
    "capacity": Entry(CapacityScheduler, CapacitySettings),
    "coupling": Entry(CouplingScheduler, CouplingSettings),
    "quincy": Entry(QuincyScheduler, QuincySettings),
}

__all__ = [
    "SCHEDULERS", "CapacityScheduler", "CapacitySettings", "CouplingScheduler", "CouplingSettings", "FairScheduler",
    "FairSettings", "QuincyScheduler", "QuincySettings",
]  # fmt: skip
