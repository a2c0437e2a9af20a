"""Issue 14's study: FlexSlot's section-2 figures and Fig 9 per cell of vSphere / Linux mechanisms, from two sweeps.

    vcloud sweep scenarios/specs/flexslot_mechanisms_static.toml --out STATIC --processes 2 --frames
    vcloud sweep scenarios/specs/flexslot_mechanisms.toml --out DRS --processes 2 --frames
    python -m scenarios.mechanism_study STATIC DRS

prints, per benchmark and cell (mean over the seeds): Fig 4's maps per node max/min (static "Homo." / DRS, and the
work-conserving static control), Fig 3's map-runtime skewness (static / DRS), Fig 6's steal rate of the slowest
tenth of maps over the average map's (static / DRS; `straggler_steal_ratio`), the DRS slaves' CPU and memory
entitlement persistence, and Fig 9: SkewTune's and FlexSlot's job time against stock Hadoop's under DRS (mean of
the per-seed changes), with the three policies' skewness (Fig 7). A DRS cell's static runs are those with the
same physics (the static pool ignores `drs.*`).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np
import pandas as pd

PHYSICS = [
    "settings.page_cache.enabled",
    "settings.memory.reclaim",
    "settings.co_cluster",
    "settings.co_cluster_hosts",
    "settings.vm_mem_mb",
]
DRS_ONLY = [
    "settings.drs.enforce",
    "settings.drs.count_ready",
    "settings.drs.cpu_spare_by",
    "settings.drs.cpu_spare_pass",
]
SLOT_MANAGERS = ("none", "skewtune", "flexslot")
DEFAULTS = {
    "settings.page_cache.enabled": True,
    "settings.memory.reclaim": True,
    "settings.co_cluster": False,
    "settings.co_cluster_hosts": None,
    "settings.vm_mem_mb": 4096.0,
    "settings.drs.enforce": "host-pool",
    "settings.drs.count_ready": False,
    "settings.drs.cpu_spare_by": "shares",
    "settings.drs.cpu_spare_pass": True,
}
LABELS = {  # setting -> (its label, or the label of its value; whether the value is the cell's mechanism)
    "settings.page_cache.enabled": ("no page cache", lambda v: not v),
    "settings.memory.reclaim": ("no ballooning", lambda v: not v),
    "settings.drs.enforce": (lambda v: f"per-VM {v}" if v == "shares" else "per-VM limits", lambda v: v != "host-pool"),
    "settings.drs.count_ready": ("demand with ready time", lambda v: bool(v)),
    "settings.co_cluster": ("second cluster", lambda v: bool(v)),
    "settings.vm_mem_mb": ("8 GB VMs (pool at half)", lambda v: v > 4096.0),
    # the assumptions no vSphere document states (issue 40): FlexSlot's missing feedback
    "settings.drs.cpu_spare_by": ("(a) spare by demand", lambda v: v == "demand"),
    "settings.drs.cpu_spare_pass": ("(b) no spare pass", lambda v: not v),
    "settings.co_cluster_hosts": (lambda v: f"(c) on hosts 0-{int(float(v)) - 1}", lambda v: v is not None and v == v),
}


def straggler_steal_ratio(tasks: pd.DataFrame) -> float:
    """Steal per second of the slowest tenth of successful maps over that of all of them (FlexSlot Fig 6)."""
    maps = tasks[(tasks.kind == "m") & (tasks.state == "done")]
    runtime = maps.end_s - maps.start_s
    rate = maps.steal_s / runtime
    return float(rate[runtime > runtime.quantile(0.9)].mean() / rate.mean())


def slave_spread(trace: pd.DataFrame) -> dict[str, float]:
    """Max over min, across the slaves, of their CPU used and memory granted averaged over the run."""
    slaves = trace[trace.vm.astype(str).str.startswith("slave")]
    means = slaves.groupby("vm", observed=True)[["cpu_used_mhz", "mem_granted_mb"]].mean()
    return {"cpu_used_spread": float(means.cpu_used_mhz.max() / means.cpu_used_mhz.min()),
            "mem_granted_spread": float(means.mem_granted_mb.max() / means.mem_granted_mb.min())}  # fmt: skip


def load(out: str | Path) -> pd.DataFrame:
    """A sweep directory's finished runs (`DIR/runs/*.json`, so a sweep still running can be read), one row each as in
    `results.parquet`, with the Fig 6 ratio of each run (from its kept `tasks` table, if any)."""
    runs = Path(out) / "runs"
    rows = []
    for path in sorted(runs.glob("*.json")):
        row = json.loads(path.read_text())
        if row.get("error"):
            continue
        tasks, trace = runs / row["run_id"] / "tasks.parquet", runs / row["run_id"] / "vm_trace.parquet"
        ratio = straggler_steal_ratio(pd.read_parquet(tasks)) if tasks.exists() else np.nan
        spread = slave_spread(pd.read_parquet(trace)) if trace.exists() else {}
        rows.append({"run_id": row["run_id"], "seed": row["seed"],
                     **{f"settings.{k}": v for k, v in row["settings"].items()}, **row["figures"],
                     "steal_ratio": ratio, **spread})  # fmt: skip
    return pd.DataFrame(rows)


def cell_name(row: pd.Series) -> str:
    return " + ".join(label for _, label in _labels(row)) or "defaults"


def _labels(row: pd.Series) -> list[tuple[int, str]]:
    """(the setting's place in LABELS, its label) for each setting of `row` that is a mechanism of its cell."""
    return [(i, label(row[key]) if callable(label) else label)
            for i, (key, (label, on)) in enumerate(LABELS.items()) if key in row and on(row[key])]  # fmt: skip


def _key(frame: pd.DataFrame, keys: list[str]) -> pd.Series:
    return frame[keys].map(_canon).agg("|".join, axis=1)


def _canon(v) -> str:
    """A setting's value as the same text in every sweep: None and NaN (a column with a gap) alike, 4 and 4.0 alike."""
    if v is None or (isinstance(v, float) and np.isnan(v)):
        return "None"
    if isinstance(v, float) and v.is_integer():
        return str(int(v))
    return str(v)


def table(static: pd.DataFrame, drs: pd.DataFrame) -> pd.DataFrame:
    """One row per (benchmark, DRS cell): the study's figures, seeds averaged."""
    for frame in (static, drs):
        for key, value in DEFAULTS.items():
            if key not in frame:
                frame[key] = value
    static = static.assign(phys=_key(static, [*PHYSICS, "settings.benchmark"]))
    drs = drs.assign(phys=_key(drs, [*PHYSICS, "settings.benchmark"]), cell=_key(drs, PHYSICS + DRS_ONLY))
    homo = static[static["settings.static.hard_limit"]].set_index(["phys", "seed"])
    shared = static[~static["settings.static.hard_limit"]].set_index(["phys", "seed"])
    rows = []
    for (bench, _), runs in drs.groupby(["settings.benchmark", "cell"], sort=False):
        policy = runs["settings.slot_manager"]
        by = {sm: runs[policy == sm].set_index("seed") for sm in SLOT_MANAGERS}
        stock = by["none"]
        seeds = list(stock.index)
        keys = [(stock.phys.iloc[0], s) for s in seeds]
        h = homo.reindex(keys)
        c = shared.reindex(keys)

        def change(sm: str, stock=stock, by=by) -> float:
            other = by[sm]
            return float(((other.makespan_s / stock.makespan_s.reindex(other.index)) - 1).mean() * 100)

        rows.append({
            "benchmark": bench,
            "cell": cell_name(stock.iloc[0]),
            "rank": [i for i, _ in _labels(stock.iloc[0])],
            "maps max/min static": h.maps_per_node_max_over_min.mean(),
            "maps max/min DRS": stock.maps_per_node_max_over_min.mean(),
            "maps max/min DRS per seed": tuple(round(x, 2) for x in stock.maps_per_node_max_over_min),
            "maps max/min shares control": c.maps_per_node_max_over_min.mean(),
            "skewness static": h.map_runtime_skewness.mean(),
            "skewness DRS": stock.map_runtime_skewness.mean(),
            "steal ratio static": h.steal_ratio.mean(),
            "steal ratio DRS": stock.steal_ratio.mean(),
            "CPU used max/min DRS": stock.get("cpu_used_spread", pd.Series(np.nan)).mean(),
            "memory max/min DRS": stock.get("mem_granted_spread", pd.Series(np.nan)).mean(),
            "CPU persistence": stock["cloud.entitlement_persistence.cpu"].mean(),
            "memory persistence": stock["cloud.entitlement_persistence.mem"].mean(),
            "stock makespan DRS": stock.makespan_s.mean(),
            "static makespan": h.makespan_s.mean(),
            "SkewTune %": change("skewtune") if len(by["skewtune"]) else np.nan,
            "FlexSlot %": change("flexslot") if len(by["flexslot"]) else np.nan,
            "skewness SkewTune": by["skewtune"].map_runtime_skewness.mean() if len(by["skewtune"]) else np.nan,
            "skewness FlexSlot": by["flexslot"].map_runtime_skewness.mean() if len(by["flexslot"]) else np.nan,
            "FlexSlot kills": by["flexslot"].killed_attempts.mean() if len(by["flexslot"]) else np.nan,
        })  # fmt: skip
    frame = pd.DataFrame(rows)
    order = sorted(range(len(frame)), key=lambda i: (frame.benchmark[i] != "wordcount", len(frame["rank"][i]),
                                                     frame["rank"][i]))  # fmt: skip
    return frame.iloc[order].drop(columns="rank").reset_index(drop=True)  # wordcount first; then the defaults,
    # single mechanisms, pairs, each in LABELS order


def _f(x: float, digits: int = 2) -> str:
    return "-" if x is None or (isinstance(x, float) and np.isnan(x)) else f"{x:.{digits}f}"


def _pct(x: float) -> str:
    return "-" if np.isnan(x) else f"{x:+.1f} %"


def markdown(t: pd.DataFrame) -> str:
    """The two tables of docs/results-flexslot.md's study section."""
    lines = [
        "| benchmark | cell | Fig 4 max/min static / DRS (control) | Fig 3 skewness static / DRS | "
        "Fig 6 steal ratio static / DRS | persistence CPU / mem | DRS slaves' CPU used / memory max/min | "
        "makespan static / DRS |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for _, r in t.iterrows():
        lines.append(
            f"| {r['benchmark']} | {r['cell']} | {_f(r['maps max/min static'])} / {_f(r['maps max/min DRS'])} "
            f"({_f(r['maps max/min shares control'])}) | {_f(r['skewness static'])} / {_f(r['skewness DRS'])} | "
            f"{_f(r['steal ratio static'])} / {_f(r['steal ratio DRS'])} | {_f(r['CPU persistence'])} / "
            f"{_f(r['memory persistence'])} | {_f(r['CPU used max/min DRS'])} / {_f(r['memory max/min DRS'])} | "
            f"{_f(r['static makespan'], 0)} / {_f(r['stock makespan DRS'], 0)} s |"
        )
    lines += [
        "",
        "| benchmark | cell | SkewTune vs stock (DRS) | FlexSlot vs stock (DRS) | "
        "skewness stock / SkewTune / FlexSlot | attempts killed (FlexSlot) |",
        "|---|---|---|---|---|---|",
    ]
    for _, r in t.iterrows():
        lines.append(
            f"| {r['benchmark']} | {r['cell']} | {_pct(r['SkewTune %'])} | {_pct(r['FlexSlot %'])} | "
            f"{_f(r['skewness DRS'])} / {_f(r['skewness SkewTune'])} / {_f(r['skewness FlexSlot'])} | "
            f"{_f(r['FlexSlot kills'], 1)} |"
        )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if len(argv) != 2:
        print("usage: python -m scenarios.mechanism_study STATIC_SWEEP_DIR DRS_SWEEP_DIR", file=sys.stderr)
        return 2
    t = table(load(argv[0]), load(argv[1]))
    print(markdown(t))
    print()
    print(t[["benchmark", "cell", "maps max/min DRS per seed"]].to_string(index=False))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
