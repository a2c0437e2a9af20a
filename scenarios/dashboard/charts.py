"""The dashboard's Vega-Lite panels: specs written with Altair over named datasets, and `Board`, which keeps each
chart's datasets up to date from a `Snapshot` and sends only what a step changed (`vega.LiveChart`).

Panels: the cluster over time (CPU demand, entitlement, use and the pool; memory; running maps and reduces; steal
and iowait), a per-VM heat map of the CPU states on a fixed 0-1 colour scale (choose the state in the chart), the
host view (which VMs share a host, their entitlement, demand and use), slots and tasks per node, memory per VM, a
per-node task timeline and, for Fair, Capacity and Quincy, the running attempts of each pool or queue over time.
Time series and the heat map grow at their end: a step sends its new bins (and the last one, still filling); the
per-VM and per-node charts are small (at most `views.MAX_ROWS` rows) and are replaced.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any

import altair as alt
import numpy as np
import pandas as pd

from scenarios.dashboard import views
from scenarios.dashboard.panels import HEAT_METRICS, Snapshot
from scenarios.dashboard.vega import LiveChart

WIDTH = 640  # px of a chart's plotting area: a 1440 px window less the sidebar, the axis labels and the legend
FONT = {"labelFontSize": 12, "titleFontSize": 13}
CONFIG = {
    "axis": {**FONT, "labelLimit": 260},
    "legend": {**FONT, "labelLimit": 220, "orient": "right"},
    "header": {"labelFontSize": 13, "titleFontSize": 13},
    "title": {"fontSize": 14, "subtitleFontSize": 12, "anchor": "start"},
    "view": {"stroke": None},
}
SHARE_PANELS = ("fair", "capacity", "quincy")  # schedulers with pools or queues
TIME = alt.X("t:Q", title="time (s)")


def _spec(chart: alt.TopLevelMixin) -> dict[str, Any]:
    spec = chart.configure(**CONFIG).to_dict(validate=False)
    spec.pop("datasets", None)
    return spec


@lru_cache(maxsize=8)  # specs hold no data: built once per process (Altair takes ~0.1 s each)
def series_spec(hadoop: bool) -> dict[str, Any]:
    """One line chart per quantity (running attempts with Hadoop), on the same time axis; drag to pan, wheel to
    zoom."""
    charts = []
    for i, panel in enumerate([*views.SERIES_PANELS, *(["running attempts"] if hadoop else [])]):
        base = alt.Chart(alt.NamedData("series")).transform_filter(alt.datum.panel == panel)
        line = base.mark_line(interpolate="step-before").encode(
            x=TIME, y=alt.Y("value:Q", title=panel),
            color=alt.Color("series:N", title=None, legend=alt.Legend(orient="right")),
            tooltip=[alt.Tooltip("t:Q", title="time (s)", format=",.0f"), "series:N",
                     alt.Tooltip("value:Q", format=",.3~f")],
        )  # fmt: skip
        zoom = alt.selection_interval(bind="scales", encodings=["x"], name=f"zoom{i}")  # one per chart (Vega-Lite 5.2)
        charts.append(line.properties(width=WIDTH, height=110).add_params(zoom))
    top = alt.vconcat(*charts, spacing=12).resolve_scale(color="independent")
    return _spec(top.properties(title={"text": "The cluster over time", "subtitle": "means per time bin"}))


@lru_cache(maxsize=8)  # specs hold no data: built once per process (Altair takes ~0.1 s each)
def heat_spec(rows: int) -> dict[str, Any]:
    """Per VM (or group of VMs) and time bin: the chosen CPU state's share of the vCPU time, 0 to 1 always."""
    metric = alt.param(name="metric", value="steal",
                       bind=alt.binding_select(options=list(HEAT_METRICS), name="CPU state: "))  # fmt: skip
    chart = alt.Chart(alt.NamedData("heat")).transform_filter("datum.metric == metric").mark_rect().encode(
        x=alt.X("t0:Q", title="time (s)"), x2="t1:Q",
        y=alt.Y("row:N", title=None, sort=alt.EncodingSortField("order")),
        color=alt.Color("share:Q", title="share", scale=alt.Scale(domain=[0, 1], scheme="magma")),
        tooltip=["row:N", alt.Tooltip("t0:Q", title="from (s)"), alt.Tooltip("t1:Q", title="to (s)"), "metric:N",
                 alt.Tooltip("share:Q", format=".1%")],
    ).add_params(metric)  # fmt: skip
    height = int(min(max(14 * rows, 160), 700))
    return _spec(
        chart.properties(
            width=WIDTH,
            height=height,
            title={
                "text": "Per-VM share of vCPU time",
                "subtitle": "choose the state below the chart; grey: nothing accounted",
            },
        )
    )


@lru_cache(maxsize=8)  # specs hold no data: built once per process (Altair takes ~0.1 s each)
def host_spec() -> dict[str, Any]:
    """Each shown host's VMs: entitlement (wide grey bar), use (green) and demand (black tick), MHz."""
    base = alt.Chart(alt.NamedData("hosts")).encode(
        y=alt.Y("label:N", title=None, sort=alt.EncodingSortField("order")),
        tooltip=["host:N", "vm:N", alt.Tooltip("entitlement:Q", format=",.0f"), alt.Tooltip("demand:Q", format=",.0f"),
                 alt.Tooltip("used:Q", format=",.0f"), alt.Tooltip("steal:Q", format=".1%")],
    )  # fmt: skip
    ent = base.mark_bar(color="#c7c7c7", size=14).encode(x=alt.X("entitlement:Q", title="CPU MHz (last sample)"))
    used = base.mark_bar(color="#2ca02c", size=7).encode(x="used:Q")
    demand = base.mark_tick(color="black", thickness=2, size=16).encode(x="demand:Q")
    steal = base.mark_bar(color="#d62728").encode(x=alt.X("steal:Q", title="steal share", scale=alt.Scale(
        domain=[0, 1])))  # fmt: skip
    title = {"text": "Hosts: which VMs share a host", "subtitle": "grey: entitlement, green: used, black tick: demand"}
    both = alt.hconcat(alt.layer(ent, used, demand).properties(width=420), steal.properties(width=160))
    return _spec(both.properties(title=title))


@lru_cache(maxsize=8)  # specs hold no data: built once per process (Altair takes ~0.1 s each)
def node_spec() -> dict[str, Any]:
    """Per node: running maps and reduces against their slots, and the tasks finished there."""
    base = alt.Chart(alt.NamedData("nodes")).encode(x=alt.X("node:N", title=None, sort=alt.EncodingSortField("order"),
                                                               axis=alt.Axis(labelAngle=-60)))  # fmt: skip
    tip = ["node:N", "kind:N", "running:Q", "slots:Q", "done:Q"]
    running = base.mark_bar().encode(y=alt.Y("running:Q", title="running / slots"),
                                     color=alt.Color("kind:N", title=None), tooltip=tip)  # fmt: skip
    slots = base.mark_tick(color="black", thickness=2).encode(y="slots:Q", tooltip=tip)
    top = alt.layer(running, slots).properties(width=WIDTH, height=110).facet(
        row=alt.Row("kind:N", title=None, header=alt.Header(labelAngle=0, labelAlign="left")))  # fmt: skip
    done = base.mark_bar().encode(y=alt.Y("sum(done):Q", title="tasks finished"), color=alt.Color("kind:N", title=None),
                                  tooltip=tip).properties(width=WIDTH, height=140)  # fmt: skip
    return _spec(
        alt.vconcat(top, done).properties(
            title={"text": "Slots, running and finished tasks per node", "subtitle": "black tick: the node's slots"}
        )
    )


@lru_cache(maxsize=8)  # specs hold no data: built once per process (Altair takes ~0.1 s each)
def memory_spec() -> dict[str, Any]:
    chart = alt.Chart(alt.NamedData("memory")).mark_tick(thickness=3).encode(
        x=alt.X("vm:N", title=None, sort=alt.EncodingSortField("order"), axis=alt.Axis(labelAngle=-60)),
        y=alt.Y("mb:Q", title="MB"), color=alt.Color("kind:N", title=None),
        tooltip=["vm:N", "kind:N", alt.Tooltip("mb:Q", format=",.0f")],
    )  # fmt: skip
    return _spec(
        chart.properties(
            width=WIDTH,
            height=220,
            title={
                "text": "Memory per VM",
                "subtitle": "granted, resident, active, page cache, dirty, balloon, swap (MB)",
            },
        )
    )


@lru_cache(maxsize=8)  # specs hold no data: built once per process (Altair takes ~0.1 s each)
def gantt_spec(rows: int) -> dict[str, Any]:
    zoom = alt.selection_interval(bind="scales", encodings=["x"], name="gantt_zoom")
    chart = alt.Chart(alt.NamedData("gantt")).mark_bar(height=9).encode(
        x=alt.X("start:Q", title="time (s)"), x2="end:Q", y=alt.Y("node:N", title=None),
        color=alt.Color("kind:N", title=None),
        opacity=alt.condition("datum.state == 'killed' || datum.state == 'failed'", alt.value(0.35), alt.value(0.9)),
        stroke=alt.condition("datum.speculative", alt.value("black"), alt.value(None)),
        tooltip=["attempt:N", "node:N", "state:N", alt.Tooltip("start:Q", format=",.1f"),
                 alt.Tooltip("end:Q", format=",.1f"), "speculative:N"],
    ).add_params(zoom)  # fmt: skip
    return _spec(
        chart.properties(
            width=WIDTH,
            height=int(min(max(16 * rows, 120), 520)),
            title={"text": "Task timeline per node", "subtitle": "faded: killed or failed; outlined: speculative"},
        )
    )


@lru_cache(maxsize=8)  # specs hold no data: built once per process (Altair takes ~0.1 s each)
def shares_spec() -> dict[str, Any]:
    chart = alt.Chart(alt.NamedData("shares")).mark_area(interpolate="step-before").encode(
        x=TIME, y=alt.Y("running:Q", title="running attempts", stack=True), color=alt.Color("pool:N", title=None),
        tooltip=[alt.Tooltip("t:Q", format=",.0f"), "pool:N", alt.Tooltip("running:Q", format=",.1f")],
    )  # fmt: skip
    return _spec(
        chart.properties(
            width=WIDTH,
            height=160,
            title={
                "text": "Running attempts per pool or queue",
                "subtitle": "the scheduler's shares as they were taken",
            },
        )
    )


class Board:
    """Every chart of one model, fed by its snapshots: `update(snap)` changes the charts' datasets; `charts[kind]`
    holds what to send. A snapshot earlier than the last one (a replay moved back) starts the board afresh."""

    def __init__(self, snap: Snapshot) -> None:
        vms = list(snap.vms.index.astype(str)) or list(dict.fromkeys(snap.trace["vm"].astype(str)))
        self.grid = views.TraceGrid.of(vms)
        self.time = -np.inf
        self.factor = 1
        self.running = pd.DataFrame()
        self.pool_running = pd.DataFrame()
        self.prev_nodes: pd.DataFrame | None = None
        self.slot_events: list[tuple[float, str, str]] = []
        self.gantt_nodes: set[str] | None = None
        self.gantt_sent: set[str] = set()
        self.gantt_all = False  # the timeline draws every node (then a step sends only its new attempts)
        self.gantt_time = -np.inf  # the time of the tasks table the timeline last read
        self.task_events: list[tuple[float, str, str, str]] = []
        self.events_time = -np.inf  # the time of the tasks table the event log last read
        self.notes: dict[str, str] = {}
        hadoop = snap.nodes is not None
        self.shares = hadoop and (snap.scheduler in SHARE_PANELS)
        rows = len(self.grid.groups.labels)
        nodes = 0 if snap.nodes is None else len(snap.nodes)
        self.charts: dict[str, LiveChart] = {
            "cluster": LiveChart(series_spec(hadoop), ["series"], "cluster"),
            "heat map": LiveChart(heat_spec(rows), ["heat"], "heatmap"),
            "hosts": LiveChart(host_spec(), ["hosts"], "hosts"),
            "memory": LiveChart(memory_spec(), ["memory"], "memory"),
        }
        if hadoop:
            self.charts["nodes"] = LiveChart(node_spec(), ["nodes"], "nodes")
            self.charts["timeline"] = LiveChart(gantt_spec(min(nodes, views.MAX_GANTT_NODES)), ["gantt"], "timeline")
        if self.shares:
            self.charts["shares"] = LiveChart(shares_spec(), ["shares"], "shares")
        self.update(snap)

    def update(self, snap: Snapshot) -> None:
        if snap.time_s < self.time:
            raise ValueError("a board only moves forward: make a new one for an earlier time")
        self.time = snap.time_s
        self._time_series(snap)
        self._hosts_and_memory(snap)
        if snap.nodes is not None and "nodes" in self.charts:
            self._nodes(snap)
        if snap.tasks is not None and "timeline" in self.charts:
            self._gantt(snap)
        for chart in self.charts.values():
            chart.flush()

    def _time_series(self, snap: Snapshot) -> None:
        grid = self.grid
        before = len(grid.times)
        grid.add(snap.trace)
        new_times = grid.times[before:]
        if snap.tasks is not None and len(new_times):
            self.running = pd.concat([self.running, views.running_at(snap.tasks, new_times)], ignore_index=True)
            if self.shares:
                by = snap.tasks["job"].astype(str).map(snap.pools).fillna("other")
                per = views.running_at(snap.tasks, new_times, by=by).reset_index(drop=True)
                self.pool_running = pd.concat([self.pool_running, per], ignore_index=True).fillna(0.0)
        if not len(grid.times) or (not len(new_times) and before):
            return
        factor = grid.bin_factor()
        since = 0 if factor != self.factor else before // factor
        self.factor = factor
        running = self.running if snap.tasks is not None and len(self.running) == len(grid.times) else None
        pool = None if snap.pool_cpu_mhz is None else snap.pool_cpu_mhz / 1000.0
        series = views.series_rows(grid, factor, snap.interval_s, since, running, pool)
        heat = views.heat_rows(grid, factor, snap.interval_s, since)
        for name, chart, rows in (("series", "cluster", series), ("heat", "heat map", heat)):
            if since == 0:
                self.charts[chart].set(name, rows)
            else:
                self.charts[chart].upsert(name, rows, "b", since)
        if self.shares and len(self.pool_running) == len(grid.times):
            idx = np.arange(len(grid.times)) // factor
            means = self.pool_running.assign(b=idx).groupby("b").mean()
            _, ends = grid.bin_edges(factor, snap.interval_s)
            long = means.reset_index().melt(id_vars="b", var_name="pool", value_name="running")
            self.charts["shares"].set("shares", long.assign(t=ends[long["b"].to_numpy()]))
        if grid.groups.grouped:
            self.notes["heat map"] = f"{len(grid.vms)} VMs in {len(grid.groups.labels)} groups of consecutive VMs"

    def _hosts_and_memory(self, snap: Snapshot) -> None:
        if snap.hosts is not None and len(snap.vms):
            hosts, note = views.host_rows(snap, snap.hosts)
            host, vm = hosts["host"].to_numpy(object), hosts["vm"].to_numpy(object)
            by = np.lexsort((vm.astype(str), host.astype(str)))  # by host, then VM
            label = np.array([f"{h} · {v}" for h, v in zip(host[by], vm[by], strict=True)], dtype=object)
            hosts = hosts.iloc[by].assign(label=pd.Series(label, dtype=object, index=hosts.index[by]),
                                          order=np.arange(len(hosts)))  # fmt: skip
            self.charts["hosts"].set("hosts", hosts)
            self.notes["hosts"] = note
        if len(snap.vms):
            memory, grouped = views.memory_rows(snap.vms)
            self.charts["memory"].set("memory", memory)
            if grouped:
                self.notes["memory"] = "mean per VM of groups of consecutive VMs"

    def _nodes(self, snap: Snapshot) -> None:
        rows, grouped = views.node_rows(snap.nodes)
        both = {c: np.r_[rows[m].to_numpy(np.float64), rows[r].to_numpy(np.float64)]
                for c, m, r in (("running", "running_maps", "running_reduces"), ("slots", "map_slots", "reduce_slots"),
                                ("done", "maps_done", "reduces_done"))}  # fmt: skip
        n = len(rows)
        long = views.frame_of({"node": np.tile(rows["node"].to_numpy(object), 2), "order": np.tile(rows["order"], 2),
                             "kind": np.repeat(np.array(["maps", "reduces"], dtype=object), n), **both})  # fmt: skip
        self.charts["nodes"].set("nodes", long)
        if grouped:
            self.notes["nodes"] = f"{len(snap.nodes)} nodes in groups of consecutive nodes (sums)"
        self.slot_events += views.slot_changes(self.prev_nodes, snap.nodes, snap.time_s)
        self.prev_nodes = snap.nodes

    def _gantt(self, snap: Snapshot) -> None:
        chart = self.charts["timeline"]
        if self.gantt_all and self.gantt_nodes is not None:
            # every node is drawn: only the running attempts and those that ended since the last step are new
            rows, _ = views.gantt_rows(snap.tasks, snap.time_s, only=self._unsent(snap.tasks))
            self.gantt_time = snap.time_s
            if set(rows["node"]) <= self.gantt_nodes:
                self.gantt_sent |= set(rows.loc[~rows["open"], "attempt"])
                chart.upsert_open("gantt", rows, "open")
                return
        rows, note = views.gantt_rows(snap.tasks, snap.time_s)
        self.gantt_time = snap.time_s
        self.notes["timeline"] = note
        self.gantt_all = note.startswith("all")
        nodes = set(rows["node"])
        if nodes != self.gantt_nodes:
            self.gantt_nodes = nodes
            chart.set("gantt", rows)
            self.gantt_sent = set(rows.loc[~rows["open"], "attempt"])
            return
        new = rows[rows["open"] | ~rows["attempt"].isin(self.gantt_sent)]
        self.gantt_sent |= set(new.loc[~new["open"], "attempt"])
        chart.upsert_open("gantt", new, "open")

    def _unsent(self, tasks: pd.DataFrame) -> np.ndarray:
        """The attempts still running or ended since the timeline's last step: those that ended before it were in
        its tasks table then, and drawn (by their end times: `isin` on the attempts' names cost more than the rest
        of the timeline)."""
        end = tasks["end_s"].to_numpy(np.float64)
        return np.isnan(end) | (end > self.gantt_time)

    def events(self, snap: Snapshot) -> pd.DataFrame:
        """The event log at `snap` (its attempts' events read once each: only those since the last call)."""
        if snap.time_s != self.events_time:
            self.task_events += views.task_events(snap.tasks, snap.time_s, since=self.events_time)
            self.events_time = snap.time_s
        return views.event_rows(snap.tasks, snap.time_s, self.grid.redivisions, self.slot_events, self.task_events)
