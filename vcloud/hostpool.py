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

from typing import NamedTuple

import numpy as np

from vcloud.numerics import kernel, np_min, record, sum_by
from vcloud.waterfill import fill, waterfill_reference


def share_host_cores_reference(hosts, vms, vm_cap: dict, floor_mhz: float) -> dict:
    """Each VM's MHz of its host's cores (vcloud/sharing.py `share_cpu`'s first level) written plainly, host by host
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


@record
class HostPools(NamedTuple):
    """vSphere's host-local pools as the sharing kernels read them (`cpu_setup`; empty arrays: no host pool)."""

    pooled: np.ndarray  # per VM: in its host's pool
    limit0: np.ndarray  # per host: the pool's limit (0: none)
    reservation: np.ndarray  # per host: the pool's reservation
    group: np.ndarray  # the first level's items: the host pools, then every VM ...
    weight: np.ndarray  # ... and their weights (a pooled VM: 0)
    shares: np.ndarray  # per VM: its CPU shares inside its pool (0 outside one)


@kernel
def host_pool_share(
    vm_cap: np.ndarray,
    vm_host: np.ndarray,
    host_mhz: np.ndarray,
    pooled: np.ndarray,
    limit0: np.ndarray,
    reservation: np.ndarray,
    group: np.ndarray,
    w: np.ndarray,
    shares: np.ndarray,
) -> np.ndarray:
    """A host's cores through host-local pools (vcloud/hostpool.py): each host's pool first gets its reservation (at
    most what its VMs can use), then it and the host's other VMs share the rest by weight; the pool's grant goes to
    its VMs by their shares. `group`/`w`: the first level's items (the host pools, then every VM: a pooled VM with
    weight 0)."""
    n_host, n_vm = host_mhz.size, vm_cap.size
    pooled_cap = np.empty(n_vm)
    cap = np.empty(n_host + n_vm)
    for v in range(n_vm):
        pooled_cap[v] = vm_cap[v] * (1.0 if pooled[v] else 0.0)
        cap[n_host + v] = vm_cap[v] * (0.0 if pooled[v] else 1.0)
    pooled_sum = sum_by(vm_host, pooled_cap, n_host)
    floor, free = np.empty(n_host), np.empty(n_host)
    for h in range(n_host):
        pool_cap = np_min(pooled_sum[h], limit0[h])
        floor[h] = np_min(np_min(reservation[h], pool_cap), host_mhz[h])
        cap[h] = pool_cap - floor[h]
        free[h] = host_mhz[h] - floor[h]
    got = fill(group, w, cap, free, np.zeros(0))
    for h in range(n_host):
        free[h] = got[h] + floor[h]
    inner = fill(vm_host, shares, pooled_cap, free, pooled_sum)
    for v in range(n_vm):
        if not pooled[v]:
            inner[v] = got[n_host + v]
    return inner


@kernel
def cpu_setup(
    vcpus: np.ndarray,
    core_mhz_vm: np.ndarray,
    entitlement: np.ndarray,
    floor_mhz: float,
    cores: np.ndarray,
    core_mhz: np.ndarray,
    pool_limit: np.ndarray,
    pool_reservation: np.ndarray,
    in_pool: np.ndarray,
    vm_host: np.ndarray,
    cpu_shares: np.ndarray,
) -> tuple:
    """`vcloud.engine.stage_cpu`'s per-tick inputs of the sharing rounds in one call: each VM's vCPUs x core MHz and
    weight (entitlement + floor), each host's MHz, and, if some host has a finite pool limit, the host pools' arrays
    (else empty arrays): each VM pooled or not, each host's pool limit (0: none) and reservation, the first level's
    items and weights, each VM's shares inside its pool (the pools as one tuple). The NumPy form's bits (the bincount
    in VM order; the form: tests/test_kernels.py `numpy_pool_arrays`)."""
    n_host, n_vm = cores.size, vcpus.size
    vm_vcpu_mhz, weight, host_mhz = np.empty(n_vm), np.empty(n_vm), np.empty(n_host)
    for v in range(n_vm):
        vm_vcpu_mhz[v] = vcpus[v] * core_mhz_vm[v]
        weight[v] = entitlement[v] + floor_mhz
    any_pool = False
    for h in range(n_host):
        host_mhz[h] = cores[h] * core_mhz[h]
        any_pool = any_pool or np.isfinite(pool_limit[h])
    if not any_pool:
        none = HostPools(
            np.zeros(0, np.bool_), np.zeros(0), np.zeros(0), np.zeros(0, np.int64), np.zeros(0), np.zeros(0)
        )
        return vm_vcpu_mhz, weight, host_mhz, none
    pooled = np.empty(n_vm, np.bool_)
    limit0, reservation = np.empty(n_host), pool_reservation.copy()
    group, w, shares = np.empty(n_host + n_vm, np.int64), np.zeros(n_host + n_vm), np.empty(n_vm)
    for h in range(n_host):
        limit0[h] = pool_limit[h] if np.isfinite(pool_limit[h]) else 0.0
        group[h] = h
    for v in range(n_vm):
        h = vm_host[v]
        pooled[v] = in_pool[v] and np.isfinite(pool_limit[h])
        w[h] += weight[v] * (1.0 if pooled[v] else 0.0)
        w[n_host + v] = weight[v] * (0.0 if pooled[v] else 1.0)
        group[n_host + v] = h
        shares[v] = cpu_shares[v] * (1.0 if pooled[v] else 0.0)
    return vm_vcpu_mhz, weight, host_mhz, HostPools(pooled, limit0, reservation, group, w, shares)
