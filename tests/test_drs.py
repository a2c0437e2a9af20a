"""DRS-style allocation: the divvy worked out by hand, and demand estimation from what VMs consume."""

import math

import numpy as np
import pytest

from policies.allocators.drs import DrsAllocator, DrsSettings, divide_pool
from policies.allocators.static import StaticAllocator
from tests.helpers import busy, one_host
from vcloud import Phase, Physics, WorkItem
from vcloud.memory import MemorySettings


def test_divvy_of_three_vms_by_hand():
    # Pool 6000 MHz. Shares A:B:C = 1000:1000:2000.
    #   A: reservation 1000, demand 500 (below its share)  -> floor: 1000
    #   B: demand 4000 (above its share), limit 2500        -> ceiling 2500
    #   C: demand 3000                                      -> ceiling 3000
    # x per share: 1000 + 1000x + 2000x = 6000 -> x = 5/3 -> C would get 3333 > 3000, so C = 3000 and
    # B takes the rest: 6000 - 1000 - 3000 = 2000 (below its 2500 ceiling).
    got = divide_pool(6000.0, np.array([500.0, 4000.0, 3000.0]), np.array([1000.0, 0, 0]),
                      np.array([4000.0, 2500.0, 4000.0]), np.array([1000.0, 1000.0, 2000.0]))  # fmt: skip
    np.testing.assert_allclose(got, [1000.0, 2000.0, 3000.0], rtol=1e-9)


def test_spare_capacity_goes_by_shares_up_to_limits():
    # Pool 9000, demands 500/1000/1000 -> first pass 1000/1000/1000 (A at its reservation).
    # Spare 6000 by shares 1:1:2 -> 1500/1500/3000, within the room to the limits (3000/1500/3000).
    got = divide_pool(9000.0, np.array([500.0, 1000.0, 1000.0]), np.array([1000.0, 0, 0]),
                      np.array([4000.0, 2500.0, 4000.0]), np.array([1000.0, 1000.0, 2000.0]))  # fmt: skip
    np.testing.assert_allclose(got, [2500.0, 2500.0, 4000.0], rtol=1e-9)


# The assumptions no vSphere document states (DrsSettings.cpu_spare_by, cpu_spare_pass): the same divvies by hand.
# Pool 10000 MHz, three VMs of equal shares, no reservations, limits 8000; demands 1000 / 2000 / 3000. The first pass
# gives each its demand (6000 < 10000), the spare is 4000.
THREE = (10000.0, np.array([1000.0, 2000.0, 3000.0]), np.zeros(3), np.full(3, 8000.0), np.full(3, 1000.0))


def test_spare_by_demand_keeps_each_vm_its_share_of_what_was_consumed():
    from policies.allocators.drs import spare_weights

    # by shares: 4000 / 3 each -> 2333 / 3333 / 4333 (the documented rule: every VM an equal part of the idle)
    np.testing.assert_allclose(divide_pool(*THREE), [7000 / 3, 10000 / 3, 13000 / 3], rtol=1e-9)
    # by demand 1:2:3: 667 / 1333 / 2000 -> 1667 / 3333 / 5000, i.e. demand x 10000 / 6000 (multiplicative)
    weights = spare_weights("demand", THREE[1], THREE[4])
    np.testing.assert_allclose(divide_pool(*THREE, spare_weights=weights), [5000 / 3, 10000 / 3, 5000.0], rtol=1e-6)
    # a limit still binds: C limited to 4000 takes 1000 of the spare, the other 3000 go 1:2 -> 2000 / 4000 / 4000
    limits = np.array([8000.0, 8000.0, 4000.0])
    got = divide_pool(THREE[0], THREE[1], THREE[2], limits, THREE[4], spare_weights=weights)
    np.testing.assert_allclose(got, [2000.0, 4000.0, 4000.0], rtol=1e-6)


def test_spare_by_demand_gives_an_idle_vm_only_what_the_busy_cannot_take():
    from policies.allocators.drs import spare_weights

    # Pool 10000, demands 0 and 1000, limits 8000: first pass 0 / 1000, spare 9000. By shares 4500 each -> 4500 /
    # 5500; by demand the busy VM takes 7000 (to its limit) and the idle one the 2000 left -> 2000 / 8000.
    args = (10000.0, np.array([0.0, 1000.0]), np.zeros(2), np.full(2, 8000.0), np.full(2, 1000.0))
    np.testing.assert_allclose(divide_pool(*args), [4500.0, 5500.0], rtol=1e-9)
    weights = spare_weights("demand", args[1], args[4])
    np.testing.assert_allclose(divide_pool(*args, spare_weights=weights), [2000.0, 8000.0], rtol=1e-6)
    assert spare_weights("shares", args[1], args[4]) is None  # the default: the documented divvy, untouched


def test_no_spare_pass_entitles_each_vm_to_its_demand_capped_share_only():
    # no contention: 1000 / 2000 / 3000 (the spare's 4000 go to nobody)
    np.testing.assert_allclose(divide_pool(*THREE, spare_pass=False), [1000.0, 2000.0, 3000.0], rtol=1e-9)
    # contention (demands 2000 / 4000 / 6000 of 10000): max-min by shares, 2000 / 4000 / 4000, with or without the
    # spare pass (there is no spare)
    busy_args = (10000.0, np.array([2000.0, 4000.0, 6000.0]), np.zeros(3), np.full(3, 8000.0), np.full(3, 1000.0))
    for spare_pass in (True, False):
        np.testing.assert_allclose(divide_pool(*busy_args, spare_pass=spare_pass), [2000.0, 4000.0, 4000.0])


def _pair(settings: DrsSettings):
    """A CPU-hungry VM and an I/O-bound VM sharing a 4-core host and its pool."""
    model = one_host(cores=4, disk_mbps=100.0)
    model.allocator = DrsAllocator(settings, model.rng)
    host = model.host_agents[0]
    hungry = model.add_vm("hungry", host, vcpus=4, mem_mb=4096)
    reader = model.add_vm("reader", host, vcpus=4, mem_mb=4096)
    for _ in range(4):
        busy(model, hungry)
    reader.run(WorkItem(model, [Phase.read("scan", 1e6)], io_mbps_max=50.0))
    return model, hungry, reader


def test_drs_gives_the_idle_vm_less_cpu():
    model, hungry, reader = _pair(DrsSettings(period_s=60, sample_s=10, window_s=60, enforce="shares"))
    model.run_for(30.0)
    assert hungry.cpu_entitlement_mhz == pytest.approx(reader.cpu_entitlement_mhz)  # no history: by shares
    model.run_for(60.0)
    # hungry used all 4 cores (8000 MHz), reader nothing: the whole pool follows the demand
    assert hungry.cpu_entitlement_mhz == pytest.approx(8000.0, rel=1e-6)
    assert reader.cpu_entitlement_mhz == pytest.approx(0.0, abs=1e-6)


def test_entitlements_as_caps_let_demand_grow_only_through_the_spare():
    # enforce=limit: each VM is capped at its entitlement. Period 1: no history, 4000/4000. Hungry uses its 4000,
    # reader nothing: first pass 4000/0, spare 4000 split by shares -> 6000/2000. Period 2: 6000/0 + 1000 each.
    model, hungry, reader = _pair(DrsSettings(period_s=60, sample_s=10, window_s=60, enforce="limit"))
    model.run_for(30.0)
    assert hungry.cpu_limit_mhz == reader.cpu_limit_mhz == pytest.approx(4000.0)
    model.run_for(60.0)
    assert (hungry.cpu_limit_mhz, reader.cpu_limit_mhz) == (pytest.approx(6000.0), pytest.approx(2000.0))
    model.run_for(60.0)
    assert (hungry.cpu_limit_mhz, reader.cpu_limit_mhz) == (pytest.approx(7000.0), pytest.approx(1000.0))


def test_caps_without_a_spare_pass_never_grow():
    # enforce=limit, cpu_spare_pass=false: period 1 (no history) 4000 / 4000; hungry uses its 4000, the reader none:
    # first pass 4000 / 0 and no spare, so the caps are what each used, and stay there (the spare pass above: 6000 /
    # 2000, then 7000 / 1000).
    settings = DrsSettings(period_s=60, sample_s=10, window_s=60, enforce="limit", cpu_spare_pass=False)
    model, hungry, reader = _pair(settings)
    model.run_for(30.0)
    assert hungry.cpu_limit_mhz == reader.cpu_limit_mhz == pytest.approx(4000.0)
    for _ in range(2):
        model.run_for(60.0)
        assert hungry.cpu_limit_mhz == pytest.approx(4000.0) and reader.cpu_limit_mhz == pytest.approx(0.0, abs=1e-3)


def test_caps_with_the_spare_by_demand_go_to_the_vm_that_used_the_cpu():
    # enforce=limit, cpu_spare_by=demand: period 2 first pass 4000 / 0, the spare 4000 by demand 4000 : 0 goes to
    # hungry up to its 8000 (the reader's weight is 1e-9 x its shares: nothing while hungry can take it): 8000 / 0.
    settings = DrsSettings(period_s=60, sample_s=10, window_s=60, enforce="limit", cpu_spare_by="demand")
    model, hungry, reader = _pair(settings)
    model.run_for(90.0)
    assert hungry.cpu_limit_mhz == pytest.approx(8000.0) and reader.cpu_limit_mhz == pytest.approx(0.0, abs=1e-3)


def test_demand_from_consumption_misses_a_starved_vm_unless_ready_time_counts():
    # Both VMs want 4 cores on a 4-core host (2 each delivered). Without ready time, DRS sees 4000 MHz each;
    # with ready time it sees the 8000 MHz each would use without contention.
    def demand(count_ready: bool) -> np.ndarray:
        model = one_host(cores=4)
        model.allocator = allocator = DrsAllocator(DrsSettings(period_s=60, sample_s=10, count_ready=count_ready))
        for name in ("a", "b"):
            vm = model.add_vm(name, model.host_agents[0], vcpus=4, mem_mb=4096)
            for _ in range(4):
                busy(model, vm)
        model.run_for(60.0)
        return allocator.last_cpu_demand

    np.testing.assert_allclose(demand(False), [4000.0, 4000.0])
    np.testing.assert_allclose(demand(True), [8000.0, 8000.0])


def test_memory_demand_is_active_plus_a_quarter_of_idle():
    # consumed = 256 OS (25% active) + 1000 item (20% active) = 1256 MB; active = 64 + 200 = 264 MB
    # demand = 264 + 0.25 x (1256 - 264) = 512 MB (idle tax 75%); with many sampled pages the estimate is close.
    model = one_host()
    model.allocator = allocator = DrsAllocator(DrsSettings(mem_sample_pages=1_000_000, mem_sample_period_s=60),
                                               np.random.default_rng(3))  # fmt: skip
    vm = model.add_vm("v", model.host_agents[0], vcpus=2, mem_mb=4096)
    busy(model, vm, mem_mb=1000.0, mem_active_fraction=0.2)
    model.run_for(300.0)
    assert allocator.last_mem_demand[0] == pytest.approx(512.0, rel=0.01)


def test_static_allocation_is_an_equal_capped_slice_of_the_pool():
    # without overhead memory: with it, each VM's 60.67 MB are paid from the pool (tests/test_memory.py)
    model = one_host(cores=4, physics=Physics(memory=MemorySettings(overhead=False)))
    model.allocator = StaticAllocator()
    model.set_pool(cpu_mhz=6000.0, mem_mb=3000.0)
    vms = [model.add_vm(f"v{i}", model.host_agents[0], vcpus=4, mem_mb=4096) for i in range(2)]
    for vm in vms:
        for _ in range(4):
            busy(model, vm)
    model.run_for(10.0)
    for vm in vms:
        assert vm.cpu_entitlement_mhz == vm.cpu_limit_mhz == 3000.0 and vm.mem_granted_mb == 1500.0
        assert vm.usr_s == pytest.approx(10 * 1.5)  # 3000 MHz = 1.5 cores, though the host has 2 free
    assert not math.isinf(vms[0].cpu_limit_mhz)
