"""Wall, CPU and peak memory of `trace-replay` of the FB-2009 SWIM trace at the scale users run (issue 16).

    python benchmarks/scale.py [--quick] [--slaves 30 200 ...] [--span hour day] [--scheduler fair]

One line per (span, slaves): a SWIM hour (the jobs submitted in the trace's first 3,600 s) and the SWIM day (all
5,894 jobs), on 30, 200, 600 and 2,000 slaves (4 VMs of 4 vCPUs per host of 8 cores, two masters, the pool the
hosts' capacity, as the trace's 600-node cluster is `hosts=150 slaves=598`). `--quick`: the hour on 30 and 200
slaves only (about a minute). Each run is a fresh process (`--one`), so its peak RSS is its own and it pays its own
imports and writes its summary and tables (Parquet, into a temporary directory), as `vcloud run` does; wall and CPU
are of the whole process, the model's own seconds are printed too.
Issue 16's targets: the day on 600 nodes in at most 120 s CPU and 1 GB; 2,000 slaves, one hour, at most 60 s CPU.
The script puts its own checkout first on sys.path.
"""

from __future__ import annotations

import argparse
import json
import math
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SWIM = ROOT.parent / "shared" / "data" / "swim" / "FB-2009_samples_24_times_1hr_0.tsv"
if not SWIM.exists():  # a worktree beside the main checkout
    SWIM = Path("/work/shared/data/swim/FB-2009_samples_24_times_1hr_0.tsv")
SLAVES = (30, 200, 600, 2000)
HOUR_S = 3600.0


def jobs_in(span: str) -> int:
    """Jobs of the trace submitted within the span (the TSV's second column is the submit time, s)."""
    times = [float(line.split("\t")[1]) for line in SWIM.read_text().splitlines() if line.strip()]
    return len(times) if span == "day" else sum(1 for t in times if t < HOUR_S)


def settings(slaves: int, jobs: int, scheduler: str = "fifo") -> dict[str, object]:
    """The trace's own cluster shape at `slaves`; a time limit within the trace-row budget at 2,000 slaves (the day's
    last job ends near 91,000 s). Above the traced 600 nodes the jobs keep their traced bytes: SWIM's scaling to
    the cluster would give one job of the day 375,000 maps, beyond the 200,000-map budget of a run."""
    hosts = math.ceil((slaves + 2) / 4)
    limit = 4 * HOUR_S if jobs < 1000 else 99_000.0
    return {"trace": str(SWIM), "max_jobs": jobs, "hosts": hosts, "slaves": slaves, "original_nodes": max(slaves, 600),
            "pool_cpu_mhz": None, "pool_mem_mb": None, "max_duration_s": limit, "scheduler": scheduler}  # fmt: skip


def one(slaves: int, jobs: int, scheduler: str = "fifo", extra: dict[str, object] | None = None) -> dict[str, float]:
    """Run one case in this process; what it cost."""
    start, cpu = time.perf_counter(), time.process_time()
    sys.path.insert(0, str(ROOT))
    import pyarrow.parquet as pq

    from scenarios.registry import SCENARIOS
    from scenarios.runner import run_model, write_run
    from scenarios.settings import validate

    scenario = SCENARIOS["trace-replay"]
    model = scenario.build(validate(scenario.Settings, {**settings(slaves, jobs, scheduler), **(extra or {})}), seed=1)
    model_start = time.perf_counter()
    run_model(model, scenario.horizon_s(model), progress=False, stops_itself=True)
    model_s = time.perf_counter() - model_start
    # the summary and the tables a run writes are part of its cost: written as `vcloud run` writes them (Parquet, a
    # table at a time, each dropped before the next), into a directory removed afterwards
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "run"
        write_run(out, scenario.summary(model), {}, scenario.part_makers(model))
        rows = {name: pq.read_metadata(out / f"{name}.parquet").num_rows for name in ("tasks", "vm_trace")}
    return {
        "wall_s": time.perf_counter() - start,
        "cpu_s": time.process_time() - cpu,
        "model_s": model_s,
        "rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
        "sim_s": float(model.time),
        "ticks": model.ticks,
        "tasks": rows["tasks"],
        "trace_rows": rows["vm_trace"],
    }


def extra_settings(pairs: list[str]) -> dict[str, object]:
    """`--set` pairs as nested settings: "hadoop.task_commit=false" -> {"hadoop": {"task_commit": False}}."""
    out: dict[str, object] = {}
    for pair in pairs:
        key, _, text = pair.partition("=")
        *groups, name = key.split(".")
        place = out
        for group in groups:
            place = place.setdefault(group, {})  # type: ignore[assignment]
        try:
            place[name] = json.loads(text)  # type: ignore[index]
        except json.JSONDecodeError:
            place[name] = text  # type: ignore[index]
    return out


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="the hour on 30 and 200 slaves only")
    parser.add_argument("--slaves", type=int, nargs="+", default=None)
    parser.add_argument("--span", choices=("hour", "day"), nargs="+", default=None)
    parser.add_argument("--scheduler", default="fifo", help="the task scheduler (trace-replay's `scheduler`)")
    parser.add_argument(
        "--set",
        dest="extra",
        nargs="+",
        default=[],
        metavar="KEY=VALUE",
        help="trace-replay settings for every run, e.g. hadoop.task_commit=false (values as JSON)",
    )
    parser.add_argument("--one", type=int, nargs=2, metavar=("SLAVES", "JOBS"), help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.one:
        print(json.dumps(one(*args.one, args.scheduler, extra_settings(args.extra))))
        return
    slaves = args.slaves or ((30, 200) if args.quick else SLAVES)
    spans = args.span or (("hour",) if args.quick else ("hour", "day"))
    print(f"trace {SWIM.name}; scheduler {args.scheduler}; one process per line")
    print(f"{'span':<5} {'slaves':>6} {'jobs':>5} {'sim_s':>7} {'ticks':>6} {'tasks':>7} {'wall_s':>7} {'cpu_s':>7} "
          f"{'model_s':>7} {'rss_mb':>7}")  # fmt: skip
    for span in spans:
        jobs = jobs_in(span)
        for n in slaves:
            extra = ["--set", *args.extra] if args.extra else []
            out = subprocess.run([sys.executable, __file__, "--one", str(n), str(jobs), "--scheduler", args.scheduler,
                                  *extra], capture_output=True, text=True)  # fmt: skip
            if out.returncode != 0:
                print(f"{span:<5} {n:>6} {jobs:>5} failed: {out.stderr.strip().splitlines()[-1:]}", flush=True)
                continue
            r = json.loads(out.stdout.strip().splitlines()[-1])
            print(f"{span:<5} {n:>6} {jobs:>5} {r['sim_s']:>7.0f} {r['ticks']:>6} {r['tasks']:>7} {r['wall_s']:>7.1f} "
                  f"{r['cpu_s']:>7.1f} {r['model_s']:>7.1f} {r['rss_mb']:>7.0f}", flush=True)  # fmt: skip


if __name__ == "__main__":
    main()
