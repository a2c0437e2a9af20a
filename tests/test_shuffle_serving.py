"""The serving side of the shuffle (hadoop_layer/shuffle.py): fetched MB are read from the serving node's
datastore and sent through its NIC, belong to the TaskTracker daemon and not to any attempt."""

import math

import numpy as np
import pytest

from hadoop_layer.config import HadoopConfig
from hadoop_layer.model import HadoopModel
from hadoop_layer.profiles import PUMA
from hadoop_layer.shuffle import ShuffleServer
from hadoop_layer.shuffle_queue import queue_dense
from hadoop_layer.tasks import TaskKind
from policies.schedulers.fifo import FifoScheduler
from tests.helpers import small_cluster
from vcloud.pagecache import PageCacheSettings


def two_nodes(serving: bool = True, same_node: bool = False, cache: bool = False) -> HadoopModel:
    """One map of 100 MB output (a single spill: no merge) on s0, its one reduce on s1 (or on s0); no page cache
    unless asked (these tests count the datastores' MB)."""
    cfg = HadoopConfig(map_slots=1, reduce_slots=1, heartbeat_formula="1.0", replication=1, io_sort_mb=150,
                       reduce_slowstart=0.0, child_heap_mb=400, shuffle_serving=serving)  # fmt: skip
    model = HadoopModel(rng=3, check=True, hadoop=cfg, scheduler=FifoScheduler(),
                        page_cache=PageCacheSettings(enabled=cache))  # fmt: skip
    for i in range(2):
        host = model.add_host(f"h{i}", cores=2, core_mhz=2000, mem_mb=8192, disk_mbps=100, nic_mbps=100)
        model.add_slave(model.add_vm(f"s{i}", host, vcpus=2, mem_mb=4096))
    a, b = model.trackers
    b.map_slots = 0
    if same_node:
        b.reduce_slots = 0
    else:
        a.reduce_slots = 0
    maps = [{"input_mb": 64.0, "cpu_mc": 2 * 2000.0, "output_mb": 100.0, "output_records": 1e5}]
    model.add_job("one", PUMA["tera-sort"], 0.0, maps, 1, data_nodes=[0])
    model.run_until(400)
    assert model.jobtracker.jobs[0].state == "succeeded"
    model.check_hadoop_end()
    return model


def attempts(model, kind):
    return [a for a in model.attempts() if a.task.kind == kind and a.state == "done"]


def test_a_remote_fetch_reads_the_serving_disk_and_crosses_both_nics():
    model = two_nodes()
    (m,), (r,) = attempts(model, TaskKind.MAP), attempts(model, TaskKind.REDUCE)
    assert (m.tracker.node, r.tracker.node) == (0, 1)
    assert m.output_mb == pytest.approx(100.0)
    vms = model.vms
    # s0's datastore: the map's own I/O (local input, spill) + the 100 MB served; its NIC: the 100 MB sent
    assert vms.disk_mb[0] == pytest.approx(m.charged("io_mb") + 100.0)
    assert vms.net_mb[0] == pytest.approx(100.0)
    # s1's NIC receives the 100 MB (replication 1: no output pipeline); its disk serves nothing
    assert vms.net_mb[1] == pytest.approx(100.0)
    shuffle_io = r.charged("io_mb") - vms.disk_mb[1]  # the reduce's own disk I/O is all of s1's
    assert shuffle_io == pytest.approx(100.0)
    s = model.serving
    assert s.served_read_mb.tolist() == pytest.approx([100.0, 0.0])
    assert s.served_sent_mb.tolist() == pytest.approx([100.0, 0.0])
    assert s.fetched_remote_mb == pytest.approx(100.0) and s.fetched_local_mb == 0.0


def test_a_map_output_still_in_the_page_cache_is_served_without_touching_the_disk():
    # 100 MB of map output in a 4 GB VM (3.4 GB of cache beside the 464 MB heap and the OS): written to the cache,
    # served from it, and deleted with the job before the 30 s write-back expiry could write it (it never is)
    cached, plain = two_nodes(cache=True), two_nodes(cache=False)
    (m,) = attempts(cached, TaskKind.MAP)
    vms = cached.vms
    assert vms.read_cache_mb[0] == pytest.approx(100.0) and vms.read_disk_mb[0] == pytest.approx(64.0)  # the input
    assert vms.disk_mb[0] == pytest.approx(m.charged("io_mb"))  # the servlet read nothing from disk ...
    assert m.charged("io_mb") == pytest.approx(64.0)  # ... and the spill (file.out) was never written back
    assert cached.serving.served_read_mb.tolist() == pytest.approx([100.0, 0.0])
    assert plain.vms.disk_mb[0] == pytest.approx(64.0 + 100.0 + 100.0)  # without a cache: input, spill, serving


def test_the_fetch_happens_after_the_map_and_takes_the_serving_stages():
    """100 MB at 100 MB/s: read (1 s), send (1 s), receive (1 s), pipelined a tick apart: the shuffle ends >= 3 s
    after the JobTracker hears of the map (at its tracker's next heartbeat: the reduce learns of the output from
    it), against >= 1 s when serving is free (the reduce already waits in its shuffle)."""
    on, off = two_nodes(True), two_nodes(False)
    gaps = []
    for model in (on, off):
        (m,), (r,) = attempts(model, TaskKind.MAP), attempts(model, TaskKind.REDUCE)
        shuffle_end = r.phase_end_s[[p.name for p in r.phases].index("shuffle")]
        heard = model.trackers[0].clock.next_beat(model.trackers[0].node, m.end_s)
        gaps.append(shuffle_end - max(m.end_s, math.floor(heard)))  # (the tick that takes the feed starts at floor)
    assert gaps[0] >= 3.0 - 1e-9 and gaps[0] <= 4.0 + 1e-9
    assert 1.0 - 1e-9 <= gaps[1] <= 2.0 + 1e-9
    assert off.vms.net_mb[0] == 0.0 and off.serving is None  # the old behaviour: nothing charged to s0


def test_a_same_node_fetch_reads_the_local_disk_only():
    model = two_nodes(same_node=True)
    (m,), (r,) = attempts(model, TaskKind.MAP), attempts(model, TaskKind.REDUCE)
    assert m.tracker.node == r.tracker.node == 0
    vms = model.vms
    assert vms.net_mb[0] == 0.0  # no NIC: neither sent nor received
    assert vms.disk_mb[0] == pytest.approx(m.charged("io_mb") + r.charged("io_mb") + 100.0)
    assert model.serving.fetched_local_mb == pytest.approx(100.0) and model.serving.fetched_remote_mb == 0.0


def test_serving_io_is_the_daemons_not_an_attempts():
    """The VM's iowait includes the servlet's blocked time; the attempts' iowait adds up to less than the VM's."""
    model = two_nodes()
    iowait_attempts = sum(a.iowait_s for a in model.attempts() if a.tracker.node == 0)
    assert model.vms.iowait_s[0] > iowait_attempts + 0.5  # ~1 s reading + ~1 s sending, no attempt running then
    daemon = [it.iowait_s if it is not None else 0.0 for it in model.serving.items]  # read s0, s1; send s0, s1
    assert daemon[0] == pytest.approx(1.0) and daemon[2] == pytest.approx(1.0)  # 100 MB at 100 MB/s, each stage
    assert model.vms.iowait_s[0] == pytest.approx(iowait_attempts + daemon[0] + daemon[2])


def _fail_first_reduce_after_its_setup(model: HadoopModel) -> None:
    launch = model.jobtracker.launch

    def launching(tracker, order):
        attempt = launch(tracker, order)
        if attempt.task.kind == TaskKind.REDUCE and attempt.task.index == 0 and attempt.number == 0:
            attempt.fail_fraction, attempt.fail_after = 0.0, 1  # TaskAttempt.place_failure keeps it at 1
        return attempt

    model.jobtracker.launch = launching


@pytest.mark.parametrize("copiers", [False, True])
@pytest.mark.parametrize("seed", [1, 2, 3, 6])
def test_every_mb_fetched_was_served_once(seed, copiers):
    """Random job with failing attempts (with seeds 1 and 6 the first reduce attempt fails right after its setup,
    with map outputs queued for it): every MB requested is read once by a server or dropped with its reduce; every
    MB read is fetched locally or sent (or dropped); every MB sent is handed to a reduce's shuffle (or dropped);
    and the winners fetched their partitions exactly."""
    rng = np.random.default_rng(seed)
    model = small_cluster(slaves=4, racks=2, task_failure_probability=0.1, shuffle_copiers=copiers, parallel_copies=2)
    if seed in (1, 6):
        _fail_first_reduce_after_its_setup(model)
    maps = [{"input_mb": float(rng.uniform(10, 64)), "cpu_mc": float(rng.uniform(1, 6)) * 2000.0,
             "output_mb": float(rng.uniform(1, 40)), "output_records": 1e4}
            for _ in range(int(rng.integers(4, 14)))]  # fmt: skip
    job = model.add_job("random", PUMA["tera-sort"], 0.0, maps, int(rng.integers(1, 5)))
    model.run_until(5000)
    assert job.state == "succeeded"
    model.check_hadoop_end()
    s = model.serving
    unread, unsent, unhanded = s.dropped_mb
    assert s.queued_mb == pytest.approx(s.served_read_mb.sum() + unread)
    assert s.served_read_mb.sum() == pytest.approx(s.fetched_local_mb + s.served_sent_mb.sum() + unsent)
    assert s.served_sent_mb.sum() == pytest.approx(s.fetched_remote_mb + unhanded)
    assert s.read_q.sum() == s.send_q.sum() == s.held.sum() == 0.0 and not s.left.any()
    if copiers:  # no copier left on a node, nothing left to take
        assert not s.backlog.any() and not s.fetching.any() and not s.in_flight.any() and not s.waiting.any()
    # the daemons' items were charged by the cloud exactly what the queues counted as read and sent
    assert s.daemon_io_mb().tolist() == pytest.approx([s.served_read_mb.sum(), s.served_sent_mb.sum()])
    total = sum(t.output_mb_final for t in job.maps)
    # each attempt that got through its shuffle fetched its partition of every map output, once; those that
    # ended before its end fetched part of theirs, or nothing
    shuffled = sum(len(a.phase_end_s) >= 2 for t in job.reduces for a in t.attempts)
    expect = total / len(job.reduces) * shuffled
    if seed in (1, 6):
        assert s.dropped_mb.sum() > 0
        assert s.fetched_local_mb + s.fetched_remote_mb >= expect * (1 - 1e-12)
    else:
        assert s.dropped_mb.sum() == 0
        assert s.fetched_local_mb + s.fetched_remote_mb == pytest.approx(expect)


def test_serving_slows_a_shuffle_heavy_job_on_disk_bound_nodes():
    """tera-sort (map output = input) on slow datastores: serving reads compete with maps' I/O and the merges (no
    page cache: with one, the fresh map outputs are served from memory; see the test above)."""
    times = []
    for serving in (True, False):
        cfg = HadoopConfig(map_slots=2, reduce_slots=1, heartbeat_formula="1.0", shuffle_serving=serving)
        model = HadoopModel(rng=5, check=True, hadoop=cfg, scheduler=FifoScheduler(),
                            page_cache=PageCacheSettings(enabled=False))  # fmt: skip
        for i in range(4):
            host = model.add_host(f"h{i}", cores=4, core_mhz=2000, mem_mb=8192, disk_mbps=30, nic_mbps=100)
            model.add_slave(model.add_vm(f"s{i}", host, vcpus=4, mem_mb=4096))
        maps = [{"input_mb": 64.0, "cpu_mc": 2 * 2000.0, "output_mb": 64.0, "output_records": 6.4e5}] * 16
        job = model.add_job("sort", PUMA["tera-sort"], 0.0, maps, 4)
        model.run_until(20000)
        assert job.state == "succeeded"
        times.append(job.end_s - job.start_s)
    # each node serves 1/4 of 16 x 64 MB from a 30 MB/s datastore that is the bottleneck: ~8.5 s of disk time;
    # at least half of it shows in the job's time
    assert times[0] - times[1] >= 0.5 * 16 * 64 / 4 / 30, times


def _wide_queue(room: int, lengths: list[int]):
    """A ShuffleServer's queue alone: rows `room` places wide holding `lengths` entries (columns 0, 1, ...; MB 1.5)."""
    server = ShuffleServer.__new__(ShuffleServer)
    rows = len(lengths)
    server.q_len = np.array(lengths, dtype=np.int64)
    server.q_col = np.full((rows, room), 99, dtype=np.int64)  # past q_len: never read
    server.q_val = np.full((rows, room), 7.0)
    for r, k in enumerate(lengths):
        server.q_col[r, :k], server.q_val[r, :k] = np.arange(k), 1.5
    return server


@pytest.mark.parametrize(
    ("room", "lengths", "kept"),
    [(1888, [76, 0, 3], 152), (256, [10, 2], 32), (256, [70, 1], 256), (64, [1, 0], 64), (512, [0, 0], 32)],
)
def test_rows_far_wider_than_their_fullest_are_narrowed_to_twice_it(room, lengths, kept):
    # under a quarter of the room in use: twice the fullest row, at least 32; else left alone; 64 or less: left alone
    server = _wide_queue(room, lengths)
    before = queue_dense(server.q_col, server.q_val, server.q_len, 100)
    server._narrow()
    assert server.q_col.shape == server.q_val.shape == (len(lengths), kept)
    assert np.array_equal(queue_dense(server.q_col, server.q_val, server.q_len, 100), before)
