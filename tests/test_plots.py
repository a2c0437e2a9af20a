"""`vcloud trace`: the per-VM table, every plot kind, refused input, and the figure functions called directly."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from matplotlib.figure import Figure

from scenarios import plots
from scenarios.cli import main
from scenarios.inspect_run import CPU_STATES, PLOT_KINDS, Run, vm_summary

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


@pytest.fixture(scope="session")
def runs(tmp_path_factory) -> dict[str, Path]:
    """Two small FlexSlot runs (DRS and static) and one synthetic-cloud run."""
    root = tmp_path_factory.mktemp("runs")
    dirs = {"flex": root / "flex-drs", "static": root / "flex-static", "cloud": root / "cloud"}
    assert main(["run", "flexslot", "--set", "scale=0.03", "--out", str(dirs["flex"]), "--quiet"]) == 0
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


def test_cdf_draws_several_runs(runs, tmp_path):
    out = tmp_path / "cdf.png"
    assert main(["trace", str(runs["flex"]), str(runs["static"]), "--plot", "cdf", "--out", str(out)]) == 0
    assert_png(out)
    tasks = {name: Run(runs[name]).table("tasks") for name in ("flex", "static")}
    fig = plots.runtime_cdf(tasks)
    assert [line.get_label().split(" ")[0] for line in fig.axes[0].get_lines()] == ["flex", "static"]


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
        (["{flex}", "{static}", "--plot", "heatmap"], "--plot heatmap: takes one RUN_DIR, got 2"),
        (["{flex}", "{static}"], "takes one RUN_DIR, got 2"),
        (["{flex}", "--plot", "lines", "--metric", "iowait"], "--metric iowait: only with --plot heatmap"),
        (["{flex}", "--plot", "heatmap", "--bin", "0"], "--bin 0: must be > 0"),
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
    assert len(figures[2].axes) == 2 and len(figures[2].axes[0].get_lines()) == 4
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
    ax = plots.task_breakdown(tasks).axes[0]
    assert [c.get_label() for c in ax.collections] == ["cputime", "iowait", "steal", "other"]
    assert ax.get_ylim()[1] >= parts["runtime_s"].max()


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
