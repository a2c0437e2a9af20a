"""Min-cost flow by networkx's network simplex, on arrays, with the pricing step in NumPy.

Why: Quincy (`quincy.py`) solves a network each time the cluster changes, hundreds of times a run, and
`networkx.min_cost_flow` spent most of that time building its own copy of the graph and pricing edges one
Python call at a time. This is a port of `networkx.algorithms.flow.networksimplex.network_simplex`
(networkx 3.x, BSD-3-Clause, Copyright (C) 2004-2024 NetworkX Developers) that takes the network as arrays
and keeps every choice of the original: the same edge numbering (the caller lists edges in networkx's
order), the same strongly feasible initial tree on an artificial root, the same block pivot rule
(blocks of ceil(sqrt(E)) edges, the first most negative reduced cost of the first block that has one) and
the same leaving-edge rule. So it returns the same flow as networkx, ties included, which keeps a
scheduler's decisions unchanged (`tests/test_mincostflow.py` checks it against networkx).

Only the pricing is vectorized: the reduced costs of all edges are computed at once after each pivot
(potentials only change at pivots), and the first block with a negative one is found with NumPy. Integer
inputs are required (int64 arithmetic, exact like networkx's Python ints at the sizes used here).
"""

from __future__ import annotations

import itertools
import math

import numpy as np


class Unfeasible(ValueError):
    """No flow meets the demands (networkx.NetworkXUnfeasible)."""


class Unbounded(ValueError):
    """A negative cycle of unbounded capacity (networkx.NetworkXUnbounded)."""


def network_simplex(
    demand: np.ndarray, src: np.ndarray, tgt: np.ndarray, capacity: np.ndarray, weight: np.ndarray
) -> np.ndarray:
    """The flow on each edge of a min-cost flow; `demand[v]` > 0 means v takes in that much (networkx's sign).

    Edges of capacity 0 carry nothing and are left out of the numbering, as networkx does; self-loops are
    not supported (the caller has none)."""
    demand = np.asarray(demand, dtype=np.int64)
    src, tgt = np.asarray(src, dtype=np.int64), np.asarray(tgt, dtype=np.int64)
    capacity, weight = np.asarray(capacity, dtype=np.int64), np.asarray(weight, dtype=np.int64)
    if int(demand.sum()) != 0:
        raise Unfeasible("total node demand is not zero")
    if (capacity < 0).any():
        raise Unfeasible("an edge has negative capacity")
    keep = np.flatnonzero(capacity != 0)
    flow = _solve(demand, src[keep], tgt[keep], capacity[keep], weight[keep])
    out = np.zeros(len(src), dtype=np.int64)
    out[keep] = flow
    return out


def _solve(demand: np.ndarray, src: np.ndarray, tgt: np.ndarray, cap: np.ndarray, w: np.ndarray) -> np.ndarray:
    n, e = len(demand), len(src)
    faux_inf = 3 * max(int(cap.sum()), int(np.abs(w).sum()), int(np.abs(demand).sum())) or 1
    # artificial edges to/from the root (index n, networkx's -1): into v if demand > 0, else out of v
    root = n
    nodes = np.arange(n)
    a_src = np.where(demand > 0, root, nodes)
    a_tgt = np.where(demand > 0, nodes, root)
    sources = src.tolist() + a_src.tolist()
    targets = tgt.tolist() + a_tgt.tolist()
    caps = cap.tolist() + [faux_inf] * n
    weights = w.tolist() + [faux_inf] * n
    flow = [0] * e + np.abs(demand).tolist()
    pot = np.where(demand <= 0, faux_inf, -faux_inf).astype(np.int64)
    parent: list[int | None] = [root] * n + [None]
    parent_edge: list[int | None] = [*range(e, e + n), None]
    size = [1] * n + [n + 1]
    next_dft = [*range(1, n), root, 0]
    prev_dft = [root, *range(n)]
    last_dft = [*range(n), n - 1]

    # ---- pricing: block by block as networkx ---------------------------------------------------------------
    sign = [1] * e  # 1 where flow == 0, else -1 (networkx's reduced_cost), kept in step with `flow`
    block = math.ceil(math.sqrt(e)) if e else 0
    blocks = (e + block - 1) // block if e else 0
    pot = pot.tolist()

    def entering(f: int) -> tuple[int, int] | None:
        """(edge, start of the next block): the first block from `f` with a negative reduced cost, its first
        most negative edge (networkx's find_entering_edges: Dantzig's rule in blocks, Bland's over blocks)."""
        for _ in range(blocks):
            end = f + block
            if end <= e:
                ids = range(f, end)
                rc = [
                    sg * (w - pot[a] + pot[b])
                    for sg, w, a, b in zip(sign[f:end], weights[f:end], sources[f:end], targets[f:end], strict=True)
                ]
            else:
                end -= e
                ids = [*range(f, e), *range(end)]
                rc = [sign[i] * (weights[i] - pot[sources[i]] + pot[targets[i]]) for i in ids]
            best = min(rc)
            if best < 0:
                return ids[rc.index(best)], end
            f = end
        return None

    # ---- the spanning tree (networkx's _DataEssentialsAndFunctions, on lists) -----------------------------
    def find_apex(p: int, q: int) -> int:
        size_p, size_q = size[p], size[q]
        while True:
            while size_p < size_q:
                p = parent[p]
                size_p = size[p]
            while size_p > size_q:
                q = parent[q]
                size_q = size[q]
            if size_p == size_q:
                if p != q:
                    p = parent[p]
                    size_p = size[p]
                    q = parent[q]
                    size_q = size[q]
                else:
                    return p

    def trace_path(p: int, ancestor: int) -> tuple[list[int], list[int]]:
        wn, we = [p], []
        while p != ancestor:
            we.append(parent_edge[p])
            p = parent[p]
            wn.append(p)
        return wn, we

    def find_cycle(i: int, p: int, q: int) -> tuple[list[int], list[int]]:
        apex = find_apex(p, q)
        wn, we = trace_path(p, apex)
        wn.reverse()
        we.reverse()
        if we != [i]:
            we.append(i)
        wn_r, we_r = trace_path(q, apex)
        del wn_r[-1]
        return wn + wn_r, we + we_r

    def residual(i: int, p: int) -> int:
        return caps[i] - flow[i] if sources[i] == p else flow[i]

    def remove_edge(s: int, t: int) -> None:
        size_t, prev_t, last_t = size[t], prev_dft[t], last_dft[t]
        next_last_t = next_dft[last_t]
        parent[t] = None
        parent_edge[t] = None
        next_dft[prev_t] = next_last_t
        prev_dft[next_last_t] = prev_t
        next_dft[last_t] = t
        prev_dft[t] = last_t
        while s is not None:
            size[s] -= size_t
            if last_dft[s] == last_t:
                last_dft[s] = prev_t
            s = parent[s]

    def make_root(q: int) -> None:
        ancestors = []
        while q is not None:
            ancestors.append(q)
            q = parent[q]
        ancestors.reverse()
        for p, q in itertools.pairwise(ancestors):
            size_p, last_p = size[p], last_dft[p]
            prev_q, last_q = prev_dft[q], last_dft[q]
            next_last_q = next_dft[last_q]
            parent[p] = q
            parent[q] = None
            parent_edge[p] = parent_edge[q]
            parent_edge[q] = None
            size[p] = size_p - size[q]
            size[q] = size_p
            next_dft[prev_q] = next_last_q
            prev_dft[next_last_q] = prev_q
            next_dft[last_q] = q
            prev_dft[q] = last_q
            if last_p == last_q:
                last_dft[p] = prev_q
                last_p = prev_q
            prev_dft[p] = last_q
            next_dft[last_q] = p
            next_dft[last_p] = q
            prev_dft[q] = last_p
            last_dft[q] = last_p

    def add_edge(i: int, p: int, q: int) -> None:
        last_p = last_dft[p]
        next_last_p = next_dft[last_p]
        size_q, last_q = size[q], last_dft[q]
        parent[q] = p
        parent_edge[q] = i
        next_dft[last_p] = q
        prev_dft[q] = last_p
        prev_dft[next_last_p] = last_q
        next_dft[last_q] = next_last_p
        while p is not None:
            size[p] += size_q
            if last_dft[p] == last_p:
                last_dft[p] = last_q
            p = parent[p]

    def update_potentials(i: int, p: int, q: int) -> None:
        d = pot[p] - pot[q] + (-weights[i] if q == targets[i] else weights[i])
        last = last_dft[q]
        pot[q] += d
        while q != last:
            q = next_dft[q]
            pot[q] += d

    # ---- the pivot loop (networkx's network_simplex) -------------------------------------------------------
    first = 0
    while e:
        found = entering(first)
        if found is None:
            break
        i, first = found
        p, q = (sources[i], targets[i]) if flow[i] == 0 else (targets[i], sources[i])
        wn, we = find_cycle(i, p, q)
        # leaving edge: the least residual capacity, the last one on the cycle on ties (networkx's min over the
        # reversed cycle)
        j = s = -1
        f = None
        for back in range(1, min(len(we), len(wn)) + 1):
            edge, node = we[-back], wn[-back]
            r = caps[edge] - flow[edge] if sources[edge] == node else flow[edge]
            if f is None or r < f:
                j, s, f = edge, node, r
        t = targets[j] if sources[j] == s else sources[j]
        for k, node in zip(we, wn, strict=False):
            flow[k] += f if sources[k] == node else -f
            if k < e:
                sign[k] = 1 if flow[k] == 0 else -1
        if i != j:
            if parent[t] != s:
                s, t = t, s
            if we.index(i) > we.index(j):
                p, q = q, p
            remove_edge(s, t)
            make_root(q)
            add_edge(i, p, q)
            update_potentials(i, p, q)
    if any(flow[k] != 0 for k in range(e, e + n)):
        raise Unfeasible("no flow satisfies all node demands")
    if any(flow[k] * 2 >= faux_inf for k in range(e)):
        raise Unbounded("negative cycle with infinite capacity found")
    return np.asarray(flow[:e], dtype=np.int64)
