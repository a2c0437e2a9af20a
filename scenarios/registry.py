"""Named scenarios: one line each; and a user's own, by the path of its file (docs/own-scenario.md).

A scenario's module is imported the first time the scenario is looked up, not when the registry is: `vcloud list`
and `vcloud --help` need only the names and descriptions below, and a run pays for the imports its scenario
needs (Mesa, pandas, the policies' solvers) and no other's. `tests/test_cli.py` checks that each description here
is the scenario's own.

A key that ends in `.py` and names a file is a scenario of the user's (`vcloud run my_scenario.py`): the file is
imported as a module, and its scenario is its `SCENARIO` (a `Scenario` object or class), else the one `Scenario`
class it defines. Such a key is kept as the file's absolute path (`SCENARIOS.key`), so a run's config.json and a
sweep's workers find it again from anywhere.
"""

from __future__ import annotations

import hashlib
import importlib.util
import inspect
import sys
from collections.abc import Iterator, Mapping
from importlib import import_module
from pathlib import Path
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
    "job-mix": ("scenarios.job_mix", "JobMix",
                "your own jobs from a TOML or CSV file (--set jobs=PATH: profile, input, arrival) on the testbed"),
}  # fmt: skip
DEFAULT_SCENARIO = "flexslot"


class ScenarioFileError(ValueError):
    """A scenario file that cannot be run: one line naming the file."""


def is_scenario_file(name: str) -> bool:
    """A user's scenario: the path of a Python file."""
    try:
        return name.endswith(".py") and Path(name).is_file()
    except OSError:  # a name longer than the system allows
        return False


def load_scenario_file(path: str) -> Scenario:
    """The scenario a user's file defines (its `SCENARIO`, else its one concrete `Scenario` class), the file
    imported as a module of its own (kept in `sys.modules`, so its classes pickle by reference in a sweep)."""
    from scenarios.base import Scenario

    digest = hashlib.sha256(path.encode()).hexdigest()[:12]
    module_name = f"vcloud_user_scenario_{Path(path).stem}_{digest}"
    if module_name not in sys.modules:
        spec = importlib.util.spec_from_file_location(module_name, path)
        if spec is None or spec.loader is None:
            raise ScenarioFileError(f"scenario {path}: not a Python file")
        module = importlib.util.module_from_spec(spec)
        sys.modules[module_name] = module
        try:
            spec.loader.exec_module(module)
        except Exception as exc:
            del sys.modules[module_name]
            raise ScenarioFileError(f"scenario {path}: importing it failed: {type(exc).__name__}: {exc}") from exc
    module = sys.modules[module_name]
    found = getattr(module, "SCENARIO", None)
    if found is None:
        defined = [c for c in vars(module).values() if inspect.isclass(c) and issubclass(c, Scenario)
                   and c.__module__ == module_name and not inspect.isabstract(c)]  # fmt: skip
        if len(defined) != 1:
            what = "no Scenario class" if not defined else f"{len(defined)} Scenario classes"
            raise ScenarioFileError(f"scenario {path}: defines {what} (name one SCENARIO = ...)")
        found = defined[0]
    scenario = found() if inspect.isclass(found) else found
    if not isinstance(scenario, Scenario):
        raise ScenarioFileError(f"scenario {path}: SCENARIO is not a Scenario (a subclass of scenarios.base.Scenario)")
    return scenario


class Registry(Mapping[str, "Scenario"]):
    """The scenarios by name, each built (and its module imported) when first looked up; and users' scenario
    files by path."""

    def __init__(self, entries: dict[str, tuple[str, str, str]]) -> None:
        self._entries = entries
        self._built: dict[str, Scenario] = {}

    def key(self, name: str) -> str:
        """How a scenario is known in what a run writes: its name, or its file's absolute path."""
        return str(Path(name).resolve()) if name not in self._entries and is_scenario_file(name) else name

    def __getitem__(self, name: str) -> Scenario:
        if name not in self._entries and is_scenario_file(name):
            name = self.key(name)
            if name not in self._built:
                self._built[name] = load_scenario_file(name)
            return self._built[name]
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
        return name in self._entries or (isinstance(name, str) and is_scenario_file(name))

    def description(self, name: str) -> str:
        """The one-line description `vcloud list` prints, without importing the scenario."""
        return self._entries[name][2]


SCENARIOS = Registry(ENTRIES)
