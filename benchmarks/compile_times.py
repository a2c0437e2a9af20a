"""Where a first run's compile goes: each kernel's own compile time, from numba's `numba:compile` events.

    NUMBA_CACHE_DIR=$(mktemp -d) python benchmarks/compile_times.py [--scenario flexslot] [--scale 0.1] [--top 40]

Run it against an empty cache (a fresh `NUMBA_CACHE_DIR`, as above), or nothing compiles. numba compiles a callee
inside its caller's compile, so each kernel's time is its own: the events' nesting is walked with a stack and a
callee's time taken off its caller's. The times are wall seconds (numba's events carry no CPU clock): on a loaded
machine read them as shares. `xN` is how many specializations were compiled: more than one means some caller typed
an argument differently (a `Literal[int](0)` was one: `vcloud.numerics.I0`).
"""

from __future__ import annotations

import argparse
import collections
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scenario", default="flexslot")
    parser.add_argument("--scale", type=float, default=0.1)
    parser.add_argument("--top", type=int, default=40)
    args = parser.parse_args()
    from numba.core import event

    recorder = event.RecordingListener()
    event.register("numba:compile", recorder)
    from scenarios.registry import SCENARIOS
    from scenarios.runner import run_model
    from scenarios.settings import validate

    scenario = SCENARIOS[args.scenario]
    cpu = time.process_time()
    model = scenario.build(validate(scenario.Settings, {"scale": args.scale}), seed=1)
    run_model(model, scenario.horizon_s(model), progress=False)
    cpu = time.process_time() - cpu
    own: collections.Counter[str] = collections.Counter()
    count: collections.Counter[str] = collections.Counter()
    stack: list[list] = []  # [name, start, callees' time]
    for stamp, ev in recorder.buffer:
        func = ev.data["dispatcher"].py_func
        name = f"{func.__module__}.{func.__qualname__}"
        if ev.is_start:
            stack.append([name, stamp, 0.0])
            continue
        _, start, callees = stack.pop()
        own[name] += stamp - start - callees
        count[name] += 1
        if stack:
            stack[-1][2] += stamp - start
    total = sum(own.values())
    print(f"run {cpu:.1f} s CPU; {len(own)} functions, {sum(count.values())} specializations, {total:.1f} s compiling")
    for name, seconds in own.most_common(args.top):
        print(f"{seconds:7.2f} s {100 * seconds / total:5.1f} %  x{count[name]}  {name}")


if __name__ == "__main__":
    main()
