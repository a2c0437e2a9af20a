"""`trace-replay` on small Rumen traces written here: recorded runtimes, the traced cluster, outcomes, the CLI."""

import gzip
import itertools
import json
from pathlib import Path

import pandas as pd
import pytest

from hadoop_layer.tasks import TaskKind
from scenarios.cli import main
from scenarios.registry import SCENARIOS
from scenarios.runner import run_model
from scenarios.settings import validate
from scenarios.trace_compare import error_figures
from scenarios.trace_replay import DEFAULT_TRACE

SCENARIO = SCENARIOS["trace-replay"]
T0 = 1_000_000_000  # ms


def attempt(result: str, start_s: float, end_s: float, host: str, **extra) -> dict:
    return {"result": result, "startTime": T0 + int(start_s * 1000), "finishTime": T0 + int(end_s * 1000),
            "hostName": host, **extra}  # fmt: skip


def job(job_id: str, submit_s: float, maps: list[list[dict]], reduces=(), **extra) -> dict:
    return {
        "jobID": job_id,
        "submitTime": T0 + int(submit_s * 1000),
        "mapTasks": [{"taskID": f"{job_id}_m_{i}", "inputBytes": 0, "attempts": a} for i, a in enumerate(maps)],
        "reduceTasks": [{"taskID": f"{job_id}_r_{i}", "attempts": a} for i, a in enumerate(reduces)],
        **extra,
    }


def write(tmp_path: Path, name: str, jobs: list[dict], gz: bool = False) -> Path:
    text = "\n".join(json.dumps(j) for j in jobs)
    path = tmp_path / name
    if gz:
        path.write_bytes(gzip.compress(text.encode()))
    else:
        path.write_text(text)
    return path


def replay(path: Path, **settings):
    s = validate(SCENARIO.Settings, {"trace": str(path), "dt": 0.1, "speculation": "none", **settings})
    model = SCENARIO.build(s, seed=1)
    run_model(model, SCENARIO.horizon_s(model), progress=False)
    return model, SCENARIO.summary(model)


def test_durations_mode_gives_each_attempt_its_recorded_runtime_on_the_traced_hosts(tmp_path):
    maps = [[attempt("SUCCESS", 1, 1 + d, h)] for d, h in ((10, "/r1/a"), (20, "/r1/b"), (40, "/r2/c"))]
    path = write(tmp_path, "three-maps", [job("job_1", 0, maps)])  # no suffix: Rumen by content
    model, summary = replay(path)
    assert summary["replay"] == "durations"
    assert [t.name for t in model.trackers] == ["a", "b", "c"] and model.node_racks.tolist() == [0, 0, 1]
    assert model.hadoop.map_slots == 1 and model.hadoop.job_setup_cleanup  # one map at a time on each host
    (j,) = model.jobtracker.jobs
    runtimes = [t.successful.runtime_s for t in j.maps]
    assert runtimes == pytest.approx([10.0, 20.0, 40.0], abs=0.25)
    assert summary["map_runtime_median_emulated_s"] == pytest.approx(20.0, abs=0.25)
    assert summary["map_runtime_median_recorded_s"] == 20.0


def test_physics_mode_takes_the_cpu_counters(tmp_path):
    maps = [[attempt("SUCCESS", 0, 30, "/r/a", resourceUsageMetrics={"cumulativeCpuUsage": 8000})]]
    model, _ = replay(write(tmp_path, "cpu.json", [job("job_1", 0, maps)]), replay="physics")
    # a JVM start (hadoop.jvm_start_wall_s, 3 s), then the 8 s the counter recorded, not the 30 s of wall time
    assert model.jobtracker.jobs[0].maps[0].successful.runtime_s == pytest.approx(11.0, abs=0.25)


def test_a_topology_file_beside_the_trace_builds_the_cluster_and_splits_keep_their_hosts(tmp_path):
    topo = {"name": "<root>", "children": [
        {"name": "rackA", "children": [{"name": "h1", "children": None}, {"name": "h2", "children": None}]},
        {"name": "rackB", "children": [{"name": "h3", "children": None}]},
    ]}  # fmt: skip
    (tmp_path / "x-topology.json.gz").write_bytes(gzip.compress(json.dumps(topo).encode()))
    task = {"taskID": "m0", "preferredLocations": [{"layers": ["rackB", "h3"]}],
            "attempts": [attempt("SUCCESS", 0, 5, "/rackB/h3")]}  # fmt: skip
    trace = {**job("job_1", 0, []), "mapTasks": [task]}
    model, summary = replay(write(tmp_path, "x-trace.json.gz", [trace], gz=True))
    assert [t.name for t in model.trackers] == ["h1", "h2", "h3"] and model.node_racks.tolist() == [0, 0, 1]
    assert summary["cluster"].startswith("3 nodes in 2 racks")
    (m,) = model.jobtracker.jobs[0].maps
    assert m.replicas.tolist() == [2] and m.successful.locality.name == "NODE"


def test_recorded_failures_replay_and_a_killed_job_ends_at_its_recorded_time(tmp_path):
    flaky = [attempt("FAILED", 0, 5, "/r/a"), attempt("SUCCESS", 6, 16, "/r/a")]
    killed = job("job_2", 10, [], outcome="KILLED", finishTime=T0 + 110_000,
                 otherTasks=[{"taskType": "CLEANUP", "attempts": [attempt("SUCCESS", 100, 102, "/r/a")]}])  # fmt: skip
    model, summary = replay(write(tmp_path, "mixed.json", [job("job_1", 0, [flaky]), killed]))
    first, second = model.jobtracker.jobs
    failed, done = first.maps[0].attempts
    assert failed.state == "failed" and failed.runtime_s == pytest.approx(5.0, abs=0.25)
    assert done.state == "done" and done.runtime_s == pytest.approx(10.0, abs=0.25)
    assert summary["failed_attempts"] == 1 and first.state == "succeeded"
    # killed 98 s after submit (its 2 s cleanup before the recorded end), the cleanup heard within a heartbeat; the
    # recorded 2 s are less than a child JVM's start (hadoop.jvm_start_wall_s, 3 s), so the cleanup takes 3 s
    assert second.state == "killed" and summary["jobs_killed"] == 1
    assert second.end_s - second.submit_s == pytest.approx(101.0, abs=1.0)
    assert second.lifecycle_task.role == "cleanup" and second.hold_setup  # never left PREP, as recorded
    row = summary["per_job"][1]
    assert row["recorded_s"] == 100.0 and row["ratio"] == pytest.approx(row["emulated_s"] / 100.0)


def test_jobs_after_max_duration_are_listed_as_not_run_and_the_run_says_so(tmp_path, capsys):
    one = [[attempt("SUCCESS", 0, 5, "/r/a")]]
    path = write(tmp_path, "late.json", [job("job_1", 0, one), job("job_2", 5000, one)])
    _, summary = replay(path, max_duration_s=1000)
    assert summary["jobs_not_run"] == ["job_2"] and len(summary["per_job"]) == 1
    assert "1 of 2 jobs are submitted after max_duration_s=1000 and are not run: job_2" in capsys.readouterr().err


def test_error_figures_hand_computed():
    table = pd.DataFrame({"recorded_outcome": ["SUCCESS", "SUCCESS", "KILLED", "SUCCESS"],
                          "ratio": [1.1, 0.5, 3.0, None]})  # fmt: skip
    figures = error_figures(table)
    assert figures["jobs_compared"] == 3
    assert figures["job_duration_median_abs_error"] == pytest.approx(0.5)  # |0.1|, |0.5|, |2.0|
    assert figures["jobs_within_2x"] == pytest.approx(2 / 3)  # 0.5 is within 2x, 3.0 is not
    assert figures["job_duration_median_abs_error_succeeded"] == pytest.approx(0.3)  # median of 0.1 and 0.5
    assert figures["jobs_within_2x_succeeded"] == 1.0


def test_cli_replays_a_gzip_trace_and_refuses_a_bad_one_in_one_line(tmp_path, capsys):
    path = write(tmp_path, "trace.gz", [job("job_1", 0, [[attempt("SUCCESS", 0, 5, "/r/a")]])], gz=True)
    out = tmp_path / "run"
    assert main(["run", "trace-replay", "--set", f"trace={path}", "--out", str(out), "--quiet"]) == 0
    frame = pd.read_parquet(out / "comparison.parquet")
    assert frame.name.tolist() == ["job_1"] and frame.emulated_s.notna().all()
    bad = tmp_path / "bad.json.gz"
    bad.write_bytes(gzip.compress(b'{"jobID": "job_9", "submitTime": "soon"}'))
    capsys.readouterr()
    assert main(["run", "trace-replay", "--set", f"trace={bad}", "--out", str(tmp_path / "x"), "--quiet"]) == 2
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0 and "bad.json.gz job 0 (job_9)" in err and "submitTime='soon'" in err
    assert not (tmp_path / "x").exists()


def test_durations_mode_sizes_pipelined_maps_and_a_reduce_after_its_shuffle_to_their_recorded_times(tmp_path):
    # maps that read 64 MB and write 16 MB each, one per host, and a reduce whose merges, reduce and output took
    # 30 s after its shuffle: alone on their nodes (one slot each), each takes its recorded time whatever its
    # bytes cost (plans.cpu_for_runtime; the reduce's CPU used to be read as units of its pipelined phase)
    mb = 2**20
    maps = [[attempt("SUCCESS", 1, 1 + d, h, fileBytesWritten=16 * mb)]
            for d, h in ((12, "/r1/a"), (25, "/r1/b"))]  # fmt: skip
    reduce = attempt("SUCCESS", 2, 70, "/r1/c", shuffleFinished=T0 + 40_000, hdfsBytesWritten=8 * mb)
    traced = job("job_1", 0, maps, [[reduce]])
    for task in traced["mapTasks"]:
        task["inputBytes"] = 64 * mb
    path = write(tmp_path, "with-bytes.json", [traced])
    model, _ = replay(path, allocator="static")
    (j,) = model.jobtracker.jobs
    # sized with every byte on the disk; the page cache takes the spill below the dirty limit: up to 3 % sooner
    assert [t.successful.runtime_s for t in j.maps] == pytest.approx([12.0, 25.0], rel=0.04)
    assert all(t.successful.runtime_s <= d for t, d in zip(j.maps, (12.0, 25.0), strict=True))
    r = j.reduces[0].successful
    shuffle_end = r.phase_end_s[[p.name for p in r.phases].index("shuffle")]
    assert r.output_mb > 0 and j.reduces[0].cpu_mc == 0.0  # sized at the shuffle's end from its after_shuffle_s
    # the 30 s, which hold the traced attempt's task commit (commit_in_runtime: hadoop.task_commit is off)
    assert r.end_s - shuffle_end == pytest.approx(30.0, abs=0.5) and not model.hadoop.task_commit
    model, _ = replay(path, allocator="static", commit_in_runtime=False)
    r = model.jobtracker.jobs[0].reduces[0].successful
    shuffle_end = r.phase_end_s[[p.name for p in r.phases].index("shuffle")]
    # off: then the commit's round trip (1 s with this cluster's 0.3 s heartbeats), counted twice
    assert r.end_s - shuffle_end == pytest.approx(30.0 + 1.0, abs=0.5) and r.phases[-1].name == "hdfs-commit"


# --- issue 41: the traced cluster's own slots, each job's configuration, the error split, intake warnings ----------


def test_each_host_gets_the_slots_it_ran_at_least_the_hosts_mode_and_an_asked_count_overrides(tmp_path):
    # host a ran 3 maps at once, b and c 2 each, d 1; every host 1 reduce at most
    maps = [[attempt("SUCCESS", 0, 10, "/r/a")]] * 3 + [[attempt("SUCCESS", 0, 10, h)] for h in ("/r/b", "/r/b")]
    maps += [[attempt("SUCCESS", 0, 10, h)] for h in ("/r/c", "/r/c", "/r/d")]
    path = write(tmp_path, "slots.json", [job("job_1", 0, maps)])
    model, summary = replay(path)
    assert {t.name: (t.map_slots, t.reduce_slots) for t in model.trackers} == {
        "a": (3, 1), "b": (2, 1), "c": (2, 1), "d": (2, 1)}  # fmt: skip
    assert summary["slots"] == {"from": "trace_slots=host", "map+reduce per node": {"2+1": 3, "3+1": 1}}
    model, _ = replay(path, trace_slots="mode")
    assert [t.map_slots for t in model.trackers] == [2, 2, 2, 2]
    model, _ = replay(path, trace_slots="max")
    assert [t.map_slots for t in model.trackers] == [3, 3, 3, 3]
    out = tmp_path / "run"
    assert main(["run", "trace-replay", "--set", f"trace={path}", "hadoop.map_slots=1", "--out", str(out),
                 "--quiet"]) == 0  # fmt: skip
    used = json.loads((out / "config.json").read_text())["used"]
    assert used["slots"] == {"from": "trace_slots=host, hadoop.map_slots=1", "map+reduce per node": {"1+1": 4}}
    model, summary = replay(path, trace_slots="hadoop")  # the scenario's hadoop.* defaults on every node: 4 + 2
    assert summary["slots"]["map+reduce per node"] == {"4+2": 4}
    assert used["nodes"] == 4 and used["cluster"].startswith("4 nodes in 1 racks")


def test_a_jobs_recorded_slow_start_holds_its_reduce_until_every_map_is_done_unless_ignored(tmp_path):
    maps = [[attempt("SUCCESS", 0, d, f"/r/{h}")] for d, h in ((5, "a"), (10, "b"), (40, "c"))]
    reduces = [[attempt("SUCCESS", 40, 50, "/r/d")]]
    props = {"mapreduce.job.reduce.slowstart.completedmaps": "1.0", "mapreduce.reduce.speculative": "false"}
    path = write(tmp_path, "conf.json", [job("job_1", 0, maps, reduces, jobProperties=props)])

    def reduce_start(model):
        (j,) = model.jobtracker.jobs
        return j.reduces[0].successful.start_s, max(t.successful.end_s for t in j.maps)

    model, summary = replay(path)
    start, last_map = reduce_start(model)
    assert start >= last_map  # slow start 1.0: no reduce before the last map (JobInProgress)
    assert summary["job_conf"]["honoured"] == {"reduce_slowstart": 1, "reduce_speculative": 1}
    assert model.jobtracker.jobs[0].no_speculation == {TaskKind.REDUCE}
    model, summary = replay(path, job_conf=False)
    start, last_map = reduce_start(model)
    assert start < last_map - 20  # the cluster's 0.05: after the first map
    assert summary["job_conf"] == {"honoured": {}, "not_honoured": {}, "ignored": True}


def test_the_error_splits_into_the_wait_before_the_first_task_and_the_tasks_own_run(tmp_path):
    # the traced cluster started the job's only map 100 s after its submit (other users' load); it ran 20 s
    maps = [[attempt("SUCCESS", 100, 120, "/r/a")]]
    path = write(tmp_path, "wait.json", [job("job_1", 0, maps, finishTime=T0 + 125_000)])
    _, summary = replay(path)
    (row,) = summary["per_job"]
    assert row["recorded_wait_s"] == 100.0 and row["recorded_run_s"] == 25.0
    assert row["emulated_wait_s"] < 10.0 and row["run_ratio"] == pytest.approx(1.0, abs=0.3)
    assert summary["job_run_median_abs_error"] < 0.3 < summary["job_duration_median_abs_error"]
    assert summary["job_wait_median_recorded_s"] == 100.0


def test_no_nan_reaches_summary_json_a_missing_figure_is_null_with_its_reason(tmp_path):
    one = [[attempt("SUCCESS", 0, 5, "/r/a")]]  # no finishTime: no recorded duration to compare
    path = write(tmp_path, "nofinish.json", [job("job_1", 0, one)])
    out = tmp_path / "run"
    assert main(["run", "trace-replay", "--set", f"trace={path}", "--out", str(out), "--quiet"]) == 0
    text = (out / "summary.json").read_text()
    assert "NaN" not in text and "Infinity" not in text
    summary = json.loads(text)
    assert summary["job_duration_median_abs_error"] is None and summary["per_job"][0]["recorded_s"] is None
    assert summary["null_reasons"]["job_duration_median_abs_error"].startswith("no job has both")
    assert summary["per_job"][0]["why_no_ratio"].startswith("the trace records no finish time")
    assert (
        summary["null_reasons"]["reduce_runtime_median_recorded_s"] == "the replayed jobs record no successful reduce"
    )


def test_max_jobs_cutting_a_trace_and_repaired_anomalies_each_say_so_in_one_line(tmp_path, capsys):
    one = [[attempt("SUCCESS", 0, 5, "/r/a")]]
    skewed = [[attempt("SUCCESS", 0, -1, "/r/a")]]
    path = write(tmp_path, "five.json", [job("job_1", 0, skewed)] + [job(f"job_{i}", 0, one) for i in range(2, 6)])
    _, summary = replay(path, max_jobs=2)
    err = capsys.readouterr().err.strip().splitlines()
    assert err == [
        "vcloud: warning: five.json: repaired 1 anomaly (rules in summary.json): 1 attempt_ends_before_start "
        "(first: five.json job 0 (job_1) task job_1_m_0 (-1 s))",
        "vcloud: warning: max_jobs=2 reads and replays the first 2 of the trace's 5 jobs (file order); the rest are "
        "neither checked nor replayed (--set max_jobs=N for more)",
    ]
    assert summary["jobs_in_trace"] == 5 and summary["jobs_read"] == 2 and summary["jobs_cut_by_max_jobs"]
    assert summary["anomalies_repaired"]["attempt_ends_before_start"]["count"] == 1
    replay(path)  # max_jobs=50 covers the file: no warning about it
    assert "max_jobs" not in capsys.readouterr().err


def test_physics_mode_warns_when_the_trace_has_no_cpu_counters_or_input_bytes(tmp_path, capsys):
    one = [[attempt("SUCCESS", 0, 30, "/r/a")]]
    replay(write(tmp_path, "bare.json", [job("job_1", 0, one)]), replay="physics")
    err = capsys.readouterr().err
    assert "replay=physics: 1 of 1 tasks have no CPU counters" in err and "1 of 1 maps read 0 bytes" in err


def _starts(model) -> dict[str, list[float]]:
    """Each map's attempts' starts after its job's submit, by task id."""
    return {t.task_id: [a.start_s - j.submit_s for a in t.attempts] for j in model.jobtracker.jobs for t in j.maps}


def test_start_as_recorded_holds_each_attempt_to_its_recorded_start_and_leaves_the_slot_to_others(tmp_path):
    # one host, one map slot (no two attempts overlap there); job_1's map 1 failed at 31-33 s and its retry
    # started at 60 s; job_2's map started at 35 s, while job_1's retry was held
    first = [
        [attempt("SUCCESS", 20, 30, "/r/a")],
        [attempt("FAILED", 31, 33, "/r/a"), attempt("SUCCESS", 60, 70, "/r/a")],
    ]
    path = write(tmp_path, "held.json", [job("job_1", 0, first, finishTime=T0 + 75_000),
                                         job("job_2", 0, [[attempt("SUCCESS", 35, 45, "/r/a")]])])  # fmt: skip
    model, summary = replay(path, start_as_recorded=True)
    assert model.hadoop.map_slots == 1 and summary["tasks_held_to_recorded_starts"] == 4
    starts = _starts(model)
    recorded = {"job_0001_m_000000": [20], "job_0001_m_000001": [31, 60], "job_0002_m_000000": [35]}
    for task, at in recorded.items():  # each attempt at its recorded start, within a heartbeat (0.3 s) and a tick
        assert starts[task] == pytest.approx(at, abs=0.5), task
    (row, _) = summary["per_job"]
    # recorded: first task at 20 s, job ends at 75 s; nothing of it ran at 30-31, 33-60 and 70-75 s: 33 s
    assert row["recorded_wait_s"] == 20.0 and row["recorded_run_s"] == 55.0
    assert row["recorded_between_s"] == pytest.approx(33.0) and row["recorded_own_s"] == pytest.approx(22.0)
    assert row["emulated_between_s"] > 25.0 and row["own_ratio"] == pytest.approx(1.0, abs=0.3)
    model, summary = replay(path)  # off: each map starts once the slot is free, the retry at once
    starts = _starts(model)
    assert starts["job_0001_m_000001"][1] < 40 and summary["per_job"][0]["emulated_between_s"] < 5.0
    assert summary["tasks_held_to_recorded_starts"] == 0 and not summary["start_as_recorded"]


def test_start_as_recorded_is_refused_where_it_cannot_hold(tmp_path):
    swim = tmp_path / "swim.tsv"
    swim.write_text("job0\t0\t0\t1024\t0\t0\n")
    with pytest.raises(ValueError, match=r"start_as_recorded=true: swim.tsv records no task start times \(SWIM\)"):
        validate(SCENARIO.Settings, {"trace": str(swim), "start_as_recorded": True})
    if DEFAULT_TRACE.is_file():  # the default trace (SWIM), in ../shared/data
        with pytest.raises(ValueError, match=r"start_as_recorded=true: FB-2009\S* records no task start times"):
            validate(SCENARIO.Settings, {"start_as_recorded": True})
    rumen = write(tmp_path, "one.json", [job("job_1", 0, [[attempt("SUCCESS", 0, 5, "/r/a")]])])
    with pytest.raises(ValueError, match=r"scheduler='quincy' picks tasks without Job\.find_map"):
        validate(SCENARIO.Settings, {"trace": str(rumen), "start_as_recorded": True, "scheduler": "quincy"})


@pytest.mark.parametrize("held", [False, True])
def test_a_failed_job_that_ran_tasks_ends_failed_at_its_recorded_time(tmp_path, held):
    # one map succeeded; the other failed four times (10-18, ..., 40-48 s); the job failed at 60 s (cleanup 57-59 s)
    tries = [attempt("FAILED", 10 * i, 10 * i + 8, "/r/a") for i in range(1, 5)]
    failed = job("job_1", 0, [[attempt("SUCCESS", 1, 9, "/r/b")], tries], outcome="FAILED", finishTime=T0 + 60_000,
                 otherTasks=[{"taskType": "CLEANUP", "attempts": [attempt("SUCCESS", 57, 59, "/r/a")]}])  # fmt: skip
    model, summary = replay(write(tmp_path, "failed.json", [failed]), start_as_recorded=held)
    (j,) = model.jobtracker.jobs
    assert j.state == "failed" and summary["jobs_ended_as_recorded"] == 1 and summary["failed_attempts"] == 4
    # the fourth failure fails the job (mapred.map.max.attempts), as on the traced cluster: before the recorded end
    # when the retries follow each other at once; at its recorded end (48 s) and a cleanup when held to their starts
    tries = [(a.start_s - j.submit_s, a.end_s - j.submit_s) for a in j.maps[1].attempts]
    if held:
        # the first after the job's setup (the emulator's own cost: none recorded), the retries no earlier than
        # recorded, later by at most the heartbeat that reports the failure before and a tick
        assert tries[0][0] >= 10
        assert all(0 <= s - want < 2.0 for (s, _), want in zip(tries[1:], (20, 30, 40), strict=True)), tries
    else:  # each retry within a heartbeat (0.3 s) and a tick of its predecessor's end
        assert all(0 < b[0] - a[1] < 0.5 for a, b in itertools.pairwise(tries))
    assert tries[-1][1] < j.end_s - j.submit_s < 60.0 + 1.0


def test_a_trace_whose_anomalies_leave_nothing_replayable_stops_the_cli_with_one_line(tmp_path, capsys):
    bare = {k: v for k, v in job("job_1", 0, [[attempt("SUCCESS", 0, 5, "/r/a")]]).items() if k != "submitTime"}
    path = write(tmp_path, "unplaceable.json", [bare, {**bare, "jobID": "job_2", "submitTime": -1}])
    out = tmp_path / "run"
    assert main(["run", "trace-replay", "--set", f"trace={path}", "--out", str(out), "--quiet"]) == 2
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0 and "unplaceable.json: nothing replayable is left" in err
    assert "2 job_no_submit_time" in err and not out.exists()
