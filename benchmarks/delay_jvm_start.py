"""Delay Scheduling on one rack against the JVM start's wall time (`hadoop.jvm_start_wall_s`), from a sweep of
`scenarios/specs/delay_jvm_start.yaml` run with `--frames`:

    vcloud sweep scenarios/specs/delay_jvm_start.yaml --out DIR --processes 1 --frames
    python benchmarks/delay_jvm_start.py DIR

prints, per JVM start (mean over the seeds where it says so):
- the one-map jobs' end-to-end time (submission to end, the `jobs` table's rows with one map): min and median over
  the seeds' one-map jobs, under naive fair and under fair with delay scheduling;
- delay scheduling's speedup over naive fair (naive's mean response time over delay's: above 1, delay is faster),
  over all jobs per seed and per size bin (bins 1-9, the ratio of the seeds' mean response times).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np
import pandas as pd

BINS = range(1, 10)


def load(out: str | Path) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(one row per run: seed, JVM start, policy, mean response and per-bin mean response; one row per one-map job:
    seed, JVM start, policy, end-to-end seconds)."""
    runs = Path(out) / "runs"
    rows, one_map = [], []
    for path in sorted(runs.glob("*.json")):
        row = json.loads(path.read_text())
        if row.get("error"):
            continue
        s, f = row["settings"], row["figures"]
        policy = "naive" if s.get("fair.delay_scheduling") is False else "delay"
        key = {"seed": row["seed"], "jvm_s": float(s["hadoop.jvm_start_wall_s"]), "policy": policy}
        rows.append({**key, "mean": f["mean_response_s"],
                     **{b: f.get(f"bins.{b}.mean_response_s", np.nan) for b in BINS}})  # fmt: skip
        jobs = runs / row["run_id"] / "jobs.parquet"
        if jobs.exists():
            j = pd.read_parquet(jobs)
            j = j[(j.maps == 1) & j.end_s.notna()]
            one_map += [{**key, "e2e_s": float(t)} for t in (j.end_s - j.submit_s)]
    return pd.DataFrame(rows), pd.DataFrame(one_map)


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if len(argv) != 1:
        print("usage: python benchmarks/delay_jvm_start.py SWEEP_DIR", file=sys.stderr)
        return 2
    runs, one = load(argv[0])
    print("| jvm_start_wall_s | one-map jobs min / median, naive | delay | naive / delay, all jobs (seeds) | "
          "naive / delay per bin, 1-9 |")  # fmt: skip
    print("|---|---|---|---|---|")
    for jvm, r in runs.groupby("jvm_s"):
        naive, delay = (r[r.policy == p].set_index("seed").sort_index() for p in ("naive", "delay"))
        seeds = ", ".join(f"{x:.3f}" for x in (naive["mean"] / delay["mean"]).dropna())
        per_bin = "/".join(f"{naive[b].mean() / delay[b].mean():.2f}" for b in BINS)
        o = one[one.jvm_s == jvm] if len(one) else one
        e2e = []
        for p in ("naive", "delay"):
            t = o[o.policy == p].e2e_s if len(o) else pd.Series(dtype=float)
            e2e.append(f"{t.min():.1f} / {t.median():.1f} s" if len(t) else "-")
        print(f"| {jvm:g} | {e2e[0]} | {e2e[1]} | {seeds} | {per_bin} |")
    print()
    print("mean response per bin (s), mean of the seeds:")
    print(runs.groupby(["jvm_s", "policy"])[["mean", *BINS]].mean().round(1).to_string())
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
