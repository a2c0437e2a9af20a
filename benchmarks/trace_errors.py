"""How close `trace-replay` comes to each public trace's recorded job times, and what it repaired to get there.

    python benchmarks/trace_errors.py                 # every trace in ../shared/data and tests/data (Markdown)
    python benchmarks/trace_errors.py PATH [PATH ...]  # those as well
    python benchmarks/trace_errors.py --modes         # also each replay rule off, replay_io=false and physics
    python benchmarks/trace_errors.py dt=0.1          # KEY=VALUE: a setting for every replay, over the mode's

Per Rumen trace, `vcloud run trace-replay --set trace=...` in durations mode, seed 1, default settings otherwise
(each reduce's shuffle lasts at least its recorded time, `shuffle_as_recorded`, and a recorded runtime holds the
task commit, `commit_in_runtime`; `--modes` also runs them off: "both rules off" is the replay before them), then
again with `start_as_recorded=true` (each map and reduce attempt held to its recorded start): the anomalies
repaired (by kind), the slots the traced cluster got, the median absolute job-duration error, and that duration
split three ways (scenarios/trace_replay.py `comparison`): (a) the wait before each job's first task and (b) the
time between its tasks when none of its attempts ran (recorded against emulated medians: on the traced cluster,
other users' load, which the trace does not hold), and (c) the tasks' own run (the time at least one of its
attempts ran) with its median error; beside it the error of the whole run after the first task ((b) and (c)),
the share of jobs within 2x, and how many jobs ended as recorded (SUCCESS, FAILED, KILLED). SWIM traces record
no job or task times: they are read, not compared.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from hadoop_layer.traces import TraceError, load_trace
from scenarios.registry import SCENARIOS
from scenarios.runner import run_model
from scenarios.settings import parse_pairs, validate

ROOT = Path(__file__).resolve().parents[1]
PUBLIC = [ROOT.parent / "shared" / "data", ROOT / "tests" / "data"]
OLD_RULES = {"shuffle_as_recorded": False, "commit_in_runtime": False}  # the durations replay before either rule
MODES = {
    "durations": {"replay": "durations"},
    "durations, start_as_recorded": {"replay": "durations", "start_as_recorded": True},
    "durations, start_as_recorded, shuffle_as_recorded=false": {
        "replay": "durations",
        "start_as_recorded": True,
        "shuffle_as_recorded": False,
    },
    "durations, start_as_recorded, commit_in_runtime=false": {
        "replay": "durations",
        "start_as_recorded": True,
        "commit_in_runtime": False,
    },
    "durations, both rules off": {"replay": "durations", **OLD_RULES},
    "durations, start_as_recorded, both rules off": {"replay": "durations", "start_as_recorded": True, **OLD_RULES},
    "durations, replay_io=false": {"replay": "durations", "replay_io": False},
    "physics": {"replay": "physics"},
}


def public_traces() -> list[Path]:
    """Every job trace under the public data folders (topology files and licences are not traces)."""
    found = []
    for folder in PUBLIC:
        if folder.is_dir():
            found += sorted(p for p in folder.rglob("*") if p.is_file() and p.suffix in ("", ".json", ".tsv", ".gz"))
    return [p for p in found if "topology" not in p.name and p.name != "LICENSE"]


def _pct(x: float | None) -> str:
    return "-" if x is None else f"{100 * x:.1f} %"


def _s(x: float | None) -> str:
    return "-" if x is None else f"{x:.0f}"


def replay_row(path: Path, label: str, overrides: dict[str, Any]) -> str:
    """One replay as a table row."""
    scenario = SCENARIOS["trace-replay"]
    settings = validate(scenario.Settings, {"trace": str(path), **overrides})
    model = scenario.build(settings, seed=1)
    run_model(model, scenario.horizon_s(model), progress=False)
    s = scenario.summary(model)
    repaired = ", ".join(f"{v['count']} {k}" for k, v in s["anomalies_repaired"].items()) or "none"
    slots = ", ".join(f"{k} on {v}" for k, v in s["slots"]["map+reduce per node"].items())
    ended = f"{s['jobs_ended_as_recorded']} of {len(s['per_job'])}"
    return (
        f"| {path.name} | {label} | {s['jobs_read']} of {s['jobs_in_trace'] or 'more'} | {repaired} | {slots} | "
        f"{_pct(s['job_duration_median_abs_error'])} | {_s(s['job_wait_median_recorded_s'])} / "
        f"{_s(s['job_wait_median_emulated_s'])} | {_s(s['job_between_median_recorded_s'])} / "
        f"{_s(s['job_between_median_emulated_s'])} | {_pct(s['job_own_median_abs_error'])} | "
        f"{_pct(s['job_run_median_abs_error'])} | {_pct(s['jobs_within_2x'])} | {ended} |"
    )


def main(argv: list[str]) -> int:
    modes = "--modes" in argv
    pairs = [a for a in argv if "=" in a]  # KEY=VALUE: a setting for every replay (e.g. dt=0.1)
    common = parse_pairs(pairs, SCENARIOS["trace-replay"].Settings)
    paths = [Path(a) for a in argv if a != "--modes" and a not in pairs] + public_traces()
    print("| trace | mode | jobs read | anomalies repaired | map+reduce slots per node | median job error | "
          "(a) wait before first task, median s (recorded / emulated) | (b) between tasks, nothing running, "
          "median s (recorded / emulated) | (c) median error of the tasks' own run | median error of the run after "
          "the first task, (b) + (c) | jobs within 2x | ended as recorded |")  # fmt: skip
    print("|---|---|---|---|---|---|---|---|---|---|---|---|")
    for path in paths:
        try:
            read = load_trace(path, max_jobs=50)
        except TraceError as exc:
            print(f"| {path.name} | - | refused: {exc} | | | | | | | | | |")
            continue
        if read.kind == "swim":
            total = f"{read.total_jobs:,}" if read.total_jobs is not None else "?"
            print(f"| {path.name} | SWIM | 50 of {total} | none (SWIM rows are checked, not repaired) | - | "
                  "records no job times | - | - | - | - | - | - |")  # fmt: skip
            continue
        shown = MODES if modes else {k: MODES[k] for k in ("durations", "durations, start_as_recorded")}
        for label, overrides in shown.items():
            shown_label = ", ".join([label, *pairs])
            print(replay_row(path, shown_label, {**overrides, **common}))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
