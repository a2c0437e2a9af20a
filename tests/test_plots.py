"""`vcloud trace`: the per-VM table, every plot kind, refused input, and the figure functions called directly."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from matplotlib.figure import Figure

from scenarios import plots
from scenarios.cli import main
from scenarios.inspect_run import CPU_STATES, PLOT_KINDS, Run, run_labels, vm_summary

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


@pytest.fixture(scope="session")
def runs(tmp_path_factory) -> dict[str, Path]:
    """Two small FlexSlot runs (DRS and static; DRS periods of 20 s, so that a few re-divide the pool) and one
    synthetic-cloud run."""
    root = tmp_path_factory.mktemp("runs")
    dirs = {"flex": root / "flex-drs", "static": root / "flex-static", "cloud": root / "cloud"}
    assert main(["run", "flexslot", "--set", "scale=0.03", "drs.period_s=20", "--out", str(dirs["flex"]),
                 "--quiet"]) == 0  # fmt: skip
    assert main(["run", "flexslot", "--set", "scale=0.03", "allocator=static", "--out", str(dirs["static"]),
                 "--quiet"]) == 0  # fmt: skip
    assert main(["run", "synthetic-cloud", "--set", "duration_s=120", "--out", str(dirs["cloud"]), "--quiet"]) == 0
    return dirs


def assert_png(path: Path) -> None:
    data = path.read_bytes()
    assert data[:8] == PNG_MAGIC and len(data) > 1024


@pytest.fixture
def saved(monkeypatch) -> list[list[bool]]:
    """Read back from each figure `vcloud trace --plot` saves (not only the PNG's bytes), as it is saved (`plots.save`
    clears it): whether each of its visible axes has data (lines, bars, areas or an image)."""
    figures, save = [], plots.save

    def keeping(fig, *args, **kwargs):
        figures.append([ax.has_data() for ax in fig.axes if ax.get_visible()])
        return save(fig, *args, **kwargs)

    monkeypatch.setattr(plots, "save", keeping)
    return figures


def assert_drawn(figures: list[list[bool]]) -> None:
    """One figure saved, with axes, each of them drawn on (not only a frame)."""
    assert len(figures) == 1 and figures[0] and all(figures[0])


@pytest.mark.parametrize("kind", PLOT_KINDS)
def test_every_plot_kind_writes_a_png(runs, tmp_path, capsys, saved, kind):
    out = tmp_path / f"{kind}.png"
    assert main(["trace", str(runs["flex"]), "--plot", kind, "--out", str(out)]) == 0
    assert_png(out)
    assert_drawn(saved)
    assert capsys.readouterr().out.strip() == f"wrote {out}"
    assert [p.name for p in tmp_path.iterdir()] == [out.name]  # no temporary left behind


@pytest.mark.parametrize(
    ("key", "args"),
    [
        ("cloud", ["--plot", "heatmap", "--metric", "iowait", "--bin", "30"]),
        ("cloud", ["--plot", "lines", "--vm", "vm000", "vm005", "--from", "20", "--to", "100"]),
        ("flex", ["--plot", "heatmap", "--metric", "usr", "--from", "20", "--to", "80"]),
        ("flex", ["--plot", "breakdown", "--vm", "slave00", "slave01", "slave02"]),
        ("flex", ["--plot", "running", "--from", "10", "--to", "60"]),
    ],
)
def test_plot_options(runs, tmp_path, saved, key, args):
    out = tmp_path / "sub" / "fig.png"
    assert main(["trace", str(runs[key]), *args, "--out", str(out)]) == 0
    assert_png(out)
    assert_drawn(saved)


def test_cdf_draws_several_runs_labelled_by_settings(runs, tmp_path, monkeypatch):
    figures = []
    monkeypatch.setattr("scenarios.inspect_run.save_figure", lambda fig, out: figures.append(fig) or out)
    out = tmp_path / "c.png"
    assert main(["trace", str(runs["flex"]), str(runs["static"]), "--plot", "cdf", "--out", str(out)]) == 0
    ax = figures[0].axes[0]
    labels = [line.get_label() for line in ax.get_lines()]
    # flex asked drs.period_s=20 and left allocator at drs: both differences are told, by what the runs used
    assert [label.split(" (n=")[0] for label in labels] == ["drs.period_s=20, allocator=drs",
                                                            "drs.period_s=300, allocator=static"]  # fmt: skip
    assert ax.get_title() == "CDF of map task runtimes - flexslot: scale=0.03, seed 1"
    tasks = Run(runs["static"]).table("tasks")
    runtimes = np.sort(plots.successful_maps(tasks)["runtime_s"].to_numpy())
    x, y = ax.get_lines()[1].get_data()
    assert x[-1] == pytest.approx(runtimes[-1]) and y[-1] == 1.0 and y[0] == 0.0


def test_sweep_frames_are_labelled_by_their_settings_not_their_ids(runs, tmp_path):
    """A sweep's --frames keep a run's tables in DIR/runs/ID/ and its settings in DIR/runs/ID.json."""
    frames = []
    for key, allocator in (("flex", "drs"), ("static", "static")):
        rid = f"{abs(hash(key)):016x}"[:16]
        (tmp_path / "runs" / rid).mkdir(parents=True)
        (tmp_path / "runs" / rid / "tasks.parquet").write_bytes((runs[key] / "tasks.parquet").read_bytes())
        row = {"run_id": rid, "scenario": "flexslot", "seed": 2, "settings": {"scale": 0.03, "allocator": allocator}}
        (tmp_path / "runs" / f"{rid}.json").write_text(json.dumps(row))
        frames.append(Run(tmp_path / "runs" / rid))
    labels, title = run_labels(frames)
    assert labels == ["allocator=drs", "allocator=static"] and title == "flexslot: scale=0.03, seed 2"
    same = [Run(runs["flex"]), Run(runs["flex"])]
    assert run_labels(same)[0] == [str(runs["flex"])] * 2  # nothing tells them apart but their paths


def test_titles_come_from_the_settings(runs, tmp_path, monkeypatch):
    figures = []
    monkeypatch.setattr("scenarios.inspect_run.save_figure", lambda fig, out: figures.append(fig) or out)
    for kind in ("breakdown", "heatmap", "lines", "running", "tasks-per-node"):
        assert main(["trace", str(runs["static"]), "--plot", kind, "--out", str(tmp_path / "x.png")]) == 0
    for fig in figures:
        texts = [fig.get_suptitle(), *(ax.get_title() for ax in fig.axes)]
        assert any(t.endswith("flexslot: scale=0.03, allocator=static, seed 1") for t in texts), texts
        assert not any(runs["static"].name in t for t in texts)


def heat_trace(names: list[str], samples: int = 6, interval: float = 10.0) -> pd.DataFrame:
    """A trace of `names` (2 vCPUs each): VM i has steal share i / (10 n) in every sample, VM 0 a noise of 5e-16."""
    rows = []
    for t in range(1, samples + 1):
        for i, name in enumerate(names):
            steal = 2 * interval * (i / (10 * len(names)) if i else 5e-16)
            rows.append({"time_s": t * interval, "vm": name, "vcpus": 2, "steal_s": steal,
                         "usr_s": 2 * interval - steal, "sys_s": 0.0, "iowait_s": 0.0, "idle_s": 0.0})  # fmt: skip
    return pd.DataFrame(rows)


def test_heatmap_rows_are_grouped_named_cleanly_and_noise_is_zero():
    names = [f"cluster{50000 + i}\\.secondleveldomain\\.com" for i in range(534)]
    grid = plots.heat_grid(heat_trace(names))
    assert len(grid) == 45 and grid.index[0] == "cluster50000 … cluster50011 (12)"  # ceil(534 / 48) = 12 a row
    assert grid.index[-1] == "cluster50528 … cluster50533 (6)"
    assert list(grid.columns) == [0.0, 10.0, 20.0, 30.0, 40.0, 50.0]
    first = heat_trace(names[:12])  # the first row: its 12 VMs' steal seconds over their accounted seconds
    assert grid.iloc[1, 0] == pytest.approx(sum(range(12, 24)) / (10 * 534) / 12)
    small = plots.heat_grid(heat_trace(names[:3]))
    assert list(small.index) == ["cluster50000", "cluster50001", "cluster50002"]
    assert (small.iloc[0] == 0.0).all()  # 5e-16: numerical noise, drawn as 0
    ax = plots.share_heatmap(first).axes[0]
    image = ax.get_images()[0]
    assert image.get_clim() == (0.0, pytest.approx(11 / 120))  # the largest share, not the noise
    assert [t.get_text() for t in ax.get_yticklabels()][:2] == ["cluster50000", "cluster50001"]


def test_heatmaps_of_several_runs_share_scale_and_time_axis():
    short = heat_trace(["a", "b"], samples=3)
    long = heat_trace(["c", "d", "e"], samples=8)
    fig = plots.share_heatmaps({"short": short, "long": long}, vmax=0.05)
    heat_axes = [ax for ax in fig.axes if ax.get_images()]
    assert [ax.get_title(loc="left") for ax in heat_axes] == ["short", "long"]
    assert {ax.get_images()[0].get_clim() for ax in heat_axes} == {(0.0, 0.05)}
    assert {ax.get_xlim() for ax in heat_axes} == {(0.0, 80.0)}
    shared = plots.share_heatmaps({"short": short, "long": long})  # default: the largest share of either
    tops = [ax.get_images()[0].get_clim()[1] for ax in shared.axes if ax.get_images()]
    assert tops == [pytest.approx(2 / 30)] * 2  # VM e of the long run: 2 / (10 x 3)
    with pytest.raises(plots.PlotError, match="vmax 0: must be in"):
        plots.share_heatmap(short, vmax=0)
    with pytest.raises(plots.PlotError, match=r"bin 1e-09: shorter than the trace interval 10 s"):
        plots.share_heatmap(short, bin_s=1e-9)


def test_heatmap_of_two_runs_on_the_command_line(runs, tmp_path, monkeypatch):
    figures = []
    monkeypatch.setattr("scenarios.inspect_run.save_figure", lambda fig, out: figures.append(fig) or out)
    argv = ["trace", str(runs["flex"]), str(runs["static"]), "--plot", "heatmap", "--vmax", "0.4"]
    assert main([*argv, "--out", str(tmp_path / "h.png")]) == 0
    heat_axes = [ax for ax in figures[0].axes if ax.get_images()]
    assert [ax.get_title(loc="left") for ax in heat_axes][1] == "drs.period_s=300, allocator=static"
    assert {ax.get_images()[0].get_clim() for ax in heat_axes} == {(0.0, 0.4)}
    assert len({ax.get_xlim() for ax in heat_axes}) == 1


def parse_table(text: str) -> tuple[list[str], pd.DataFrame]:
    lines = text.strip().splitlines()
    header, rows = lines[0].split(), [line.split() for line in lines[2:]]
    frame = pd.DataFrame([r[1:] for r in rows], columns=header, index=[r[0] for r in rows])
    return header, frame


@pytest.mark.parametrize("key", ["flex", "cloud"])
def test_table_has_one_row_per_vm_and_shares_sum_to_one(runs, capsys, key):
    trace = pd.read_parquet(runs[key] / "vm_trace.parquet")
    assert main(["trace", str(runs[key])]) == 0
    header, table = parse_table(capsys.readouterr().out)
    assert list(table.index) == list(trace["vm"].cat.categories)
    assert {*CPU_STATES, "steal_s", "demand_mhz", "entitled_mhz", "used_mhz", "swap_mb", "disk_mbps"} <= set(header)
    shares = table[list(CPU_STATES)].astype(float)
    assert np.allclose(shares.sum(axis=1), 1.0, atol=5 * 0.5e-4)  # printed to 4 decimals
    summary = vm_summary(trace)
    assert len(summary) == trace["vm"].nunique()
    assert np.allclose(summary[list(CPU_STATES)].sum(axis=1), 1.0, rtol=0, atol=1e-6)
    seconds = trace.groupby("vm", observed=True)["steal_s"].sum()
    assert np.allclose(summary["steal_s"], seconds.reindex(summary.index), rtol=1e-6)


def test_table_window_and_vms(runs, capsys):
    assert main(["trace", str(runs["cloud"]), "--vm", "vm003", "vm001", "--from", "30", "--to", "60"]) == 0
    _, table = parse_table(capsys.readouterr().out)
    assert list(table.index) == ["vm001", "vm003"]  # in the trace's VM order
    trace = pd.read_parquet(runs["cloud"] / "vm_trace.parquet")
    rows = trace[(trace["vm"] == "vm001") & (trace["time_s"] > 30) & (trace["time_s"] <= 60)]
    assert float(table.loc["vm001", "idle_s"]) == pytest.approx(rows["idle_s"].sum(), abs=0.06)


@pytest.mark.parametrize(
    ("args", "needle"),
    [
        (["{missing}"], "no-such-run: no such directory"),
        (["{missing}", "--plot", "cdf"], "no-such-run: no such directory"),
        (["{cloud}", "--plot", "tasks-per-node"], "tasks.parquet: no such file"),
        (["{cloud}", "--plot", "breakdown"], "tasks.parquet: no such file"),
        (["{flex}", "{cloud}", "--plot", "cdf"], "tasks.parquet: no such file"),
        (["{flex}", "--vm", "slave00", "slave99"], "--vm slave99"),
        (["{flex}", "--plot", "lines", "--vm", "nosuchvm"], "--vm nosuchvm"),
        (["{flex}", "--plot", "tasks-per-node", "--vm", "ghost"], "--vm ghost"),
        (["{flex}", "--from", "100", "--to", "50"], "--from 100 is after --to 50"),
        (["{flex}", "--plot", "running", "--from", "100", "--to", "50"], "--from 100 is after --to 50"),
        (["{flex}", "--from", "5000"], "no trace samples in (5000, end]"),
        (["{flex}", "{static}", "--plot", "lines"], "--plot lines: takes one RUN_DIR, got 2"),
        (["{flex}", "{static}"], "takes one RUN_DIR, got 2"),
        (["{flex}", "--plot", "lines", "--metric", "iowait"], "--metric iowait: only with --plot heatmap"),
        (["{flex}", "--plot", "heatmap", "--bin", "0"], "--bin 0: must be > 0"),
        (["{flex}", "--plot", "heatmap", "--bin", "1e-9"], "--bin 1e-09: shorter than the trace interval 10 s"),
        (["{flex}", "--plot", "heatmap", "--vmax", "0"], "--vmax 0: must be in (0, 1]"),
        (["{flex}", "--plot", "heatmap", "--vmax", "-0.5"], "--vmax -0.5: must be in (0, 1]"),
        (["{flex}", "--plot", "heatmap", "--vmax", "1.5"], "--vmax 1.5: must be in (0, 1]"),
        (["{flex}", "--plot", "lines", "--vmax", "0.5"], "--vmax 0.5: only with --plot heatmap"),
        (["{flex}", "--vmax", "0.5"], "--vmax: only with --plot KIND"),
        (["{static}", "--plot", "persistence"], "no pair of DRS periods to correlate"),
        (["{flex}", "--plot", "heatmap", "--out", "{out}.gif"], "unknown image format 'gif'"),
        (["{flex}", "--plot", "heatmap", "--out", "-"], "-: unknown image format ''"),
    ],
)
def test_bad_input_is_one_line_exit_2_and_nothing_written(runs, tmp_path, capsys, args, needle):
    out = tmp_path / "out" / "fig"
    names = {k: str(v) for k, v in runs.items()} | {"missing": str(tmp_path / "no-such-run"), "out": str(out)}
    argv = ["trace", *(a.format(**names) for a in args)]
    if "--out" not in argv and "--plot" in argv:
        argv += ["--out", f"{out}.png"]
    assert main(argv) == 2
    captured = capsys.readouterr()
    err = captured.err.strip()
    assert needle in err and "\n" not in err and captured.out == ""
    assert list(tmp_path.iterdir()) == []


def test_plot_without_out_and_out_without_plot(runs, capsys):
    assert main(["trace", str(runs["flex"]), "--plot", "cdf"]) == 2
    assert "--plot cdf: needs --out FILE.png" in capsys.readouterr().err
    assert main(["trace", str(runs["flex"]), "--out", "x.png"]) == 2
    assert "--out: only with --plot KIND" in capsys.readouterr().err
    assert not Path("x.png").exists()


def test_unknown_plot_kind_is_refused_by_argparse(runs, tmp_path, capsys):
    with pytest.raises(SystemExit) as exc:
        main(["trace", str(runs["flex"]), "--plot", "pie", "--out", str(tmp_path / "pie.png")])
    assert exc.value.code == 2
    assert "invalid choice: 'pie'" in capsys.readouterr().err
    assert list(tmp_path.iterdir()) == []


def test_figure_functions_return_figures(runs):
    trace = Run(runs["flex"]).table("vm_trace")
    tasks = Run(runs["flex"]).table("tasks")
    figures = [
        plots.share_heatmap(trace),
        plots.share_heatmap(trace, metric="idle", bin_s=25),
        plots.share_lines(trace),
        plots.share_lines(trace, vms=["slave03"]),
        plots.task_breakdown(tasks),
        plots.runtime_cdf(tasks),
        plots.tasks_per_node(tasks, nodes=[f"slave{i:02d}" for i in range(30)]),
        plots.running_tasks(tasks),
    ]
    assert all(isinstance(f, Figure) for f in figures)
    labels = [line.get_label() for line in figures[2].axes[0].get_lines()]
    assert len(figures[2].axes) == 2 and labels[0] == "cluster" and len(labels) == 3  # cluster + 2 most steal
    assert "(most steal)" in labels[1]
    assert [line.get_label() for line in figures[3].axes[0].get_lines()] == ["slave03"]
    bars = figures[6].axes[0].patches
    done = tasks[(tasks["kind"] == "m") & (tasks["state"] == "done")]
    assert sum(b.get_height() for b in bars) == len(done)
    with pytest.raises(ValueError, match="metric 'cpu'"):
        plots.share_heatmap(trace, metric="cpu")


def test_breakdown_parts_add_up_to_runtime(runs):
    tasks = Run(runs["flex"]).table("tasks")
    parts = plots.breakdown_parts(tasks)
    done = tasks[(tasks["kind"] == "m") & (tasks["state"] == "done")]
    assert len(parts) == len(done) and set(parts["attempt"]) == set(done["attempt"])
    stacked = parts[["cputime", "iowait", "steal", "other"]]
    assert (stacked >= 0).all().all() and parts["runtime_s"].is_monotonic_increasing
    assert np.allclose(stacked.sum(axis=1), parts["runtime_s"], atol=0.05)  # "other" clipped at 0: tick rounding
    body = plots.task_breakdown(tasks).axes[0]
    assert [c.get_label() for c in body.containers] == ["cputime", "iowait", "steal", "other"]
    assert body.get_ylim()[1] >= parts["runtime_s"].max()


def bar_tops(ax) -> np.ndarray:
    """Each bar's top: the height of the stack at each x."""
    tops: dict[float, float] = {}
    for bar in ax.patches:
        x = round(bar.get_x() + bar.get_width() / 2, 6)
        tops[x] = max(tops.get(x, 0.0), bar.get_y() + bar.get_height())
    return np.array([tops[x] for x in sorted(tops)])


def test_breakdown_shows_the_slowest_maps_one_bar_each():
    n = 2568  # the maps of a 534-node trace replay: each under 0.5 px when drawn one bar each
    rng = np.random.default_rng(1)
    runtime = np.r_[rng.uniform(10, 40, n - 3), 161.0, 164.0, 222.0]
    tasks = pd.DataFrame({"kind": "m", "state": "done", "attempt": [f"a{i}" for i in range(n)], "start_s": 0.0,
                          "end_s": runtime, "cputime_s": runtime * 0.6, "iowait_s": runtime * 0.1,
                          "steal_s": runtime * 0.2})  # fmt: skip
    body, tail = plots.task_breakdown(tasks).axes
    assert len(bar_tops(body)) <= plots.BODY_BINS
    tops = bar_tops(tail)
    k = plots.TAIL_BARS  # a decile is 257 maps: capped
    assert np.allclose(tops, np.sort(runtime)[-k:]) and tops[-3:].tolist() == pytest.approx([161, 164, 222])
    assert tail.get_title() == f"slowest {k} maps (2 %)"
    assert body.get_xlim() == (0.5, n + 0.5) and tail.get_xlim() == (n - k + 0.5, n + 0.5)
    slowest = next(line for line in body.get_lines() if line.get_label() == "slowest in bin")
    assert slowest.get_ydata().max() == 222.0  # the binned body keeps each bin's slowest map as a line
    assert body.get_shared_y_axes().joined(body, tail)
    assert [t.get_text() for t in tail.texts] == ["161 s", "164 s", "222 s"]


def test_persistence_draws_points_not_a_trend_and_no_empty_legend_entry():
    persistence = {"periods": 3, "times_s": [600.0, 900.0], "cpu_by_period": [0.5, 0.8], "cpu": 0.65,
                   "mem_by_period": [None, None], "mem": None}  # fmt: skip
    ax = plots.entitlement_persistence(persistence).axes[0]
    cpu = [line for line in ax.get_lines() if line.get_label().startswith("CPU")]
    assert len(cpu) == 1 and cpu[0].get_linestyle() == "None" and list(cpu[0].get_ydata()) == [0.5, 0.8]
    assert [t.get_text() for t in ax.get_legend().get_texts()] == ["CPU (mean 0.65, 2 pairs)"]
    assert "memory" in ax.texts[0].get_text()
    longer = dict(persistence, times_s=[600.0, 900.0, 1200.0], cpu_by_period=[0.5, None, 0.9])
    line = next(li for li in plots.entitlement_persistence(longer).axes[0].get_lines() if li.get_label()[:3] == "CPU")
    assert list(line.get_xdata()) == [600.0, 1200.0]  # a pair without ranks is left out, not drawn as 0


def test_running_counts_step_function():
    tasks = pd.DataFrame(
        {"kind": ["m", "m", "m", "r"], "start_s": [0.0, 1.0, 2.0, 1.5], "end_s": [2.0, 3.0, np.nan, 4.0]}
    )
    times, counts = plots.running_counts(tasks, "m", end_s=5.0)
    assert list(times) == [0.0, 0.0, 1.0, 2.0, 3.0, 5.0]
    assert list(counts) == [0.0, 1.0, 2.0, 2.0, 1.0, 0.0]  # at t=2 one ends as another starts
    times, counts = plots.running_counts(tasks, "r", end_s=5.0)
    assert list(times) == [0.0, 1.5, 4.0] and list(counts) == [0.0, 1.0, 0.0]


def test_running_tasks_split_by_job_when_few_jobs():
    tasks = pd.DataFrame({"job": ["a", "a", "b", "b"], "kind": ["m", "r", "m", "r"], "start_s": [0.0, 1.0, 0.5, 2.0],
                          "end_s": [1.0, 3.0, 2.0, 4.0]})  # fmt: skip
    labels = [line.get_label() for line in plots.running_tasks(tasks).axes[0].get_lines()]
    assert labels == ["a maps", "a reduces", "b maps", "b reduces"]
    labels = [line.get_label() for line in plots.running_tasks(tasks, by_job=False).axes[0].get_lines()]
    assert labels == ["maps", "reduces"]
