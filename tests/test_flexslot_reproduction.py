"""FlexSlot section 2's effects, emerging from the model (stock Hadoop: FIFO + default speculation, wordcount).

The directions are asserted here; the sizes next to the paper's are in the closing note of the issue and in
docs/model.md. Full scale (2,568 maps). Static against DRS over three seeds (the skewness effect is small
against the seed-to-seed spread, so it is compared on the mean); Table 1 on one seed. About 20 s.
"""

import numpy as np
import pytest

from scenarios.flexslot import FlexSlot
from scenarios.runner import run_model
from scenarios.settings import validate

SCENARIO = FlexSlot()


SEEDS = (1, 2, 3)


def run(seed=1, **settings):
    model = SCENARIO.build(validate(SCENARIO.Settings, settings), seed=seed)
    run_model(model, SCENARIO.horizon_s(model), progress=False)
    model.check_hadoop_end()
    return model


@pytest.fixture(scope="module")
def runs():
    out = {}
    for seed in SEEDS:
        out[("homo", seed)] = run(seed, allocator="static")
        out[("drs", seed)] = run(seed, allocator="drs")
        out[("heter", seed)] = run(seed, allocator="heterogeneous")
        out[("heter+sched", seed)] = run(seed, allocator="heterogeneous", skew_sched=True)
        out[("shared", seed)] = run(seed, allocator="static", static={"hard_limit": False})
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


@pytest.mark.xfail(
    strict=True,
    reason="issue 14: with memory reclamation on (the page cache's eviction order moves) the 3-seed mean is 1.71 under "
    "DRS against 1.74 static (before: 1.71 against 1.70); docs/results-flexslot.md, 'by vSphere mechanism'",
)
def test_demand_based_pool_skews_map_runtimes_more(runs):
    assert mean_over_seeds(runs, "drs", skewness) > mean_over_seeds(runs, "homo", skewness)


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
    reason="not yet emergent: DRS's hot spots here are those of any work-conserving pool (static shares without "
    "hard limits give the same spread); the demand-estimation feedback of FlexSlot 2.3 adds nothing yet",
)
def test_the_demand_estimate_itself_makes_the_hot_spots(runs):
    # the control: equal static shares that are not caps let idle cycles flow just as DRS does
    def max_over_min(model):
        return model.hadoop_summary()["maps_per_node_max_over_min"]

    assert mean_over_seeds(runs, "drs", max_over_min) > 1.5 * mean_over_seeds(runs, "shared", max_over_min)


def test_heterogeneous_nodes_for_stragglers_lower_the_skew(runs):
    # FlexSlot Table 1: Homo. 2.65 > Heter. 2.25 > Heter. + Skew-sched 0.31 (here: a much smaller effect)
    homo, heter, pinned = (mean_over_seeds(runs, name, skewness) for name in ("homo", "heter", "heter+sched"))
    assert homo > heter >= pinned - 1e-9
    allocation = runs[("heter", 1)].vms.view("cpu_entitlement_mhz")
    assert np.ptp(allocation) > 1000.0  # the pool really was redistributed
