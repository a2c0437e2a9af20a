"""Each engine kernel's calls taken from a stretch of the SWIM day and timed alone, beside the same calls in the run.

    python benchmarks/kernels_alone.py [--at 14000] [--ticks 20] [--slaves 600] [--kernels pipeline,account]
                                       [--save calls.pkl | --load calls.pkl]

Runs `trace-replay` of the FB-2009 day (`benchmarks/scale.py`'s cluster) to `--at` untimed, then records the arguments
of every call of the named kernels (default: the tick's) over `--ticks` ticks, copied before each call, and times each
call again alone, on fresh copies, five times; prints the median microseconds a call in the run and alone (the copy
made just before a call alone warms the caches with its arguments: "alone" is the kernel's arithmetic with its data
at hand). Session 19 saw the run's calls at 1.1-1.3x the lone ones in one quiet minute and at 2.3-4.6x on a
machine loaded by two other jobs, so compare them in the same minute, several times. `--save` keeps the calls (a
pickle) so that a variant of a kernel can be timed on them without running the day again (`--load`): a kernel change
must give the same outputs, bit for bit (its test in tests/test_kernels.py, and `benchmarks/digests.py`).
"""

from __future__ import annotations

import argparse
import copy
import pickle
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # this checkout's packages, not an installed one
sys.path.insert(0, str(ROOT / "benchmarks"))

import scale  # noqa: E402  (this directory's: the SWIM trace and the cluster's shape)

TICK_KERNELS = ("idle_rows", "flat_streams", "memory_stage", "cache_stage", "demand_inputs", "demand", "cpu_setup",
                "share_cpu", "share_io", "pipeline", "progress", "account", "cache_files_update",
                "cache_settle")  # fmt: skip


def record(at: float, ticks: int, slaves: int, names: tuple[str, ...]) -> dict[str, list[tuple[tuple, float]]]:
    """The named kernels' calls over `ticks` ticks from `at`: (a copy of the arguments, seconds the call took)."""
    from scenarios.registry import SCENARIOS
    from scenarios.runner import run_model
    from scenarios.settings import validate
    from vcloud import kernels

    scenario = SCENARIOS["trace-replay"]
    model = scenario.build(validate(scenario.Settings, scale.settings(slaves, scale.jobs_in("day"))), seed=1)
    run_model(model, at, progress=False)
    calls: dict[str, list[tuple[tuple, float]]] = {name: [] for name in names}

    def recorded(kernel, name):
        def call(*args):
            kept = copy.deepcopy(args)
            start = time.perf_counter()
            result = kernel(*args)
            calls[name].append((kept, time.perf_counter() - start))
            return result

        return call

    originals = {name: getattr(kernels, name) for name in names}
    for name, kernel in originals.items():
        setattr(kernels, name, recorded(kernel, name))
    try:
        run_model(model, at + ticks * model.dt, progress=False)
    finally:
        for name, kernel in originals.items():
            setattr(kernels, name, kernel)
    return calls


def alone(name: str, args: tuple, repeats: int = 5) -> list[float]:
    """Seconds of `repeats` calls of kernel `name` on fresh copies of `args`."""
    from vcloud import kernels

    kernel, seconds = getattr(kernels, name), []
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
