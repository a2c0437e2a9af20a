"""Random small clouds for invariant and equivalence tests (seeded, so any failure replays)."""

from __future__ import annotations

import math
from dataclasses import replace

import numpy as np

from policies.allocators.drs import DrsAllocator, DrsSettings
from vcloud import CloudModel, ConstantLoad, Kind, Phase, WorkItem
from vcloud.engine import Physics
from vcloud.work import disk, nic, rack_hop

PHASE_MAKERS = (Phase.cpu, Phase.read, Phase.write, Phase.net, Phase.wait)


def random_cloud(seed: int, pooled: bool = False, **model_kwargs) -> CloudModel:
    """1-3 hosts, 1-4 VMs each, 0-6 items per VM with random phases; some memory pressure and tenants.

    Some phases are pipelined (CPU and streams at once, some on other VMs' hosts, some through files of the page
    cache: files start partly cached and dirty, so eviction, write-back and throttling all happen; some cross
    between the hosts' two racks through uplinks oversubscribed 1-10 times).

    With `pooled`, the VMs form a resource pool divided by a fast DRS (period 5 s) instead of fixed shares.
    """
    r = np.random.default_rng(seed)
    model_kwargs.setdefault("physics", Physics(rack_oversubscription=float(r.uniform(1, 10))))
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
            rack=h % 2,
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
            files = []
            for _ in range(int(r.integers(0, 4))):
                size = float(r.uniform(0, 2000))
                f = m.cache.create(vm.row, size, float(r.uniform(0, size)), now=float(r.uniform(-60, 0)))
                m.cache.files.dirty_mb[f] = float(r.uniform(0, m.cache.files.cached_mb[f]))
                m.cache.files.dirty_since_s[f] = float(r.uniform(-60, 0))
                m.cache.files.active[f] = bool(r.random() < 0.5)
                files.append(f)
            if r.random() < 0.2:
                m.add_background(vm, ConstantLoad(cpu=float(r.uniform(0, 1)), disk_mbps=float(r.uniform(0, 30))))
                continue
            for _ in range(int(r.integers(0, 7))):
                phases = [
                    PHASE_MAKERS[int(r.integers(0, 5))]("p", float(r.uniform(0, 3000)))
                    if r.random() < 0.6
                    else _random_pipe(r, vm.row, files)
                    for _ in range(int(r.integers(1, 5)))
                ]
                if r.random() < 0.2:  # a consumer that waits for producers: an open I/O phase, maybe empty
                    phases.insert(0, Phase("feed", Kind.NET, float(r.choice([0.0, 50.0])), open=True))
                elif r.random() < 0.1:  # ... or an open pipelined one (a shuffle server's disk read; maybe CPU too)
                    amount = float(r.choice([0.0, 50.0]))
                    phases.insert(0, replace(_random_pipe(r, vm.row, files), name="feed", amount=amount, open=True))
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


def _random_pipe(r: np.random.Generator, own_vm: int, files: list[int]) -> Phase:
    """A pipelined phase: maybe CPU, and 1-4 streams on this VM's or an earlier VM's devices, maybe through files."""
    streams = []
    for _ in range(int(r.integers(1, 5))):
        vm = -1 if r.random() < 0.6 else int(r.integers(0, own_vm + 1))
        if r.random() < 0.1:
            streams += rack_hop(float(r.uniform(0.1, 2)), from_vm=vm, to_vm=-1)
        elif r.random() < 0.3:
            streams.append(nic(float(r.uniform(0.1, 2)), vm=vm))
        else:
            file = int(r.choice(files)) if files and vm == -1 and r.random() < 0.7 else -1
            streams.append(disk(float(r.uniform(0.1, 2)), vm=vm, write=bool(r.random() < 0.4), file=file))
    cpu = float(r.choice([0.0, r.uniform(1, 50)]))
    return Phase.pipe("pipe", float(r.uniform(0, 300)), cpu, streams)
