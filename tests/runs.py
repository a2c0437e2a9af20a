"""Seeded scenario runs that several test modules share (a test module never imports another): the FB-2009 SWIM
trace replay, the FlexSlot testbed, and the golden runs whose tables `golden_digests.json` fixes
(tests/test_golden_digests.py says when and how to rewrite it)."""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

import pandas as pd

from scenarios.flexslot import FlexSlot
from scenarios.registry import SCENARIOS
from scenarios.runner import run_model
from scenarios.settings import validate

SWIM = Path(__file__).resolve().parents[2] / "shared" / "data" / "swim" / "FB-2009_samples_24_times_1hr_0.tsv"
if not SWIM.exists():  # a worktree beside the main checkout
    SWIM = Path("/work/shared/data/swim/FB-2009_samples_24_times_1hr_0.tsv")


def swim(max_jobs: int = 12):
    """The trace-replay scenario on the SWIM trace's first `max_jobs` jobs, seed 1, built and not run: (scenario,
    model)."""
    scenario = SCENARIOS["trace-replay"]
    return scenario, scenario.build(validate(scenario.Settings, {"trace": str(SWIM), "max_jobs": max_jobs}), seed=1)


def flexslot_run(seed: int = 1, **settings):
    """The FlexSlot testbed (stock Hadoop: FIFO, default speculation, wordcount unless told) run to its end."""
    scenario = FlexSlot()
    model = scenario.build(validate(scenario.Settings, settings), seed=seed)
    run_model(model, scenario.horizon_s(model), progress=False)
    model.check_hadoop_end()
    return model


# ---- the golden runs ----------------------------------------------------------------------------------------
GOLDEN = Path(__file__).with_name("golden_digests.json")

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
