"""docs/own-scenario.md's recipes, followed as written: its job files run as `job-mix`, and its scenario file runs
by its path with `vcloud run`, `--config`, `vcloud show` and a sweep (issue 43)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from scenarios.cli import main
from scenarios.sweep import run_sweep

DOC = Path(__file__).resolve().parents[1] / "docs" / "own-scenario.md"
SMALL = "hosts=4 slaves=6 hadoop.block_mb=32"  # the recipe's runs, on a smaller cluster


def _block(name: str) -> str:
    """The fenced block of the page that starts with `# NAME` (the comment line dropped)."""
    for lang, body in re.findall(r"```(\w+)\n(.*?)```", DOC.read_text(), flags=re.S):
        if body.startswith(f"# {name}\n"):
            return body.split("\n", 1)[1]
        if lang == "csv" and name.endswith(".csv"):
            return body
    raise AssertionError(f"docs/own-scenario.md has no block of {name}")


def _summary(out: Path) -> dict:
    return json.loads((out / "summary.json").read_text())


@pytest.mark.parametrize("name", ["my_jobs.toml", "my_jobs.csv"])
def test_a_job_file_of_the_recipe_runs_its_jobs(tmp_path, name):
    jobs = tmp_path / name
    jobs.write_text(_block(name))
    out = tmp_path / "run"
    assert main(["run", "job-mix", "--set", f"jobs={jobs} {SMALL}", "--out", str(out), "--quiet"]) == 0
    summary = _summary(out)
    assert summary["jobs_succeeded"] == 2 and summary["jobs_file"] == name
    assert len(summary["job_completion_s"]) == 2


def test_a_bad_row_of_a_job_file_is_one_line_naming_it(tmp_path, capsys):
    jobs = tmp_path / "jobs.csv"
    jobs.write_text(_block("my_jobs.csv").replace("256", "lots"))
    assert main(["run", "job-mix", "--set", f"jobs={jobs}", "--out", str(tmp_path / "run"), "--quiet"]) == 2
    err = capsys.readouterr().err
    assert "jobs.csv row 2: field input_mb='lots'" in err and err.count("\n") == 1
    assert not (tmp_path / "run").exists()


@pytest.fixture(scope="module")
def scenario_file(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("mine") / "my_scenario.py"
    path.write_text(_block("my_scenario.py"))
    return path


def test_a_scenario_file_runs_by_its_path_and_reruns_from_its_config(scenario_file, tmp_path):
    out = tmp_path / "mine"
    given = f"input_mb=256 gap_s=20 scheduler=fair {SMALL}"
    assert main(["run", str(scenario_file), "--set", given, "--out", str(out), "--quiet"]) == 0
    summary = _summary(out)
    assert summary["jobs_succeeded"] == 2
    config = json.loads((out / "config.json").read_text())
    assert config["scenario"] == str(scenario_file) and config["settings"]["gap_s"] == 20
    assert main(["run", "--config", str(out / "config.json"), "--out", str(tmp_path / "again"), "--quiet"]) == 0
    assert {k: v for k, v in _summary(tmp_path / "again").items() if k != "provenance"} == {
        k: v for k, v in summary.items() if k != "provenance"
    }


def test_show_describes_the_scenario_files_own_settings(scenario_file, capsys):
    assert main(["show", str(scenario_file), "gap_s"]) == 0
    assert "gap_s = 60.0  (float, >= 0, <= 3600)\n    the second job's submit time, s" in capsys.readouterr().out


def test_a_sweep_runs_a_scenario_file_on_worker_processes(scenario_file, tmp_path, monkeypatch):
    monkeypatch.chdir(scenario_file.parent)  # the SPEC names the file relative to where the sweep starts
    spec = tmp_path / "spec.toml"
    spec.write_text('scenario = "my_scenario.py"\nseeds = [1, 2]\n[settings]\ninput_mb = [128]\nhosts = [4]\n'
                    "slaves = [6]\n")  # fmt: skip
    report = run_sweep(spec, tmp_path / "out", processes=2, progress=False)
    assert report.failed == 0 and list(report.results["jobs_succeeded"]) == [2, 2]
    assert set(report.results["scenario"]) == {str(scenario_file)}


def test_a_file_without_one_scenario_is_refused_in_one_line(tmp_path, capsys):
    empty = tmp_path / "empty.py"
    empty.write_text("x = 1\n")
    assert main(["run", str(empty), "--out", str(tmp_path / "run"), "--quiet"]) == 2
    assert "defines no Scenario class" in capsys.readouterr().err
    assert main(["run", str(tmp_path / "nosuch.py"), "--quiet"]) == 2
    assert "no such file" in capsys.readouterr().err
