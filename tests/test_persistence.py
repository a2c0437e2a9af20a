"""The entitlement-persistence diagnostic (vcloud/persistence.py): near 1 for a lock-in, near 0 for a reshuffle."""

import numpy as np
import pytest

from scenarios import plots
from vcloud.persistence import entitlement_persistence, rank_persistence


def _periods(rng, lock_in: bool, n_vms=30, periods=20):
    base = rng.uniform(1000.0, 5000.0, n_vms)
    out = []
    for _ in range(periods):
        noise = rng.normal(0.0, 50.0, n_vms)
        cpu = base + noise if lock_in else rng.permutation(base) + noise
        out.append((len(out) * 300.0, cpu, cpu / 2))
    return out


def test_persistence_is_near_one_for_a_constructed_lock_in_and_near_zero_for_a_shuffle():
    rng = np.random.default_rng(5)
    locked = entitlement_persistence(_periods(rng, lock_in=True))
    shuffled = entitlement_persistence(_periods(rng, lock_in=False))
    assert locked["cpu"] > 0.95 and locked["mem"] > 0.95 and locked["periods"] == 19
    assert abs(shuffled["cpu"]) < 0.15 and abs(shuffled["mem"]) < 0.15


def test_a_division_without_ranks_has_no_persistence():
    same = np.full(4, 4800.0)
    assert rank_persistence([same, same, np.arange(4.0)]) == [None, None]
    assert entitlement_persistence([(0.0, same, same), (300.0, same, same)])["cpu"] is None


def test_persistence_is_in_a_drs_runs_summary_and_plots():
    from tests.runs import flexslot_run

    model = flexslot_run(1, allocator="drs", scale=0.1, drs={"period_s": 60})
    from scenarios.flexslot import FlexSlot

    persistence = FlexSlot().summary(model)["cloud"]["entitlement_persistence"]
    assert persistence["periods"] >= 1 and len(persistence["cpu_by_period"]) == persistence["periods"]
    fig = plots.entitlement_persistence(persistence, title="drs")
    assert fig.axes[0].get_ylabel() == "rank correlation with the period before"


@pytest.mark.parametrize("lock_in", [True, False])
def test_persistence_ranks_only_the_rows_asked_for(lock_in):
    rng = np.random.default_rng(1)
    periods = _periods(rng, lock_in)
    rows = np.arange(10)
    sub = entitlement_persistence(periods, rows)
    assert sub["cpu"] == pytest.approx(entitlement_persistence([(t, c[rows], m[rows]) for t, c, m in periods])["cpu"])
