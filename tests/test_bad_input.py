"""Bad input across every command (issue 12): each case exits 2 with one line that names the field (and the file,
row or job for traces) and its value, prints no traceback, and writes nothing - no output, no temporary."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pandas as pd
import pytest

from scenarios.cli import main

QUICK = "duration_s=60 trace_interval_s=20"
SWIM_ROW = "job0\t0\t0\t1000000\t1000\t1000\n"
LONG = "a" * 300  # a file name longer than the system allows (255 bytes)
RUMEN = Path(__file__).resolve().parents[2] / "shared" / "data" / "rumen" / "zombie-input-trace.json"

# (command line, what the one line must contain); {in} is a directory of input files, {run} a finished run
RUN = [
    ("run flexslot --set hadoop.child_heap_mb=50 hadoop.io_sort_mb=100", "hadoop.io_sort_mb=100"),
    ("run flexslot --set hadoop.io_sort_mb=300", "hadoop.io_sort_mb=300"),
    ("run flexslot --set hadoop.io_sort_mb=100.5", "hadoop.io_sort_mb=100.5"),
    ("run flexslot --set hadoop.io_sort_mb=4000 hadoop.child_heap_mb=8000", "hadoop.io_sort_mb=4000"),
    ("run flexslot --set hadoop.block_mb=1e-6", "hadoop.block_mb=1e-06"),
    ("run flexslot --set hadoop.block_mb=1 scale=2", "hadoop.block_mb=1 with scale=2"),
    ("run flexslot --set core_mhz=Infinity", "core_mhz=inf"),
    ("run flexslot --set core_mhz=-Infinity", "core_mhz=-inf"),
    ("run flexslot --set core_mhz=NaN", "core_mhz=nan"),
    ("run flexslot --set scale=nan", "scale='nan'"),
    ("run flexslot --set scale=inf", "scale='inf'"),
    ("run flexslot --set scale=0", "scale=0"),
    ("run flexslot --set scale=11", "scale=11"),
    ("run flexslot --set dt=1e-9", "dt=1e-09"),
    ("run flexslot --set dt=0", "dt=0"),
    ("run flexslot --set dt=61", "dt=61"),
    ("run flexslot --set trace_interval_s=1e-6", "trace_interval_s=1e-06"),
    ("run flexslot --set trace_interval_s=0.5", "trace_interval_s=0.5"),
    ("run flexslot --set slaves=100000", "slaves=100000"),
    ("run flexslot --set slaves=0", "slaves=0"),
    ("run flexslot --set slaves=4000", "trace_interval_s=10"),
    ("run flexslot --set hosts=100000", "hosts=100000"),
    ("run flexslot --set max_duration_s=1e12", "max_duration_s=1000000000000.0"),
    ("run flexslot --set dt=0.01 max_duration_s=2592000", "dt=0.01"),
    ("run synthetic-cloud --set duration_s=1e12", "duration_s=1000000000000.0"),
    ("run synthetic-cloud --set dt=0.01 duration_s=2592000", "dt=0.01"),
    ("run synthetic-cloud --set vms_per_host=100000", "vms_per_host=100000"),
    ("run synthetic-cloud --set items_per_vm=1000000", "items_per_vm=1000000"),
    ("run synthetic-cloud --set tenants_per_host=100000", "tenants_per_host=100000"),
    ("run synthetic-cloud --set size_sigma=1000", "size_sigma=1000"),
    ("run synthetic-cloud --set mix=[]", "mix=[]"),
    ('run synthetic-cloud --set mix=["gpu"]', "mix"),
    ("run flexslot --set hadoop.map_slots=0", "hadoop.map_slots=0"),
    ("run flexslot --set hadoop.reduce_slots=0", "hadoop.reduce_slots=0"),
    ("run flexslot --set hadoop.map_slots=65", "hadoop.map_slots=65"),
    ("run flexslot --set pool_mem_mb=1", "pool_mem_mb=1"),
    ("run flexslot --set pool_mem_mb=10000", "pool_mem_mb=10000"),
    ("run flexslot --set pool_cpu_mhz=1", "pool_cpu_mhz=1"),
    ("run flexslot --set disk_mbps=1e-9", "disk_mbps=1e-09"),
    ("run flexslot --set nic_mbps=0", "nic_mbps=0"),
    ("run flexslot --set vcpus=16", "vcpus=16"),
    ("run flexslot --set vm_mem_mb=100000", "vm_mem_mb=100000"),
    ("run flexslot --set daemon_mem_mb=5000", "daemon_mem_mb=5000"),
    ("run flexslot --set host_mem_mb=1", "host_mem_mb=1"),
    ("run flexslot --set hadoop.heartbeat_scaling=1e-9", "hadoop.heartbeat_scaling=1e-09"),
    ("run flexslot --set hadoop.jvm_start_core_s=1e12", "hadoop.jvm_start_core_s"),
    ("run flexslot --set hadoop.task_failure_probability=1", "hadoop.task_failure_probability=1"),
    ("run flexslot --set hadoop.max_attempts=0", "hadoop.max_attempts=0"),
    ("run flexslot --set hadoop.replication=100", "hadoop.replication=100"),
    ("run flexslot --set drs.period_s=1e-9", "drs.period_s=1e-09"),
    ("run flexslot --set drs.sample_s=0", "drs.sample_s=0"),
    ("run flexslot --set drs.mem_sample_pages=100000000", "drs.mem_sample_pages=100000000"),
    ("run flexslot --set drs.mem_sample_period_s=1e-9", "drs.mem_sample_period_s=1e-09"),
    ("run flexslot --set drs.smoothing=1", "drs.smoothing=1"),
    ("run flexslot --set flexslot.period_s=1e-9", "flexslot.period_s=1e-09"),
    ("run flexslot --set skewtune.period_s=1e-9", "skewtune.period_s=1e-09"),
    ("run flexslot --set fair.update_interval_s=0", "fair.update_interval_s=0"),
    ("run flexslot --set scheduler=lottery", "scheduler='lottery'"),
    ("run flexslot --set speculation=always", "speculation='always'"),
    ("run flexslot --set slot_manager=yarn", "slot_manager='yarn'"),
    ("run flexslot --set benchmark=pagerank", "benchmark='pagerank'"),
    ("run flexslot --set skew_sched=true", "skew_sched=true"),
    ("run flexslot --set hadoop.io_sort_mbb=5", "unknown setting hadoop.io_sort_mbb=5"),
    ("run flexslot --set hadoop=5", "hadoop=5"),
    ("run flexslot --set hadoop.map_slots.x=5", "hadoop.map_slots={'x': 5}"),
    ("run flexslot --set noequals", "'noequals'"),
    ("run flexslot --set =5", "'=5'"),
    ("run flexslot --set hadoop.map_slots=two", "hadoop.map_slots='two'"),
    ("run flexslot --set hadoop.map_slots=2.5", "hadoop.map_slots=2.5"),
    ("run flexslot --set allocator=heterogeneous heterogeneous.cpu_mhz=[1,2]", "heterogeneous.cpu_mhz"),
    ("run flexslot --seed -1", "--seed"),
    ("run flexslot --seed 1.5", "--seed"),
    ("run flexslot --seed x", "--seed"),
    ("run nosuch", "unknown scenario 'nosuch'"),
    ("run capacity-queues --set phase_s=1e9", "phase_s=1000000000.0"),
    ("run capacity-queues --set bin_s=1e-9", "bin_s=1e-09"),
    ("run capacity-queues --set c_users=100000", "c_users=100000"),
    ("run quincy-locality --set jobs=10000000", "jobs=10000000"),
    ("run quincy-locality --set mean_gap_s=1e15", "mean_gap_s"),
    ("run samr-heterogeneous --set slow_nodes=100", "slow_nodes=100"),
    ("run samr-heterogeneous --set slaves=1", "slaves=1"),
    ("run coupling-single-job --set job=nosuch", "job='nosuch'"),
    ("run coupling-two-grep --set scale=2", "scale=2"),
    ("run trace-replay --set max_jobs=100000000", "max_jobs=100000000"),
    ("run trace-replay --set hadoop.job_init_s=1e9", "hadoop.job_init_s=1000000000.0"),
    ("run trace-replay --set hadoop.setup_cleanup_s=-1", "hadoop.setup_cleanup_s=-1"),
    ("run trace-replay --set replay=fast", "replay='fast'"),
    ("run delay-scheduling --set scale=2", "scale=2"),
    ("run flexslot --set page_cache.dirty_ratio=1.5", "page_cache.dirty_ratio=1.5"),
    ("run flexslot --set page_cache.dirty_background_ratio=-0.1", "page_cache.dirty_background_ratio=-0.1"),
    ("run flexslot --set page_cache.dirty_expire_s=-1", "page_cache.dirty_expire_s=-1"),
    ("run synthetic-cloud --set pipeline_rounds=0", "pipeline_rounds=0"),
    ("run delay-scheduling --set rack_oversubscription=0.5", "rack_oversubscription=0.5"),
    ("run flexslot --set rack_oversubscription=nan", "rack_oversubscription='nan'"),
    ("run flexslot --set memory.balloon_max_fraction=1.5", "memory.balloon_max_fraction=1.5"),
    ("run flexslot --set memory.balloon_inflate_mb_s=0", "memory.balloon_inflate_mb_s=0"),
    ("run flexslot --set memory.idle_tax=1", "memory.idle_tax=1"),
    ("run flexslot --set memory.reclaim=maybe", "memory.reclaim='maybe'"),
    ("run synthetic-cloud --set drs.enforce=per-host", "drs.enforce='per-host'"),
    ("run synthetic-cloud --set drs.divvy=7.0", "drs.divvy='7.0': Input should be 'pre-6.7' or '6.7'"),
    ("run synthetic-cloud --set drs.short_window_s=-60", "drs.short_window_s=-60"),
    ("run flexslot --set hadoop.pipelined_tasks=maybe", "hadoop.pipelined_tasks='maybe'"),
    ("run delay-scheduling --set slaves=5000", "slaves=5000"),
    ("run delay-scheduling --set max_jobs=101", "max_jobs=101"),
    ("run delay-scheduling --set hadoop.map_slots=65", "hadoop.map_slots=65"),
    ("run delay-scheduling --set hadoop.block_mb=0.5", "hadoop.block_mb=0.5"),
    ("run delay-scheduling --set reduces=1 hadoop.reduce_slots=0", "hadoop.reduce_slots=0"),
    ("run delay-scheduling --set mean_gap_s=nan", "mean_gap_s='nan'"),
    ("run trace-replay --set time_scale=1e15", "time_scale"),
    ("run trace-replay --set trace=/no/such.tsv", "trace='/no/such.tsv'"),
    ("run flexslot --out {in}/afile", "--out"),
    ("run flexslot --out {in}/afile/sub", "afile is not a directory"),
    ("run flexslot --out /proc/vcloud/out", "/proc is not writable"),
    ("run flexslot --out {in}", "not empty"),
    # issue 43's audit
    (f"run flexslot --out {LONG}", "File name too long"),
    (f"run flexslot --out {{in}}/new/{LONG}/x", "a name of 300 characters"),
    (f"run trace-replay --set trace={LONG}", "File name too long"),
    (f"run trace-replay --set topology={LONG}", "File name too long"),
    ("run trace-replay --set topology={in}/twice.json", "host 'h1' is named twice"),
    ("run trace-replay --set topology={in}/huge-topology.json", "more than 4,000 hosts"),
    ("run trace-replay --set topology={in}/bad.json", "topology="),
    ("run trace-replay --set replay_io=false", "replay_io=false"),
    (f"run trace-replay --set trace={RUMEN} replay=physics replay_io=false", "replay_io=false"),
    ("run trace-replay --set replay=durations", "records no task times"),
    ("run synthetic-cloud --set pipeline_rounds=true", "pipeline_rounds=true"),
    ("run flexslot --set rack_oversubscription=true", "rack_oversubscription=true"),
    ("run flexslot --set memory.balloon_inflate_mb_s=true", "memory.balloon_inflate_mb_s=true"),
    ("run flexslot --set page_cache.dirty_background_ratio=0.2", "page_cache.dirty_background_ratio=0.2"),
    ("run flexslot --set drs.window_s=1e-9", "drs.window_s=1e-09"),
    ("run flexslot --set fair.node_delay=5", "did you mean fair.node_delay_s?"),
    ("run flexslot --seed 9223372036854775808", "--seed"),
]
CONFIG = [
    ("run --config {in}/binary.json", "--config"),
    ("run --config {in}/number.json", "--config"),
    ("run --config {in}/string.json", "--config"),
    ("run --config {in}/list.json", "--config"),
    ("run --config {in}/no-seed.json", "'seed'"),
    ("run --config {in}/seed-float.json", "seed=1.5"),
    ("run --config {in}/seed-negative.json", "seed=-3"),
    ("run --config {in}/seed-string.json", "seed='1'"),
    ("run --config {in}/seed-bool.json", "seed=True"),
    ("run --config {in}/scenario-list.json", "scenario=['flexslot']"),
    ("run --config {in}/scenario-unknown.json", "unknown scenario 'nope'"),
    ("run --config {in}/settings-list.json", "settings=[]"),
    ("run --config {in}/settings-string.json", "settings='drs'"),
    ("run --config {in}/settings-nan.json", "--config"),
    ("run --config {in}/settings-bad.json", "hadoop.io_sort_mb=500"),
    ("run --config {in}/truncated.json", "--config"),
    ("run --config {in}/no-such.json", "--config"),
]
TRACES = [
    ("run trace-replay --set trace={in}/binary.tsv", "binary.tsv: not UTF-8 text"),
    ("run trace-replay --set trace={in}/binary.json", "binary.json: not UTF-8 text"),
    ("run trace-replay --set trace={in}/huge.tsv", "huge.tsv line 1: field map_input_bytes"),
    ("run trace-replay --set trace={in}/columns.tsv", "columns.tsv line 2"),
    ("run trace-replay --set trace={in}/negative.tsv", "negative.tsv line 1: field shuffle_bytes"),
    ("run trace-replay --set trace={in}/text.tsv", "text.tsv line 1: field submit_s"),
    ("run trace-replay --set trace={in}/fraction.tsv", "fraction.tsv line 1: field map_input_bytes"),
    ("run trace-replay --set trace={in}/empty.tsv", "no jobs"),
    ("run trace-replay --set trace={in}/bad.json", "bad.json"),
]
TRACE = [
    ("trace {in}/no-such-run", "no-such-run: no such directory"),
    ("trace {run} --vm nosuch", "--vm nosuch"),
    ("trace {run} --from 50 --to 10", "--from 50"),
    ("trace {run} --from nan", "--from"),
    ("trace {run} --to inf", "--to"),
    ("trace {run} --plot heatmap", "--plot heatmap: needs --out"),
    ("trace {run} --plot heatmap --out {in}/x.gif", "'gif'"),
    ("trace {run} --plot heatmap --out {in}", "is a directory"),
    ("trace {run} --plot heatmap --out {in}/afile/x.png", "afile is not a directory"),
    ("trace {run} --plot heatmap --out /proc/vcloud/x.png", "/proc is not writable"),
    ("trace {run} --plot heatmap --bin 0 --out {in}/x.png", "--bin 0"),
    ("trace {run} --plot pie --out {in}/x.png", "--plot"),
    ("trace {run} --plot tasks-per-node --out {in}/x.png", "tasks.parquet: no such file"),
    ("trace {run} --metric steal", "--metric"),
    ("trace {run} {run}", "one RUN_DIR"),
    ("trace {in}/truncated-run", "vm_trace.parquet: not a readable Parquet table"),
    (f"trace {LONG}", "File name too long"),
    (f"trace {{run}} --plot heatmap --out {{in}}/{LONG}.png", "File name too long"),
    ("trace {run} --plot heatmap --bin 1e-9 --out {in}/x.png", "--bin 1e-09"),
    ("trace {in}/foreign-run", "no column 'time_s'"),
]
SWEEP = [
    ("sweep {in}/nosuch.toml --out {in}/sweep-out", "nosuch.toml"),
    ("sweep {in}/spec.txt --out {in}/sweep-out", "spec.txt"),
    ("sweep {in}/bad-scenario.toml --out {in}/sweep-out", "scenario"),
    ("sweep {in}/bad-setting.toml --out {in}/sweep-out", "hadoop.io_sort_mb=900"),
    ("sweep {in}/nan.yaml --out {in}/sweep-out", "duration_s"),
    ("sweep {in}/no-seeds.toml --out {in}/sweep-out", "seeds"),
    ("sweep {in}/good.toml --out {in}/afile", "--out"),
    ("sweep {in}/good.toml --out {in}/afile/sub", "afile is not a directory"),
    ("sweep {in}/good.toml --out /proc/vcloud/sweep", "/proc is not writable"),
    ("sweep {in}/good.toml --out {in}/sweep-out --processes 0", "--processes 0"),
    ("sweep {in}/good.toml --out {in}/sweep-out --processes 100000", "--processes 100000"),
    (f"sweep {{in}}/good.toml --out {LONG}", "File name too long"),
    (f"sweep {{in}}/{LONG}.toml --out {{in}}/sweep-out", "File name too long"),
    ("sweep {in}/big-seed.toml --out {in}/sweep-out", "seeds[0]=9223372036854775808"),
    ("sweep {in}/missing-trace.toml --out {in}/sweep-out", "trace='/no/such.tsv': no such file"),
    ("sweep {in}/bad-topology.toml --out {in}/sweep-out", "topology="),
]
REPRODUCE = [
    ("reproduce --out {in}/afile", "--out"),
    ("reproduce --out {in}/afile/sub", "afile is not a directory"),
    ("reproduce --out /proc/vcloud/report", "/proc is not writable"),
    ("reproduce", "--out"),
    ("reproduce --out {in}/report --quick --dask tcp://127.0.0.1:1", "--dask tcp://127.0.0.1:1"),
    (f"reproduce --out {LONG}", "File name too long"),
    ("reproduce --out {in}/report --processes 100000", "--processes 100000"),
]
DASHBOARD = [
    ("dashboard --port 70000", "--port"),
    ("dashboard --port 0", "--port"),
    ("dashboard --seed -1", "--seed"),
    ("dashboard --step-s nan", "--step-s"),
    ("dashboard --run {in}/foreign-run", "no column 'time_s'"),
]
SHOW = [
    ("show nosuch", "unknown scenario 'nosuch'"),
    ("show", "scenario"),
    ("show flexslot extra", "extra"),
    ("nosuch", "nosuch"),
]
CASES = RUN + CONFIG + TRACES + TRACE + SWEEP + REPRODUCE + DASHBOARD + SHOW


def _config(**fields) -> str:
    base = {"scenario": "synthetic-cloud", "seed": 1, "settings": {}}
    return json.dumps({**base, **fields})


INPUTS = {
    "afile": "not a directory",
    "binary.json": b"\x00\xaa\xfe\x10" * 64,
    "number.json": "42",
    "string.json": '"flexslot"',
    "list.json": '["flexslot", 1, {}]',
    "no-seed.json": json.dumps({"scenario": "synthetic-cloud", "settings": {}}),
    "seed-float.json": _config(seed=1.5),
    "seed-negative.json": _config(seed=-3),
    "seed-string.json": _config(seed="1"),
    "seed-bool.json": _config(seed=True),
    "scenario-list.json": _config(scenario=["flexslot"]),
    "scenario-unknown.json": _config(scenario="nope"),
    "settings-list.json": _config(settings=[]),
    "settings-string.json": _config(settings="drs"),
    "settings-nan.json": '{"scenario": "synthetic-cloud", "seed": 1, "settings": {"duration_s": NaN}}',
    "settings-bad.json": _config(scenario="flexslot", settings={"hadoop": {"io_sort_mb": 500}}),
    "truncated.json": _config()[:20],
    "binary.tsv": b"\x00\xaa\xfe\x10" * 64,
    "huge.tsv": "job0\t0\t0\t1000000000000000000\t0\t0\n",
    "columns.tsv": SWIM_ROW + "job1\t5\t5\n",
    "negative.tsv": "job0\t0\t0\t1000\t-5\t0\n",
    "text.tsv": "job0\tsoon\t0\t1000\t5\t0\n",
    "fraction.tsv": "job0\t0\t0\t1000.5\t5\t0\n",
    "empty.tsv": "\n\n",
    "bad.json": '{"jobID": 5}',
    "spec.txt": "scenario = 'synthetic-cloud'\n",
    "bad-scenario.toml": "scenario = 'nope'\nseeds = [1]\n",
    "bad-setting.toml": "scenario = 'flexslot'\nseeds = [1]\n[settings]\nhadoop.io_sort_mb = [900]\n",
    "nan.yaml": "scenario: synthetic-cloud\nseeds: [1]\nsettings:\n  duration_s: [.nan]\n",
    "no-seeds.toml": "scenario = 'synthetic-cloud'\n",
    "good.toml": "scenario = 'synthetic-cloud'\nseeds = [1]\n[settings]\nduration_s = [60]\n",
    "big-seed.toml": "scenario = 'synthetic-cloud'\nseeds = [9223372036854775808]\n",
    "missing-trace.toml": "scenario = 'trace-replay'\nseeds = [1]\n[settings]\ntrace = ['/no/such.tsv']\n",
    "bad-topology.toml": "scenario = 'trace-replay'\nseeds = [1]\n[settings]\ntopology = ['{in}/bad.json']\n",
    "twice.json": json.dumps({"name": "<root>", "children": [{"name": "r", "children": [{"name": "h1"}] * 2}]}),
    "huge-topology.json": json.dumps(
        {"name": "<root>", "children": [{"name": "r", "children": [{"name": f"h{i}"} for i in range(100_000)]}]}
    ),
}


@pytest.fixture(scope="module")
def inputs(tmp_path_factory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("bad-input")
    given = root / "in"
    given.mkdir()
    for name, content in INPUTS.items():
        content = content if isinstance(content, bytes) else content.replace("{in}", str(given)).encode()
        (given / name).write_bytes(content)
    run = root / "run"
    assert main(["run", "synthetic-cloud", "--set", QUICK, "--out", str(run), "--quiet"]) == 0
    truncated = given / "truncated-run"
    shutil.copytree(run, truncated)
    data = (truncated / "vm_trace.parquet").read_bytes()
    (truncated / "vm_trace.parquet").write_bytes(data[: len(data) // 2])
    foreign = given / "foreign-run"
    foreign.mkdir()
    pd.DataFrame({"when": [1.0], "who": ["x"]}).to_parquet(foreign / "vm_trace.parquet")
    return {"in": given, "run": run}


def test_the_table_covers_every_command_with_over_a_hundred_cases():
    assert len(CASES) >= 100
    assert {c.split()[0] for c, _ in CASES} >= {"run", "trace", "sweep", "reproduce", "dashboard", "show"}


@pytest.mark.parametrize(("command", "needle"), CASES, ids=[c for c, _ in CASES])
def test_bad_input_is_one_line_naming_the_field_exit_2_and_nothing_written(inputs, capsys, command, needle):
    given = inputs["in"]
    before = sorted(p.name for p in given.iterdir())
    args = command.format(**{"in": given, "run": inputs["run"]}).split()
    if args[0] == "run" and "--out" not in args:
        args += ["--out", str(given / "never")]
    with pytest.raises(SystemExit) as exited:  # argparse's own errors leave through sys.exit
        raise SystemExit(main([*args, "--quiet"] if args[0] in ("run", "sweep") else args))
    assert exited.value.code == 2
    err = capsys.readouterr().err
    assert err.startswith("vcloud: error: ") and err.count("\n") == 1, err
    assert needle in err and "Traceback" not in err
    assert sorted(p.name for p in given.iterdir()) == before  # no output, no temporary, nothing half-written
    assert not Path("/proc/vcloud").exists()


def test_documented_choices_and_paths_with_spaces_are_taken_as_written(tmp_path):
    """`--set` reads `drs.divvy=6.7` as the choice '6.7' (not the number), and a pair's value runs to the next KEY=."""
    from scenarios.registry import SCENARIOS
    from scenarios.settings import parse_pairs, validate

    flexslot = SCENARIOS["flexslot"].Settings
    given = parse_pairs(["drs.divvy=6.7 hadoop.heartbeat_formula=1.0", "scale=0.5"], flexslot)
    settings = validate(flexslot, given)
    assert (settings.drs.divvy, settings.hadoop.heartbeat_formula, settings.scale) == ("6.7", "1.0", 0.5)
    trace = tmp_path / "my traces" / "a trace.tsv"
    trace.parent.mkdir()
    trace.write_text(SWIM_ROW)
    replay = SCENARIOS["trace-replay"].Settings
    settings = validate(replay, parse_pairs([f"trace={trace} max_jobs=1"], replay))
    assert (settings.trace, settings.max_jobs) == (str(trace), 1)


@pytest.mark.parametrize("out", [".", ""])
def test_a_run_into_the_current_directory_is_refused_before_it_runs(tmp_path, monkeypatch, capsys, out):
    monkeypatch.chdir(tmp_path)
    assert main(["run", "synthetic-cloud", "--set", QUICK, "--out", out, "--quiet"]) == 2
    assert "holds the current directory" in capsys.readouterr().err
    assert list(tmp_path.iterdir()) == []


def _gone(pid: int) -> bool:
    """No such process, or only its zombie (an orphan reaped late by a container's init)."""
    try:
        return Path(f"/proc/{pid}/status").read_text().split("State:")[1].split()[0] == "Z"
    except (FileNotFoundError, IndexError):
        return True


def test_the_reports_workers_exit_when_its_process_is_killed():
    """`kill -9` of `vcloud reproduce` used to leave its forked workers running their runs for nobody."""
    import os
    import signal
    import subprocess
    import sys
    import time

    script = (
        "import multiprocessing, time\n"
        "from contextlib import ExitStack\n"
        "from scenarios import reproduce\n"
        "stack = ExitStack()\n"
        "submit = reproduce._backend(stack, 2, None)\n"
        "print(' '.join(str(p.pid) for p in multiprocessing.active_children()), flush=True)\n"
        "time.sleep(120)\n"
    )
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[1])}
    parent = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, text=True, env=env)
    workers: list[int] = []
    try:
        workers = [int(pid) for pid in parent.stdout.readline().split()]
        assert len(workers) == 2 and not any(_gone(pid) for pid in workers)
        parent.send_signal(signal.SIGKILL)
        parent.wait()
        deadline = time.monotonic() + 20
        while not all(_gone(pid) for pid in workers) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert all(_gone(pid) for pid in workers)
    finally:  # a failure leaves nothing behind
        parent.kill()
        for pid in workers:
            if not _gone(pid):
                os.kill(pid, signal.SIGKILL)


def test_a_table_piped_into_head_ends_without_a_traceback(inputs):
    import os
    import subprocess
    import sys

    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[1])}
    command = f"{sys.executable} -m scenarios.cli trace {inputs['run']} | head -c 10"
    done = subprocess.run(command, shell=True, capture_output=True, text=True, env=env, timeout=120)
    assert len(done.stdout) == 10 and done.stderr == ""
