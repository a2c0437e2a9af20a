"""Delay Scheduling (Zaharia et al., EuroSys 2010) section 5, IO-heavy workload, for `vcloud reproduce`.

Each function takes the report's run cache (`runs.get(scenario, **settings)`, `runs.quick`) and returns (emulator
text, same direction as the paper?, Figure). The `delay-scheduling` scenario runs at the paper's size (scale 1,
100 slaves) in the full report and at its default scale 0.2 (20 slaves) with `--quick`; one seed.
"""

from __future__ import annotations

from typing import Any

import pandas as pd
from matplotlib.figure import Figure

from scenarios import plots
from scenarios.delay_experiments import POLICIES

SMALL, MEDIUM = ("1", "2", "3"), ("4", "5", "6")  # bins of 1-20 and 21-300 maps in the paper


def _summaries(runs: Any) -> dict[str, dict]:
    scale = 0.2 if runs.quick else 1.0
    runs.prefetch("delay-scheduling", [{"scale": scale, **s} for s in POLICIES.values()])
    return {label: runs.get("delay-scheduling", scale=scale, **s).summary for label, s in POLICIES.items()}


def _table(summaries: dict[str, dict], key: str) -> pd.DataFrame:
    """Rows: bins; columns: policies."""
    return pd.DataFrame({label: {f"bin {b}": v[key] for b, v in s["bins"].items()} for label, s in summaries.items()})


def _mean_of(summary: dict, bins: tuple[str, ...]) -> float:
    """Job-weighted mean response time over `bins`."""
    parts = [(summary["bins"][b]["mean_response_s"], summary["bins"][b]["jobs"]) for b in bins]
    return sum(t * n for t, n in parts) / sum(n for _, n in parts)


def locality(runs: Any) -> tuple[str, bool, Figure]:
    """The paper's data-locality figure: node-local maps per bin under FIFO, naive fair and delay scheduling."""
    summaries = _summaries(runs)
    table = _table(summaries, "node_local")
    parts = [f"{label} " + "/".join(f"{x:.2f}" for x in table[label]) for label in table]
    text = "node-local maps, bins 1-9: " + "; ".join(parts)
    delay, naive, fifo = table["Fair delay"], table["Fair naive"], table["FIFO"]
    same = bool((delay >= 0.9).all() and (naive[:4] < delay[:4]).all() and (fifo[:4] < delay[:4]).all())
    fig = plots.grouped_bars(table, "node-local fraction of maps", "Delay Scheduling Sec. 5: IO-heavy locality")
    return text, same, fig


def response_times(runs: Any) -> tuple[str, bool, Figure]:
    """The paper's response times per bin: delay scheduling against naive fair sharing (and FIFO)."""
    summaries = _summaries(runs)
    table = _table(summaries, "mean_response_s")
    means = {k: (_mean_of(s, SMALL), _mean_of(s, MEDIUM)) for k, s in summaries.items()}
    text = "; ".join(f"{k}: bins 1-3 {a:.0f} s, 4-6 {b:.0f} s, throughput {summaries[k]['throughput_mb_per_s']:.0f}"
                     " MB/s" for k, (a, b) in means.items())  # fmt: skip
    same = all(means["Fair delay"][i] < means["Fair naive"][i] for i in (0, 1))
    fig = plots.grouped_bars(table, "mean response time (s)", "Delay Scheduling Sec. 5: IO-heavy response times")
    return text, same, fig
