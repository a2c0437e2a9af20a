"""FlexSlot section 2's effects, emerging from the model (stock Hadoop: FIFO + default speculation, wordcount).

The directions are asserted here; the sizes next to the paper's are in the closing note of the issue and in
docs/model.md. Full scale (2,568 maps). Static against DRS over three seeds (the skewness effect is small
against the seed-to-seed spread, so it is compared on the mean); Table 1 on one seed. About 20 s.
"""

import numpy as np
import pytest

from tests.runs import flexslot_run

SEEDS = (1, 2, 3)


@pytest.fixture(scope="module")
def runs():
    out = {}
    for seed in SEEDS:
        out[("homo", seed)] = flexslot_run(seed, allocator="static")
        out[("drs", seed)] = flexslot_run(seed, allocator="drs")
        out[("heter", seed)] = flexslot_run(seed, allocator="heterogeneous")
        out[("heter+sched", seed)] = flexslot_run(seed, allocator="heterogeneous", skew_sched=True)
        out[("shared", seed)] = flexslot_run(seed, allocator="static", static={"hard_limit": False})
    return out


@pytest.fixture(scope="module")
def slot_runs(runs):
    """Fig 9 under DRS: stock, SkewTune and FlexSlot on wordcount and inverted-index (wordcount's stock is `runs`)."""
    out = {}
    for seed in SEEDS:
        out[("wordcount", "none", seed)] = runs[("drs", seed)]
        for bench in ("wordcount", "inverted-index"):
            for manager in ("none", "skewtune", "flexslot"):
                if (bench, manager, seed) not in out:
                    settings = {"allocator": "drs", "benchmark": bench, "slot_manager": manager}
                    out[(bench, manager, seed)] = flexslot_run(seed, **settings)
    return out


def mean_over_seeds(runs, name, figure) -> float:
    return float(np.mean([figure(runs[(name, seed)]) for seed in SEEDS]))


def straggler_steal_ratio(model) -> float:
    """Steal per second of the slowest tenth of maps over that of all maps."""
    frame = model.tasks_frame()
    maps = frame[(frame.kind == "m") & (frame.state == "done")]
    runtime = maps.end_s - maps.start_s
    slow = runtime > runtime.quantile(0.9)
    rate = maps.steal_s / runtime
    return float(rate[slow].mean() / rate.mean())


def test_static_homogeneous_pool_spreads_tasks_nearly_evenly(runs):
    for seed in SEEDS:
        assert runs[("homo", seed)].hadoop_summary()["maps_per_node_max_over_min"] < 1.4


def test_demand_based_pool_makes_hot_spot_nodes(runs):
    for seed in SEEDS:
        homo, drs = runs[("homo", seed)].hadoop_summary(), runs[("drs", seed)].hadoop_summary()
        assert drs["maps_per_node_max_over_min"] > homo["maps_per_node_max_over_min"] + 0.1


def skewness(model) -> float:
    return model.hadoop_summary()["map_runtime_skewness"]


def test_the_demand_based_pool_skews_map_runtimes_about_as_the_static_one(runs):
    """The paper's Fig 3 (DRS skews map runtimes more) is the gap the emulator does not open (docs/results-flexslot.md):
    3-seed means 1.84 under DRS against 1.96 static with disk seeks and Hadoop's fixed costs (1.71 against 1.74
    before). The test pins the finding: DRS skews them no more than 5 % beyond static."""
    drs, homo = mean_over_seeds(runs, "drs", skewness), mean_over_seeds(runs, "homo", skewness)
    assert drs <= 1.05 * homo


def test_demand_based_pool_starves_the_stragglers_of_cpu(runs):
    # under DRS the slowest maps are stolen from more than the average map; on the static pool, about equally.
    # With the data path of issue 11 (pipelined maps, page cache) the gap is smaller: 1.07-1.10 against 1.01-1.02
    # (seeds 1-3; sequential phases without a cache gave 1.31 against 1.04)
    for seed in SEEDS:
        assert straggler_steal_ratio(runs[("drs", seed)]) > straggler_steal_ratio(runs[("homo", seed)]) + 0.04
    vm_trace = runs[("drs", 1)].vm_trace()
    slaves = vm_trace[vm_trace.vm.str.startswith("slave")]
    entitlement = slaves.groupby("vm", observed=True).cpu_entitlement_mhz.mean()
    assert entitlement.max() / entitlement.min() > 1.1  # the pool is no longer divided evenly


@pytest.mark.xfail(
    strict=True,
    reason="not emergent on vSphere's documented rules: DRS's hot spots are those of any work-conserving pool. "
    "Issue 14's study, wordcount seeds 1-3: DRS 1.44 against 1.46 for equal static shares without hard limits; "
    "the largest DRS / control ratio of any cell is a second cluster's 1.78 / 1.52 = 1.17 "
    "(docs/history/results-flexslot-2026-11.md)",
)
def test_the_demand_estimate_itself_makes_the_hot_spots(runs):
    # the control: equal static shares that are not caps let idle cycles flow just as DRS does
    def max_over_min(model):
        return model.hadoop_summary()["maps_per_node_max_over_min"]

    assert mean_over_seeds(runs, "drs", max_over_min) > 1.5 * mean_over_seeds(runs, "shared", max_over_min)


def test_heterogeneous_nodes_for_stragglers_lower_the_skew(runs):
    # FlexSlot Table 1: Homo. 2.65 > Heter. 2.25 > Heter. + Skew-sched 0.31; here Heter. lowers it, with or without
    # the stragglers pinned (3-seed means 1.73 > 1.37, 1.39)
    homo, heter, pinned = (mean_over_seeds(runs, name, skewness) for name in ("homo", "heter", "heter+sched"))
    assert homo > heter + 0.2 and homo > pinned + 0.2
    allocation = runs[("heter", 1)].vms.view("cpu_entitlement_mhz")
    assert np.ptp(allocation) > 1000.0  # the pool really was redistributed


@pytest.mark.xfail(
    strict=True,
    reason="pinning the stragglers to the strong nodes adds nothing: Heter. + Skew-sched equals Heter. on seeds 1, 2, "
    "4 and 6 and is higher on 3 and 5 (1.244 vs 1.184, 1.481 vs 1.477); the stragglers are I/O-bound "
    "(docs/history/results-flexslot-2026-11.md, 'Table 1 and Fig 3'). On the earlier AVX-512 machines' split costs it "
    "was flat",
)
def test_pinning_the_stragglers_lowers_the_skew_further(runs):
    assert mean_over_seeds(runs, "heter", skewness) > mean_over_seeds(runs, "heter+sched", skewness)


# ---- issue 14's targets, per seed ----------------------------------------------------------------------------------


def max_over_min(model) -> float:
    return model.hadoop_summary()["maps_per_node_max_over_min"]


@pytest.mark.xfail(
    strict=True,
    reason="issue 14's target missed: DRS max/min maps per node 1.41 / 1.51 / 1.41 (seeds 1-3; target >= 3), static "
    "1.18 / 1.22 / 1.11 (< 2: met). The largest of the study's cells, a second cluster on the hosts, gives 1.78 "
    "(docs/history/results-flexslot-2026-11.md, 'The mechanisms crossed')",
)
def test_drs_hot_spots_run_three_times_the_maps_of_the_fewest_while_static_stays_within_two(runs):
    for seed in SEEDS:
        assert max_over_min(runs[("homo", seed)]) < 2.0
        assert max_over_min(runs[("drs", seed)]) >= 3.0


def stragglers_breakdown(model) -> dict[str, float]:
    """Shares of the slowest tenth of the successful maps' runtime: steal, cputime, iowait (FlexSlot Fig 6)."""
    frame = model.tasks_frame()
    maps = frame[(frame.kind == "m") & (frame.state == "done")]
    runtime = maps.end_s - maps.start_s
    slow = maps[runtime > runtime.quantile(0.9)]
    total = (slow.end_s - slow.start_s).sum()
    return {part: float(slow[f"{part}_s"].sum() / total) for part in ("steal", "cputime", "iowait")}


@pytest.mark.xfail(
    strict=True,
    reason="issue 14's target missed: the slowest tenth of maps under DRS spend 45 / 46 / 45 % of their runtime stolen "
    "(seeds 1-3) against 52 / 51 / 52 % on CPU, as much as the average map (43 %): with the page cache, maps seldom "
    "wait on I/O, and every busy slave is stolen from alike",
)
def test_the_stragglers_runtime_is_dominated_by_steal_under_drs(runs):
    # Fig 6: "steal time contributed most to the straggler runtime"
    for seed in SEEDS:
        parts = stragglers_breakdown(runs[("drs", seed)])
        assert parts["steal"] > max(parts["cputime"], parts["iowait"]), (seed, parts)


def job_change(slot_runs, bench, manager, seed) -> float:
    stock = slot_runs[(bench, "none", seed)].hadoop_summary()["makespan_s"]
    return slot_runs[(bench, manager, seed)].hadoop_summary()["makespan_s"] / stock - 1.0


@pytest.mark.xfail(
    strict=True,
    reason="issue 14's target missed: under DRS FlexSlot against stock +0.3 / +0.6 / +2.6 % (wordcount, seeds 1-3), "
    "+4.9 / +2.6 / +2.1 % (inverted-index); SkewTune -0.5 / 0 / 0 % and 0 / 0 / 0 %: no starvation for Algorithm 2 "
    "to undo, and SkewTune's idle-slot trigger comes when the tails are short (docs/results-flexslot.md)",
)
def test_flexslot_is_at_least_15_percent_shorter_than_stock_and_skewtune_lies_between(slot_runs):
    for seed in SEEDS:
        for bench in ("wordcount", "inverted-index"):
            flex, tune = job_change(slot_runs, bench, "flexslot", seed), job_change(slot_runs, bench, "skewtune", seed)
            assert flex <= -0.15 and flex < tune < 0.0, (bench, seed, flex, tune)


@pytest.mark.xfail(
    strict=True,
    reason="issue 14's target missed: map-runtime skewness stock / SkewTune / FlexSlot under DRS, wordcount seeds 1-3: "
    "2.17 / 2.04 / 2.02, 1.81 / 1.81 / 1.54, 1.17 / 1.17 / 1.65; inverted-index 2.87 / 2.74 / 2.18, 2.30 / 2.30 / "
    "1.91, 1.71 / 1.71 / 2.18: SkewTune often never acts, and FlexSlot's kills and moves add skew on seed 3",
)
def test_map_skewness_falls_from_stock_to_skewtune_to_flexslot(slot_runs):
    for seed in SEEDS:
        for bench in ("wordcount", "inverted-index"):
            stock, tune, flex = (skewness(slot_runs[(bench, m, seed)]) for m in ("none", "skewtune", "flexslot"))
            assert stock > tune > flex, (bench, seed, stock, tune, flex)


@pytest.fixture(scope="module")
def io_bound_runs():
    """FlexSlot under DRS without the guests' page cache, seed 1: every spill and input read hits the datastore, the
    stragglers wait on I/O, and Algorithm 1 (kill the straggler, restart it in a bigger slot) fires. With the page
    cache it does not fire in `slot_runs` (0 stragglers killed in all six: their stragglers are short of CPU, and
    FlexSlot moves slots instead)."""
    settings = {"allocator": "drs", "slot_manager": "flexslot", "page_cache": {"enabled": False}}
    return {bench: flexslot_run(1, benchmark=bench, **settings) for bench in ("wordcount", "inverted-index")}


def test_about_one_kill_per_straggler(io_bound_runs):
    # Fig 13: "most straggler only required 1 kill". Measured (seed 1): wordcount 100 stragglers killed once each;
    # inverted-index 195 stragglers, 196 kills (one killed twice). Seeds 2 and 3: wordcount 128 and 68 stragglers,
    # each killed once; inverted-index 274 (275 kills) and 187 (187)
    from scenarios.finished import Finished
    from scenarios.flexslot_figures import kills_per_straggler

    for bench, model in io_bound_runs.items():
        run = Finished.of("flexslot", model)
        kills = list(run.kills)
        assert len(kills) >= 50, (bench, len(kills))  # Algorithm 1 fires on many stragglers
        assert min(kills) >= 1 and kills.count(1) >= 0.9 * len(kills), (bench, kills)
        assert 1.0 <= kills_per_straggler(run) <= 1.5, (bench, kills_per_straggler(run))
