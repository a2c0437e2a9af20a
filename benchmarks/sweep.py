"""Wall and CPU time of a whole `vcloud sweep` on 1 and 2 workers, local processes and `--dask local`.

    python benchmarks/sweep.py [--spec scenarios/specs/issue16_flexslot12.toml] [--repeats 3]
                               [--workers 1 2] [--backends processes dask] [--code DIR ...]

Each measurement is a fresh `python -m scenarios.cli sweep SPEC --out TMP --processes N [--dask local] --quiet`
process (start-up imports included, as a user pays them); CPU is that process's and its workers' (user + system).
The configurations are interleaved (repeat 1 of each, then repeat 2 of each, ...) because a shared machine's
load drifts between minutes; each line prints the median and the range of the repeats, and the load average
before and after is printed so that a reader knows how noisy the figures are. `path_s` is the CPU time on the
critical path, which other users' load inflates far less than wall time: the sweep process's CPU plus that of its
busiest worker (sampled every 50 ms), about the wall time on 2 otherwise idle cores (for `--dask local` it counts
the scheduler's CPU in the sweep process as if it ran alone). `--code DIR` (repeatable) runs the same commands
against another checkout of the package (e.g. `git archive main | tar -x -C /tmp/main`), to compare code before
and after a change side by side. Issue 16's target: 2 workers at least 1.8x faster than 1 on the 12-run flexslot
spec, for both backends.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import psutil  # a dependency of dask.distributed

ROOT = Path(__file__).resolve().parents[1]
SPEC = ROOT / "scenarios" / "specs" / "issue16_flexslot12.toml"


def measure(code: Path, spec: Path, backend: str, workers: int) -> tuple[float, float, float]:
    """(wall s, CPU s, critical-path CPU s) of one sweep into a fresh directory."""
    with tempfile.TemporaryDirectory() as tmp:
        dask = ["--dask", "local"] if backend == "dask" else []
        args = [sys.executable, "-m", "scenarios.cli", "sweep", str(spec), "--out", f"{tmp}/out",
                "--processes", str(workers), "--quiet", *dask]  # fmt: skip
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        start = time.perf_counter()
        proc = subprocess.Popen(args, cwd=code, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        sweep, seen = psutil.Process(proc.pid), {}
        while proc.poll() is None:
            with contextlib.suppress(psutil.Error):
                for p in [sweep, *sweep.children(recursive=True)]:
                    with contextlib.suppress(psutil.Error):
                        times = p.cpu_times()
                        seen[p.pid] = times.user + times.system
            time.sleep(0.05)
        wall = time.perf_counter() - start
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        if proc.returncode:
            raise SystemExit(f"{' '.join(args)}: exit {proc.returncode}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    path = seen.get(proc.pid, 0.0) + max((c for pid, c in seen.items() if pid != proc.pid), default=0.0)
    return wall, cpu, path


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
    figures: dict[tuple, list[tuple[float, float, float]]] = {c: [] for c in configs}
    print(f"load average before: {' '.join(f'{x:.2f}' for x in os.getloadavg())}", flush=True)
    for _ in range(args.repeats):
        for config in configs:
            figures[config].append(measure(config[0], args.spec.resolve(), config[1], config[2]))
    print(f"load average after:  {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    print(f"{'code':<20} {'backend':<9} {'workers':>7} {'wall_s':>6} {'(range)':>11} {'speedup':>7} {'cpu_s':>6} "
          f"{'(range)':>11} {'path_s':>6} {'(range)':>11} {'speedup':>7}")  # fmt: skip
    for code, backend, workers in configs:
        wall, cpu, path = zip(*figures[code, backend, workers], strict=True)
        one_wall, _, one_path = (statistics.median(f) for f in zip(*figures[code, backend, args.workers[0]],
                                                                    strict=True))  # fmt: skip
        print(f"{str(code)[-20:]:<20} {backend:<9} {workers:>7} {_spread(wall)} "
              f"{one_wall / statistics.median(wall):>6.2f}x {_spread(cpu)} {_spread(path)} "
              f"{one_path / statistics.median(path):>6.2f}x")  # fmt: skip


def _spread(values: tuple[float, ...]) -> str:
    return f"{statistics.median(values):>6.2f} {f'{min(values):.2f}-{max(values):.2f}':>11}"


if __name__ == "__main__":
    main()
