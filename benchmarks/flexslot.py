"""Wall time of `vcloud run flexslot` (the FlexSlot testbed, wordcount) by allocator and scale.

    python benchmarks/flexslot.py [--scale 1.0] [--repeats 3]

Times build + run (not the pilot of `allocator=heterogeneous`, which is a second run) and prints one
line per allocator: simulated seconds, ticks, maps, wall and CPU seconds (medians of the repeats) and the
simulated-to-wall speed. CPU time is printed because the wall time of a shared machine drifts (up to 1.5x
between minutes here); compare commits side by side. The issue's target: scale 1.0 (2,400 maps) in at most
2 s on 2 cores.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from scenarios.flexslot import FlexSlot
from scenarios.runner import run_model
from scenarios.settings import validate


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scale", type=float, default=1.0)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    scenario = FlexSlot()
    print(f"{'allocator':<10} {'sim_s':>7} {'ticks':>6} {'maps':>6} {'wall_s':>7} {'cpu_s':>6} {'sim/wall':>9}")
    for allocator in ("static", "drs"):
        walls, cpus = [], []
        for _ in range(args.repeats):
            settings = validate(scenario.Settings, {"allocator": allocator, "scale": args.scale})
            start, cpu = time.perf_counter(), time.process_time()
            model = scenario.build(settings, seed=1)
            run_model(model, scenario.horizon_s(model), progress=False)
            walls.append(time.perf_counter() - start)
            cpus.append(time.process_time() - cpu)
        sim = model.ticks * model.dt
        wall = statistics.median(walls)
        maps = len(model.jobtracker.jobs[0].maps)
        cpu = statistics.median(cpus)
        print(f"{allocator:<10} {sim:>7.0f} {model.ticks:>6} {maps:>6} {wall:>7.2f} {cpu:>6.2f} {sim / wall:>9.0f}")


if __name__ == "__main__":
    main()
