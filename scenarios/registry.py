"""Named scenarios: one line each.

A scenario's module is imported the first time the scenario is looked up, not when the registry is: `vcloud list`
and `vcloud --help` need only the names and descriptions below, and a run pays for the imports its scenario
needs (Mesa, pandas, the policies' solvers) and no other's. `tests/test_cli.py` checks that each description here
is the scenario's own.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from importlib import import_module
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from scenarios.base import Scenario

# name -> (module, attribute: a Scenario class, or a list of Scenario objects to pick `name` from, description)
ENTRIES: dict[str, tuple[str, str, str]] = {
    "flexslot": ("scenarios.flexslot", "FlexSlot",
                 "a PUMA benchmark on the FlexSlot testbed (30 slaves, 4+2 slots) under static, heterogeneous or DRS"),
    "synthetic-cloud": ("scenarios.synthetic_cloud", "SyntheticCloud",
                        "FlexSlot-sized pool (8 hosts, 32 VMs) running CPU-bound, I/O-bound and phased work loops"),
    "trace-replay": ("scenarios.trace_replay", "TraceReplay",
                     "jobs of a SWIM or Rumen trace (--set trace=PATH replay=durations|physics) on its own cluster"),
    "coupling-single-job": ("scenarios.coupling_experiments", "EXPERIMENTS",
                            "Coupling Table II / Fig 12: one job alone on 7 nodes (--set job=NAME)"),
    "coupling-two-grep": ("scenarios.coupling_experiments", "EXPERIMENTS",
                          "Coupling Figs 1-2: two Grep jobs on 7 nodes; job 2 starves for reduce slots under Fair"),
    "coupling-ten-grep": ("scenarios.coupling_experiments", "EXPERIMENTS",
                          "Coupling Figs 5-6: 10 identical Grep jobs every 5 min on 8 nodes"),
    "coupling-map-only": ("scenarios.coupling_experiments", "EXPERIMENTS",
                          "Coupling Table III: 10 map-only Grep jobs on 15 nodes, input on 7"),
    "coupling-22-jobs": ("scenarios.coupling_experiments", "EXPERIMENTS",
                         "Coupling Table IV: 22 jobs, large then small, on 7 nodes"),
    "coupling-200-jobs": ("scenarios.coupling_experiments", "EXPERIMENTS",
                          "Coupling Fig 16: 200 jobs in 10 batches on 62 nodes"),
    "delay-locality": ("scenarios.coupling_experiments", "EXPERIMENTS",
                       "Coupling Figs 10-11: WordCount, 427 maps, input on 7 of 15 slaves x 4 map slots"),
    "capacity-queues": ("scenarios.scheduler_experiments", "EXPERIMENTS",
                        "Capacity scheduler: queues get their capacity, borrow idle slots up to the maximum, "
                        "user limits"),
    "quincy-locality": ("scenarios.scheduler_experiments", "EXPERIMENTS",
                        "Quincy (none / fair / fair-preemption) vs Fair: locality and cross-rack MB of a mixed "
                        "job stream"),
    "delay-scheduling": ("scenarios.delay_experiments", "DelayScheduling",
                         "Delay Scheduling (EuroSys 2010) Sec. 5 IO-heavy: 100 text-search jobs in Facebook size "
                         "bins"),
    "samr-heterogeneous": ("scenarios.samr_experiments", "SamrHeterogeneous",
                           "SAMR Fig. 9: Sort or WordCount on slow and fast nodes; compare "
                           "speculation=hadoop/late/samr"),
}  # fmt: skip
DEFAULT_SCENARIO = "flexslot"


class Registry(Mapping[str, "Scenario"]):
    """The scenarios by name, each built (and its module imported) when first looked up."""

    def __init__(self, entries: dict[str, tuple[str, str, str]]) -> None:
        self._entries = entries
        self._built: dict[str, Scenario] = {}

    def __getitem__(self, name: str) -> Scenario:
        if name not in self._built:
            module, attribute, _ = self._entries[name]  # KeyError for an unknown name, as a dict
            # Mesa first, from this shallow stack: Mesa 3.5 names its module loggers at import with `inspect.stack()`
            # (mesa/mesa_logging.py), which reads every frame of the importing stack and, for each frame of the import
            # machinery, scans all loaded modules. From deep in a scenario's import chain (hadoop_layer.tasks, six
            # modules down) that was 0.50 G of the 6.45 G instructions of importing `flexslot` (~0.2 s).
            import_module("mesa")
            found = getattr(import_module(module), attribute)
            self._built[name] = next(s for s in found if s.name == name) if isinstance(found, list) else found()
        return self._built[name]

    def __iter__(self) -> Iterator[str]:
        return iter(self._entries)

    def __len__(self) -> int:
        return len(self._entries)

    def __contains__(self, name: object) -> bool:
        return name in self._entries

    def description(self, name: str) -> str:
        """The one-line description `vcloud list` prints, without importing the scenario."""
        return self._entries[name][2]


SCENARIOS = Registry(ENTRIES)
