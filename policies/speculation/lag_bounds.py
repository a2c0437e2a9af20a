"""The Hadoop speculation rule's lag bounds over all running attempts at once (compiled; its caller: hadoop.py)."""

from __future__ import annotations

import numpy as np

from vcloud.numerics import ascending_order, kernel, np_max, np_min


@kernel
def running_lag_bounds(
    finished: np.ndarray,
    tasks: np.ndarray,
    gid: np.ndarray,
    kind: np.ndarray,
    job: np.ndarray,
    task_start: np.ndarray,
    progress: np.ndarray,
    attempts: np.ndarray,
    max_execs: int,
    sure_at: float,
    maybe_at: float,
) -> tuple[float, float, float, float, np.ndarray]:
    """`policies.speculation.hadoop.lag_bounds`' arithmetic over the running attempts: each (job, kind)'s average
    progress, (`done` finished tasks + the running ones' progress, a task with backups counted once at its best
    attempt's) / `size` tasks, by 2 x job + kind; then per kind the earliest task start among the single-attempt
    tasks whose job average and gap below it are at least `sure_at`, and `maybe_at`. Returns the map bounds (sure,
    maybe), the reduce bounds, and a 3 x groups array: the groups with entries (in order of their first entry, as
    floats), their averages and their own "maybe" bounds (the earliest start of such a task of the group; inf if
    none). The NumPy form's bits: np.maximum.at and the bincount in entry order, minimum in entry order (the starts
    are times: no NaN, no -0.0). `finished` and `tasks`: by 2 x job + kind, the running jobs' finished tasks and tasks
    (`hadoop_layer.ledger.RunningLedger`; 0 of 1 past their end). Only the entries' groups are worked out: the highest
    job number with an entry nears the run's job count (5,000 on the SWIM day) while a few jobs run, and arrays over
    every group were most of a verdict there (31 us of 76 entries). The best attempts are found among the entries of
    tasks with backups, grouped by a sort of their gids, not in an array indexed by gid (the run's task count)."""
    m = progress.size
    top = 1
    for i in range(m):
        top = max(top, job[i] + 1)
    weight = progress
    spread = False
    for i in range(m):
        spread = spread or not attempts[i] <= max_execs
    if spread:  # a task with a backup counts once, at its best attempt's progress
        weight = np.empty(m)
        for i in range(m):
            weight[i] = np_max(0.0, progress[i]) / attempts[i]
        shared = np.flatnonzero(attempts > 1)  # the entries of tasks with backups, grouped by gid in entry order
        order = shared[ascending_order(gid[shared])]
        a = 0
        while a < order.size:
            b, best = a, 0.0
            while b < order.size and gid[order[b]] == gid[order[a]]:
                best = np_max(best, progress[order[b]])
                b += 1
            for c in range(a, b):
                weight[order[c]] = best / attempts[order[c]]
            a = b
    # the groups with entries, in order of their first entry: `place` (by group, written for those only) holds each
    # one's place among them; each sum starts at 0.0 and adds its entries' weights in entry order (the bincount's)
    place = np.empty(2 * top, np.int64)
    for i in range(m):
        place[2 * job[i] + kind[i]] = -1
    groups, sums = np.empty(m, np.int64), np.empty(m)
    count = 0
    for i in range(m):
        g = 2 * job[i] + kind[i]
        if place[g] < 0:
            place[g], groups[count], sums[count] = count, g, 0.0
            count += 1
        sums[place[g]] += weight[i]
    averages = np.empty(count)
    for c in range(count):
        g = groups[c]
        done, size = (finished[g], tasks[g]) if g < finished.size else (0.0, 1.0)
        averages[c] = (done + sums[c]) / size
    sure = np.full(2, np.inf)
    maybe = np.full(2, np.inf)
    # the groups (as floats: exact below 2**53), their averages and own "maybe" bounds, one array (one boxing a call)
    by_group = np.empty((3, count))
    group_maybe = by_group[2]
    group_maybe[:] = np.inf
    for i in range(m):
        if attempts[i] <= max_execs:
            k = kind[i]
            c = place[2 * job[i] + k]
            average = averages[c]
            gap = average - progress[i]
            if average >= sure_at and gap >= sure_at:
                sure[k] = np_min(sure[k], task_start[i])
            if average >= maybe_at and gap >= maybe_at:
                maybe[k] = np_min(maybe[k], task_start[i])
                group_maybe[c] = np_min(group_maybe[c], task_start[i])
    for c in range(count):
        by_group[0, c], by_group[1, c] = groups[c], averages[c]
    return sure[0], maybe[0], sure[1], maybe[1], by_group
