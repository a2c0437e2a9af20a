"""The reduce's copiers (hadoop_layer/copiers.py, `hadoop.shuffle_copiers`): a reduce fetches from at most
`parallel_copies` nodes at a time when a fetch outlasts a tick, from every node at once when fetches are small."""

import numpy as np
import pytest

from hadoop_layer.config import HadoopConfig
from hadoop_layer.copiers import STARTING, CopierColumns, CopierShuffle, CopyRates, copiers_take
from hadoop_layer.model import HadoopModel
from hadoop_layer.profiles import PUMA
from hadoop_layer.shuffle_queue import SparseQueue
from hadoop_layer.tasks import TaskKind
from policies.schedulers.fifo import FifoScheduler
from vcloud.pagecache import PageCacheSettings

SERVERS = 6
DISK_MBPS = 50.0  # the servlets' disks are the bottleneck: the NICs, and the reduce's disk, move 10x more
NIC_MBPS = 500.0


def shuffle_of(output_mb: float, copiers: int | None, seed: int = 3) -> tuple[HadoopModel, list[tuple[int, list]]]:
    """One map on each of SERVERS nodes (its output `output_mb`), one reduce on a node of its own that starts when
    the maps are done (slowstart 1), no page cache: the shuffle alone, served by the disks. `copiers` None: the
    all-pairs servlets. Returns the model and, per tick of the shuffle, (how many nodes a copier is on, the nodes
    whose servlet read for the reduce)."""
    cfg = HadoopConfig(map_slots=1, reduce_slots=1, heartbeat_formula="1.0", replication=1, io_sort_mb=150,
                       child_heap_mb=400, reduce_slowstart=1.0, shuffle_copiers=copiers is not None,
                       parallel_copies=copiers or 5)  # fmt: skip
    model = HadoopModel(rng=seed, check=True, hadoop=cfg, scheduler=FifoScheduler(),
                        page_cache=PageCacheSettings(enabled=False))  # fmt: skip
    for i in range(SERVERS + 1):
        disk = DISK_MBPS if i < SERVERS else NIC_MBPS  # the reduce writes what it fetches (200 MB: to disk)
        host = model.add_host(f"h{i}", cores=2, core_mhz=2000, mem_mb=8192, disk_mbps=disk, nic_mbps=NIC_MBPS)
        model.add_slave(model.add_vm(f"s{i}", host, vcpus=2, mem_mb=4096))
    for t in model.trackers[:SERVERS]:
        t.reduce_slots = 0
    model.trackers[SERVERS].map_slots = 0
    maps = [{"input_mb": 1.0, "cpu_mc": 200.0, "output_mb": output_mb, "output_records": 1e4}] * SERVERS
    model.add_job("one", PUMA["tera-sort"], 0.0, maps, 1, data_nodes=list(range(SERVERS)))
    seen: list[tuple[int, list]] = []
    shuffle = model.shuffle
    tick = shuffle.tick

    def watched() -> None:
        before = shuffle.served_read_mb.copy()
        on = int(shuffle.fetching.sum()) if isinstance(shuffle, CopierShuffle) else 0  # as the tick's physics ran
        tick()
        seen.append((on, np.flatnonzero(shuffle.served_read_mb - before).tolist()))

    shuffle.tick = watched
    model.run_until(600)
    assert model.jobtracker.jobs[0].state == "succeeded"
    model.check_hadoop_end()
    return model, seen


def shuffle_at(attempt) -> int:
    """The index of a reduce attempt's shuffle phase (after its child JVM's phases)."""
    return [p.name for p in attempt.phases].index("shuffle")


def shuffle_seconds(model: HadoopModel) -> float:
    """From the reduce's shuffle start (its JVM started) to its shuffle's end."""
    (r,) = [a for a in model.attempts() if a.task.kind == TaskKind.REDUCE and a.state == "done"]
    k = shuffle_at(r)
    return r.phase_end_s[k] - r.phase_end_s[k - 1]


@pytest.mark.parametrize("copiers", [1, 2])
def test_big_fetches_hold_a_copier_each_so_the_shuffle_runs_at_the_copiers_disks(copiers):
    """6 x 200 MB, each 4 ticks of one 50 MB/s disk: the copiers are on `copiers` nodes at a time, the servlets
    serve no more nodes than that, and the 1,200 MB take 1200 / (copiers x 50) s (24 s, 12 s) against 4 s when
    all six disks serve at once (plus a tick or two of staging: read, then send)."""
    model, seen = shuffle_of(200.0, copiers)
    assert max(on for on, _ in seen) == copiers
    assert max(len(served) for _, served in seen) == copiers
    expect = 1200.0 / (copiers * DISK_MBPS)
    assert expect <= shuffle_seconds(model) <= expect + 3.0
    s = model.serving
    assert s.served_read_mb.sum() == pytest.approx(1200.0) and s.fetched_remote_mb == pytest.approx(1200.0)
    assert not s.fetching.any() and not s.backlog.any() and not s.in_flight.any()
    free, seen = shuffle_of(200.0, None)
    assert max(len(served) for _, served in seen) == SERVERS
    assert 1200.0 / (SERVERS * DISK_MBPS) <= shuffle_seconds(free) <= 1200.0 / (SERVERS * DISK_MBPS) + 3.0


def test_small_fetches_are_taken_within_the_tick_so_the_copiers_bind_nothing():
    """6 x 5 MB: each a tenth of a tick of one disk; one copier takes all six nodes in its first tick (the time
    before the sixth, 0.5 tick, is within the copier's tick): the same shuffle time as a copier per node."""
    model, seen = shuffle_of(5.0, 1)
    assert seen and max(on for on, _ in seen) == SERVERS
    many, _ = shuffle_of(5.0, SERVERS)
    assert shuffle_seconds(model) == pytest.approx(shuffle_seconds(many))


@pytest.mark.parametrize("output_mb", [5.0, 200.0])
def test_copiers_start_with_the_reduce_task_not_during_its_jvm_start(output_mb):
    """The maps are done before the reduce launches (slowstart 1): with copiers no servlet reads for the reduce
    before its JVM has started (ReduceTask.run makes the ReduceCopier); the all-pairs servlets read during it."""

    def first_read_after_jvm(copiers: int | None) -> float:
        model, seen = shuffle_of(output_mb, copiers)
        (r,) = [a for a in model.attempts() if a.task.kind == TaskKind.REDUCE and a.state == "done"]
        first = next(i for i, (_, served) in enumerate(seen) if served)  # the tick (from the model's start)
        return first + 1.0 - r.phase_end_s[shuffle_at(r) - 1]  # the end of that tick, less the JVM's end

    assert first_read_after_jvm(5) > 0.0
    assert first_read_after_jvm(None) <= 0.0


def test_nodes_are_fetched_in_a_random_rotation_drawn_from_their_own_stream():
    """With one copier on big fetches, the servlets serve one node after another, in the rotation drawn at the
    reduce's start (the reduce's own node, with no map output, is skipped); another seed, another order."""

    def order(seed: int) -> tuple[list[int], list[int]]:
        model, seen = shuffle_of(200.0, 1, seed=seed)
        served = list(dict.fromkeys(node for _, nodes in seen for node in nodes))
        rotation = model.serving.rotation(0).tolist()  # the reduce's column (freed, not overwritten)
        return served, [n for n in rotation if n != SERVERS]

    served, rotation = order(3)
    assert served == rotation and sorted(served) == list(range(SERVERS))
    assert order(3)[0] == served
    assert any(order(s)[0] != served for s in (4, 5, 6))


def test_a_node_is_fetched_from_once_at_a_time():
    """Two maps in turn on one node, the reduce waiting from the start (slowstart 0): the 10 MB map, run second, is
    done while the other's 400 MB are still read (8 ticks of the disk); its output waits for that fetch
    (uniqueHosts: the tick's invariant check fails on a second fetch of the node at once), though four copiers are
    free, and is fetched right after it."""
    cfg = HadoopConfig(map_slots=1, reduce_slots=1, heartbeat_formula="1.0", replication=1, io_sort_mb=150,
                       child_heap_mb=400, reduce_slowstart=0.0, shuffle_copiers=True)  # fmt: skip
    model = HadoopModel(rng=3, check=True, hadoop=cfg, scheduler=FifoScheduler(),
                        page_cache=PageCacheSettings(enabled=False))  # fmt: skip
    for i, disk in enumerate((DISK_MBPS, NIC_MBPS)):
        host = model.add_host(f"h{i}", cores=2, core_mhz=2000, mem_mb=8192, disk_mbps=disk, nic_mbps=NIC_MBPS)
        model.add_slave(model.add_vm(f"s{i}", host, vcpus=2, mem_mb=4096))
    model.trackers[0].reduce_slots, model.trackers[1].map_slots = 0, 0
    maps = [{"input_mb": 1.0, "cpu_mc": 200.0, "output_mb": mb, "output_records": 1e4} for mb in (10.0, 400.0)]
    model.add_job("one", PUMA["tera-sort"], 0.0, maps, 1)
    s = model.serving
    waited = []
    tick = s.tick

    def watched() -> None:
        tick()
        if s.in_flight.any() and s.backlog.any():
            waited.append(float(s.backlog.sum()))

    s.tick = watched
    model.run_until(600)
    assert model.jobtracker.jobs[0].state == "succeeded"
    assert waited and waited == pytest.approx([10.0] * len(waited))  # the second output waited for the first
    assert s.served_read_mb.sum() == pytest.approx(410.0)


def test_copiers_are_on_by_default_and_need_the_servlets():
    """Hadoop's mapred.reduce.parallel.copies copiers per reduce, by default; without the servlets
    (shuffle_serving off) fetches cost the reducer only, and there are no copiers."""
    assert HadoopConfig().shuffle_copiers and HadoopConfig().parallel_copies == 5
    model = HadoopModel(rng=1, hadoop=HadoopConfig(shuffle_serving=False), scheduler=FifoScheduler())
    assert model.serving is None and not isinstance(model.shuffle, CopierShuffle)


def test_copiers_are_not_asked_only_when_they_would_take_nothing(monkeypatch):
    """`before_tick` skips the copiers' kernel while no column can be taken from (`_look`): at every skipped tick of
    a SWIM excerpt (jobs of many sizes, reduces killed and in their JVM start) the kernel, run on a copy of the state,
    takes nothing and changes nothing."""
    from pathlib import Path

    from scenarios.registry import SCENARIOS
    from scenarios.runner import run_model
    from scenarios.settings import validate

    swim = Path(__file__).resolve().parents[2] / "shared" / "data" / "swim" / "FB-2009_samples_24_times_1hr_0.tsv"
    if not swim.exists():
        pytest.skip("the FB-2009 SWIM trace is not here")
    skipped, asked = [0], [0]
    original = CopierShuffle.before_tick

    def checked(self):
        if self._look:
            asked[0] += 1
        else:
            skipped[0] += 1
            copy = lambda a: a.copy() if isinstance(a, np.ndarray) else a  # noqa: E731
            reduces = CopierColumns(
                *map(
                    copy,
                    (
                        self.changed,
                        self.waiting,
                        self.in_flight,
                        self.col_row,
                        self.backlog,
                        self.position,
                        self.next_at,
                        self.col_node,
                    ),
                )
            )
            queue = SparseQueue(*map(copy, self.sparse_queue()))
            rates = CopyRates(self.disk_mb, self.send_mb, self.nic_mb)
            fetches = (self.fetch_node.copy(), self.fetch_col.copy())
            before = [copy(a) for a in (*reduces, *queue, *fetches)]
            # records go in as plain tuples of their fields
            assert not copiers_take(self.copiers, tuple(reduces), self.model.items.kind, STARTING, *fetches,
                                    tuple(rates), tuple(queue))[2]  # fmt: skip
            for a, b in zip((*reduces, *queue, *fetches), before, strict=True):
                assert np.array_equal(a, b)
        original(self)

    monkeypatch.setattr(CopierShuffle, "before_tick", checked)
    scenario = SCENARIOS["trace-replay"]
    model = scenario.build(validate(scenario.Settings, {"trace": str(swim), "max_jobs": 40}), seed=1)
    assert isinstance(model.shuffle, CopierShuffle)
    run_model(model, 3000.0, progress=False)
    assert skipped[0] > 1000 and asked[0] > 50  # 1,917 and 83 in this excerpt
