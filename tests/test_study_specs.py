"""The results pages' sweep specs (scenarios/specs) and the scripts that read their sweeps (benchmarks/): every spec
loads, the Fig 16 spec runs each cell on the nodes it names, and the scripts read a sweep directory (made up here)."""

import importlib.util
import json
from pathlib import Path

import pandas as pd
import pytest

from scenarios.sweep import load_spec

ROOT = Path(__file__).resolve().parents[1]
# the sweep specs (example_jobs.toml beside them is a job-mix file: `vcloud run job-mix --set jobs=PATH`)
SPECS = sorted(p for p in (ROOT / "scenarios" / "specs").glob("*.*") if "[[job]]" not in p.read_text())


def script(name: str):
    """A benchmarks/ script as a module (benchmarks/ is not a package)."""
    spec = importlib.util.spec_from_file_location(name, ROOT / "benchmarks" / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize("path", SPECS, ids=[p.name for p in SPECS])
def test_every_spec_loads(path):
    assert load_spec(path).runs


def test_fig16_spec_runs_each_cell_on_the_nodes_it_names():
    # a sweep passes every key a cell sets to every run, so a cell without `slaves` would run on the settings'
    # default (30), not coupling-200-jobs' 62: the spec gives it in every cell
    runs = load_spec(ROOT / "scenarios" / "specs" / "coupling_fig16_load.toml").runs
    assert len(runs) == 36
    by_slaves = pd.Series([r.settings["slaves"] for r in runs]).value_counts().to_dict()
    assert by_slaves == {62: 24, 30: 6, 20: 6}
    assert all("slaves" in r.model_kwargs() for r in runs)


def test_delay_jvm_spec_crosses_four_starts_with_naive_and_delay():
    runs = load_spec(ROOT / "scenarios" / "specs" / "delay_jvm_start.yaml").runs
    points = {(r.settings["hadoop.jvm_start_wall_s"], r.settings["fair.delay_scheduling"], r.seed) for r in runs}
    assert points == {(j, d, s) for j in (1.0, 2.0, 3.0, 5.0) for d in (False, True) for s in (1, 2)}
    assert all(r.settings["racks"] == 1 and r.settings["rack_oversubscription"] is None for r in runs)


def write_run(root: Path, rid: str, seed: int, settings: dict, figures: dict, jobs: pd.DataFrame | None = None):
    """A run as `vcloud sweep --frames` writes it: DIR/runs/RUN_ID.json and DIR/runs/RUN_ID/jobs.parquet."""
    runs = root / "runs"
    runs.mkdir(parents=True, exist_ok=True)
    record = {"run_id": rid, "seed": seed, "settings": settings, "error": None, "figures": figures}
    (runs / f"{rid}.json").write_text(json.dumps(record))
    if jobs is not None:
        (runs / rid).mkdir()
        jobs.to_parquet(runs / rid / "jobs.parquet")


def test_delay_jvm_start_reads_policies_bins_and_one_map_jobs(tmp_path, capsys):
    mod = script("delay_jvm_start")
    jobs = pd.DataFrame({"maps": [1, 1, 5], "submit_s": [0.0, 10.0, 0.0], "end_s": [20.0, 40.0, 50.0]})
    for rid, delay, mean in (("a", False, 40.0), ("b", True, 50.0)):
        settings = {"scheduler": "fair", "fair.delay_scheduling": delay, "hadoop.jvm_start_wall_s": 3.0}
        figures = {"mean_response_s": mean, **{f"bins.{b}.mean_response_s": mean / b for b in range(1, 10)}}
        write_run(tmp_path, rid, 1, settings, figures, jobs)
    runs, one = mod.load(tmp_path)
    assert sorted(runs.policy) == ["delay", "naive"]
    assert sorted(one.e2e_s) == [20.0, 20.0, 30.0, 30.0]  # the one-map jobs only, under each policy
    assert mod.main([str(tmp_path)]) == 0
    row = capsys.readouterr().out.splitlines()[2]
    assert row.startswith("| 3 | 20.0 / 25.0 s | 20.0 / 25.0 s | 0.800 | 0.80/")  # naive 40 s over delay 50 s


def test_coupling_load_names_each_cluster_by_what_its_cell_changes():
    mod = script("coupling_load")
    base = {"scheduler": "fair", "slaves": 62, "disk_mbps": 100.0, "hadoop.job_setup_cleanup": True}
    assert mod.cluster(base) == "62 nodes"
    assert mod.cluster({**base, "slaves": 20}) == "slaves=20"
    assert mod.cluster({**base, "disk_mbps": 20.0}) == "disk_mbps=20"
    assert mod.cluster({**base, "hadoop.job_setup_cleanup": False}) == "fixed costs off"
    assert mod.cluster({**base, "coupling.lists_skip_job_nodes": True, "scheduler": "coupling"}) == "62 nodes"
