"""Instructions a run executes (valgrind's callgrind), for comparing commits on a shared machine.

    python benchmarks/instructions.py [--workload flexslot|swim] [--scale 0.25] [--warm] [--from 0] [--until 600]
                                      [--code DIR ...]

CPU seconds on a shared 2-core machine drift by 10-20 % between runs of the same code (session 17 measured 63-80 s
for one SWIM excerpt, interleaved), so a change worth 1-3 % cannot be seen in them; the count of instructions the
run executes moves by ~0.2 % between runs of the same code (2.879, 2.882, 2.884 G: three counts of one
quarter-scale flexslot). Each `--code DIR` (a checkout; default this one) runs the workload in a fresh process
under `valgrind --tool=callgrind --instr-atstart=no`; the process turns counting on
just before `run_model` and off after it (`callgrind_control`), so imports and the build are not counted. numba's
kernels are compiled for a generic x86-64 (`NUMBA_CPU_NAME=generic`: valgrind's CPU is not the host's, and numba
would otherwise compile them again under valgrind, for minutes); the same run outside valgrind first fills that cache
with every kernel the run calls (a kernel first called late in a run, compiled under valgrind, would count and take
minutes). A process's first run loads every kernel from numba's cache (which parses each kernel's LLVM bitcode) and
imports what it needs late (DRS's root finder, scipy.optimize): half of a quarter-scale flexslot's count. `--warm`
runs the same workload once, uncounted, in the same process before the counted run: the model's own cost, as the
runs after the first of a sweep's or a report's worker pay it. `--from S` (swim) runs the first S simulated seconds
uncounted and counts from there to `--until`: a busy stretch of the day (13,000 s: over a thousand attempts
running), without the quiet morning. The count is a proxy for time: it does not see cache misses or the cost of each
instruction, so a change that trades instructions for memory traffic needs a timed benchmark as well. A run is ~100x
slower under valgrind: the default workloads take one to three minutes each. Prints one line per checkout:
instructions (G) and the ratio to the first.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def child(workload: str, scale: float, start: float, until: float, counted: bool, warm: bool) -> None:
    """Build the workload in this process and run it, counted by callgrind if `counted` (else the warm-up); `warm`:
    once uncounted before."""
    sys.path.insert(0, str(Path.cwd()))  # the checkout under test
    sys.path.insert(0, str(Path.cwd() / "benchmarks"))
    from scenarios.registry import SCENARIOS
    from scenarios.runner import run_model
    from scenarios.settings import validate

    def build():
        if workload == "flexslot":
            scenario = SCENARIOS["flexslot"]
            model = scenario.build(validate(scenario.Settings, {"scale": scale}), seed=1)
            return model, scenario.horizon_s(model)
        import scale as swim  # benchmarks/scale.py of the checkout: the SWIM day's cluster

        scenario = SCENARIOS["trace-replay"]
        return scenario.build(validate(scenario.Settings, swim.settings(600, swim.jobs_in("day"))), seed=1), until

    if warm:
        model, horizon = build()
        run_model(model, horizon, progress=False)
    model, horizon = build()
    if start > 0:
        run_model(model, start, progress=False)
    toggle = ["callgrind_control", "--instr=on", str(os.getpid())]
    if counted:
        subprocess.run(toggle, check=True, capture_output=True)
    run_model(model, horizon, progress=False)
    if counted:
        subprocess.run([*toggle[:1], "--instr=off", *toggle[2:]], check=True, capture_output=True)
    print(f"ticks={model.ticks}", flush=True)


def measure(code: Path, workload: str, scale: float, start: float, until: float, warm: bool) -> tuple[int, str]:
    """(instructions counted, the child's output) of the workload in checkout `code`."""
    env = {**os.environ, "NUMBA_CPU_NAME": "generic", "PYTHONHASHSEED": "0"}
    args = [sys.executable, str(Path(__file__).resolve()), "--child", "--workload", workload, "--scale", str(scale),
            "--from", str(start), "--until", str(until), *(["--warm"] if warm else [])]  # fmt: skip
    subprocess.run([*args, "--warm-up"], cwd=code, env=env, check=True, capture_output=True)  # numba's generic cache
    valgrind = ["valgrind", "--tool=callgrind", "--instr-atstart=no", "--callgrind-out-file=/dev/null"]
    out = subprocess.run([*valgrind, *args], cwd=code, env=env, check=True, capture_output=True, text=True)
    found = re.search(r"Collected : (\d+)", out.stderr)
    if found is None:
        raise SystemExit(f"instructions: no count in valgrind's output for {code}:\n{out.stderr[-2000:]}")
    return int(found.group(1)), out.stdout.strip()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--workload", choices=("flexslot", "swim"), default="flexslot")
    parser.add_argument("--scale", type=float, default=0.25, help="flexslot: the input's scale (default 0.25)")
    parser.add_argument("--warm", action="store_true", help="run the workload once uncounted first, in the process")
    parser.add_argument("--from", dest="start", type=float, default=0.0, help="swim: count from this simulated second")
    parser.add_argument("--until", type=float, default=600.0, help="swim: simulated seconds of the SWIM day")
    parser.add_argument("--code", type=Path, action="append", help="a checkout to measure (repeatable)")
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--warm-up", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child(args.workload, args.scale, args.start, args.until, counted=not args.warm_up, warm=args.warm)
        return
    if shutil.which("valgrind") is None or shutil.which("callgrind_control") is None:
        print("instructions: valgrind is not installed (apt-get install valgrind)", file=sys.stderr)
        raise SystemExit(2)
    first = None
    for code in args.code or [ROOT]:
        count, said = measure(code.resolve(), args.workload, args.scale, args.start, args.until, args.warm)
        first = first or count
        print(f"{code!s:<24} {args.workload} {said} instructions={count / 1e9:.3f} G ratio={count / first:.4f}",
              flush=True)  # fmt: skip


if __name__ == "__main__":
    main()
