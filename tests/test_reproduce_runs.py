"""`vcloud reproduce`'s run cache (`Runs`): it keeps what the entries read of a run, not the model, and hands a
Heter. cluster the "Homo." run the report makes anyway instead of letting the run make its own pilot."""

import gc
import pickle
import threading
from concurrent.futures import Future

import pytest

from hadoop_layer.model import HadoopModel
from scenarios import reproduce
from scenarios.finished import Finished
from scenarios.flexslot import FlexSlot
from scenarios.reproduce import Runs
from scenarios.runner import run_model
from scenarios.settings import validate


def _models_alive() -> int:
    gc.collect()  # a model's agents refer to it: cycles
    return sum(isinstance(o, HadoopModel) for o in gc.get_objects())


def test_the_report_keeps_no_model_after_a_figure():
    """The full report held every model it made (5.3 GB); an entry's runs are now `Finished` records, and no model
    outlives its run, in the report's process (`--processes 1`) as in a worker."""
    before = _models_alive()
    runs = Runs(scale=0.05, quick=True)
    text, _, fig = reproduce.fig3(runs)
    assert "skewness" in text and fig is not None
    assert len(runs._done) == 2 and all(isinstance(f, Finished) for f in runs._done.values())
    assert _models_alive() == before
    static = runs.get("flexslot", allocator="static")
    assert len(pickle.dumps(static)) < 2_000_000  # what a worker sends back: ~1 MB at full scale, not ~40 MB
    assert static.cpu_s > 0 and static.pilot_maps is not None  # a static run can shape a Heter. cluster


def _run_here(submitted: list):
    """A `submit` that runs each run at once in this process, as a fresh worker would (no pilot kept over)."""
    import scenarios.flexslot as fs

    def submit(fn, *args):
        submitted.append((args[2], len(args) == 4))
        done = Future()
        fs._PILOTS.clear()
        done.set_result(fn(*args))
        return done

    return submit


@pytest.mark.parametrize("skew_sched", [False, True])
def test_a_heterogeneous_run_is_handed_the_reports_static_run_and_gives_the_tables_of_its_own_pilot(
    monkeypatch, skew_sched
):
    """Table 1's Heter. clusters are planned from a "Homo." run, which the report makes anyway: the report submits
    them once that run is back, with its maps, so no worker runs the pilot; the tables are those of a run that made
    its own pilot (`vcloud run flexslot --set allocator=heterogeneous`)."""
    import scenarios.flexslot as fs

    heter = {"allocator": "heterogeneous", "skew_sched": skew_sched}
    scenario = FlexSlot()
    fs._PILOTS.clear()
    own = scenario.build(validate(scenario.Settings, {"scale": 0.05, **heter}), seed=2)  # runs its own pilot
    run_model(own, scenario.horizon_s(own), progress=False)

    monkeypatch.setattr(fs, "run_pilot", lambda *a: (_ for _ in ()).throw(AssertionError("a pilot ran")))
    submitted: list = []
    turn = threading.Lock()
    turn.acquire()
    runs = Runs(scale=0.05, seed=2, submit=_run_here(submitted), turn=turn)
    runs.prefetch("flexslot", [heter])
    handed = runs.get("flexslot", **heter)
    assert [(s["allocator"], with_pilot) for s, with_pilot in submitted] == [("static", False), ("heterogeneous", True)]
    assert handed.tasks.equals(own.tasks_frame())
    assert handed.vm_trace.equals(own.vm_trace())
    assert handed.settings.heterogeneous.cpu_mhz == own.settings.heterogeneous.cpu_mhz

    serial = Runs(scale=0.05, seed=2)  # one process: the report's static run is handed over too
    assert serial.get("flexslot", **heter).tasks.equals(own.tasks_frame())


def test_the_pool_is_handed_the_longest_waiting_run_first_and_every_outcome_reaches_its_waiter():
    """On 2 workers a long run started last leaves the other worker idle at the end: `LongestFirst` keeps the runs
    until a worker is free and then starts the longest waiting (`cost_hint`); a refused submission (a broken pool)
    fails that run's future instead of leaving its waiter waiting, and the next runs still start."""
    from scenarios.reproduce import LongestFirst, cost_hint

    started: list[tuple[str, Future]] = []

    def submit(fn, scenario, seed, settings):
        if settings.get("refuse"):
            raise RuntimeError("pool broken")
        started.append((scenario, Future()))
        return started[-1][1]

    feeder = LongestFirst(submit, workers=1)
    asks = [("capacity-queues", {}), ("coupling-two-grep", {"refuse": True}), ("flexslot", {"scale": 1.0}),
            ("coupling-200-jobs", {}), ("delay-scheduling", {"scale": 1.0})]  # fmt: skip
    futures = [feeder.submit(reproduce.run, scenario, 1, settings) for scenario, settings in asks]
    assert [s for s, _ in started] == ["capacity-queues"]  # one worker: the rest wait
    for _ in range(4):
        started[-1][1].set_result(f"{started[-1][0]} done")
    assert [s for s, _ in started] == ["capacity-queues", "coupling-200-jobs", "delay-scheduling", "flexslot"]
    with pytest.raises(RuntimeError, match="pool broken"):  # the shortest came last, and was refused
        futures[1].result(timeout=1)
    assert [f.result(timeout=1) for f in (futures[0], futures[2], futures[3], futures[4])] == [
        "capacity-queues done", "flexslot done", "coupling-200-jobs done", "delay-scheduling done"]  # fmt: skip
    assert cost_hint("flexslot", {"scale": 0.25}) < cost_hint("flexslot", {"scale": 1.0, "co_cluster": True})
