"""`job-mix`: a user's own jobs, from a small TOML or CSV file, on the FlexSlot testbed (or any cluster its
settings describe), without writing Python (docs/own-scenario.md).

Each job is a profile (how its records cost: a PUMA benchmark's, or one of the Coupling paper's jobs), an input size
and a submit time; optionally its reduces (default: the profile's own, else 0.95 x the cluster's reduce slots, as
PUMA sets them; 0 is map-only), its name, and its Fair/Capacity pool and user. A TOML file holds `[[job]]` tables; a
CSV file a header row of those names and a row per job:

    [[job]]                       # jobs.toml               name,profile,input_mb,submit_s,reduces
    profile = "wordcount"         #                         wc,wordcount,2048,0,
    input_mb = 2048               #                         grep,grep,640,30,1
    submit_s = 0

The file is read and checked when the settings are (a bad row is one line naming the file, the row and the field);
a job's maps are its input cut into `hadoop.block_mb` blocks with its profile's skew, as flexslot's are.
"""

from __future__ import annotations

import csv
import functools
import io
import math
import tomllib
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from hadoop_layer.model import HadoopModel
from hadoop_layer.profiles import COUPLING, PUMA, JobProfile, splits
from scenarios import limits as L
from scenarios.hadoop_base import HadoopClusterSettings, HadoopScenario, build_cluster
from scenarios.outputs import file_problem

# the PUMA benchmarks, then the Coupling paper's jobs that PUMA has not (its grep and wordcount are PUMA's here)
PROFILES: dict[str, JobProfile] = {**PUMA, **{k: v for k, v in COUPLING.items() if k not in PUMA}}
EXAMPLE = Path(__file__).with_name("specs") / "example_jobs.toml"


class JobSpec(BaseModel):
    """One job of the file."""

    model_config = ConfigDict(extra="forbid")
    profile: Literal[tuple(PROFILES)] = Field(description="how its records cost: a PUMA or Coupling job")  # type: ignore[valid-type]
    input_mb: float = Field(gt=0, le=L.MAX_MAPS * L.MAX_BLOCK_MB, description="its input, MB")
    submit_s: float = Field(0.0, ge=0, le=L.MAX_DURATION_S, description="when it is submitted, s")
    reduces: int | None = Field(None, ge=0, le=L.MAX_MAPS, description="None: the profile's, else 0.95 x slots")
    name: str = Field("", description="'': the profile's name")
    pool: str = Field("default", min_length=1, description="its Fair or Capacity pool")
    user: str = Field("user", min_length=1, description="its user (Capacity's user limits)")


def read_jobs(path: str) -> list[JobSpec]:
    """The jobs of a TOML or CSV file, checked; ValueError in one line naming the file, row and field."""
    name = Path(path).name
    if why := file_problem(path):
        raise ValueError(why)
    try:
        text = Path(path).read_text()
    except UnicodeDecodeError as exc:
        raise ValueError(f"{name}: not UTF-8 text (byte {exc.start})") from None
    if Path(path).suffix.lower() == ".toml":
        try:
            rows = tomllib.loads(text).get("job")
        except tomllib.TOMLDecodeError as exc:
            raise ValueError(f"{name}: bad TOML: {' '.join(str(exc).split())}") from None
        if not isinstance(rows, list):
            raise ValueError(f"{name}: no [[job]] tables")
        where = "job"
    elif Path(path).suffix.lower() == ".csv":
        rows = [{k: v for k, v in row.items() if v not in ("", None)} for row in csv.DictReader(io.StringIO(text))]
        where = "row"
    else:
        raise ValueError(f"{name}: a job file is .toml or .csv")
    if not rows:
        raise ValueError(f"{name}: no jobs")
    if len(rows) > L.MAX_JOBS:
        raise ValueError(f"{name}: {len(rows):,} jobs, more than {L.MAX_JOBS:,}")
    jobs = []
    for i, row in enumerate(rows, start=1):
        try:
            jobs.append(JobSpec.model_validate(row))
        except ValidationError as exc:
            err = exc.errors()[0]
            field = ".".join(str(p) for p in err["loc"]) or "?"
            value = row.get(field) if isinstance(row, dict) else row
            shown = f"={value!r}" if value is not None else ""
            raise ValueError(f"{name} {where} {i}: field {field}{shown}: {err['msg']}") from None
    return jobs


@functools.lru_cache(maxsize=8)
def _checked(path: str, mtime_ns: int, size: int) -> tuple[JobSpec, ...] | str:
    """The jobs, or why the file is refused (cached per version of the file: settings are validated often)."""
    try:
        return tuple(read_jobs(path))
    except ValueError as exc:
        return str(exc)


def jobs_of(path: str) -> tuple[JobSpec, ...]:
    try:
        st = Path(path).stat()
        stamp = (st.st_mtime_ns, st.st_size)
    except OSError:
        stamp = (0, 0)
    found = _checked(path, *stamp)
    if isinstance(found, str):
        raise ValueError(found)
    return found


class JobMixSettings(HadoopClusterSettings):
    jobs: str = Field(str(EXAMPLE), description="a TOML or CSV file of jobs: profile, input_mb, submit_s, ...")

    @field_validator("jobs")
    @classmethod
    def _readable_jobs(cls, value: str) -> str:
        """Read here, so that `vcloud run` and a sweep refuse a bad file before anything runs."""
        jobs_of(value)
        return value

    def map_count(self) -> int:
        return sum(max(1, math.ceil(j.input_mb / self.hadoop.block_mb - 1e-9)) for j in jobs_of(self.jobs))


class JobMix(HadoopScenario):
    name = "job-mix"
    description = "your own jobs from a TOML or CSV file (--set jobs=PATH: profile, input, arrival) on the testbed"
    Settings = JobMixSettings

    def build(self, settings: JobMixSettings, seed: int, check: bool = False) -> HadoopModel:
        s = settings
        if (maps := s.map_count()) > L.MAX_MAPS:
            raise ValueError(f"setting jobs={s.jobs!r}: about {maps:,} map tasks, more than {L.MAX_MAPS:,}")
        model = build_cluster(s, seed, check)
        for job in jobs_of(s.jobs):
            profile = PROFILES[job.profile]
            table = splits(profile, job.input_mb / profile.input_mb, s.hadoop.block_mb, model.rng)
            reduces = job.reduces if job.reduces is not None else profile.reduces
            if reduces is None:
                reduces = max(1, int(0.95 * s.slaves * s.hadoop.reduce_slots))
            model.add_job(job.name or job.profile, profile, job.submit_s, table.map_specs(), reduces,
                          pool=job.pool, user=job.user)  # fmt: skip
        return model

    def summary(self, model: HadoopModel) -> dict[str, Any]:
        return {"jobs_file": Path(model.settings.jobs).name, **super().summary(model)}
