"""Every output says what wrote it (package version, git commit) and what its numbers are (units); docs/glossary.md
is the dictionary of the columns and summary fields, generated from scenarios/glossary.py (issue 43)."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pyarrow.parquet as pq
import pytest

from scenarios import glossary, provenance
from scenarios.cli import main
from scenarios.settings import flatten
from scenarios.sweep import run_sweep

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def run(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("prov") / "run"
    assert main(["run", "flexslot", "--set", "scale=0.05", "--out", str(out), "--quiet"]) == 0
    return out


@pytest.fixture(scope="module")
def sweep(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("prov-sweep")
    spec = root / "spec.toml"
    spec.write_text('scenario = "synthetic-cloud"\nseeds = [1]\n[settings]\nduration_s = [60]\n')
    run_sweep(spec, root / "out", processes=1, progress=False)
    return root / "out"


def _is_provenance(value: dict) -> bool:
    commit = value["git_commit"]
    return value["vcloud_version"] != "" and (commit == "unknown" or len(commit.removesuffix("-dirty")) == 40)


def test_a_runs_files_name_the_version_and_commit_and_its_tables_their_units(run):
    assert _is_provenance(json.loads((run / "config.json").read_text())["provenance"])
    assert _is_provenance(json.loads((run / "summary.json").read_text())["provenance"])
    for table in ("vm_trace", "tasks", "jobs"):
        meta = pq.read_schema(run / f"{table}.parquet").metadata
        assert _is_provenance(json.loads(meta[b"vcloud.provenance"]))
        assert json.loads(meta[b"vcloud.units"]) == glossary.units(table)
    assert json.loads(pq.read_schema(run / "tasks.parquet").metadata[b"vcloud.units"])["steal_s"] == "vCPU-s"


def test_a_rerun_from_a_config_with_provenance_runs(run, tmp_path):
    assert main(["run", "--config", str(run / "config.json"), "--out", str(tmp_path / "again"), "--quiet"]) == 0


def test_a_sweeps_spec_and_results_name_the_version_and_commit(sweep):
    assert _is_provenance(json.loads((sweep / "spec.json").read_text())["provenance"])
    meta = pq.read_schema(sweep / "results.parquet").metadata
    assert _is_provenance(json.loads(meta[b"vcloud.provenance"]))
    assert json.loads(meta[b"vcloud.units"])["steal_fraction"] == "share"


def test_the_commit_is_unknown_outside_a_checkout_of_the_project(tmp_path, monkeypatch):
    monkeypatch.setattr(provenance, "ROOT", tmp_path)
    provenance.git_commit.cache_clear()
    try:
        assert provenance.git_commit() == "unknown"
    finally:
        provenance.git_commit.cache_clear()


def test_the_glossary_page_is_generated_from_the_dictionary():
    assert (ROOT / "docs" / "glossary.md").read_text() == glossary.markdown()


def test_the_glossary_has_every_column_and_summary_figure_a_run_writes(run, sweep):
    for table in ("vm_trace", "tasks", "jobs"):
        assert list(pd.read_parquet(run / f"{table}.parquet").columns) == list(glossary.TABLES[table])
    summary = json.loads((run / "summary.json").read_text())
    cloud = json.loads((sweep / "runs" / next(p.name for p in (sweep / "runs").glob("*.json"))).read_text())
    keys = [*flatten(summary), *flatten(cloud["figures"])]
    assert [k for k in keys if glossary.summary_entry(k) is None] == []


@pytest.mark.parametrize(
    ("scenario", "settings"),
    [
        ("coupling-two-grep", {"scale": 0.25}),
        ("delay-scheduling", {"scale": 0.1}),
        ("samr-heterogeneous", {"input_gb": 1.0}),
        ("capacity-queues", {"phase_s": 120.0}),
        ("quincy-locality", {"jobs": 2, "scheduler": "quincy"}),
        ("trace-replay", {"trace": str(ROOT / "tests" / "data" / "rumen-small-trace-excerpt.json")}),
    ],
)
def test_the_glossary_has_every_summary_field_of_the_papers_scenarios(scenario, settings):
    """The fields the papers' scenarios and trace replay add to summary.json (small runs of each)."""
    from scenarios.reproduce import run as finished_run

    summary = finished_run(scenario, 1, settings).summary
    assert [k for k in flatten(summary) if glossary.summary_entry(k) is None] == []


def test_a_printed_summary_has_units_four_digits_and_no_rounding_noise():
    text = glossary.summary_text({"map_steal_s": 8.1e-15, "makespan_s": 1234.5678, "map_runtime_mean_s": 43.0754,
                                  "jobs_succeeded": 1, "cloud": {"x": 1}, "allocator": "drs"})  # fmt: skip
    lines = dict(line.split(None, 1) for line in text.splitlines())
    assert lines == {"map_steal_s": "0 vCPU-s", "makespan_s": "1,235 s", "map_runtime_mean_s": "43.08 s",
                     "jobs_succeeded": "1", "allocator": "drs"}  # fmt: skip
