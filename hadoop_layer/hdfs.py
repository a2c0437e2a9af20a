"""HDFS block placement and map locality (BlockPlacementPolicyDefault of Hadoop 1.x).

Replica 1 on a random node (the writer is outside the cluster), replica 2 on a node of another rack,
replica 3 on another node of replica 2's rack; with one rack, on distinct random nodes.

Two forms of one policy: `BlockPlacement.replicas` places one block with scalar `rng.integers` calls (a write
pipeline at an attempt's launch), `place_blocks` all of a job's blocks in one compiled loop (`_place`). The loop
replays NumPy's `Generator.integers(high)` on the generator's own 32-bit draws (`_below`), so it gives the same
nodes and leaves `rng` in the same state as one `replicas` call a block (tests/test_block_placement.py holds that
per-block loop as the oracle).
"""

from __future__ import annotations

from collections.abc import Callable
from enum import IntEnum
from functools import lru_cache

import numpy as np

from vcloud.numerics import inline, kernel


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
        # the same as arrays for `_place`, racks numbered 0.. in the order of `by_rack`
        self.rack_index = np.unique(racks, return_inverse=True)[1].astype(np.int64).reshape(-1)
        self.order_array = np.asarray(self.order, dtype=np.int64)
        self.start_array = np.asarray(list(self.start.values()), dtype=np.int64)
        self.size_array = np.asarray([len(ns) for ns in self.by_rack.values()], dtype=np.int64)
        self.place_array = np.asarray([self.place[n] for n in range(self.nodes)], dtype=np.int64)

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
    The nodes and `rng`'s state afterwards are those of one `BlockPlacement.replicas` a block (the first replica
    drawn before it when there is no writer), computed in one compiled loop: a Python loop over a SWIM day's
    406,008 blocks was most of the cost of building the model.
    """
    racks = np.asarray(racks, dtype=np.int64)
    placement = _placement(racks.tobytes())
    nodes = placement.nodes
    copies = min(replication, nodes)
    if nodes == 0 or copies < 1:
        raise ValueError(f"cannot place blocks on {nodes} nodes with replication {replication}")
    given = np.empty(0, dtype=np.int64) if writers is None else np.asarray(writers, dtype=np.int64).reshape(-1)
    if writers is not None and n_blocks and (given.size < n_blocks or given[:n_blocks].min() < 0
                                             or given[:n_blocks].max() >= nodes):  # fmt: skip
        raise ValueError(f"writers must be {n_blocks} node indices below {nodes}")
    layout = (placement.rack_index, placement.order_array, placement.start_array, placement.size_array,
              placement.place_array)  # fmt: skip
    draws = n_blocks * (copies - (writers is not None))  # a draw a replica drawn: fewer from one node, more if rejected

    def kernel(stream: np.ndarray) -> tuple[np.ndarray, int]:
        return _place(stream, n_blocks, copies, given, *layout)

    return replayed(rng, draws, kernel, most=16 * draws + 4096)  # a draw is rejected with p < 1/2


def replayed(
    rng: np.random.Generator, count: int, kernel: Callable[[np.ndarray], tuple[np.ndarray, int]], most: int
) -> np.ndarray:
    """`kernel`'s result on the next 32-bit draws of `rng`, which is left as if `kernel` had drawn them itself.

    `kernel(stream)` returns its result and how many of the values `stream` it used, -1 if it needed more. `stream`
    is what the bit generator's `next_uint32` gives next (`integers(0, 2**32, dtype=uint32)` calls it once a value,
    buffered half of a 64-bit output included), so the state is restored and exactly the values used are drawn again:
    any bit generator, no arithmetic on its state. `count` is a first guess, doubled up to `most` (a bound that only a
    broken generator's run of rejected draws exceeds: it would otherwise ask for ever more memory).
    """
    saved = rng.bit_generator.state
    while True:
        stream = rng.integers(0, 1 << 32, size=count, dtype=np.uint32)
        result, used = kernel(stream)
        if used == count:
            return result
        rng.bit_generator.state = saved
        if used >= 0:
            rng.integers(0, 1 << 32, size=used, dtype=np.uint32)
            return result
        if count >= most:
            raise RuntimeError(f"more than {most} draws rejected or needed: is the bit generator broken?")
        count = min(2 * count + 64, most)


@inline
def _below(stream: np.ndarray, pos: int, high: int) -> tuple[int, int]:
    """`Generator.integers(high)` for 0 < high <= 2**32 on the draws `stream[pos:]`, and the position after it.

    NumPy's bounded draw (distributions.c, `buffered_bounded_lemire_uint32`): Lemire's multiply, rejecting while the
    low 32 bits fall below 2**32 mod high; high == 1 draws nothing. Out of draws: 0 and a position past the end
    (the caller's sign to draw more; 0 keeps the indices valid meanwhile).
    """
    if high == 1:
        return 0, pos
    bound = np.uint64(high)
    threshold = (np.uint64(1 << 32) - bound) % bound
    while pos < stream.size:
        product = np.uint64(stream[pos]) * bound
        pos += 1
        if (product & np.uint64(0xFFFFFFFF)) >= threshold:
            return np.int64(product >> np.uint64(32)), pos
    return 0, stream.size + 1


@inline
def _insert_sorted(values: np.ndarray, k: int, value: int) -> None:
    """Put `value` into the sorted `values[:k]` (a block's few chosen nodes)."""
    j = k
    while j > 0 and values[j - 1] > value:
        values[j] = values[j - 1]
        j -= 1
    values[j] = value


@inline
def _skip(i: int, taken: np.ndarray, k: int) -> int:
    """The i-th value not in the sorted, distinct `taken[:k]`: step over the taken ones at or before it."""
    for j in range(k):
        if i >= taken[j]:
            i += 1
    return i


@kernel
def _place(
    stream: np.ndarray,
    n_blocks: int,
    copies: int,
    writers: np.ndarray,
    rack_of: np.ndarray,
    order: np.ndarray,
    start: np.ndarray,
    size: np.ndarray,
    place: np.ndarray,
) -> tuple[np.ndarray, int]:
    """`BlockPlacement.replicas` for each block in turn (first replica drawn when `writers` is empty), drawing from
    `stream`: the replicas and the draws used (-1: `stream` was too short). Racks are numbered 0.. (`rack_of`);
    `order` lists the nodes rack by rack, rack r at `start[r]`, `size[r]` long; `place[n]` is n's place in its rack."""
    nodes = rack_of.size
    out = np.empty((n_blocks, copies), dtype=np.int64)
    taken = np.empty(copies, dtype=np.int64)
    pos = 0
    for b in range(n_blocks):
        if writers.size:
            first = writers[b]
        else:
            first, pos = _below(stream, pos, nodes)
        out[b, 0] = first
        second = first
        if copies >= 2:  # a node of another rack, else any other node
            rack = rack_of[first]
            if nodes > size[rack]:
                i, pos = _below(stream, pos, nodes - size[rack])
                second = order[i] if i < start[rack] else order[i + size[rack]]
            else:
                i, pos = _below(stream, pos, nodes - 1)
                second = i if i < first else i + 1
            out[b, 1] = second
        done = min(copies, 2)
        if copies >= 3:  # another node of the second's rack, else any node not chosen
            rack = rack_of[second]
            k = 0
            for j in range(2):
                if rack_of[out[b, j]] == rack:
                    _insert_sorted(taken, k, place[out[b, j]])
                    k += 1
            if size[rack] > k:
                i, pos = _below(stream, pos, size[rack] - k)
                out[b, 2] = order[start[rack] + _skip(i, taken, k)]
                done = 3
        for c in range(done, copies):  # any node not chosen
            for j in range(c):
                _insert_sorted(taken, j, out[b, j])
            i, pos = _below(stream, pos, nodes - c)
            out[b, c] = _skip(i, taken, c)
    return out, (pos if pos <= stream.size else -1)


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
