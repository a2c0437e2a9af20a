"""A finished run as `vcloud reproduce`'s entries read it: its summary and tables, not the model.

A model is ~40 MB in memory (a full-scale flexslot run; 85 MB pickled for Coupling's 200 jobs), and the report
kept every one it made: 5.3 GB at the end of the full report. What the entries read of a run (the scenario's
summary, the tasks and VM tables, a few policy counters) is ~1 MB, made where the run ran, so that only this
crosses back from a worker (plain pickle: no lambdas or deep object graphs) and the model is freed there.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

import pandas as pd

from hadoop_layer.model import HadoopModel
from scenarios import flexslot
from scenarios.registry import SCENARIOS


@dataclass(frozen=True)
class Finished:
    """What the report keeps of a run."""

    scenario: str
    settings: Any  # the model's (validated) settings
    summary: dict[str, Any]  # the scenario's summary, as `vcloud run` writes summary.json
    tasks: pd.DataFrame  # tasks_frame(): one row per attempt
    vm_trace: pd.DataFrame  # per VM and sample: FlexSlot Fig 12's utilization, a co-located run's neighbour
    pool_capacity: tuple[float, float]  # CPU MHz and memory MB of the resource pool
    kills: tuple[int, ...]  # FlexSlot's Algorithm 1: kills of each straggler it killed (empty for other managers)
    pilot_maps: flexslot.PilotMaps | None  # a static flexslot run's maps, for a Heter. cluster planned from it
    cpu_s: float  # CPU seconds of the run and of this record, in the process that made them

    @classmethod
    def of(cls, scenario: str, model: HadoopModel, started_cpu_s: float | None = None) -> Finished:
        """The record of `model`, a finished run of `scenario`; `started_cpu_s`: process_time() before it was built."""
        s = model.settings
        fields = {
            "summary": SCENARIOS[scenario].summary(model),
            "tasks": model.tasks_frame(),
            "vm_trace": model.vm_trace(),
            "pool_capacity": model.pool_capacity(),
            "kills": tuple(getattr(model.jobtracker.slot_manager, "kill_count", {}).values()),
            "pilot_maps": flexslot.maps_of(model) if scenario == "flexslot" and s.allocator == "static" else None,
        }
        cpu_s = 0.0 if started_cpu_s is None else time.process_time() - started_cpu_s
        return cls(scenario=scenario, settings=s, **fields, cpu_s=cpu_s)
