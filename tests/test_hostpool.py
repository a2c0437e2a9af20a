"""Host-local pools by hand (vcloud/hostpool.py; DRS's enforce="host-pool"): a host's pool is capped at what its VMs
were entitled to, and inside it the VMs share by shares, not by entitlement."""

import numpy as np
import pytest

from policies.allocators.drs import DrsAllocator, DrsSettings
from tests.helpers import busy
from vcloud import CloudAllocator, CloudModel, Entitlements


class HandAllocator(CloudAllocator):
    """Fixed entitlements and host pools: a1 3000, a2 1000 (host A's pool: 4000); b1 5000, b2 3000 (host B's: 8000)."""

    def entitlements(self, view, now):
        cpu = np.array([3000.0, 1000.0, 5000.0, 3000.0])
        return Entitlements(
            cpu, np.full(4, np.inf), view.vm("mem_mb").copy(), host_cpu_limit_mhz=np.array([4000.0, 8000.0])
        )


def two_hosts(a2_threads: float, b1_threads: float) -> tuple[CloudModel, dict]:
    """Hosts A and B of 4 cores x 2000 MHz. a1: 4 vCPUs (4000 shares), a2, b1, b2: 2 vCPUs (2000 shares) each."""
    model = CloudModel(rng=1, check=True)
    model.allocator = HandAllocator()
    vms = {}
    for h, names in enumerate((("a1", "a2"), ("b1", "b2"))):
        host = model.add_host(f"h{h}", cores=4, core_mhz=2000, mem_mb=65536, disk_mbps=100, nic_mbps=125)
        for name in names:
            vms[name] = model.add_vm(name, host, vcpus=4 if name == "a1" else 2, mem_mb=4096)
    busy(model, vms["a1"], threads=4)
    busy(model, vms["a2"], threads=a2_threads)
    busy(model, vms["b1"], threads=b1_threads)
    busy(model, vms["b2"], threads=2)
    model.run_for(10.0)
    return model, {name: vm.cpu_used_mhz for name, vm in vms.items()}


def test_a_host_pool_is_capped_at_its_vms_entitlements_and_shared_by_shares():
    # Host A's pool limit is 4000 MHz though its 8 cores could give 8000: a1 wants 8000, a2 500 (demand below its
    # 1000 entitled): a2 gets its 500, a1 the pool's other 3500 (above its 3000 entitled); 4000 MHz stay idle.
    # Host B's pool (8000, the whole host): b1 wants 1000, b2 4000 (2 vCPUs): both served.
    _, used = two_hosts(a2_threads=0.25, b1_threads=0.5)
    assert used == pytest.approx({"a1": 3500.0, "a2": 500.0, "b1": 1000.0, "b2": 4000.0})


def test_inside_a_host_pool_demand_above_the_limit_is_shared_by_shares_not_entitlements():
    # a2 wants 4000 too: the 4000 of host A's pool go 2:1 by shares (4000 : 2000), not 3:1 by entitlement
    # (3000 : 1000); on host B, b1 and b2 want 4000 each and the 8000 of the host suffice.
    _, used = two_hosts(a2_threads=2.0, b1_threads=2.0)
    assert used == pytest.approx({"a1": 8000.0 / 3, "a2": 4000.0 / 3, "b1": 4000.0, "b2": 4000.0})


def test_drs_sets_each_host_pool_to_what_its_vms_were_entitled_to():
    model = CloudModel(rng=1, check=True)
    model.allocator = allocator = DrsAllocator(DrsSettings(period_s=60, sample_s=10, enforce="host-pool"))
    vms = []
    for h in range(2):
        host = model.add_host(f"h{h}", cores=4, core_mhz=2000, mem_mb=65536, disk_mbps=100, nic_mbps=125)
        vms += [model.add_vm(f"v{h}{i}", host, vcpus=4, mem_mb=4096) for i in range(2)]
    for vm, threads in zip(vms, (4, 1, 2, 0.5), strict=True):
        busy(model, vm, threads=threads)
    model.run_for(130.0)
    cpu = allocator.last_cpu_entitlement
    np.testing.assert_allclose(model.hosts.view("pool_cpu_limit_mhz"), [cpu[:2].sum(), cpu[2:].sum()])
    mem = allocator.last_mem_entitlement
    np.testing.assert_allclose(model.hosts.view("pool_mem_limit_mb"), [mem[:2].sum(), mem[2:].sum()])
    # per-VM limits stay the configured ones (none): the host pool is the cap
    assert np.isinf(model.vms.view("cpu_limit_mhz")).all()
