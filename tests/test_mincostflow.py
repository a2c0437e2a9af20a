"""Quincy's min-cost flow (OR-Tools): networkx's optimal cost with a feasible flow; the hand-solved optimum."""

import networkx as nx
import numpy as np
import pytest

from policies.schedulers.mincostflow import Unfeasible, network_simplex


def _arrays(g: nx.DiGraph):
    """The network as arrays: nodes in insertion order, edges by source then insertion."""
    index = {v: i for i, v in enumerate(g)}
    edges = list(g.edges(data=True))
    demand = [g.nodes[v].get("demand", 0) for v in g]
    src = [index[u] for u, _, _ in edges]
    tgt = [index[v] for _, v, _ in edges]
    return demand, src, tgt, [d["capacity"] for *_, d in edges], [d["weight"] for *_, d in edges]


def _random_network(rng: np.random.Generator) -> nx.DiGraph:
    """A Quincy-like network: supply nodes, aggregators with many equal costs (ties), one sink."""
    g = nx.DiGraph()
    supplies = rng.integers(1, 5, size=int(rng.integers(3, 25)))
    machines = int(rng.integers(2, 9))
    slots = rng.integers(0, 4, size=machines)
    g.add_node("S", demand=int(supplies.sum()))
    for m, c in enumerate(slots):
        g.add_edge(("R", m % 2), ("C", m), capacity=int(c), weight=0)
        g.add_edge(("C", m), "S", capacity=int(c), weight=0)
    g.add_edge("X", ("R", 0), capacity=int(slots[::2].sum()), weight=0)
    if machines > 1:
        g.add_edge("X", ("R", 1), capacity=int(slots[1::2].sum()), weight=0)
    # what the slots cannot take must go unscheduled: one unit short (-1) is unfeasible
    unscheduled = max(0, int(supplies.sum() - slots.sum() + rng.integers(-1, 4)))
    g.add_edge("U", "S", capacity=unscheduled, weight=0)
    for i, k in enumerate(supplies):
        g.add_node(("T", i), demand=-int(k))
        g.add_edge(("T", i), "U", capacity=int(k), weight=int(rng.integers(0, 4)) * 500)
        g.add_edge(("T", i), "X", capacity=int(k), weight=int(rng.integers(1, 3)) * 1000)
        for m in rng.choice(machines, size=min(2, machines), replace=False):
            g.add_edge(("T", i), ("C", int(m)), capacity=int(k), weight=int(rng.integers(-1, 2)) * 1000)
    return g


@pytest.mark.parametrize("seed", range(40))
def test_same_optimal_cost_as_networkx_and_a_feasible_flow(seed):
    g = _random_network(np.random.default_rng(seed))
    demand, src, tgt, cap, weight = _arrays(g)
    try:
        expected = nx.min_cost_flow(g)
    except nx.NetworkXUnfeasible:
        with pytest.raises(Unfeasible):
            network_simplex(demand, src, tgt, cap, weight)
        return
    flow = network_simplex(demand, src, tgt, cap, weight)
    assert int(np.dot(flow, weight)) == nx.cost_of_flow(g, expected)
    assert np.all((flow >= 0) & (flow <= np.asarray(cap)))
    net_in = np.bincount(tgt, flow, minlength=len(demand)) - np.bincount(src, flow, minlength=len(demand))
    assert net_in.tolist() == demand  # every node gets exactly its demand (supplies are negative)


def test_hand_solved_transport():
    # two supplies of 2 at nodes 0 and 1, sink 2 takes 4 through the direct edge 0 -> 2 of capacity 1 (cost 5) or the
    # cheap path 0 -> 1 -> 2 (costs 1 + 1, capacity 3 on 1 -> 2): 0 sends 1 direct and 1 via node 1, node 1 sends
    # its 2 plus the 1: 1 -> 2 carries 3; 0 -> 2 carries 1 (cost 5) since 1 -> 2 is full. Cost 5 + 1 + 3 x 1 = 9.
    demand = [-2, -2, 4]
    src, tgt = [0, 0, 1], [2, 1, 2]
    cap, weight = [1, 5, 3], [5, 1, 1]
    flow = network_simplex(demand, src, tgt, cap, weight)
    assert flow.tolist() == [1, 1, 3]
    assert int(np.dot(flow, weight)) == 9


def test_zero_capacity_edges_carry_nothing_and_unmet_demand_is_refused():
    flow = network_simplex([-1, 1], [0, 0], [1, 1], [0, 1], [-5, 2])
    assert flow.tolist() == [0, 1]
    with pytest.raises(Unfeasible):
        network_simplex([-2, 2], [0], [1], [1], [0])
