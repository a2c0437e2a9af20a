"""CPU seconds of an excerpt of the SWIM day (issue 16), and of launching and ending task attempts in it.

    python benchmarks/launches.py [--until 20000] [--slaves 600] [--paths]

Builds `trace-replay` of the FB-2009 day as `benchmarks/scale.py` does (`settings`) and runs it to `--until` simulated
seconds: the first 20,000 s at 600 slaves hold 143,196 launches (a few minutes' CPU less than the whole day). Prints
the build's and the model's CPU seconds. `--paths` also times, with `time.process_time` around each call, what a
launch costs (`JobTracker.launch`), an attempt's end (`JobTracker.attempt_finished`, the item's `stop_item` in the
tick) and a phase change in the tick (`CloudModel._load_phase`): totals, calls and microseconds a call (the timing
adds about a microsecond to each call and to the model's total). The machine is shared: compare commits side by side,
interleaved. The script puts its own checkout first on sys.path.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # this checkout's packages, not an installed one
sys.path.insert(0, str(ROOT / "benchmarks"))

import scale  # noqa: E402  (this directory's: the SWIM trace and the cluster's shape)

PATHS = {  # label: (module, class, method)
    "launch": ("hadoop_layer.jobtracker", "JobTracker", "launch"),
    "attempt_finished": ("hadoop_layer.jobtracker", "JobTracker", "attempt_finished"),
    "stop_item": ("vcloud.model", "CloudModel", "stop_item"),
    "load_phase": ("vcloud.model", "CloudModel", "_load_phase"),
}


def timed(spent: dict[str, float], calls: dict[str, int], label: str, method: Callable, depth: list[int]) -> Callable:
    """`method` that adds its CPU seconds to `spent[label]`, outermost calls only (a launch's own phase load is the
    launch's)."""

    def wrapper(*args, **kwargs):
        if depth[0]:
            return method(*args, **kwargs)
        depth[0] += 1
        start = time.process_time()
        try:
            return method(*args, **kwargs)
        finally:
            spent[label] += time.process_time() - start
            calls[label] += 1
            depth[0] -= 1

    return wrapper


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--until", type=float, default=20_000.0, help="simulated seconds to run (default 20,000)")
    parser.add_argument("--slaves", type=int, default=600)
    parser.add_argument("--paths", action="store_true", help="time launches, ends and phase loads too")
    args = parser.parse_args(argv)
    import importlib

    from scenarios.registry import SCENARIOS
    from scenarios.runner import run_model
    from scenarios.settings import validate

    spent = dict.fromkeys(PATHS, 0.0)
    calls = dict.fromkeys(PATHS, 0)
    if args.paths:
        depth = [0]
        for label, (module, cls, name) in PATHS.items():
            owner = getattr(importlib.import_module(module), cls)
            setattr(owner, name, timed(spent, calls, label, getattr(owner, name), depth))
    scenario = SCENARIOS["trace-replay"]
    cpu = time.process_time()
    model = scenario.build(validate(scenario.Settings, scale.settings(args.slaves, scale.jobs_in("day"))), seed=1)
    built = time.process_time()
    run_model(model, args.until, progress=False)
    ran = time.process_time()
    print(f"slaves={args.slaves} until={args.until:.0f} ticks={model.ticks} build_cpu_s={built - cpu:.2f} "
          f"model_cpu_s={ran - built:.2f}")  # fmt: skip
    for label in PATHS if args.paths else ():
        n = calls[label]
        print(f"  {label:<17} {spent[label]:7.2f} s {n:>8} calls {1e6 * spent[label] / max(n, 1):7.1f} us")


if __name__ == "__main__":
    main()
