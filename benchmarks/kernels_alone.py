"""Each engine kernel's calls taken from a stretch of the SWIM day and timed alone, beside the same calls in the run.

    python benchmarks/kernels_alone.py [--at 14000] [--ticks 20] [--slaves 600] [--kernels pipeline,account]
                                       [--save calls.pkl | --load calls.pkl]

Runs `trace-replay` of the FB-2009 day (`benchmarks/scale.py`'s cluster) to `--at` untimed, times the named kernels'
calls (default: the tick's) over `--ticks` ticks, records their arguments over the next `--ticks` (copied before each
call), and times each recorded call again alone, on fresh copies, five times; prints the median microseconds a call in
the run and alone (the copy made just before a call alone warms the caches with its arguments: "alone" is the
kernel's arithmetic with its data at hand). Compare them in the same minute, several times: the machine's speed
drifts. `--save` keeps the calls (a
pickle) so that a variant of a kernel can be timed on them without running the day again (`--load`): a kernel change
must give the same outputs, bit for bit (its test in tests/test_kernels.py, and `benchmarks/digests.py`).
"""

from __future__ import annotations

import argparse
import copy
import math
import pickle
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # this checkout's packages, not an installed one
sys.path.insert(0, str(ROOT / "benchmarks"))

import scale  # noqa: E402  (this directory's: the SWIM trace and the cluster's shape)
from kernel_wrap import kernels, patch_kernels  # noqa: E402

TICK_KERNELS = ("find_idle_rows", "flatten_streams", "memory_stage", "cache_stage", "demand_inputs", "demand",
                "cpu_setup", "share_cpu", "share_io", "pipeline", "progress", "account", "cache_files_update",
                "cache_settle")  # fmt: skip


def record(at: float, ticks: int, slaves: int, names: tuple[str, ...]) -> dict[str, list[tuple[tuple, float]]]:
    """The named kernels' calls over `ticks` ticks from `at` + `ticks`: (a copy of the arguments, seconds a call took
    in the run). The seconds are taken over the `ticks` ticks before, with nothing but the clock around the calls: a
    copy of the arguments made just before a call would cool the caches it reads (its writes evict them)."""
    from scenarios.registry import SCENARIOS
    from scenarios.runner import run_model
    from scenarios.settings import validate

    scenario = SCENARIOS["trace-replay"]
    model = scenario.build(validate(scenario.Settings, scale.settings(slaves, scale.jobs_in("day"))), seed=1)
    run_model(model, at, progress=False)
    seconds: dict[str, list[float]] = {name: [] for name in names}
    kept: dict[str, list[tuple]] = {name: [] for name in names}

    def timed(kernel, name):
        def call(*args):
            start = time.perf_counter()
            result = kernel(*args)
            seconds[name].append(time.perf_counter() - start)
            return result

        return call

    def copied(kernel, name):
        def call(*args):
            kept[name].append(copy.deepcopy(args))
            return kernel(*args)

        return call

    for wrap, until in ((timed, at + ticks * model.dt), (copied, at + 2 * ticks * model.dt)):
        restore = patch_kernels(wrap, names)
        try:
            run_model(model, until, progress=False)
        finally:
            restore()
    median = {name: statistics.median(seconds[name]) if seconds[name] else math.nan for name in names}
    return {name: [(args, median[name]) for args in kept[name]] for name in names}


def alone(name: str, args: tuple, repeats: int = 5) -> list[float]:
    """Seconds of `repeats` calls of kernel `name` on fresh copies of `args`."""
    import scenarios.registry  # noqa: F401  (loads the packages' kernels)

    kernel, seconds = kernels()[name], []
    for _ in range(repeats):
        fresh = copy.deepcopy(args)
        start = time.perf_counter()
        kernel(*fresh)
        seconds.append(time.perf_counter() - start)
    return seconds


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--at", type=float, default=14_000.0, help="simulated second to start recording at")
    parser.add_argument("--ticks", type=int, default=20)
    parser.add_argument("--slaves", type=int, default=600)
    parser.add_argument("--kernels", default=",".join(TICK_KERNELS))
    parser.add_argument("--save", type=Path, help="keep the recorded calls in this file")
    parser.add_argument("--load", type=Path, help="time the calls kept in this file (no run)")
    args = parser.parse_args(argv)
    if args.load:
        calls = pickle.loads(args.load.read_bytes())
    else:
        calls = record(args.at, args.ticks, args.slaves, tuple(args.kernels.split(",")))
        if args.save:
            args.save.write_bytes(pickle.dumps(calls))
    print(f"{'kernel':<20} {'calls':>5} {'in run us':>10} {'alone us':>9}")
    for name, made in calls.items():
        if not made:
            continue
        ran = statistics.median(seconds for _, seconds in made)
        by_itself = statistics.median(s for kept, _ in made for s in alone(name, kept))
        print(f"{name:<20} {len(made):>5} {1e6 * ran:>10.1f} {1e6 * by_itself:>9.1f}")


if __name__ == "__main__":
    main()
