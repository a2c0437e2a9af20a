"""docs/policies.md's recipe, followed: a toy speculation policy and a toy slot manager, each one new module in
`policies/` plus one registry line (and its import), in a copy of the code base; nothing else is edited, and
`vcloud run --set` runs them with their knobs."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pandas as pd

from scenarios.registry import SCENARIOS
from scenarios.runner import run_model
from scenarios.settings import validate

ROOT = Path(__file__).resolve().parents[1]

OLDEST_FIRST = '''"""A toy speculation policy: back up the running map that started first, one backup at a time."""

from hadoop_layer.interfaces import ClusterView, Launch, SpeculationPolicy
from hadoop_layer.tasks import TaskKind, TaskState


class OldestFirst(SpeculationPolicy):
    name = "oldest-first"

    def backups(self, tracker, cluster: ClusterView, free_maps: int, free_reduces: int) -> list[Launch]:
        if free_maps <= 0 or any(a.speculative for t in cluster.trackers for a in t.running[TaskKind.MAP]):
            return []
        running = [t for j in cluster.jobs for t in j.running_tasks[TaskKind.MAP]]
        candidates = [t for t in running if t.state == TaskState.RUNNING and tracker.node not in t.nodes_tried]
        if not candidates:
            return []
        task = min(candidates, key=lambda t: t.start_s)
        return [Launch(task, cluster.locality(task, tracker), speculative=True)]
'''

GROW = '''"""A toy slot manager: every period, each tracker gets one more map slot, up to `max_map_slots`."""

from pydantic import BaseModel, ConfigDict, Field

from hadoop_layer.interfaces import ClusterView, SetSlots, SlotAction, SlotManager


class GrowSettings(BaseModel):
    model_config = ConfigDict(extra="forbid")
    period_s: float = Field(10.0, gt=0, description="how often slots grow")
    max_map_slots: int = Field(3, ge=1, le=64, description="no tracker grows beyond this")


class GrowSlots(SlotManager):
    name = "grow"

    def __init__(self, settings: GrowSettings) -> None:
        self.settings, self.period_s = settings, settings.period_s

    def adjust(self, cluster: ClusterView) -> list[SlotAction]:
        top = self.settings.max_map_slots
        return [SetSlots(t, map_slots=t.map_slots + 1) for t in cluster.trackers if t.map_slots < top]
'''


def add_line(path: Path, after: str, line: str) -> None:
    """Put `line` after the first line that starts with `after` (a registry's opening line)."""
    lines = path.read_text().splitlines(keepends=True)
    i = next(k for k, text in enumerate(lines) if text.startswith(after))
    lines.insert(i + 1, line + "\n")
    path.write_text("".join(lines))


def _warm_kernels(settings: dict) -> None:
    """Load (or compile) the compiled kernels the scenario calls into this checkout's numba cache, which the copy
    takes along (`copytree` keeps the sources' times, which the cache checks): a copy without it compiled every
    kernel again, ~90 s of the suite."""
    scenario = SCENARIOS["samr-heterogeneous"]
    model = scenario.build(validate(scenario.Settings, settings), seed=1)
    run_model(model, scenario.horizon_s(model), progress=False)


def test_a_new_speculation_policy_and_slot_manager_are_a_module_and_a_registry_line_each(tmp_path):
    _warm_kernels({"input_gb": 2, "slaves": 4, "slow_nodes": 1})
    copy = tmp_path / "repo"
    for package in ("vcloud", "hadoop_layer", "policies", "scenarios"):  # the numba cache too, not the bytecode
        shutil.copytree(ROOT / package, copy / package, ignore=shutil.ignore_patterns("*.pyc"))
    (copy / "policies/speculation/oldest.py").write_text(OLDEST_FIRST)
    (copy / "policies/slots/grow.py").write_text(GROW)
    speculation, slots = copy / "policies/speculation/__init__.py", copy / "policies/slots/__init__.py"
    add_line(speculation, "from policies.registry import", "from policies.speculation.oldest import OldestFirst")
    add_line(speculation, "SPECULATION: dict", '    "oldest-first": Entry(lambda _: OldestFirst()),')
    add_line(slots, "from policies.registry import", "from policies.slots.grow import GrowSettings, GrowSlots")
    add_line(slots, "SLOT_MANAGERS: dict", '    "grow": Entry(GrowSlots, GrowSettings),')

    out = tmp_path / "run"
    settings = ["input_gb=2", "slaves=4", "slow_nodes=1", "speculation=oldest-first", "slot_manager=grow",
                "grow.period_s=2", "grow.max_map_slots=4"]  # fmt: skip
    env = {**os.environ, "PYTHONPATH": str(copy)}
    cmd = [sys.executable, "-m", "scenarios.cli", "run", "samr-heterogeneous", "--set", *settings, "--out", str(out)]
    done = subprocess.run([*cmd, "--quiet"], cwd=copy, env=env, capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr

    config = json.loads((out / "config.json").read_text())["settings"]
    assert config["speculation"] == "oldest-first" and config["grow"] == {"period_s": 2.0, "max_map_slots": 4}
    tasks = pd.read_parquet(out / "tasks.parquet")
    assert tasks.speculative.any()  # the toy policy backed up a map
    maps = tasks[tasks.kind == "m"]
    starts = maps.assign(step=1)[["vm", "start_s", "step"]].rename(columns={"start_s": "t"})
    ends = maps.assign(step=-1)[["vm", "end_s", "step"]].rename(columns={"end_s": "t"})
    events = pd.concat([starts, ends]).sort_values(["vm", "t", "step"])
    assert events.groupby("vm").step.cumsum().max() > 2  # more maps at once than the 2 configured slots
