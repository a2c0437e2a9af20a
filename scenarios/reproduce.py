"""`vcloud reproduce --out DIR [--quick]`: the seed papers' figures, paper next to emulator, in DIR/report.md.

Each entry runs what it needs (runs are shared between entries), computes the emulator's figure, says
whether it goes the paper's way, and draws a PNG. `--quick` runs at a quarter of the input (fewer benchmarks and
seeds on some entries) so the test suite can afford it; its numbers differ from the full report's on every row, and
its "same direction" on some: its `full scale` column says which, against the committed full report
(docs/report-rows.json, which `python -m scenarios.report_docs DIR` writes from a full report's DIR/rows.json).
The runs are independent, so they run in parallel (`processes` local worker processes, by default one per CPU,
or on a Dask cluster): the entries run in threads of this process that take turns (one at a time, so the plots
are drawn as before), each waiting for its runs without holding the turn; a run is a pure function of its
scenario, settings and seed and comes back as what the entries read of it (`Finished`: its summary and tables, not
the model, which would hold GBs over the report), so the report is the one a serial run writes.
Each entry's row and plot are kept in DIR as soon as it is measured (`report_rows.py`): rerunning into the same
DIR, as with `vcloud sweep`, measures only the entries not yet there under the same configuration.
Covered (each paper's page in docs/ carries its current rows): FlexSlot section 2 (Figs 3, 4, 6 and Table 1) and
section 4 (Figs 7-14, `flexslot_figures.py`; docs/results-flexslot.md); the Coupling paper's Figs 1-2, 5-6, 10-11,
12, 16 and Tables II-IV (docs/results-coupling.md); SAMR Fig 9 (samr-heterogeneous; docs/results-samr.md); the
cluster schedulers: Capacity's queues and user limits, Quincy against Fair (scheduler_experiments.py;
docs/results-schedulers.md); Delay Scheduling section 5, IO-heavy (`delay_figures.py`; docs/results-delay.md).
"""

from __future__ import annotations

import heapq
import os
import threading
import time
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from contextlib import ExitStack
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from hadoop_layer import jobmix
from scenarios import delay_figures, flexslot, flexslot_figures, plots, report_docs
from scenarios.coupling_experiments import TABLE_II_JOBS
from scenarios.dask_client import dask_client
from scenarios.finished import Finished
from scenarios.outputs import atomic_write
from scenarios.registry import SCENARIOS
from scenarios.report_rows import Row, RowStore, row_key
from scenarios.runner import run_model
from scenarios.scheduler_experiments import POLICIES as QUINCY_POLICIES
from scenarios.settings import validate

if TYPE_CHECKING:
    from matplotlib.figure import Figure


COUPLING_SCENARIOS = {"coupling-two-grep", "coupling-ten-grep", "coupling-map-only", "coupling-22-jobs",
                      "coupling-200-jobs", "delay-locality"}  # fmt: skip


def run(scenario: str, seed: int, settings: dict[str, Any], pilot: Any = None) -> Finished:
    """One finished run, as the report keeps it (the model is dropped here, in the process that ran it). `pilot`:
    what a flexslot run would otherwise make a pilot run for (`flexslot.pilot_of`), from the report's own run of
    that pilot (`_handed`): a co-located run's neighbour loads, or a Heter. cluster's "Homo." maps."""
    started = time.process_time()
    sc = SCENARIOS[scenario]
    validated = validate(sc.Settings, settings)
    if pilot is not None:
        kind, alone = flexslot.pilot_of(validated)
        flexslot.remember_pilot(kind, alone, seed, pilot)
    model = sc.build(validated, seed=seed)
    run_model(model, sc.horizon_s(model), progress=False)
    return Finished.of(scenario, model, started)


def _handed(kind: str, alone: Finished) -> Any:
    """What a run of kind `kind` (`flexslot.pilot_of`) reads of its pilot, from the report's run of that pilot."""
    if kind == "loads":
        return flexslot.loads_of(alone.vm_trace, alone.settings)
    return alone.pilot_maps


def _relay(to: Future, source: Future) -> None:
    """`source`'s outcome into `to`."""
    try:
        to.set_result(source.result())
    except BaseException as exc:  # handed to the waiter, who decides
        to.set_exception(exc)


class Runs:
    """Runs by (scenario, validated settings) on one seed, each run once; `quick` entries measure less.

    `submit(fn, *args) -> Future`: where runs are computed (a process pool or a Dask client); None: here, at once.
    With `submit`, `turn` is the lock the entries' threads take turns with: a thread gives it up while it waits.
    Each run is kept as a `Finished` record (~1 MB), not as its model (~40 MB)."""

    def __init__(
        self, scale: float, seed: int = 1, quick: bool = False, submit: Callable[..., Future] | None = None,
        turn: threading.Lock | None = None,
    ) -> None:  # fmt: skip
        self.scale, self.seed, self.quick = scale, seed, quick
        self._done: dict[tuple[str, int, str], Finished] = {}
        self._pending: dict[tuple[str, int, str], Future] = {}  # runs computed elsewhere
        self._submit, self._turn = submit, turn

    def _keyed(self, scenario: str, seed: int | None, settings: dict[str, Any]) -> tuple[tuple, int, dict[str, Any]]:
        """The run's cache key, seed and settings (the report's scale added)."""
        seed = self.seed if seed is None else seed
        if scenario == "flexslot":
            settings = {"scale": self.scale, **settings}
        elif scenario in COUPLING_SCENARIOS and self.scale < 1.0:  # a scaled copy: inputs and arrival times
            quick = {"scale": self.scale, "max_jobs": 40} if scenario == "coupling-200-jobs" else {"scale": self.scale}
            settings = {**quick, **settings}
        validated = validate(SCENARIOS[scenario].Settings, settings)
        return (scenario, seed, validated.model_dump_json()), seed, settings  # equal configurations share a run

    def _pilot(self, scenario: str, seed: int, settings: dict[str, Any]) -> tuple[str, tuple, int, dict] | None:
        """A flexslot run's pilot (`flexslot.pilot_of`: a co-located run's run alone, a Heter. cluster's static run)
        as (kind, key, seed, settings): a run of its own, which the report makes anyway. None for any other run."""
        if scenario != "flexslot":
            return None
        pilot = flexslot.pilot_of(validate(SCENARIOS[scenario].Settings, settings))
        if pilot is None:
            return None
        kind, alone = pilot
        return kind, *self._keyed(scenario, seed, alone.model_dump())

    def _started(self, key: tuple, scenario: str, seed: int, settings: dict[str, Any]) -> Future:
        """The run's future: done, pending, or submitted now. A run with a pilot is submitted once the pilot's run
        has come back, with what it reads of it (so no worker runs the pilot again: a fifth of the report's CPU)."""
        if key in self._done:
            done: Future = Future()
            done.set_result(self._done[key])
            return done
        if key in self._pending:
            return self._pending[key]
        pilot = self._pilot(scenario, seed, settings)
        if pilot is None:
            future = self._submit(run, scenario, seed, settings)
        else:
            future = Future()
            kind, *alone = pilot

            def beside(pilot_run: Future) -> None:
                try:
                    handed = _handed(kind, pilot_run.result())
                    self._submit(run, scenario, seed, settings, handed).add_done_callback(lambda f: _relay(future, f))
                except BaseException as exc:  # handed to the waiter, who decides
                    future.set_exception(exc)

            self._started(alone[0], "flexslot", alone[1], alone[2]).add_done_callback(beside)
        self._pending[key] = future
        return future

    def prefetch(self, scenario: str, cases: list[dict[str, Any]], seed: int | None = None) -> None:
        """Start the runs an entry will ask for one by one, all at once: else each waits for the one before, and at
        the end of a report the long entries' chains leave workers idle. Does nothing when runs are made here."""
        if self._submit is None:
            return
        for case in cases:
            key, run_seed, settings = self._keyed(scenario, seed, case)
            self._started(key, scenario, run_seed, settings)

    def get(self, scenario: str, seed: int | None = None, **settings) -> Finished:
        """The run of `scenario` with `settings` on `seed` (default: the report's seed)."""
        key, seed, settings = self._keyed(scenario, seed, settings)
        if key in self._done:
            return self._done[key]
        # the settings as given, not the validated dump: a scenario may read which fields were set (a coupling
        # experiment's own slave count holds unless `slaves` is given)
        if self._submit is None:
            pilot = self._pilot(scenario, seed, settings)
            handed = None if pilot is None else _handed(pilot[0], self.get("flexslot", pilot[2], **pilot[3]))
            self._done[key] = run(scenario, seed, settings, handed)
            return self._done[key]
        future = self._started(key, scenario, seed, settings)
        self._turn.release()  # wait for it off our turn: other entries go on meanwhile
        try:
            finished = future.result()
        finally:
            self._turn.acquire()
        self._done[key] = finished
        self._pending.pop(key, None)
        return finished


@dataclass
class Entry:
    figure: str
    paper: str
    measure: Callable[[Runs], tuple[str, bool, object]]  # (emulator text, same direction?, matplotlib Figure)


def _skew(run: Finished) -> float:
    return run.summary["map_runtime_skewness"] or 0.0


def _max_over_min(run: Finished) -> float:
    return run.summary["maps_per_node_max_over_min"] or 0.0


def _static_and_drs(runs: Runs) -> None:
    runs.prefetch("flexslot", [{"allocator": "static"}, {"allocator": "drs"}])


def fig3(runs: Runs):
    _static_and_drs(runs)
    homo, drs = runs.get("flexslot", allocator="static"), runs.get("flexslot", allocator="drs")
    fig = plots.runtime_cdf({"static (Homo.)": homo.tasks, "DRS": drs.tasks}, "FlexSlot Fig 3")
    return f"skewness {_skew(homo):.2f} static -> {_skew(drs):.2f} DRS", _skew(drs) > _skew(homo), fig


def fig4(runs: Runs):
    _static_and_drs(runs)
    homo, drs = runs.get("flexslot", allocator="static"), runs.get("flexslot", allocator="drs")
    text = f"maps per node max/min {_max_over_min(homo):.2f} static, {_max_over_min(drs):.2f} DRS"
    return text, _max_over_min(drs) > 2 * _max_over_min(homo), plots.tasks_per_node(drs.tasks, title="Fig 4")


def fig6(runs: Runs):
    def ratio(run: Finished) -> float:
        maps = plots.successful_maps(run.tasks)
        runtime = maps.end_s - maps.start_s
        rate = maps.steal_s / runtime
        return float(rate[runtime > runtime.quantile(0.9)].mean() / rate.mean())

    _static_and_drs(runs)
    homo, drs = runs.get("flexslot", allocator="static"), runs.get("flexslot", allocator="drs")
    text = f"steal rate of the slowest 10 % over all maps: {ratio(homo):.2f} static, {ratio(drs):.2f} DRS"
    return text, ratio(drs) > ratio(homo), plots.task_breakdown(drs.tasks, "FlexSlot Fig 6 (DRS)")


def table1(runs: Runs):
    names = {"Homo.": {"allocator": "static"}, "Heter.": {"allocator": "heterogeneous"},
             "Heter. + Skew-sched": {"allocator": "heterogeneous", "skew_sched": True}}  # fmt: skip
    runs.prefetch("flexslot", list(names.values()))
    skews = {name: _skew(runs.get("flexslot", **s)) for name, s in names.items()}
    text = ", ".join(f"{k} {v:.2f}" for k, v in skews.items())
    values = list(skews.values())
    ordered = values[0] > values[1] >= values[2]
    frames = {k: runs.get("flexslot", **s).tasks for k, s in names.items()}
    return text, ordered, plots.runtime_cdf(frames, "FlexSlot Table 1 clusters")


def _coupling(runs: Runs, scenario: str) -> tuple[Finished, dict, dict]:
    """The scenario under Fair and under Coupling: the Fair run and both summaries."""
    runs.prefetch(scenario, [{"scheduler": "fair"}, {"scheduler": "coupling"}])
    fair, coupling = runs.get(scenario, scheduler="fair"), runs.get(scenario, scheduler="coupling")
    return fair, fair.summary, coupling.summary


def _mean_times(sf: dict, sc: dict) -> str:
    f, c = sf["mean_job_s"], sc["mean_job_s"]
    return f"mean job time {f:.0f} s Fair, {c:.0f} s Coupling ({_change(f, c)})"


def _change(before: float, after: float) -> str:
    return f"{100.0 * (after - before) / before:+.1f} %"


def _job_times(runs: dict[str, dict], title: str) -> Figure:
    """Each job's completion time under each scheduler (the paper's Figs. 3, 6a and 13a as points)."""
    fig = plots.new_figure(8.0, 4.0)
    ax = fig.add_subplot()
    for i, (label, summary) in enumerate(runs.items()):
        times = [np.nan if t is None else t / 60.0 for t in summary["job_s"].values()]
        ax.plot(range(1, len(times) + 1), times, "o", color=f"C{i}", label=label, alpha=0.7)
    ax.set_xlabel("job")
    ax.set_ylabel("job time (min)")
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8)
    ax.set_title(title)
    return fig


def coupling_fig1(runs: Runs):
    fair, sf, sc = _coupling(runs, "coupling-two-grep")
    starved = [list(s["starvation_s"].values())[1] for s in (sf, sc)]
    text = (f"job 2 starvation {starved[0]:.0f} s Fair, {starved[1]:.0f} s Coupling; mean job time "
            f"{_change(sf['mean_job_s'], sc['mean_job_s'])}")  # fmt: skip
    fig = plots.running_tasks(fair.tasks, title="Coupling Fig 1 (Fair)")
    return text, starved[1] < starved[0], fig


def coupling_fig12(runs: Runs):
    """Table II / Fig. 12: each single job under Fair and Coupling, mean and range over seeds (the paper: 15 runs)."""
    seeds = range(1, 2 if runs.quick else 4)  # quick: one seed (the jobs are small: the full input even then)
    for seed in seeds:
        cases = [{"job": job, "scheduler": s} for job in TABLE_II_JOBS for s in ("fair", "coupling")]
        runs.prefetch("coupling-single-job", cases, seed=seed)
    minutes = {  # the one job's time (end - submit, submitted at 0)
        (job, scheduler): [_only(runs.get("coupling-single-job", seed=seed, job=job, scheduler=scheduler)
                                 .summary["job_s"]) / 60.0 for seed in seeds]
        for job in TABLE_II_JOBS for scheduler in ("fair", "coupling")
    }  # fmt: skip
    mean = {key: float(np.mean(values)) for key, values in minutes.items()}
    table = pd.DataFrame({label: [mean[job, scheduler] for job in TABLE_II_JOBS]
                          for label, scheduler in (("Fair", "fair"), ("Coupling", "coupling"))},
                         index=list(TABLE_II_JOBS))  # fmt: skip
    parts = [f"{job} {mean[job, 'fair']:.1f} ({min(minutes[job, 'fair']):.1f}-{max(minutes[job, 'fair']):.1f}) -> "
             f"{mean[job, 'coupling']:.1f} min ({_change(mean[job, 'fair'], mean[job, 'coupling'])})"
             for job in TABLE_II_JOBS]  # fmt: skip
    text = f"mean over {len(seeds)} seed(s), Fair -> Coupling: " + "; ".join(parts)
    no_slower = all(mean[job, "coupling"] <= 1.05 * mean[job, "fair"] for job in TABLE_II_JOBS)
    return text, no_slower, plots.grouped_bars(table, "job time (min)", "Coupling Fig 12: single jobs")


def coupling_fig5_6(runs: Runs):
    _, sf, sc = _coupling(runs, "coupling-ten-grep")
    text = _mean_times(sf, sc)
    return text, sc["mean_job_s"] < sf["mean_job_s"], _job_times({"Fair": sf, "Coupling": sc}, "Coupling Fig 6a")


def _only(job_s: dict[str, float | None]) -> float:
    """A single-job run's job time."""
    (time_s,) = job_s.values()
    return time_s


def mean_running_maps(tasks: pd.DataFrame) -> float:
    """Time-weighted mean of the running maps (a run's tasks table) from the first launch to the last map's end
    (Figs. 10-11)."""
    maps = tasks[tasks["kind"] == "m"]
    start, end = float(maps["start_s"].min()), float(maps["end_s"].max())
    times, counts = plots.running_counts(tasks, "m", end)
    inside = (times >= start) & (times < end)
    edges = np.r_[times[inside], end]
    return float(np.sum(counts[inside] * np.diff(edges)) / (end - start))


def coupling_fig10_11(runs: Runs):
    runs.prefetch("delay-locality", [{"scheduler": "fair"}] + [
        {"scheduler": "coupling", "coupling.beta": b} for b in (0.1, 0.5)
    ])  # fmt: skip
    fair = runs.get("delay-locality", scheduler="fair")
    peeks = {b: runs.get("delay-locality", scheduler="coupling", **{"coupling.beta": b}) for b in (0.1, 0.5)}
    time = {k: m.summary["mean_job_s"] for k, m in {"fair": fair, **peeks}.items()}
    running = {k: mean_running_maps(m.tasks) for k, m in {"fair": fair, **peeks}.items()}
    text = (f"running maps {running['fair']:.0f} Fair, {running[0.1]:.0f} beta 0.1, {running[0.5]:.0f} beta 0.5; "
            f"job time {_change(time['fair'], time[0.1])} (0.1), {_change(time['fair'], time[0.5])} (0.5)")  # fmt: skip
    same = all(time[b] < time["fair"] and running[b] > running["fair"] for b in peeks)
    return text, same, plots.running_tasks(fair.tasks, title="Coupling Fig 10 (Fair)")


def coupling_table3(runs: Runs):
    _, sf, sc = _coupling(runs, "coupling-map-only")
    text = _mean_times(sf, sc)
    return text, sc["mean_job_s"] < sf["mean_job_s"], _job_times({"Fair": sf, "Coupling": sc}, "Coupling Fig 13a")


def coupling_table4(runs: Runs):
    _, sf, sc = _coupling(runs, "coupling-22-jobs")
    starved = [np.mean(list(s["starvation_s"].values())) / 60.0 for s in (sf, sc)]
    text = (f"mean job time {_change(sf['mean_job_s'], sc['mean_job_s'])}; mean starvation {starved[0]:.1f} min SF, "
            f"{starved[1]:.1f} min SC")  # fmt: skip
    same = sc["mean_job_s"] < sf["mean_job_s"] and starved[1] < starved[0]
    return text, same, _job_times({"Fair": sf, "Coupling": sc}, "Coupling Fig 3 / Table IV")


def coupling_fig16(runs: Runs):
    _, sf, sc = _coupling(runs, "coupling-200-jobs")
    text = _mean_times(sf, sc)
    return text, sc["mean_job_s"] < sf["mean_job_s"], _job_time_cdf({"Fair": sf, "Coupling": sc}, "Coupling Fig 16")


def _job_time_cdf(runs: dict[str, dict], title: str) -> Figure:
    """Empirical CDF of the job times of each run (the paper's Fig. 16)."""
    fig = plots.new_figure(7.0, 4.5)
    ax = fig.add_subplot()
    for label, summary in runs.items():
        times = np.sort([t / 60.0 for t in summary["job_s"].values() if t is not None])
        ax.step(np.r_[0.0, times], np.r_[0.0, np.arange(1, len(times) + 1) / len(times)], where="post", label=label)
    ax.set_xlabel("job time (min)")
    ax.set_ylabel("CDF")
    ax.grid(alpha=0.3)
    ax.legend(loc="lower right", fontsize=8)
    ax.set_title(title)
    return fig


_TABLE_IV_SF = np.mean([sf for sf, _ in jobmix.TABLE_IV_STARVATION_MIN.values()])
_TABLE_IV_SC = np.mean([sc for _, sc in jobmix.TABLE_IV_STARVATION_MIN.values()])


def samr_fig9(runs: Runs):
    """SAMR Fig. 9: Sort on the samr-heterogeneous cluster under each speculation policy (quick: half the input)."""
    from scenarios.samr_experiments import POLICIES

    gb = 6.0 if runs.scale < 1 else 12.0
    runs.prefetch("samr-heterogeneous", [{"input_gb": gb, **settings} for settings in POLICIES.values()])
    models = {name: runs.get("samr-heterogeneous", input_gb=gb, **settings) for name, settings in POLICIES.items()}
    times = {name: m.summary["job_s"] or 0.0 for name, m in models.items()}
    parts = []
    for name, m in models.items():
        useful, backups = m.summary["useful_backups"], m.summary["backups"]
        parts.append(f"{name} {times[name]:.0f} s ({useful}/{backups} useful backups)")
    gain = 100 * (1 - times["samr"] / times["hadoop"])
    text = "; ".join(parts) + f"; SAMR {gain:+.0f} % vs Hadoop"
    fig = plots.runtime_cdf({name: m.tasks for name, m in models.items()}, "SAMR Fig 9 (Sort)")
    return text, times["samr"] < times["hadoop"], fig


def capacity_queues(runs: Runs):
    summary = runs.get("capacity-queues", phase_s=400.0 if runs.quick else 600.0).summary
    shares = {w: v["map_share"] for w, v in summary["windows"].items()}
    text = "; ".join(f"{w}: " + "/".join(f"{x:.2f}" for x in v.values()) for w, v in shares.items())
    users = [u["mean_map_slots"] for u in summary["queue_C_users"].values()]
    text = f"map shares A/B/C {text}; queue C users hold " + ", ".join(f"{u:.1f}" for u in users) + " slots"
    expected = {"A alone": (0.6, 0, 0), "A+B": (0.6, 0.3, 0), "A+B+C": (0.5, 0.3, 0.2)}
    close = all(abs(x - e) <= 0.05 for w, v in shares.items() for x, e in zip(v.values(), expected[w], strict=True))
    limited = sorted(users)[0] == 0 and all(3.5 <= u <= 4.5 for u in sorted(users)[1:])
    return text, close and limited, plots.share_series(summary["map_share_series"], "Capacity queues: map slot shares")


def quincy_locality(runs: Runs):
    jobs = 6 if runs.quick else 12
    runs.prefetch("quincy-locality", [{"jobs": jobs, **v} for v in QUINCY_POLICIES.values()])
    summaries = {k: runs.get("quincy-locality", jobs=jobs, **v).summary for k, v in QUINCY_POLICIES.items()}
    cross = {k: s["moved_mb"]["cross_rack_mb"] / 1024 for k, s in summaries.items()}
    node = {k: s["locality"]["node"] for k, s in summaries.items()}
    text = "; ".join(
        f"{k}: {cross[k]:.1f} GB cross-rack, {node[k]:.0%} node-local, {s['mean_job_s']:.0f} s mean job"
        + (f", solver {s['solver']['total_s']:.1f} s" if s["solver"] else "")
        for k, s in summaries.items()
    )
    return text, cross["Q"] < cross["Fair naive"], plots.moved_bars(summaries, "Quincy vs Fair: data across racks")


ENTRIES = [
    Entry("FlexSlot Fig 3: map runtimes, static vs DRS", "DRS skews runtimes more", fig3),
    Entry("FlexSlot Fig 4: tasks per node under DRS", "hot spots up to 10x the fewest", fig4),
    Entry("FlexSlot Fig 6: runtime breakdown under DRS", "steal dominates the stragglers", fig6),
    Entry("FlexSlot Table 1: skewness by cluster", "2.65 > 2.25 > 0.31", table1),
    Entry(
        "FlexSlot Fig 7: inverted-index CDF", "skewness 4.98 stock, 1.68 SkewTune, 0.96 FlexSlot", flexslot_figures.fig7
    ),
    Entry(
        "FlexSlot Fig 8: inverted-index breakdown",
        "FlexSlot steal -60.5% vs stock, -49.1% vs SkewTune (DRS); "
        "iowait -39.7% vs stock Homo., -26.7% vs SkewTune Homo.",
        flexslot_figures.fig8,
    ),
    Entry(
        "FlexSlot Fig 9: job time, 8 benchmarks",
        "FlexSlot -35.1/-29.3/-26.7/-27.4% on inverted-index, term-vector, "
        "wordcount, grep; -25/-13/-12% on k-means and the histograms; SkewTune in between",
        flexslot_figures.fig9,
    ),
    Entry(
        "FlexSlot Fig 10: job time with a co-located cluster",
        "FlexSlot -34.2 to -43.8% vs stock on the Wikipedia benchmarks, -17.1/-18% on the histograms",
        flexslot_figures.fig10,
    ),
    Entry("FlexSlot Fig 11: unlimited slots", "up to -46% vs stock, ~-17% vs limited FlexSlot", flexslot_figures.fig11),
    Entry("FlexSlot Fig 12: utilization, unlimited slots", "+10% CPU, +11% memory", flexslot_figures.fig12),
    Entry("FlexSlot Fig 13: kills per straggler", "about 1 (alpha 0.2)", flexslot_figures.fig13),
    Entry(
        "FlexSlot Fig 14: kills per straggler by alpha",
        "fall as alpha grows 0.1 -> 0.5 (inverted-index, k-means)",
        flexslot_figures.fig14,
    ),
    Entry("Coupling Figs 1-2: two Grep jobs", "job 2 starves 7.5 min under Fair, not under Coupling", coupling_fig1),
    Entry("Coupling Table II / Fig 12: single jobs", "Coupling no slower on average (Sort2 slightly slower), Grep "
          "and MonteCarlo faster, Sort1 -14.6 %", coupling_fig12),
    Entry("Coupling Figs 5-6: 10 Grep jobs", "mean job time -16.1 %", coupling_fig5_6),
    Entry("Coupling Figs 10-11: WordCount, input on 7 of 15 nodes", "Fair ~28 running maps; job time -18.3 % "
          "(beta 0.1), -38.7 % (beta 0.5)", coupling_fig10_11),
    Entry("Coupling Table III / Fig 13: map-only Greps", "mean job time -24 %", coupling_table3),
    Entry("Coupling Table IV / Fig 3: 22 jobs", f"mean job time -39.1 %; mean starvation {_TABLE_IV_SF:.1f} min SF, "
          f"{_TABLE_IV_SC:.1f} min SC", coupling_table4),
    Entry("Coupling Fig 16: 200 jobs on 62 nodes", "mean job time -21.3 %", coupling_fig16),
    Entry("SAMR Fig 9: Sort on slow and fast nodes", "SAMR ~24 % shorter than Hadoop; LATE 7 %, LATE+history 15 %",
          samr_fig9),
    Entry(
        "Capacity scheduler (slides 16-18): queues A/B/C of 50/30/20 %",
        "capacity under contention, idle slots borrowed up to maximum-capacity, users held to the minimum user limit",
        capacity_queues,
    ),
    Entry(
        "Quincy (SOSP 2009) vs greedy and delay scheduling",
        "up to 3.9x less cross-cluster data than greedy",
        quincy_locality,
    ),
    Entry("Delay Scheduling Sec. 5, IO-heavy: node-local maps per bin", "fair + delay near 1 in every bin; naive "
          "fair and FIFO far lower for small jobs", delay_figures.locality),
    Entry("Delay Scheduling Sec. 5, IO-heavy: response time per bin", "fair + delay faster than naive fair for "
          "small and medium jobs (bins 1-6)", delay_figures.response_times),
]  # fmt: skip


def reproduce(
    out: Path, quick: bool = False, progress: bool = True, processes: int | None = None, dask: Any = None,
    seed: int = 1,
) -> Path:  # fmt: skip
    """Measure the entries not yet in DIR, write DIR/report.md from every entry's row; returns the report's path.

    Resumes like `vcloud sweep`: each entry's row and plot are kept in DIR (`report_rows`) as it is measured, and
    an entry whose row DIR holds from the same configuration (quick or full, seed) is not measured again.
    `processes`: local worker processes (default one per CPU; 1: every run here, one after another); `dask`: a
    Dask scheduler's address, "local" (a LocalCluster of `processes` workers) or a `distributed.Client`."""
    store = RowStore(out)
    keys = {n: row_key(quick, seed, entry.figure) for n, entry in enumerate(ENTRIES, start=1)}
    rows: dict[int, Row] = {n: row for n in keys if (row := store.load(n, keys[n])) is not None}
    pending = [n for n in keys if n not in rows]
    if rows and progress:
        print(f"{len(rows)} of {len(ENTRIES)} entries already measured in {store.entries}", flush=True)
    with ExitStack() as stack:
        # first: a backend that cannot be reached leaves nothing written; none at all when nothing is left to do
        submit = _backend(stack, processes, dask) if pending else None
        out.mkdir(parents=True, exist_ok=True)
        store.clean()
        turn = threading.Lock()
        runs = Runs(scale=0.25 if quick else 1.0, seed=seed, quick=quick, submit=submit, turn=turn)

        def measure(n: int) -> None:
            entry = ENTRIES[n - 1]
            with turn:
                if progress:
                    print(f"[{n}/{len(ENTRIES)}] {entry.figure}", flush=True)
                text, same_way, fig = entry.measure(runs)
                rows[n] = {"figure": entry.figure, "paper": entry.paper, "emulator": text,
                           "same direction": "yes" if same_way else "no", "plot": f"![]({store.png(n)})"}  # fmt: skip
                store.write(n, keys[n], rows[n], fig)  # at once: a failure or Ctrl-C later keeps it

        if submit is None:  # get() runs each run here, in the turn
            for n in pending:
                measure(n)
        elif pending:  # every entry goes on to its end (and keeps its row) before a failed one raises here
            with ThreadPoolExecutor(len(pending)) as threads:
                futures = [threads.submit(measure, n) for n in pending]
            for future in futures:
                future.result()
    ordered = [rows[n] for n in keys]
    full = report_docs.committed_rows() if quick else None
    report = out / "report.md"
    atomic_write(report, render(ordered, quick, seed, full).encode())
    store.write_rows([(n, rows[n]) for n in keys], quick, seed)
    return report


def render(rows: list[Row], quick: bool, seed: int, full: dict[str, Any] | None = None) -> str:
    """report.md: one table row per entry. A quick report gets a column more, `full scale`: whether the committed
    full report (`full`: docs/report-rows.json, `report_docs.committed_rows`) goes the same direction on that row,
    for a quarter of the input can answer otherwise (the plots and the numbers differ on every row)."""
    scale = "quick (a quarter of the input)" if quick else "full scale"
    header = list(rows[0])
    lines = [f"# Seed papers vs emulator ({scale}, seed {seed})", ""]
    if quick:
        lines += [_full_scale_note(full), ""]
        header.insert(header.index("same direction") + 1, "full scale")
    lines += ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    for row in rows:
        cells = dict(row)
        if quick:
            cells["full scale"] = _against_full(row, full)
        lines.append("| " + " | ".join(cells[h] for h in header) + " |")
    return "\n".join(lines) + "\n"


def _full_scale_note(full: dict[str, Any] | None) -> str:
    if full is None:
        return "No full report to compare with (docs/report-rows.json is missing): the `full scale` column is blank."
    commit = report_docs.short_commit(full)
    return (f"Measured on a quarter of the input, so its numbers are not the full report's. `full scale` compares "
            f"the same direction with the full report's (docs/report-rows.json, {full['date']}, commit {commit}): "
            f"\"as full scale\" where both agree, \"differs\" and its answer where they do not.")  # fmt: skip


def _against_full(row: Row, full: dict[str, Any] | None) -> str:
    if full is None:
        return ""
    answers = {r["figure"]: r["same direction"] for r in full["rows"]}
    if row["figure"] not in answers:
        return "not in the full report"
    if answers[row["figure"]] == row["same direction"]:
        return "as full scale"
    return f"**differs**: full scale says {answers[row['figure']]}"


def _backend(stack: ExitStack, processes: int | None, dask: Any) -> Callable[..., Future] | None:
    """Where the runs go: `submit(fn, *args) -> future`, or None to run them here (one process, no Dask)."""
    if dask is not None:
        client = dask_client(stack, dask, processes)
        return lambda fn, *args: client.submit(fn, *args, pure=False)  # Dask moves results with cloudpickle
    workers = processes or os.cpu_count() or 1
    if workers <= 1:
        return None
    from concurrent.futures import ProcessPoolExecutor
    from importlib import import_module

    from scenarios.worker_pool import context, exit_with_parent

    # The workers are forked from this process after it has imported what the runs need (as the sweep's:
    # scenarios/worker_pool.py), so a worker starts with them instead of importing them again (1-1.5 s each, on
    # the report's critical path). All of them now, while this process has one thread: the entries' threads come
    # later, and a pool started from one of them would fork a process with threads.
    preload = [*RUN_IMPORTS, *(type(SCENARIOS[name]).__module__ for name in SCENARIOS)]
    for name in preload:
        import_module(name)
    pool = stack.enter_context(ProcessPoolExecutor(workers, mp_context=context(preload), initializer=exit_with_parent))
    pool.submit(int).result()  # with fork, the first submission starts every worker
    return LongestFirst(pool.submit, workers).submit  # a run comes back as its `Finished` record (plain pickle)


# What the runs import when they first need it: DRS's root finder, FlexSlot's k-means (scikit-learn, 0.5 s)
RUN_IMPORTS = ("scipy.optimize", "sklearn.cluster")


_COST_S = {"coupling-200-jobs": 12.0, "delay-scheduling": 5.0, "coupling-ten-grep": 3.0, "flexslot": 2.0}


def cost_hint(scenario: str, settings: dict[str, Any]) -> float:
    """A run's rough CPU seconds at full scale (measured per run in docs/history/reproduce-runs-2026-11-24.md), only
    to start the longest first: a long run started last on 2 workers leaves the other idle at the end. Never changes a
    result."""
    cost = _COST_S.get(scenario, 1.0) * float(settings.get("scale", 1.0))
    if scenario == "flexslot":
        cost *= 1.5 if settings.get("co_cluster") else 1.0
        cost *= 1.7 if settings.get("benchmark") == "tera-sort" else 1.0
    return cost


class LongestFirst:
    """Hands `submit` (a process pool's) the waiting runs longest first (`cost_hint`), `workers` at a time.

    A pool takes its runs in the order they come: the report's entries ask for theirs in the report's order, and
    runs that wait for a pilot (the co-located ones) come last, so the longest could start last. Every outcome,
    a refused submission too, reaches the run's future, or its waiter would wait for ever."""

    def __init__(self, submit: Callable[..., Future], workers: int) -> None:
        self._submit, self._free = submit, workers
        self._waiting: list[tuple[float, int, Callable, tuple, Future]] = []
        self._lock = threading.Lock()
        self._count = 0

    def submit(self, fn: Callable[..., Finished], *args: Any) -> Future:
        """`fn(scenario, seed, settings, ...)`'s future; it starts when a worker is free and no longer run waits."""
        future: Future = Future()
        with self._lock:
            self._count += 1  # equal hints: in the order asked
            heapq.heappush(self._waiting, (-cost_hint(args[0], args[2]), self._count, fn, args, future))
        self._start()
        return future

    def _start(self) -> None:
        while True:
            with self._lock:
                if not self._free or not self._waiting:
                    return
                self._free -= 1
                *_, fn, args, future = heapq.heappop(self._waiting)
            try:
                self._submit(fn, *args).add_done_callback(lambda f, to=future: self._ended(to, f))
            except BaseException as exc:  # a broken or shut-down pool: handed to the waiter, who decides
                self._ended(future, None, exc)

    def _ended(self, to: Future, source: Future | None, exc: BaseException | None = None) -> None:
        if source is None:
            to.set_exception(exc)
        else:
            _relay(to, source)
        with self._lock:
            self._free += 1
        self._start()
