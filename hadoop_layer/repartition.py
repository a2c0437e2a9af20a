"""Stopping a running map at its input offset and handing the rest of its split to new maps (`Repartition`).

This is the mechanism behind SkewTune's take-over (algorithms.md 5); the layer carries it out for whichever policy
asks. The stopped attempt keeps the range its map function has consumed, [0, input_done_mb): reading precedes
mapping here (plans.py), so what it has read beyond that was read ahead; that read stays done (and charged) but
the range goes to the pieces. Its task shrinks to the kept range (`Task.truncate`), and its remaining phases become
what the plan of the shrunk split still needs beyond the work already done: its spills and merge, as a stopped
Hadoop task flushes the output of the records it has mapped.

The unprocessed range [offset, split) becomes contiguous pieces, new map tasks of the same job, each with its
share of the split's CPU, output and records (work per MB is uniform inside a split). Their input is on the
stopped attempt's node: a piece launched elsewhere reads it over the network (rack-local or off-rack), as the
moved data must travel. Their outputs are fetched by the reduces like any map's, so the job's map phase ends
when the last piece ends and the reduce input is the concatenation of the ranges in order.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import replace
from typing import TYPE_CHECKING

import numpy as np

from hadoop_layer.plans import Route, hdfs_read
from vcloud.work import Phase

if TYPE_CHECKING:
    from hadoop_layer.profiles import MapSpec
    from hadoop_layer.tasks import Task

DONE_FRACTION = 1e-9  # a phase left with less than this share of its work is done
Mark = tuple[float, float]


def _keys(phases: list[Phase]) -> list[tuple[str, int]]:
    """(name, occurrence) of each phase: a phase's identity across two plans of the same task."""
    seen: Counter[str] = Counter()
    keys = []
    for p in phases:
        keys.append((p.name, seen[p.name]))
        seen[p.name] += 1
    return keys


def remaining_phases(
    old: list[Phase], index: int, done_in_current: float, new: list[Phase], new_marks: list[Mark]
) -> tuple[list[Phase], list[Mark]]:
    """What is left of plan `new` for an item that ran plan `old` up to phase `index`, `done_in_current` of it done.

    Phases of `new` already completed under `old` are dropped; the current phase keeps what it has done (its
    progress mark starts where that leaves it); a current phase that `new` does not need ends at once. The rest
    of `new` follows. Never empty: an item with nothing left gets one empty phase (it ends in the next tick).
    """
    old_keys = _keys(old)
    completed, current = set(old_keys[:index]), old_keys[index]
    kept = [(p, m, k) for p, m, k in zip(new, new_marks, _keys(new), strict=True) if k not in completed]
    phases: list[Phase] = []
    marks: list[Mark] = []
    for p, (lo, hi), key in kept:
        if key == current:
            done = min(max(done_in_current, 0.0), p.amount)
            frac = done / p.amount if p.amount > 0 else 1.0
            p, lo = replace(p, amount=p.amount - done), lo + (hi - lo) * frac
            if p.amount <= DONE_FRACTION * (p.amount + done):  # float dust of truncating at the offset reached
                continue
        phases.append(p)
        marks.append((lo, hi))
    if not phases:
        end = new_marks[-1][1] if new_marks else 1.0
        phases, marks = [Phase.wait("commit", 0.0)], [(end, end)]
    return phases, marks


def with_scan(phases: list[Phase], marks: list[Mark], scan_mb: float, route: Route):
    """Put a read of `scan_mb` (from where the split is read) before `phases`; progress holds still meanwhile."""
    if scan_mb <= 0:
        return phases, marks
    return [hdfs_read("scan", scan_mb, route), *phases], [(marks[0][0], marks[0][0]), *marks]


def piece_specs(task: Task, pieces_mb: np.ndarray, node: int) -> list[MapSpec]:
    """Task keyword arguments of pieces of `task`'s split (before it is truncated): their share of its work."""
    whole = max(task.input_mb, 1e-12)
    return [
        {
            "input_mb": float(mb),
            "cpu_mc": task.cpu_mc * mb / whole,
            "output_mb": task.output_mb * mb / whole,
            "output_records": task.output_records * mb / whole,
            "replicas": np.array([node], dtype=np.int64),
        }
        for mb in pieces_mb
    ]


def check_shares(task_id: str, shares, unprocessed_mb: float) -> np.ndarray:
    """Piece sizes in MB from relative `shares` of `unprocessed_mb`; ValueError unless all shares are > 0."""
    w = np.asarray(shares, dtype=float)
    if w.ndim != 1 or len(w) == 0 or np.any(~(w > 0)) or not np.all(np.isfinite(w)):
        raise ValueError(f"repartition {task_id}: shares={list(np.ravel(w))} must be finite and > 0")
    return unprocessed_mb * w / w.sum()
