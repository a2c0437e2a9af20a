"""SkewTune: the water-filling plan worked out by hand, the 2-omega rule, and the repartition mechanism end to end."""

import numpy as np
import pytest
from pydantic import ValidationError
from scipy.stats import skew

from hadoop_layer.hdfs import Locality
from hadoop_layer.interfaces import Repartition
from hadoop_layer.model import HadoopModel
from hadoop_layer.tasks import TaskKind
from policies.registry import build
from policies.schedulers import SCHEDULERS
from policies.slots import SLOT_MANAGERS
from policies.slots.skewtune import SkewTuneManager, SkewTuneSettings, movable_s, plan_pieces, water_fill
from policies.speculation import SPECULATION
from scenarios.hadoop_base import HadoopClusterSettings
from tests.helpers import former_job_counts, skewed_job, small_cluster


# ---- the plan, by hand ------------------------------------------------------------------------------------
def test_water_filling_finishes_all_pieces_together():
    # slots free at 0, 10, 20 s and 90 s of work: T + (T - 10) + (T - 20) = 90 -> T* = 40
    assert water_fill(np.array([20.0, 0.0, 10.0]), 90.0) == (pytest.approx(40.0), 3)
    assert plan_pieces(np.array([20.0, 0.0, 10.0]), 90.0) == pytest.approx([40.0, 30.0, 20.0])


def test_a_slot_free_only_after_the_finish_time_gets_nothing():
    # 30 s of work, slots at 0, 10, 100: two slots finish at (30 + 0 + 10) / 2 = 20 < 100
    assert plan_pieces(np.array([0.0, 10.0, 100.0]), 30.0) == pytest.approx([20.0, 10.0])
    assert plan_pieces(np.array([0.0, np.inf, 10.0]), 30.0) == pytest.approx([20.0, 10.0])


def test_start_up_floors_availability():
    # STARTUP 10 s: slots at 0, 10, 20 count as 10, 10, 20: 3T - 40 = 90 -> T* = 130/3
    t = 130.0 / 3.0
    assert plan_pieces(np.array([0.0, 10.0, 20.0]), 90.0, start_s=10.0) == pytest.approx([t - 10, t - 10, t - 20])


def test_pieces_below_one_unit_are_dropped_and_the_rest_replanned():
    # 60 s over slots at 0, 0, 29: T* = 89/3 = 29.67 leaves 0.67 s for the third; without it, 30 + 30
    assert plan_pieces(np.array([0.0, 0.0, 29.0]), 60.0) == pytest.approx([89 / 3, 89 / 3, 89 / 3 - 29])
    assert plan_pieces(np.array([0.0, 0.0, 29.0]), 60.0, min_piece_s=1.0) == pytest.approx([30.0, 30.0])
    assert plan_pieces(np.zeros(5), 60.0, max_pieces=3) == pytest.approx([20.0, 20.0, 20.0])


def test_settings_are_checked():
    with pytest.raises(ValidationError, match="repartition_overhead_s"):
        SkewTuneSettings(repartition_overhead_s=-1)
    with pytest.raises(ValidationError, match="extra"):
        SkewTuneSettings(omega=30)


# ---- a skewed job on a small cluster ------------------------------------------------------------------------
def cluster(slot_manager=None, scheduler=None, speculation=None, slaves=3, racks=1) -> HadoopModel:
    """`slaves` VMs of 2 vCPUs with 2 map slots each, one per host; FIFO unless told (`small_cluster`)."""
    return small_cluster(slaves, racks, speculation, scheduler=scheduler, slot_manager=slot_manager)


def map_runtimes(model: HadoopModel) -> np.ndarray:
    return np.array([a.runtime_s for a in model.attempts() if a.task.kind == TaskKind.MAP and a.state == "done"])


def run(model: HadoopModel) -> HadoopModel:
    model.run_until(3000.0)
    model.check_hadoop_end()
    return model


def test_skewtune_shortens_a_skewed_job_and_its_map_skew():
    stock = run(_with_job(cluster()))
    tuned = run(_with_job(cluster(SkewTuneManager())))
    job, stock_job = tuned.jobtracker.jobs[0], stock.jobtracker.jobs[0]
    assert job.state == stock_job.state == "succeeded"
    big = job.maps[0]
    assert big.children, "the big split was repartitioned"
    assert len(job.maps) == 12 + len(big.children)
    # input conserved: the kept range and the pieces tile the 640 MB split, in order
    assert big.input_mb + sum(p.input_mb for p in big.children) == pytest.approx(640.0)
    assert [p.offset_mb for p in big.children] == pytest.approx(
        big.input_mb + np.concatenate([[0.0], np.cumsum([p.input_mb for p in big.children])[:-1]])
    )
    # the reduce waited for every piece's output: its input is the whole map output
    assert job.reduces[0].end_s > max(t.end_s for t in job.maps)
    assert job.reduces[0].input_mb == pytest.approx(sum(t.output_mb_final for t in job.maps))
    assert job.reduces[0].input_mb == pytest.approx(stock_job.reduces[0].input_mb)
    assert job.end_s < 0.8 * stock_job.end_s
    tuned_skew, stock_skew = skew(map_runtimes(tuned)), skew(map_runtimes(stock))
    assert tuned_skew < stock_skew - 0.5
    assert map_runtimes(tuned).max() < 0.6 * map_runtimes(stock).max()


def _with_job(model: HadoopModel) -> HadoopModel:
    skewed_job(model)
    return model


def alone_at(t: float, **settings):
    """The skewed job without SkewTune until `t` s (the small maps are done by then), and a SkewTune to ask."""
    model = run_until(_with_job(cluster()), t)
    return model, SkewTuneManager(SkewTuneSettings(**settings)), model.jobtracker.jobs[0].maps[0].active[0]


def run_until(model: HadoopModel, t: float) -> HadoopModel:
    model.run_until(t)
    return model


def test_no_repartition_unless_the_remaining_time_exceeds_twice_the_overhead():
    model, _, straggler = alone_at(70.0)
    view = model.jobtracker.view
    assert model.jobtracker.jobs[0].pending_maps == 0 and view.running(TaskKind.MAP) == 1
    work = movable_s(straggler, view.now)
    assert 60.0 < work < 1000.0
    assert SkewTuneManager(SkewTuneSettings(repartition_overhead_s=0.505 * work)).mitigate(view) == []
    actions = SkewTuneManager(SkewTuneSettings(repartition_overhead_s=0.495 * work)).mitigate(view)
    assert len(actions) == 1 and actions[0].attempt is straggler
    # 6 map slots, 5 idle: at most capacity - 1 = 5 pieces; all slots free before the start-up ends -> equal pieces
    assert actions[0].shares == pytest.approx([0.2] * 5)
    assert SkewTuneManager(SkewTuneSettings(min_elapsed_s=71.0)).mitigate(view) == []


def test_repartition_stops_a_map_at_its_offset_and_queues_contiguous_pieces_in_the_given_order():
    model, _, straggler = alone_at(70.0)
    task, job, node, now = straggler.task, straggler.task.job, straggler.tracker.node, float(model.time)
    done = straggler.input_done_mb
    assert 0.0 < done < 640.0
    with pytest.raises(ValueError, match="shares"):
        model.jobtracker.repartition(Repartition(straggler, (1.0, 0.0)))
    new = model.jobtracker.repartition(Repartition(straggler, (1.0, 2.0, 3.0), (2, 1, 0), scan_mb=50.0, delay_s=5.0))
    rest = 640.0 - done
    assert task.input_mb == pytest.approx(done) and task.split_mb == 640.0
    assert [p.input_mb for p in new] == pytest.approx([rest / 6, rest / 3, rest / 2])
    assert [p.offset_mb for p in new] == pytest.approx([done, done + rest / 6, done + rest / 2])
    assert [p.cpu_mc for p in new] == pytest.approx([200 * 2000.0 * p.input_mb / 640 for p in new])
    assert all(list(p.replicas) == [node] and p.ready_s == now + 5.0 and p.parent is task for p in new)
    # the stopped attempt scans the rest, then only flushes what it has mapped
    left = [p.name for p in straggler.phases[straggler.phase_index :]]
    assert left[0] == "scan" and straggler.phase.amount == 50.0 and "map" not in left and "read" not in left
    # the longest piece is offered first, wherever it is asked for
    other = next(t for t in model.trackers if t.node != node)
    assert job.find_map(other.node, other.rack, Locality.OFF_RACK, set())[0] is new[2]
    assert model.jobtracker.repartition(Repartition(straggler, (1.0,))) == []  # a map is stopped only once
    jt, launch, routes = model.jobtracker, model.jobtracker.launch, {}

    def noting_routes(tracker, order):  # an ended attempt keeps no route (WorkItem.settle): note it at launch
        attempt = launch(tracker, order)
        routes[attempt.name] = attempt.route
        return attempt

    jt.launch = noting_routes
    run(model)
    for piece in new:
        attempt = piece.successful
        # a piece's only replica is the straggler's node: read there, or served by that node's DataNode
        source = -1 if attempt.tracker.node == node else model.trackers[node].vm.row
        assert routes[attempt.name].source_vm == source
        if attempt.start_s < now + 5.0:
            assert attempt.phases[0].name == "input-ready"
            assert attempt.phase_end_s[0] == pytest.approx(now + 5.0, abs=1.0)


@pytest.mark.parametrize(
    ("scheduler", "speculation"),
    [(s, "hadoop") for s in ("fifo", "fair", "capacity", "coupling", "quincy")]
    + [("fifo", s) for s in ("none", "late", "samr")],
)
def test_skewtune_composes_with_every_scheduler_and_speculation(scheduler, speculation):
    settings = HadoopClusterSettings(scheduler=scheduler, speculation=speculation, slot_manager="skewtune")
    model = cluster(
        build(SLOT_MANAGERS, "skewtune", settings),
        build(SCHEDULERS, scheduler, settings),
        build(SPECULATION, speculation, settings),
    )
    job = skewed_job(model)
    run(model)  # check=True: the cloud's invariants every tick; then each task once, input conserved
    assert job.state == "succeeded" and job.maps[0].children
    assert sum(t.successful.task.input_mb for t in job.maps) == pytest.approx(640.0 + 11 * 64.0)


def test_a_stopped_map_is_never_backed_up():
    # its rest already runs as the pieces; what is left of it is a flush. Same task, before and after the stop:
    from types import SimpleNamespace

    from policies.speculation.hadoop import speculatable_in
    from policies.speculation.late import _first
    from vcloud.work import ItemState

    attempt = SimpleNamespace(row=None, state=ItemState.RUNNING)  # no row: progress 0
    task = type("Task", (SimpleNamespace,), {"__hash__": object.__hash__})(  # a dict key, as running tasks are
        start_s=0.0, active=[attempt], nodes_tried={0}, state="running", children=[]
    )
    tracker = SimpleNamespace(node=1)
    assert list(speculatable_in({task: None}, 0.9, 100.0, 1)) == [task] and _first([task], tracker) is task
    task.children = ["piece"]
    assert not list(speculatable_in({task: None}, 0.9, 100.0, 1)) and _first([task], tracker) is None


def test_the_ledgers_task_counts_take_in_new_maps(monkeypatch):
    """SkewTune's pieces are new maps of a running job (`Job.add_maps`): the running-jobs ledger's task counts, which
    Hadoop speculation's bounds read, grow with them (at every rebuild: what a loop over the running jobs writes)."""
    from collections import Counter

    from policies.speculation import hadoop_lookahead as spec

    checks: Counter = Counter()
    original = spec.lag_bounds

    def checked(view, arrays):
        ledger = view.ledger
        done, size = former_job_counts(view.jobs, ledger.finished.size // 2)
        assert np.array_equal(ledger.finished, done) and np.array_equal(ledger.tasks, size), view.now
        checks[any(t.children for job in view.jobs for t in job.maps)] += 1
        return original(view, arrays)

    monkeypatch.setattr(spec, "lag_bounds", checked)
    settings = HadoopClusterSettings(scheduler="fifo", speculation="hadoop", slot_manager="skewtune")
    model = cluster(build(SLOT_MANAGERS, "skewtune", settings), speculation=build(SPECULATION, "hadoop", settings))
    job = skewed_job(model)
    run(model)
    assert job.maps[0].children and checks[True] >= 5, checks
