"""Update time of the dashboard for a step against the model's step (issue 42's budget: an update costs no more
than the step at full-scale flexslot, and at most 1 s for a 600-node trace replay).

    python benchmarks/dashboard.py [--scale 1.0] [--allocator drs] [--steps 40] [--step-s 30]
    python benchmarks/dashboard.py --run RUN_DIR [--steps 40]     # a finished run (e.g. a 534-node trace replay)

Live: steps the scenario as the page does (`DashboardModel`) and, after each step, times what the server does for
a redraw: the snapshot, every chart's changed rows (`charts.Board.update`), the patches as JSON (what goes to the
browser) and the two tables. A run directory: the same for each step of the replay (`ReplayModel`). Prints the
median, 90th percentile and maximum update (wall and CPU seconds: the machine is shared) beside the model's step
(wall and CPU), and the rows and bytes a step sends. The browser's share (Vega applying the changes) is not in these
numbers.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from scenarios.dashboard.charts import Board
from scenarios.dashboard.models import DashboardModel, ReplayModel
from scenarios.dashboard.views import job_table


def update(model, board: Board | None) -> tuple[Board, int]:
    """What a redraw costs the server; the board and the bytes of the patches it sends."""
    snap = model.snapshot()
    if board is None or snap.time_s < board.time:
        board = Board(snap)
    else:
        board.update(snap)
    sent = sum(len(json.dumps(c.patch)) for c in board.charts.values())
    board.events(snap)
    if snap.jobs is not None:
        job_table(snap.jobs)
    return board, sent


def quantiles(values: list[float]) -> str:
    p90 = statistics.quantiles(values, n=10)[-1] if len(values) > 1 else values[0]
    return f"median {statistics.median(values):.3f} s, p90 {p90:.3f} s, max {max(values):.3f} s"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scale", type=float, default=1.0)
    parser.add_argument("--allocator", default="drs")
    parser.add_argument("--steps", type=int, default=40, help="steps to time (the run may end before)")
    parser.add_argument("--step-s", type=float, default=30.0)
    parser.add_argument("--run", type=Path, help="time the replay of this run directory instead")
    args = parser.parse_args()
    if args.run is not None:
        model = ReplayModel(str(args.run), chunk_s=args.step_s, at_end=False)
        what = f"replay of {args.run} ({len(model.frames.trace['vm'].unique())} VMs)"
    else:
        model = DashboardModel("flexslot", rng=1, chunk_s=args.step_s, allocator=args.allocator, scale=args.scale)
        what = f"flexslot scale={args.scale:g} allocator={args.allocator}"
    t0 = time.perf_counter()
    board, _ = update(model, None)  # the first draw builds the charts (once per model)
    first = time.perf_counter() - t0
    steps, step_cpus, walls, cpus, sent = [], [], [], [], []
    for _ in range(args.steps):
        if not model.running:
            break
        t0, c0 = time.perf_counter(), time.process_time()
        model.step()
        steps.append(time.perf_counter() - t0)
        step_cpus.append(time.process_time() - c0)
        t0, c0 = time.perf_counter(), time.process_time()
        board, nbytes = update(model, board)
        walls.append(time.perf_counter() - t0)
        cpus.append(time.process_time() - c0)
        sent.append(nbytes)
    end = model.snapshot().time_s
    print(f"{what}: {len(walls)} steps of {args.step_s:g} s to t={end:.0f} s; first draw {first:.2f} s")
    print(f"model step: {quantiles(steps)} wall; median {statistics.median(step_cpus):.3f} s CPU")
    print(f"update (snapshot + changed rows of {len(board.charts)} charts + tables): {quantiles(walls)} wall; "
          f"median {statistics.median(cpus):.3f} s CPU")  # fmt: skip
    print(f"sent per step: median {statistics.median(sent) / 1024:.0f} KB, max {max(sent) / 1024:.0f} KB")
    worst = statistics.median(walls) / max(statistics.median(steps), 1e-9)
    cpu = statistics.median(cpus) / max(statistics.median(step_cpus), 1e-9)
    print(f"update / step (medians): {worst:.2f} wall, {cpu:.2f} CPU (CPU is the fairer one on a shared machine)")


if __name__ == "__main__":
    main()
