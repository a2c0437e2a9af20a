"""Weighted max-min sharing ("water-filling"): the one rule behind every division in the cloud.

A hypervisor divides a host's cores among its VMs by entitlement, a datastore divides its bandwidth
among outstanding I/O streams, a guest scheduler divides a VM's grant among runnable threads, and DRS
divides a pool among VMs by shares (reference/algorithms.md section 1.2, step 3). All of them are

    give item i   min(cap_i, w_i * x_g)   with x_g chosen so that each group g hands out
    min(capacity_g, sum of caps in g)     (idle capacity is passed on: work conserving).

`waterfill` is the compiled form used on the hot path (a tick calls it a dozen times on a few hundred
items, where NumPy's per-call cost, not the arithmetic, was the time: 36 -> 3.4 us on 200 items in 20
groups); `waterfill_reference` is the same rule written as a plain loop, used by the reference engine and
the tests as the oracle. The kernel does the arithmetic of the NumPy form it replaced in the same order
(sums in item order as `np.bincount` does, `max(x, 0)` as `np.maximum` does), so its results are the
same bits: the golden digests did not move.
"""

from __future__ import annotations

import numpy as np

from vcloud.numerics import kernel, np_max

FloatArray = np.ndarray


_NONE = np.zeros(0)  # "no weights" / "no cap sums" to the kernel


def waterfill(
    group: np.ndarray,
    weight: FloatArray | None,
    cap: FloatArray,
    capacity: FloatArray,
    cap_sum: FloatArray | None = None,
) -> FloatArray:
    """Share `capacity[g]` among the items of each group g by weight, no item above its cap.

    Progressive filling: offer every unsaturated item its weighted share of what is left; items whose
    cap is below the offer are saturated and leave the pool; repeat until nobody saturates. Each pass
    saturates at least one item, so the loop runs at most (largest group) times, usually once or twice.
    Items with zero weight or zero cap get nothing; `weight=None` means weight 1 for every item (equal
    shares). `cap_sum`, if the caller has it, is `np.bincount(group, cap, minlength=len(capacity))`.
    Groups that can serve every cap in full hand out the caps without a pass.
    """
    f = np.asarray  # one compiled signature: int64 groups, float64 values
    return fill(
        f(group, np.int64),
        _NONE if weight is None else f(weight, float),
        f(cap, float),
        f(capacity, float),
        _NONE if cap_sum is None else f(cap_sum, float),
    )


def waterfill_reference(weights: list[float], caps: list[float], capacity: float) -> list[float]:
    """One group of `waterfill`, as a plain loop (the oracle for tests and the reference engine)."""
    alloc = [0.0] * len(weights)
    if sum(caps) <= capacity:
        return [c if w > 0 else 0.0 for w, c in zip(weights, caps, strict=True)]
    active = [i for i in range(len(weights)) if weights[i] > 0 and caps[i] > 0]
    left = capacity
    while active:
        total_weight = sum(weights[i] for i in active)
        level = left / total_weight
        saturated = [i for i in active if weights[i] * level >= caps[i]]
        if not saturated:
            for i in active:
                alloc[i] = weights[i] * level
            break
        for i in saturated:
            alloc[i] = caps[i]
            left = max(left - caps[i], 0.0)
        active = [i for i in active if i not in saturated]
    return alloc


def divvy(shares: FloatArray, lower: FloatArray, upper: FloatArray, total: float) -> FloatArray:
    """Divide `total` by shares with per-item floor and ceiling: E_i = clip(S_i * x, R_i, U_i), sum E = total.

    The DRS divvy of reference/algorithms.md section 1.2 step 3 (reservation floor, limit/demand
    ceiling). If the ceilings add up to less than `total`, everyone gets the ceiling (the caller hands
    out the spare in a second pass). Floors above `total` are refused: admission control on
    reservations is for the pool to check, which must have rejected such a configuration.
    """
    from scipy.optimize import brentq  # only DRS divides a pool: the other runs need not import scipy

    shares = np.asarray(shares, float)
    lower = np.asarray(lower, float)
    upper = np.maximum(np.asarray(upper, float), lower)
    if lower.sum() > total * (1 + 1e-12):
        raise ValueError(f"reservations {lower.sum():.1f} exceed the pool capacity {total:.1f}")
    if upper.sum() <= total:
        return upper.copy()

    def handed_out(x: float) -> float:
        return float(np.clip(shares * x, lower, upper).sum()) - total

    x_max = float(np.max(upper / np.maximum(shares, 1e-300)))
    x = brentq(handed_out, 0.0, x_max, xtol=1e-14, rtol=4 * np.finfo(float).eps, maxiter=500)
    return np.clip(shares * x, lower, upper)


@kernel
def fill(
    group: np.ndarray, weight: np.ndarray, cap: np.ndarray, capacity: np.ndarray, cap_sum: np.ndarray
) -> np.ndarray:
    """`vcloud.waterfill.waterfill` (empty `weight`: equal shares; empty `cap_sum`: computed here). The arithmetic
    of the NumPy form it replaced, in the same order: sums in item order as `np.bincount` adds."""
    n, n_groups = cap.size, capacity.size
    weighted = weight.size > 0
    if cap_sum.size == 0:
        cap_sum = np.zeros(n_groups)
        for i in range(n):
            cap_sum[group[i]] += cap[i]
    short = np.empty(n_groups, np.bool_)
    for j in range(n_groups):
        short[j] = not (cap_sum[j] <= capacity[j])
    alloc = np.empty(n)
    rows = np.empty(n, np.int64)
    m = 0
    for i in range(n):
        c = cap[i]
        if c > 0 and (not weighted or weight[i] > 0):
            alloc[i] = c
            if short[group[i]]:
                rows[m] = i
                m += 1
        else:
            alloc[i] = 0.0
    if m == 0:
        return alloc
    # Each group's level depends on its own rows alone, so a group is filled to the end before the next (a group that
    # settles keeps its level: the rounds of the others do not touch it), its rows in item order as before: the same
    # sums in the same order, without passing over every group's rows as often as the slowest group needs.
    start = np.zeros(n_groups + 1, np.int64)
    for j in range(m):
        start[group[rows[j]] + 1] += 1
    for k in range(n_groups):
        start[k + 1] += start[k]
    ordered = np.empty(m, np.int64)
    at = start[:n_groups].copy()
    for j in range(m):
        k = group[rows[j]]
        ordered[at[k]] = rows[j]
        at[k] += 1
    passes, sizes = np.zeros(n_groups, np.int64), np.zeros(n_groups, np.int64)
    settled, totals = np.empty(n_groups), np.empty(n_groups)
    for k in range(n_groups):
        lo, size = start[k], start[k + 1] - start[k]
        if size == 0:
            continue
        remaining, level = capacity[k], 0.0
        while True:
            passes[k] += 1
            total = 0.0
            for j in range(lo, lo + size):
                total += weight[ordered[j]] if weighted else 1.0
            if total > 0:
                level = remaining / total
            taken = 0.0
            kept = 0
            for j in range(lo, lo + size):
                i = ordered[j]
                offer = weight[i] * level if weighted else level
                if offer >= cap[i]:
                    taken += cap[i]
                else:
                    ordered[lo + kept] = i
                    kept += 1
            if kept == size:
                for j in range(lo, lo + size):
                    i = ordered[j]
                    alloc[i] = weight[i] * level if weighted else level
                settled[k], totals[k], sizes[k] = remaining, total, size
                break
            remaining = np_max(remaining - taken, 0.0)
            size = kept
    # The rounds of all groups at once also clipped a settled group's capacity at 0 while others went on: that changes
    # its level only if it never gave anything out and its capacity was below 0 (or -0.0); as they did, so here.
    last = passes.max()
    for k in range(n_groups):
        if 0 < passes[k] < last and sizes[k] and (settled[k] < 0 or (settled[k] == 0 and np.signbit(settled[k]))):
            level = np_max(settled[k] - 0.0, 0.0) / totals[k]  # a group with rows has weight
            for j in range(start[k], start[k] + sizes[k]):
                i = ordered[j]
                alloc[i] = weight[i] * level if weighted else level
    return alloc
