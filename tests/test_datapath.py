"""The data path by hand (issue 11): DataNode serving, pipelined phases, the guest page cache."""

import numpy as np
import pytest

from hadoop_layer.datanode import DataNodes, read_streams, write_streams
from tests.helpers import busy
from vcloud import CloudModel, Phase, Physics, WorkItem
from vcloud.diskseek import DiskSeekSettings
from vcloud.memory import MemorySettings
from vcloud.numerics import cum_before
from vcloud.pagecache import PageCacheSettings
from vcloud.work import Device, disk, nic

# the grant is the guest's memory at once (no balloon, no hypervisor swap): these tests pin the page cache's own
# arithmetic against a grant set by hand; tests/test_memory.py has the balloon that gets there over time
NO_RECLAIM = Physics(memory=MemorySettings(reclaim=False))


def hosts(n: int = 3, cores: int = 4, disk_mbps: float = 100.0, nic_mbps: float = 125.0, **kwargs) -> CloudModel:
    """`n` hosts with one 1-vCPU VM each (rows 0..n-1), 2000 MHz cores."""
    model = CloudModel(rng=1, check=True, **kwargs)
    for i in range(n):
        host = model.add_host(f"h{i}", cores=cores, core_mhz=2000, mem_mb=65536, disk_mbps=disk_mbps, nic_mbps=nic_mbps)
        model.add_vm(f"v{i}", host, vcpus=1, mem_mb=4096)
    return model


def run(model: CloudModel, vm: int, *phases: Phase, **kwargs) -> WorkItem:
    return model.vm_agents[vm].run(WorkItem(model, list(phases), **kwargs))


# ---- DataNode serving -------------------------------------------------------------------------------------------
def test_a_node_local_read_on_an_idle_datastore_beats_a_remote_one():
    # 100 MB: local at the datastore's 100 MB/s (1 s); remote bound by the two 50 MB/s NICs (2 s)
    model = hosts(2, nic_mbps=50.0)
    local = run(model, 0, Phase.pipe("read", 100.0, 0.0, [disk()]))
    model.run_for(5.0)
    model2 = hosts(2, nic_mbps=50.0)
    remote = run(model2, 0, Phase.pipe("read", 100.0, 0.0, [disk(vm=1), nic(vm=1), nic()]))
    model2.run_for(5.0)
    assert local.end_s == pytest.approx(1.0) and remote.end_s == pytest.approx(2.0)
    # the serving VM's datastore and NIC carried it, and its DataNode waited on the disk half the time (iowait)
    assert model2.vms.disk_mb[1] == pytest.approx(100.0) and model2.vms.net_mb[1] == pytest.approx(100.0)
    assert model2.vms.net_mb[0] == pytest.approx(100.0) and model2.vms.disk_mb[0] == 0.0
    assert model2.vms.iowait_s[1] == pytest.approx(1.0)  # 2 s x (50 MB/s of 100 granted): outstanding half the time
    assert remote.charged("io_mb") == pytest.approx(100.0)  # its own NIC only; the serving disk is no attempt's


def test_a_remote_read_slows_the_serving_nodes_disk_bound_task_by_the_computed_amount():
    # alone: 300 MB at 100 MB/s, 3 s. A remote reader of 100 MB shares the datastore with it: two streams of the
    # serving guest, whose CFQ slices (100 ms between 12.67 ms seeks) leave 88.75 MB/s, 44.38 each, for 2.25 s (its
    # NICs at 125 MB/s are not the bottleneck); the share it frees goes to the task from the next tick (t = 3 s), which
    # then reads what is left (300 - 3 x 44.38 MB) alone at 100 MB/s: 4.67 s
    model = hosts(2)
    task = run(model, 1, Phase.read("scan", 300.0))
    reader = run(model, 0, Phase.pipe("read", 100.0, 0.0, [disk(vm=1), nic(vm=1), nic()]))
    model.run_for(6.0)
    shared = 100.0 * 0.1 / (0.1 + 0.01267) / 2
    assert reader.end_s == pytest.approx(100.0 / shared) and task.end_s == pytest.approx(3.0 + (300 - 3 * shared) / 100)


def test_a_three_replica_write_costs_three_datastores_and_two_nic_hops():
    # 100 MB written from v0 with replicas on v1 and v2: each datastore writes 100 MB; v0's NIC sends 100, v1's
    # receives and forwards 200, v2's receives 100. v1's NIC (2 MB per MB at 125 MB/s) paces it: 62.5 MB/s, 1.6 s
    model = hosts(3, disk_mbps=200.0)
    write = Phase.pipe("hdfs-write", 100.0, 0.0,
                       [disk(write=True), nic(), nic(2.0, vm=1), disk(vm=1, write=True), nic(vm=2),
                        disk(vm=2, write=True)])  # fmt: skip
    item = run(model, 0, write)
    model.run_for(3.0)
    assert model.vms.disk_mb[:3].tolist() == pytest.approx([100.0, 100.0, 100.0])
    assert model.vms.net_mb[:3].tolist() == pytest.approx([100.0, 200.0, 100.0])
    assert item.end_s == pytest.approx(1.6)


# ---- pipelined phases -------------------------------------------------------------------------------------------
def two_racks(oversubscription: float | None) -> CloudModel:
    """4 hosts, one 1-vCPU VM each: v0 and v1 in rack 0, v2 and v3 in rack 1; 100 MB/s disks, 125 MB/s NICs; each
    rack's uplink carries its two NICs' 250 MB/s over `oversubscription` each way; no seeks between a datastore's
    streams (this is about the links: tests/test_disk_seek.py has the seeks)."""
    seeks = DiskSeekSettings(scheduler="none")
    model = CloudModel(rng=1, check=True, physics=Physics(rack_oversubscription=oversubscription, disk_seek=seeks))
    for i in range(4):
        host = model.add_host(f"h{i}", cores=4, core_mhz=2000, mem_mb=65536, disk_mbps=100.0, nic_mbps=125.0,
                              rack=i // 2)  # fmt: skip
        model.add_vm(f"v{i}", host, vcpus=1, mem_mb=4096)
    return model


def test_a_read_from_another_rack_is_paced_by_the_rack_uplinks_and_leaves_the_rest_of_the_disk_to_others():
    # v2 (rack 1) and v1 (rack 0) both read 100 MB from v0's datastore. The cross-rack read is paced by the 40 MB/s
    # uplinks (250 MB/s of NICs, 6.25:1), so it asks the disk for 40 and the rack-local read gets the other 60:
    # 100/60 = 1.667 s. The remote one then has 100 - 66.7 MB left at 40 MB/s: 2.5 s in all, as alone
    model = two_racks(6.25)
    far = run(model, 2, Phase.pipe("read", 100.0, 0.0, read_streams(0, serving=True, cross_rack=True)))
    near = run(model, 1, Phase.pipe("read", 100.0, 0.0, read_streams(0, serving=True, cross_rack=False)))
    model.run_for(4.0)
    assert near.end_s == pytest.approx(100.0 / 60.0) and far.end_s == pytest.approx(2.5)
    # the uplinks are the switch's: each VM's network counts its own NIC only
    assert model.vms.net_mb[:4].tolist() == pytest.approx([200.0, 100.0, 100.0, 0.0])
    assert far.charged("io_mb") == pytest.approx(100.0)


def test_reads_between_the_same_two_racks_share_the_uplink_and_a_non_blocking_core_paces_nothing():
    # two readers in rack 1 of two blocks in rack 0 share its 40 MB/s uplink: 20 MB/s each, 5 s for 100 MB;
    # through a non-blocking core (1:1, 250 MB/s) or with no rack limit each is paced by its serving disk: 1 s
    for uplink, end in ((6.25, 5.0), (1.0, 1.0), (None, 1.0)):
        model = two_racks(uplink)
        a = run(model, 2, Phase.pipe("read", 100.0, 0.0, read_streams(0, serving=True, cross_rack=True)))
        b = run(model, 3, Phase.pipe("read", 100.0, 0.0, read_streams(1, serving=True, cross_rack=True)))
        model.run_for(6.0)
        assert a.end_s == pytest.approx(end) and b.end_s == pytest.approx(end)


def test_only_the_hops_between_racks_of_a_write_pipeline_go_through_the_uplinks():
    # DataNodes on VM rows 10, 11 (rack 0) and 12, 13 (rack 1): a block written on 10 goes to 12 (another rack,
    # as HDFS places the second replica) and on to 13 (the second's rack): one hop out of rack 0 into rack 1
    nodes = DataNodes(np.array([0, 0, 1, 1]), [10, 11, 12, 13], replication=3, serving=True)
    assert nodes.crosses_racks(10, 12) and not nodes.crosses_racks(10, 11) and not nodes.crosses_racks(-1, 12)
    streams = write_streams((12, 13), True, 3, cross_rack=(nodes.crosses_racks(10, 12), nodes.crosses_racks(12, 13)))
    links = [(s.device, s.vm) for s in streams if s.device >= Device.UPLINK]
    assert links == [(Device.UPLINK, -1), (Device.DOWNLINK, 12)]


def test_a_phase_bound_by_the_disk_uses_cpu_at_the_disks_pace_and_waits_on_io():
    # 200 MB at 10 Mc/MB behind a 100 MB/s datastore: 2 s at 1000 MHz, half a vCPU; runnable half the time (it gets a
    # full core when it runs), blocked the other half: 1 s usr, 1 s iowait, no steal
    model = hosts(1, cores=1)
    item = run(model, 0, Phase.pipe("map", 200.0, 10.0, [disk()]))
    model.run_for(2.0)
    assert item.end_s == pytest.approx(2.0)
    assert item.cputime_s == pytest.approx(1.0) and item.iowait_s == pytest.approx(1.0) and item.steal_s == 0.0
    assert model.vms.cpu_demand_mhz[0] == pytest.approx(1000.0)  # what it would run if never stolen


def test_a_phase_bound_by_the_cpu_is_stolen_from_under_contention_and_never_waits_on_io():
    # one core, two 1-vCPU VMs with equal entitlements: 1000 MHz each. At 40 Mc/MB the phase reads 25 MB/s of a
    # 100 MB/s datastore: CPU-bound, runnable all the time, stolen half of it
    model = CloudModel(rng=1, check=True)
    host = model.add_host("h", cores=1, core_mhz=2000, mem_mb=65536, disk_mbps=100, nic_mbps=125)
    a = model.add_vm("a", host, vcpus=1, mem_mb=4096, cpu_entitlement_mhz=1000, in_pool=False)
    b = model.add_vm("b", host, vcpus=1, mem_mb=4096, cpu_entitlement_mhz=1000, in_pool=False)
    item = a.run(WorkItem(model, [Phase.pipe("map", 1000.0, 40.0, [disk()])]))
    busy(model, b)
    model.run_for(10.0)
    assert item.charged("io_mb") == pytest.approx(250.0)
    assert item.cputime_s == pytest.approx(5.0) and item.steal_s == pytest.approx(5.0) and item.iowait_s == 0.0


def _reader_and_spinner(rounds: int) -> tuple[WorkItem, WorkItem]:
    """One 2-vCPU VM on 1 core: a reader capped at 20 MB/s (10 Mc/MB) beside a CPU spinner, for 5 s."""
    model = CloudModel(rng=1, check=True, physics=Physics(pipeline_rounds=rounds))
    host = model.add_host("h", cores=1, core_mhz=2000, mem_mb=65536, disk_mbps=100, nic_mbps=125)
    vm = model.add_vm("v", host, vcpus=2, mem_mb=4096)
    reader = vm.run(WorkItem(model, [Phase.pipe("map", 1e6, 10.0, [disk()])], io_mbps_max=20.0))
    spinner = busy(model, vm)
    model.run_for(5.0)
    return reader, spinner


def test_cpu_a_disk_bound_phase_cannot_use_goes_to_the_other_threads():
    # two threads, 1000 MHz each in the first round. The reader can use 200 MHz (20 MB/s x 10 Mc/MB); the next
    # round gives the 800 MHz it hands back to the spinner. With one round (no redistribution) they stay idle.
    reader, spinner = _reader_and_spinner(rounds=3)
    assert reader.cputime_s == pytest.approx(0.5) and spinner.cputime_s == pytest.approx(4.5)
    reader, spinner = _reader_and_spinner(rounds=1)
    assert reader.cputime_s == pytest.approx(0.5) and spinner.cputime_s == pytest.approx(2.5)


# ---- the page cache ---------------------------------------------------------------------------------------------
def test_a_file_read_again_comes_from_the_cache_and_a_squeezed_cache_reads_it_from_disk():
    # 500 MB written (dirty, in the cache), then read back: from memory with a roomy cache; from the datastore when
    # the VM's resident memory fills its grant (nothing left for a cache): 500 MB at 100 MB/s, 5 s
    def write_then_read(granted_mb: float) -> tuple[CloudModel, WorkItem]:
        model = hosts(1, physics=NO_RECLAIM)
        model.vms.mem_granted_mb[0] = granted_mb
        f = model.cache.create(0)
        item = run(model, 0, Phase.pipe("spill", 500.0, 0.0, [disk(write=True, file=f)]),
                   Phase.pipe("merge-read", 500.0, 0.0, [disk(file=f)]), mem_mb=3000.0)  # fmt: skip
        model.run_for(30.0)
        return model, item

    _, fast = write_then_read(4096.0)  # 4096 - 256 OS - 3000 heap: 840 MB of cache, 84 MB dirty allowed
    assert fast.charged("read_cache_mb") == pytest.approx(500.0) and fast.charged("read_disk_mb") == 0.0
    squeezed, slow = write_then_read(3256.0)  # OS + heap fill the grant
    assert slow.charged("read_disk_mb") == pytest.approx(500.0) and slow.charged("read_cache_mb") == 0.0
    read_s = slow.end_s - slow.phase_end_s[0]
    assert read_s == pytest.approx(5.0, abs=1.0)  # within a tick of 500 MB / 100 MB/s
    assert fast.end_s - fast.phase_end_s[0] <= 1.0
    assert squeezed.vms.cache_mb[0] == 0.0


def test_dirty_data_is_written_back_after_the_expiry_and_a_deleted_file_never_is():
    # 50 MB written at t=0 into a roomy cache (below the 5 % background ratio): written back once 30 s old
    model = hosts(1, page_cache=PageCacheSettings(dirty_expire_s=30.0))
    kept, gone = model.cache.create(0), model.cache.create(0)
    run(model, 0, Phase.pipe("write", 50.0, 0.0, [disk(write=True, file=kept)]))
    run(model, 0, Phase.pipe("write", 50.0, 0.0, [disk(write=True, file=gone)]))
    model.run_for(10.0)
    assert model.vms.writeback_mb[0] == 0.0 and model.vms.dirty_mb[0] == pytest.approx(100.0)
    model.cache.delete(gone)
    model.run_for(30.0)
    assert model.vms.writeback_mb[0] == pytest.approx(50.0) and model.vms.dirty_mb[0] == 0.0
    assert model.vms.disk_mb[0] == pytest.approx(50.0)  # the deleted file's 50 MB never reached the disk


def test_a_writer_past_the_dirty_ratio_is_throttled_to_the_disk():
    # 1000 MB of cache, dirty_ratio 10 %: the first 100 MB go to memory at once, the rest through the 100 MB/s disk
    # (shared with the flusher writing back what passed the 5 % background ratio): 5-6 s
    model = hosts(1, physics=NO_RECLAIM)
    model.vms.mem_granted_mb[0] = 256.0 + 1000.0
    f = model.cache.create(0)
    item = run(model, 0, Phase.pipe("write", 600.0, 0.0, [disk(write=True, file=f)]))
    model.run_for(10.0)
    assert item.end_s == pytest.approx(6.0, abs=1.0)
    assert model.cache.files.dirty_mb[f] <= 100.0 + 1e-9


def test_a_run_reports_cache_and_disk_reads_per_attempt_and_the_cache_per_vm():
    # every map reads its split once: from a datastore (cold HDFS blocks) or a page cache; the trace shows the caches
    from hadoop_layer.profiles import PUMA
    from tests.helpers import small_cluster, uniform_maps

    model = small_cluster(slaves=3)
    model.add_job("j", PUMA["tera-sort"], 0.0, uniform_maps(9), 2)
    model.run_until(2000)
    tasks, trace = model.tasks_frame(), model.vm_trace()
    maps = tasks[(tasks.kind == "m") & (tasks.state == "done")]
    assert ((maps.read_disk_mb + maps.read_cache_mb) >= maps.input_mb - 1e-6).all()
    assert maps.read_disk_mb.sum() >= 9 * 64.0 - 1e-6  # the input blocks were cold
    assert {"cache_mb", "dirty_mb", "cache_hit"} <= set(trace.columns)
    assert trace.cache_mb.max() > 0 and trace.cache_hit.dropna().between(0.0, 1.0).all()


def test_the_page_caches_resident_files_are_those_holding_data_and_evictions_see_the_same_lru():
    """`PageCache.resident` (the rows the per-tick sums run over) holds every file with cached or dirty data, drops
    a file once it holds none, and `evict` over it frees what an eviction over all files frees (oldest first)."""
    from vcloud.pagecache import PageCache, evict

    cache = PageCache()
    cold = [cache.create(0, size_mb=64.0, now=float(t)) for t in range(3)]  # on disk, nothing cached
    warm = [cache.create(v, size_mb=64.0, cached_mb=32.0, now=float(t)) for t, v in ((5, 0), (6, 0), (7, 1))]
    assert cache.resident().tolist() == warm
    cache.files.cached_mb[cold[1]] = 10.0  # read into the cache by a tick: the engines touch what they fill
    cache.touch([cold[1]])
    assert cache.resident().tolist() == sorted([cold[1], *warm])
    # VM 0 must free 50 MB: least recently used first (cold[1] at t=1, then warm[0] at t=5: 10 + 32, then 8 more)
    evict(cache.files, cache.resident(), np.array([0]), np.array([50.0, 0.0]))
    assert cache.files.cached_mb[[cold[1], warm[0], warm[1], warm[2]]].tolist() == [0.0, 0.0, 24.0, 32.0]
    new = cache.create(1, size_mb=8.0, cached_mb=8.0, now=9.0)  # reuses no row: nothing was deleted
    assert cache.resident().tolist() == [warm[1], warm[2], new]  # the rebuild dropped the files left empty


def test_evict_s_running_sums_are_each_group_s_earlier_amounts_in_order():
    """`cum_before` (evict's and write_back's oldest-first budget) equals the loop that adds each group's earlier
    amounts (0 at a group's first row), from the same running sum."""

    rng = np.random.default_rng(7)
    for _ in range(200):
        n = int(rng.integers(1, 200))
        group = np.sort(rng.integers(0, 8, n))
        amount = rng.exponential(10.0, n)
        cum = np.cumsum(amount)
        start = {g: i for i, g in reversed(list(enumerate(group)))}
        expected = [cum[i] - amount[i] - (cum[start[g]] - amount[start[g]]) for i, g in enumerate(group)]
        assert cum_before(group, amount).tolist() == expected
    assert cum_before(np.array([3, 3, 5]), np.array([1.0, 2.0, 4.0])).tolist() == [0.0, 1.0, 0.0]


def test_resident_merges_rows_touched_twice_in_one_call_once_and_in_order():
    from vcloud.pagecache import PageCache

    cache = PageCache()
    files = [cache.create(0, size_mb=8.0, cached_mb=4.0 * (i % 2), now=0.0) for i in range(6)]
    assert cache.resident().tolist() == [files[1], files[3], files[5]]
    cache.files.cached_mb[[files[4], files[0]]] = 1.0
    cache.touch([files[4], files[0], files[4]])
    assert cache.resident().tolist() == files[:2] + files[3:]
