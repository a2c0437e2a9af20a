"""How severe SAMR's stragglers are on the emulated cluster (docs/results-samr.md, "How severe the paper's stragglers
were"): Sort of 12 GB on `samr-heterogeneous` under no backups, Hadoop's speculation, LATE and SAMR, per cluster:

    python benchmarks/samr_stragglers.py [--processes 2]

Clusters (the seeds as the page has them): the defaults and one replica (`hadoop.replication=1`) on seeds 1-3, slow
nodes at a tenth of the CPU and 6 MB/s (`slow_cpu=0.1 slow_disk_mbps=6`) and both on seeds 1-2. Prints, per cluster
(mean of the seeds): the job time per policy, "none" over "hadoop" (the ratio of those means; the paper's baseline
over Hadoop: about 2), backups launched by Hadoop and SAMR, the tail of the runs without backups (`tail_figures`:
median task time on slow over fast nodes for maps and reduces, the slowest reduce over the median reduce) and
SAMR's job time against Hadoop's per seed. 40 runs: about a minute on one process (2026-12-07).
"""

from __future__ import annotations

import argparse
import sys
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from scenarios.samr_experiments import compare

POLICIES = ("none", "hadoop", "late", "samr")
CLUSTERS: dict[str, tuple[dict, tuple[int, ...]]] = {
    "defaults": ({}, (1, 2, 3)),
    "hadoop.replication=1": ({"hadoop.replication": 1}, (1, 2, 3)),
    "slow_cpu=0.1 slow_disk_mbps=6": ({"slow_cpu": 0.1, "slow_disk_mbps": 6.0}, (1, 2)),
    "both": ({"hadoop.replication": 1, "slow_cpu": 0.1, "slow_disk_mbps": 6.0}, (1, 2)),
}


def _one(args: tuple[str, str, int]) -> pd.DataFrame:
    name, policy, seed = args
    settings, _ = CLUSTERS[name]
    return compare(seeds=(seed,), policies=(policy,), **settings).assign(cluster=name)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--processes", type=int, default=1)
    args = parser.parse_args()
    jobs = [(name, p, seed) for name, (_, seeds) in CLUSTERS.items() for p in POLICIES for seed in seeds]
    if args.processes > 1:
        with ProcessPoolExecutor(args.processes) as pool:
            frames = list(pool.map(_one, jobs))
    else:
        frames = [_one(j) for j in jobs]
    t = pd.concat(frames, ignore_index=True)
    print(
        "| cluster | seeds | none / hadoop / late / samr | none over hadoop | backups hadoop / samr | "
        "maps slow / fast (none) | reduces slow / fast, slowest / median (none) | "
        "SAMR vs Hadoop per seed |"
    )
    print("|---|---|---|---|---|---|---|---|")
    for name, (_, seeds) in CLUSTERS.items():
        c = t[t.cluster == name]
        m = c.groupby("policy").mean(numeric_only=True)
        hadoop, samr = (c[c.policy == p].set_index("seed").job_s for p in ("hadoop", "samr"))
        per_seed = ", ".join(f"{x:+.0f} %" for x in (samr / hadoop - 1) * 100)
        times = " / ".join(f"{m.job_s[p]:,.0f}" for p in POLICIES)
        print(
            f"| {name} | {', '.join(map(str, seeds))} | {times} s | {m.job_s['none'] / m.job_s['hadoop']:.2f} | "
            f"{m.backups['hadoop']:.1f} / {m.backups['samr']:.1f} | {m.map_slow_over_fast['none']:.2f} | "
            f"{m.reduce_slow_over_fast['none']:.2f}, {m.reduce_max_over_median['none']:.2f} | "
            f"{per_seed} |"
        )
    print()
    print(t.drop(columns=["m1_slow", "m1_fast", "r1_slow", "r1_fast"]).round(2).to_string(index=False))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
