"""The dashboard's panels as matplotlib Figures (Agg, outside pyplot, like `scenarios.plots`).

Each panel builds its Figure once for a model (axes, ticks, one artist per series) and `update(snap)` only moves
the artists' data: building a figure's axes and tick labels costs several times more than drawing it, and the
VMs, nodes and jobs of a model do not change while it runs. So a redraw costs the same at the first map and the
last, whatever the number of tasks. `draw(kind, snap)` gives a one-off Figure for a notebook.
"""

from __future__ import annotations

import io

import numpy as np
from matplotlib import colormaps
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

from scenarios.dashboard.panels import CPU_COLUMNS, HEAT_METRICS, Snapshot, heat_grid

DPI = 80
MAX_JOBS = 12  # job rows shown: the window around the first unfinished job


def new_figure(width: float, height: float, **margins: float) -> Figure:
    """A Figure on an Agg canvas with fixed margins (constrained layout would cost more than the drawing)."""
    fig = Figure(figsize=(width, height))
    FigureCanvasAgg(fig)
    fig.subplots_adjust(**{"left": 0.08, "right": 0.98, "top": 0.93, "bottom": 0.1, "hspace": 0.25, **margins})
    return fig


def png(fig: Figure) -> bytes:
    """The figure as PNG bytes: what the page sends."""
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=DPI)
    return buf.getvalue()


def _note(fig: Figure, text: str) -> Figure:
    fig.text(0.5, 0.5, text, ha="center", va="center", color="0.4")
    return fig


def _heights(bars, values) -> None:
    for rect, h in zip(bars, np.asarray(values, dtype=np.float64), strict=True):
        rect.set_height(h)


class HeatPanel:
    """Per-VM shares of steal, iowait, usr+sys and idle over time: the `vcloud trace` heat map, live."""

    def __init__(self, snap: Snapshot) -> None:
        self.vms = [str(v) for v in snap.vms.index]
        n = max(len(self.vms), 1)
        self.fig = new_figure(11.0, min(max(3.5, 0.12 * n + 1.5), 6.0), right=0.9, wspace=0.05)
        self.axes = self.fig.subplots(2, 2, sharex=True, sharey=True).ravel()
        cmap = colormaps["magma"].with_extremes(bad="0.85")
        self.images = {}
        for ax, metric in zip(self.axes, HEAT_METRICS, strict=True):
            self.images[metric] = ax.imshow(np.full((n, 1), np.nan), aspect="auto", interpolation="nearest",
                                            cmap=cmap, vmin=0.0, vmax=1.0, extent=(0, 1, n - 0.5, -0.5))  # fmt: skip
            ax.set_title(f"{metric} share", fontsize=9)
            ax.tick_params(labelsize=7)
        ticks = list(range(0, len(self.vms), max(1, len(self.vms) // 16)))
        for ax in self.axes[::2]:
            ax.set_yticks(ticks, [self.vms[i] for i in ticks], fontsize=6)
        for ax in self.axes[2:]:
            ax.set_xlabel("time (s)", fontsize=8)
        self.fig.colorbar(self.images["steal"], cax=self.fig.add_axes((0.92, 0.1, 0.015, 0.83)),
                          label="share of vCPU time")  # fmt: skip
        self.update(snap)

    def update(self, snap: Snapshot) -> None:
        grid = heat_grid(snap.trace)
        if not len(grid.times):
            return
        rows = [grid.vms.index(v) for v in self.vms if v in grid.vms]
        step = float(np.min(np.diff(grid.times))) if len(grid.times) > 1 else float(grid.times[0])
        extent = (float(grid.times[0]) - step, float(grid.times[-1]), len(rows) - 0.5, -0.5)
        for metric, image in self.images.items():
            image.set_data(grid.shares[metric][rows])
            image.set_extent(extent)
        self.axes[0].set_xlim(extent[0], extent[1])


class NodePanel:
    """Per node: running maps and reduces against their slots (FlexSlot moves them), and the tasks finished there
    (FlexSlot Fig 4 as it forms)."""

    def __init__(self, snap: Snapshot) -> None:
        self.fig = new_figure(11.0, 5.0, bottom=0.16, right=0.94)
        t = snap.nodes
        if t is None or not len(t):
            _note(self.fig, "no TaskTrackers in this scenario")
            self.nodes = None
            return
        self.nodes = list(t["node"])
        x = np.arange(len(t))
        edges = np.r_[x, x[-1] + 1] - 0.5
        self.ax_run, self.ax_done = self.fig.subplots(2, 1, sharex=True)
        zero = np.zeros(len(t))
        self.run_maps = self.ax_run.bar(x - 0.2, zero, 0.4, label="running maps", color="tab:blue")
        self.run_reduces = self.ax_run.bar(x + 0.2, zero, 0.4, label="running reduces", color="tab:orange")
        (self.map_slots,) = self.ax_run.step(edges, np.r_[zero, 0], where="post", color="navy", label="map slots")
        (self.reduce_slots,) = self.ax_run.step(edges, np.r_[zero, 0], where="post", color="darkred", linestyle="--",
                                                label="reduce slots")  # fmt: skip
        self.ax_heap = self.ax_run.twinx()
        (self.heap,) = self.ax_heap.plot(x, zero, "k.", markersize=4, label="slot heap MB")
        self.ax_heap.set_ylabel("slot heap MB", fontsize=8)
        self.ax_run.set_ylabel("attempts / slots", fontsize=8)
        self.ax_run.legend(fontsize=7, ncol=4, loc="upper left")
        self.done_maps = self.ax_done.bar(x, zero, label="maps finished", color="tab:blue")
        self.done_reduces = self.ax_done.bar(x, zero, label="reduces finished", color="tab:orange")
        self.mean = self.ax_done.axhline(0.0, color="k", linestyle=":", linewidth=1, label="mean maps finished")
        self.ax_done.set_ylabel("tasks finished", fontsize=8)
        self.ax_done.legend(fontsize=7, ncol=3, loc="upper left")
        self.ax_done.set_xticks(x, self.nodes, rotation=90, fontsize=6)
        for ax in (self.ax_run, self.ax_done, self.ax_heap):
            ax.tick_params(axis="y", labelsize=7)
        self.update(snap)

    def update(self, snap: Snapshot) -> None:
        if self.nodes is None or snap.nodes is None:
            return
        t = snap.nodes.set_index("node").reindex(self.nodes).fillna(0)
        _heights(self.run_maps, t["running_maps"])
        _heights(self.run_reduces, t["running_reduces"])
        self.map_slots.set_ydata(np.r_[t["map_slots"], t["map_slots"].iloc[-1]])
        self.reduce_slots.set_ydata(np.r_[t["reduce_slots"], t["reduce_slots"].iloc[-1]])
        top = max(float(t[["map_slots", "reduce_slots", "running_maps", "running_reduces"]].to_numpy().max()), 1.0)
        self.ax_run.set_ylim(0, top * 1.3)  # room for the legend
        heap = t["heap_mb"].to_numpy(np.float64)
        self.heap.set_ydata(heap)
        finite = heap[np.isfinite(heap)]
        self.ax_heap.set_ylim(0, max(float(finite.max()) * 1.3, 1.0) if len(finite) else 1.0)
        _heights(self.done_maps, t["maps_done"])
        _heights(self.done_reduces, t["reduces_done"])
        for rect, bottom in zip(self.done_reduces, t["maps_done"].to_numpy(np.float64), strict=True):
            rect.set_y(bottom)
        self.mean.set_ydata([float(t["maps_done"].mean())] * 2)
        self.ax_done.set_ylim(0, max(float((t["maps_done"] + t["reduces_done"]).max()), 1.0) * 1.3)


class VMPanel:
    """Per VM: CPU demand, entitlement and use (MHz); memory granted, resident, active and, as the cloud models
    them, page cache, dirty pages and balloon (MB)."""

    def __init__(self, snap: Snapshot) -> None:
        self.fig = new_figure(11.0, 5.0, bottom=0.16)
        v = snap.vms
        self.vms = [str(n) for n in v.index]
        self.memory = [c for c in v.columns if c not in CPU_COLUMNS]
        if not self.vms:
            _note(self.fig, "no VMs")
            return
        x = np.arange(len(v))
        zero = np.zeros(len(v))
        self.ax_cpu, self.ax_mem = self.fig.subplots(2, 1, sharex=True)
        self.entitlement = self.ax_cpu.bar(x, zero, 0.8, color="0.8", label="entitlement")
        self.used = self.ax_cpu.bar(x, zero, 0.5, color="tab:green", label="used")
        (self.demand,) = self.ax_cpu.plot(x, zero, "k_", markersize=9, markeredgewidth=2, label="demand")
        self.ax_cpu.set_ylabel("CPU MHz", fontsize=8)
        self.ax_cpu.legend(fontsize=7, ncol=3, loc="upper left")
        width = 0.8 / max(len(self.memory), 1)
        self.mem_bars = {
            col: self.ax_mem.bar(x - 0.4 + width * (i + 0.5), zero, width, label=col)
            for i, col in enumerate(self.memory)
        }
        self.ax_mem.set_ylabel("memory MB", fontsize=8)
        self.ax_mem.legend(fontsize=7, ncol=len(self.memory), loc="upper left")
        self.ax_mem.set_xticks(x, self.vms, rotation=90, fontsize=6)
        for ax in (self.ax_cpu, self.ax_mem):
            ax.tick_params(axis="y", labelsize=7)
        self.update(snap)

    def update(self, snap: Snapshot) -> None:
        if not self.vms or not len(snap.vms):
            return
        v = snap.vms.reindex(self.vms).fillna(0.0)
        _heights(self.entitlement, v["entitlement"])
        _heights(self.used, v["used"])
        self.demand.set_ydata(v["demand"].to_numpy(np.float64))
        self.ax_cpu.set_ylim(0, max(float(v[list(CPU_COLUMNS)].to_numpy().max()), 1.0) * 1.3)
        for col, bars in self.mem_bars.items():
            _heights(bars, v[col] if col in v else np.zeros(len(v)))
        top = float(v[self.memory].to_numpy().max()) if self.memory else 1.0
        self.ax_mem.set_ylim(0, max(top, 1.0) * 1.3)


class JobPanel:
    """Jobs' map and reduce progress (done, and running, as fractions of their tasks), state and time so far; the
    CDF of the finished maps' runtimes."""

    def __init__(self, snap: Snapshot) -> None:
        self.fig = new_figure(11.0, 3.8, left=0.2, bottom=0.14, wspace=0.25)
        if snap.jobs is None:
            _note(self.fig, "no jobs in this scenario")
            self.rows = 0
            return
        self.rows = max(min(len(snap.jobs), MAX_JOBS), 1)
        self.ax_jobs, self.ax_cdf = self.fig.subplots(1, 2, width_ratios=(1.2, 1))
        y = np.arange(self.rows)[::-1]  # first job on top
        zero = np.zeros(self.rows)
        self.bars = {}
        for offset, kind, color in ((0.2, "maps", "tab:blue"), (-0.2, "reduces", "tab:orange")):
            done = self.ax_jobs.barh(y + offset, zero, 0.38, color=color, label=f"{kind} done")
            run = self.ax_jobs.barh(y + offset, zero, 0.38, color=color, alpha=0.35, label=f"{kind} running")
            self.bars[kind] = (done, run)
        self.ax_jobs.set_yticks(y, [""] * self.rows, fontsize=7)
        self.ax_jobs.set_xlim(0, 1)
        self.ax_jobs.set_xlabel("fraction of the job's tasks", fontsize=8)
        self.ax_jobs.legend(fontsize=6, ncol=2, loc="lower right")
        (self.cdf,) = self.ax_cdf.step([], [], where="post")
        self.ax_cdf.set_ylim(0, 1.02)
        self.ax_cdf.set_ylabel("CDF", fontsize=8)
        self.ax_cdf.grid(alpha=0.3)
        for ax in (self.ax_jobs, self.ax_cdf):
            ax.tick_params(labelsize=7)
        self.update(snap)

    def update(self, snap: Snapshot) -> None:
        if not self.rows or snap.jobs is None:
            return
        jobs = shown_jobs(snap.jobs, self.rows)
        for kind, (done_bars, run_bars) in self.bars.items():
            total = np.zeros(self.rows)
            done, run = np.zeros(self.rows), np.zeros(self.rows)
            total[: len(jobs)] = jobs[kind].to_numpy(np.float64)
            done[: len(jobs)] = jobs[f"{kind}_done"].to_numpy(np.float64)
            run[: len(jobs)] = jobs[f"{kind}_running"].to_numpy(np.float64)
            done = np.divide(done, total, out=np.zeros(self.rows), where=total > 0)
            run = np.divide(run, total, out=np.zeros(self.rows), where=total > 0)
            for rect, d, r, rect_run in zip(done_bars, done, run, run_bars, strict=True):
                rect.set_width(d)
                rect_run.set_x(d)
                rect_run.set_width(r)
        labels = [f"{r.job} {r.name}: {r.state}, {r.elapsed_s:,.0f} s" for r in jobs.itertuples()]
        self.ax_jobs.set_yticklabels(labels + [""] * (self.rows - len(labels)))
        runtimes = np.sort(snap.map_runtimes)
        if len(runtimes):
            self.cdf.set_data(np.r_[runtimes[0], runtimes], np.r_[0.0, np.arange(1, len(runtimes) + 1) / len(runtimes)])
            self.ax_cdf.set_xlim(0, float(runtimes[-1]) * 1.05 or 1.0)
        self.ax_cdf.set_xlabel(f"map runtime (s), {len(runtimes)} finished", fontsize=8)


def shown_jobs(jobs, rows: int):
    """At most `rows` jobs: from two before the first unfinished one (all of them when they fit)."""
    if len(jobs) <= rows:
        return jobs
    unfinished = np.flatnonzero(~jobs["state"].isin(["succeeded", "failed"]).to_numpy())
    first = int(unfinished[0]) if len(unfinished) else len(jobs) - rows
    start = min(max(first - 2, 0), len(jobs) - rows)
    return jobs.iloc[start : start + rows]


PANELS = {"heat map": HeatPanel, "nodes": NodePanel, "VMs": VMPanel, "jobs": JobPanel}


def draw(kind: str, snap: Snapshot) -> Figure:
    """A one-off Figure of one panel (`PANELS`' keys) for a snapshot, e.g. in a notebook."""
    return PANELS[kind](snap).fig
