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
