"""What the command line writes and how it ends (issue 12): temporaries from killed runs are cleaned, run folders
are as readable as mkdir makes them, a run cut short by its time limit says so and exits 1, Ctrl-C exits 130,
`vcloud show` lists every setting with its bounds, `--version` answers."""

from __future__ import annotations

import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest

import scenarios.runner as runner
from scenarios.cli import main
from scenarios.outputs import clean_stale
from scenarios.registry import SCENARIOS
from scenarios.show import setting_rows

QUICK = ["--set", "duration_s=60", "trace_interval_s=20", "--quiet"]


def _dead_pid() -> int:
    proc = subprocess.Popen([sys.executable, "-c", "pass"])
    proc.wait()
    return proc.pid


def test_a_killed_runs_temporary_is_removed_by_the_next_run_and_a_live_ones_is_kept(tmp_path):
    out = tmp_path / "run"
    dead = tmp_path / f".run-{_dead_pid()}-abcd"
    live = tmp_path / f".run-{os.getppid()}-efgh"  # our parent runs: a concurrent run's, left alone
    for d in (dead, live):
        d.mkdir()
        (d / "summary.json").write_text("{")
    assert main(["run", "synthetic-cloud", *QUICK, "--out", str(out)]) == 0
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted([live.name, "run"])
    assert clean_stale(out) == []


def test_a_run_folder_has_the_mode_mkdir_gives(tmp_path):
    out = tmp_path / "run"
    assert main(["run", "synthetic-cloud", *QUICK, "--out", str(out)]) == 0
    mask = os.umask(0)
    os.umask(mask)
    assert stat.S_IMODE(out.stat().st_mode) == 0o777 & ~mask


def test_a_hadoop_run_cut_by_max_duration_writes_its_tables_and_exits_1(tmp_path, capsys):
    out = tmp_path / "run"
    args = ["run", "flexslot", "--set", "scale=0.05", "max_duration_s=30", "--out", str(out), "--quiet"]
    assert main(args) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "max_duration_s=30 reached with 1 of 1 jobs unfinished" in err
    assert (out / "tasks.parquet").is_file()


def test_ctrl_c_is_one_line_and_exit_130(tmp_path, capsys, monkeypatch):
    def interrupted(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(runner, "run_model", interrupted)  # cmd_run imports it when it runs
    assert main(["run", "synthetic-cloud", *QUICK, "--out", str(tmp_path / "run")]) == 130
    assert capsys.readouterr().err == "vcloud: interrupted (nothing was written)\n"
    assert list(tmp_path.iterdir()) == []


def test_a_hadoop_runs_progress_bar_has_no_total_a_fixed_length_runs_does(monkeypatch):
    totals = []

    class Bar:
        def __init__(self, total=None, **kwargs):
            totals.append(total)

        def __enter__(self):
            return self

        def __exit__(self, *exc):
            return False

        def update(self, n):
            pass

    monkeypatch.setattr("tqdm.tqdm", Bar)  # run_model imports it when it runs
    for name, overrides in (("flexslot", {"scale": 0.02}), ("synthetic-cloud", {"duration_s": 60})):
        scenario = SCENARIOS[name]
        model = scenario.build(scenario.Settings(**overrides), 1)
        runner.run_model(model, scenario.horizon_s(model), stops_itself=scenario.stops_itself)
    assert totals == [None, 60.0]


@pytest.mark.parametrize("name", list(SCENARIOS))
def test_show_describes_every_setting_in_lines_of_at_most_120_columns(name, capsys):
    assert main(["show", name]) == 0
    text = capsys.readouterr().out
    rows = setting_rows(SCENARIOS[name].Settings)
    words = " ".join(text.split())  # a long default or choice list runs on over lines
    assert all(f" {r['setting']} = {' '.join(r['default'].split())} (" in words for r in rows)
    assert [r["setting"] for r in rows if not r["description"]] == []
    assert max(len(line) for line in text.splitlines()) <= 120


def test_show_gives_whole_choice_lists_and_one_group_or_one_setting(capsys):
    assert main(["show", "flexslot", "benchmark"]) == 0
    benchmark = " ".join(capsys.readouterr().out.split())
    assert "wordcount | inverted-index | term-vector | grep | tera-sort | k-means | histogram-movies | " \
        "histogram-ratings" in benchmark  # fmt: skip
    assert main(["show", "flexslot", "--group", "drs"]) == 0
    drs = capsys.readouterr().out
    assert "read only with allocator=drs" in drs and "drs.period_s = 300.0" in drs and "\nhadoop." not in drs
    assert main(["show", "flexslot", "slot_manager"]) == 0
    assert "skewtune" in capsys.readouterr().out
    assert main(["show", "flexslot", "fair.node_delay"]) == 2
    assert "did you mean fair.node_delay_s?" in capsys.readouterr().err


def test_show_gives_the_scenarios_own_defaults_and_the_bounds_validate_uses(capsys):
    rows = {r["setting"]: r for r in setting_rows(SCENARIOS["flexslot"].Settings)}
    assert rows["hadoop.map_slots"]["default"] == "4"  # the FlexSlot testbed's, not HadoopConfig's 2
    assert rows["slaves"]["bounds"] == ">= 1, <= 4000"
    assert rows["dt"]["bounds"] == ">= 0.01, <= 60"
    assert rows["hadoop.io_sort_mb"]["bounds"] == ">= 1, <= 2047"


def test_version(capsys):
    with pytest.raises(SystemExit) as exited:
        main(["--version"])
    assert exited.value.code == 0 and capsys.readouterr().out.startswith("vcloud 0.")


def _readme() -> str:
    return (Path(__file__).parents[1] / "README.md").read_text()


def test_readme_examples_use_the_venvs_vcloud_and_name_every_scenario():
    readme = _readme()
    assert [line for line in readme.splitlines() if line.lstrip().startswith("vcloud ")] == []
    assert all(f"`{name}`" in readme for name in SCENARIOS)


def test_the_readmes_run_examples_run_as_written_in_a_fresh_clone(tmp_path):
    """Each `.venv/bin/vcloud run` line of the README, from a clone beside ../shared, one after another."""
    clone = tmp_path / "clone"
    clone.mkdir()
    (tmp_path / "shared").symlink_to(Path(__file__).resolve().parents[2] / "shared")
    (clone / ".venv").symlink_to(Path(sys.executable).parents[1])
    lines = [line.split("#")[0].split() for line in _readme().splitlines() if line.startswith(".venv/bin/vcloud run")]
    assert len(lines) == 5
    for args in lines:
        done = subprocess.run([*args, "--quiet"], cwd=clone, capture_output=True, text=True, check=False)
        assert done.returncode == 0, done.stderr
        assert (clone / args[args.index("--out") + 1] / "summary.json").is_file()


def test_a_run_is_written_a_table_at_a_time_each_dropped_before_the_next_is_built(tmp_path):
    import weakref

    import pandas as pd

    built: list[weakref.ref] = []

    def maker(k: int):
        def make() -> pd.DataFrame:
            assert all(r() is None for r in built), "an earlier table is still alive"
            frame = pd.DataFrame({"k": [k] * 3})
            built.append(weakref.ref(frame))
            return frame

        return make

    runner.write_run(tmp_path / "run", {"s": 1}, {"c": 2}, {f"t{k}": maker(k) for k in range(3)})
    assert len(built) == 3
    for k in range(3):
        assert pd.read_parquet(tmp_path / "run" / f"t{k}.parquet")["k"].tolist() == [k] * 3


def test_a_scenarios_frames_are_those_its_makers_build():
    import pandas as pd

    from tests.runs import SWIM, swim

    if not SWIM.exists():
        pytest.skip("the FB-2009 SWIM trace is not here")
    scenario, model = swim(max_jobs=4)
    runner.run_model(model, scenario.horizon_s(model), progress=False, stops_itself=True)
    frames = scenario.frames(model)
    assert list(frames) == ["vm_trace", "tasks", "jobs", "comparison"]
    for name, make in scenario.frame_makers(model).items():
        pd.testing.assert_frame_equal(make(), frames[name])
