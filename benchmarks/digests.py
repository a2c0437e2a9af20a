"""Digests of small seeded runs: the proof that a speed change moved no number.

    python benchmarks/digests.py [--only NAME ...] [--time]

Each case runs one small scenario with a fixed seed and prints the sha256 (first 16 hex digits) of each of its
output tables (`tasks`, `jobs`, `vm_trace`), rows sorted, floats written with 17 significant digits (bit for
bit: a change in the last digit changes the digest). Compare the lines before and after a change; they must be
the same unless the commit says why. The cases cover stock Hadoop 1.1 on the FlexSlot testbed under DRS (FIFO,
default speculation), Fair with delay scheduling, a SWIM trace with the job lifecycle (setup/cleanup tasks), and
SAMR speculation on slow nodes. The script puts its own checkout first on sys.path.
"""

from __future__ import annotations

import argparse
import hashlib
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # this checkout's packages, not an installed one

SWIM = ROOT.parent / "shared" / "data" / "swim" / "FB-2009_samples_24_times_1hr_0.tsv"
if not SWIM.exists():  # a worktree beside the main checkout
    SWIM = Path("/work/shared/data/swim/FB-2009_samples_24_times_1hr_0.tsv")

CASES: dict[str, tuple[str, dict[str, Any]]] = {
    "flexslot-drs": ("flexslot", {"allocator": "drs", "scale": 0.25}),
    "delay-fair": ("delay-scheduling", {"max_jobs": 40}),
    "swim-lifecycle": ("trace-replay", {"trace": str(SWIM), "max_jobs": 40}),
    "samr-slow": ("samr-heterogeneous", {"speculation": "samr"}),
}
TABLES = ("tasks", "jobs", "vm_trace")


def table_digest(frame) -> str:
    """sha256 of a frame's rows sorted by every column, floats as 17 significant digits (exact)."""
    frame = frame.reset_index(drop=True)
    frame = frame.sort_values(list(frame.columns), kind="mergesort", ignore_index=True)
    text = frame.to_csv(index=False, float_format="%.17g")
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def case_digests(name: str) -> dict[str, str]:
    """Run one case and return table name -> digest."""
    from scenarios.registry import SCENARIOS
    from scenarios.runner import run_model
    from scenarios.settings import validate

    scenario_name, settings = CASES[name]
    scenario = SCENARIOS[scenario_name]
    model = scenario.build(validate(scenario.Settings, settings), seed=1)
    run_model(model, scenario.horizon_s(model), progress=False, stops_itself=scenario.stops_itself)
    frames = scenario.frames(model)
    return {table: table_digest(frames[table]) for table in TABLES if table in frames}


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", nargs="+", choices=list(CASES), default=list(CASES))
    parser.add_argument("--time", action="store_true", help="print each case's wall seconds too")
    args = parser.parse_args(argv)
    for name in args.only:
        start = time.perf_counter()
        digests = case_digests(name)
        took = f"  {time.perf_counter() - start:.2f}s" if args.time else ""
        print(f"{name:<15} " + " ".join(f"{t}={d}" for t, d in digests.items()) + took, flush=True)


if __name__ == "__main__":
    main()
