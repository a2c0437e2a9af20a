"""A run's big tables are written in parts (issue 16: a SWIM day on 600 slaves within 1 GB): the parts are the
frame, and the file they make reads back as the one `DataFrame.to_parquet` writes of the whole frame."""

from __future__ import annotations

from itertools import pairwise
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from hadoop_layer.ended import EndedTaskList
from scenarios.runner import run_model, write_run, write_table
from tests.runs import SWIM, swim


def _mixed(n: int) -> pd.DataFrame:
    """A frame of every kind of column the run tables have: categorical, strings (with empty ones), float32, int16,
    int64, bool, float64 with NaN."""
    rng = np.random.default_rng(3)
    return pd.DataFrame(
        {
            "vm": pd.Categorical.from_codes(rng.integers(0, 3, n), categories=["vm-b", "vm-a", "vm-c"]),
            "task": pd.array([f"task_{i}" if i % 5 else "" for i in range(n)], dtype="str"),
            "usr_s": rng.random(n, dtype=np.float32),
            "vcpus": rng.integers(1, 9, n).astype(np.int16),
            "spills": rng.integers(0, 10**12, n),
            "speculative": rng.random(n) < 0.3,
            "end_s": np.where(rng.random(n) < 0.2, np.nan, rng.random(n)),
        }
    )


def _read_back(frame: pd.DataFrame, path: Path) -> pd.DataFrame:
    frame.to_parquet(path, index=False)
    return pd.read_parquet(path)


def test_a_table_written_in_parts_reads_back_as_the_whole_frame_written_at_once(tmp_path):
    frame = _mixed(1000)
    cuts = [0, 1, 1, 300, 999, 1000]  # an empty part, a one-row part, uneven parts
    parts = [frame.iloc[a:b].reset_index(drop=True) for a, b in pairwise(cuts)]
    write_table(tmp_path / "parts.parquet", iter(parts))
    back = pd.read_parquet(tmp_path / "parts.parquet")
    once = _read_back(frame, tmp_path / "once.parquet")
    pd.testing.assert_frame_equal(back, once, check_exact=True)
    assert back.dtypes.to_dict() == once.dtypes.to_dict()
    assert list(back["vm"].cat.categories) == ["vm-b", "vm-a", "vm-c"]
    pd.testing.assert_frame_equal(back.astype({"vm": "str"}), frame.astype({"vm": "str"}), check_exact=True)


def test_a_part_of_other_types_is_refused_and_no_part_is_no_table(tmp_path):
    frame = _mixed(10)
    other = frame.astype({"vcpus": np.int32})
    with pytest.raises(ValueError, match="differ"):
        write_table(tmp_path / "bad.parquet", [frame, other])
    with pytest.raises(ValueError, match="no part"):
        write_table(tmp_path / "none.parquet", [])
    write_table(tmp_path / "empty.parquet", [frame.iloc[:0]])
    pd.testing.assert_frame_equal(
        pd.read_parquet(tmp_path / "empty.parquet"), _read_back(frame.iloc[:0], tmp_path / "e.parquet")
    )


def test_a_tables_attrs_are_kept_as_pandas_keeps_them(tmp_path):
    frame = _mixed(5)
    frame.attrs = {"unit": "s"}
    write_table(tmp_path / "t.parquet", [frame])
    assert (
        pd.read_parquet(tmp_path / "t.parquet").attrs
        == _read_back(frame, tmp_path / "o.parquet").attrs
        == {"unit": "s"}
    )


def _parts_are_the_frames(model) -> None:
    whole = {"vm_trace": model.vm_trace(), "tasks": model.tasks_frame()}
    n_vms, samples = len(model.vm_agents), len(model.tracer._times)
    for rows in (1, 7, 3 * n_vms + 1, 10**9):
        parts = {"vm_trace": list(model.vm_trace_parts(rows)), "tasks": list(model.tasks_parts(rows))}
        assert len(parts["tasks"]) == -(-len(whole["tasks"]) // rows)
        assert len(parts["vm_trace"]) == -(-samples // max(rows // n_vms, 1))  # whole samples, at least one
        for name, frame in whole.items():
            pd.testing.assert_frame_equal(pd.concat(parts[name], ignore_index=True), frame, check_exact=True)


@pytest.mark.skipif(not SWIM.exists(), reason="the FB-2009 SWIM trace is not here")
def test_a_swim_runs_tables_in_parts_are_its_frames():
    scenario, model = swim(max_jobs=12)
    for rows in (1, 0, 10**9):  # before the run: one empty part each
        assert [len(p) for p in model.tasks_parts(rows)] == [0]
        assert [len(p) for p in model.vm_trace_parts(rows)] == [0]
    model.start()
    model.run_for(450.0)  # attempts running (rows of objects) and ended, of jobs running and ended (`retire`)
    assert model.running_attempts() and model.ended.n > 30
    assert any(isinstance(job._maps, EndedTaskList) for _, job in model.replay.added)
    _parts_are_the_frames(model)
    run_model(model, scenario.horizon_s(model), progress=False, stops_itself=True)
    _parts_are_the_frames(model)


@pytest.mark.skipif(not SWIM.exists(), reason="the FB-2009 SWIM trace is not here")
def test_a_run_written_in_parts_reads_back_as_its_frames_written_at_once(tmp_path):
    scenario, model = swim(max_jobs=4)
    run_model(model, scenario.horizon_s(model), progress=False, stops_itself=True)
    write_run(tmp_path / "run", {}, {}, scenario.part_makers(model, rows=50))
    frames = scenario.frames(model)
    assert sorted(p.stem for p in (tmp_path / "run").glob("*.parquet")) == sorted(frames)
    for name, frame in frames.items():
        back = pd.read_parquet(tmp_path / "run" / f"{name}.parquet")
        pd.testing.assert_frame_equal(back, _read_back(frame, tmp_path / f"{name}.parquet"), check_exact=True)
