"""ESX memory reclamation by hand (vcloud/memory.py): overhead, balloon, guest and hypervisor swap, touched memory."""

import pytest

from tests.helpers import busy, one_host
from vcloud import Phase, WorkItem
from vcloud.memory import MemorySettings, overhead_mb
from vcloud.work import disk


def test_overhead_memory_is_vsphere_5_1s_sample_table():
    assert overhead_mb(4096, 4) == pytest.approx(60.67)
    assert overhead_mb(1024, 1) == pytest.approx(25.90)
    assert overhead_mb(4096, 3) == pytest.approx((52.72 + 60.67) / 2)  # between the table's columns


def test_the_pool_pays_for_its_vms_overhead():
    # two 4 vCPU / 4 GB VMs in a 3000 MB pool: each is entitled to (3000 - 2 x 60.67) / 2 = 1439.33 MB
    from policies.allocators.static import StaticAllocator

    model = one_host(cores=8)
    model.allocator = StaticAllocator()
    model.set_pool(mem_mb=3000.0)
    vms = [model.add_vm(f"v{i}", model.host_agents[0], vcpus=4, mem_mb=4096) for i in range(2)]
    model.run_for(1.0)
    assert [vm.mem_granted_mb for vm in vms] == [pytest.approx(1439.33)] * 2


def _limited_vm():
    """A 2000 MB VM limited to 800 MB on an idle 64 GB host: 256 MB OS + a 744 MB heap (1000 MB resident) and
    600 MB of a file in its page cache; 400 MB of its memory are free."""
    model = one_host(cores=4, disk_mbps=100.0)
    vm = model.add_vm("v", model.host_agents[0], vcpus=2, mem_mb=2000.0, mem_limit_mb=800.0)
    busy(model, vm, mem_mb=744.0)
    f = model.cache.create(vm.row, 600.0, 600.0)
    return model, vm, f


def test_a_vm_above_its_limit_on_an_idle_host_balloons_page_cache_first_then_anonymous_memory():
    # Held: 1000 resident + 600 cached = 1600 MB, target 800. Until the balloon catches up, the hypervisor swaps
    # what the VM holds beyond 800 MB (800 MB at first). The balloon takes the 400 free MB at 64 MB/s (6.25 s),
    # then the page cache at 8 MB/s (600 MB: 75 s, done at 81.25 s), then anonymous memory, which the guest swaps:
    # 200 MB more (25 s), done at 106.25 s with a 1200 MB balloon, 800 MB held and nothing hypervisor-swapped.
    model, vm, _ = _limited_vm()
    model.run_for(1.0)
    assert vm.mem_target_mb == 800.0 and vm.balloon_mb == pytest.approx(64.0)
    assert vm.hv_swap_mb == pytest.approx(800.0)  # free pages ballooned hold nothing: the hypervisor swaps
    model.run_for(69.0)  # t = 70: the balloon is eating the cache, the guest has swapped nothing
    assert vm.balloon_mb == pytest.approx(400.0 + 8.0 * (70.0 - 6.25))
    assert 0.0 < vm.cache_mb < 600.0 and vm.swap_mb == pytest.approx(vm.hv_swap_mb)
    model.run_for(80.0)  # t = 150
    assert vm.balloon_mb == pytest.approx(1200.0) and vm.cache_mb == 0.0
    assert vm.hv_swap_mb == pytest.approx(0.0, abs=1e-9) and vm.swap_mb == pytest.approx(200.0)  # the guest's own
    assert vm.mem_held_mb == pytest.approx(800.0)


def test_the_ballooned_vms_io_bound_task_reads_from_disk_beside_its_swap_traffic():
    # After ballooning (t = 150) the file is no longer cached: 600 MB from the 100 MB/s datastore, which the guest's
    # page-ins share (200 MB swapped x 0.2 touched per s = 40 MB/s): two streams, CFQ's 100 ms slices between 12.67 ms
    # switches leave 88.75 MB/s, the reader 48.75 MB/s, 12.3 s. Unlimited, the same read comes from the page cache
    # within a tick.
    model, vm, f = _limited_vm()
    model.run_for(150.0)
    reader = vm.run(WorkItem(model, [Phase.pipe("read", 600.0, 0.0, [disk(file=f)])]))
    model.run_for(20.0)
    assert reader.end_s - reader.start_s == pytest.approx(600.0 / (100.0 * 0.1 / 0.11267 - 40.0), abs=1.0)
    assert reader.charged("read_disk_mb") == pytest.approx(600.0)

    free = one_host(cores=4, disk_mbps=100.0)
    vm2 = free.add_vm("v", free.host_agents[0], vcpus=2, mem_mb=2000.0)
    busy(free, vm2, mem_mb=744.0)
    f2 = free.cache.create(vm2.row, 600.0, 600.0)
    free.run_for(150.0)
    fast = vm2.run(WorkItem(free, [Phase.pipe("read", 600.0, 0.0, [disk(file=f2)])]))
    free.run_for(5.0)
    assert fast.end_s - fast.start_s <= 1.0 and fast.charged("read_cache_mb") == pytest.approx(600.0)


def test_active_memory_is_capped_by_the_granted_memory():
    # a 1500 MB heap, all of it in use, in a 2000 MB VM limited to 800 MB: the balloon grows to 1200 MB, the guest
    # keeps 800 MB and swaps 700 MB; it touches only what it holds: 800 MB, however much its heap uses
    model = one_host()
    vm = model.add_vm("v", model.host_agents[0], vcpus=2, mem_mb=2000.0, os_mem_mb=0.0, mem_limit_mb=800.0)
    busy(model, vm, mem_mb=1500.0, mem_active_fraction=1.0)
    model.run_for(400.0)
    assert vm.balloon_mb == pytest.approx(1200.0) and vm.mem_active_mb == 1500.0 and vm.swap_mb == pytest.approx(700.0)
    assert vm.mem_touched_mb == pytest.approx(800.0) and vm.mem_target_mb == 800.0
    trace = model.vm_trace()
    assert trace.touched_mb.iloc[-1] == pytest.approx(800.0) and trace.balloon_mb.iloc[-1] == pytest.approx(1200.0)


def test_without_reclamation_the_grant_is_the_guests_memory_at_once():
    from vcloud import Physics

    model = one_host(physics=Physics(memory=MemorySettings(reclaim=False)))
    vm = model.add_vm("v", model.host_agents[0], vcpus=2, mem_mb=2000.0, mem_limit_mb=800.0)
    busy(model, vm, mem_mb=744.0)
    model.vms.mem_granted_mb[vm.row] = 800.0
    model.run_for(1.0)
    assert vm.balloon_mb == 0.0 and vm.swap_mb == pytest.approx(200.0)


@pytest.mark.parametrize(
    "field,value", [("balloon_inflate_mb_s", 0.0), ("balloon_max_fraction", 1.5), ("idle_tax", 1.0)]
)
def test_bad_memory_settings_are_refused(field, value):
    with pytest.raises(ValueError, match=field):
        MemorySettings(**{field: value})
