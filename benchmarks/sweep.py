"""Wall and CPU time of a whole `vcloud sweep` on 1 and 2 workers, local processes and `--dask local`.

    python benchmarks/sweep.py [--spec scenarios/specs/issue16_flexslot12.toml] [--repeats 3]
                               [--workers 1 2] [--backends processes dask] [--code DIR ...]

Each measurement is a fresh `python -m scenarios.cli sweep SPEC --out TMP --processes N [--dask local] --quiet`
process (start-up imports included, as a user pays them); CPU is that process's and its workers' (user + system).
The configurations are interleaved (repeat 1 of each, then repeat 2 of each, ...) because a shared machine's
load drifts between minutes; each line prints the median and the range of the repeats, and the load average
before and after is printed so that a reader knows how noisy the figures are. `--code DIR` (repeatable) runs the
same commands against another checkout of the package (for example `git archive main | tar -x -C /tmp/main`),
to compare code before and after a change side by side. Issue 16's target: 2 workers at least 1.8x faster than 1
on the 12-run flexslot spec, for both backends.
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SPEC = ROOT / "scenarios" / "specs" / "issue16_flexslot12.toml"


def measure(code: Path, spec: Path, backend: str, workers: int) -> tuple[float, float]:
    """(wall s, CPU s) of one sweep into a fresh directory."""
    with tempfile.TemporaryDirectory() as tmp:
        dask = ["--dask", "local"] if backend == "dask" else []
        args = [sys.executable, "-m", "scenarios.cli", "sweep", str(spec), "--out", f"{tmp}/out",
                "--processes", str(workers), "--quiet", *dask]  # fmt: skip
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        start = time.perf_counter()
        subprocess.run(args, cwd=code, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        wall = time.perf_counter() - start
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--spec", type=Path, default=SPEC)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--workers", type=int, nargs="+", default=[1, 2])
    parser.add_argument("--backends", nargs="+", choices=["processes", "dask"], default=["processes", "dask"])
    parser.add_argument("--code", type=Path, action="append", help="a checkout to run (default: this one)")
    args = parser.parse_args()
    codes = [c.resolve() for c in args.code or [ROOT]]
    configs = [(c, b, w) for c in codes for b in args.backends for w in args.workers]
    walls: dict[tuple, list[float]] = {c: [] for c in configs}
    cpus: dict[tuple, list[float]] = {c: [] for c in configs}
    print(f"load average before: {' '.join(f'{x:.2f}' for x in os.getloadavg())}", flush=True)
    for _ in range(args.repeats):
        for config in configs:
            wall, cpu = measure(config[0], args.spec.resolve(), config[1], config[2])
            walls[config].append(wall)
            cpus[config].append(cpu)
    print(f"load average after:  {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    print(f"{'code':<24} {'backend':<10} {'workers':>7} {'wall_s':>7} {'(range)':>13} {'cpu_s':>6} {'(range)':>13} "
          f"{'speedup':>7}")  # fmt: skip
    for code, backend, workers in configs:
        wall, cpu = walls[code, backend, workers], cpus[code, backend, workers]
        one = statistics.median(walls[code, backend, args.workers[0]])
        print(f"{str(code)[-24:]:<24} {backend:<10} {workers:>7} {statistics.median(wall):>7.2f} "
              f"{f'{min(wall):.2f}-{max(wall):.2f}':>13} {statistics.median(cpu):>6.2f} "
              f"{f'{min(cpu):.2f}-{max(cpu):.2f}':>13} {one / statistics.median(wall):>6.2f}x")  # fmt: skip


if __name__ == "__main__":
    main()
