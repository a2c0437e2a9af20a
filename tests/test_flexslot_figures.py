"""The measures behind FlexSlot Figs 7-14 in `vcloud reproduce` (scenarios/flexslot_figures.py)."""

from types import SimpleNamespace

import pandas as pd
import pytest

from scenarios import flexslot_figures as ff


def model_with(manager):
    return SimpleNamespace(jobtracker=SimpleNamespace(slot_manager=manager))


def test_kills_per_straggler_counts_only_the_stragglers_that_were_killed():
    manager = SimpleNamespace(kill_count={"t1": 1, "t2": 2, "t3": 2, "t4": 1})  # 6 kills, 4 stragglers
    assert ff.kills_per_straggler(model_with(manager)) == pytest.approx(1.5)
    assert ff.kills_per_straggler(model_with(SimpleNamespace(kill_count={}))) == 0.0


class FakeRuns:
    """Makespans by (benchmark, slot_manager); records what was asked."""

    quick = True

    def __init__(self, times):
        self.times, self.asked = times, []

    def get(self, scenario, **settings):
        self.asked.append(settings)
        t = self.times[(settings["benchmark"], settings.get("slot_manager", "none"))]
        return SimpleNamespace(hadoop_summary=lambda: {"makespan_s": t})


def test_job_times_are_normalized_to_the_first_policy_on_the_drs_pool():
    times = {("inverted-index", "none"): 200.0, ("inverted-index", "flexslot"): 150.0,
             ("histogram-movies", "none"): 100.0, ("histogram-movies", "flexslot"): 110.0}  # fmt: skip
    runs = FakeRuns(times)
    table = ff._normalized(runs, {"stock": {"slot_manager": "none"}, "FlexSlot": {"slot_manager": "flexslot"}})
    expected = pd.DataFrame({"stock": [1.0, 1.0], "FlexSlot": [0.75, 1.1]}, index=list(ff.QUICK_BENCHMARKS))
    pd.testing.assert_frame_equal(table, expected)
    assert all(s["allocator"] == "drs" for s in runs.asked)
