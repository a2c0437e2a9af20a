"""What the reduce's copiers (`hadoop.shuffle_copiers`) change on the FB-2009 SWIM trace, and how often they bind.

    python benchmarks/copiers.py [--slaves 600] [--span-s 20000] [--seed 1]

Runs `trace-replay` of the jobs submitted in the first `--span-s` seconds on the trace's cluster shape
(benchmarks/scale.py's settings), with the copiers off (every pending fetch served at once) and on (Hadoop's 5 per
reduce), and prints one line each: the model's CPU seconds, mean / median / p90 / max job time, reduce attempts'
mean time. With the copiers off it also samples, every 10th tick, each shuffling reduce's pending MB against what
its copiers could take in a tick (parallel_copies x one stream's tick at full rate: `CopierShuffle.stream_mb`'s
disk/NIC bound), the share of (reduce, tick) samples where the copiers would bind. The script puts its own checkout
first on sys.path. About 2 minutes per 20,000 s at 600 slaves.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

import scale  # noqa: E402  (benchmarks/scale.py: the trace and its cluster shape)

from hadoop_layer.shuffle import ShuffleServer  # noqa: E402
from scenarios.registry import SCENARIOS  # noqa: E402
from scenarios.runner import run_model  # noqa: E402
from scenarios.settings import validate  # noqa: E402


def pending_samples(model, every: int = 10) -> list[np.ndarray]:
    """Hook the all-pairs server: every `every`-th busy tick, the pending MB (to read + to send) of each shuffling
    reduce column, before the tick's serving."""
    samples: list[np.ndarray] = []
    server = model.serving
    tick = server.tick

    def sampled() -> None:
        if server.busy and model.ticks % every == 0:
            width = server._width()
            live = server.col_row[:width] >= 0
            if live.any():
                q = server.queue[:, :width]
                samples.append((q[: server.nodes] + q[server.nodes :])[:, live].sum(axis=0))
        tick()

    server.tick = sampled
    return samples


def one(copiers: bool, slaves: int, span_s: float, seed: int) -> None:
    scenario = SCENARIOS["trace-replay"]
    cfg = scale.settings(slaves, scale.jobs_in("day"))
    cfg["max_duration_s"] = span_s
    cfg["hadoop"] = {"shuffle_copiers": copiers}
    model = scenario.build(validate(scenario.Settings, cfg), seed=seed)
    samples = pending_samples(model) if not copiers else None
    assert copiers or type(model.serving) is ShuffleServer
    cpu = time.process_time()
    run_model(model, scenario.horizon_s(model), progress=False, stops_itself=True)
    cpu = time.process_time() - cpu
    frames = scenario.frames(model)
    jobs, tasks = frames["jobs"], frames["tasks"]
    took = jobs.end_s - jobs.submit_s
    reduces = tasks[tasks.kind.astype(str).str.startswith("r")]
    print(f"copiers={'on ' if copiers else 'off'} cpu_s={cpu:6.1f} jobs={len(jobs)} job_s mean={took.mean():7.2f} "
          f"median={took.median():6.1f} p90={took.quantile(0.9):6.1f} max={took.max():6.0f} "
          f"reduce_s mean={(reduces.end_s - reduces.start_s).mean():6.1f}", flush=True)  # fmt: skip
    if samples:
        hosts = model.hosts
        stream = model.dt * float(np.min(np.minimum(hosts.view("disk_mbps"), hosts.view("nic_mbps"))))
        pending = np.concatenate(samples)
        bound = model.hadoop.parallel_copies * stream
        print(f"  (reduce, tick) samples {pending.size}: pending MB median {np.median(pending):.1f}, "
              f"p99 {np.percentile(pending, 99):.1f}; above {bound:.0f} MB (copiers would bind): "
              f"{(pending > bound).mean():.1%}", flush=True)  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--slaves", type=int, default=600)
    parser.add_argument("--span-s", type=float, default=20_000.0)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    for copiers in (False, True):
        one(copiers, args.slaves, args.span_s, args.seed)


if __name__ == "__main__":
    main()
