"""CPU a fresh checkout's first run spends compiling the kernels, as a new user meets it.

    python benchmarks/compile_cost.py [--scenario flexslot] [--scale 0.1] [--repeat 1] [--code DIR ...]

Runs `vcloud run SCENARIO --set scale=S` twice in fresh processes against an empty numba cache (a temporary
`NUMBA_CACHE_DIR`, so the checkout's own cache is left alone): the first run compiles every kernel it calls, the
second loads them. `--code`: other checkouts, each run with its own code. Prints each run's CPU (user + system of
the process and its children) and their difference, the compile's CPU. CPU, not wall: on a shared machine the wall
time drifts with the other load, the CPU much less.
"""

from __future__ import annotations

import argparse
import os
import resource
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def run_cpu(code: Path, scenario: str, scale: float, cache: str, out: Path) -> float:
    """CPU seconds of one `vcloud run` of checkout `code` in a fresh process with numba's cache at `cache`."""
    env = {**os.environ, "NUMBA_CACHE_DIR": cache, "PYTHONPATH": str(code)}
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    cmd = [sys.executable, "-m", "scenarios.cli", "run", scenario, "--set", f"scale={scale}", "--out", str(out)]
    subprocess.run(cmd, cwd=code, env=env, check=True, capture_output=True)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scenario", default="flexslot")
    parser.add_argument("--scale", type=float, default=0.1)
    parser.add_argument("--repeat", type=int, default=1, help="measure this many times (each with an empty cache)")
    parser.add_argument("--code", type=Path, action="append", help="a checkout to measure (repeatable)")
    args = parser.parse_args()
    for _ in range(args.repeat):
        for code in args.code or [ROOT]:
            with tempfile.TemporaryDirectory() as tmp:
                cache = str(Path(tmp) / "numba")
                first = run_cpu(code.resolve(), args.scenario, args.scale, cache, Path(tmp) / "first")
                second = run_cpu(code.resolve(), args.scenario, args.scale, cache, Path(tmp) / "second")
            said = f"first run {first:.1f} s CPU, cached {second:.1f} s, compile {first - second:.1f} s"
            print(f"{code!s:<16} {args.scenario} scale={args.scale}: {said}", flush=True)


if __name__ == "__main__":
    main()
