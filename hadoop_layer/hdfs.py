"""HDFS block placement and map locality (BlockPlacementPolicyDefault of Hadoop 1.x).

Replica 1 on a random node (the writer is outside the cluster), replica 2 on a node of another rack,
replica 3 on another node of replica 2's rack; with one rack, on distinct random nodes.
"""

from __future__ import annotations

from enum import IntEnum
from functools import lru_cache

import numpy as np


class Locality(IntEnum):
    NODE = 0
    RACK = 1
    OFF_RACK = 2


class BlockPlacement:
    """BlockPlacementPolicyDefault over one set of DataNodes, with each rack's node list built once: a block's
    replicas then cost three draws, not three scans of the cluster."""

    def __init__(self, racks: np.ndarray) -> None:
        racks = np.asarray(racks)
        self.nodes = len(racks)
        self.rack_of = racks.tolist()
        self.by_rack = {int(r): np.flatnonzero(racks == r).tolist() for r in np.unique(racks)}
        self.order = [n for ns in self.by_rack.values() for n in ns]  # nodes by (rack, node): each rack a segment
        self.place = {n: i for ns in self.by_rack.values() for i, n in enumerate(ns)}  # a node's place in its rack
        self.start, pos = {}, 0
        for r, ns in self.by_rack.items():
            self.start[r] = pos
            pos += len(ns)

    def replicas(self, first: int, copies: int, rng: np.random.Generator) -> list[int]:
        """The block's nodes: `first`, then one on another rack, then another on that rack (see the module)."""
        chosen = [first]
        if copies >= 2:  # uniform over the nodes of the other racks in (rack, node) order, else any other node
            rack = self.rack_of[first]
            size = len(self.by_rack[rack])
            if self.nodes > size:
                i = int(rng.integers(self.nodes - size))
                chosen.append(self.order[i] if i < self.start[rack] else self.order[i + size])
            else:
                i = int(rng.integers(self.nodes - 1))
                chosen.append(i if i < first else i + 1)
        if copies >= 3:  # uniform over the second replica's rack less the nodes chosen, else any other node
            rack = self.rack_of[chosen[1]]
            same = self.by_rack[rack]
            skipped = sorted(self.place[n] for n in chosen if self.rack_of[n] == rack)
            if len(same) > len(skipped):
                i = int(rng.integers(len(same) - len(skipped)))
                for at in skipped:  # the i-th node not chosen: step over the chosen ones before it
                    i += i >= at
                chosen.append(same[i])
            else:
                pool = [n for n in range(self.nodes) if n not in chosen]
                chosen.append(int(pool[rng.integers(len(pool))]))
        while len(chosen) < copies:
            pool = [n for n in range(self.nodes) if n not in chosen]
            chosen.append(int(pool[rng.integers(len(pool))]))
        return chosen


@lru_cache(maxsize=8)
def _placement(racks: bytes) -> BlockPlacement:
    """One BlockPlacement per set of DataNodes (a model places every job's blocks on the same racks): its rack lists
    were built again for each of a SWIM day's 5,894 jobs."""
    return BlockPlacement(np.frombuffer(racks, dtype=np.int64))


def place_blocks(
    n_blocks: int, racks: np.ndarray, replication: int, rng: np.random.Generator, writers: np.ndarray | None = None
) -> np.ndarray:
    """Replica node indices, shape (n_blocks, min(replication, nodes)); `racks[i]` is node i's rack.

    `writers[b]`: the node that wrote block b, which holds its first replica (HDFS writes the first replica
    on the writer's DataNode); None: the writer is outside the cluster, the first replica goes anywhere.
    """
    racks = np.asarray(racks, dtype=np.int64)
    placement = _placement(racks.tobytes())
    nodes = placement.nodes
    copies = min(replication, nodes)
    out = np.empty((n_blocks, copies), dtype=np.int64)
    for b in range(n_blocks):
        first = int(rng.integers(nodes)) if writers is None else int(writers[b])
        out[b] = placement.replicas(first, copies, rng)
    return out


def locality(replicas: np.ndarray, node: int, racks: np.ndarray) -> Locality:
    """How close `node` is to a block with these replicas."""
    if node in replicas:
        return Locality.NODE
    if racks[node] in racks[replicas]:
        return Locality.RACK
    return Locality.OFF_RACK


def locality_in(replicas: list[int], node: int, racks: list[int]) -> Locality:
    """`locality` of plain lists: a block's few replicas are tested faster as Python ints than as NumPy arrays (this
    runs at every map launch)."""
    if node in replicas:
        return Locality.NODE
    rack = racks[node]
    for r in replicas:  # (a loop, not any() of a generator)
        if racks[r] == rack:
            return Locality.RACK
    return Locality.OFF_RACK
