"""FlexSlot Fig 10's setting: a second identical cluster, replayed from a stock run, shares the hosts."""

from scenarios.flexslot import FlexSlot
from scenarios.runner import run_model
from scenarios.settings import validate

SCENARIO = FlexSlot()


def run(**settings):
    model = SCENARIO.build(validate(SCENARIO.Settings, {"scale": 0.1, "allocator": "drs", **settings}), seed=3)
    run_model(model, SCENARIO.horizon_s(model), progress=False)
    model.check_hadoop_end()
    return model


def test_a_co_located_cluster_slows_the_job_and_stays_out_of_the_pool():
    alone, shared = run(), run(co_cluster=True)
    assert len(shared.vm_agents) == 64 and len(shared.pool_rows) == 32
    assert shared.hadoop_summary()["makespan_s"] > 1.2 * alone.hadoop_summary()["makespan_s"]
    trace = shared.vm_trace()
    neighbours = trace[trace.vm.str.startswith("co-slave")]
    assert neighbours.cpu_used_mhz.mean() > 500  # the replayed neighbour really ran
    # the job's maps are stolen from more with a neighbour on their hosts
    assert shared.hadoop_summary()["map_steal_s"] > 1.5 * alone.hadoop_summary()["map_steal_s"]
