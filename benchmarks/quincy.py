"""CPU time of the Quincy scheduler on `coupling-22-jobs` (Coupling Table IV: 22 jobs on 7 nodes), per variant.

    python benchmarks/quincy.py [--fairness none fair fair-preemption]

Prints, per fairness variant, the process CPU time of build + run (time.process_time: the machine is shared,
so wall time says more about the neighbours than about the code), the number of solves, the time spent in the
min-cost-flow solver, and a digest of the tasks table (same digest = same decisions, e.g. before and after a
change meant to be only faster). The script puts its own checkout first on sys.path.
"""

from __future__ import annotations

import argparse
import hashlib
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from scenarios.registry import SCENARIOS
from scenarios.runner import run_model
from scenarios.settings import validate


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--fairness", nargs="+", default=["none", "fair", "fair-preemption"])
    args = parser.parse_args()
    scenario = SCENARIOS["coupling-22-jobs"]
    for fairness in args.fairness:
        start = time.process_time()
        model = scenario.build(validate(scenario.Settings, {"scheduler": "quincy", "quincy.fairness": fairness}), 1)
        run_model(model, scenario.horizon_s(model), progress=False)
        cpu = time.process_time() - start
        solves = model.jobtracker.scheduler.solve_times_s
        digest = hashlib.sha256(model.tasks_frame().to_csv(index=False).encode()).hexdigest()[:12]
        mean_job = scenario.summary(model)["mean_job_s"]
        print(f"{fairness:16s} cpu {cpu:6.1f} s  solves {len(solves):5d}  solver {sum(solves):6.1f} s  "
              f"mean job {mean_job:.1f} s  tasks {digest}", flush=True)  # fmt: skip


if __name__ == "__main__":
    main()
