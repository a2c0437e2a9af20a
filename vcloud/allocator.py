"""The `CloudAllocator` interface: how a resource pool is divided among its VMs.

Implementations live in `policies/allocators/`; the model calls them and applies what they return.
An allocator sees the cloud through a `CloudView` (read-only arrays) and never writes to it.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass

import numpy as np

from vcloud.tables import HostTable, VMTable


def _readonly(a: np.ndarray) -> np.ndarray:
    v = a.view()
    v.flags.writeable = False
    return v


class CloudView:
    """Read-only window on hosts and VMs for policies: `view.vm("steal_s")`, `view.host("cores")`."""

    def __init__(self, hosts: HostTable, vms: VMTable, pool_cpu_mhz: float, pool_mem_mb: float) -> None:
        self._hosts, self._vms = hosts, vms
        self.pool_cpu_mhz = pool_cpu_mhz
        self.pool_mem_mb = pool_mem_mb

    def vm(self, column: str) -> np.ndarray:
        return _readonly(self._vms.view(column))

    def host(self, column: str) -> np.ndarray:
        return _readonly(self._hosts.view(column))

    @property
    def n_vms(self) -> int:
        return self._vms.n

    @property
    def n_hosts(self) -> int:
        return self._hosts.n

    @property
    def vm_core_mhz(self) -> np.ndarray:
        return self.host("core_mhz")[self._vms.view("host")]

    @property
    def vm_max_mhz(self) -> np.ndarray:
        """What a VM can use at most: all its vCPUs busy, each on a whole core."""
        return self.vm("vcpus") * self.vm_core_mhz


@dataclass
class Entitlements:
    """Per-VM allocation for the VMs in the pool (arrays over `CloudView.vm('in_pool')`).

    cpu_entitlement_mhz weights the host's CPU sharing; cpu_limit_mhz is a hard cap (inf = none);
    mem_granted_mb is the memory the VM is entitled to: with per-VM enforcement its memory target (the hypervisor
    reclaims what it holds beyond it), with host-local pools its part of its host pool's memory limit.
    """

    cpu_entitlement_mhz: np.ndarray
    cpu_limit_mhz: np.ndarray
    mem_granted_mb: np.ndarray
    # host-local pools (vcloud/hostpool.py), one value per host (inf / 0: none); None: per-VM enforcement
    host_cpu_limit_mhz: np.ndarray | None = None
    host_cpu_reservation_mhz: np.ndarray | None = None
    host_mem_limit_mb: np.ndarray | None = None

    def validate(self, n: int) -> None:
        for name in ("cpu_entitlement_mhz", "cpu_limit_mhz", "mem_granted_mb"):
            a = getattr(self, name)
            if a.shape != (n,):
                raise ValueError(f"allocator returned {name} of shape {a.shape}, expected ({n},)")
            if np.any(np.isnan(a)) or np.any(a < 0):
                raise ValueError(f"allocator returned negative or NaN {name}")


class CloudAllocator(ABC):
    """Divides the pool. `period_s` None means once at start; `sample_s` None means no sampling."""

    name: str = "allocator"
    period_s: float | None = None
    sample_s: float | None = None

    def observe(self, view: CloudView, now: float) -> None:  # noqa: B027 - optional hook
        """Called every `sample_s` seconds to gather demand history."""

    @abstractmethod
    def entitlements(self, view: CloudView, now: float) -> Entitlements:
        """Divide the pool among the VMs with `in_pool` set."""
