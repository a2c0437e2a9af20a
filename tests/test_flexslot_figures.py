"""The measures behind FlexSlot Figs 7-14 in `vcloud reproduce` (scenarios/flexslot_figures.py)."""

import threading
from concurrent.futures import Future
from types import SimpleNamespace

import pandas as pd
import pytest

from scenarios import flexslot_figures as ff
from scenarios.reproduce import Runs


def test_kills_per_straggler_counts_only_the_stragglers_that_were_killed():
    assert ff.kills_per_straggler(SimpleNamespace(kills=(1, 2, 2, 1))) == pytest.approx(1.5)  # 6 kills, 4 stragglers
    assert ff.kills_per_straggler(SimpleNamespace(kills=())) == 0.0


class FakeRuns:
    """Makespans by (benchmark, slot_manager); records what was asked."""

    quick = True

    def __init__(self, times):
        self.times, self.asked = times, []

    def prefetch(self, scenario, cases):
        pass

    def get(self, scenario, **settings):
        self.asked.append(settings)
        t = self.times[(settings["benchmark"], settings.get("slot_manager", "none"))]
        return SimpleNamespace(summary={"makespan_s": t})


def test_job_times_are_normalized_to_the_first_policy_on_the_drs_pool():
    times = {("inverted-index", "none"): 200.0, ("inverted-index", "flexslot"): 150.0,
             ("histogram-movies", "none"): 100.0, ("histogram-movies", "flexslot"): 110.0}  # fmt: skip
    runs = FakeRuns(times)
    table = ff._normalized(runs, {"stock": {"slot_manager": "none"}, "FlexSlot": {"slot_manager": "flexslot"}})
    expected = pd.DataFrame({"stock": [1.0, 1.0], "FlexSlot": [0.75, 1.1]}, index=list(ff.QUICK_BENCHMARKS))
    pd.testing.assert_frame_equal(table, expected)
    assert all(s["allocator"] == "drs" for s in runs.asked)


def test_a_figure_prefetches_exactly_the_runs_it_then_asks_for():
    """Fig 14 starts its runs at once (Runs.prefetch) and then asks for them one by one: each run is submitted once,
    so the prefetch spells each run's settings as the figure asks for it (else the report ran it twice)."""
    submitted = []

    def submit(fn, *args):
        submitted.append(args)
        done = Future()
        done.set_result(fn(*args))
        return done

    turn = threading.Lock()
    turn.acquire()  # the entry's turn, which Runs.get gives up while it waits
    runs = Runs(scale=0.05, quick=True, submit=submit, turn=turn)
    ff.fig14(runs)
    assert len(submitted) == 2  # inverted-index at alpha 0.1 and 0.5 (quick)
    assert {args[2]["flexslot"]["alpha"] for args in submitted} == {0.1, 0.5}
