"""Task schedulers behind `hadoop_layer.interfaces.TaskScheduler`: one module each, one registry line each."""

from policies.schedulers.capacity import CapacityScheduler, CapacitySettings
from policies.schedulers.fair import FairScheduler, FairSettings
from policies.schedulers.fifo import FifoScheduler

# name -> factory(settings of the scenario); each scheduler's knobs are `--set <name>.*`
SCHEDULERS = {
    "fifo": lambda s: FifoScheduler(),
    "fair": lambda s: FairScheduler(s.fair),
    "capacity": lambda s: CapacityScheduler(s.capacity),
}

__all__ = ["SCHEDULERS", "CapacityScheduler", "CapacitySettings", "FairScheduler", "FairSettings"]
