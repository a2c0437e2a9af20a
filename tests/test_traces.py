"""Trace readers: hand-computed SWIM scaling and Rumen extraction, the shipped public traces, one-line errors."""

import dataclasses
import gzip
import json
from pathlib import Path

import pytest

from hadoop_layer.traces import (
    MB,
    TraceError,
    TraceJob,
    load_trace,
    read_rumen,
    read_swim,
    read_topology,
    read_trace,
)

DATA = Path(__file__).resolve().parents[1].parent / "shared" / "data"
needs_data = pytest.mark.skipif(not DATA.is_dir(), reason="public traces live in ../shared/data")
MIB = 2**20


def _write(tmp_path: Path, name: str, text: str) -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


# --- SWIM: hand-computed ---------------------------------------------------------------------------------------

# 600 -> 30 nodes divides every byte count by 20 (floored, as Java's long arithmetic does).
SWIM_ROWS = (
    f"job0\t10\t10\t{200 * MIB * 20}\t0\t{MIB * 20}\n"  # 200 MB in, map-only
    f"job1\t25\t15\t0\t{100 * MIB * 20}\t{60 * MIB * 20}\n"  # no input; 100 + 60 MB = 2.5 blocks -> 3 reduces
    "job2\t40\t15\t1001\t7\t5\thdfs://anon/path\n"  # 1001*30//600 = 50 bytes; shuffle scales to 0 but is not 0
)


def test_swim_hand_computed(tmp_path):
    jobs = read_swim(_write(tmp_path, "three.tsv", SWIM_ROWS))
    assert [j.name for j in jobs] == ["job0", "job1", "job2"]
    assert [j.submit_s for j in jobs] == [10.0, 25.0, 40.0]
    assert [j.source for j in jobs] == ["three.tsv:1", "three.tsv:2", "three.tsv:3"]

    j0, j1, j2 = jobs
    assert (j0.input_mb, j0.shuffle_mb, j0.output_mb) == (200.0, 0.0, 1.0)
    assert (j0.maps, j0.map_input_mb, j0.reduces) == (4, (64.0, 64.0, 64.0, 8.0), 0)

    assert (j1.input_mb, j1.shuffle_mb, j1.output_mb) == (0.0, 100.0, 60.0)
    assert (j1.maps, j1.map_input_mb) == (1, (0.0,))  # a job with no input still runs one (empty) map
    assert j1.reduces == 3  # Math.round(2.5) = 3, not Python's banker's 2

    assert j2.input_mb == 50 / MB and j2.map_input_mb == (50 / MB,) and j2.maps == 1
    assert j2.shuffle_mb == 0.0 and j2.output_mb == 0.0
    assert j2.reduces == 1  # raw shuffle 7 > 0: SWIM's 1 KB floors give round(2 KB / 64 MB) = 0, raised to 1
    assert all(j.map_durations_s is None and j.reduce_durations_s is None and j.map_hosts is None for j in jobs)


def test_swim_block_size_and_scale_parameters(tmp_path):
    path = _write(tmp_path, "one.tsv", f"job0\t0\t0\t{300 * MIB}\t{MIB}\t{MIB}\n")
    (job,) = read_swim(path, original_nodes=1, emulated_nodes=1, block_mb=128.0)
    assert job.input_mb == 300.0 and job.map_input_mb == (128.0, 128.0, 44.0)
    (job,) = read_swim(path, original_nodes=3, emulated_nodes=1, block_mb=128.0)
    assert job.input_mb == 100.0 and job.map_input_mb == (100.0,)


def test_swim_reduce_cap_quirk(tmp_path):
    path = _write(tmp_path, "big.tsv", f"job0\t0\t0\t{MIB}\t{11 * 64 * MIB}\t0\n")  # wants 11 reduces
    assert read_swim(path, original_nodes=10, emulated_nodes=10)[0].reduces == 2  # 11 > 10 nodes -> 10 // 5
    assert read_swim(path, original_nodes=10, emulated_nodes=10, swim_reduce_cap=False)[0].reduces == 11
    assert read_swim(path, original_nodes=4, emulated_nodes=4)[0].reduces == 1  # 4 // 5 = 0, kept at 1


def test_swim_rejects_bad_parameters(tmp_path):
    path = _write(tmp_path, "one.tsv", "job0\t0\t0\t1\t1\t1\n")
    with pytest.raises(ValueError, match="positive"):
        read_swim(path, emulated_nodes=0)


# --- Rumen: hand-written -----------------------------------------------------------------------------------------


def _attempt(result: str, start: int, finish: int, host: str, **counters: int) -> dict:
    return {"result": result, "startTime": start, "finishTime": finish, "hostName": host, **counters}


RUMEN_JOBS = [
    {
        "jobID": "job_1_0001",
        "submitTime": 1_004_500,
        "mapTasks": [
            {  # task counter unknown (-1): fall back to the successful attempt's hdfsBytesRead / fileBytesWritten
                "taskID": "task_1_0001_m_000000",
                "inputBytes": -1,
                "outputBytes": -1,
                "attempts": [
                    _attempt("FAILED", 1_005_000, 1_006_000, "/r1/h1", hdfsBytesRead=999 * MIB),
                    _attempt("SUCCESS", 1_006_000, 1_008_500, "/r1/h2", hdfsBytesRead=MIB, fileBytesWritten=MIB // 2),
                ],
            },
            {  # task counters known: they win over the attempt's
                "taskID": "task_1_0001_m_000001",
                "inputBytes": 3 * MIB,
                "outputBytes": MIB // 2,
                "attempts": [_attempt("SUCCESS", 1_005_000, 1_009_000, "/r2/h3", hdfsBytesRead=7 * MIB)],
            },
        ],
        "reduceTasks": [
            {
                "taskID": "task_1_0001_r_000000",
                "outputBytes": -1,
                "attempts": [_attempt("SUCCESS", 1_009_000, 1_019_250, "/r1/h1", hdfsBytesWritten=2 * MIB)],
            },
            {"taskID": "task_1_0001_r_000001", "attempts": []},  # never ran: not counted
        ],
    },
    {  # earliest submit, second in the file: the time origin; map-only, output written by the map
        "jobID": "job_1_0002",
        "submitTime": 1_000_000,
        "mapTasks": [
            {
                "taskID": "task_1_0002_m_000000",
                "inputBytes": 4 * MIB,
                "outputBytes": 12345,
                "attempts": [_attempt("SUCCESS", 1_000_000, 1_000_250, "/r3/h9", hdfsBytesWritten=5 * MIB)],
            }
        ],
        "reduceTasks": [],
    },
]


def test_rumen_hand_written(tmp_path):
    text = "\n".join(json.dumps(job, indent=2) for job in RUMEN_JOBS) + "\n\n"  # a stream, not an array
    a, b = read_rumen(_write(tmp_path, "hand.json", text))
    assert a == TraceJob(
        name="job_1_0001",
        submit_s=4.5,
        input_mb=4.0,
        shuffle_mb=1.0,
        output_mb=2.0,
        maps=2,
        reduces=1,
        map_input_mb=(1.0, 3.0),
        map_durations_s=(2.5, 4.0),
        reduce_durations_s=(10.25,),
        map_hosts=("/r1/h2", "/r2/h3"),
        source="hand.json:job_1_0001",
        map_cpu_s=(None, None),  # no CPU counters in this trace
        reduce_cpu_s=(None,),
        reduce_after_shuffle_s=(None,),  # no shuffleFinished
        reduce_shuffle_s=(None,),
        reduce_hosts=("/r1/h1",),
        map_replicas=((), ()),
        map_retries=((("FAILED", 1.0),), ()),  # ended (1,006,000 ms) as the success started: a retry
        reduce_retries=((),),
        unfinished_reduces=((),),  # r_000001 never ran
        wait_s=0.5,  # submit 1,004,500 ms -> the first success's start (m_000001) 1,005,000 ms
        map_start_s=((0.5, 1.5), (0.5,)),  # per task, the attempts the replay launches: the retry, the success
        reduce_start_s=((4.5,), ()),
        attempt_windows_s=((0.5, 1.5), (0.5, 4.5), (1.5, 4.0), (4.5, 14.75)),  # every attempt, by start
    )
    assert (b.submit_s, b.input_mb, b.shuffle_mb, b.output_mb, b.maps, b.reduces) == (0.0, 4.0, 0.0, 5.0, 1, 0)
    assert b.map_durations_s == (0.25,) and b.reduce_durations_s == () and b.map_hosts == ("/r3/h9",)


def test_trace_job_is_frozen():
    job = TraceJob("j", 0.0, 0.0, 0.0, 0.0, 1, 0, (0.0,))
    with pytest.raises(dataclasses.FrozenInstanceError):
        job.maps = 2  # type: ignore[misc]


# --- the shipped public traces -----------------------------------------------------------------------------------


@needs_data
@pytest.mark.parametrize(
    ("name", "original_nodes", "count", "map_only"),
    [
        ("FB-2009_samples_24_times_1hr_0.tsv", 600, 5894, 4448),
        ("FB-2010_samples_24_times_1hr_0.tsv", 3000, 24442, 8324),
    ],
)
def test_swim_public_traces(name, original_nodes, count, map_only):
    jobs = read_swim(DATA / "swim" / name, original_nodes=original_nodes)
    assert len(jobs) == count
    assert sum(j.reduces == 0 for j in jobs) == map_only  # README: ~75% (2009) and ~34% (2010) map-only
    assert all(j.shuffle_mb == 0.0 for j in jobs if j.reduces == 0) and max(j.reduces for j in jobs) <= 30
    assert all(j.maps == len(j.map_input_mb) >= 1 and sum(j.map_input_mb) == j.input_mb for j in jobs)
    assert all(max(j.map_input_mb) <= 64.0 and min(j.map_input_mb) >= 0.0 for j in jobs)
    submits = [j.submit_s for j in jobs]
    assert submits == sorted(submits) and submits[0] >= 0.0


@needs_data
def test_rumen_sls_two_teragen_jobs():
    jobs = read_rumen(DATA / "rumen" / "sls-2jobs2min-rumen-jh.json")
    assert [(j.name, j.maps, j.reduces) for j in jobs] == [
        ("job_1369942127770_1205", 96, 0),
        ("job_1369942127770_1206", 96, 0),
    ]
    assert jobs[0].submit_s == 0.0 and jobs[1].submit_s == pytest.approx(105.204)
    for job in jobs:
        assert len(job.map_durations_s) == len(job.map_hosts) == len(job.map_input_mb) == 96
        assert all(d > 0 for d in job.map_durations_s) and all(h.startswith("/default-rack/") for h in job.map_hosts)
        assert job.shuffle_mb == 0.0 and job.output_mb == pytest.approx(40e9 / MB)  # TeraGen: 400M rows x 100 B


@needs_data
def test_rumen_zombie_four_jobs():
    jobs = read_rumen(DATA / "rumen" / "zombie-input-trace.json")
    assert len(jobs) == 4
    assert [(j.maps, j.reduces) for j in jobs] == [(0, 0), (20, 1), (3, 1), (131, 28)]  # job 1 was killed early
    assert jobs[0].submit_s == 0.0 and all(j.submit_s > 0 for j in jobs[1:])
    assert all(len(j.map_hosts) == j.maps and len(j.reduce_durations_s) == j.reduces for j in jobs)
    assert jobs[3].input_mb == pytest.approx(4_431_391_494 / MB)  # hdfsBytesRead: the task counters are -1


# --- malformed input ---------------------------------------------------------------------------------------------

GOOD_ROW = "job0\t1\t1\t100\t0\t100\n"


@pytest.mark.parametrize(
    ("bad_row", "expected"),
    [
        ("job1\t2\t1\t100\t0\n", ["got 5"]),
        ("job1\t2\t1\tabc\t0\t100\n", ["map_input_bytes='abc'", "not a number"]),
        ("job1\t2\t1\t100\t-5\t100\n", ["shuffle_bytes='-5'", "negative"]),
        ("job1\t2\t1\t100\t0\t1.5\n", ["reduce_output_bytes='1.5'", "whole"]),
        ("job1\tsoon\t1\t100\t0\t100\n", ["submit_s='soon'", "not a number"]),
        ("job1\tnan\t1\t100\t0\t100\n", ["submit_s='nan'", "finite"]),
    ],
)
def test_swim_errors_name_file_line_field(tmp_path, bad_row, expected):
    path = _write(tmp_path, "FB-bad.tsv", GOOD_ROW + bad_row + GOOD_ROW)
    with pytest.raises(TraceError) as info:
        read_swim(path)
    message = str(info.value)
    assert "\n" not in message and message.startswith("FB-bad.tsv line 2: ")
    for part in expected:
        assert part in message


def _rumen_error(tmp_path: Path, text: str) -> str:
    with pytest.raises(TraceError) as info:
        read_rumen(_write(tmp_path, "bad-rumen.json", text))
    message = str(info.value)
    assert "\n" not in message and message.startswith("bad-rumen.json job ")
    return message


def test_rumen_truncated_json(tmp_path):
    text = json.dumps(RUMEN_JOBS[0], indent=2) + "\n" + json.dumps(RUMEN_JOBS[1], indent=2)[:-40]
    message = _rumen_error(tmp_path, text)
    assert "job 1:" in message and "invalid JSON" in message


def test_rumen_missing_job_id(tmp_path):
    job = {k: v for k, v in RUMEN_JOBS[1].items() if k != "jobID"}
    message = _rumen_error(tmp_path, json.dumps(RUMEN_JOBS[0]) + json.dumps(job))
    assert "job 1:" in message and "jobID is missing" in message


def test_rumen_submit_time_of_the_wrong_type_is_refused(tmp_path):
    message = _rumen_error(tmp_path, json.dumps({**RUMEN_JOBS[1], "submitTime": "abc"}))
    assert "job 0 (job_1_0002)" in message and "submitTime='abc'" in message and "not a number" in message


@pytest.mark.parametrize("value", [-3, None])
def test_a_job_without_a_submit_time_is_left_out_and_refused_only_when_nothing_is_left(tmp_path, value):
    undated = {**RUMEN_JOBS[1], "submitTime": value}
    with pytest.raises(TraceError) as info:
        read_rumen(_write(tmp_path, "bad-rumen.json", json.dumps(undated)))
    message = str(info.value)
    assert "\n" not in message and message.startswith("bad-rumen.json: nothing replayable is left")
    assert "job_no_submit_time" in message
    assert f"job 0 (job_1_0002) submitTime={value!r}" in message
    got = load_trace(_write(tmp_path, "two.json", json.dumps(RUMEN_JOBS[0]) + json.dumps(undated)))
    assert [j.name for j in got.jobs] == ["job_1_0001"] and got.dropped == 1
    assert got.repairs.counts == {"job_no_submit_time": 1}


def test_rumen_attempt_ending_before_it_starts_is_repaired_not_refused(tmp_path):
    job = json.loads(json.dumps(RUMEN_JOBS[1]))
    job["mapTasks"][0]["attempts"][0]["finishTime"] = 999_999  # 1 ms before its startTime
    got = load_trace(_write(tmp_path, "skew.json", json.dumps(job)))
    assert got.jobs[0].map_durations_s == (0.1,)  # ZombieJob.sanitizeTaskRuntime's 100 ms
    assert got.repairs.counts == {"attempt_ends_before_start": 1}
    assert got.repairs.first["attempt_ends_before_start"].startswith("skew.json job 0 (job_1_0002) task task_1_0002_m")


def test_rumen_top_level_not_an_object(tmp_path):
    assert "job 0: not a JSON object" in _rumen_error(tmp_path, "[1, 2]")


# --- format by content, gzip, topology ---------------------------------------------------------------------------


def _gz(tmp_path: Path, name: str, text: str) -> Path:
    path = tmp_path / name
    path.write_bytes(gzip.compress(text.encode("utf-8")))
    return path


def test_format_is_read_from_the_content_and_gzip_is_transparent(tmp_path):
    rumen_text = "\n".join(json.dumps(job) for job in RUMEN_JOBS)
    plain = read_rumen(_write(tmp_path, "hand.json", rumen_text))
    for path in (
        _write(tmp_path, "trace", rumen_text),  # no suffix: still Rumen
        _write(tmp_path, "trace.tsv", rumen_text),  # a misleading suffix does not matter
        _gz(tmp_path, "trace.json.gz", rumen_text),
        _gz(tmp_path, "trace.gz.bin", rumen_text),
    ):
        kind, jobs = read_trace(path)
        assert kind == "rumen"
        assert [dataclasses.replace(j, source="") for j in jobs] == [dataclasses.replace(j, source="") for j in plain]
    kind, jobs = read_trace(_gz(tmp_path, "swim.gz", SWIM_ROWS))
    assert kind == "swim" and [j.name for j in jobs] == ["job0", "job1", "job2"]
    assert read_rumen(_gz(tmp_path, "x.json.gz", rumen_text))[0].maps == 2  # the readers gunzip too
    assert read_swim(_gz(tmp_path, "x.tsv.gz", SWIM_ROWS))[0].maps == 4


@pytest.mark.parametrize(
    ("content", "expected"),
    [
        (b"\x1f\x8b\x08\x00garbage", "bad.gz: gzip data is truncated or corrupt"),
        (b"\x00\x01\xfe\xff binary", "bad.gz: not UTF-8 text (byte 0xfe at offset 2)"),
        (b"", "bad.gz: the file is empty"),
        (b'{"name": "<root>", "children": []}', "bad.gz: this is a Rumen topology file, not a job trace"),
    ],
)
def test_unreadable_files_get_one_line_naming_the_file(tmp_path, content, expected):
    path = tmp_path / "bad.gz"
    path.write_bytes(content)
    with pytest.raises(TraceError) as info:
        read_trace(path)
    assert str(info.value).startswith(expected) and "\n" not in str(info.value)


def test_truncated_gzip_of_a_real_trace(tmp_path):
    data = gzip.compress(("\n".join(json.dumps(job) for job in RUMEN_JOBS)).encode())
    path = tmp_path / "cut.json.gz"
    path.write_bytes(data[: len(data) // 2])
    with pytest.raises(TraceError, match=r"^cut\.json\.gz: gzip data is truncated or corrupt"):
        read_trace(path)


def test_rumen_wrong_type_and_bad_result_name_job_and_field(tmp_path):
    job = json.loads(json.dumps(RUMEN_JOBS[1]))
    job["mapTasks"][0]["attempts"][0]["result"] = "MAYBE"
    message = _rumen_error(tmp_path, json.dumps(job))
    assert "job 0 (job_1_0002) task task_1_0002_m_000000" in message and "result='MAYBE'" in message
    job = {**RUMEN_JOBS[1], "mapTasks": {"not": "a list"}}
    assert "field mapTasks=" in _rumen_error(tmp_path, json.dumps(job))
    job = {**RUMEN_JOBS[1], "outcome": "LOST"}
    assert "outcome='LOST'" in _rumen_error(tmp_path, json.dumps(job))


def test_topology_racks_and_hosts(tmp_path):
    topo = {
        "name": "<root>",
        "children": [
            {"name": "r1", "children": [{"name": "h1", "children": None}, {"name": "h2", "children": None}]},
            {"name": "r2", "children": [{"name": "h3", "children": None}]},
        ],
    }
    t = read_topology(_gz(tmp_path, "topo.json.gz", json.dumps(topo)))
    assert t.hosts == [("r1", "h1"), ("r1", "h2"), ("r2", "h3")]
    bad = json.loads(json.dumps(topo))
    bad["children"][1]["children"][0]["name"] = 7
    with pytest.raises(TraceError, match=r"^topo\.json rack 1 \(r2\) host 0: field name"):
        read_topology(_write(tmp_path, "topo.json", json.dumps(bad)))


# --- Rumen: outcomes, lifecycle, counters ------------------------------------------------------------------------


def test_rumen_outcome_lifecycle_counters_and_retries(tmp_path):
    job = {
        "jobID": "job_9_0001",
        "outcome": "FAILED",
        "submitTime": 10_000,
        "launchTime": 10_750,
        "finishTime": 70_000,
        "otherTasks": [
            {"taskType": "SETUP", "attempts": [_attempt("SUCCESS", 11_000, 13_500, "/r/h")]},
            {
                "taskType": "CLEANUP",
                "attempts": [_attempt("FAILED", 60_000, 61_000, "/r/h"), _attempt("SUCCESS", 62_000, 64_000, "/r/h")],
            },
        ],
        "mapTasks": [
            {
                "taskID": "m0",
                "inputBytes": MIB,
                "preferredLocations": [{"layers": ["r", "h"]}, {"layers": ["r2", "h9"]}],
                "attempts": [
                    {
                        **_attempt("SUCCESS", 14_000, 20_000, "/r/h"),
                        "resourceUsageMetrics": {"cumulativeCpuUsage": 4500},
                    },
                    _attempt("KILLED", 18_000, 21_000, "/r/h2"),  # a speculative duplicate: not a retry
                ],
            },
            {
                "taskID": "m1",
                "attempts": [_attempt("FAILED", 14_000, 15_000, "/r/h"), _attempt("FAILED", 16_000, 19_000, "/r/h")],
            },
        ],
        "reduceTasks": [
            {
                "taskID": "r0",
                "attempts": [
                    {**_attempt("SUCCESS", 15_000, 40_000, "/r/h3"), "shuffleFinished": 31_000, "cpuUsages": [100, 250]}
                ],
            }
        ],
    }
    (j,) = read_rumen(_write(tmp_path, "failed.json", json.dumps(job)))
    assert (j.outcome, j.duration_s, j.init_s, j.setup_s, j.cleanup_s) == ("FAILED", 60.0, 0.75, 2.5, 2.0)
    assert (j.maps, j.reduces) == (1, 1)
    assert j.map_cpu_s == (4.5,) and j.reduce_cpu_s == (0.35,)
    assert j.reduce_after_shuffle_s == (9.0,) and j.reduce_shuffle_s == (16.0,) and j.reduce_hosts == ("/r/h3",)
    assert j.map_replicas == (("/r/h", "/r2/h9"),)
    assert j.map_retries == ((),) and j.reduce_retries == ((),)
    assert j.unfinished_maps == ((("FAILED", 1.0), ("FAILED", 3.0)),) and j.unfinished_reduces == ()
    assert (j.head_s, j.tail_s) == (3.25, 30.0)  # launch 10.75 s -> first success 14 s; last success 40 s -> 70 s


@needs_data
def test_rumen_zombie_outcomes_and_lifecycle():
    jobs = read_rumen(DATA / "rumen" / "zombie-input-trace.json")
    assert [j.outcome for j in jobs] == ["KILLED", "SUCCESS", "SUCCESS", "SUCCESS"]
    assert [j.duration_s for j in jobs] == [799.855, 926.811, 100.322, None]  # job 4's finishTime is -1
    assert [j.setup_s for j in jobs] == [None, 2.652, 11.304, 2.236]  # job 1 was killed before its setup
    assert [j.cleanup_s for j in jobs] == [2.423, 1.757, 1.794, None]
    assert sum(len(r) for r in jobs[3].map_retries) == 3  # failed attempts before a success; kills overlap it
    assert len(jobs[3].unfinished_reduces) == 47 - 28  # the trace ends before 19 of its 47 reduces started


@needs_data
@pytest.mark.parametrize("name", ["sls-2jobs2min-rumen-jh.json", "zombie-input-trace.json"])
def test_every_shipped_rumen_trace_and_its_gzip_copy_load_by_content(tmp_path, name):
    source = DATA / "rumen" / name
    kind, plain = read_trace(source)
    copy = tmp_path / "copy"  # gzip'd, no suffix at all
    copy.write_bytes(gzip.compress(source.read_bytes()))
    kind_gz, zipped = read_trace(copy)
    assert kind == kind_gz == "rumen" and len(plain) >= 2
    assert [dataclasses.replace(j, source="") for j in zipped] == [dataclasses.replace(j, source="") for j in plain]


@needs_data
def test_the_shipped_topology_is_a_topology_not_a_trace():
    topo = read_topology(DATA / "rumen" / "zombie-input-topology.json")
    assert len(topo.racks) == 41 and len(topo.hosts) == 522
    with pytest.raises(TraceError, match="topology file, not a job trace"):
        read_trace(DATA / "rumen" / "zombie-input-topology.json")
