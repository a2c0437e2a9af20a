"""FlexSlot Fig 10's setting: a second identical cluster, replayed from a stock run, shares the hosts."""

from scenarios.flexslot import FlexSlot
from scenarios.runner import run_model
from scenarios.settings import validate

SCENARIO = FlexSlot()


def run(**settings):
    model = SCENARIO.build(validate(SCENARIO.Settings, {"scale": 0.1, "allocator": "drs", **settings}), seed=3)
    run_model(model, SCENARIO.horizon_s(model), progress=False)
    model.check_hadoop_end()
    return model


def test_a_co_located_cluster_slows_the_job_and_stays_out_of_the_pool():
    alone, shared = run(), run(co_cluster=True)
    assert len(shared.vm_agents) == 64 and len(shared.pool_rows) == 32
    assert shared.hadoop_summary()["makespan_s"] > 1.2 * alone.hadoop_summary()["makespan_s"]
    trace = shared.vm_trace()
    neighbours = trace[trace.vm.str.startswith("co-slave")]
    assert neighbours.cpu_used_mhz.mean() > 500  # the replayed neighbour really ran
    # the job's maps are stolen from more with a neighbour on their hosts
    assert shared.hadoop_summary()["map_steal_s"] > 1.5 * alone.hadoop_summary()["map_steal_s"]


def test_the_neighbours_loads_are_one_stock_run_shared_by_every_slot_manager(monkeypatch):
    """The replayed neighbour is a stock run alone, whatever our cluster's slot manager: a process runs it once per
    (benchmark, cluster, seed) and gives each the same loads; another benchmark gets its own."""
    import scenarios.flexslot as fs

    fs._PILOTS.clear()
    pilots = []
    real = fs.run_pilot
    monkeypatch.setattr(fs, "run_pilot", lambda s, seed: pilots.append(s.slot_manager) or real(s, seed))
    settings = {"scale": 0.05, "allocator": "drs", "co_cluster": True}
    loads = [fs.co_cluster_loads(validate(SCENARIO.Settings, {**settings, "slot_manager": m}), 3)
             for m in ("none", "flexslot", "skewtune")]  # fmt: skip
    assert pilots == ["none"] and loads[0] is loads[1] is loads[2]
    fs._PILOTS.clear()
    assert fs.co_cluster_loads(validate(SCENARIO.Settings, {**settings, "slot_manager": "flexslot"}), 3) == loads[0]
    other = fs.co_cluster_loads(validate(SCENARIO.Settings, {**settings, "benchmark": "grep"}), 3)
    assert pilots == ["none"] * 3 and other != loads[0]


def test_the_report_hands_co_located_runs_the_loads_of_its_run_alone_and_runs_no_pilot(monkeypatch):
    """`vcloud reproduce` makes the stock run alone anyway: a co-located run is submitted once that run is back, with
    its loads (`loads_of`), so no worker runs the pilot; the co-located run is the one a pilot would have given."""
    import threading
    from concurrent.futures import Future

    import scenarios.flexslot as fs
    from scenarios.reproduce import Runs

    settings = {"benchmark": "grep", "allocator": "drs", "co_cluster": True}
    fs._PILOTS.clear()
    with_pilot = run(**settings)  # the pilot run here, as a worker used to
    fs._PILOTS.clear()
    submitted = []

    def submit(fn, *args):
        submitted.append((args[2].get("co_cluster", False), len(args) == 4))
        done = Future()
        done.set_result(fn(*args))
        fs._PILOTS.clear()  # each run in a fresh worker
        return done

    monkeypatch.setattr(fs, "run_pilot", lambda *a: (_ for _ in ()).throw(AssertionError("a pilot ran")))
    turn = threading.Lock()
    turn.acquire()
    runs = Runs(scale=0.1, submit=submit, turn=turn)
    runs.prefetch("flexslot", [{**settings, "slot_manager": m} for m in ("none", "skewtune")], seed=3)
    shared = runs.get("flexslot", seed=3, **settings, slot_manager="none")
    assert submitted == [(False, False), (True, True), (True, True)]  # the run alone, then both beside it
    assert shared.tasks.equals(with_pilot.tasks_frame())
    assert shared.vm_trace.equals(with_pilot.vm_trace())
    serial = Runs(scale=0.1)  # one process: the report's own run alone is the pilot too
    assert serial.get("flexslot", seed=3, **settings).tasks.equals(with_pilot.tasks_frame())
