"""Wrap the compiled kernels where the model calls them, for the benchmarks that time or record kernel calls.

Kernels live in the modules of their layer and callers import them by name, so a kernel is replaced in every loaded
module of the packages that holds it (a kernel called from another kernel is compiled into it and not seen).
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterable

import numba

PACKAGES = ("vcloud", "hadoop_layer", "policies", "scenarios")


def kernels() -> dict[str, Callable]:
    """Every compiled kernel of the loaded modules of the packages, by name."""
    found: dict[str, Callable] = {}
    for name, module in list(sys.modules.items()):
        if module is None or name.split(".")[0] not in PACKAGES:
            continue
        for attr, value in vars(module).items():
            if isinstance(value, numba.core.registry.CPUDispatcher):
                found.setdefault(attr, value)
    return found


def patch_kernels(wrap: Callable[[Callable, str], Callable], names: Iterable[str] | None = None) -> Callable[[], None]:
    """Replace each kernel (those of `names`, or all) with `wrap(kernel, name)` wherever a module holds it; returns
    the function that puts the originals back."""
    originals = kernels()
    chosen = set(originals if names is None else names)
    missing = chosen - set(originals)
    if missing:
        raise SystemExit(f"no compiled kernel named {sorted(missing)[0]!r}")
    wrapped = {name: wrap(originals[name], name) for name in chosen}
    undo: list[tuple[object, str, Callable]] = []
    for name, module in list(sys.modules.items()):
        if module is None or name.split(".")[0] not in PACKAGES:
            continue
        for attr in chosen:
            if vars(module).get(attr) is originals[attr]:
                undo.append((module, attr, originals[attr]))
                setattr(module, attr, wrapped[attr])

    def restore() -> None:
        for module, attr, original in undo:
            setattr(module, attr, original)

    return restore
