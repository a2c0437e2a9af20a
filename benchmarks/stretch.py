"""A late stretch of the SWIM day, timed or counted without running the day up to it each time.

    python benchmarks/stretch.py save --at 75000 --state /tmp/day75k.pkl      # runs the day to 75,000 s (~5 min)
    python benchmarks/stretch.py time --state /tmp/day75k.pkl --span 1500     # CPU s of the next 1,500 s
    python benchmarks/stretch.py count --state /tmp/day75k.pkl --span 300     # their instructions (callgrind)

The day's ticks cost 1 ms early and 6-15 ms late, and `instructions.py --from S` runs the first S seconds under valgrind
(uninstrumented, still ~10x slower): most of an hour to reach 75,000 s. A model pickles whole (220 MB at 75,000 s), so
`save` runs the day once and `time`/`count` start from that instant. Run `time` or `count` from each checkout's
directory on the same state to compare code: a state loads into any code whose classes read only attributes it has
(newer code may need what an older state lacks). Speculation's kept bounds are dropped on loading, so the first verdict
works them out afresh in the code under test. `count` runs the stretch once natively first (numba's generic-CPU cache,
as `instructions.py` does), then under callgrind, counting only the stretch. Both print the attempts that ended in the
stretch: two stretches of unlike activity give the cost of a tick and of an attempt apart (docs/performance.md,
session 21). The collector runs as `run_model` sets it.
"""

from __future__ import annotations

import argparse
import gc
import os
import pickle
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

WARM_S = 30.0  # simulated seconds run before the measured stretch: the kernels load, late imports happen


def _load(state: Path):
    sys.path.insert(0, str(Path.cwd()))  # the checkout under test
    sys.setrecursionlimit(100_000)  # (the agents' references nest deep)
    import scenarios.registry  # noqa: F401  (every module a state's classes live in)

    with state.open("rb") as f:
        model = pickle.load(f)
    speculation = model.jobtracker.speculation
    if hasattr(speculation, "_bounds_key"):
        speculation._bounds_key = ()  # kept bounds are made afresh by the code under test
    gc.freeze()
    from scenarios import runner  # the collector as `run_model` sets it for a run (the code under test's, if any)

    gc.set_threshold(getattr(runner, "GC_YOUNG_THRESHOLD", 700), *gc.get_threshold()[1:])
    return model


def _advance(model, span: float) -> None:
    from scenarios.runner import advance, unfinished

    end = float(model.time) + span
    while float(model.time) < end and unfinished(model, None):
        advance(model, end, 30.0)


def save(at: float, state: Path, slaves: int) -> None:
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    import scale

    from scenarios.registry import SCENARIOS
    from scenarios.runner import advance
    from scenarios.settings import validate

    scenario = SCENARIOS["trace-replay"]
    model = scenario.build(validate(scenario.Settings, scale.settings(slaves, scale.jobs_in("day"))), seed=1)
    model.start()
    while float(model.time) < at:
        advance(model, None, 30.0)
    with state.open("wb") as f:
        pickle.dump(model, f, protocol=5)
    print(f"saved t={float(model.time):.0f} ticks={model.ticks} to {state}")


def timed(state: Path, span: float) -> None:
    model = _load(state)
    _advance(model, WARM_S)
    cpu, ticks, ended = time.process_time(), model.ticks, model.ended.n
    _advance(model, span)
    print(f"{Path.cwd()} cpu={time.process_time() - cpu:.2f} s ticks={model.ticks - ticks} "
          f"attempts={model.ended.n - ended} t={float(model.time):.0f}")  # fmt: skip


def counted_child(state: Path, span: float, counted: bool) -> None:
    model = _load(state)
    _advance(model, WARM_S)
    toggle = ["callgrind_control", "--instr=on", str(os.getpid())]
    ended = model.ended.n
    if counted:
        subprocess.run(toggle, check=True, capture_output=True)
    _advance(model, span)
    if counted:
        subprocess.run([toggle[0], "--instr=off", toggle[2]], check=True, capture_output=True)
    print(f"ticks={model.ticks} attempts={model.ended.n - ended}")


def count(state: Path, span: float) -> None:
    if shutil.which("valgrind") is None or shutil.which("callgrind_control") is None:
        print("stretch: valgrind is not installed (apt-get install valgrind)", file=sys.stderr)
        raise SystemExit(2)
    env = {**os.environ, "NUMBA_CPU_NAME": "generic", "PYTHONHASHSEED": "0"}
    child = [sys.executable, str(Path(__file__).resolve()), "child", "--state", str(state), "--span", str(span)]
    subprocess.run(child, env=env, check=True, capture_output=True)  # fills numba's generic cache
    valgrind = ["valgrind", "--tool=callgrind", "--instr-atstart=no", "--callgrind-out-file=/dev/null"]
    out = subprocess.run([*valgrind, *child, "--counted"], env=env, check=True, capture_output=True, text=True)
    found = re.search(r"Collected : (\d+)", out.stderr)
    if found is None:
        raise SystemExit(f"stretch: no count in valgrind's output:\n{out.stderr[-2000:]}")
    print(f"{Path.cwd()} {out.stdout.strip()} instructions={int(found.group(1)) / 1e9:.3f} G")


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("action", choices=("save", "time", "count", "child"))
    parser.add_argument("--state", type=Path, required=True, help="the pickled model")
    parser.add_argument("--at", type=float, default=75_000.0, help="save: the simulated second to save at")
    parser.add_argument("--slaves", type=int, default=600, help="save: the cluster's slaves (benchmarks/scale.py)")
    parser.add_argument("--span", type=float, default=300.0, help="time/count: simulated seconds measured")
    parser.add_argument("--counted", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.action != "save" and not args.state.is_file():
        parser.error(f"--state: no such file: {args.state}")
    if args.span <= 0 or args.at <= 0:
        parser.error(f"--span and --at must be > 0, got {args.span}, {args.at}")
    if args.action == "save":
        save(args.at, args.state, args.slaves)
    elif args.action == "time":
        timed(args.state, args.span)
    elif args.action == "count":
        count(args.state, args.span)
    else:
        counted_child(args.state, args.span, args.counted)


if __name__ == "__main__":
    main()
