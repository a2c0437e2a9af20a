"""Figures of a run's tables, for notebooks and `vcloud trace --plot`: each function returns a Figure.

Figures are built with `matplotlib.figure.Figure` on an Agg canvas, not through pyplot: nothing global
is touched (no backend switch, no figure registry to leak or warn about), and a notebook shows one with
`display(fig)`. `save` writes one and releases it.

    from scenarios.inspect_run import Run
    from scenarios import plots
    run = Run("runs/flexslot-seed1")
    plots.task_breakdown(run.table("tasks"))
    plots.share_heatmap(run.table("vm_trace"), metric="iowait", bin_s=60)
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import BinaryIO

import numpy as np
import pandas as pd
from matplotlib import colormaps
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

from scenarios.trace_math import CPU_STATES, accounted_s, trace_interval

BREAKDOWN_COLORS = {"cputime": "tab:blue", "iowait": "tab:orange", "steal": "tab:red", "other": "tab:gray"}


def new_figure(width: float = 8.0, height: float = 4.5) -> Figure:
    """A Figure on an Agg canvas, outside pyplot."""
    fig = Figure(figsize=(width, height), layout="constrained")
    FigureCanvasAgg(fig)
    return fig


def save(fig: Figure, path: Path | str | BinaryIO, dpi: int = 120, fmt: str | None = None) -> None:
    """Write `fig` (format `fmt`, else from the suffix) and release what it holds."""
    fig.savefig(path, dpi=dpi, format=fmt)
    fig.clear()


def successful_maps(tasks: pd.DataFrame) -> pd.DataFrame:
    """Successful map attempts with their runtime (`runtime_s`)."""
    maps = tasks[(tasks["kind"] == "m") & (tasks["state"] == "done")]
    return maps.assign(runtime_s=maps["end_s"] - maps["start_s"])


def _share(num: pd.Series, den: pd.Series) -> pd.Series:
    """num / den, NaN where nothing was accounted (den == 0)."""
    return num / den.where(den > 0)


def share_heatmap(trace: pd.DataFrame, metric: str = "steal", bin_s: float | None = None, title: str = "") -> Figure:
    """`metric` share of each VM's vCPU time per time bin (default: the trace interval), VMs x bins.

    Bins with no accounted vCPU time (samples after the clock stopped) are grey."""
    if metric not in CPU_STATES:
        raise ValueError(f"metric {metric!r}: not one of {', '.join(CPU_STATES)}")
    step = bin_s or trace_interval(trace)
    vm = trace["vm"].astype(str)
    ends = trace["time_s"].to_numpy()
    bins = np.maximum(np.ceil(np.round(ends / step, 9)).astype(np.int64) - 1, 0)
    frame = pd.DataFrame(
        {"vm": vm, "bin": bins, "num": trace[f"{metric}_s"].astype(np.float64), "den": accounted_s(trace)}
    )
    sums = frame.groupby(["vm", "bin"], sort=True)[["num", "den"]].sum()
    grid = _share(sums["num"], sums["den"]).unstack("bin")
    order = list(dict.fromkeys(vm))  # the trace's VM order
    grid = grid.reindex(index=order, columns=range(int(bins.min()), int(bins.max()) + 1))
    fig = new_figure(9.0, max(3.0, 0.18 * len(order) + 1.5))
    ax = fig.add_subplot()
    cmap = colormaps["magma"].with_extremes(bad="0.85")
    lo, hi = grid.columns[0] * step, (grid.columns[-1] + 1) * step
    image = ax.imshow(grid.to_numpy(dtype=float), aspect="auto", interpolation="nearest", cmap=cmap,
                      extent=(lo, hi, len(order) - 0.5, -0.5), vmin=0.0)  # fmt: skip
    ax.set_yticks(range(len(order)), order, fontsize=7 if len(order) > 20 else 9)
    if len(order) > 60:
        ax.set_yticks(range(0, len(order), max(1, len(order) // 40)))
    ax.set_xlabel("time (s)")
    ax.set_title(f"{metric} share of vCPU time per {step:g} s" + (f" - {title}" if title else ""))
    fig.colorbar(image, ax=ax, label=f"{metric} share")
    return fig


def top_vms(trace: pd.DataFrame, by: str = "steal", n: int = 4) -> list[str]:
    """The `n` VMs with the most `by` seconds."""
    totals = trace.groupby(trace["vm"].astype(str))[f"{by}_s"].sum().sort_values(ascending=False, kind="stable")
    return list(totals.index[:n])


def share_lines(
    trace: pd.DataFrame, vms: Sequence[str] | None = None, n: int = 4, title: str = "", interval_s: float | None = None
) -> Figure:
    """Steal and iowait shares over time of `vms` (default: the `n` with the most steal); `interval_s`: the run's
    trace interval (default: read from the trace's sample times)."""
    chosen = list(vms) if vms else top_vms(trace, "steal", n)
    fig = new_figure(9.0, 5.5)
    ax_steal, ax_io = fig.subplots(2, 1, sharex=True)
    vm = trace["vm"].astype(str)
    step = interval_s or trace_interval(trace)
    for name in chosen:
        rows = trace[vm == name].sort_values("time_s")
        total = accounted_s(rows)
        times = rows["time_s"].to_numpy(float)
        for ax, state in ((ax_steal, "steal"), (ax_io, "iowait")):
            share = _share(rows[f"{state}_s"].astype(np.float64), total).to_numpy()
            # a sample covers the interval before it: repeat the first value at its start
            ax.plot(np.r_[times[:1] - step, times], np.r_[share[:1], share], drawstyle="steps-pre", label=name)
    ax_steal.set_ylabel("steal share")
    ax_io.set_ylabel("iowait share")
    ax_io.set_xlabel("time (s)")
    for ax in (ax_steal, ax_io):
        ax.set_ylim(bottom=0)
        ax.grid(alpha=0.3)
    fig.legend(*ax_steal.get_legend_handles_labels(), loc="outside right upper")
    fig.suptitle("steal and iowait shares over time" + (f" - {title}" if title else ""))
    return fig


def breakdown_parts(tasks: pd.DataFrame) -> pd.DataFrame:
    """Successful maps sorted by runtime: cputime, iowait, steal and other (the rest of the runtime, >= 0)."""
    maps = successful_maps(tasks).sort_values("runtime_s", kind="stable")
    parts = pd.DataFrame(
        {"cputime": maps["cputime_s"], "iowait": maps["iowait_s"], "steal": maps["steal_s"]}, dtype=float
    )
    parts["other"] = (maps["runtime_s"] - parts.sum(axis=1)).clip(lower=0.0)
    return parts.assign(attempt=maps["attempt"], runtime_s=maps["runtime_s"]).reset_index(drop=True)


def task_breakdown(tasks: pd.DataFrame, title: str = "") -> Figure:
    """Stacked bars per successful map attempt, sorted by runtime: cputime, iowait, steal, other.

    Each part is one step-filled polygon, not one rectangle per task, so thousands of tasks draw fast."""
    parts = breakdown_parts(tasks)
    n = len(parts)
    fig = new_figure(10.0, 4.5)
    ax = fig.add_subplot()
    edges = np.arange(n + 1) - 0.5
    bottom = np.zeros(n)
    for name, color in BREAKDOWN_COLORS.items():
        top = bottom + parts[name].to_numpy()
        ax.fill_between(edges, np.r_[bottom, bottom[-1:]], np.r_[top, top[-1:]], step="post", color=color,
                        linewidth=0, label=name)  # fmt: skip
        bottom = top
    ax.set_xlim(-0.5, n - 0.5)
    ax.set_ylim(bottom=0)
    ax.set_xlabel(f"map tasks sorted by runtime ({n} successful attempts)")
    ax.set_ylabel("time (s)")
    ax.legend(loc="upper left")
    ax.set_title("map task runtime breakdown" + (f" - {title}" if title else ""))
    return fig


def runtime_cdf(runs: Mapping[str, pd.DataFrame] | pd.DataFrame, title: str = "") -> Figure:
    """CDF of successful map runtimes: one line per tasks frame, labelled by its key."""
    frames = {"tasks": runs} if isinstance(runs, pd.DataFrame) else runs
    fig = new_figure(7.0, 4.5)
    ax = fig.add_subplot()
    for label, tasks in frames.items():
        runtimes = np.sort(successful_maps(tasks)["runtime_s"].to_numpy(float))
        if len(runtimes):
            y = np.arange(1, len(runtimes) + 1) / len(runtimes)
            ax.step(np.r_[runtimes[0], runtimes], np.r_[0.0, y], where="post", label=f"{label} (n={len(runtimes)})")
    ax.set_xlabel("map task runtime (s)")
    ax.set_ylabel("CDF")
    ax.set_ylim(0, 1.02)
    ax.grid(alpha=0.3)
    ax.legend(loc="lower right", fontsize=8)
    ax.set_title("CDF of map task runtimes" + (f" - {title}" if title else ""))
    return fig


def tasks_per_node(tasks: pd.DataFrame, nodes: Sequence[str] | None = None, title: str = "") -> Figure:
    """Successful maps per node, stacked by locality; `nodes` (default: every node with an attempt) at 0 too."""
    maps = successful_maps(tasks)
    order = list(nodes) if nodes is not None else sorted(tasks["vm"].astype(str).unique())
    counts = pd.crosstab(maps["vm"].astype(str), maps["locality"].replace("", "none")).reindex(order, fill_value=0)
    localities = [c for c in ("node", "rack", "off_rack", "none") if c in counts.columns]
    localities += [c for c in counts.columns if c not in localities]
    fig = new_figure(max(6.0, 0.25 * len(order) + 2.0), 4.5)
    ax = fig.add_subplot()
    x = np.arange(len(order))
    bottom = np.zeros(len(order))
    for loc in localities:
        ax.bar(x, counts[loc].to_numpy(), bottom=bottom, label=f"{loc}-local" if loc in ("node", "rack") else loc)
        bottom += counts[loc].to_numpy()
    if len(order):
        ax.axhline(bottom.mean(), color="k", linestyle="--", linewidth=1, label=f"mean {bottom.mean():.1f}")
    ax.set_xticks(x, order, rotation=90, fontsize=7 if len(order) > 20 else 9)
    ax.set_ylabel("successful map tasks")
    ax.legend(fontsize=8)
    ax.set_title("map tasks per node" + (f" - {title}" if title else ""))
    return fig


def running_counts(tasks: pd.DataFrame, kind: str, end_s: float) -> tuple[np.ndarray, np.ndarray]:
    """Times and counts of running attempts of `kind` ("m"/"r"), a step function changing at each event."""
    rows = tasks[(tasks["kind"] == kind) & tasks["start_s"].notna()]
    starts = rows["start_s"].to_numpy(float)
    ends = rows["end_s"].fillna(end_s).to_numpy(float)  # still running at the end of the run
    times = np.r_[starts, ends]
    deltas = np.r_[np.ones(len(starts)), -np.ones(len(ends))]
    order = np.lexsort((deltas, times))  # at equal times, ends first
    times, counts = times[order], np.cumsum(deltas[order])
    last = np.r_[times[1:] != times[:-1], True]  # one value per distinct time
    return np.r_[0.0, times[last]], np.r_[0.0, counts[last]]


def running_tasks(tasks: pd.DataFrame, t_from: float | None = None, t_to: float | None = None,
                  title: str = "", by_job: bool | None = None) -> Figure:  # fmt: skip
    """Running map and reduce attempts over time, all attempts counted (killed ones until killed).

    `by_job` (default: when there are 2 to 6 jobs) draws each job's maps (solid) and reduces (dashed)."""
    end_s = float(np.nanmax(tasks[["start_s", "end_s"]].to_numpy(float))) if len(tasks) else 0.0
    jobs = sorted(tasks["job"].unique()) if "job" in tasks else []
    split = 2 <= len(jobs) <= 6 if by_job is None else by_job
    groups = [(str(j), tasks[tasks["job"] == j]) for j in jobs] if split else [("", tasks)]
    fig = new_figure(9.0, 4.0)
    ax = fig.add_subplot()
    for i, (job, rows) in enumerate(groups):
        for kind, label, style in (("m", "maps", "-"), ("r", "reduces", "--")):
            times, counts = running_counts(rows, kind, end_s)
            color = f"C{i}" if split else None
            ax.step(times, counts, where="post", label=f"{job} {label}".strip(), color=color, linestyle=style)
    ax.set_xlim(t_from if t_from is not None else 0.0, t_to if t_to is not None else max(end_s, 1.0))
    ax.set_ylim(bottom=0)
    ax.set_xlabel("time (s)")
    ax.set_ylabel("running attempts")
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8)
    ax.set_title("running tasks" + (f" - {title}" if title else ""))
    return fig


def share_series(series: Mapping[str, Sequence[float]], title: str = "") -> Figure:
    """Stacked slot shares over time: `series` has "from_s" (bin starts), "bin_s" and one list per queue."""
    queues = [k for k in series if k not in ("from_s", "bin_s")]
    fig = new_figure(9.0, 4.0)
    ax = fig.add_subplot()
    ax.stackplot(np.asarray(series["from_s"]) + float(series["bin_s"]) / 2, [series[q] for q in queues], labels=queues)
    ax.set_ylim(0, 1)
    ax.set_xlabel("time (s)")
    ax.set_ylabel("share of map slots")
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8, loc="upper left")
    ax.set_title(title)
    return fig


def moved_bars(summaries: Mapping[str, Mapping], title: str = "") -> Figure:
    """Per policy: GB read off-rack by maps and shuffled across racks (stacked), node-local share on the right."""
    names = list(summaries)
    off = np.array([summaries[k]["moved_mb"]["map_off_rack_mb"] for k in names]) / 1024
    shuffle = np.array([summaries[k]["moved_mb"]["shuffle_cross_rack_mb"] for k in names]) / 1024
    fig = new_figure(9.0, 4.0)
    ax = fig.add_subplot()
    x = np.arange(len(names))
    ax.bar(x, off, label="map input off-rack")
    ax.bar(x, shuffle, bottom=off, label="shuffle across racks")
    ax.set_xticks(x, names, fontsize=8)
    ax.set_ylabel("GB across racks")
    ax.legend(fontsize=8, loc="lower left")
    right = ax.twinx()
    right.plot(x, [summaries[k]["locality"]["node"] for k in names], "ko-", label="node-local maps")
    right.set_ylim(0, 1)
    right.set_ylabel("node-local share of maps")
    ax.set_title(title)
    return fig


def grouped_bars(table: pd.DataFrame, ylabel: str, title: str = "", reference: float | None = None) -> Figure:
    """One group of bars per row of `table` (e.g. benchmarks), one bar per column (e.g. policies).

    `reference` draws a horizontal line (1.0 for times normalized to a baseline)."""
    fig = new_figure(max(6.0, 1.1 * len(table) + 3.0), 4.5)
    ax = fig.add_subplot()
    table.plot.bar(ax=ax, rot=30, width=0.8)
    if reference is not None:
        ax.axhline(reference, color="black", linewidth=0.8)
    ax.set_ylabel(ylabel)
    ax.set_xlabel("")
    ax.grid(axis="y", alpha=0.3)
    ax.legend(fontsize=8)
    ax.set_title(title)
    return fig


def entitlement_persistence(persistence: Mapping, title: str = "") -> Figure:
    """Spearman's rho of the per-VM CPU and memory entitlements from one DRS period to the next, over time
    (`persistence`: a summary's `entitlement_persistence`, vcloud/persistence.py): near 1 a division that locks in,
    near 0 one that reshuffles."""
    fig = new_figure(9.0, 4.0)
    ax = fig.add_subplot()
    times = np.asarray(persistence.get("times_s", []), dtype=float)
    for name, label in (("cpu", "CPU"), ("mem", "memory")):
        rho = np.array([np.nan if r is None else r for r in persistence.get(f"{name}_by_period", [])], dtype=float)
        mean = persistence.get(name)
        text = f"{label} (mean {mean:.2f})" if mean is not None else f"{label} (no ranks)"
        ax.plot(times[: rho.size], rho, marker="o", label=text)
    ax.axhline(0.0, color="grey", linewidth=0.8)
    ax.set_ylim(-1.05, 1.05)
    ax.set_xlabel("time of the allocation (s)")
    ax.set_ylabel("rank correlation with the period before")
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8, loc="lower left")
    ax.set_title("entitlement persistence" + (f" - {title}" if title else ""))
    return fig
