"""FlexSlot section 4's figures (7-14) measured on the `flexslot` scenario, for `vcloud reproduce`.

Each function takes the report's run cache (`runs.get(scenario, **settings)`, `runs.quick`) and returns
(emulator text, same direction as the paper?, Figure). All runs use the DRS-style pool unless a figure says
otherwise, and stock Hadoop's FIFO scheduler and default speculation under every slot manager, as the paper
compares them. `--quick` measures fewer benchmarks and alphas so the test suite can afford the report.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd
from matplotlib.figure import Figure

from scenarios import plots
from scenarios.finished import Finished

WIKI = ("inverted-index", "term-vector", "wordcount", "grep")
NETFLIX = ("k-means", "histogram-movies", "histogram-ratings")
BENCHMARKS = (*WIKI, "tera-sort", *NETFLIX)
QUICK_BENCHMARKS = ("inverted-index", "histogram-movies")
POLICIES = {"stock": "none", "SkewTune": "skewtune", "FlexSlot": "flexslot"}


def _run(runs: Any, benchmark: str, **settings) -> Finished:
    """A `flexslot` run of `benchmark`, on the DRS-style pool unless `settings` say otherwise."""
    return runs.get("flexslot", benchmark=benchmark, **{"allocator": "drs", **settings})


def _prefetch(runs: Any, cases: list[tuple[str, dict]]) -> None:
    """Start the `flexslot` runs of (benchmark, settings) `cases` at once (`Runs.prefetch`), as `_run` spells them."""
    runs.prefetch("flexslot", [{"benchmark": bench, "allocator": "drs", **s} for bench, s in cases])


def _benchmarks(runs: Any) -> tuple[str, ...]:
    return QUICK_BENCHMARKS if runs.quick else BENCHMARKS


def makespan(run: Finished) -> float:
    return float(run.summary["makespan_s"])


def skewness(run: Finished) -> float:
    return float(run.summary["map_runtime_skewness"] or 0.0)


def kills_per_straggler(run: Finished) -> float:
    """Algorithm 1's kills over the stragglers it killed at least once (FlexSlot Fig 13); 0 if none."""
    return sum(run.kills) / len(run.kills) if run.kills else 0.0


def breakdown(run: Finished) -> dict[str, float]:
    """Mean cputime, iowait and steal of the successful maps (FlexSlot Fig 8)."""
    maps = plots.successful_maps(run.tasks)
    return {"cputime": maps.cputime_s.mean(), "iowait": maps.iowait_s.mean(), "steal": maps.steal_s.mean()}


def utilization(run: Finished) -> tuple[float, float]:
    """The slaves' mean CPU used over the pool's CPU, and active memory over the pool's memory, while jobs ran."""
    trace = run.vm_trace
    trace = trace[trace.vm.str.startswith("slave") & (trace.time_s <= makespan(run))]
    per_time = trace.groupby("time_s", observed=True)[["cpu_used_mhz", "mem_active_mb"]].sum()
    cpu, mem = run.pool_capacity
    return float(per_time.cpu_used_mhz.mean() / cpu), float(per_time.mem_active_mb.mean() / mem)


def _change(new: float, base: float) -> str:
    return f"{100 * (new / base - 1):+.1f}%"


def _normalized(runs: Any, policies: dict[str, dict], **common) -> pd.DataFrame:
    """Job completion time of each benchmark under each policy, over the first policy's."""
    _prefetch(runs, [(bench, {**common, **s}) for bench in _benchmarks(runs) for s in policies.values()])
    rows = {}
    for bench in _benchmarks(runs):
        times = {name: makespan(_run(runs, bench, **common, **s)) for name, s in policies.items()}
        base = next(iter(times.values()))
        rows[bench] = {name: t / base for name, t in times.items()}
    return pd.DataFrame.from_dict(rows, orient="index")


SLOT_POLICIES = {name: {"slot_manager": manager} for name, manager in POLICIES.items()}


def fig7(runs: Any) -> tuple[str, bool, Figure]:
    """Skewness of successful map attempts (the paper's), and of task times from the first launch (which charge
    FlexSlot's kills; SkewTune's pieces count as tasks in both)."""
    _prefetch(runs, [("inverted-index", s) for s in SLOT_POLICIES.values()])
    models = {name: _run(runs, "inverted-index", **s) for name, s in SLOT_POLICIES.items()}
    skews = {name: skewness(m) for name, m in models.items()}
    task = {name: m.summary["map_task_time_skewness"] for name, m in models.items()}
    text = ", ".join(f"{name} {skews[name]:.2f} ({task[name]:.2f} by task)" for name in models)
    fig = plots.runtime_cdf({name: m.tasks for name, m in models.items()}, "FlexSlot Fig 7 (inverted-index)")
    return f"skewness {text}", skews["FlexSlot"] < skews["SkewTune"] < skews["stock"], fig


def fig8(runs: Any) -> tuple[str, bool, Figure]:
    cases = {f"{name} DRS": s for name, s in SLOT_POLICIES.items()}
    cases |= {
        "stock Homo.": {"allocator": "static"},
        "SkewTune Homo.": {"allocator": "static", "slot_manager": "skewtune"},
    }
    _prefetch(runs, [("inverted-index", s) for s in cases.values()])
    parts = pd.DataFrame({case: breakdown(_run(runs, "inverted-index", **s)) for case, s in cases.items()}).T
    flex = parts.loc["FlexSlot DRS"]
    text = (
        f"FlexSlot steal {_change(flex.steal, parts.loc['stock DRS'].steal)} vs stock, "
        f"{_change(flex.steal, parts.loc['SkewTune DRS'].steal)} vs SkewTune (DRS); iowait "
        f"{_change(flex.iowait, parts.loc['stock Homo.'].iowait)} vs stock Homo., "
        f"{_change(flex.iowait, parts.loc['SkewTune Homo.'].iowait)} vs SkewTune Homo."
    )
    same = flex.steal < parts.loc["stock DRS"].steal and flex.iowait < parts.loc["stock Homo."].iowait
    fig = plots.new_figure(8.0, 4.5)
    parts.plot.bar(stacked=True, ax=fig.add_subplot(), rot=20, ylabel="mean time per map (s)",
                   title="FlexSlot Fig 8: inverted-index map runtime breakdown")  # fmt: skip
    return text, same, fig


def _table_text(table: pd.DataFrame, column: str) -> str:
    return ", ".join(f"{bench} {_change(value, 1.0)}" for bench, value in table[column].items())


def _job_time_figure(runs: Any, title: str, **common) -> tuple[str, bool, Figure]:
    """Figs 9 and 10: stock, SkewTune and FlexSlot job times over stock's; the paper's way if FlexSlot wins mostly."""
    table = _normalized(runs, SLOT_POLICIES, **common)
    text = f"FlexSlot vs stock: {_table_text(table, 'FlexSlot')}; SkewTune vs stock: {_table_text(table, 'SkewTune')}"
    same = bool((table.FlexSlot < 1.0).mean() > 0.5)
    return text, same, plots.grouped_bars(table, "job time / stock", title, 1.0)


def fig9(runs: Any) -> tuple[str, bool, Figure]:
    return _job_time_figure(runs, "FlexSlot Fig 9 (DRS pool)")


def fig10(runs: Any) -> tuple[str, bool, Figure]:
    return _job_time_figure(runs, "FlexSlot Fig 10 (co-located cluster)", co_cluster=True)


UNLIMITED = {"stock": {"slot_manager": "none"}, "FlexSlot": {"slot_manager": "flexslot"},
             "FlexSlot unlimited": {"slot_manager": "flexslot-unlimited"}}  # fmt: skip


def fig11(runs: Any) -> tuple[str, bool, Figure]:
    table = _normalized(runs, UNLIMITED)
    text = f"unlimited vs stock: {_table_text(table, 'FlexSlot unlimited')}"
    same = bool((table["FlexSlot unlimited"] < table["FlexSlot"]).mean() > 0.5)
    return text, same, plots.grouped_bars(table, "job time / stock", "FlexSlot Fig 11 (unlimited slots)", 1.0)


def fig12(runs: Any) -> tuple[str, bool, Figure]:
    _prefetch(runs, [(b, {"slot_manager": m}) for b in _benchmarks(runs) for m in ("flexslot", "flexslot-unlimited")])
    rows = {}
    for bench in _benchmarks(runs):
        limited = utilization(_run(runs, bench, slot_manager="flexslot"))
        free = utilization(_run(runs, bench, slot_manager="flexslot-unlimited"))
        rows[bench] = {"CPU limited": limited[0], "CPU unlimited": free[0],
                       "memory limited": limited[1], "memory unlimited": free[1]}  # fmt: skip
    table = pd.DataFrame.from_dict(rows, orient="index")
    cpu = (table["CPU unlimited"] - table["CPU limited"]).mean()
    mem = (table["memory unlimited"] - table["memory limited"]).mean()
    text = f"unlimited - limited, mean over benchmarks: CPU {100 * cpu:+.1f} points, memory {100 * mem:+.1f} points"
    fig = plots.grouped_bars(table, "share of the pool", "FlexSlot Fig 12: utilization, limited vs unlimited")
    return text, cpu > 0 and mem > 0, fig


def fig13(runs: Any) -> tuple[str, bool, Figure]:
    _prefetch(runs, [(b, {"slot_manager": "flexslot"}) for b in _benchmarks(runs)])
    kills = pd.Series({b: kills_per_straggler(_run(runs, b, slot_manager="flexslot")) for b in _benchmarks(runs)})
    text = ", ".join(f"{b} {k:.2f}" for b, k in kills.items())
    resized = kills[kills > 0]
    same = bool(len(resized)) and bool(np.all(resized < 1.5))
    return text, same, plots.grouped_bars(kills.to_frame("kills per straggler"), "kills", "FlexSlot Fig 13")


ALPHAS = (0.1, 0.2, 0.3, 0.4, 0.5)


def fig14(runs: Any) -> tuple[str, bool, Figure]:
    benches = ("inverted-index",) if runs.quick else ("inverted-index", "k-means", "histogram-movies")
    alphas = (0.1, 0.5) if runs.quick else ALPHAS

    def kills(bench: str, alpha: float) -> float:
        return kills_per_straggler(_run(runs, bench, slot_manager="flexslot", flexslot={"alpha": alpha}))

    _prefetch(runs, [(b, {"slot_manager": "flexslot", "flexslot": {"alpha": a}}) for b in benches for a in alphas])
    table = pd.DataFrame({b: {a: kills(b, a) for a in alphas} for b in benches})
    text = "; ".join(f"{b}: " + ", ".join(f"{a} -> {k:.2f}" for a, k in table[b].items()) for b in benches)
    same = bool(table.iloc[-1]["inverted-index"] < 0.9 * table.iloc[0]["inverted-index"])  # a clear fall
    return text, same, plots.grouped_bars(table, "kills per straggler", "FlexSlot Fig 14 (by alpha)")
