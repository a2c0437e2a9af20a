"""Cloud allocators behind `vcloud.CloudAllocator`: one module each, one registry line each."""

from __future__ import annotations

from policies.allocators.drs import DrsAllocator, DrsSettings
from policies.allocators.heterogeneous import HeterogeneousAllocator, HeterogeneousSettings
from policies.allocators.static import StaticAllocator, StaticSettings
from policies.registry import Entry

# name -> make(settings, rng); knobs are `--set <name>.*` (policies/registry.py)
ALLOCATORS: dict[str, Entry] = {
    "static": Entry(lambda s, rng: StaticAllocator(s), StaticSettings),
    "heterogeneous": Entry(lambda s, rng: HeterogeneousAllocator(s), HeterogeneousSettings),
    "drs": Entry(DrsAllocator, DrsSettings),
}

__all__ = [
    "ALLOCATORS", "DrsAllocator", "DrsSettings", "HeterogeneousAllocator", "HeterogeneousSettings",
    "StaticAllocator", "StaticSettings",
]  # fmt: skip
