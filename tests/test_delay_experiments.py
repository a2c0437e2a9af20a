"""The delay-scheduling scenario (Zaharia et al., EuroSys 2010, section 5, IO-heavy): its workload is the paper's,
delay scheduling gives the paper's locality, and with the era's oversubscribed rack uplinks its response times.
"""

from collections import Counter

import numpy as np
import pytest

from hadoop_layer.hdfs import Locality
from hadoop_layer.model import HadoopModel
from scenarios.delay_experiments import BINS, POLICIES, job_bin, scaled_maps
from scenarios.registry import SCENARIOS
from scenarios.runner import run_model
from scenarios.settings import validate

SCENARIO = SCENARIOS["delay-scheduling"]
SMALL = (1, 2, 3, 4)  # bins of 1-60 maps in the paper: 1, 2, 10 and (scaled) 10 maps here


def _build(**settings) -> HadoopModel:
    return SCENARIO.build(validate(SCENARIO.Settings, settings), seed=1)


def _node_local(model: HadoopModel, bins: tuple[int, ...]) -> float:
    """Node-local share of the launched maps of the jobs in `bins`."""
    levels = [a.locality for j in model.jobtracker.jobs if job_bin(j) in bins for t in j.maps for a in t.attempts
              if a.locality is not None]  # fmt: skip
    return sum(lv == Locality.NODE for lv in levels) / len(levels)


@pytest.fixture(scope="module")
def runs() -> dict[str, tuple[HadoopModel, dict]]:
    """The default configuration (scale 0.2: 20 slaves, 100 jobs), seed 1, under each of the paper's policies."""
    out = {}
    for label, settings in POLICIES.items():
        model = _build(**settings)
        run_model(model, SCENARIO.horizon_s(model), progress=False)
        out[label] = (model, SCENARIO.summary(model))
    return out


def test_the_workload_has_the_papers_bins_scaled_maps_random_arrivals_and_three_rack_aware_replicas(runs):
    model = runs["Fair delay"][0]  # the jobs are the JobTracker's once submitted
    jobs = model.jobtracker.jobs
    assert len(model.trackers) == 20
    assert Counter(job_bin(j) for j in jobs) == {b: n for b, _, n in BINS}
    assert {job_bin(j): len(j.maps) for j in jobs} == {1: 1, 2: 2, 3: 10, 4: 10, 5: 20, 6: 40, 7: 80, 8: 160, 9: 960}
    gaps = np.diff(sorted(j.submit_s for j in jobs))
    assert gaps.mean() == pytest.approx(14.0, abs=4.5)  # 99 exponential gaps: the mean's sd is 1.4 s
    assert gaps.std() == pytest.approx(gaps.mean(), rel=0.35)  # exponential: sd = mean (a fixed gap has sd 0)
    racks = model.node_racks
    for task in (t for j in jobs for t in j.maps):
        assert len(set(task.replicas)) == 3 and len(set(racks[task.replicas])) == 2
    # not all small jobs first: the bins are shuffled over the submissions
    assert len({job_bin(j) for j in sorted(jobs, key=lambda j: j.submit_s)[:20]}) > 2


def test_scale_one_is_the_papers_size():
    assert [scaled_maps(m, 1.0) for _, m, _ in BINS] == [m for _, m, _ in BINS]
    assert len(_build(scale=1.0, max_jobs=1).trackers) == 100


def test_delay_scheduling_makes_every_bin_node_local_and_naive_fair_and_fifo_leave_small_jobs_remote(runs):
    # Measured (seed 1): small bins 0.45 FIFO, 0.26 naive, 0.98 delay; every bin of delay >= 0.94.
    fifo, naive, delay = (runs[k][0] for k in POLICIES)
    assert _node_local(delay, SMALL) >= 0.95
    assert all(b["node_local"] >= 0.9 for b in runs["Fair delay"][1]["bins"].values())
    assert _node_local(naive, SMALL) < _node_local(delay, SMALL) - 0.4
    assert _node_local(fifo, SMALL) < _node_local(delay, SMALL) - 0.4
    overall = {k: runs[k][1]["locality"]["node"] for k in POLICIES}
    assert overall["Fair naive"] < overall["Fair delay"] and overall["FIFO"] < overall["Fair delay"]
    assert overall["Fair delay"] >= 0.99


def test_fifo_is_no_less_node_local_than_naive_fair_in_the_small_bins(runs):
    """Issue 11 expected FIFO below naive fair in locality; the paper's figure was never read (docs/results-delay.md)
    and the model gives the other order in every run tried (seeds 1-3 at scale 0.2, seed 1 at scale 1): FIFO's head
    job takes any free slot as naive fair's neediest job does, and its node-or-rack-local-first scan favours local
    tasks. Measured here (seed 1): 0.45 FIFO, 0.26 naive. A change that puts FIFO below naive fails this test: find
    the cause (or the paper's figure) before changing the expectation."""
    assert _node_local(runs["FIFO"][0], SMALL) >= _node_local(runs["Fair naive"][0], SMALL)


def _small_and_medium(bins: dict) -> tuple[float, ...]:
    """Mean response time of the small (bins 1-3) and the medium (4-6) jobs."""
    groups = (("1", "2", "3"), ("4", "5", "6"))
    return tuple(float(np.mean([bins[b]["mean_response_s"] for b in group])) for group in groups)


def test_delay_scheduling_answers_small_and_medium_jobs_faster_than_naive_fair(runs):
    # Measured (seed 1, 25:1 rack uplinks): small 9 s delay vs 24 s naive, medium 14 s vs 42 s (no rack limit:
    # 9.1 vs 8.4 and 13.9 vs 13.2)
    naive, delay = (_small_and_medium(runs[k][1]["bins"]) for k in ("Fair naive", "Fair delay"))
    assert delay[0] < 0.75 * naive[0] and delay[1] < 0.75 * naive[1]


def test_without_a_rack_limit_locality_buys_no_speed_and_naive_fair_answers_as_fast():
    # the finding of docs/results-delay.md: it is the oversubscribed uplinks that make remote maps slow; through a
    # non-blocking core a remote read costs a NIC hop more and naive fair (no 4.5 s skips) is as fast or faster
    out = {}
    for label in ("Fair naive", "Fair delay"):
        model = _build(**POLICIES[label], rack_oversubscription=None)
        run_model(model, SCENARIO.horizon_s(model), progress=False)
        out[label] = _small_and_medium(SCENARIO.summary(model)["bins"])
    assert out["Fair naive"][0] < out["Fair delay"][0] * 1.05 and out["Fair naive"][1] < out["Fair delay"][1] * 1.05


def test_the_summary_reports_each_bin_and_throughput(runs):
    summary = runs["Fair delay"][1]
    assert summary["policy"] == "fair/delay" and runs["Fair naive"][1]["policy"] == "fair/naive"
    assert summary["jobs_done"] == 100 and list(summary["bins"]) == [str(b) for b, _, _ in BINS]
    for b in summary["bins"].values():
        assert b["unfinished"] == 0 and b["median_response_s"] > 0 and b["mean_response_s"] > 0
    model = runs["Fair delay"][0]
    input_mb = sum(t.input_mb for j in model.jobtracker.jobs for t in j.maps)
    assert summary["throughput_mb_per_s"] == pytest.approx(input_mb / summary["makespan_s"])
