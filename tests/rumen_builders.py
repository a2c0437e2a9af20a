"""Hand-made Rumen job objects for the trace tests: an attempt, a job, a trace file (a stream of JSON objects)."""

from __future__ import annotations

import json
from pathlib import Path

T0 = 1_000_000_000  # ms: the traces' epoch


def attempt(result: str | None, start_s: float, end_s: float, host: str, **extra: object) -> dict:
    """An attempt from `start_s` to `end_s` after T0 on `host` (`/rack/host`)."""
    return {"result": result, "startTime": T0 + int(start_s * 1000), "finishTime": T0 + int(end_s * 1000),
            "hostName": host, **extra}  # fmt: skip


def job(job_id: str, submit_s: float, maps: list[list[dict]], reduces=(), **extra: object) -> dict:
    """A job submitted `submit_s` after T0 whose map i has the attempts maps[i] (reduces likewise)."""
    return {
        "jobID": job_id,
        "submitTime": T0 + int(submit_s * 1000),
        "mapTasks": [{"taskID": f"{job_id}_m_{i}", "inputBytes": 0, "attempts": a} for i, a in enumerate(maps)],
        "reduceTasks": [{"taskID": f"{job_id}_r_{i}", "attempts": a} for i, a in enumerate(reduces)],
        **extra,
    }


def write(tmp_path: Path, name: str, jobs: list[dict], head: str = "") -> Path:
    """The jobs as a Rumen trace file (after `head`, e.g. a comment)."""
    path = tmp_path / name
    path.write_text(head + "\n".join(json.dumps(j) for j in jobs))
    return path
