"""Reading a run directory written by `vcloud run`: its tables, windows of them, and per-VM summaries.

`vcloud trace` is a thin wrapper over `trace_command`; notebooks can use `Run`, `vm_summary` and the
figure functions in `scenarios.plots` directly. Bad input raises `RunError` with one line that names the
path, VM or value; nothing is written before every check has passed.
"""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from scenarios.outputs import PLOT_KINDS, OutputError, check_file, shown_path
from scenarios.trace_math import CPU_STATES, accounted_s, row_spans, trace_interval

if TYPE_CHECKING:
    from matplotlib.figure import Figure

TASK_PLOTS = ("breakdown", "cdf", "tasks-per-node", "running")
IMAGE_FORMATS = ("png", "pdf", "svg", "jpg", "jpeg")
MAX_BINS = 20_000  # a heat map's columns: far more than a figure's pixels (9 inches at 100 dpi: 900)
# what `vcloud trace`, its plots and the dashboard read of each table: a file without them is not a run's
COLUMNS = {
    "vm_trace": ("time_s", "vm", "host", "vcpus", *(f"{s}_s" for s in CPU_STATES), "cpu_demand_mhz",
                 "cpu_entitlement_mhz", "cpu_used_mhz", "swap_mb", "disk_mbps"),
    "tasks": ("job", "task", "attempt", "kind", "vm", "locality", "start_s", "end_s", "state", "cputime_s",
              "steal_s", "iowait_s"),
}  # fmt: skip


class RunError(ValueError):
    """A bad run directory, selection or output path: reported in one line."""


class Run:
    """One run directory: `summary`, `config` and the Parquet tables, read on first use."""

    def __init__(self, path: Path | str) -> None:
        self.path = Path(path)
        try:
            found = self.path.is_dir()
        except OSError as exc:  # a name longer than the system allows
            raise RunError(f"run directory {shown_path(self.path)}: {exc.strerror or exc}") from None
        if not found:
            raise RunError(f"run directory {shown_path(self.path)}: no such directory")

    @property
    def name(self) -> str:
        return self.path.name

    def table(self, name: str, needed_by: str | None = None) -> pd.DataFrame:
        """`vm_trace`, `tasks` or `jobs`; a missing file is a `RunError` naming it (and what needs it)."""
        file = self.path / f"{name}.parquet"
        if not file.is_file():
            why = f" (needed by {needed_by})" if needed_by else ""
            raise RunError(f"{file}: no such file{why}; synthetic-cloud runs have only vm_trace.parquet")
        try:
            frame = pd.read_parquet(file)
        except Exception as exc:  # pyarrow's errors for a truncated or foreign file share no base class
            raise RunError(f"{file}: not a readable Parquet table ({' '.join(str(exc).split())[:80]})") from None
        missing = [c for c in COLUMNS.get(name, ()) if c not in frame.columns]
        if missing:
            raise RunError(f"{file}: no column {missing[0]!r} ({len(missing)} of a run's missing): not a run's table")
        return frame

    @cached_property
    def summary(self) -> dict[str, Any]:
        return self._json("summary.json")

    @cached_property
    def config(self) -> dict[str, Any]:
        return self._json("config.json")

    def _json(self, name: str) -> dict[str, Any]:
        file = self.path / name
        try:
            data = json.loads(file.read_bytes().decode("utf-8"))
        except (OSError, ValueError) as exc:
            raise RunError(f"{file}: not a readable JSON file ({' '.join(str(exc).split())[:80]})") from None
        if not isinstance(data, dict):
            raise RunError(f"{file}: expected a JSON object")
        return data

    @cached_property
    def settings(self) -> dict[str, Any]:
        """What the run was asked (flat dotted keys), with `scenario` and `seed` first: from config.json, or for a
        sweep's frames (DIR/runs/ID/) from the sweep's DIR/runs/ID.json; empty when neither is there."""
        sweep_row = self.path.with_name(f"{self.path.name}.json")
        for file, key in ((self.path / "config.json", "asked"), (sweep_row, "settings")):
            if file.is_file():
                data = self._json(file.name) if file.parent == self.path else _read_json(file)
                asked = data.get(key, {})
                head = {k: data[k] for k in ("scenario", "seed") if k in data}
                return {**head, **(asked if isinstance(asked, dict) else {})}
        return {}

    @cached_property
    def all_settings(self) -> dict[str, Any]:
        """Every setting the run used (flat dotted keys, from config.json's `settings`), asked or default."""
        from scenarios.settings import flatten

        if not (self.path / "config.json").is_file():
            return {}
        settings = self.config.get("settings", {})
        return flatten(settings) if isinstance(settings, dict) else {}

    @cached_property
    def title(self) -> str:
        """The run as its settings say it ("flexslot: scale=0.03, allocator=static, seed 1"), else its name."""
        return settings_text(self.settings) or self.name

    @cached_property
    def trace_interval_s(self) -> float | None:
        """The run's `trace_interval_s` from its config.json (None if it has none: then the trace's own gaps)."""
        try:
            value = self.config["settings"]["trace_interval_s"]
        except (RunError, KeyError, TypeError):
            return None
        return float(value) if isinstance(value, int | float) and value > 0 else None


def _read_json(file: Path) -> dict[str, Any]:
    try:
        data = json.loads(file.read_bytes().decode("utf-8"))
    except (OSError, ValueError) as exc:
        raise RunError(f"{file}: not a readable JSON file ({' '.join(str(exc).split())[:80]})") from None
    return data if isinstance(data, dict) else {}


def _value_text(value: Any) -> str:
    if isinstance(value, float):
        return f"{value:g}"
    if isinstance(value, str) and "/" in value:  # a file (a trace): its name says enough in a title
        return Path(value).name
    return json.dumps(value) if isinstance(value, list | dict) else str(value)


def settings_text(settings: dict[str, Any], keys: Sequence[str] | None = None) -> str:
    """`scenario: k=v, ..., seed N` of `settings` (`Run.settings`), only `keys` if given (then no scenario)."""
    shown = [k for k in (keys if keys is not None else settings) if k not in ("scenario", "seed") and k in settings]
    pairs = [f"{k}={_value_text(settings[k])}" for k in shown]
    if "seed" in settings and (keys is None or "seed" in keys):
        pairs.append(f"seed {settings['seed']}")
    text = ", ".join(pairs)
    if keys is None and "scenario" in settings:
        text = f"{settings['scenario']}: {text}" if text else str(settings["scenario"])
    return text


def run_labels(runs: Sequence[Run]) -> tuple[list[str], str]:
    """Labels of several runs by the settings in which they differ, and a title of what they share.

    A sweep's frames are told apart by their swept values, not by their run hashes; runs with the same settings
    (or none recorded) fall back to their directory names (whole paths when names repeat)."""
    asked = [r.settings for r in runs]
    keys = list(dict.fromkeys(k for s in asked for k in s))
    # a key one run asked and another left at its default: the default it ran with tells them apart
    settings = [{k: s.get(k, r.all_settings.get(k)) for k in keys if k in s or k in r.all_settings}
                for s, r in zip(asked, runs, strict=True)]  # fmt: skip
    missing = object()
    differ = [k for k in keys if len({json.dumps(s.get(k, missing), default=str) for s in settings}) > 1]
    shared = {k: settings[0][k] for k in keys if k not in differ and k in settings[0]}
    labels = [settings_text(s, differ) for s in settings]
    if len(runs) < 2 or not all(labels) or len(set(labels)) < len(labels):
        labels = [_label(r, runs) for r in runs]
    return labels, settings_text(shared) if len(runs) > 1 else runs[0].title


def check_window(t_from: float | None, t_to: float | None) -> None:
    if t_from is not None and t_to is not None and t_from > t_to:
        raise RunError(f"--from {t_from:g} is after --to {t_to:g}")


def trace_window(trace: pd.DataFrame, t_from: float | None = None, t_to: float | None = None) -> pd.DataFrame:
    """Trace rows whose interval ends in (t_from, t_to]; a row at time_s covers the interval before it."""
    check_window(t_from, t_to)
    keep = np.ones(len(trace), dtype=bool)
    if t_from is not None:
        keep &= trace["time_s"].to_numpy() > t_from
    if t_to is not None:
        keep &= trace["time_s"].to_numpy() <= t_to
    return trace[keep]


def task_window(tasks: pd.DataFrame, t_from: float | None = None, t_to: float | None = None) -> pd.DataFrame:
    """Attempts that started in [t_from, t_to]."""
    check_window(t_from, t_to)
    start = tasks["start_s"]
    keep = start.notna()
    if t_from is not None:
        keep &= start >= t_from
    if t_to is not None:
        keep &= start <= t_to
    return tasks[keep]


def select_vms(frame: pd.DataFrame, vms: Sequence[str], known: Sequence[str], where: str) -> pd.DataFrame:
    """Rows of `frame` on the VMs `vms` (all if empty); a name not in `known` is a `RunError`."""
    if not vms:
        return frame
    names = set(known)
    for vm in vms:
        if vm not in names:
            sample = ", ".join(sorted(names)[:4])
            raise RunError(f"--vm {vm}: no such VM in {where} (VMs: {sample}, ...)")
    return frame[frame["vm"].astype(str).isin(set(vms))]


_RATE_MEANS = {"cpu_demand_mhz": "demand_mhz", "cpu_used_mhz": "used_mhz", "disk_mbps": "disk_mbps"}
_LEVEL_MEANS = {"cpu_entitlement_mhz": "entitled_mhz", "swap_mb": "swap_mb"}


def vm_summary(trace: pd.DataFrame, interval_s: float | None = None) -> pd.DataFrame:
    """One row per VM: CPU-state shares of its vCPU time and seconds, mean MHz, swap and disk rates.

    Means are over the seconds the VM was accounted: a rate column holds the sample's sum / the seconds it
    covers (`row_spans`), so its mean is sum(value x span) / accounted seconds; entitlement and swap are
    levels, weighted by accounted seconds. `interval_s`: the run's trace interval (default: `trace_interval`).
    """
    wall = accounted_s(trace) / trace["vcpus"].astype(np.float64)  # accounted wall seconds of the row
    span = row_spans(trace["time_s"].to_numpy(), interval_s or trace_interval(trace))
    t = pd.DataFrame({"vm": trace["vm"].astype(str), "wall": wall})
    for s in CPU_STATES:
        t[f"{s}_s"] = trace[f"{s}_s"].astype(np.float64)
    for col, name in _RATE_MEANS.items():
        t[name] = trace[col].astype(np.float64) * span
    for col, name in _LEVEL_MEANS.items():
        t[name] = trace[col].astype(np.float64) * wall
    order = list(dict.fromkeys(t["vm"]))  # the trace's VM order
    sums = t.groupby("vm", sort=False).sum().reindex(order)
    seconds = sums[[f"{s}_s" for s in CPU_STATES]]
    total = seconds.sum(axis=1)
    shares = seconds.div(total.where(total > 0), axis=0).set_axis(list(CPU_STATES), axis=1)
    names = ["demand_mhz", "entitled_mhz", "used_mhz", "swap_mb", "disk_mbps"]
    means = sums[names].div(sums["wall"].where(sums["wall"] > 0), axis=0)
    first = trace.assign(vm=t["vm"], host=trace["host"].astype(str)).groupby("vm", sort=False)[["host", "vcpus"]]
    out = pd.concat([first.first().reindex(order), shares, seconds, means], axis=1)
    out.index.name = "vm"
    return out


def format_summary(table: pd.DataFrame) -> str:
    """The summary as text: shares to 4 decimals, seconds and rates to 1."""
    shown = table.copy()
    for col in shown.columns:
        if col in CPU_STATES:
            shown[col] = shown[col].map(lambda v: f"{v:.4f}")
        elif shown[col].dtype.kind == "f":
            shown[col] = shown[col].map(lambda v: f"{v:.1f}")
    return shown.to_string()


def trace_table(run: Run, vms: Sequence[str] = (), t_from: float | None = None, t_to: float | None = None) -> str:
    """The text of `vcloud trace RUN_DIR`: `vm_summary` over the window and VMs chosen."""
    trace = run.table("vm_trace", "the per-VM table")
    window = trace_window(select_vms(trace, vms, trace["vm"].astype(str).unique(), run.name), t_from, t_to)
    if window.empty:
        raise RunError(f"{run.name}: no trace samples in {_window_text(t_from, t_to)}")
    return format_summary(vm_summary(window, run.trace_interval_s))


def _window_text(t_from: float | None, t_to: float | None) -> str:
    return f"({'start' if t_from is None else f'{t_from:g}'}, {'end' if t_to is None else f'{t_to:g}'}]"


def _vm_names(run: Run) -> list[str]:
    """Every VM of the run: from vm_trace if present, else the trackers in tasks."""
    if (run.path / "vm_trace.parquet").is_file():
        return [str(v) for v in pd.read_parquet(run.path / "vm_trace.parquet", columns=["vm"])["vm"].unique()]
    return [str(v) for v in run.table("tasks")["vm"].unique()]


MULTI_RUN_PLOTS = ("cdf", "heatmap")


def draw(
    kind: str,
    runs: Sequence[Run],
    vms: Sequence[str] = (),
    t_from: float | None = None,
    t_to: float | None = None,
    metric: str | None = None,
    bin_s: float | None = None,
    vmax: float | None = None,
) -> Figure:
    """The figure of `--plot KIND` (a matplotlib Figure); all checks happen before anything is drawn. Titles and
    labels come from the runs' settings (`run_labels`)."""
    from scenarios import plots  # matplotlib is loaded only when drawing

    try:
        return _draw(plots, kind, runs, vms, t_from, t_to, metric, bin_s, vmax)
    except plots.PlotError as exc:
        raise RunError(f"--{exc}") from None


def _draw(plots, kind, runs, vms, t_from, t_to, metric, bin_s, vmax) -> Figure:
    if kind not in PLOT_KINDS:
        raise RunError(f"--plot {kind}: unknown kind (try: {', '.join(PLOT_KINDS)})")
    if len(runs) > 1 and kind not in MULTI_RUN_PLOTS:
        raise RunError(f"--plot {kind}: takes one RUN_DIR, got {len(runs)} (several only with --plot "
                       f"{' or '.join(MULTI_RUN_PLOTS)})")  # fmt: skip
    if metric is not None and kind != "heatmap":
        raise RunError(f"--metric {metric}: only with --plot heatmap")
    if vmax is not None and kind != "heatmap":
        raise RunError(f"--vmax {vmax:g}: only with --plot heatmap")
    if bin_s is not None and not bin_s > 0:
        raise RunError(f"--bin {bin_s:g}: must be > 0")
    plots.check_vmax(vmax)
    check_window(t_from, t_to)
    labels, title = run_labels(runs)
    if kind in TASK_PLOTS:
        frames, nodes = {}, []
        for label, run in zip(labels, runs, strict=True):
            tasks = select_vms(run.table("tasks", f"--plot {kind}"), vms, _vm_names(run), run.name)
            nodes = nodes or sorted(tasks["vm"].astype(str).unique())  # the first run's nodes, before the window
            frames[label] = tasks if kind == "running" else task_window(tasks, t_from, t_to)
        tasks = next(iter(frames.values()))
        if kind == "running":
            return plots.running_tasks(tasks, t_from, t_to, title=title)
        done_maps = {k: v[(v["kind"] == "m") & (v["state"] == "done")] for k, v in frames.items()}
        for label, maps in done_maps.items():
            if maps.empty:
                raise RunError(f"{label}: no successful map attempts for the VMs and window chosen")
        if kind == "cdf":
            return plots.runtime_cdf(done_maps, title=title)
        if kind == "breakdown":
            return plots.task_breakdown(tasks, title=title)
        return plots.tasks_per_node(tasks, nodes=nodes, title=title)
    run = runs[0]
    if kind == "persistence":  # from summary.json: the entitlements' rank correlation period to period
        summary = run.summary
        persistence = summary.get("cloud", summary).get("entitlement_persistence")
        if persistence is None:
            raise RunError(f"{run.name}: summary.json has no entitlement_persistence (a run from before it)")
        if not persistence.get("times_s"):
            raise RunError(f"{run.name}: no pair of DRS periods to correlate (the run ended within its first period)")
        return plots.entitlement_persistence(persistence, title=title)
    windows = {}
    for label, one in zip(labels, runs, strict=True):
        trace = one.table("vm_trace", f"--plot {kind}")
        window = trace_window(select_vms(trace, vms, trace["vm"].astype(str).unique(), one.name), t_from, t_to)
        if window.empty:
            raise RunError(f"{one.name}: no trace samples in {_window_text(t_from, t_to)}")
        windows[label if len(runs) > 1 else ""] = window
    if kind == "heatmap":
        return plots.share_heatmaps(windows, metric or "steal", bin_s=bin_s, title=title, vmax=vmax,
                                    interval_s=run.trace_interval_s)  # fmt: skip
    return plots.share_lines(windows[""], vms=list(vms) or None, title=title, interval_s=run.trace_interval_s)


def _label(run: Run, runs: Sequence[Run]) -> str:
    """The directory name, or the whole path when two runs share a name."""
    same = sum(r.name == run.name for r in runs) > 1
    return str(run.path) if same else run.name


def check_out(out: Path | None, kind: str) -> Path:
    if out is None:
        raise RunError(f"--plot {kind}: needs --out FILE.png")
    try:
        check_file(out)
    except OutputError as exc:
        raise RunError(str(exc)) from None
    fmt = out.suffix.lstrip(".").lower()
    if fmt not in IMAGE_FORMATS:
        raise RunError(f"--out {out}: unknown image format {fmt!r} (try: {', '.join(IMAGE_FORMATS)})")
    return out


def save_figure(fig: Figure, out: Path) -> Path:
    """Write `fig` to `out` through a temporary sibling (so `out` is whole or untouched), then close it."""
    from scenarios import plots

    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = out.with_name(f".{out.stem}-{os.getpid()}{out.suffix}")
    try:
        plots.save(fig, tmp)
        os.replace(tmp, out)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return out


def trace_command(
    run_dirs: Sequence[Path | str],
    plot: str | None = None,
    out: Path | None = None,
    vms: Sequence[str] = (),
    t_from: float | None = None,
    t_to: float | None = None,
    metric: str | None = None,
    bin_s: float | None = None,
    vmax: float | None = None,
) -> str:
    """What `vcloud trace` does: the per-VM table as text, or draw `plot` into `out` and say so."""
    runs = [Run(p) for p in run_dirs]
    check_window(t_from, t_to)
    if plot is None:
        given = {"--out": out, "--metric": metric, "--bin": bin_s, "--vmax": vmax}
        flag = next((f for f, v in given.items() if v is not None), None)
        if flag is not None:
            raise RunError(f"{flag}: only with --plot KIND")
        if len(runs) > 1:
            raise RunError(f"the per-VM table takes one RUN_DIR, got {len(runs)} (several only with --plot cdf or "
                           "heatmap)")  # fmt: skip
        return trace_table(runs[0], vms, t_from, t_to)
    out = check_out(out, plot)
    fig = draw(plot, runs, vms, t_from, t_to, metric, bin_s, vmax)
    return f"wrote {save_figure(fig, out)}"
