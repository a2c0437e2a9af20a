"""`vcloud sweep` and `ScenarioModel`: backends agree, a killed sweep resumes, bad SPECs are one line."""

import json
import os
import signal
import subprocess
import sys
import threading
import time
import tomllib
from pathlib import Path

import pandas as pd
import pytest
from mesa.batchrunner import batch_run

from scenarios.batch_model import ScenarioModel, scalar_figures
from scenarios.cli import main
from scenarios.sweep import SweepError, load_spec, parse_spec, run_sweep

ROOT = Path(__file__).resolve().parents[1]

# 2 allocators x 2 loads x 2 seeds, one simulated minute each
SPEC = """
scenario = "synthetic-cloud"
seeds = [1, 2]

[settings]
allocator = ["static", "drs"]
items_per_vm = [1, 2]
duration_s = [60]
"""


def write(path: Path, text: str) -> Path:
    path.write_text(text)
    return path


@pytest.fixture(scope="module")
def processes_results(tmp_path_factory) -> pd.DataFrame:
    """The 2 x 2 x 2 sweep on two local processes (forked from this process)."""
    tmp = tmp_path_factory.mktemp("sweep")
    report = run_sweep(write(tmp / "spec.toml", SPEC), tmp / "out", processes=2, progress=False)
    assert (report.total, report.skipped, report.ran, report.failed) == (8, 0, 8, 0)
    return pd.read_parquet(tmp / "out" / "results.parquet")


def test_results_have_one_row_per_run_in_grid_order(processes_results):
    df = processes_results
    assert len(df) == 8 and df.run_id.is_unique and df.error.isna().all()
    assert list(df.columns[:7]) == ["run_id", "scenario", "seed", "settings.allocator", "settings.items_per_vm",
                                    "settings.duration_s", "error"]  # fmt: skip
    assert list(df["settings.allocator"]) == ["static"] * 4 + ["drs"] * 4
    assert list(df["settings.items_per_vm"]) == [1, 1, 2, 2] * 2
    assert list(df.seed) == [1, 2] * 4
    assert (df.simulated_s == 60.0).all() and {"pool_cpu_utilization", "items_done.cpu"} <= set(df.columns)
    # the load and the seed matter (at this light load, for one minute, the two allocators agree)
    assert df.groupby(["settings.items_per_vm", "seed"]).pool_cpu_utilization.first().nunique() == 4


def test_a_local_cluster_gives_identical_results(tmp_path, processes_results):
    distributed = pytest.importorskip("distributed")
    # processes=False: one in-process worker thread, light on a 2-core machine (the runs are still tasks
    # shipped through the scheduler); the with-blocks shut the cluster and the client down.
    with (
        distributed.LocalCluster(n_workers=1, threads_per_worker=1, processes=False, dashboard_address=None) as cluster,
        distributed.Client(cluster) as client,
    ):
        report = run_sweep(write(tmp_path / "spec.toml", SPEC), tmp_path / "out", dask=client, progress=False)
    assert (report.ran, report.failed) == (8, 0)
    pd.testing.assert_frame_equal(pd.read_parquet(tmp_path / "out" / "results.parquet"), processes_results)


def test_a_process_with_threads_sweeps_on_a_fork_server_with_the_same_rows(tmp_path, processes_results):
    stop = threading.Event()
    thread = threading.Thread(target=stop.wait)  # as a Dask client's loop: forking this process is unsafe
    thread.start()
    try:
        report = run_sweep(write(tmp_path / "spec.toml", SPEC), tmp_path / "out", processes=2, progress=False)
    finally:
        stop.set()
        thread.join()
    assert (report.ran, report.failed) == (8, 0)
    pd.testing.assert_frame_equal(report.results, processes_results)


@pytest.mark.filterwarnings("ignore:This process .* is multi-threaded, use of fork:DeprecationWarning")
def test_dask_local_forks_its_workers_with_the_same_rows(tmp_path, processes_results):
    pytest.importorskip("distributed")
    report = run_sweep(write(tmp_path / "spec.toml", SPEC), tmp_path / "out", processes=2, dask="local",
                       progress=False)  # fmt: skip
    assert (report.ran, report.failed) == (8, 0)
    pd.testing.assert_frame_equal(report.results, processes_results)


def test_a_row_is_the_summary_of_vcloud_run(tmp_path, processes_results):
    out = tmp_path / "one"
    assert main(["run", "synthetic-cloud", "--set", "allocator=drs items_per_vm=2 duration_s=60", "--seed", "2",
                 "--out", str(out), "--quiet"]) == 0  # fmt: skip
    written = json.loads((out / "summary.json").read_text())
    assert written.pop("provenance")  # in results.parquet's schema metadata, not in its rows
    summary = scalar_figures(written)
    row = processes_results.iloc[7]
    assert (row["settings.allocator"], row["settings.items_per_vm"], row.seed) == ("drs", 2, 2)
    assert {k: row[k] for k in summary} == summary


def test_scenario_model_under_mesa_batch_run(processes_results):
    grid = {"scenario": "synthetic-cloud", "duration_s": 60, "allocator": ["static", "drs"], "items_per_vm": [1, 2]}
    rows = batch_run(ScenarioModel, grid, rng=[1, 2], max_steps=100, display_progress=False)
    df = pd.DataFrame(rows)
    assert len(df) == 8 and df.finished.all() and df.error.isna().all() and (df.Step == 2).all()  # 2 x 30 s
    ours = processes_results.rename(columns={"seed": "rng", "settings.items_per_vm": "items_per_vm"})
    merged = df.merge(ours, on=["allocator", "items_per_vm", "rng"], suffixes=("", "_sweep"))
    assert len(merged) == 8
    assert (merged.pool_cpu_utilization == merged.pool_cpu_utilization_sweep).all()
    assert (merged["items_done.io"] == merged["items_done.io_sweep"]).all()


def test_scenario_model_takes_nested_settings_as_double_underscores_and_stops_at_max_steps():
    model = ScenarioModel("synthetic-cloud", rng=3, duration_s=60, drs__period_s=20, static__hard_limit=False)
    assert model.settings.drs.period_s == 20 and model.settings.static.hard_limit is False
    rows = batch_run(ScenarioModel, {"duration_s": 120, "chunk_s": 10}, rng=[1], max_steps=5, display_progress=False)
    assert len(rows) == 1 and rows[0]["finished"] is False and rows[0]["sim_time_s"] == 0.0
    with pytest.raises(ValueError, match=r"drs\.period_s=-1"):
        ScenarioModel("synthetic-cloud", rng=1, drs__period_s=-1)


def test_a_failing_run_is_recorded_and_the_sweep_goes_on(tmp_path):
    # heterogeneous.cpu_mhz with 1 entry for 32 VMs passes the settings but fails when the model starts
    spec = write(tmp_path / "spec.yaml", """
scenario: synthetic-cloud
seeds: [1]
settings:
  allocator: [heterogeneous, static]
  heterogeneous.cpu_mhz: [[1000.0]]
  duration_s: [60]
""")  # fmt: skip
    report = run_sweep(spec, tmp_path / "out", processes=1, progress=False)
    df = report.results
    assert (report.ran, report.failed) == (2, 1)
    assert df.error[0].startswith("ValueError: ") and "\n" not in df.error[0] and pd.isna(df.pool_cpu_utilization[0])
    assert pd.isna(df.error[1]) and df.pool_cpu_utilization[1] > 0
    again = run_sweep(spec, tmp_path / "out", processes=1, progress=False)
    assert (again.skipped, again.ran) == (2, 0)
    retried = run_sweep(spec, tmp_path / "out", processes=1, progress=False, retry_errors=True)
    assert (retried.skipped, retried.ran, retried.failed) == (1, 1, 1)
    pd.testing.assert_frame_equal(retried.results, df)
    # on the command line the sweep goes on to the end, then exits 1 so that scripts notice
    assert main(["sweep", str(spec), "--out", str(tmp_path / "out"), "--quiet", "--processes", "1"]) == 1


def test_a_sweep_killed_mid_way_resumes_without_losing_or_repeating_a_run(tmp_path):
    spec = write(tmp_path / "spec.toml", SPEC.replace("[60]", "[300]"))  # runs long enough to be caught mid-way
    out = tmp_path / "out"
    args = [sys.executable, "-m", "scenarios.cli", "sweep", str(spec), "--out", str(out), "--processes", "2", "--quiet"]
    proc = subprocess.Popen(args, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 120
        while not list(out.glob("runs/*.json")):
            assert proc.poll() is None and time.monotonic() < deadline, "the sweep ended before a run finished"
            time.sleep(0.02)
        workers = _children(proc.pid)
        os.kill(proc.pid, signal.SIGKILL)  # the sweep's process only, as `kill -9 PID`
        proc.wait()
    finally:
        if proc.poll() is None:
            proc.kill()
    deadline = time.monotonic() + 30
    while any(_alive(pid) for pid in workers):  # orphaned pool workers notice and exit
        assert time.monotonic() < deadline, "pool workers outlived the killed sweep"
        time.sleep(0.1)
    before = {p.name: (p.stat().st_ino, p.stat().st_mtime_ns, p.read_bytes()) for p in out.glob("runs/*.json")}
    assert 1 <= len(before) < 8, f"{len(before)} runs finished: the kill did not land mid-way"
    assert not (out / "results.parquet").exists()

    report = run_sweep(spec, out, processes=2, progress=False)
    assert (report.skipped, report.ran, report.failed) == (len(before), 8 - len(before), 0)
    for name, (ino, mtime, data) in before.items():  # not recomputed, not rewritten
        p = out / "runs" / name
        assert (p.stat().st_ino, p.stat().st_mtime_ns, p.read_bytes()) == (ino, mtime, data)
    assert not list((out / "runs").glob(".*"))  # no half-written leftovers
    whole = run_sweep(spec, tmp_path / "whole", processes=1, progress=False)
    pd.testing.assert_frame_equal(report.results, whole.results)
    pd.testing.assert_frame_equal(pd.read_parquet(out / "results.parquet"), whole.results)


def test_ctrl_c_stops_the_sweep_and_its_workers_at_once(tmp_path):
    spec = write(tmp_path / "spec.toml", SPEC.replace("[60]", "[3600]"))  # runs far longer than the test waits
    args = [sys.executable, "-m", "scenarios.cli", "sweep", str(spec), "--out", str(tmp_path / "out"), "--processes",
            "2", "--quiet"]  # fmt: skip
    proc = subprocess.Popen(
        args,
        cwd=ROOT,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )
    try:
        deadline = time.monotonic() + 60
        while len(workers := _children(proc.pid)) < 2:
            assert proc.poll() is None and time.monotonic() < deadline, "the workers did not start"
            time.sleep(0.02)
        time.sleep(0.5)  # into their first runs
        os.killpg(proc.pid, signal.SIGINT)  # as Ctrl-C in a terminal: the whole process group
        assert proc.wait(timeout=20) == 130  # not after the runs in flight
        assert "interrupted (the runs finished so far are in" in proc.stderr.read()
    finally:
        if proc.poll() is None:
            proc.kill()
    deadline = time.monotonic() + 10
    while any(_alive(pid) for pid in workers):
        assert time.monotonic() < deadline, "pool workers outlived the interrupted sweep"
        time.sleep(0.05)


def _children(pid: int) -> list[int]:
    return [int(c) for t in Path(f"/proc/{pid}/task").iterdir() for c in (t / "children").read_text().split()]


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (FileNotFoundError, ProcessLookupError):
        return False
    return state not in ("Z", "X")


def test_toml_and_yaml_specs_give_the_same_runs(tmp_path):
    toml = load_spec(write(tmp_path / "a.toml", SPEC.replace("duration_s = [60]", "drs.period_s = [60, 120]")))
    yaml = load_spec(write(tmp_path / "a.yml", """
scenario: synthetic-cloud
seeds: [1, 2]
settings: {allocator: [static, drs], items_per_vm: [1, 2], drs: {period_s: [60.0, 120]}}
"""))  # fmt: skip
    # drs.period_s is not read under allocator=static: 2 x 2 x 2 x 2 grid points, of which 4 the same as others
    assert [r.run_id for r in toml.runs] == [r.run_id for r in yaml.runs] and len(toml.runs) == 12
    assert toml.runs[0].settings == {"allocator": "static", "items_per_vm": 1, "drs.period_s": None}
    assert toml.runs[0].model_kwargs() == {"allocator": "static", "items_per_vm": 1}
    assert toml.runs[-1].model_kwargs() == {"allocator": "drs", "items_per_vm": 2, "drs__period_s": 120.0}


FLEXSLOT_SKEW = 'scenario = "flexslot"\nseeds = [1]\nsettings = {skew_sched = [true]}\n'
GOOD_TOML = 'scenario = "synthetic-cloud"\nseeds = [1]\n[settings]\nallocator = ["drs"]\n'


@pytest.mark.parametrize(
    ("name", "text", "needle"),
    [
        ("s.toml", 'scenario = "synthetic-cloud"\n', "missing field 'seeds'"),
        ("s.toml", GOOD_TOML.replace("seeds", "seed"), "unknown field 'seed'"),
        ("s.toml", GOOD_TOML.replace('"synthetic-cloud"', '"nosuch"'), "scenario='nosuch': unknown scenario"),
        ("s.toml", GOOD_TOML.replace("[1]", '[1, "two"]'), "seeds[1]='two'"),
        ("s.toml", GOOD_TOML.replace("[1]", "[3, 3]"), "seed 3 is given more than once"),
        ("s.toml", GOOD_TOML.replace("[1]", "[]"), "seeds=[]"),
        ("s.toml", GOOD_TOML.replace("[1]", "[-1]"), "seeds[0]=-1"),
        ("s.toml", GOOD_TOML.replace('["drs"]', '"drs"'), "settings.allocator: expected a non-empty list"),
        ("s.toml", GOOD_TOML.replace('["drs"]', "[]"), "settings.allocator: expected a non-empty list"),
        ("s.toml", GOOD_TOML.replace('["drs"]', '["drs", "drs"]'), "settings.allocator: value 'drs' is given more"),
        ("s.toml", GOOD_TOML + "drs.period_s = [60, -5]\n", "setting drs.period_s=-5"),
        ("s.toml", GOOD_TOML + "drs.perod_s = [60]\n", "unknown setting drs.perod_s=60"),
        ("s.toml", GOOD_TOML.replace('["drs"]', '["magic"]'), "setting allocator='magic'"),
        ("s.toml", GOOD_TOML + 'allocator = ["static"]\n', "bad TOML: Cannot overwrite a value (at line 5"),
        ("s.toml", FLEXSLOT_SKEW, "needs allocator=heterogeneous, not drs (grid point skew_sched=true)"),
        ("s.yaml", "scenario: synthetic-cloud\nseeds: [1\n", "bad YAML"),
        ("s.yaml", "- scenario\n", "expected a mapping with fields scenario, settings and seeds"),
        ("s.yaml", "scenario: synthetic-cloud\nseeds: [1]\nsettings: [allocator]\n", "settings=['allocator']"),
        ("s.toml", GOOD_TOML + '[[cells]]\nallocator = "static"\n', "cells[0].allocator is also in settings"),
        ("s.toml", GOOD_TOML + "[[cells]]\ndrs.period_s = -5\n", "setting drs.period_s=-5"),
        ("s.json", "{}", "a SPEC is a .toml, .yaml or .yml file"),
        ("missing.toml", None, "No such file"),
    ],
)
def test_bad_spec_is_one_line_naming_the_field_exit_2_and_nothing_written(tmp_path, capsys, name, text, needle):
    spec = tmp_path / name
    if text is not None:
        spec.write_text(text)
    out = tmp_path / "never"
    assert main(["sweep", str(spec), "--out", str(out), "--quiet"]) == 2
    err = capsys.readouterr().err.strip()
    assert needle in err and "\n" not in err and err.startswith(f"vcloud: error: {spec}: ")
    assert not out.exists()


def test_parse_spec_takes_data_and_an_empty_grid_is_the_defaults():
    sweep = parse_spec({"scenario": "synthetic-cloud", "seeds": [5, 6]})
    assert [(r.settings, r.seed) for r in sweep.runs] == [({}, 5), ({}, 6)]


CELLS = """
scenario = "synthetic-cloud"
seeds = [1, 2]

[settings]
dt = [1.0, 2.0]
duration_s = [60]

[[cells]]  # the defaults

[[cells]]
items_per_vm = 1

[[cells]]
items_per_vm = 1
drs.period_s = 60
"""


def test_cells_run_the_grid_at_chosen_points_one_factor_at_a_time(tmp_path):
    sweep = load_spec(write(tmp_path / "cells.toml", CELLS))
    assert len(sweep.runs) == 3 * 2 * 2  # cells x ticks x seeds
    # every run names every key of the cells and the grid, at its value in that run (defaults where a cell is silent)
    first, last = sweep.runs[0].settings, sweep.runs[-1].settings
    assert first == {"items_per_vm": 4, "drs.period_s": 300.0, "dt": 1.0, "duration_s": 60}
    assert last == {"items_per_vm": 1, "drs.period_s": 60.0, "dt": 2.0, "duration_s": 60}
    assert [r.settings["items_per_vm"] for r in sweep.runs] == [4] * 4 + [1] * 8  # cells outermost
    assert len({r.run_id for r in sweep.runs}) == 12
    # a spec without cells keeps its run ids (only its own keys are hashed)
    plain = load_spec(write(tmp_path / "plain.toml", CELLS.split("[[cells]]")[0]))
    assert plain.runs[0].settings == {"dt": 1.0, "duration_s": 60}
    # two cells that are the same run are refused
    with pytest.raises(SweepError, match="are the same run"):
        load_spec(write(tmp_path / "twice.toml", CELLS + "\n[[cells]]\nitems_per_vm = 1\n"))


def _readme_spec() -> str:
    readme = (ROOT / "README.md").read_text()
    return readme.split("# spec.toml\n", 1)[1].split("```", 1)[0]


def test_the_readmes_sweep_runs_no_point_twice():
    sweep = parse_spec(tomllib.loads(_readme_spec()), source="README")
    assert len(sweep.runs) == sweep.points == 18 and sweep.duplicates_note() is None


def test_a_policys_knobs_crossed_with_another_policy_are_run_once_and_said_before_anything_runs(tmp_path, capsys):
    spec = write(tmp_path / "spec.toml", 'scenario = "synthetic-cloud"\nseeds = [1]\n[settings]\n'
                 'allocator = ["static", "drs"]\nduration_s = [60]\ndrs.period_s = [60, 300]\n')  # fmt: skip
    sweep = load_spec(spec)
    assert (sweep.points, len(sweep.runs)) == (4, 3)
    static = [r for r in sweep.runs if r.settings["allocator"] == "static"]
    assert len(static) == 1 and static[0].settings["drs.period_s"] is None
    assert sorted(r.settings["drs.period_s"] for r in sweep.runs if r.settings["allocator"] == "drs") == [60, 300]
    assert "1 of 4 runs differ from others only in settings they do not read (drs.period_s" in sweep.duplicates_note()
    with pytest.raises(SweepError):  # the note comes before anything is checked or run
        run_sweep(sweep, tmp_path / "spec.toml", progress=False)
    assert "vcloud: note: " in capsys.readouterr().err
