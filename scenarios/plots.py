"""Figures of a run's tables, for notebooks and `vcloud trace --plot`: each function returns a Figure.

Figures are built with `matplotlib.figure.Figure` on an Agg canvas, not through pyplot: nothing global
is touched (no backend switch, no figure registry to leak or warn about), and a notebook shows one with
`display(fig)`. `save` writes one and releases it.

    from scenarios.inspect_run import Run
    from scenarios import plots
    run = Run("runs/flexslot-seed1")
    plots.task_breakdown(run.table("tasks"))
    plots.share_heatmap(run.table("vm_trace"), metric="iowait", bin_s=60)

Figures meant for a paper stay readable at any cluster size: a heat map groups consecutive VMs into at most
`MAX_HEAT_ROWS` rows (shares summed over the group's seconds), the breakdown bins the body of the runtime
distribution and gives its slowest maps a panel of their own, and the share lines default to the cluster's
aggregate with a percentile band. A bad option raises `PlotError`, which names the option and its value.
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

from scenarios.row_groups import clean_names, group_rows
from scenarios.trace_math import CPU_STATES, accounted_s, trace_interval

BREAKDOWN_COLORS = {"cputime": "tab:blue", "iowait": "tab:orange", "steal": "tab:red", "other": "tab:gray"}
NOISE_FLOOR = 1e-9  # shares below this are float noise of the accounting (5e-16 would top a colour scale): drawn 0
MAX_HEAT_ROWS = 48  # rows of a heat map (all panels together) before consecutive VMs are grouped
BODY_BINS = 100  # bars of the breakdown's body: maps sorted by runtime, binned by rank
TAIL_BARS = 50  # at most this many of the slowest maps get a bar each in the breakdown's tail panel


class PlotError(ValueError):
    """An option a figure cannot use: `option` and `value` name it (the command line prints `--option value: why`)."""

    def __init__(self, option: str, value: float, reason: str) -> None:
        super().__init__(f"{option} {value:g}: {reason}")
        self.option, self.value, self.reason = option, value, reason


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


def check_bin(bin_s: float, interval_s: float) -> None:
    """A heat-map bin holds whole samples: shorter than the trace interval it would only add empty columns (and
    `bin 1e-9` would allocate a column per nanosecond)."""
    if not bin_s > 0:
        raise PlotError("bin", bin_s, "must be > 0")
    if bin_s < interval_s * (1 - 1e-9):
        raise PlotError("bin", bin_s, f"shorter than the trace interval {interval_s:g} s (a bin holds whole samples)")


def check_vmax(vmax: float | None) -> None:
    """The top of a share's colour scale: a share is a fraction of vCPU time, in (0, 1]."""
    if vmax is not None and not 0 < vmax <= 1:
        raise PlotError("vmax", vmax, "must be in (0, 1] (the top of a share's colour scale)")


def heat_grid(trace: pd.DataFrame, metric: str = "steal", bin_s: float | None = None,
              max_rows: int = MAX_HEAT_ROWS, interval_s: float | None = None) -> pd.DataFrame:  # fmt: skip
    """`metric` share of vCPU time per row and time bin: rows are VMs (clean names, trace order), or groups of
    consecutive VMs when there are more than `max_rows`; columns are the bins' start times. A group's share is its
    seconds over its accounted seconds; NaN where nothing was accounted; below `NOISE_FLOOR` it is 0."""
    if metric not in CPU_STATES:
        raise ValueError(f"metric {metric!r}: not one of {', '.join(CPU_STATES)}")
    interval = interval_s or trace_interval(trace)
    step = bin_s or interval
    check_bin(step, interval)
    vm = trace["vm"].astype(str)
    names = list(dict.fromkeys(vm))  # the trace's VM order
    groups = group_rows(names, max_rows)
    rows = groups.of[pd.Categorical(vm, categories=names).codes]
    bins = np.maximum(np.ceil(np.round(trace["time_s"].to_numpy() / step, 9)).astype(np.int64) - 1, 0)
    frame = pd.DataFrame(
        {"row": rows, "bin": bins, "num": trace[f"{metric}_s"].astype(np.float64), "den": accounted_s(trace)}
    )
    sums = frame.groupby(["row", "bin"], sort=True)[["num", "den"]].sum()
    share = _share(sums["num"], sums["den"])
    share = share.mask(share < NOISE_FLOOR, 0.0)
    span = range(int(bins.min()), int(bins.max()) + 1) if len(bins) else range(0)
    grid = share.unstack("bin").reindex(index=range(len(groups.labels)), columns=span)
    grid.index, grid.columns = pd.Index(groups.labels, name="vm"), pd.Index([b * step for b in span], name="from_s")
    grid.attrs["bin_s"] = step
    return grid


def share_heatmap(trace: pd.DataFrame, metric: str = "steal", bin_s: float | None = None, title: str = "",
                  vmax: float | None = None, interval_s: float | None = None) -> Figure:  # fmt: skip
    """`metric` share of each VM's vCPU time per time bin (default: the trace interval), VMs x bins.

    Bins with no accounted vCPU time (samples after the clock stopped) are grey."""
    return share_heatmaps({"": trace}, metric, bin_s, title, vmax, interval_s)


def share_heatmaps(traces: Mapping[str, pd.DataFrame], metric: str = "steal", bin_s: float | None = None,
                   title: str = "", vmax: float | None = None, interval_s: float | None = None,
                   max_rows: int = MAX_HEAT_ROWS) -> Figure:  # fmt: skip
    """One heat map per trace (panels labelled by the keys), on one time axis and one colour scale (0 to `vmax`,
    default the largest share drawn), so that runs compare cell by cell; `max_rows` rows in all panels together (at
    least 32 a panel). Past the end of a shorter run the panel is blank."""
    check_vmax(vmax)
    per_panel = max(min(32, max_rows), max_rows // max(len(traces), 1))  # a 32-VM testbed keeps a row per VM
    grids = {k: heat_grid(t, metric, bin_s, per_panel, interval_s) for k, t in traces.items()}
    top = max((float(np.nanmax(g.to_numpy(float), initial=0.0)) for g in grids.values()), default=0.0)
    scale_top = vmax if vmax is not None else (top if top > 0 else 1.0)
    heights = [max(len(g), 2) for g in grids.values()]
    fig = new_figure(10.0, min(1.2 + 0.16 * sum(heights) + 0.5 * len(grids), 16.0))
    axes = fig.subplots(len(grids), 1, sharex=True, squeeze=False, height_ratios=heights)[:, 0]
    cmap = colormaps["magma"].with_extremes(bad="0.85")
    image = None
    for ax, (label, grid) in zip(axes, grids.items(), strict=True):
        step = grid.attrs["bin_s"]
        lo = float(grid.columns[0]) if len(grid.columns) else 0.0
        hi = float(grid.columns[-1]) + step if len(grid.columns) else step
        image = ax.imshow(grid.to_numpy(dtype=float), aspect="auto", interpolation="nearest", cmap=cmap,
                          extent=(lo, hi, len(grid) - 0.5, -0.5), vmin=0.0, vmax=scale_top)  # fmt: skip
        ax.set_yticks(range(len(grid)), list(grid.index), fontsize=7 if len(grid) > 20 else 9)
        if label:
            ax.set_title(label, fontsize=10, loc="left")
    axes[-1].set_xlabel("time (s)")
    axes[0].set_xlim(min(a.get_xlim()[0] for a in axes), max(a.get_xlim()[1] for a in axes))
    step = next(iter(grids.values())).attrs["bin_s"]
    fig.suptitle(f"{metric} share of vCPU time per {step:g} s" + (f" - {title}" if title else ""))
    extend = "max" if vmax is not None and top > vmax else "neither"
    fig.colorbar(image, ax=list(axes), label=f"{metric} share", extend=extend)
    return fig


def top_vms(trace: pd.DataFrame, by: str = "steal", n: int = 4) -> list[str]:
    """The `n` VMs with the most `by` seconds."""
    totals = trace.groupby(trace["vm"].astype(str))[f"{by}_s"].sum().sort_values(ascending=False, kind="stable")
    return list(totals.index[:n])


def vm_shares(trace: pd.DataFrame, state: str) -> pd.DataFrame:
    """`state` share of each VM's accounted vCPU time per sample: sample times x VMs (trace order)."""
    frame = pd.DataFrame({"time_s": trace["time_s"].to_numpy(float), "vm": trace["vm"].astype(str).to_numpy(),
                          "num": trace[f"{state}_s"].to_numpy(np.float64),
                          "den": accounted_s(trace).to_numpy()})  # fmt: skip
    sums = frame.groupby(["time_s", "vm"], sort=True)[["num", "den"]].sum()
    order = list(dict.fromkeys(frame["vm"]))
    share = _share(sums["num"], sums["den"])
    return share.mask(share < NOISE_FLOOR, 0.0).unstack("vm").reindex(columns=order)


def cluster_share(trace: pd.DataFrame, state: str) -> pd.Series:
    """`state` share of the whole cluster's accounted vCPU time per sample (every VM's seconds summed)."""
    times = trace["time_s"].to_numpy(float)
    num = pd.Series(trace[f"{state}_s"].to_numpy(np.float64)).groupby(times).sum()
    den = pd.Series(accounted_s(trace).to_numpy()).groupby(times).sum()
    share = _share(num, den)
    return share.mask(share < NOISE_FLOOR, 0.0)


def share_lines(trace: pd.DataFrame, vms: Sequence[str] | None = None, n: int = 2, title: str = "",
                interval_s: float | None = None) -> Figure:  # fmt: skip
    """Steal and iowait shares over time. `vms`: those VMs' lines; default: the cluster's share (every VM's seconds
    summed), the band of the VMs' 10th to 90th percentiles, and the `n` VMs with the most steal (iowait when no VM
    has steal), so that a run of hundreds of VMs stays readable. `interval_s`: the run's trace interval (default:
    from the sample times)."""
    names = list(dict.fromkeys(trace["vm"].astype(str)))
    clean = dict(zip(names, clean_names(names), strict=True))
    by = "steal" if trace["steal_s"].sum() > NOISE_FLOOR * accounted_s(trace).sum() else "iowait"
    chosen = list(vms) if vms else top_vms(trace, by, n)
    step = interval_s or trace_interval(trace)
    fig = new_figure(9.0, 5.5)
    ax_steal, ax_io = fig.subplots(2, 1, sharex=True)
    for ax, state in ((ax_steal, "steal"), (ax_io, "iowait")):
        shares = vm_shares(trace, state)
        times = shares.index.to_numpy(float)
        x = np.r_[times[:1] - step, times]  # a sample covers the interval before it: its value from its start

        def stairs(values: np.ndarray, x: np.ndarray = x) -> tuple[np.ndarray, np.ndarray]:
            return x, np.r_[values[:1], values]

        if not vms:
            low, high = np.nanpercentile(shares.to_numpy(float), [10, 90], axis=1) if len(shares.columns) else (
                np.full(len(times), np.nan), np.full(len(times), np.nan))  # fmt: skip
            ax.fill_between(*stairs(low), stairs(high)[1], step="pre", color="0.8", linewidth=0,
                            label=f"VMs 10th-90th percentile ({len(names)} VMs)")  # fmt: skip
            total = cluster_share(trace, state).reindex(times).to_numpy(float)
            ax.plot(*stairs(total), drawstyle="steps-pre", color="black", linewidth=2, label="cluster")
        for i, name in enumerate(chosen):
            values = shares[name].to_numpy(float) if name in shares else np.full(len(times), np.nan)
            label = f"{clean[name]}" + ("" if vms else f" (most {by})" if i == 0 else "")
            ax.plot(*stairs(values), drawstyle="steps-pre", linewidth=1.2, label=label, color=f"C{i}")
        ax.set_ylabel(f"{state} share")
        ax.set_ylim(0, max(ax.get_ylim()[1], 0.01))  # an all-zero share stays a flat line at the bottom
        ax.grid(alpha=0.3)
    ax_io.set_xlabel("time (s)")
    handles, labels = ax_steal.get_legend_handles_labels()
    fig.legend(handles, labels, loc="outside lower center", ncols=min(len(labels), 4), fontsize=8)
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


def rank_bins(parts: pd.DataFrame, nbins: int = BODY_BINS) -> pd.DataFrame:
    """`breakdown_parts` in at most `nbins` bins of consecutive ranks: each part's mean, the slowest runtime in the
    bin (`max_s`), its maps (`maps`) and the rank of its first map (`first`, 0-based)."""
    n = len(parts)
    size = max(1, -(-n // nbins))  # ceil: equal bins of consecutive ranks
    bin_of = np.arange(n) // size
    grouped = parts.groupby(bin_of)
    out = grouped[list(BREAKDOWN_COLORS)].mean()
    return out.assign(max_s=grouped["runtime_s"].max(), maps=grouped.size(), first=np.arange(len(out)) * size)


def _stacked_bars(ax, x: np.ndarray, parts: pd.DataFrame, width: float) -> None:
    bottom = np.zeros(len(x))
    for name, color in BREAKDOWN_COLORS.items():
        ax.bar(x, parts[name].to_numpy(float), width, bottom=bottom, color=color, linewidth=0, label=name)
        bottom = bottom + parts[name].to_numpy(float)


def task_breakdown(tasks: pd.DataFrame, title: str = "", tail: int | None = None) -> Figure:
    """Successful map attempts sorted by runtime, each stacked as cputime, iowait, steal and other.

    Left: every map, binned by rank (`BODY_BINS` bars of the parts' means; the line is the slowest map of each
    bin). Right, on the same time axis: the `tail` slowest maps one bar each (default: the slowest decile, at most
    `TAIL_BARS`), so the stragglers that decide a makespan show whatever the number of maps."""
    parts = breakdown_parts(tasks)
    n = len(parts)
    k = min(tail if tail is not None else min(max(-(-n // 10), 1), TAIL_BARS), n)
    fig = new_figure(11.0, 4.8)
    body_ax, tail_ax = fig.subplots(1, 2, sharey=True, width_ratios=[2, 1])
    binned = rank_bins(parts)
    centers = binned["first"].to_numpy(float) + (binned["maps"].to_numpy(float) - 1) / 2 + 1  # ranks from 1
    width = float(binned["maps"].iloc[0]) if len(binned) else 1.0
    _stacked_bars(body_ax, centers, binned, width)
    if width > 1:
        body_ax.step(np.r_[centers - width / 2, centers[-1:] + width / 2], np.r_[binned["max_s"], binned["max_s"][-1:]],
                     where="post", color="black", linewidth=1, label="slowest in bin")  # fmt: skip
    body_ax.set_xlim(0.5, n + 0.5)
    binned_text = f", {width:.0f} per bar (mean)" if width > 1 else ""
    body_ax.set_xlabel(f"map rank by runtime ({n} successful attempts{binned_text})")
    body_ax.set_ylabel("time (s)")
    body_ax.set_ylim(0, 1.15 * float(parts["runtime_s"].max()) if n else 1.0)  # room for the tail's labels
    body_ax.legend(loc="upper left", fontsize=8)
    slowest = parts.iloc[n - k :]
    ranks = np.arange(n - k + 1, n + 1)
    _stacked_bars(tail_ax, ranks.astype(float), slowest, 0.8)
    tail_ax.set_xlim(n - k + 0.5, n + 0.5)
    top = slowest["runtime_s"].to_numpy(float)
    for r, t in list(zip(ranks, top, strict=True))[-3:]:  # upright labels overlap past a dozen bars
        tail_ax.annotate(f"{t:.0f} s", (r, t), xytext=(0, 2), textcoords="offset points", ha="center", va="bottom",
                         fontsize=8, rotation=90 if k > 12 else 0)  # fmt: skip
    share = f"{100 * k / n:.0f} %" if n else "0 %"
    tail_ax.set_title(f"slowest {k} maps ({share})", fontsize=10)
    tail_ax.set_xlabel("map rank by runtime")
    tail_ax.xaxis.get_major_locator().set_params(integer=True)
    fig.suptitle("map task runtime breakdown" + (f" - {title}" if title else ""))
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
    near 0 one that reshuffles. Each pair of periods is a point; points are joined only where there are 3 or more
    (two joined points would draw a trend that two periods cannot show); a resource with no ranked pair (every
    VM's entitlement alike) is named in a note, not drawn."""
    fig = new_figure(9.0, 4.0)
    ax = fig.add_subplot()
    times = np.asarray(persistence.get("times_s", []), dtype=float)
    missing = []
    for i, (name, label) in enumerate((("cpu", "CPU"), ("mem", "memory"))):
        rho = np.array([np.nan if r is None else r for r in persistence.get(f"{name}_by_period", [])], dtype=float)
        have = np.isfinite(rho)
        if not have.any():
            missing.append(label)
            continue
        mean = persistence.get(name)
        pairs = int(have.sum())
        text = f"{label} (mean {mean:.2f}, {pairs} pair{'s' * (pairs > 1)})" if mean is not None else label
        style = "-" if pairs >= 3 else "none"
        ax.plot(times[: rho.size][have], rho[have], marker="os"[i], markersize=7 - 2 * i, linestyle=style,
                color=f"C{i}", label=text)  # fmt: skip
    if missing:
        ax.text(0.99, 0.03, f"no ranked pair of periods: {', '.join(missing)} (every VM's entitlement alike)",
                transform=ax.transAxes, ha="right", va="bottom", fontsize=8, color="0.3")  # fmt: skip
    ax.axhline(0.0, color="grey", linewidth=0.8)
    ax.set_ylim(-1.05, 1.05)
    if len(times):
        pad = max(float(np.ptp(times)) * 0.05, 1.0)
        ax.set_xlim(float(times.min()) - pad, float(times.max()) + pad)
    ax.set_xlabel("time of the allocation (s)")
    ax.set_ylabel("rank correlation with the period before")
    ax.grid(alpha=0.3)
    if ax.get_legend_handles_labels()[0]:
        ax.legend(fontsize=8, loc="lower left")
    ax.set_title("entitlement persistence" + (f" - {title}" if title else ""))
    return fig
