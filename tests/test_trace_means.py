"""`vcloud trace` means and bins: a sample covers the seconds since the one before, the last (taken when the clock
stopped) fewer than the interval; the interval is the run's own (config.json), not the smallest gap (issue 12)."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from scenarios import plots
from scenarios.cli import main
from scenarios.inspect_run import Run, row_spans, trace_interval, vm_summary


def _trace() -> pd.DataFrame:
    """One VM of 1 vCPU sampled every 10 s; the clock stopped at 23 s, so the last sample covers 3 s."""
    return pd.DataFrame({
        "time_s": [10.0, 20.0, 23.0], "vm": ["v"] * 3, "host": ["h"] * 3, "vcpus": [1] * 3,
        "cpu_demand_mhz": [1000.0, 3000.0, 2000.0], "cpu_entitlement_mhz": [500.0, 500.0, 500.0],
        "cpu_used_mhz": [1000.0, 3000.0, 2000.0],
        "usr_s": [5.0, 10.0, 3.0], "sys_s": [0.0] * 3, "steal_s": [0.0] * 3, "iowait_s": [0.0] * 3,
        "idle_s": [5.0, 0.0, 0.0], "mem_active_mb": [0.0] * 3, "mem_granted_mb": [0.0] * 3, "swap_mb": [0.0] * 3,
        "disk_mbps": [4.0, 10.0, 10.0],
    })  # fmt: skip


def test_each_sample_covers_the_seconds_since_the_multiple_before_it():
    assert row_spans(np.array([10.0, 20.0, 23.0, 30.000000000001, 4.5]), 10.0).tolist() == pytest.approx(
        [10.0, 10.0, 3.0, 10.0, 4.5]
    )


def test_means_weight_each_sample_by_the_seconds_it_covers():
    summary = vm_summary(_trace(), interval_s=10.0).loc["v"]
    # used: (1000 x 10 + 3000 x 10 + 2000 x 3) / 23 s = 2000 MHz; disk (4 x 10 + 10 x 10 + 10 x 3) / 23 = 170/23
    assert summary["used_mhz"] == pytest.approx(2000.0)
    assert summary["demand_mhz"] == pytest.approx(2000.0)
    assert summary["disk_mbps"] == pytest.approx(170.0 / 23.0)
    assert summary["usr"] == pytest.approx(18.0 / 23.0)


def test_without_the_config_the_interval_is_the_widest_gap_not_the_short_last_one():
    assert trace_interval(_trace()) == 10.0
    assert vm_summary(_trace()).loc["v", "used_mhz"] == pytest.approx(2000.0)


def test_the_heatmap_bins_at_the_interval_with_no_empty_column():
    fig = plots.share_heatmap(_trace(), metric="usr")
    grid = fig.axes[0].images[0].get_array()
    assert grid.shape == (1, 3)  # bins (0,10], (10,20], (20,30]: the last holds the 3 s sample
    assert np.asarray(grid).ravel().tolist() == pytest.approx([0.5, 1.0, 1.0])


def test_trace_of_a_real_run_gives_used_mhz_that_matches_its_cpu_seconds(tmp_path, capsys):
    out = tmp_path / "run"
    args = ["run", "flexslot", "--set", "scale=0.03", "trace_interval_s=20", "--out", str(out), "--quiet"]
    assert main(args) == 0
    capsys.readouterr()
    run = Run(out)
    assert run.trace_interval_s == 20.0 == json.loads((out / "config.json").read_text())["settings"]["trace_interval_s"]
    trace = run.table("vm_trace")
    times = np.unique(trace["time_s"])
    assert 0 < times[-1] - times[-2] < 20.0  # the run stopped between samples: a short last one
    summary = vm_summary(trace, run.trace_interval_s)
    # every MHz used is a vCPU busy at the core's speed: mean used = (usr + sys) / accounted seconds x 2,400 MHz
    seconds = summary[[f"{s}_s" for s in ("usr", "sys", "steal", "iowait", "idle")]].sum(axis=1) / summary["vcpus"]
    busy = (summary["usr_s"] + summary["sys_s"]) / seconds
    assert summary["used_mhz"].to_numpy() == pytest.approx(busy.to_numpy() * 2400.0, rel=1e-4)
    assert trace_interval(trace) == 20.0
