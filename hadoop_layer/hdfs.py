"""HDFS block placement and map locality (BlockPlacementPolicyDefault of Hadoop 1.x).

Replica 1 on a random node (the writer is outside the cluster), replica 2 on a node of another rack,
replica 3 on another node of replica 2's rack; with one rack, on distinct random nodes.
"""

from __future__ import annotations

from enum import IntEnum

import numpy as np


class Locality(IntEnum):
    NODE = 0
    RACK = 1
    OFF_RACK = 2


def place_blocks(
    n_blocks: int, racks: np.ndarray, replication: int, rng: np.random.Generator, writers: np.ndarray | None = None
) -> np.ndarray:
    """Replica node indices, shape (n_blocks, min(replication, nodes)); `racks[i]` is node i's rack.

    `writers[b]`: the node that wrote block b, which holds its first replica (HDFS writes the first replica
    on the writer's DataNode); None: the writer is outside the cluster, the first replica goes anywhere.
    """
    nodes = len(racks)
    copies = min(replication, nodes)
    out = np.empty((n_blocks, copies), dtype=np.int64)
    by_rack = {r: np.flatnonzero(racks == r) for r in np.unique(racks)}
    for b in range(n_blocks):
        first = int(rng.integers(nodes)) if writers is None else int(writers[b])
        chosen = [first]
        if copies >= 2:
            others = [n for r, ns in by_rack.items() if r != racks[first] for n in ns]
            pool = others or [n for n in range(nodes) if n != first]
            chosen.append(int(pool[rng.integers(len(pool))]))
        if copies >= 3:
            same = [n for n in by_rack[racks[chosen[1]]] if n not in chosen]
            pool = same or [n for n in range(nodes) if n not in chosen]
            chosen.append(int(pool[rng.integers(len(pool))]))
        while len(chosen) < copies:
            pool = [n for n in range(nodes) if n not in chosen]
            chosen.append(int(pool[rng.integers(len(pool))]))
        out[b] = chosen
    return out


def locality(replicas: np.ndarray, node: int, racks: np.ndarray) -> Locality:
    """How close `node` is to a block with these replicas."""
    if node in replicas:
        return Locality.NODE
    if racks[node] in racks[replicas]:
        return Locality.RACK
    return Locality.OFF_RACK
