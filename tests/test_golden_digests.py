"""Golden digests: three small seeded runs whose output tables must not change unless the physics does.

A refactor or a speed change must keep every number: the sha256 of each run's tables (`tasks`, `jobs`,
`vm_trace`, rows sorted, written as CSV with every float in full) is compared with `golden_digests.json`.
The runs cover FlexSlot's restarts and slot moves, LATE and SAMR backups, SkewTune's repartition, task
failures, the job lifecycle, the Fair and Capacity schedulers, DRS, and both shuffle modes.

When a change is *meant* to move numbers (new physics, a bug fix), rewrite the file deliberately:

    VCLOUD_UPDATE_GOLDEN=1 .venv/bin/python -m pytest tests/test_golden_digests.py

and say in the commit message why the numbers moved. Never update them to make a refactor pass.
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

from scenarios.registry import SCENARIOS
from scenarios.runner import run_model
from scenarios.settings import validate

GOLDEN = Path(__file__).with_name("golden_digests.json")
UPDATE = os.environ.get("VCLOUD_UPDATE_GOLDEN") == "1"

# name -> (scenario, settings, seed); each well under 2 s
FLEXSLOT = {"scale": 0.05, "benchmark": "tera-sort", "allocator": "drs", "slot_manager": "flexslot-unlimited"}
FAIR = {"slot_manager": "skewtune", "hadoop.shuffle_serving": False, "hadoop.job_setup_cleanup": True}
RUNS: dict[str, tuple[str, dict[str, Any], int]] = {
    "flexslot-unlimited-late-drs": (
        "flexslot",
        {**FLEXSLOT, "speculation": "late", "flexslot.min_runtime_s": 5, "late.min_runtime_s": 10},
        3,
    ),
    "coupling-fair-skewtune-failures": (
        "coupling-two-grep",
        {
            **FAIR,
            "hadoop.task_failure_probability": 0.05,
            "skewtune.min_elapsed_s": 5,
            "skewtune.repartition_overhead_s": 2,
        },
        2,
    ),
    "samr-capacity": (
        "samr-heterogeneous",
        {"input_gb": 3, "speculation": "samr", "scheduler": "capacity", "samr.min_runtime_s": 5},
        1,
    ),
}
SORT_KEYS = {"tasks": ["attempt"], "jobs": ["job"], "vm_trace": ["time_s", "vm"]}


def table_digest(name: str, frame: pd.DataFrame) -> str:
    """sha256 of a canonical CSV: rows sorted by the table's key, floats in full (shortest round-trip repr)."""
    rows = frame.sort_values(SORT_KEYS[name], kind="mergesort").reset_index(drop=True)
    return hashlib.sha256(rows.to_csv(index=False, lineterminator="\n").encode()).hexdigest()


def run_digests(scenario_name: str, settings: dict[str, Any], seed: int) -> dict[str, str]:
    scenario = SCENARIOS[scenario_name]
    model = scenario.build(validate(scenario.Settings, settings), seed)
    run_model(model, scenario.horizon_s(model), progress=False, stops_itself=scenario.stops_itself)
    return {name: table_digest(name, frame) for name, frame in sorted(scenario.frames(model).items())}


@pytest.mark.parametrize("run", sorted(RUNS))
def test_seeded_runs_give_the_committed_tables(run):
    found = run_digests(*RUNS[run])
    golden = json.loads(GOLDEN.read_text()) if GOLDEN.exists() else {}
    if UPDATE:
        golden[run] = found
        GOLDEN.write_text(json.dumps(dict(sorted(golden.items())), indent=1) + "\n")
    assert run in golden, f"no digests for {run}: VCLOUD_UPDATE_GOLDEN=1 writes them (say why in the commit)"
    assert found == golden[run], f"{run}: the tables changed (see this module's docstring before updating)"
