"""The shuffle servers' compiled tick (`shuffle_move`) on its heaviest calls of the SWIM day, replayed alone.

    python benchmarks/shuffle.py [--until 31000] [--keep 20] [--save FILE | --load FILE] [--repeats 5]

Runs `trace-replay` of the FB-2009 day on 600 slaves (benchmarks/scale.py's settings) to `--until` simulated seconds,
keeping a copy of the arguments of the `--keep` calls that took longest (the day's heavy hours, around 30,000 s, have
a few hundred reduces fetching at once), then times `shuffle_move` on copies of them (the fastest of `--repeats`) and
prints microseconds a call with each call's queue shape: served rows, the width read and the requests (nonzero cells)
among them. `--save` keeps the captured calls (pickle) so that `--load` times another commit's kernel on the very same
inputs in seconds: `python benchmarks/shuffle.py --save /tmp/calls.pkl` once, then
`python OTHER_CHECKOUT/benchmarks/shuffle.py --load /tmp/calls.pkl` and `python benchmarks/shuffle.py --load ...`.
The calls are kept in the dense queue's form (the kernel's arguments up to commit c6e7c54: the (2 x nodes) x columns
queue matrix), which both the dense and the sparse kernel's scripts read: this one lays each call out sparse
(`sparse`) before timing it, the layout's cost not timed, as a run keeps its queue sparse throughout.
The script puts its own checkout first on sys.path. The capture takes a few minutes (the day's first 31,000 s).
"""

from __future__ import annotations

import argparse
import heapq
import pickle
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

import scale  # noqa: E402  (benchmarks/scale.py: the trace and its cluster shape)
from kernel_wrap import patch_kernels  # noqa: E402

from hadoop_layer.shuffle_queue import DRAINED_MB, SparseQueue, queue_dense, shuffle_move  # noqa: E402


def _copy(args: tuple) -> tuple:
    copied = (a.copy() if isinstance(a, np.ndarray) else a for a in args)
    return tuple(_copy(a) if isinstance(a, tuple) else a for a in copied)  # the queue: a SparseQueue's fields


def dense(args: tuple) -> tuple:
    """A sparse kernel call's arguments in the dense form (the queue matrix in place of the rows and counts)."""
    fields, width, n, left, serve_row, remaining, remote, held, read, sent = args
    sq = SparseQueue(*fields)
    queue = queue_dense(sq.col, sq.val, sq.length, held.size)
    return queue, width, n, left, serve_row, remaining, remote, held, read, sent, sq.row_sum, sq.stale, DRAINED_MB


def sparse(call: tuple) -> tuple:
    """A dense-form call laid out as the sparse kernel's arguments, its rows with room for twice the longest's entries
    (as a run's rows, widened twofold each time one had no room: the kernel's merges of read bytes into the send
    rows widen none of them here)."""
    queue, width, n, left, serve_row, remaining, remote, held, read, sent, row_sum, stale, drained = call
    q_len = np.count_nonzero(queue, axis=1).astype(np.int64)
    room = 2 * int(q_len.max(initial=1))
    q_col, q_val = np.zeros((queue.shape[0], room), np.int64), np.zeros((queue.shape[0], room))
    for r in range(queue.shape[0]):
        at = np.flatnonzero(queue[r])
        q_col[r, : at.size], q_val[r, : at.size] = at, queue[r, at]
    col_nnz = np.count_nonzero(queue, axis=0).astype(np.int64)
    col_big = np.count_nonzero(queue > drained, axis=0).astype(np.int64)
    queue_record = tuple(SparseQueue(q_col, q_val, q_len, row_sum, stale, col_nnz, col_big))  # as kernels take it
    return queue_record, width, n, left, serve_row, remaining, remote, held, read, sent


def capture(until: float, keep: int) -> list[tuple]:
    """The arguments (as they were before the call, dense) of the `keep` slowest `shuffle_move` calls to `until`."""
    from scenarios.registry import SCENARIOS
    from scenarios.runner import run_model
    from scenarios.settings import validate

    slowest: list[tuple[float, int, tuple]] = []  # a heap of (seconds, call number, arguments)
    calls = [0]

    def timed(*args):
        before = _copy(args)
        start = time.perf_counter()
        out = shuffle_move(*args)
        spent = time.perf_counter() - start
        calls[0] += 1
        entry = (spent, calls[0], before)
        if len(slowest) < keep:
            heapq.heappush(slowest, entry)
        elif spent > slowest[0][0]:
            heapq.heapreplace(slowest, entry)
        return out

    restore = patch_kernels(lambda kernel, name: timed, ["shuffle_move"])
    try:
        scenario = SCENARIOS["trace-replay"]
        model = scenario.build(validate(scenario.Settings, scale.settings(600, scale.jobs_in("day"))), seed=1)
        run_model(model, until, progress=False)
    finally:
        restore()
    return [dense(args) for _, _, args in sorted(slowest, key=lambda e: e[1])]


def shape(args: tuple) -> tuple[int, int, int]:
    """Served rows, the width read and the requests among the served rows' cells (as `shuffle_move` finds them)."""
    queue, width, n, left, serve_row, remaining = args[:6]
    done = left - np.where(serve_row >= 0, remaining[np.maximum(serve_row, 0)], 0.0)
    served = np.flatnonzero(done[: 2 * n] > 0)
    return served.size, width, int(np.count_nonzero(queue[served, :width]))


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--until", type=float, default=31_000.0, help="simulated seconds of the day to capture from")
    parser.add_argument("--keep", type=int, default=20, help="how many of the slowest calls to keep")
    parser.add_argument("--save", type=Path, help="keep the captured calls in this file")
    parser.add_argument("--load", type=Path, help="time the calls kept in this file instead of capturing")
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args(argv)
    if args.load:
        calls = pickle.loads(args.load.read_bytes())
    else:
        calls = capture(args.until, args.keep)
        if args.save:
            args.save.write_bytes(pickle.dumps(calls))
    laid_out = [sparse(call) for call in calls]
    shuffle_move(*_copy(laid_out[0]))  # compiled or loaded before timing
    total = 0.0
    print(f"{'served':>6} {'width':>5} {'requests':>8} {'us':>8}")
    for call, mine in zip(calls, laid_out, strict=True):
        best = min(_timed_once(mine) for _ in range(args.repeats))
        total += best
        served, width, requests = shape(call)
        print(f"{served:>6} {width:>5} {requests:>8} {1e6 * best:>8.0f}")
    print(f"{len(calls)} calls, {1e6 * total / max(len(calls), 1):.0f} us a call")


def _timed_once(call: tuple) -> float:
    fresh = _copy(call)  # the kernel changes its arguments in place
    start = time.perf_counter()
    shuffle_move(*fresh)
    return time.perf_counter() - start


if __name__ == "__main__":
    main()
