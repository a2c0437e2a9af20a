"""Wall time of each compiled kernel in a stretch of the SWIM day, beside the stretch's CPU.

    python benchmarks/kernel_times.py [--from 11000] [--until 20000] [--slaves 600] [--top 20]

Builds `trace-replay` of the FB-2009 day as `benchmarks/scale.py` does, runs it to `--from` untimed, then wraps every
compiled kernel where the model calls it (`benchmarks/kernel_wrap.py`; a kernel called by another is not seen) with a
`time.perf_counter` pair and runs to `--until`. Prints the stretch's CPU seconds, the kernels' share, and the `--top`
kernels: seconds, calls and microseconds a call (each call's own dispatch included; the wrapper adds about a
microsecond). Session 18 measured 11,000-20,000 s: kernels 24 % of 63 s, `copiers_take` first at 3.1 % before its
crowded-reduce walk. The machine is shared: compare shares, or counts (`benchmarks/instructions.py --from`), rather than
seconds across minutes.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # this checkout's packages, not an installed one
sys.path.insert(0, str(ROOT / "benchmarks"))

import scale  # noqa: E402  (this directory's: the SWIM trace and the cluster's shape)
from kernel_wrap import patch_kernels  # noqa: E402


def timed(kernel: Callable, name: str, spent: Counter, calls: Counter) -> Callable:
    def wrapper(*args, **kwargs):
        start = time.perf_counter()
        try:
            return kernel(*args, **kwargs)
        finally:
            spent[name] += time.perf_counter() - start
            calls[name] += 1

    return wrapper


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--from", dest="start", type=float, default=11_000.0, help="simulated second to start timing")
    parser.add_argument("--until", type=float, default=20_000.0)
    parser.add_argument("--slaves", type=int, default=600)
    parser.add_argument("--top", type=int, default=20)
    args = parser.parse_args(argv)
    from scenarios.registry import SCENARIOS
    from scenarios.runner import run_model
    from scenarios.settings import validate

    scenario = SCENARIOS["trace-replay"]
    model = scenario.build(validate(scenario.Settings, scale.settings(args.slaves, scale.jobs_in("day"))), seed=1)
    run_model(model, args.start, progress=False)
    spent: Counter = Counter()
    calls: Counter = Counter()
    patch_kernels(lambda kernel, name: timed(kernel, name, spent, calls))
    cpu = time.process_time()
    run_model(model, args.until, progress=False)
    cpu = time.process_time() - cpu
    total = sum(spent.values())
    print(f"slaves={args.slaves} from={args.start:.0f} until={args.until:.0f} cpu_s={cpu:.2f} "
          f"kernels_s={total:.2f} ({100 * total / cpu:.0f} %)")  # fmt: skip
    for name, seconds in spent.most_common(args.top):
        print(f"  {name:<24} {seconds:7.3f} s {100 * seconds / cpu:5.1f} % {calls[name]:>8} calls "
              f"{1e6 * seconds / calls[name]:8.1f} us")  # fmt: skip


if __name__ == "__main__":
    main()
