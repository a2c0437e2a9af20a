"""Task schedulers behind `hadoop_layer.interfaces.TaskScheduler`: one module each, one registry line each."""

from policies.schedulers.capacity import CapacityScheduler, CapacitySettings
from policies.schedulers.coupling import CouplingScheduler, CouplingSettings
from policies.schedulers.fair import FairScheduler, FairSettings
from policies.schedulers.fifo import FifoScheduler
from policies.schedulers.quincy import QuincyScheduler, QuincySettings

# name -> factory(settings of the scenario); each scheduler's knobs are `--set <name>.*`
SCHEDULERS = {
    "fifo": lambda s: FifoScheduler(),
    "fair": lambda s: FairScheduler(s.fair),
    "capacity": lambda s: CapacityScheduler(s.capacity),
    "coupling": lambda s: CouplingScheduler(s.coupling),
    "quincy": lambda s: QuincyScheduler(s.quincy),
}

__all__ = [
    "SCHEDULERS", "CapacityScheduler", "CapacitySettings", "CouplingScheduler", "CouplingSettings", "FairScheduler",
    "FairSettings", "QuincyScheduler", "QuincySettings",
]  # fmt: skip
