"""Job-duration and attempt-runtime errors of `trace-replay` on the public Rumen traces, in each replay mode.

    python benchmarks/trace_errors.py            # a Markdown table per trace (docs/results-traces.md)

Each row is one `vcloud run trace-replay --set trace=... <mode>` with seed 1 on the trace's own cluster.
"""

from __future__ import annotations

import sys
from pathlib import Path

from scenarios.registry import SCENARIOS
from scenarios.runner import run_model
from scenarios.settings import validate

DATA = Path(__file__).resolve().parents[2] / "shared" / "data" / "rumen"
TRACES = ["zombie-input-trace.json", "sls-2jobs2min-rumen-jh.json"]
MODES = {
    "durations": {"replay": "durations"},
    "durations, replay_io=false": {"replay": "durations", "replay_io": False},
    "physics": {"replay": "physics"},
}


def _pct(emulated: float | None, recorded: float | None) -> str:
    if emulated is None or not recorded:
        return "-"
    return f"{emulated:.1f} vs {recorded:.1f} ({100 * (emulated / recorded - 1):+.0f} %)"


def main() -> int:
    scenario = SCENARIOS["trace-replay"]
    for trace in TRACES:
        print(f"\n### {trace}\n")
        print("| mode | per job: emulated / recorded s | median abs error (all; succeeded) | within 2x | "
              "map median s | map p90 s | reduce median s |")  # fmt: skip
        print("|---|---|---|---|---|---|---|")
        for label, overrides in MODES.items():
            settings = validate(scenario.Settings, {"trace": str(DATA / trace), **overrides})
            model = scenario.build(settings, seed=1)
            run_model(model, scenario.horizon_s(model), progress=False)
            s = scenario.summary(model)
            jobs = ", ".join(
                f"{r['emulated_s']:.0f}/{r['recorded_s']:.0f}" if r["recorded_s"] == r["recorded_s"] else
                f"{r['emulated_s']:.0f}/-" for r in s["per_job"]
            )  # fmt: skip
            err = s["job_duration_median_abs_error"], s["job_duration_median_abs_error_succeeded"]
            print(
                f"| {label} | {jobs} | {100 * err[0]:.1f} %; {100 * err[1]:.1f} % | {s['jobs_within_2x']:.2f} | "
                f"{_pct(s['map_runtime_median_emulated_s'], s['map_runtime_median_recorded_s'])} | "
                f"{_pct(s['map_runtime_p90_emulated_s'], s['map_runtime_p90_recorded_s'])} | "
                f"{_pct(s['reduce_runtime_median_emulated_s'], s['reduce_runtime_median_recorded_s'])} |"
            )
        print(f"\ncluster: {s['cluster']}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
