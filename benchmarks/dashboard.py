"""Redraw time of the dashboard for a step of the full-scale `flexslot` scenario (issue 17: well under a second).

    python benchmarks/dashboard.py [--scale 1.0] [--allocator drs] [--steps 40] [--step-s 30]

Steps the scenario as the page does (`DashboardModel`, `--step-s` simulated seconds per step) and, after each
step, times what the server does to redraw: the panels' data (`snapshot`) and every panel updated and encoded as
the PNG the page sends (`app.panel_png`). Prints the model's own step time beside it, and the median, 90th
percentile and maximum redraw over the run (wall and CPU seconds: the machine is shared and its speed drifts).
The browser's share (receiving and showing four PNGs) is not in these numbers.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from scenarios.dashboard.figures import PANELS, png
from scenarios.dashboard.models import DashboardModel


def redraw(model: DashboardModel, panels: dict) -> None:
    """What a redraw costs the server: the snapshot, then each panel updated (built the first time) and encoded."""
    snap = model.snapshot()
    for kind, make in PANELS.items():
        if kind in panels:
            panels[kind].update(snap)
        else:
            panels[kind] = make(snap)
        png(panels[kind].fig)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scale", type=float, default=1.0)
    parser.add_argument("--allocator", default="drs")
    parser.add_argument("--steps", type=int, default=40, help="steps to time (the run may end before)")
    parser.add_argument("--step-s", type=float, default=30.0)
    args = parser.parse_args()
    model = DashboardModel("flexslot", rng=1, chunk_s=args.step_s, allocator=args.allocator, scale=args.scale)
    panels: dict = {}
    redraw(model, panels)  # the first draw builds the figures (once per model)
    steps, walls, cpus = [], [], []
    for _ in range(args.steps):
        if not model.running:
            break
        t0 = time.perf_counter()
        model.step()
        steps.append(time.perf_counter() - t0)
        t0, c0 = time.perf_counter(), time.process_time()
        redraw(model, panels)
        walls.append(time.perf_counter() - t0)
        cpus.append(time.process_time() - c0)
    q = statistics.quantiles(walls, n=10)[-1] if len(walls) > 1 else walls[0]
    print(f"flexslot scale={args.scale:g} allocator={args.allocator}: {len(walls)} steps of {args.step_s:g} s "
          f"to t={float(model.sim.time):.0f} s; {len(model.snapshot().map_runtimes)} maps finished")  # fmt: skip
    print(f"model step: median {statistics.median(steps):.3f} s")
    print(f"redraw (snapshot + 4 panels as PNG): median {statistics.median(walls):.3f} s, p90 {q:.3f} s, "
          f"max {max(walls):.3f} s wall; median {statistics.median(cpus):.3f} s CPU")  # fmt: skip


if __name__ == "__main__":
    main()
