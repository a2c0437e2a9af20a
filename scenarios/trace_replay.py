"""`trace-replay`: job arrivals from a public trace (SWIM TSV or Rumen JSON) on the FlexSlot testbed.

Traces give bytes, not CPU: each job borrows CPU per MB from a PUMA profile (`profile`), and its map and
reduce selectivities come from the trace's own shuffle and output bytes. Map outputs are spread over the
maps in proportion to their inputs.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

from pydantic import Field

from hadoop_layer.model import HadoopModel
from hadoop_layer.profiles import PUMA
from hadoop_layer.traces import TraceJob, read_rumen, read_swim
from scenarios.flexslot import Benchmark
from scenarios.hadoop_base import HadoopClusterSettings, HadoopScenario, build_cluster

DEFAULT_TRACE = Path(__file__).resolve().parents[2] / "shared" / "data" / "swim" / "FB-2009_samples_24_times_1hr_0.tsv"


class TraceReplaySettings(HadoopClusterSettings):
    trace: str = Field(str(DEFAULT_TRACE), description="SWIM .tsv or Rumen .json file")
    original_nodes: int = Field(
        600, ge=1, le=1_000_000, description="SWIM: size of the traced cluster (600 for FB-2009)"
    )
    max_jobs: int = Field(50, ge=1, le=10_000, description="replay the first N jobs")
    time_scale: float = Field(1.0, ge=1e-6, le=1e6, description="submit times are multiplied by this")
    profile: Benchmark = Field("wordcount", description="CPU per MB and record size are borrowed from this profile")


class TraceReplay(HadoopScenario):
    name = "trace-replay"
    description = "job arrivals from a SWIM or Rumen trace (--set trace=PATH) on the FlexSlot testbed"
    Settings = TraceReplaySettings

    def build(self, settings: TraceReplaySettings, seed: int, check: bool = False) -> HadoopModel:
        jobs = load_trace(settings)
        model = build_cluster(settings, seed, check)
        first = min(j.submit_s for j in jobs)
        for job in jobs:
            add_trace_job(model, job, PUMA[settings.profile], (job.submit_s - first) * settings.time_scale)
        return model

    def summary(self, model: HadoopModel) -> dict[str, Any]:
        return {"trace": Path(model.settings.trace).name, **super().summary(model)}


def load_trace(s: TraceReplaySettings) -> list[TraceJob]:
    path = Path(s.trace)
    if not path.is_file():
        raise ValueError(f"setting trace={s.trace!r}: no such file")
    if path.suffix == ".json":
        jobs = read_rumen(path)
    else:
        jobs = read_swim(path, original_nodes=s.original_nodes, emulated_nodes=s.slaves, block_mb=s.hadoop.block_mb)
    jobs = jobs[: s.max_jobs]
    if not jobs:
        raise ValueError(f"setting trace={s.trace!r}: the trace has no jobs")
    return jobs


def add_trace_job(model: HadoopModel, job: TraceJob, base, submit_s: float) -> None:
    inputs = list(job.map_input_mb) or [0.0]
    total = sum(inputs)
    selectivity = job.shuffle_mb / total if total > 0 else 0.0
    profile = dataclasses.replace(
        base,
        name=f"trace:{job.name}",
        map_selectivity=selectivity,
        combine_ratio=1.0,
        reduce_selectivity=job.output_mb / job.shuffle_mb if job.shuffle_mb > 0 else 0.0,
    )
    out_per_map = [job.shuffle_mb * (x / total) if total > 0 else 0.0 for x in inputs]
    if job.reduces == 0:  # map-only: the maps write the job's output
        out_per_map = [job.output_mb * (x / total) if total > 0 else 0.0 for x in inputs]
    maps = [
        {
            "input_mb": x,
            "cpu_mc": x * base.map_cpu_mc_per_mb,
            "output_mb": o,
            "output_records": o * 2**20 / base.map_record_bytes,
        }
        for x, o in zip(inputs, out_per_map, strict=True)
    ]
    model.add_job(job.name, profile, submit_s, maps, job.reduces)
