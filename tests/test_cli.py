"""The command line: what a run writes, how bad input is refused, and that a seed means the same numbers."""

import json
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

from scenarios.cli import main
from scenarios.registry import SCENARIOS
from scenarios.trace_replay import DEFAULT_TRACE
from vcloud.trace import COLUMNS

QUICK = ["duration_s=120", "trace_interval_s=20"]


def test_list_names_the_scenarios(capsys):
    assert main(["list"]) == 0
    assert "synthetic-cloud" in capsys.readouterr().out


def test_run_writes_summary_trace_and_a_config_that_reruns_it(tmp_path):
    out = tmp_path / "run"
    assert main(["run", "synthetic-cloud", "--set", *QUICK, "--set", "allocator=static", "--out", str(out),
                 "--quiet", "--check"]) == 0  # fmt: skip
    assert sorted(p.name for p in out.iterdir()) == ["config.json", "summary.json", "vm_trace.parquet"]
    trace = pd.read_parquet(out / "vm_trace.parquet")
    assert list(trace.columns) == list(COLUMNS)
    assert len(trace) == 32 * 6  # 32 VMs x 120 s / 20 s
    summary = json.loads((out / "summary.json").read_text())
    assert summary["allocator"] == "static" and summary["simulated_s"] == 120.0
    again = tmp_path / "again"
    assert main(["run", "--config", str(out / "config.json"), "--out", str(again), "--quiet"]) == 0
    assert json.loads((again / "summary.json").read_text()) == summary


@pytest.mark.parametrize("scenario", ["coupling-two-grep", "flexslot"])
def test_a_hadoop_runs_config_reruns_it_as_it_ran(tmp_path, scenario):
    # the config holds what was asked: a coupling experiment keeps its own 7 slaves (it reads which fields were
    # set), and the Fair settings' unlimited preemption timeouts are written as JSON can hold them ("inf")
    out, again = tmp_path / "run", tmp_path / "again"
    assert main(["run", scenario, "--set", "scale=0.05", "--out", str(out), "--quiet"]) == 0
    config = json.loads((out / "config.json").read_text())
    assert config["asked"] == {"scale": 0.05} and config["settings"]["fair"]["min_share_preemption_timeout_s"] == "inf"
    assert main(["run", "--config", str(out / "config.json"), "--out", str(again), "--quiet"]) == 0
    assert json.loads((again / "summary.json").read_text()) == json.loads((out / "summary.json").read_text())
    assert json.loads((again / "config.json").read_text())["settings"] == config["settings"]


@pytest.mark.parametrize(
    ("args", "needle"),
    [
        (["run", "nosuch"], "unknown scenario 'nosuch'"),
        (["run", "--set", "drs.perod_s=5"], "unknown setting drs.perod_s=5"),
        (["run", "--set", "drs.period_s=-5"], "drs.period_s=-5"),
        (["run", "--set", "allocator=magic"], "allocator='magic'"),
        (["run", "--set", "hosts=0"], "hosts=0"),
        (["run", "--set", "noequals"], "'noequals'"),
        (["run", "flexslot", "--set", "skew_sched=true"], "skew_sched=true needs allocator=heterogeneous"),
        (["run", "flexslot", "--set", "scale=-1"], "scale=-1"),
        (["run", "flexslot", "--set", "benchmark=pagerank"], "benchmark='pagerank'"),
        (["run", "flexslot", "--set", "hadoop.io_sort_mbb=5"], "unknown setting hadoop.io_sort_mbb=5"),
        (["run", "trace-replay", "--set", "trace=/no/such.tsv"], "trace='/no/such.tsv': no such file"),
        (["run", "--set", "allocator=heterogeneous", "heterogeneous.cpu_mhz=[1,2]"], "heterogeneous.cpu_mhz"),
    ],
)
def test_bad_input_is_one_line_exit_2_and_nothing_written(tmp_path, capsys, args, needle):
    out = tmp_path / "never"
    assert main([*args, "--out", str(out), "--quiet"]) == 2
    err = capsys.readouterr().err.strip()
    assert needle in err and "\n" not in err
    assert not out.exists() and list(tmp_path.iterdir()) == []


SCRIPT = """
import hashlib, sys
from scenarios.registry import SCENARIOS
from scenarios.settings import validate
sc = SCENARIOS["synthetic-cloud"]
settings = validate(sc.Settings, {"duration_s": 300, "tenants_per_host": 1, "tenant_load": "random"})
m = sc.build(settings, seed=int(sys.argv[1]))
m.run_until(300.0)
df = m.vm_trace()
print(hashlib.sha256(df.to_csv(index=False).encode()).hexdigest(), len(df))
"""


def test_same_seed_same_trace_in_separate_processes():
    root = Path(__file__).resolve().parents[1]

    def trace_digest(seed: int, hash_seed: int) -> str:
        return subprocess.run([sys.executable, "-c", SCRIPT, str(seed)], cwd=root, capture_output=True, text=True,
                              check=True, env={"PYTHONHASHSEED": str(hash_seed), "PATH": ""}).stdout  # fmt: skip

    first, second = trace_digest(11, 1), trace_digest(11, 2)
    assert first == second
    assert int(first.split()[1]) == (32 + 8) * 30  # 32 pool VMs and 8 tenants, every 10 s for 300 s
    assert trace_digest(12, 1) != first  # the seed matters: the check above could fail


def test_flexslot_run_writes_tasks_and_jobs_tables(tmp_path):
    out = tmp_path / "fs"
    assert main(["run", "flexslot", "--set", "scale=0.02", "--out", str(out), "--quiet", "--check"]) == 0
    names = sorted(p.name for p in out.iterdir())
    assert names == ["config.json", "jobs.parquet", "summary.json", "tasks.parquet", "vm_trace.parquet"]
    tasks = pd.read_parquet(out / "tasks.parquet")
    issue_columns = ["job", "task", "attempt", "kind", "vm", "host", "locality", "start_s", "end_s", "state",
                     "input_mb", "output_mb", "spills", "cputime_s", "steal_s", "iowait_s", "kill_count"]  # fmt: skip
    assert set(issue_columns) <= set(tasks.columns)
    jobs = pd.read_parquet(out / "jobs.parquet")
    assert list(jobs.columns[:7]) == ["job", "name", "submit_s", "start_s", "end_s", "maps", "reduces"]
    summary = json.loads((out / "summary.json").read_text())
    for key in ("makespan_s", "job_completion_s", "map_runtime_skewness", "maps_per_node", "locality"):
        assert key in summary
    assert (tasks.state == "done").groupby(tasks.task).sum().eq(1).all()


@pytest.mark.skipif(not DEFAULT_TRACE.is_file(), reason="the default SWIM trace lives in ../shared/data")
def test_trace_replay_runs_a_swim_trace_and_refuses_a_bad_one(tmp_path, capsys):
    out = tmp_path / "swim"
    assert main(["run", "trace-replay", "--set", "max_jobs=5", "--out", str(out), "--quiet"]) == 0
    assert len(pd.read_parquet(out / "jobs.parquet")) == 5
    assert "max_jobs=5 reads and replays the first 5 of the trace's 5,894 jobs" in capsys.readouterr().err
    bad = tmp_path / "bad.tsv"
    bad.write_text("job0\t0\t0\t100\t0\t0\njob1\t5\t5\tlots\t0\t0\n")
    assert main(["run", "trace-replay", "--set", f"trace={bad}", "--out", str(tmp_path / "x"), "--quiet"]) == 2
    err = capsys.readouterr().err.strip()
    assert "bad.tsv line 2" in err and "map_input_bytes" in err and "\n" not in err
    assert not (tmp_path / "x").exists()


def test_coupling_experiments_run_under_fair_and_coupling(tmp_path):
    for scheduler in ("fair", "coupling"):
        out = tmp_path / scheduler
        assert main(["run", "coupling-two-grep", "--set", f"scheduler={scheduler}", "--out", str(out), "--quiet"]) == 0
        summary = json.loads((out / "summary.json").read_text())
        assert summary["scheduler"] == scheduler and summary["jobs_succeeded"] == 2
        assert set(summary["starvation_s"]) == set(summary["job_s"])


def test_reproduce_quick_writes_a_report_with_every_figure(tmp_path):
    assert main(["reproduce", "--out", str(tmp_path), "--quick"]) == 0
    report = (tmp_path / "report.md").read_text()
    from scenarios.reproduce import ENTRIES

    rows = [line for line in report.splitlines() if line.startswith("| ") and "figure" not in line]
    assert len(rows) == len(ENTRIES)
    assert all(row.count("| yes |") + row.count("| no |") == 1 for row in rows)
    for n in range(1, len(ENTRIES) + 1):
        png = tmp_path / f"{n:02d}.png"
        assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and png.stat().st_size > 1000


def test_registry_lists_each_scenario_with_its_own_description():
    """`vcloud list` prints the registry's descriptions without importing the scenarios: they must be theirs."""
    for name in SCENARIOS:
        assert SCENARIOS[name].name == name
        assert SCENARIOS.description(name) == SCENARIOS[name].description


def test_list_imports_no_scenario_and_no_numeric_stack():
    """Start-up: `vcloud list` needs names and descriptions only (issue 16: at most 0.3 s)."""
    code = (
        "import sys; from scenarios.cli import main; main(['list']); print(sorted(m for m in sys.modules if "
        "m.split('.')[0] in ('numpy', 'pandas', 'mesa', 'pydantic', 'scenarios') and m not in "
        "('scenarios', 'scenarios.cli', 'scenarios.outputs', 'scenarios.provenance', 'scenarios.registry')))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip().splitlines()[-1] == "[]"


def test_run_refuses_a_taken_out_before_importing_its_scenario(tmp_path):
    """A non-empty --out is bad input found before the scenario's imports (Mesa's alone ~1 s): exit 2 at once."""
    taken = tmp_path / "taken"
    taken.mkdir()
    (taken / "x").write_text("")
    code = (
        f"import sys; from scenarios.cli import main; rc = main(['run', 'flexslot', '--out', {str(taken)!r}]); "
        "print(rc, 'mesa' in sys.modules, 'scenarios.flexslot' in sys.modules)"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip().splitlines()[-1] == "2 False False"
    assert "directory exists and is not empty" in done.stderr


def test_reproduce_runs_in_worker_processes_give_the_serial_numbers():
    """`vcloud reproduce` runs its runs in parallel (spawned workers send `Finished` records back): the same numbers."""
    import threading
    from contextlib import ExitStack

    from scenarios.reproduce import Runs, _backend

    asks = [("flexslot", {"scale": 0.05}), ("samr-heterogeneous", {"input_gb": 1.0, "speculation": "late"})]
    serial = Runs(scale=0.05)
    with ExitStack() as stack:
        turn = threading.Lock()
        parallel = Runs(scale=0.05, submit=_backend(stack, 2, None), turn=turn)
        with turn:
            for scenario, settings in asks:
                a, b = serial.get(scenario, **settings), parallel.get(scenario, **settings)
                assert a.summary == b.summary
                pd.testing.assert_frame_equal(a.tasks, b.tasks)


def test_a_reports_run_is_the_scenario_as_configured_not_its_settings_dump():
    """A coupling experiment keeps its own slave count unless `slaves` is given (it reads which fields were set):
    the report must build it from the settings as asked, as `vcloud run` does (a full dump set `slaves` to the
    settings' default, 30 nodes instead of the paper's 7, and turned the Coupling rows around)."""
    from scenarios.registry import SCENARIOS
    from scenarios.reproduce import Runs
    from scenarios.settings import validate

    sc = SCENARIOS["coupling-two-grep"]
    direct = sc.build(validate(sc.Settings, {"scheduler": "fair", "scale": 0.25}), seed=1)
    finished = Runs(scale=0.25, quick=True).get("coupling-two-grep", scheduler="fair")
    assert finished.tasks.vm.nunique() == len(direct.trackers) == 7  # the slaves that ran tasks
