"""Weighted max-min sharing: hand-worked cases and the properties that define it."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from vcloud.waterfill import divvy, fill, waterfill, waterfill_reference


def test_small_demand_is_served_and_the_rest_is_split_by_weight():
    # capacity 9: item 0 wants 1 (served), items 1 and 2 split the other 8 in ratio 1:2
    got = waterfill(np.array([0, 0, 0]), np.array([1.0, 1.0, 2.0]), np.array([1.0, 10.0, 10.0]), np.array([9.0]))
    np.testing.assert_allclose(got, [1.0, 8 / 3, 16 / 3])


def test_groups_are_independent_and_idle_capacity_is_not_handed_out_beyond_caps():
    got = waterfill(np.array([0, 1, 1]), np.array([1.0, 1.0, 1.0]), np.array([3.0, 1.0, 2.0]), np.array([10.0, 10.0]))
    np.testing.assert_allclose(got, [3.0, 1.0, 2.0])


def test_cascading_saturation():
    # shares 1:1:1:1 of 10 -> 2.5 each; caps 1 and 2 saturate, the other two split 7 -> 3.5 each
    got = waterfill(np.zeros(4, int), np.ones(4), np.array([1.0, 2.0, 9.0, 9.0]), np.array([10.0]))
    np.testing.assert_allclose(got, [1.0, 2.0, 3.5, 3.5])


def test_divvy_floors_and_ceilings():
    # x = 5/3 per share: A held at its floor 1000, C capped at 3000, B takes the rest
    got = divvy(np.array([1000.0, 1000.0, 2000.0]), np.array([1000.0, 0, 0]), np.array([1000.0, 2500, 3000]), 6000.0)
    np.testing.assert_allclose(got, [1000.0, 2000.0, 3000.0], rtol=1e-9)


def test_divvy_refuses_reservations_above_capacity():
    with pytest.raises(ValueError, match="reservations"):
        divvy(np.ones(2), np.array([600.0, 600.0]), np.array([900.0, 900.0]), 1000.0)


cases = st.integers(1, 8).flatmap(
    lambda n: st.tuples(
        st.lists(st.one_of(st.just(0.0), st.floats(1e-3, 10.0)), min_size=n, max_size=n),
        st.lists(st.floats(0.0, 100.0), min_size=n, max_size=n),
        st.floats(0.0, 300.0),
    )
)


@settings(max_examples=200, deadline=None)
@given(cases)
def test_waterfill_is_max_min_fair(case):
    weights, caps, capacity = np.array(case[0]), np.array(case[1]), case[2]
    got = waterfill(np.zeros(len(weights), int), weights, caps, np.array([capacity]))
    served = (weights > 0) & (caps > 0)
    assert np.all(got >= 0) and np.all(got <= caps + 1e-9)
    assert np.all(got[~served] == 0)
    assert got.sum() == pytest.approx(min(capacity, caps[served].sum()), abs=1e-7)
    # nobody below its cap gets less per weight than anybody else gets per weight
    level = got[served] / weights[served]
    unsaturated = got[served] < caps[served] - 1e-9
    if unsaturated.any():
        assert level[unsaturated].min() >= level.max() - 1e-7
    np.testing.assert_allclose(got, waterfill_reference(list(weights), list(caps), capacity), atol=1e-9)


groups = st.integers(1, 4).flatmap(
    lambda n_groups: st.lists(
        st.tuples(st.integers(0, n_groups - 1), st.sampled_from([0.0, 0.5, 1.0, 3.0]), st.floats(0.0, 50.0)),
        max_size=25,
    ).map(lambda items: (n_groups, items))
)


@settings(max_examples=200, deadline=None)
@given(groups, st.lists(st.floats(0.0, 120.0), min_size=4, max_size=4), st.booleans(), st.booleans())
def test_each_group_is_shared_on_its_own(case, capacities, weighted, with_cap_sum):
    # the compiled kernel over many groups at once (equal shares, given cap sums) against the plain loop per group
    n_groups, items = case
    group = np.array([g for g, _, _ in items], dtype=np.int64)
    weight = np.array([w for _, w, _ in items]) if weighted else None
    cap = np.array([c for _, _, c in items])
    capacity = np.array(capacities[:n_groups])
    cap_sum = np.bincount(group, cap, minlength=n_groups) if with_cap_sum else None
    got = waterfill(group, weight, cap, capacity, cap_sum)
    for g in range(n_groups):
        mine = group == g
        w = list(weight[mine]) if weighted else [1.0] * int(mine.sum())
        expect = waterfill_reference(w, list(cap[mine]), float(capacity[g]))
        np.testing.assert_allclose(got[mine], expect, atol=1e-9)


def test_integer_inputs_are_shared_as_floats():
    # callers pass integer caps (a count of slots), integer group ids of any width, and cap sums from np.bincount,
    # which gives int64 zeros for no rows: the kernel sees one signature (it refuses an integer cap_sum it would
    # have to fill with floats)
    got = waterfill(np.array([0, 0], dtype=np.int32), None, np.array([3, 5]), np.array([6]))
    np.testing.assert_array_equal(got, [3.0, 3.0])
    no_rows = np.zeros(0, dtype=np.int64)
    got = waterfill(no_rows, None, np.zeros(0), np.array([1.0]), cap_sum=np.bincount(no_rows, np.zeros(0), minlength=1))
    assert got.size == 0 and got.dtype == np.float64


def rounds_of_all_groups(group, weight, cap, capacity, cap_sum):
    """The water-fill as `fill` did it before it filled group by group: every round passes over the rows of all
    groups, and every group's capacity is clipped at 0 after each round (plain loops; the oracle of the next test)."""
    n, n_groups = cap.size, capacity.size
    weighted = weight is not None
    if cap_sum is None:
        cap_sum = np.zeros(n_groups)
        for i in range(n):
            cap_sum[group[i]] += cap[i]
    short = [not (cap_sum[k] <= capacity[k]) for k in range(n_groups)]
    alloc = np.zeros(n)
    rows = []
    for i in range(n):
        if cap[i] > 0 and (not weighted or weight[i] > 0):
            alloc[i] = cap[i]
            if short[group[i]]:
                rows.append(i)
    remaining, level = capacity.copy(), np.zeros(n_groups)
    while rows:
        sums = np.zeros(n_groups)
        for i in rows:
            sums[group[i]] += weight[i] if weighted else 1.0
        for k in range(n_groups):
            if sums[k] > 0:
                level[k] = remaining[k] / sums[k]
        sums = np.zeros(n_groups)
        kept = []
        for i in rows:
            offer = weight[i] * level[group[i]] if weighted else level[group[i]]
            if offer >= cap[i]:
                sums[group[i]] += cap[i]
            else:
                kept.append(i)
        if len(kept) == len(rows):
            for i in rows:
                alloc[i] = weight[i] * level[group[i]] if weighted else level[group[i]]
            break
        for k in range(n_groups):
            r = remaining[k] - sums[k]
            remaining[k] = r if (r > 0.0 or r != r) else 0.0  # np_max(r, 0.0)
        rows = kept
    return alloc


@settings(max_examples=400, deadline=None)
@given(st.integers(0, 2**32 - 1), st.integers(1, 6), st.integers(0, 40), st.booleans(), st.booleans())
def test_fill_group_by_group_is_the_rounds_of_all_groups_bit_for_bit(seed, n_groups, n, weighted, given_sum):
    """Groups that settle after one round and after many, ties, tiny and huge caps, capacities below 0 and -0.0 (a
    settled group's capacity clipped while others go on)."""

    r = np.random.default_rng(seed)
    group = r.integers(0, n_groups, n).astype(np.int64)
    cap = r.choice([0.0, 1.0, 2.5, 1e-9, 3.0, 7.0, 1e6], n) * r.choice([1.0, 1.0, 0.3], n)
    weight = r.choice([0.0, 1.0, 2.0, 0.5], n) if weighted else None
    capacity = r.choice([10.0, 3.3, 0.0, -0.0, -1.0, 1e7, 5.5], n_groups) * r.random(n_groups).round(1)
    cap_sum = np.bincount(group, cap, minlength=n_groups).astype(float) if given_sum else None
    want = rounds_of_all_groups(group, weight, cap, capacity, cap_sum)
    got = fill(group, np.zeros(0) if weight is None else weight, cap, capacity,
               np.zeros(0) if cap_sum is None else cap_sum)  # fmt: skip
    assert np.array_equal(got.view(np.int64), want.view(np.int64)), (got, want)
