"""Cloud allocators behind `vcloud.CloudAllocator`: one module each, one registry line each."""

from __future__ import annotations

from collections.abc import Callable

from policies.allocators.drs import DrsAllocator, DrsSettings
from policies.allocators.heterogeneous import HeterogeneousAllocator, HeterogeneousSettings
from policies.allocators.static import StaticAllocator, StaticSettings
from vcloud.allocator import CloudAllocator

# name -> factory(settings, rng); the settings model of each is a field of scenarios.base.CloudSettings
ALLOCATORS: dict[str, Callable[..., CloudAllocator]] = {
    "static": lambda s, rng: StaticAllocator(s),
    "heterogeneous": lambda s, rng: HeterogeneousAllocator(s),
    "drs": lambda s, rng: DrsAllocator(s, rng),
}

__all__ = [
    "ALLOCATORS", "DrsAllocator", "DrsSettings", "HeterogeneousAllocator", "HeterogeneousSettings",
    "StaticAllocator", "StaticSettings",
]  # fmt: skip
