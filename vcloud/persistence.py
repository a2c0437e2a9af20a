"""Entitlement persistence: does a VM's rank in the pool's division carry over from one allocation to the next?

FlexSlot's section 2.3 story is a positive feedback: nodes that got less run fewer fast tasks, look less busy,
and get less again. That shows as persistence: the rank correlation (Spearman's rho: pandas' own, which agrees
with `scipy.stats.spearmanr` to 1e-15 and spares a command 0.4 s of SciPy imports) of
the per-VM CPU (and memory) entitlements of one DRS period with those of the next stays near 1; mean-reverting
rules decay toward 0. Pairs in which either division is constant (every VM alike: a static pool, the first
allocation by shares) have no ranks and are skipped.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence

import numpy as np
import pandas as pd


def rank_persistence(divisions: Sequence[np.ndarray]) -> list[float | None]:
    """Spearman's rho between each division and the next (None where either is constant)."""
    out: list[float | None] = []
    for a, b in itertools.pairwise(divisions):
        if _constant(a) or _constant(b):
            out.append(None)
            continue
        out.append(float(pd.DataFrame({"a": a, "b": b}).corr(method="spearman").iloc[0, 1]))
    return out


def _constant(a: np.ndarray) -> bool:
    return a.size < 2 or float(np.ptp(a)) <= 1e-9 * max(float(np.max(np.abs(a))), 1.0)


def entitlement_persistence(
    allocations: Sequence[tuple[float, np.ndarray, np.ndarray]], rows: np.ndarray | None = None
) -> dict[str, object]:
    """From a model's `allocations` log ((time, CPU MHz, memory MB) per allocation, over the pool's VMs): rho from
    each period to the next, per resource, their mean over the pairs that have one, and the pairs' end times.
    `rows`: the pool VMs to rank (indices into the pool's arrays; default all)."""
    pick = (lambda a: a) if rows is None else (lambda a: a[rows])
    times = [t for t, _, _ in allocations[1:]]
    result: dict[str, object] = {"periods": max(len(allocations) - 1, 0), "times_s": times}
    for name, k in (("cpu", 1), ("mem", 2)):
        rho = rank_persistence([pick(a[k]) for a in allocations])
        result[f"{name}_by_period"] = rho
        valid = [r for r in rho if r is not None and np.isfinite(r)]
        result[name] = float(np.mean(valid)) if valid else None
    return result
