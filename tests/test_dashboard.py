"""The dashboard's panel data (issue 17): what each panel shows for a small seeded run, checked against numbers worked
out by hand or read independently from the model's own frames (tasks_frame, jobs_frame, vm_trace)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from scenarios.cli import main
from scenarios.dashboard import charts, controls, figures, views
from scenarios.dashboard.controls import model_params
from scenarios.dashboard.models import DashboardModel, ReplayModel
from scenarios.dashboard.panels import heat_grid, read_run, replay_snapshot, summary_line
from scenarios.registry import SCENARIOS
from scenarios.runner import write_run
from scenarios.settings import validate

SMALL = {"scale": 0.05}


def _trace(rows: list[tuple]) -> pd.DataFrame:
    cols = ["time_s", "vm", "usr_s", "sys_s", "steal_s", "iowait_s", "idle_s"]
    return pd.DataFrame(rows, columns=cols).assign(vm=lambda f: f["vm"].astype("category"))


def test_heat_grid_gives_each_state_share_of_the_accounted_vcpu_time():
    # two VMs of 4 vCPUs over two 10 s samples: 40 vCPU-seconds each, split by hand
    trace = _trace([(10.0, "b", 10, 2, 8, 0, 20), (10.0, "a", 0, 0, 0, 40, 0),
                    (20.0, "b", 20, 0, 0, 0, 20), (20.0, "a", 4, 4, 16, 8, 8)])  # fmt: skip
    grid = heat_grid(trace)
    assert grid.vms == ["b", "a"]  # the trace's order, not the alphabet
    assert grid.times.tolist() == [10.0, 20.0]
    assert grid.shares["steal"].tolist() == [[0.2, 0.0], [0.0, 0.4]]
    assert grid.shares["usr+sys"].tolist() == [[0.3, 0.5], [0.0, 0.2]]
    assert grid.shares["iowait"].tolist() == [[0.0, 0.0], [1.0, 0.2]]
    assert grid.shares["idle"].tolist() == [[0.5, 0.5], [0.0, 0.2]]


def test_heat_grid_leaves_unaccounted_samples_blank():
    grid = heat_grid(_trace([(10.0, "a", 0, 0, 0, 0, 0), (10.0, "b", 1, 0, 0, 0, 3)]))
    assert np.isnan(grid.shares["steal"][0, 0]) and grid.shares["idle"][1, 0] == 0.75


@pytest.fixture(scope="module")
def mid_run():
    """A small flexslot run stepped to 120 s (mid-job), with its frames read from the model independently."""
    model = DashboardModel("flexslot", rng=3, chunk_s=30.0, scale=0.2)
    for _ in range(4):
        model.step()
    return model, model.snapshot(), model.sim.tasks_frame(), model.sim.vm_trace()


def test_node_panel_counts_running_and_finished_tasks_as_the_tasks_frame_does(mid_run):
    _, snap, tasks, _ = mid_run
    nodes = snap.nodes.set_index("node")
    running = tasks[tasks["end_s"].isna() & tasks["start_s"].notna()]
    done = tasks[tasks["state"] == "done"]
    for kind, col in (("m", "running_maps"), ("r", "running_reduces")):
        expect = running[running["kind"] == kind].groupby("vm").size()
        assert nodes[col].to_dict() == {n: int(expect.get(n, 0)) for n in nodes.index}
    expect = done[done["kind"] == "m"].groupby("vm").size()
    assert nodes["maps_done"].to_dict() == {n: int(expect.get(n, 0)) for n in nodes.index}
    assert nodes["maps_done"].sum() > 0 and nodes["running_maps"].sum() > 0  # mid-job: both show something
    assert set(nodes["map_slots"]) == {4} and set(nodes["reduce_slots"]) == {2}  # the FlexSlot testbed's slots


def test_job_panel_counts_tasks_of_each_kind(mid_run):
    model, snap, tasks, _ = mid_run
    job = snap.jobs.iloc[0]
    maps = tasks[tasks["kind"] == "m"]
    assert job["state"] == "running" and job["elapsed_s"] == 120.0
    assert job["maps_done"] == maps[maps["state"] == "done"]["task"].nunique()
    assert job["maps_running"] == int((maps["end_s"].isna() & maps["start_s"].notna()).sum())
    assert job["maps"] == model.sim.jobs_frame()["maps"].iloc[0]


def test_map_runtime_cdf_holds_the_finished_maps(mid_run):
    _, snap, tasks, _ = mid_run
    done = tasks[(tasks["kind"] == "m") & (tasks["state"] == "done")]
    assert np.allclose(np.sort(snap.map_runtimes), np.sort((done["end_s"] - done["start_s"]).to_numpy()))


def test_vm_panel_reads_the_vm_table_and_the_heat_map_reads_the_trace(mid_run):
    model, snap, _, trace = mid_run
    vms = model.sim.vms
    assert list(snap.vms.index) == [v.name for v in model.sim.vm_agents]
    assert np.array_equal(snap.vms["entitlement"], vms.view("cpu_entitlement_mhz"))
    assert np.array_equal(snap.vms["resident"], vms.view("mem_used_mb"))
    assert np.array_equal(snap.vms["page cache"], vms.view("cache_mb"))  # the guest page cache (vcloud/pagecache.py)
    assert np.array_equal(snap.vms["dirty"], vms.view("dirty_mb"))
    assert np.array_equal(snap.vms["balloon"], vms.view("balloon_mb"))  # ESX ballooning (vcloud/memory.py)
    grid = heat_grid(snap.trace)
    assert grid.times.tolist() == sorted(trace["time_s"].unique()) == [10.0 * k for k in range(1, 13)]
    row = trace[(trace["vm"] == "slave03") & (trace["time_s"] == 60.0)].iloc[0]
    total = row[["usr_s", "sys_s", "steal_s", "iowait_s", "idle_s"]].sum()
    assert grid.shares["steal"][grid.vms.index("slave03"), 5] == pytest.approx(row["steal_s"] / total)


def test_summary_line_names_time_makespan_kills_speculation_and_skewness(mid_run):
    _, snap, tasks, _ = mid_run
    line = summary_line(snap)
    assert line.startswith("t = 120 s · makespan so far 120 s · ")
    assert f"kills {int((tasks['state'] == 'killed').sum())}" in line
    assert f"speculative attempts {int(tasks['speculative'].sum())}" in line
    assert f"maps finished {len(snap.map_runtimes)}" in line and "jobs done 0/1" in line


@pytest.fixture(scope="module")
def finished(tmp_path_factory):
    """A small flexslot run to its end, written as `vcloud run` writes it."""
    model = DashboardModel("flexslot", rng=5, chunk_s=30.0, speculation="late", scale=0.1)
    mid = None
    while model.running:
        model.step()
        if model.sim.time == 60.0:
            mid = model.snapshot()
    out = tmp_path_factory.mktemp("dash") / "run"
    config = {"scenario": "flexslot", "seed": 5, "settings": model.settings.model_dump(mode="json")}
    write_run(out, model.named_scenario.summary(model.sim), config, model.frames())
    return model, mid, out


def test_finished_run_summary_matches_the_run_summary(finished):
    model, _, _ = finished
    snap, summary = model.snapshot(), model.named_scenario.summary(model.sim)
    assert snap.finished and snap.makespan_s == pytest.approx(summary["makespan_s"])
    assert snap.skewness == pytest.approx(summary["map_runtime_skewness"])
    assert (snap.kills, snap.speculative) == (summary["killed_attempts"], summary["speculative_attempts"])
    assert snap.nodes.set_index("node")["maps_done"].to_dict() == summary["maps_per_node"]


def test_replay_of_a_run_directory_shows_what_the_live_model_showed(finished):
    model, mid, out = finished
    frames = read_run(out)
    for t, live in ((60.0, mid), (model.sim.time, model.snapshot())):
        replay = replay_snapshot(frames, t)
        cols = ["running_maps", "running_reduces", "maps_done", "reduces_done"]
        pd.testing.assert_frame_equal(replay.nodes[["node", *cols]], live.nodes[["node", *cols]])
        assert np.allclose(np.sort(replay.map_runtimes), np.sort(live.map_runtimes))
        assert (replay.kills, replay.speculative, replay.makespan_s) == (live.kills, live.speculative, live.makespan_s)
        jobs = ["maps_done", "maps_running", "reduces_done", "reduces_running", "state", "elapsed_s"]
        pd.testing.assert_frame_equal(replay.jobs[jobs], live.jobs[jobs])
        assert np.array_equal(heat_grid(replay.trace).shares["iowait"], heat_grid(live.trace).shares["iowait"],
                              equal_nan=True)  # fmt: skip


def test_an_attempt_ended_on_its_node_but_not_yet_heard_of_counts_as_ended_in_every_panel(tmp_path):
    # the JobTracker hears of an attempt's end at its tracker's next heartbeat (hadoop.outofband_heartbeat=false):
    # until then it holds its slot and is no ended attempts' row. Stepped a second at a time, some steps end in that
    # window: the live panels count it as the tasks table does (ended at its end_s, in the state its report will
    # record: failed for a failing one), and as the replay of the run directory shows it then
    failing = {"hadoop.task_failure_probability": 0.3}
    model = DashboardModel("flexslot", rng=5, chunk_s=1.0, speculation="late", scale=0.1, **failing)
    seen, states = [], set()
    while model.running:
        model.step()
        unheard = [a for a in model.sim.running_attempts() if a.end_s is not None]
        if not unheard:
            continue
        assert all(a.state == "done" for a in unheard)  # the cloud's state till the report
        snap, tasks = model.snapshot(), model.sim.tasks_frame()
        states |= set(tasks[tasks["attempt"].isin([a.name for a in unheard])]["state"])
        nodes = snap.nodes.set_index("node")
        running = tasks[tasks["end_s"].isna() & tasks["start_s"].notna()]
        done = tasks[tasks["state"] == "done"]
        for kind, col, finished in (("m", "running_maps", "maps_done"), ("r", "running_reduces", "reduces_done")):
            expect = running[running["kind"] == kind].groupby("vm").size()
            assert nodes[col].to_dict() == {n: int(expect.get(n, 0)) for n in nodes.index}
            expect = done[done["kind"] == kind].groupby("vm").size()
            assert nodes[finished].to_dict() == {n: int(expect.get(n, 0)) for n in nodes.index}
        maps = done[done["kind"] == "m"]
        assert np.allclose(np.sort(snap.map_runtimes), np.sort((maps["end_s"] - maps["start_s"]).to_numpy()))
        seen.append((float(model.sim.time), snap))
    assert len(seen) > 5 and states == {"done", "failed"}
    out = tmp_path / "run"
    config = {"scenario": "flexslot", "seed": 5, "settings": model.settings.model_dump(mode="json")}
    write_run(out, model.named_scenario.summary(model.sim), config, model.frames())
    frames = read_run(out)
    for t, live in seen:
        replay = replay_snapshot(frames, t)
        cols = ["node", "running_maps", "running_reduces", "maps_done", "reduces_done"]
        pd.testing.assert_frame_equal(replay.nodes[cols], live.nodes[cols])
        assert np.allclose(np.sort(replay.map_runtimes), np.sort(live.map_runtimes))
        assert (replay.kills, replay.speculative, replay.makespan_s) == (live.kills, live.speculative, live.makespan_s)
        jobs = ["maps_done", "maps_running", "reduces_done", "reduces_running", "state", "elapsed_s"]
        pd.testing.assert_frame_equal(replay.jobs[jobs], live.jobs[jobs])


def test_replay_shows_memory_columns_the_trace_has(finished):
    _, _, out = finished
    frames = read_run(out)
    frames.trace = frames.trace.assign(cache_mb=512.0, balloon_mb=0.0)  # as the cloud will record them
    vms = replay_snapshot(frames, 60.0).vms
    assert {"page cache", "balloon", "granted", "active", "swap"} <= set(vms.columns)
    assert (vms["page cache"] == 512.0).all()


def test_replay_model_steps_through_the_run_and_stops_at_its_end(finished):
    _, _, out = finished
    at_end = ReplayModel(str(out), chunk_s=100.0)  # --run opens on the finished run
    assert at_end.t == at_end.end_s and not at_end.running and at_end.snapshot().finished
    replay = ReplayModel(str(out), chunk_s=100.0, at_end=False)  # Reset: from the start
    start = replay.snapshot().vms
    assert len(start) == 32 and (start.to_numpy() == 0).all()  # before the first sample: every VM, at zero
    replay.step()
    assert replay.t == 100.0 and replay.running
    replay.seek(1e9)
    assert replay.t == replay.end_s and not replay.running
    assert replay.snapshot().finished


def test_panels_update_in_place_as_the_model_steps():
    model = DashboardModel("flexslot", rng=2, chunk_s=30.0, **SMALL)
    model.step()
    panels = {k: P(model.snapshot()) for k, P in figures.PANELS.items()}
    before = panels["heat map"].images["steal"].get_array().shape
    model.step()
    snap = model.snapshot()
    for panel in panels.values():
        panel.update(snap)
        assert figures.png(panel.fig).startswith(b"\x89PNG")
    assert before == (32, 3) and panels["heat map"].images["steal"].get_array().shape == (32, 6)
    heights = [r.get_height() for r in panels["nodes"].done_maps]
    assert heights == snap.nodes["maps_done"].tolist()


def test_controls_come_from_the_settings_with_their_choices_and_bounds():
    s = SCENARIOS["flexslot"]
    given = {"hadoop.io_sort_mb": 150, "trace_interval_s": 5}
    params = model_params("flexslot", validate(s.Settings, given), given, seed=4)
    assert params["scenario_name"] == "flexslot" and params["rng"]["value"] == "4"
    assert params["allocator"] == {"type": "Select", "value": "drs", "values": ["static", "heterogeneous", "drs"],
                                   "label": "allocator"}  # fmt: skip
    assert params["scale"]["type"] == "SliderFloat" and params["scale"]["min"] > 0 and params["scale"]["max"] == 10
    assert params["skew_sched"]["type"] == "Checkbox"
    assert params["hadoop__io_sort_mb"]["value"] == "150.0"  # given with --set: its value
    assert params["trace_interval_s"]["type"] == "InputText"  # not primary, but given: a control too
    values = {k: (v["value"] if isinstance(v, dict) else v) for k, v in params.items()}
    model = DashboardModel(**{**values, "allocator": "static", "scale": 0.05})  # Reset: the controls' values
    assert (model.settings.allocator, model.settings.hadoop.io_sort_mb, model.seed) == ("static", 150.0, 4)
    assert model.settings.trace_interval_s == 5.0


def test_a_bad_combination_of_controls_shows_an_error_instead_of_a_model():
    model = DashboardModel("flexslot", rng="1", skew_sched=True, allocator="drs")
    assert not model.running and model.sim is None
    assert "skew_sched=true needs allocator=heterogeneous" in summary_line(model.snapshot())
    assert "not a whole number" in DashboardModel("flexslot", rng="x").error


def test_dashboard_command_refuses_bad_input_before_serving(tmp_path, capsys):
    assert main(["dashboard", "flexslot", "--set", "scale=-1"]) == 2
    assert main(["dashboard", "nope"]) == 2
    assert main(["dashboard", "--run", str(tmp_path / "missing")]) == 2
    assert main(["dashboard", "--step-s", "0"]) == 2
    assert "scale=-1" in capsys.readouterr().err


def test_the_server_prints_no_cookie_warning_per_page_load(tmp_path):
    """Solara warned in 12 lines on every page load of http://127.0.0.1 (issue 43's audit)."""
    import socket
    import subprocess
    import time
    import urllib.request

    from scenarios.dashboard.serve import dashboard_config, server_command, server_env

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    config = dashboard_config("synthetic-cloud", {}, 1, 30.0)
    with (tmp_path / "server.log").open("w") as log:
        server = subprocess.Popen(server_command(port), env=server_env(config), stdout=log, stderr=subprocess.STDOUT)
        try:
            deadline, loads = time.monotonic() + 90, 0
            while loads < 2:
                try:
                    urllib.request.urlopen(f"http://127.0.0.1:{port}/", timeout=5).close()
                    loads += 1
                except OSError:
                    assert server.poll() is None and time.monotonic() < deadline, "the dashboard did not start"
                    time.sleep(0.3)
        finally:
            server.terminate()
            server.wait(timeout=20)
    text = (tmp_path / "server.log").read_text()
    assert "samesite" not in text and "Traceback" not in text, text[-2000:]


# ---- issue 42: the Vega-Lite panels' data, the controls shown, names cleaned ------------------------------------
def test_names_lose_rumen_escapes_and_their_shared_domain():
    names = ["cluster50213\\.secondleveldomain\\.com", "cluster1004\\.secondleveldomain\\.com"]
    assert views.clean_names(names) == ["cluster50213", "cluster1004"]
    assert views.clean_names(["slave00", "a.b"]) == ["slave00", "a.b"]


def test_large_clusters_are_grouped_into_consecutive_rows():
    groups = views.group_rows([f"vm{i:03d}" for i in range(100)], max_rows=48)
    assert len(groups.labels) == 34 and groups.grouped  # groups of 3
    assert groups.labels[0] == "vm000 … vm002 (3)" and groups.labels[-1] == "vm099 … vm099 (1)"
    assert groups.of.tolist()[:7] == [0, 0, 0, 1, 1, 1, 2]


def test_trace_grid_sums_a_groups_seconds_and_finds_redivisions():
    trace = _trace([(10.0, "b", 10, 2, 8, 0, 20), (10.0, "a", 0, 0, 0, 40, 0),
                    (20.0, "b", 20, 0, 0, 0, 20), (20.0, "a", 4, 4, 16, 8, 8)])  # fmt: skip
    trace = trace.assign(cpu_demand_mhz=1000.0, cpu_entitlement_mhz=[800.0, 800.0, 800.0, 1500.0],
                         cpu_used_mhz=500.0, mem_granted_mb=1024.0)  # fmt: skip
    grid = views.TraceGrid.of(["a", "b"])
    assert grid.add(trace[trace["time_s"] == 10.0]) == 1 and grid.add(trace) == 1  # only the new sample is read
    heat = views.heat_rows(grid, 1, 10.0).set_index(["row", "b", "metric"])["share"]
    assert heat[("b", 0, "steal")] == 0.2 and heat[("a", 1, "steal")] == 0.4 and heat[("a", 0, "iowait")] == 1.0
    assert grid.redivisions == [(20.0, 1, 700.0)]  # vm a's entitlement moved 800 -> 1500 MHz
    series = views.series_rows(grid, 1, 10.0, 0, None).set_index(["b", "series"])["value"]
    assert series[(0, "used")] == 1.0 and series[(0, "granted")] == 2.0  # GHz, GB summed over VMs
    assert series[(1, "steal")] == pytest.approx(16 / 80)  # the cluster's share: seconds over seconds
    grid2 = views.TraceGrid.of(["a", "b"])
    grid2.add(trace)
    merged = views.heat_rows(grid2, 2, 10.0).set_index(["row", "metric"])["share"]  # one bin of two samples
    assert merged[("a", "steal")] == pytest.approx(16 / 80) and merged[("b", "usr+sys")] == pytest.approx(32 / 80)


def test_running_at_counts_attempts_started_and_not_ended():
    tasks = pd.DataFrame({"kind": ["m", "m", "r"], "start_s": [0.0, 5.0, 8.0], "end_s": [10.0, np.nan, 20.0]})
    run = views.running_at(tasks, np.array([4.0, 9.0, 10.0, 25.0]))
    assert run["maps"].tolist() == [1, 2, 1, 1] and run["reduces"].tolist() == [0, 1, 1, 0]


def test_board_sends_only_the_new_bins_after_a_step():
    model = DashboardModel("flexslot", rng=2, chunk_s=30.0, **SMALL)
    model.step()
    board = charts.Board(model.snapshot())
    heat = board.charts["heat map"]
    assert heat.has_data and len(heat.data["heat"]) == 32 * 3 * 4  # 32 VMs x 3 samples x 4 states
    model.step()
    board.update(model.snapshot())
    (op,) = heat.patch["ops"]
    assert op["remove"] == {"field": "b", "value": 3, "cmp": "ge"} and len(op["rows"]) == 32 * 3 * 4
    assert heat.patch["base"] == heat.patch["seq"] - 1
    nodes = board.charts["nodes"].data["nodes"]
    snap = model.snapshot().nodes
    assert nodes[nodes["kind"] == "maps"]["running"].tolist() == snap["running_maps"].tolist()
    assert set(board.charts) == {"cluster", "heat map", "hosts", "memory", "nodes", "timeline"}  # FIFO: no shares
    gantt = board.charts["timeline"].data["gantt"]
    assert len(gantt) == model.snapshot().tasks["start_s"].notna().sum()


def test_controls_show_only_the_selected_policies_knobs():
    settings = SCENARIOS["flexslot"].Settings
    values = {"scheduler": "fifo", "speculation": "hadoop", "slot_manager": "none", "allocator": "drs"}
    keys = [c.key for c in controls.visible_keys("flexslot", settings, values, {})]
    assert keys[:2] == ["seed", "chunk_s"] and "drs.period_s" in keys
    assert not [k for k in keys if k.startswith(("fair.", "late.", "flexslot."))]
    keys = [c.key for c in controls.visible_keys("flexslot", settings, {**values, "scheduler": "fair"}, {})]
    assert "fair.delay_scheduling" in keys
    period = next(c for c in controls.visible_keys("flexslot", settings, values, {}) if c.key == "drs.period_s")
    assert period.help == "how often the pool is re-divided"


def test_a_trace_replay_run_directory_gives_the_slots_the_run_used(finished):
    _, _, out = finished
    frames = read_run(out)
    assert frames.slots() == (4, 2)  # the settings' slots when the summary does not say otherwise
    frames.summary = {"slots": {"map": 2, "reduce": 1}}  # as trace-replay writes it
    nodes = replay_snapshot(frames, 60.0).nodes
    assert set(nodes["map_slots"]) == {2} and set(nodes["reduce_slots"]) == {1}


def test_a_live_snapshots_tasks_are_the_tasks_frame_built_a_step_at_a_time():
    """Rows of ended attempts are made once and kept; each step adds those that ended and remakes the running ones."""
    model = DashboardModel("flexslot", rng=2, chunk_s=30.0, **SMALL)
    kept = []
    for _ in range(5):
        model.step()
        tasks = model.snapshot().tasks
        full = model.sim.tasks_frame()
        assert tasks["end_s"].isna().any() or not model.running
        pd.testing.assert_frame_equal(tasks.sort_values("attempt", ignore_index=True),
                                      full.sort_values("attempt", ignore_index=True), check_dtype=False)  # fmt: skip
        kept.append(len(model.ledger.ended_rows))
    assert kept == sorted(kept) and kept[-1] > kept[0]


def test_the_series_of_a_step_are_the_means_of_its_new_bins():
    grid = views.TraceGrid.of(["a", "b"])
    rows = [(t, vm, 5.0, 0.0, 3.0, 2.0, 10.0) for t in (10.0, 20.0, 30.0, 40.0, 50.0) for vm in ("a", "b")]
    trace = _trace(rows).assign(cpu_demand_mhz=[100.0 * i for i in range(10)], cpu_entitlement_mhz=1000.0,
                                cpu_used_mhz=500.0)  # fmt: skip
    grid.add(trace)
    running = pd.DataFrame({"maps": [1.0, 3.0, np.nan, 4.0, 6.0], "reduces": 0.0})
    rows = views.series_rows(grid, factor=2, interval_s=10.0, from_bin=1, running=running, pool_ghz=2.0)
    demand = rows[rows["series"] == "demand"]
    # bins of 2 samples from bin 1: samples 3-4 (t=30, 40) and the open bin of sample 5 (t=50); a sample sums 2 VMs
    assert demand["b"].tolist() == [1, 2] and demand["value"].tolist() == pytest.approx([1.1, 1.7])  # (0.9+1.3)/2
    maps = rows[rows["series"] == "maps"]
    assert maps["value"].tolist() == [4.0, 6.0]  # NaN skipped, as a mean of what was counted
    assert rows.loc[rows["series"] == "pool capacity", "value"].tolist() == [2.0, 2.0]
    assert rows[rows["series"] == "steal"]["value"].tolist() == pytest.approx([0.15, 0.15])


def test_a_charts_datasets_follow_its_changes_when_read():
    """The changes are sent at once and applied to the datasets (what a resync sends) when these are read."""
    from scenarios.dashboard.vega import LiveChart

    chart = LiveChart({}, ["s"], "x")
    assert not chart.has_data
    chart.set("s", pd.DataFrame({"b": [0, 1, 2], "v": [1.0, 2.0, 3.0]}))
    chart.upsert("s", pd.DataFrame({"b": [2, 3], "v": [4.0, 5.0]}), "b", 2)
    assert chart.has_data and [len(op["rows"]) for op in chart.ops] == [3, 2]
    assert chart.data["s"]["v"].tolist() == [1.0, 2.0, 4.0, 5.0]
    chart.upsert("s", pd.DataFrame({"b": [], "v": []}), "b", 0)  # every row removed, none added
    assert not chart.has_data and chart.data["s"].empty
    gantt = LiveChart({}, ["g"], "y")
    gantt.set("g", pd.DataFrame({"a": ["x", "y"], "open": [False, True]}))
    gantt.upsert_open("g", pd.DataFrame({"a": ["y", "z"], "open": [False, True]}), "open")
    assert gantt.data["g"]["a"].tolist() == ["x", "y", "z"] and gantt.data["g"]["open"].tolist() == [False, False, True]
    for i in range(LiveChart.MAX_PENDING):  # a page never resynced: the changes are applied every MAX_PENDING
        gantt.upsert_open("g", pd.DataFrame({"a": [f"r{i}"], "open": [True]}), "open")
    assert not gantt._pending and gantt._data["g"]["a"].tolist() == ["x", "y", f"r{LiveChart.MAX_PENDING - 1}"]


def test_the_timeline_and_event_log_built_a_step_at_a_time_are_those_drawn_whole():
    model = DashboardModel("flexslot", rng=2, chunk_s=20.0, **SMALL)
    model.step()
    board = charts.Board(model.snapshot())
    for _ in range(4):
        model.step()
        board.update(model.snapshot())
        snap = model.snapshot()
        whole, _ = views.gantt_rows(snap.tasks, snap.time_s)
        drawn = board.charts["timeline"].data["gantt"]
        assert board.gantt_all and len(drawn) == len(whole)
        pd.testing.assert_frame_equal(drawn.sort_values("attempt", ignore_index=True),
                                      whole.sort_values("attempt", ignore_index=True), check_dtype=False)  # fmt: skip
        log = views.event_rows(snap.tasks, snap.time_s, board.grid.redivisions, board.slot_events)
        pd.testing.assert_frame_equal(board.events(snap), log)  # the attempts' events read a step at a time
