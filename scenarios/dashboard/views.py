"""The data of the dashboard's Vega-Lite panels, from a `Snapshot` (live model or run directory at time t).

Pure pandas and numpy, no widgets: each function returns the rows a chart draws, so the tests read them.
Large clusters are aggregated (`MAX_ROWS` rows at most: consecutive VMs or nodes grouped, shares summed over the
group's seconds, not averaged over its VMs) or paged to the hosts that matter (most steal). The trace is read
once per sample (`TraceGrid`): a step adds its new samples, and a chart's time axis is binned by a whole number of
samples (`MAX_BINS` bins at most), so a step changes only the last bins.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from scenarios.dashboard.panels import CPU_COLUMNS, HEAT_METRICS, MEMORY_COLUMNS, Snapshot
from scenarios.row_groups import Groups, clean_names
from scenarios.row_groups import group_rows as _group_rows
from scenarios.trace_math import accounted_s

MAX_ROWS = 48  # rows of a per-VM or per-node chart before VMs or nodes are grouped
MAX_BINS = 150  # time bins of the heat map and of the cluster series
MAX_HOSTS = 12  # hosts drawn in the host view (the ones with most steal when there are more)
MAX_GANTT_NODES = 30  # nodes in the task timeline (the ones of the longest attempts when there are more)
MEMORY_TRACE = {"granted": "mem_granted_mb", "active": "mem_active_mb", "page cache": "cache_mb",
                "dirty": "dirty_mb", "balloon": "balloon_mb", "swap": "swap_mb"}  # fmt: skip


def frame_of(columns: dict[str, Any]) -> pd.DataFrame:
    """A frame of arrays, strings kept as Python objects: pandas would turn each string array into an Arrow one
    (1-2 ms a frame, more than the rest of a panel's step), and the frame only goes to JSON."""

    def column(v: Any) -> Any:
        return pd.Series(v, dtype=object, copy=False) if isinstance(v, np.ndarray) and v.dtype.kind == "O" else v

    return pd.DataFrame({k: column(v) for k, v in columns.items()}, copy=False)


def group_rows(names: list[str], max_rows: int = MAX_ROWS) -> Groups:
    """`row_groups.group_rows` with the dashboard's row limit."""
    return _group_rows(names, max_rows)


@dataclass
class TraceGrid:
    """Per sample of the trace: each row group's seconds of every CPU state and the cluster's totals.

    `add(trace)` reads the samples after the last one read, so a step costs its new samples only."""

    vms: list[str]
    groups: Groups
    times: np.ndarray = field(default_factory=lambda: np.zeros(0))
    num: dict[str, np.ndarray] = field(default_factory=dict)  # metric -> (rows, samples) seconds
    den: np.ndarray = field(default_factory=lambda: np.zeros((0, 0)))  # accounted vCPU seconds
    totals: pd.DataFrame = field(default_factory=pd.DataFrame)  # per sample: cluster CPU MHz, memory MB, shares
    entitlement: np.ndarray | None = None  # each VM's CPU entitlement in the last sample
    redivisions: list[tuple[float, int, float]] = field(default_factory=list)  # (time, VMs changed, largest MHz)

    @classmethod
    def of(cls, vms: list[str]) -> TraceGrid:
        grid = cls(list(vms), group_rows(list(vms)))
        n = len(grid.groups.labels)
        grid.num = {m: np.zeros((n, 0)) for m in HEAT_METRICS}
        grid.den = np.zeros((n, 0))
        return grid

    @property
    def last_t(self) -> float:
        return float(self.times[-1]) if len(self.times) else -math.inf

    def add(self, trace: pd.DataFrame) -> int:
        """Read the samples of `trace` after `last_t`; the number of new samples."""
        new = trace[trace["time_s"].to_numpy() > self.last_t]
        if not len(new):
            return 0
        times, cols = np.unique(new["time_s"].to_numpy(np.float64), return_inverse=True)
        vm_rows = _vm_rows(new["vm"], self.vms)
        known = vm_rows >= 0
        rows = self.groups.of[vm_rows[known]]
        cols_k = cols[known]
        shape = (len(self.groups.labels), len(times))
        seconds = {c: new[c].to_numpy(np.float64) for c in _STATE_COLUMNS}  # arrays: pandas' per-call cost is the
        accounted = sum(seconds.values())  # larger part of a step of a few hundred rows
        den = np.zeros(shape)
        np.add.at(den, (rows, cols_k), accounted[known])
        self.den = np.concatenate([self.den, den], axis=1)
        for metric, parts in HEAT_METRICS.items():
            num = np.zeros(shape)
            np.add.at(num, (rows, cols_k), sum(seconds[p] for p in parts)[known])
            self.num[metric] = np.concatenate([self.num[metric], num], axis=1)
        totals = _sample_totals(new, times, cols, accounted, seconds)
        self.totals = pd.concat([self.totals, totals], ignore_index=True) if len(self.totals) else totals
        self._redivisions(new, times, vm_rows)
        self.times = np.r_[self.times, times]
        return len(times)

    def _redivisions(self, new: pd.DataFrame, times: np.ndarray, vm_rows: np.ndarray) -> None:
        """Samples where the pool's division changed: VMs whose CPU entitlement moved by more than 1 MHz."""
        ent = new["cpu_entitlement_mhz"].to_numpy(np.float64)
        t = new["time_s"].to_numpy(np.float64)
        for time in times:
            now = np.full(len(self.vms), np.nan)
            sel = (t == time) & (vm_rows >= 0)
            now[vm_rows[sel]] = ent[sel]
            if self.entitlement is not None:
                moved = np.abs(now - self.entitlement)
                changed = np.nan_to_num(moved) > 1.0
                if changed.any():
                    self.redivisions.append((float(time), int(changed.sum()), float(np.nanmax(moved))))
            self.entitlement = np.where(np.isnan(now), self.entitlement if self.entitlement is not None else now, now)

    def bin_factor(self, max_bins: int = MAX_BINS) -> int:
        """Samples per bin: 1 until there are more than `max_bins` samples, then doubled as often as needed."""
        factor = 1
        while len(self.times) > factor * max_bins:
            factor *= 2
        return factor

    def bin_edges(self, factor: int, interval_s: float) -> tuple[np.ndarray, np.ndarray]:
        """Start and end time of each bin of `factor` samples (a sample covers the interval before it)."""
        starts = self.times[::factor] - interval_s
        ends = self.times[np.minimum(np.arange(factor - 1, len(self.times) + factor - 1, factor), len(self.times) - 1)]
        return starts, ends[: len(starts)]


_STATE_COLUMNS = ("usr_s", "sys_s", "steal_s", "iowait_s", "idle_s")  # `trace_math.accounted_s`'s parts


def _vm_rows(vm: pd.Series, vms: list[str]) -> np.ndarray:
    """Each row's index in `vms` (-1 if not there); a categorical column is mapped by its categories only."""
    if isinstance(vm.dtype, pd.CategoricalDtype):
        at = pd.Index(vms).get_indexer(vm.cat.categories.astype(str))
        codes = vm.cat.codes.to_numpy()
        return np.where(codes >= 0, at[codes], -1).astype(np.int64)
    return pd.Index(vms).get_indexer(vm.astype(str)).astype(np.int64)


def _sample_totals(new: pd.DataFrame, times: np.ndarray, cols: np.ndarray, accounted: np.ndarray | None = None,
                   seconds: dict[str, np.ndarray] | None = None) -> pd.DataFrame:  # fmt: skip
    """The cluster per sample: CPU demand, entitlement and use (GHz), memory (GB), steal and iowait shares.
    `accounted` and `seconds`: the rows' accounted vCPU seconds and CPU-state seconds, when already at hand."""
    n = len(times)
    out = {"time_s": times}
    for label, col in CPU_COLUMNS.items():
        out[label] = np.bincount(cols, new[col].to_numpy(np.float64), n) / 1000.0
    for label, col in MEMORY_TRACE.items():
        if col in new.columns:
            out[label] = np.bincount(cols, new[col].to_numpy(np.float64), n) / 1024.0
    den = np.bincount(cols, accounted_s(new).to_numpy(np.float64) if accounted is None else accounted, n)
    for state in ("steal", "iowait"):
        values = new[f"{state}_s"].to_numpy(np.float64) if seconds is None else seconds[f"{state}_s"]
        out[state] = np.divide(np.bincount(cols, values, n), den, out=np.full(n, np.nan), where=den > 0)
    return pd.DataFrame(out)


def heat_rows(grid: TraceGrid, factor: int, interval_s: float, from_bin: int = 0) -> pd.DataFrame:
    """Heat-map cells of the bins from `from_bin` on: row, bin, its start and end, metric, share (None: nothing
    accounted)."""
    starts, ends = grid.bin_edges(factor, interval_s)
    nbins = len(starts)
    if from_bin >= nbins:
        return pd.DataFrame(columns=["row", "order", "b", "t0", "t1", "metric", "share"])
    first = from_bin * factor  # the bins before from_bin are not summed again: a step costs its new bins
    idx = np.arange(first, len(grid.times)) // factor - from_bin
    den = _bin_sum(grid.den[:, first:], idx, nbins - from_bin)
    shares = []
    for metric in HEAT_METRICS:
        num = _bin_sum(grid.num[metric][:, first:], idx, nbins - from_bin)
        shares.append(np.divide(num, den, out=np.full(num.shape, np.nan), where=den > 0).ravel())
    labels = np.asarray(grid.groups.labels, dtype=object)
    nrows, bins, k = len(labels), np.arange(from_bin, nbins), len(HEAT_METRICS)
    cells = nrows * len(bins)  # one frame: each metric's (rows x bins) cells in turn
    return frame_of({
        "row": np.tile(np.repeat(labels, len(bins)), k), "order": np.tile(np.repeat(np.arange(nrows), len(bins)), k),
        "b": np.tile(bins, nrows * k), "t0": np.tile(starts[from_bin:], nrows * k),
        "t1": np.tile(ends[from_bin:], nrows * k),
        "metric": np.repeat(np.asarray(list(HEAT_METRICS), dtype=object), cells),
        "share": np.concatenate(shares),
    })  # fmt: skip


def _bin_sum(values: np.ndarray, idx: np.ndarray, nbins: int) -> np.ndarray:
    out = np.zeros((values.shape[0], nbins))
    np.add.at(out, (slice(None), idx), values)
    return out


SERIES_PANELS = {
    "CPU (GHz)": ("demand", "entitlement", "used"),
    "memory (GB)": ("granted", "active", "page cache", "dirty", "balloon", "swap"),
    "share of vCPU time": ("steal", "iowait"),
}


def series_rows(grid: TraceGrid, factor: int, interval_s: float, from_bin: int, running: pd.DataFrame | None,
                pool_ghz: float | None = None) -> pd.DataFrame:  # fmt: skip
    """The cluster's time series (long: bin, time, panel, series, value), bins from `from_bin` on: each bin's mean
    of its samples (NaN skipped); `running`: attempts running at each sample (columns per kind, by sample).

    Means of consecutive samples as array sums (`np.add.reduceat`) and one frame at the end: a pandas groupby and a
    frame per series cost more than the model's step on a full-scale run."""
    starts, ends = grid.bin_edges(factor, interval_s)
    nbins = len(starts)
    first = from_bin * factor  # only the samples of the bins sent
    columns = {name: grid.totals[name].to_numpy(np.float64)[first:] for name in grid.totals.columns if name != "time_s"}
    panels = dict(SERIES_PANELS)
    if running is not None:
        panels["running attempts"] = tuple(running.columns)
        columns.update({name: running[name].to_numpy(np.float64)[first:] for name in running.columns})
    sample_bins = np.arange(first, len(grid.times)) // factor
    cuts = np.flatnonzero(np.r_[True, sample_bins[1:] != sample_bins[:-1]]) if len(sample_bins) else sample_bins
    bins = sample_bins[cuts]
    parts: list[tuple[str, str, np.ndarray, np.ndarray]] = []
    for panel, names in panels.items():
        for name in names:
            if name not in columns or not len(cuts):
                continue
            values = _bin_means(columns[name], cuts)
            if panel == "memory (GB)" and not np.nansum(values) and name in ("dirty", "balloon", "swap"):
                continue  # an empty line in the legend says nothing
            parts.append((panel, name, bins, values))
    if pool_ghz is not None and nbins > from_bin:
        b = np.arange(from_bin, nbins)
        parts.append(("CPU (GHz)", "pool capacity", b, np.full(len(b), float(pool_ghz))))
    if not parts:
        return pd.DataFrame(columns=["b", "t", "panel", "series", "value"])
    b = np.concatenate([p[2] for p in parts])
    sizes = [len(p[2]) for p in parts]
    return frame_of({"b": b, "t": ends[b], "panel": np.repeat([p[0] for p in parts], sizes).astype(object),
                         "series": np.repeat([p[1] for p in parts], sizes).astype(object),
                         "value": np.concatenate([p[3] for p in parts])})  # fmt: skip


def _bin_means(values: np.ndarray, cuts: np.ndarray) -> np.ndarray:
    """Means of the runs of samples starting at `cuts`, NaN skipped (NaN where a run has no value)."""
    ok = ~np.isnan(values)
    sums = np.add.reduceat(np.where(ok, values, 0.0), cuts)
    counts = np.add.reduceat(ok.astype(np.float64), cuts)
    return np.divide(sums, counts, out=np.full(len(cuts), np.nan), where=counts > 0)


def running_at(tasks: pd.DataFrame, times: np.ndarray, by: pd.Series | None = None) -> pd.DataFrame:
    """Attempts running at each time (started at or before it, not ended): per kind ("maps", "reduces"), or per
    value of `by` (a pool or queue per attempt) when given."""
    start = tasks["start_s"].to_numpy(np.float64)
    end = tasks["end_s"].to_numpy(np.float64)
    keys = by.to_numpy() if by is not None else np.where(tasks["kind"].to_numpy() == "m", "maps", "reduces")
    out = {}
    names = list(dict.fromkeys(keys.tolist())) if by is not None else ["maps", "reduces"]
    for key in names:
        sel = (keys == key) & ~np.isnan(start)
        s = np.sort(start[sel])
        e = np.sort(np.where(np.isnan(end[sel]), np.inf, end[sel]))
        out[str(key)] = np.searchsorted(s, times, side="right") - np.searchsorted(e, times, side="right")
    return pd.DataFrame(out, index=pd.Index(times, name="time_s"))


def host_rows(snap: Snapshot, hosts: pd.Series, max_hosts: int = MAX_HOSTS) -> tuple[pd.DataFrame, str]:
    """The host view: each shown host's VMs with CPU entitlement, demand and use (MHz) and steal share in the
    last sample; every host when they fit, else the `max_hosts` with the most steal. And the note saying which."""
    vms = snap.vms
    if not len(vms):
        return pd.DataFrame(columns=["host", "vm", "entitlement", "demand", "used", "steal"]), ""
    names = [str(v) for v in vms.index]
    where, steal = dict(zip(hosts.index, hosts.to_numpy(object), strict=True)), _last_shares(snap.trace, "steal_s")
    last = dict(zip(steal.index, steal.to_numpy(np.float64), strict=True))
    frame = frame_of({"host": np.array([str(where.get(v, "?")) for v in names], dtype=object),
                          "vm": np.array(names, dtype=object), "entitlement": vms["entitlement"].to_numpy(np.float64),
                          "demand": vms["demand"].to_numpy(np.float64), "used": vms["used"].to_numpy(np.float64),
                          "steal": np.array([last.get(v, 0.0) for v in names])})  # fmt: skip
    names = list(dict.fromkeys(frame["host"]))
    note = f"all {len(names)} hosts"
    if len(names) > max_hosts:
        worst = frame.groupby("host", sort=False)["steal"].max().sort_values(ascending=False, kind="stable")
        keep = set(worst.index[:max_hosts])
        frame = frame[frame["host"].isin(keep)]
        note = f"the {max_hosts} of {len(names)} hosts with the most steal now"
    frame = frame.reset_index(drop=True)
    frame["host"] = pd.Series(clean_names(list(frame["host"])), dtype=object)
    frame["vm"] = pd.Series(clean_names(list(frame["vm"])), dtype=object)
    return frame, note


def _last_shares(trace: pd.DataFrame, column: str) -> pd.Series:
    """Per VM: `column`'s share of its accounted vCPU time in the last sample."""
    if not len(trace):
        return pd.Series(dtype=float)
    times = trace["time_s"].to_numpy()
    rows = np.flatnonzero(times == times.max())
    den = sum(trace[c].to_numpy(np.float64)[rows] for c in _STATE_COLUMNS)
    share = np.divide(trace[column].to_numpy(np.float64)[rows], den, out=np.zeros(len(rows)), where=den > 0)
    return pd.Series(share, index=trace["vm"].to_numpy(object)[rows].astype(str))


def node_rows(nodes: pd.DataFrame) -> tuple[pd.DataFrame, bool]:
    """Slots, running and finished tasks per node, or per group of consecutive nodes (sums) on a large cluster."""
    groups = group_rows(list(nodes["node"]))
    cols = ["map_slots", "reduce_slots", "running_maps", "running_reduces", "maps_done", "reduces_done"]
    values = nodes[cols].to_numpy(np.float64)
    if groups.grouped:
        values = pd.DataFrame(values).groupby(groups.of).sum().to_numpy()
    sums = frame_of({"node": np.asarray(groups.labels, dtype=object), "order": np.arange(len(groups.labels)),
                         **{c: values[:, i] for i, c in enumerate(cols)}})  # fmt: skip
    return sums, groups.grouped


def memory_rows(vms: pd.DataFrame) -> tuple[pd.DataFrame, bool]:
    """Memory per VM (or mean per VM of a group): granted, resident, active, page cache, dirty, balloon, swap (MB)."""
    kinds = [k for k in MEMORY_COLUMNS if k in vms.columns]
    groups = group_rows(list(vms.index.astype(str)))
    values = vms[kinds].to_numpy(np.float64)
    if groups.grouped:
        values = pd.DataFrame(values).groupby(groups.of).mean().to_numpy()
    rows = len(groups.labels)  # long: each kind's rows in turn (as `melt` lays them out)
    long = frame_of({"vm": np.tile(np.asarray(groups.labels, dtype=object), len(kinds)),
                         "kind": np.repeat(np.asarray(kinds, dtype=object), rows), "mb": values.T.ravel(),
                         "order": np.tile(np.arange(rows), len(kinds))})  # fmt: skip
    return long, groups.grouped


def gantt_rows(tasks: pd.DataFrame, now: float, max_nodes: int = MAX_GANTT_NODES,
               only: np.ndarray | None = None) -> tuple[pd.DataFrame, str]:  # fmt: skip
    """Attempts as bars per node (start to end, or to now while running); every node when they fit, else the
    nodes of the longest attempts so far. `only`: a mask of the attempts wanted (a step's new ones), read from
    the table as it is (filtering the whole table first cost more than the rows)."""
    cols = ["node", "attempt", "job", "kind", "state", "start", "end", "speculative", "open"]
    start = tasks["start_s"].to_numpy(np.float64)
    keep = ~np.isnan(start) if only is None else ~np.isnan(start) & only
    if not keep.any():
        return pd.DataFrame(columns=cols), ""

    picked = np.flatnonzero(keep)

    def column(name: str) -> np.ndarray:  # the started rows' values as Python strings (no column converted whole)
        return tasks[name].iloc[picked].to_numpy(object).astype(str).astype(object)

    end = tasks["end_s"].to_numpy(np.float64)[keep]
    open_ = np.isnan(end)
    frame = frame_of({
        "node": column("vm"), "attempt": column("attempt"), "job": column("job"),
        "kind": np.where(column("kind") == "m", "map", "reduce").astype(object),
        "state": np.where(open_, "running", column("state")).astype(object),
        "start": start[keep], "end": np.where(open_, now, end),
        "speculative": tasks["speculative"].to_numpy(bool)[keep], "open": open_,
    })  # fmt: skip
    names = list(dict.fromkeys(frame["node"]))
    note = f"all {len(names)} nodes with attempts"
    if len(names) > max_nodes:
        longest = (frame["end"] - frame["start"]).groupby(frame["node"]).max().sort_values(ascending=False)
        keep = set(longest.index[:max_nodes])
        frame = frame[frame["node"].isin(keep)]
        note = f"the {max_nodes} of {len(names)} nodes with the longest attempts"
    frame = frame.reset_index(drop=True)
    frame["node"] = pd.Series(clean_names(list(frame["node"])), dtype=object)
    return frame, note


def task_events(tasks: pd.DataFrame | None, now: float, since: float = -math.inf) -> list[tuple[float, str, str, str]]:
    """The attempts' events in (since, now]: speculative launches, kills and task failures (time, event, VM,
    attempt). A caller that keeps them asks each step only for the events since its last one."""
    if tasks is None or not len(tasks):
        return []
    start, end = tasks["start_s"].to_numpy(np.float64), tasks["end_s"].to_numpy(np.float64)
    state = tasks["state"]  # compared as the column is (Arrow strings compare without becoming objects)
    launched = tasks["speculative"].to_numpy(bool) & (start > since) & (start <= now)
    picked = [(np.flatnonzero(launched), start, "speculative launch")]
    picked += [(np.flatnonzero((state == name).to_numpy(bool) & (end > since) & (end <= now)), end, label)
               for name, label in (("killed", "kill"), ("failed", "task failure"))]  # fmt: skip
    every = np.concatenate([i for i, _, _ in picked])
    vm = dict(zip(every.tolist(), tasks["vm"].iloc[every].to_numpy(object).tolist(), strict=True))  # the few events'
    attempt = dict(zip(every.tolist(), tasks["attempt"].iloc[every].to_numpy(object).tolist(), strict=True))
    return [(float(times[i]), label, str(vm[i]), str(attempt[i])) for idx, times, label in picked for i in idx.tolist()]


def event_rows(tasks: pd.DataFrame | None, now: float, redivisions: list[tuple[float, int, float]],
               slot_changes: list[tuple[float, str, str]],
               events: list[tuple[float, str, str, str]] | None = None) -> pd.DataFrame:  # fmt: skip
    """The event log, newest first: speculative launches, kills and failures (tasks; `events`: those already read
    by `task_events`), FlexSlot's slot and heap changes (seen between steps), the pool's re-divisions (entitlements
    that moved between trace samples)."""
    rows = list(task_events(tasks, now) if events is None else events)
    for t, n, largest in redivisions:
        rows.append((t, "pool re-divided", f"{n} VMs", f"CPU entitlements moved, up to {largest:,.0f} MHz"))
    for t, node, what in slot_changes:
        rows.append((t, "slots resized", node, what))
    rows.sort(key=lambda r: -r[0])  # newest first; stable: events at one time keep their order
    when, event, where, what = (list(c) for c in zip(*rows, strict=True)) if rows else ([], [], [], [])
    return frame_of({"time (s)": np.round(np.asarray(when, dtype=np.float64), 1),
                     "event": np.asarray(event, dtype=object), "where": np.asarray(clean_names(where), dtype=object),
                     "what": np.asarray(what, dtype=object)})  # fmt: skip


def slot_changes(before: pd.DataFrame | None, after: pd.DataFrame | None, now: float) -> list[tuple[float, str, str]]:
    """Nodes whose map or reduce slots or slot heap changed between two steps (FlexSlot moves and resizes them)."""
    if before is None or after is None or not len(before):
        return []
    cols = ["map_slots", "reduce_slots", "heap_mb"]
    if before[["node", *cols]].equals(after[["node", *cols]]):  # most steps: nothing moved
        return []
    a = before.set_index("node")[cols]
    b = after.set_index("node")[cols].reindex(a.index)
    moved = (a != b) & a.notna() & b.notna()
    out = []
    for i in np.flatnonzero(moved.to_numpy().any(axis=1)):  # compared as arrays: a step has few changes, if any
        old, new = a.iloc[i], b.iloc[i]
        parts = [f"{c.replace('_', ' ')} {old[c]:g} → {new[c]:g}" for j, c in enumerate(cols) if moved.iat[i, j]]
        out.append((now, str(a.index[i]), ", ".join(parts)))
    return out


def job_table(jobs: pd.DataFrame) -> pd.DataFrame:
    """The job table: submit, start, finish, progress of maps and reduces, state."""
    out = pd.DataFrame({
        "job": jobs["job"], "name": jobs["name"], "state": jobs["state"],
        "submit (s)": jobs["submit_s"].round(1), "start (s)": jobs["start_s"].round(1),
        "finish (s)": jobs["end_s"].round(1),
        "maps": [f"{d}/{n} done, {r} running" for d, n, r in zip(jobs["maps_done"], jobs["maps"],
                                                                   jobs["maps_running"], strict=True)],
        "reduces": [f"{d}/{n} done, {r} running" for d, n, r in zip(jobs["reduces_done"], jobs["reduces"],
                                                                      jobs["reduces_running"], strict=True)],
    })  # fmt: skip
    total = (jobs["maps"] + jobs["reduces"]).to_numpy(np.float64)
    done = (jobs["maps_done"] + jobs["reduces_done"]).to_numpy(np.float64)
    out.insert(3, "progress", [f"{p:.0%}" for p in np.divide(done, total, out=np.zeros(len(jobs)), where=total > 0)])
    return out
