"""Real-data anomalies in Rumen traces are repaired by their stated rules and counted, not refused; comments before
the JSON; max_jobs limits what is checked; a job's own configuration is read; Hadoop's own test trace loads."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from hadoop_layer.trace_conf import xmx_mb
from hadoop_layer.trace_repair import RULES
from hadoop_layer.traces import TraceError, load_trace, read_trace
from tests.rumen_builders import T0, attempt, job, write

HADOOP_EXCERPT = Path(__file__).with_name("data") / "rumen-small-trace-excerpt.json"


def _one(tmp_path: Path, trace_job: dict):
    got = load_trace(write(tmp_path, "t.json", [trace_job]))
    return got.jobs[0], got.repairs


def test_a_map_ending_before_it_starts_runs_100_ms_and_a_reduce_the_median_of_its_jobs(tmp_path):
    maps = [[attempt("SUCCESS", 10, 9, "/r/a")], [attempt("SUCCESS", 10, 20, "/r/b")]]
    reduces = [[attempt("SUCCESS", 30, 40, "/r/a")], [attempt("SUCCESS", 30, 60, "/r/b")],
               [attempt("SUCCESS", 30, 29, "/r/c")], [attempt("FAILED", 30, 10, "/r/c"),
                                                      attempt("SUCCESS", 31, 32, "/r/c")]]  # fmt: skip
    j, repairs = _one(tmp_path, job("job_1", 0, maps, reduces))
    assert j.map_durations_s == (0.1, 10.0)  # ZombieJob.sanitizeTaskRuntime: 100 ms
    assert j.reduce_durations_s == (10.0, 30.0, 10.0, 1.0)  # median of the good successes (10, 30, 1)
    assert j.reduce_retries[3] == (("FAILED", 0.1),)  # no good FAILED reduce to take a median of
    assert repairs.counts == {"attempt_ends_before_start": 3}


def test_an_attempt_without_times_runs_the_median_of_its_kind_and_one_without_result_is_dropped(tmp_path):
    no_end = {**attempt("SUCCESS", 5, 5, "/r/a"), "finishTime": -1}
    maps = [[attempt("SUCCESS", 0, 4, "/r/a")], [attempt("SUCCESS", 0, 8, "/r/b")], [no_end],
            [attempt(None, 0, 3, "/r/c"), attempt("SUCCESS", 3, 5, "/r/c")]]  # fmt: skip
    j, repairs = _one(tmp_path, job("job_1", 0, maps))
    assert j.maps == 4 and j.map_durations_s == (4.0, 8.0, 4.0, 2.0)  # median of 4, 8, 2
    assert j.map_retries[3] == ()  # the attempt with no result is gone
    assert repairs.counts == {"attempt_time_missing": 1, "attempt_no_result": 1}


def test_tasks_before_the_submit_keep_their_runtime_and_are_left_out_of_the_wait(tmp_path):
    maps = [[attempt("SUCCESS", 5, 15, "/r/a")], [attempt("SUCCESS", 20, 30, "/r/b")]]
    j, repairs = _one(tmp_path, job("job_1", 10, maps, finishTime=T0 + 40_000, launchTime=T0 + 11_000))
    assert j.map_durations_s == (10.0, 10.0)
    assert j.wait_s == 10.0 and j.head_s == 9.0  # from the other map (20 s), not the skewed one (5 s)
    assert repairs.counts == {"task_before_submit": 1}
    assert repairs.first["task_before_submit"].endswith("task job_1_m_0")


def test_a_job_finishing_before_its_submit_replays_uncompared(tmp_path):
    maps = [[attempt("SUCCESS", 10, 20, "/r/a")]]
    j, repairs = _one(tmp_path, job("job_1", 10, maps, finishTime=T0 + 5_000, launchTime=T0 + 9_000))
    assert j.duration_s is None and j.init_s is None and j.tail_s is None
    assert repairs.counts == {"job_times_skewed": 2}


@pytest.mark.parametrize(
    ("value", "kind"), [(-5, "counter_negative"), (1e30, "counter_out_of_range"), (2.5, "counter_out_of_range")]
)
def test_absurd_or_negative_counters_are_read_as_unknown(tmp_path, value, kind):
    task = {"taskID": "m0", "inputBytes": value,
            "attempts": [attempt("SUCCESS", 0, 5, "/r/a", hdfsBytesRead=3 * 2**20)]}  # fmt: skip
    j, repairs = _one(tmp_path, {**job("job_1", 0, []), "mapTasks": [task]})
    assert j.map_input_mb == (3.0,)  # the next source Rumen's mapping gives
    assert repairs.counts == {kind: 1} and "inputBytes" in repairs.first[kind]


def test_every_kind_counted_has_a_rule_and_the_summary_lists_them(tmp_path):
    maps = [[attempt("SUCCESS", 10, 9, "/r/a")]]
    _, repairs = _one(tmp_path, job("job_1", 0, maps))
    (kind,) = repairs.summary()
    assert repairs.summary()[kind] == {"count": 1, "rule": RULES[kind], "first": repairs.first[kind]}
    line = repairs.line("t.json")
    assert "\n" not in line and line.startswith("t.json: repaired 1 anomaly") and kind in line
    with pytest.raises(KeyError):
        repairs.note("made_up_kind", "x")


def test_a_trace_opening_with_a_licence_comment_is_rumen(tmp_path):
    one = job("job_1", 0, [[attempt("SUCCESS", 0, 5, "/r/a")]])
    for head in ("/*\n * Licensed to the Apache Software Foundation\n */\n", "// licence\n", "# licence\n"):
        kind, jobs = read_trace(write(tmp_path, "licensed", [one, one], head=head))
        assert kind == "rumen" and len(jobs) == 2
    with pytest.raises(TraceError, match="only comments: no jobs"):
        read_trace(write(tmp_path, "empty.json", [], head="/* nothing */\n"))


def test_hadoops_own_small_trace_test_excerpt_loads_as_shipped():
    got = load_trace(HADOOP_EXCERPT)
    assert got.kind == "rumen" and got.total_jobs == 1 and not got.repairs
    (j,) = got.jobs
    assert (j.name, j.maps, j.reduces, j.outcome) == ("job_200904211745_0002", 4, 1, "SUCCESS")
    assert j.map_retries[1] == (("FAILED", 23.008),)  # a failed attempt on a host named without its rack
    assert j.wait_s == pytest.approx(684.367) and j.duration_s == pytest.approx(926.811)
    assert j.conf.map_heap_mb == j.conf.reduce_heap_mb == 640.0  # mapred.child.java.opts -Xmx640m
    assert j.reduce_after_shuffle_s == (pytest.approx(10.794),)


def test_max_jobs_checks_only_the_jobs_it_reads_and_counts_the_rest(tmp_path):
    good = job("job_1", 0, [[attempt("SUCCESS", 0, 5, "/r/a")]])
    bad = {**good, "jobID": "job_2", "submitTime": "soon"}  # malformed: refused when read
    path = write(tmp_path, "t.json", [good, bad, good])
    got = load_trace(path, max_jobs=1)
    assert [j.name for j in got.jobs] == ["job_1"] and got.total_jobs == 3 and got.cut
    with pytest.raises(TraceError, match="submitTime='soon'"):
        load_trace(path, max_jobs=2)
    broken = tmp_path / "broken.json"
    broken.write_text(json.dumps(good) + "\n" + json.dumps(good)[:-5])
    got = load_trace(broken, max_jobs=1)
    assert got.total_jobs is None and got.cut  # more than read, how many unknown past the break
    swim = tmp_path / "s.tsv"
    swim.write_text("".join(f"job{i}\t{i}\t1\t100\t0\t100\n" for i in range(5)) + "job5\tx\n")
    got = load_trace(swim, max_jobs=3)
    assert len(got.jobs) == 3 and got.total_jobs == 6 and got.cut  # the malformed last row is not checked


def test_a_jobs_configuration_gives_the_emulators_knobs_and_ignores_impossible_values(tmp_path):
    props = {"mapreduce.job.reduce.slowstart.completedmaps": "1.0", "mapred.reduce.slowstart.completed.maps": "0.2",
             "io.sort.mb": "50", "mapred.child.java.opts": "-Xmx1g", "mapreduce.reduce.java.opts": " -Xmx825955249",
             "mapreduce.map.speculative": "false", "mapred.job.reuse.jvm.num.tasks": "-1"}  # fmt: skip
    j, repairs = _one(tmp_path, job("job_1", 0, [[attempt("SUCCESS", 0, 5, "/r/a")]], jobProperties=props))
    c = j.conf
    assert c.reduce_slowstart == 1.0  # the 2.x name wins over the 1.x one
    assert (c.io_sort_mb, c.map_heap_mb) == (50.0, 1024.0)
    assert c.reduce_heap_mb == pytest.approx(825955249 / 2**20)  # bytes: -Xmx without a unit
    assert (c.map_speculative, c.reduce_speculative) == (False, None)
    assert c.not_honoured == ("mapreduce.job.jvm.numtasks",) and not repairs
    bad = {"mapred.reduce.slowstart.completed.maps": "1.5", "io.sort.mb": "abc"}
    j, repairs = _one(tmp_path, job("job_1", 0, [], jobProperties=bad, heapMegabytes=300))
    assert j.conf.reduce_slowstart is None and j.conf.io_sort_mb is None and j.conf.map_heap_mb == 300.0
    assert repairs.counts == {"job_conf_unreadable": 2}


def test_xmx_takes_the_last_and_its_unit():
    assert xmx_mb("-Xmx200m -Xmx2G") == 2048.0 and xmx_mb("-Xmx512k") == 0.5 and xmx_mb("-server") is None
