"""A trace replay against its trace: per job the recorded and emulated times, split into the wait before its first
task, the time between tasks with none running and the tasks' own run; the error figures and the attempts' runtimes
that `TraceReplay.summary` reports (scenarios/trace_replay.py)."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from hadoop_layer.ended import DONE, MAP, REDUCE
from hadoop_layer.tasks import TaskKind

if TYPE_CHECKING:
    from hadoop_layer.model import HadoopModel

COMPARISON = ["job", "name", "recorded_outcome", "state", "recorded_s", "emulated_s", "ratio", "recorded_wait_s",
              "emulated_wait_s", "recorded_run_s", "emulated_run_s", "run_ratio", "recorded_between_s",
              "emulated_between_s", "recorded_own_s", "emulated_own_s", "own_ratio", "why_no_ratio"]  # fmt: skip


def _emulated_windows(model: HadoopModel) -> tuple[dict[int, float], dict[int, list[tuple[float, float]]]]:
    """By job number: its first map or reduce attempt's start in the emulation, and every attempt's (start, end)
    (maps, reduces, setup, cleanup; one still running at the horizon ends now)."""
    ended = model.ended
    jobs, groups = ended.view("job").tolist(), ended.view("group").tolist()
    starts, ends = ended.view("start_s").tolist(), ended.view("end_s").tolist()
    first: dict[int, float] = {}
    windows: dict[int, list[tuple[float, float]]] = {}
    now = float(model.time)
    attempts = [a for t in model.trackers for kind in (TaskKind.MAP, TaskKind.REDUCE) for a in t.running[kind]]
    running = [(a.task.job.number, bool(a.task.role), a.start_s, now) for a in attempts if a.start_s is not None]
    rows = zip(jobs, (g > REDUCE for g in groups), starts, ends, strict=True)
    for number, lifecycle, start, end in [*rows, *running]:
        if math.isnan(start):  # never started
            continue
        if not lifecycle and start < first.get(number, math.inf):
            first[number] = start
        windows.setdefault(number, []).append((start, end if end == end else now))
    return first, windows


def idle_s(windows: list[tuple[float, float]] | tuple[tuple[float, float], ...], lo: float, hi: float) -> float:
    """The time in [lo, hi] that none of `windows` (start, end) covers."""
    covered, reach = 0.0, lo
    for start, end in sorted(windows):
        start, end = max(start, reach), min(end, hi)
        if end > start:
            covered, reach = covered + end - start, end
    return max(hi - lo - covered, 0.0)


def comparison(model: HadoopModel) -> pd.DataFrame:
    """Per job: recorded and emulated durations (submit to end) and their ratio, split three ways:
    - the wait before the job's first map or reduce attempt starts (`*_wait_s`; on the traced cluster: other
      users' load, which the trace does not hold), and the rest, its run (first attempt's start to the job's end,
      `*_run_s`, `run_ratio`);
    - that run split again: the time in it when none of the job's attempts (maps, reduces, setup, cleanup) ran
      (`*_between_s`: the job waited between its tasks, on the traced cluster for slots others held) and the time
      when at least one did (`*_own_s`, `own_ratio`: the tasks' own run, what the emulator gets right or wrong).
      A wait hidden behind a running attempt (a reduce shuffling while a late map waits) stays in the own run.
    `why_no_ratio` says why a ratio is missing."""
    rows = []
    first, windows = _emulated_windows(model)
    for trace_job, job in model.replay.added:
        emulated = job.end_s - job.submit_s if job.end_s is not None else None
        recorded = trace_job.duration_s
        start = first.get(job.number)
        e_wait = start - job.submit_s if start is not None else None
        r_wait = trace_job.wait_s if recorded is not None and trace_job.wait_s is not None else None
        e_run = emulated - e_wait if emulated is not None and e_wait is not None else None
        r_run = recorded - r_wait if recorded is not None and r_wait is not None else None
        e_between = r_between = e_own = r_own = None
        if e_run is not None:
            e_between = idle_s(windows.get(job.number, []), start, job.end_s)
            e_own = e_run - e_between
        if r_run is not None:
            r_between = idle_s(trace_job.attempt_windows_s, r_wait, recorded)
            r_own = r_run - r_between
        why = None
        if recorded is None:
            why = "the trace records no finish time for this job (or one before its submit)"
        elif emulated is None:
            why = "the job had not ended when the run stopped"
        elif r_wait is None or e_wait is None:
            why = "no map or reduce attempt started (recorded or emulated): no run to split"
        rows.append({
            "job": job.job_id, "name": trace_job.name, "recorded_outcome": trace_job.outcome, "state": job.state,
            "recorded_s": recorded, "emulated_s": emulated,
            "ratio": emulated / recorded if emulated is not None and recorded else None,
            "recorded_wait_s": r_wait, "emulated_wait_s": e_wait, "recorded_run_s": r_run, "emulated_run_s": e_run,
            "run_ratio": e_run / r_run if e_run is not None and r_run else None,
            "recorded_between_s": r_between, "emulated_between_s": e_between, "recorded_own_s": r_own,
            "emulated_own_s": e_own, "own_ratio": e_own / r_own if e_own is not None and r_own else None,
            "why_no_ratio": why,
        })  # fmt: skip
    return pd.DataFrame(rows, columns=COMPARISON)


def error_figures(table: pd.DataFrame) -> dict[str, Any]:
    """Median absolute relative job-duration error and the share of jobs within 2x, over the jobs with both a
    recorded and an emulated duration (all of them, and the successful ones alone); the same for the run after
    the first task's start (`job_run_*`) and for the tasks' own run (`job_own_*`: the run less the time none of
    the job's attempts ran), and the median waits beside them (before the first task; between tasks)."""
    out: dict[str, Any] = {}
    for label, rows in (("", table), ("_succeeded", table[table.recorded_outcome == "SUCCESS"])):
        ratio = rows.ratio.dropna().astype(float)
        out[f"jobs_compared{label}"] = len(ratio)
        out[f"job_duration_median_abs_error{label}"] = float(np.median(np.abs(ratio - 1))) if len(ratio) else None
        out[f"jobs_within_2x{label}"] = float(((ratio >= 0.5) & (ratio <= 2)).mean()) if len(ratio) else None
    for part in (p for p in ("run", "own") if f"{p}_ratio" in table):  # (a table of totals alone has neither)
        ratio = table[f"{part}_ratio"].dropna().astype(float)
        out[f"jobs_{part}_compared"] = len(ratio)
        out[f"job_{part}_median_abs_error"] = float(np.median(np.abs(ratio - 1))) if len(ratio) else None
        out[f"jobs_{part}_within_2x"] = float(((ratio >= 0.5) & (ratio <= 2)).mean()) if len(ratio) else None
    for part in (p for p in ("wait", "between") if f"recorded_{p}_s" in table):
        for side in ("recorded", "emulated"):
            waits = table[f"{side}_{part}_s"].dropna().astype(float)
            out[f"job_{part}_median_{side}_s"] = float(np.median(waits)) if len(waits) else None
    return out


NULL_REASONS = {
    "job_duration_median_abs_error": "no job has both a recorded and an emulated duration",
    "jobs_within_2x": "no job has both a recorded and an emulated duration",
    "job_duration_median_abs_error_succeeded": "no successful job has both a recorded and an emulated duration",
    "jobs_within_2x_succeeded": "no successful job has both a recorded and an emulated duration",
    "job_run_median_abs_error": "no job has a recorded wait before its first task and both durations",
    "jobs_run_within_2x": "no job has a recorded wait before its first task and both durations",
    "job_wait_median_recorded_s": "no job records when its first task started (or it started before the submit)",
    "job_wait_median_emulated_s": "no emulated job started a task",
    "job_own_median_abs_error": "no job has a recorded wait before its first task and both durations",
    "jobs_own_within_2x": "no job has a recorded wait before its first task and both durations",
    "job_between_median_recorded_s": "no job has a recorded first task start and a recorded finish",
    "job_between_median_emulated_s": "no emulated job both started a task and ended",
    "map_runtime_median_recorded_s": "the replayed jobs record no successful map",
    "map_runtime_p90_recorded_s": "the replayed jobs record no successful map",
    "reduce_runtime_median_recorded_s": "the replayed jobs record no successful reduce",
    "reduce_runtime_p90_recorded_s": "the replayed jobs record no successful reduce",
    "map_runtime_median_emulated_s": "no map attempt succeeded in the emulation",
    "map_runtime_p90_emulated_s": "no map attempt succeeded in the emulation",
    "reduce_runtime_median_emulated_s": "no reduce attempt succeeded in the emulation",
    "reduce_runtime_p90_emulated_s": "no reduce attempt succeeded in the emulation",
}


def json_ready(summary: dict[str, Any]) -> dict[str, Any]:
    """`summary` with no NaN or infinity (JSON has none: `JSON.parse` refuses them): each becomes null, and
    `null_reasons` says why for every null figure at the top level (the per-job rows carry `why_no_ratio`)."""

    def clean(value: Any) -> Any:
        if isinstance(value, dict):
            return {k: clean(v) for k, v in value.items()}
        if isinstance(value, list | tuple):
            return [clean(v) for v in value]
        if isinstance(value, float | np.floating) and not math.isfinite(value):
            return None
        return value.item() if isinstance(value, np.generic) else value

    out = clean(summary)
    reasons = {k: NULL_REASONS.get(k, "not a number (no data to compute it from)") for k, v in out.items()
               if v is None and (k in NULL_REASONS or isinstance(summary.get(k), float))}  # fmt: skip
    out["null_reasons"] = reasons
    return out


def attempt_figures(model: HadoopModel) -> dict[str, Any]:
    """Median and p90 of the successful map and reduce attempts' runtimes: recorded against emulated."""
    out: dict[str, Any] = {}
    ended = model.ended
    done = np.flatnonzero((ended.view("state") == DONE) & np.isin(ended.view("job"), [j.number for _, j in
                                                                                      model.replay.added]))  # fmt: skip
    for kind, field in (("m", "map_durations_s"), ("r", "reduce_durations_s")):
        recorded = [d for t, _ in model.replay.added for d in (getattr(t, field) or ())]
        rows = done[ended.group[done] == (MAP if kind == "m" else REDUCE)]
        emulated = ended.end_s[rows] - ended.start_s[rows]
        name = "map" if kind == "m" else "reduce"
        for q, label in ((50, "median"), (90, "p90")):
            out[f"{name}_runtime_{label}_recorded_s"] = float(np.percentile(recorded, q)) if recorded else None
            out[f"{name}_runtime_{label}_emulated_s"] = float(np.percentile(emulated, q)) if len(emulated) else None
    return out
