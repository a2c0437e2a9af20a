"""CPU seconds of an excerpt of the SWIM day (issue 16), and of launching and ending task attempts in it.

    python benchmarks/launches.py [--until 20000] [--slaves 600] [--paths] [--ticks]

Builds `trace-replay` of the FB-2009 day as `benchmarks/scale.py` does (`settings`) and runs it to `--until` simulated
seconds: the first 20,000 s at 600 slaves hold 143,196 launches (a few minutes' CPU less than the whole day). Prints
the build's and the model's CPU seconds. `--paths` also times, with `time.process_time` around each call, what a
launch costs (`JobTracker.launch`), an attempt's end (`JobTracker.attempt_finished`; the tick's ended items leave the
table together, `stop_items`, a kill's alone, `stop_item`) and a phase change in the tick (`CloudModel._load_phase`):
totals, calls and microseconds a call (the timing adds about a microsecond to each call and to the model's total).
`--ticks` splits the run's CPU between busy ticks
(more than `--busy` task attempts running, default 1,000: the day's big jobs fill the 600 slaves' ~2,500 slots) and
quiet ones, each into the tick's parts (the engine's `step`, the hooks the Hadoop layer runs before and after it, the
ends' processing) and the heartbeats fired until the next tick (the launches). The machine is shared: compare commits
side by side, interleaved. `--stages` (with `--ticks`) also splits the engine's `step` into its stages
(`vcloud.engine.STAGES`) and the live-row copy (`live_items`). The script puts its own checkout first on sys.path.
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
    "stop_item": ("vcloud.model", "CloudModel", "stop_item"),  # a kill's (a tick's ends stop together: stop_items)
    "stop_items": ("vcloud.model", "CloudModel", "stop_items"),
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


class TickSplit:
    """CPU seconds of each part of a tick and of the heartbeats after it, summed apart over busy and quiet ticks."""

    PARTS = ("before_tick", "step_function", "after_step", "after_tick")  # attributes of the model, wrapped

    def __init__(self, model, busy_above: int, stages: bool = False) -> None:
        self.model, self.busy_above = model, busy_above
        self.spent = {True: {}, False: {}}
        self.ticks = {True: 0, False: 0}
        self.busy = False
        for name in self.PARTS:
            setattr(model, name, self._timed(name, getattr(model, name)))
        if stages:  # the engine's stages, by name (step reads STAGES and live_items from its module at each call)
            from vcloud import engine

            engine.STAGES = tuple((name, self._timed(f"step.{name}", stage)) for name, stage in engine.STAGES)
            engine.live_items = self._timed("step.live_items", engine.live_items)
        clock = model.heartbeat_clock
        clock._fire = self._timed("heartbeats", clock._fire)
        tick = model._tick

        def timed_tick() -> None:
            self.busy = sum(model.jobtracker.running_attempts.values()) > busy_above
            self.ticks[self.busy] += 1
            self._timed("tick", tick)()

        model._tick = timed_tick

    def _timed(self, label: str, method: Callable) -> Callable:
        def wrapper(*args, **kwargs):
            start = time.process_time()
            try:
                return method(*args, **kwargs)
            finally:
                spent = self.spent[self.busy]
                spent[label] = spent.get(label, 0.0) + time.process_time() - start

        return wrapper

    def report(self) -> None:
        for busy in (True, False):
            spent, n = self.spent[busy], max(self.ticks[busy], 1)
            spent["ends etc."] = spent.get("tick", 0.0) - sum(spent.get(p, 0.0) for p in self.PARTS)
            if any(label.startswith("step.") for label in spent):
                inner = sum(s for label, s in spent.items() if label.startswith("step."))
                spent["step.rest"] = spent.get("step_function", 0.0) - inner
            total = spent.get("tick", 0.0) + spent.get("heartbeats", 0.0)
            parts = " ".join(f"{label}={1e6 * s / n:.0f}" for label, s in spent.items() if label != "tick")
            kind = "busy" if busy else "quiet"
            print(f"  {kind} ticks {self.ticks[busy]:>6}: {total:6.2f} s, {1e6 * total / n:6.0f} us a tick "
                  f"(tick {1e6 * spent.get('tick', 0.0) / n:.0f}: {parts})")  # fmt: skip


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--until", type=float, default=20_000.0, help="simulated seconds to run (default 20,000)")
    parser.add_argument("--slaves", type=int, default=600)
    parser.add_argument("--paths", action="store_true", help="time launches, ends and phase loads too")
    parser.add_argument("--ticks", action="store_true", help="split the CPU between busy and quiet ticks")
    parser.add_argument("--busy", type=int, default=1000, help="--ticks: a busy tick has more attempts running")
    parser.add_argument("--stages", action="store_true", help="--ticks: split the engine's step into its stages")
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
    split = TickSplit(model, args.busy, args.stages) if args.ticks else None
    run_model(model, args.until, progress=False)
    ran = time.process_time()
    print(f"slaves={args.slaves} until={args.until:.0f} ticks={model.ticks} build_cpu_s={built - cpu:.2f} "
          f"model_cpu_s={ran - built:.2f}")  # fmt: skip
    for label in PATHS if args.paths else ():
        n = calls[label]
        print(f"  {label:<17} {spent[label]:7.2f} s {n:>8} calls {1e6 * spent[label] / max(n, 1):7.1f} us")
    if split is not None:
        split.report()


if __name__ == "__main__":
    main()
