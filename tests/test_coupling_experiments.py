"""The Coupling paper's experiments (scenarios/coupling_experiments.py) at a quarter scale: the directions of the
paper's figures that the emulator reproduces (docs/results-coupling.md). Bounds are loose enough for seeds 1-3
(measured: the margins are several times the spread) but fail if an effect disappears."""

from __future__ import annotations

import numpy as np
import pytest

from hadoop_layer.model import HadoopModel
from scenarios.registry import SCENARIOS
from scenarios.reproduce import mean_running_maps
from scenarios.runner import run_model
from scenarios.settings import validate

QUARTER = 0.25


def run(scenario: str, seed: int = 2, **settings) -> tuple[HadoopModel, dict]:
    sc = SCENARIOS[scenario]
    model = sc.build(validate(sc.Settings, {"scale": QUARTER, **settings}), seed=seed)
    run_model(model, sc.horizon_s(model), progress=False)
    return model, sc.summary(model)


def fair_and_coupling(scenario: str, seed: int = 2, **settings) -> tuple[dict, dict]:
    """The scenario's summary under Fair, then under Coupling."""
    return tuple(run(scenario, seed, scheduler=scheduler, **settings)[1] for scheduler in ("fair", "coupling"))


def test_paper_setup_is_the_default():
    # Sec. III's nodes and Hadoop, and Sec. II-B's T = 15 s, unless told otherwise; a nested override keeps the rest
    s = validate(SCENARIOS["coupling-two-grep"].Settings, {"hadoop.map_slots": 3})
    assert (s.core_mhz, s.vm_mem_mb, s.hadoop.replication, s.hadoop.heartbeat_formula) == (2933.0, 6144.0, 1, "1.0")
    assert (s.hadoop.map_slots, s.hadoop.reduce_slots, s.fair.node_delay_s, s.fair.rack_delay_s) == (3, 2, 15.0, 15.0)


def test_scale_shrinks_inputs_and_arrival_times_together():
    sc = SCENARIOS["coupling-ten-grep"]
    model = sc.build(validate(sc.Settings, {"scale": 0.1}), seed=1)
    model.start()
    model.run_until(271.0)  # all ten submitted
    jobs = model.jobtracker.jobs
    # 427 blocks of 64 MB x 0.1 = 2,732.8 MB: 43 maps (42 full blocks and a 44.8 MB tail); 300 s x 0.1 apart
    assert [len(j.maps) for j in jobs] == [43] * 10
    assert [j.submit_s for j in jobs] == pytest.approx([30.0 * i for i in range(10)])


def test_two_grep_job_2_starves_for_reduce_slots_under_fair_not_coupling():
    # Figs. 1-2: under Fair job 1 holds every reduce slot from its slow start on, so job 2's reduces wait for job 1's
    # maps to end (132 s at this scale); under Coupling job 1 takes its reduces as its maps progress (13-18 s)
    fair, coupling = fair_and_coupling("coupling-two-grep")
    job2 = list(fair["starvation_s"])[1]
    assert fair["starvation_s"][job2] > 90.0
    assert coupling["starvation_s"][job2] < 0.3 * fair["starvation_s"][job2]
    assert coupling["job_s"][job2] < 0.9 * fair["job_s"][job2]


def test_delay_scheduling_holds_maps_to_the_data_nodes_and_random_peeking_does_not():
    # Figs. 10-11: input on 7 of 15 nodes (28 local map slots of 60). Fair's delay scheduling runs about the 28 local
    # maps (23-26 here, seeds 1-3); Random Peeking also runs remote maps (31-33 with beta 0.5) and ends sooner
    fair_model, fair = run("delay-locality", scheduler="fair")
    runs = {b: run("delay-locality", scheduler="coupling", **{"coupling.beta": b}) for b in (0.1, 0.5)}
    running = mean_running_maps(fair_model.tasks_frame())
    assert running <= 29.0
    assert mean_running_maps(runs[0.5][0].tasks_frame()) > running + 3.0
    assert runs[0.1][1]["mean_job_s"] < fair["mean_job_s"]
    assert runs[0.5][1]["mean_job_s"] < 0.9 * fair["mean_job_s"]
    assert runs[0.5][1]["mean_job_s"] <= runs[0.1][1]["mean_job_s"]

    def node_local(model: HadoopModel) -> float:
        maps = model.tasks_frame().query("kind == 'm'")
        return float(np.mean(maps["locality"] == "node"))

    assert node_local(fair_model) > node_local(runs[0.5][0]) + 0.08  # the price: remote reads (0.59-0.65 vs 0.43-0.48)


def test_map_only_greps_finish_sooner_with_random_peeking():
    # Table III / Fig. 13: 8 of 15 nodes hold no input; Fair waits for local slots, Coupling uses the other nodes
    fair, coupling = fair_and_coupling("coupling-map-only")
    assert coupling["mean_job_s"] < 0.8 * fair["mean_job_s"]


SEQUENTIAL = {"hadoop.pipelined_tasks": False, "hadoop.datanode_serving": False, "page_cache": {"enabled": False}}


def test_22_jobs_run_faster_and_starve_less_with_coupling_when_task_work_is_sequential():
    # Table IV / Fig. 3: small jobs behind large ones wait for the reduce slots the large ones took under Fair.
    # Holds with sequential task phases and no page cache (seed 2: 172.7 s Fair, 145.3 s Coupling)
    fair, coupling = fair_and_coupling("coupling-22-jobs", **SEQUENTIAL)
    assert coupling["mean_job_s"] < 0.95 * fair["mean_job_s"]
    assert np.mean(list(coupling["starvation_s"].values())) < np.mean(list(fair["starvation_s"].values()))


@pytest.mark.xfail(
    strict=True,
    reason="lost with pipelined task work (issue 11): maps that read and compute at once end sooner, so the reduce "
    "slots Fair lets early reduces hold are held for less; seed 2: Fair 110.0 s, Coupling 114.1 s, starvation "
    "913 s against 931 s (docs/history/results-coupling-2026-12-07.md)",
)
def test_22_jobs_run_faster_and_starve_less_with_coupling():
    fair, coupling = fair_and_coupling("coupling-22-jobs")
    assert coupling["mean_job_s"] < 0.95 * fair["mean_job_s"]


def test_ten_identical_greps_run_a_little_faster_with_coupling():
    # Figs. 5-6: the paper credits its -16.1 % mostly to less shuffle contention; the Greps' map output is too small
    # to contend for the serving disks here (docs/results-coupling.md), so what is left is the reduce slots that
    # Coupling leaves to the later jobs
    fair, coupling = fair_and_coupling("coupling-ten-grep")
    assert coupling["mean_job_s"] < 0.98 * fair["mean_job_s"]


def test_single_jobs_run_the_table_ii_rows_and_wait_scheduling_does_not_slow_them():
    """Table II / Fig. 12 at full input (the jobs are small): Coupling's delays cost MonteCarlo and Sort1 no more than
    5 %, and they finish sooner (1 reduce; 12 reduces for 14 slots: placement matters; paper: Sort1 -14.6 %); Sort2's
    27 reduces leave placement little to win (paper: slightly slower; here +6 % with Hadoop's fixed costs, within
    10 %)."""
    sc = SCENARIOS["coupling-single-job"]
    model = sc.build(validate(sc.Settings, {}), seed=1)
    model.start()
    model.run_until(1.0)  # submitted
    (sort2,) = model.jobtracker.jobs
    assert (len(sort2.maps), len(sort2.reduces)) == (352, 27)  # the default job is Table II's Sort2 row
    times = {job: fair_and_coupling("coupling-single-job", seed=1, scale=1.0, job=job) for job in
             ("monte-carlo", "sort1", "sort2")}  # fmt: skip
    for job, (fair, coupling) in times.items():
        assert coupling["mean_job_s"] <= (1.10 if job == "sort2" else 1.05) * fair["mean_job_s"], job
    for job in ("monte-carlo", "sort1"):
        fair, coupling = times[job]
        assert coupling["mean_job_s"] < 0.9 * fair["mean_job_s"]


def test_load_figures_by_hand():
    """Fig 16's load figures on two jobs, one node with one map and one reduce slot, from 0 to 30 s:
    job A: submitted at 0, map 0-10, reduce 2-20 (launched greedily: held 8 s before its map ends), ends at 20;
    job B: submitted at 5, map 10-15, reduce 20-30 (waits 5 s for the slot A holds), ends at 30."""
    import pandas as pd

    from scenarios.coupling_experiments import load_figures

    tasks = pd.DataFrame({"job": ["A", "A", "B", "B"], "kind": ["m", "r", "m", "r"],
                          "start_s": [0.0, 2.0, 10.0, 20.0], "end_s": [10.0, 20.0, 15.0, 30.0]})  # fmt: skip
    jobs = pd.DataFrame({"job": ["A", "B"], "submit_s": [0.0, 5.0], "end_s": [20.0, 30.0]})
    f = load_figures(tasks, jobs, slaves=1, map_slots=1, reduce_slots=1)
    assert f["job_mean"] == f["job_median"] == pytest.approx(22.5)
    assert f["map_busy"] == pytest.approx(15 / 30) and f["reduce_busy"] == pytest.approx(28 / 30)
    assert f["reduce_full"] == pytest.approx(28 / 30)  # the one reduce slot is taken from 2 s to 30 s
    assert f["held_before_maps_end"] == pytest.approx(8 / 28)
    assert f["starvation"] == pytest.approx((0 + 5) / 2) and f["reduce_lag"] == pytest.approx((0 + 5) / 2)


def test_an_experiment_keeps_its_own_nodes_unless_slaves_is_given_even_in_a_sweep_that_names_slaves_elsewhere():
    # a sweep reports every key any cell sets for every run; a cell without `slaves` must still get Fig 16's 62 nodes
    from scenarios.sweep import SweepSpec, grid

    scenario = SCENARIOS["coupling-200-jobs"]
    spec = SweepSpec(scenario="coupling-200-jobs", seeds=[1], cells=[{"scale": 0.01}, {"scale": 0.01, "slaves": 20}])
    nodes = []
    for run in grid(spec):
        settings = validate(scenario.Settings, {**run.model_kwargs(), "max_jobs": 1})
        nodes.append(len(scenario.build(settings, seed=1).trackers))
    assert nodes == [62, 20]
    assert validate(scenario.Settings, {}).slaves is None  # `vcloud show` says None: the experiment's own
