"""Coupling Fig 16 by load (docs/results-coupling.md), from a sweep of `scenarios/specs/coupling_fig16_load.toml` run
with `--frames`:

    vcloud sweep scenarios/specs/coupling_fig16_load.toml --out DIR --processes 1 --frames
    python benchmarks/coupling_load.py DIR

prints, per cluster (the spec's cells without the scheduler; Coupling's other reading of the lists as a cluster of its
own), the mean of the seeds and then each seed: Fair's and Coupling's mean / median / p90 job time, Coupling against
Fair (each seed's change in mean job time), the slots' busy shares and the share of the run with every reduce slot
taken (`scenarios.coupling_experiments.load_figures` on the run's tables), the paper's starvation, the mean time of
the Sort jobs and of the others, and the mean time from a job's last map end to its last reduce's start; then the
share of Fair's reduce slot-time held before the job's last map ended.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from scenarios.coupling_experiments import load_figures

SLAVES = 62  # coupling-200-jobs' default
LISTS = "coupling.lists_skip_job_nodes"


def cluster(settings: dict) -> str:
    """The run's cluster, by what its cell changes but the scheduler (a sweep reports every key of every cell, at its
    default where the cell does not set it): "62 nodes" for the paper's Set C."""
    parts = []
    if int(settings.get("slaves") or SLAVES) != SLAVES:
        parts.append(f"slaves={int(settings['slaves'])}")
    if settings.get("disk_mbps") not in (None, 100.0):
        parts.append(f"disk_mbps={settings['disk_mbps']:g}")
    if settings.get("hadoop.job_setup_cleanup") is False:
        parts.append("fixed costs off")
    return " ".join(parts) or "62 nodes"


def load(out: str | Path) -> pd.DataFrame:
    runs = Path(out) / "runs"
    rows = []
    for path in sorted(runs.glob("*.json")):
        row = json.loads(path.read_text())
        frames = runs / row["run_id"]
        if row.get("error") or not (frames / "jobs.parquet").exists():
            continue
        s = row["settings"]
        jobs, tasks = pd.read_parquet(frames / "jobs.parquet"), pd.read_parquet(frames / "tasks.parquet")
        slaves = int(s.get("slaves") or SLAVES)
        times = jobs.end_s - jobs.submit_s
        sort = jobs.name.str.contains("Sort", case=False)
        scheduler = s["scheduler"] + (" (lists skip the job's nodes)" if s.get(LISTS) else "")
        rows.append({"cluster": cluster(s), "scheduler": scheduler, "seed": row["seed"],
                     **load_figures(tasks, jobs, slaves),
                     "sort_s": float(times[sort].mean()), "other_s": float(times[~sort].mean())})  # fmt: skip
    return pd.DataFrame(rows)


HEADER = (
    "| cluster | {what} | Fair mean / median / p90 | Coupling mean / median / p90 | Coupling vs Fair | "
    "busy map / reduce (Fair) | reduce slots full Fair / Coupling | starvation Fair / Coupling | "
    "Sort jobs Fair -> Coupling | other jobs | last map to last reduce Fair / Coupling |\n"
    "|---|---|---|---|---|---|---|---|---|---|---|"
)


def _row(label: str, what: str, f: pd.Series, c: pd.Series, change: str) -> str:
    return (f"| {label} | {what} | {f.job_mean:.0f} / {f.job_median:.0f} / {f.job_p90:.0f} s | "
            f"{c.job_mean:.0f} / {c.job_median:.0f} / {c.job_p90:.0f} s | {change} | "
            f"{f.map_busy:.0%} / {f.reduce_busy:.0%} | {f.reduce_full:.1%} / {c.reduce_full:.1%} | "
            f"{f.starvation:.1f} / {c.starvation:.1f} s | {f.sort_s:.0f} -> {c.sort_s:.0f} s | "
            f"{f.other_s:.0f} -> {c.other_s:.0f} s | {f.reduce_lag:.0f} / {c.reduce_lag:.0f} s |")  # fmt: skip


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if len(argv) != 1:
        print("usage: python benchmarks/coupling_load.py SWEEP_DIR", file=sys.stderr)
        return 2
    t = load(argv[0])
    fair = t[t.scheduler == "fair"].set_index(["cluster", "seed"])
    coupling = t[t.scheduler != "fair"]
    pairs = []  # (label, seed, Fair's row, Coupling's row, Coupling vs Fair in %)
    for (name, scheduler, seed), c in coupling.groupby(["cluster", "scheduler", "seed"]):
        if (name, seed) in fair.index:
            f, c = fair.loc[(name, seed)], c.iloc[0]
            pairs.append((name + scheduler.removeprefix("coupling"), seed, f, c, (c.job_mean / f.job_mean - 1) * 100))
    print("Mean of the seeds (Coupling vs Fair: each seed's change in mean job time):\n")
    print(HEADER.format(what="seeds"))
    for label in dict.fromkeys(p[0] for p in pairs):
        mine = [p for p in pairs if p[0] == label]
        f = pd.DataFrame([p[2] for p in mine]).mean(numeric_only=True)
        c = pd.DataFrame([p[3] for p in mine]).mean(numeric_only=True)
        change = " / ".join(f"{p[4]:+.1f}" for p in mine) + " %"
        print(_row(label, ", ".join(str(p[1]) for p in mine), f, c, change))
    print("\nPer seed:\n")
    print(HEADER.format(what="seed"))
    for label, seed, f, c, change in pairs:
        print(_row(label, str(seed), f, c, f"{change:+.1f} %"))
    print()
    print("Fair: reduce slot-time held before the job's last map ended, per seed:")
    print(fair.held_before_maps_end.unstack().map(lambda x: f"{x:.0%}").to_string())
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
