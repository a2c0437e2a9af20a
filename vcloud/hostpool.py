"""Host-local resource pools: how an ESX host enforces its part of a DRS cluster's resource pool.

vSphere copies the cluster's resource-pool tree to every host as a host-local tree; each period DRS sets the
host pool's reservation and limit to what the pool's VMs on that host were entitled to, and inside a host pool
the VMs share by their shares (reference/algorithms.md 10.5; VMware patent US 9,389,924; vSphere SDK programming
guide). A pool limit is hard: the host never gives the pool more, even when cores are idle.

So a host's cores go, in two levels, to its pool (if it has a finite `pool_cpu_limit_mhz`) and its other VMs:
1. the host pool first gets its reservation (`pool_cpu_reservation_mhz`, at most what its VMs can use), then it
   and the host's VMs outside the pool share the rest by weight (the host pool weighs what its VMs are entitled
   to; another VM its own entitlement), the pool capped by its limit and its VMs' demand, each VM by its own;
2. the host pool's grant goes to its VMs by their CPU shares (`cpu_shares`), each up to its demand and limit.
Without host pools (every limit infinite) it is one level: the host's VMs by entitlement (per-VM enforcement).
Where it stops: a reservation is served before shares (ESX's clip(S x, R, L) gives a pool above its reservation
at most its share; here reservation plus share of the rest), and memory reservations of host pools are not
modelled (the FlexSlot hosts never run short of memory; vcloud/memory.py).
"""

from __future__ import annotations

import numpy as np

from vcloud.waterfill import waterfill_reference


def share_host_cores_reference(hosts, vms, vm_cap: dict, floor_mhz: float) -> dict:
    """Each VM's MHz of its host's cores (vcloud/kernels.py `share_cpu`'s first level) written plainly, host by host
    (the oracle)."""
    got: dict[int, float] = {}
    for h in range(hosts.n):
        mine = [v for v in range(vms.n) if vms.host[v] == h]
        capacity = float(hosts.cores[h] * hosts.core_mhz[h])
        limit = float(hosts.pool_cpu_limit_mhz[h])
        weight = {v: float(vms.cpu_entitlement_mhz[v]) + floor_mhz for v in mine}
        if not np.isfinite(limit):
            got.update(zip(mine, waterfill_reference([weight[v] for v in mine], [vm_cap[v] for v in mine],
                                                     capacity), strict=True))  # fmt: skip
            continue
        pooled = [v for v in mine if vms.in_pool[v]]
        others = [v for v in mine if not vms.in_pool[v]]
        pool_cap = min(sum(vm_cap[v] for v in pooled), limit)
        floor = min(float(hosts.pool_cpu_reservation_mhz[h]), pool_cap, capacity)
        level1 = waterfill_reference(
            [sum(weight[v] for v in pooled), *(weight[v] for v in others)],
            [pool_cap - floor, *(vm_cap[v] for v in others)],
            capacity - floor,
        )
        got.update(zip(others, level1[1:], strict=True))
        inner = waterfill_reference([float(vms.cpu_shares[v]) for v in pooled], [vm_cap[v] for v in pooled],
                                    level1[0] + floor)  # fmt: skip
        got.update(zip(pooled, inner, strict=True))
    return got
