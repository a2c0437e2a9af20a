"""Steal, iowait and swap appear exactly when the physics says they must, in the amounts worked out by hand."""

import pytest

from tests.helpers import busy, one_host
from vcloud import ConstantLoad, Kind, PeriodicLoad, Phase, TraceLoad, WorkItem


def test_no_steal_while_the_host_has_a_core_for_every_runnable_vcpu():
    model = one_host(cores=4)
    vms = [model.add_vm(f"v{i}", model.host_agents[0], vcpus=2, mem_mb=4096) for i in range(2)]
    for vm in vms:
        busy(model, vm), busy(model, vm)
    model.run_for(10.0)
    for vm in vms:
        assert vm.steal_s == 0.0
        assert vm.usr_s == pytest.approx(20.0)


def test_steal_is_the_runnable_time_the_oversubscribed_host_did_not_deliver():
    # 3 VMs x 2 busy vCPUs on 4 cores, equal entitlements: each VM runs 4/3 cores, 2/3 vCPU-s stolen per second
    model = one_host(cores=4)
    vms = [model.add_vm(f"v{i}", model.host_agents[0], vcpus=2, mem_mb=4096) for i in range(3)]
    for vm in vms:
        busy(model, vm), busy(model, vm)
    model.run_for(10.0)
    for vm in vms:
        assert vm.steal_s == pytest.approx(10 * 2 / 3)
        assert vm.usr_s == pytest.approx(10 * 4 / 3)
        assert vm.idle_s == pytest.approx(0.0)


def test_threads_beyond_the_vcpus_wait_in_the_guest_not_in_steal():
    model = one_host(cores=8)
    vm = model.add_vm("v", model.host_agents[0], vcpus=2, mem_mb=4096)
    items = [busy(model, vm) for _ in range(4)]
    model.run_for(10.0)
    assert vm.steal_s == 0.0 and vm.usr_s == pytest.approx(20.0)
    assert sum(i.cputime_s for i in items) == pytest.approx(20.0)


def test_bigger_entitlement_gets_more_of_a_contended_host():
    model = one_host(cores=2)
    a = model.add_vm("a", model.host_agents[0], vcpus=2, mem_mb=4096, cpu_entitlement_mhz=3000, in_pool=False)
    b = model.add_vm("b", model.host_agents[0], vcpus=2, mem_mb=4096, cpu_entitlement_mhz=1000, in_pool=False)
    for vm in (a, b):
        busy(model, vm), busy(model, vm)
    model.run_for(10.0)
    assert a.usr_s == pytest.approx(15.0) and b.usr_s == pytest.approx(5.0)  # 4000 MHz split 3:1
    assert b.steal_s == pytest.approx(15.0)


def test_io_time_is_all_iowait_and_a_saturated_datastore_stretches_it():
    # 250 MB at 50 MB/s alone: 5 s of iowait. Four such readers on a 100 MB/s datastore: its CFQ slices of 75 ms
    # (300 ms / 4) between 12.67 ms switches leave 100 x 75 / 87.67 = 85.55 MB/s, 21.39 MB/s each: 11.69 s.
    def read_time(readers: int) -> tuple[float, float]:
        model = one_host(disk_mbps=100.0)
        vm = model.add_vm("v", model.host_agents[0], vcpus=4, mem_mb=4096)
        items = [vm.run(WorkItem(model, [Phase.read("r", 250.0)], io_mbps_max=50.0)) for _ in range(readers)]
        model.run_for(20.0)
        return items[0].end_s - items[0].start_s, items[0].iowait_s

    assert read_time(1) == pytest.approx((5.0, 5.0))
    each = 100.0 * 0.075 / (0.075 + 0.01267) / 4
    assert read_time(4) == pytest.approx((250.0 / each, 250.0 / each))


def test_iowait_only_counts_idle_vcpus():
    # one vCPU, one busy thread and one blocked reader: the vCPU is never idle, so no iowait
    model = one_host()
    vm = model.add_vm("v", model.host_agents[0], vcpus=1, mem_mb=4096)
    busy(model, vm)
    vm.run(WorkItem(model, [Phase.read("r", 1e6)], io_mbps_max=10.0))
    model.run_for(5.0)
    assert vm.iowait_s == 0.0 and vm.usr_s == pytest.approx(5.0)


def test_memory_granted_below_memory_used_turns_into_swap_io_and_stalls():
    # used = 256 (OS) + 1244 = 1500 MB, granted 1000: 500 MB swapped, 1/3 of the working set is out.
    # page-in stream: 500 MB x 0.2/s = 100 MB/s; the CPU item runs at 2/3 speed and waits 1/3 s per s.
    model = one_host(disk_mbps=150.0)
    vm = model.add_vm("v", model.host_agents[0], vcpus=2, mem_mb=1000)
    item = busy(model, vm, mem_mb=1244.0)
    model.run_for(10.0)
    assert vm.swap_mb == pytest.approx(500.0)
    assert vm.swap_io_mb == pytest.approx(1000.0)
    assert item.cputime_s == pytest.approx(10 * 2 / 3)
    assert item.iowait_s == pytest.approx(10 * 1 / 3)


def test_no_swap_while_memory_fits():
    model = one_host()
    vm = model.add_vm("v", model.host_agents[0], vcpus=2, mem_mb=4096)
    busy(model, vm, mem_mb=1000.0)
    model.run_for(10.0)
    assert vm.swap_mb == 0.0 and vm.swap_io_mb == 0.0


def test_a_background_tenant_steals_from_its_neighbours():
    def steal(tenant_cpu: float) -> float:
        model = one_host(cores=4)
        vm = model.add_vm("v", model.host_agents[0], vcpus=4, mem_mb=4096)
        for _ in range(4):
            busy(model, vm)
        tenant = model.add_vm("t", model.host_agents[0], vcpus=4, mem_mb=4096, in_pool=False)
        model.add_background(tenant, ConstantLoad(cpu=tenant_cpu))
        model.run_for(10.0)
        return vm.steal_s

    assert steal(0.0) == 0.0
    assert steal(1.0) == pytest.approx(20.0)  # equal entitlements: 2 of the 4 cores each


@pytest.mark.parametrize(
    ("profile", "busy_s"),
    [
        (PeriodicLoad(period_s=10.0, duty=0.5, high=1.0, low=0.0), 10.0),  # on in [0, 5) and [10, 15)
        (TraceLoad(times_s=(0.0, 4.0, 12.0), cpu=(1.0, 0.0, 1.0)), 8.0),  # on in [0, 4) and [12, 16)
    ],
)
def test_a_tenants_load_follows_its_profile_over_time(profile, busy_s):
    """The tenant steals from its neighbour only while its profile is high: 2 vCPU-s a second (the test above), so
    twice the seconds it is on. Its level changes at each of the profile's changes, not only at the first."""
    model = one_host(cores=4)
    vm = model.add_vm("v", model.host_agents[0], vcpus=4, mem_mb=4096)
    for _ in range(4):
        busy(model, vm)
    tenant = model.add_vm("t", model.host_agents[0], vcpus=4, mem_mb=4096, in_pool=False)
    model.add_background(tenant, profile)
    model.run_for(20.0 if isinstance(profile, PeriodicLoad) else 16.0)
    assert vm.steal_s == pytest.approx(2.0 * busy_s)


def test_phase_ends_are_interpolated_inside_the_tick():
    model = one_host()
    vm = model.add_vm("v", model.host_agents[0], vcpus=1, mem_mb=4096)
    item = vm.run(WorkItem(model, [Phase.cpu("c", 2000.0 * 2.5)]))
    model.run_for(5.0)
    assert item.end_s == pytest.approx(2.5)


@pytest.mark.parametrize("dt", [0.5, 0.25])
def test_results_converge_as_dt_shrinks(dt):
    def end_times(step: float) -> list[float]:
        model = one_host(cores=2, dt=step)
        vm = model.add_vm("v", model.host_agents[0], vcpus=4, mem_mb=4096)
        items = [vm.run(WorkItem(model, [Phase.read("r", 100.0 * (k + 1)), Phase.cpu("c", 2000.0 * 7.3 * (k + 1))],
                                 io_mbps_max=60.0)) for k in range(3)]  # fmt: skip
        model.run_for(120.0)
        return [i.end_s for i in items]

    coarse, fine = end_times(1.0), end_times(dt)
    assert all(abs(a - b) <= 2.0 for a, b in zip(coarse, fine, strict=True))  # at most a tick per phase boundary


def test_an_open_phase_waits_idle_for_work_and_ends_only_when_closed():
    model = one_host()
    vm = model.add_vm("v", model.host_agents[0], vcpus=1, mem_mb=4096)
    item = vm.run(
        WorkItem(model, [Phase("fetch", Kind.NET, 0.0, open=True), Phase.cpu("use", 2000.0)], io_mbps_max=10.0)
    )
    model.run_for(5.0)
    assert item.state == "running" and item.phase_index == 0
    assert vm.iowait_s == 0.0 and vm.idle_s == pytest.approx(5.0)  # nothing to fetch: idle, not iowait
    model.add_work(item, 25.0)  # 2.5 s at 10 MB/s
    model.run_for(5.0)
    assert item.phase_index == 0 and item.iowait_s == pytest.approx(2.5)
    model.close_phase(item)
    model.run_for(2.0)
    # closed at 10 s: the empty phase ends at once (10 s); the CPU phase starts with the next tick (11 s), 1 s long
    assert item.state == "done" and item.phase_end_s[0] == pytest.approx(10.0) and item.end_s == pytest.approx(12.0)


def test_hosts_and_vms_expose_every_column_of_their_table_as_a_declared_property():
    """A new table column needs its line on the agent (no __getattr__ hides what an agent exposes)."""
    from vcloud.agents import VM, Column, Host
    from vcloud.tables import HostTable, VMTable

    assert {n for n, v in vars(Host).items() if isinstance(v, Column)} == set(HostTable.SCHEMA)
    assert {n for n, v in vars(VM).items() if isinstance(v, Column)} == set(VMTable.SCHEMA) - {"host"}  # the agent
    model = one_host(cores=4, core_mhz=2000.0)
    vm = model.add_vm("v", model.host_agents[0], vcpus=2, mem_mb=1024)
    assert (vm.vcpus, vm.host.cores, vm.host.core_mhz, vm.steal_s) == (2, 4, 2000.0, 0.0)
