"""Min-cost flow for Quincy's networks, solved by OR-Tools' `SimpleMinCostFlow` (C++).

Why not `networkx.min_cost_flow`: Quincy solves a network each time the cluster changes, hundreds of times a
run, and networkx's pure-Python network simplex took half of a Quincy run. OR-Tools takes the network as arrays.
Where several flows are optimal the two solvers may pick different ones (both optimal); a scheduler's
decisions are then one optimal assignment, not networkx's.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np


class Unfeasible(ValueError):
    """No flow meets the demands."""


def network_simplex(
    demand: Sequence[int], src: Sequence[int], tgt: Sequence[int], capacity: Sequence[int], weight: Sequence[int]
) -> np.ndarray:
    """The flow on each edge of a min-cost flow; `demand[v]` > 0 means v takes in that much (networkx's sign).

    Integer capacities and costs (OR-Tools works in int64). OR-Tools is imported here, when a Quincy run first
    solves: importing it holds 20 MB of a process's memory, and other schedulers never need it (issue 16)."""
    from ortools.graph.python import min_cost_flow

    solver = min_cost_flow.SimpleMinCostFlow()
    arcs = solver.add_arcs_with_capacity_and_unit_cost(
        np.asarray(src, dtype=np.int64), np.asarray(tgt, dtype=np.int64),
        np.asarray(capacity, dtype=np.int64), np.asarray(weight, dtype=np.int64),
    )  # fmt: skip
    supply = -np.asarray(demand, dtype=np.int64)
    solver.set_nodes_supplies(np.arange(len(supply), dtype=np.int64), supply)
    status = solver.solve()
    if status != solver.OPTIMAL:
        raise Unfeasible(f"min-cost flow: no feasible flow (OR-Tools status {status})")
    return np.asarray(solver.flows(arcs), dtype=np.int64)
