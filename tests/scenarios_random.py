"""Random small clouds for invariant and equivalence tests (seeded, so any failure replays)."""

from __future__ import annotations

import math

import numpy as np

from policies.allocators.drs import DrsAllocator, DrsSettings
from vcloud import CloudModel, ConstantLoad, Kind, Phase, WorkItem

PHASE_MAKERS = (Phase.cpu, Phase.read, Phase.write, Phase.net, Phase.wait)


def random_cloud(seed: int, pooled: bool = False, **model_kwargs) -> CloudModel:
    """1-3 hosts, 1-4 VMs each, 0-6 items per VM with random phases; some memory pressure and tenants.

    With `pooled`, the VMs form a resource pool divided by a fast DRS (period 5 s) instead of fixed shares.
    """
    r = np.random.default_rng(seed)
    m = CloudModel(rng=seed, **model_kwargs)
    if pooled:
        m.allocator = DrsAllocator(DrsSettings(period_s=5, sample_s=1, window_s=5, mem_sample_period_s=5), m.rng)
    for h in range(int(r.integers(1, 4))):
        host = m.add_host(
            f"h{h}",
            cores=int(r.integers(1, 9)),
            core_mhz=float(r.choice([2000.0, 2400.0])),
            mem_mb=16384,
            disk_mbps=float(r.uniform(20, 200)),
            nic_mbps=float(r.uniform(50, 125)),
        )
        for v in range(int(r.integers(1, 5))):
            vcpus = int(r.integers(1, 5))
            vm = m.add_vm(
                f"h{h}v{v}",
                host,
                vcpus=vcpus,
                mem_mb=float(r.choice([1024.0, 4096.0])),
                cpu_limit_mhz=float(r.choice([math.inf, 1500.0 * vcpus])),
                cpu_entitlement_mhz=float(r.uniform(100, 5000)),
                in_pool=pooled,
            )
            m.vms.mem_granted_mb[vm.row] = float(r.uniform(300, 4096))
            if r.random() < 0.2:
                m.add_background(vm, ConstantLoad(cpu=float(r.uniform(0, 1)), disk_mbps=float(r.uniform(0, 30))))
                continue
            for _ in range(int(r.integers(0, 7))):
                phases = [
                    PHASE_MAKERS[int(r.integers(0, 5))]("p", float(r.uniform(0, 3000)))
                    for _ in range(int(r.integers(1, 5)))
                ]
                if r.random() < 0.2:  # a consumer that waits for producers: an open I/O phase, maybe empty
                    phases.insert(0, Phase("feed", Kind.NET, float(r.choice([0.0, 50.0])), open=True))
                vm.run(
                    WorkItem(
                        m,
                        phases,
                        threads=float(r.integers(1, 3)),
                        mem_mb=float(r.uniform(0, 800)),
                        io_mbps_max=float(r.choice([math.inf, 40.0])),
                    )
                )
    return m
