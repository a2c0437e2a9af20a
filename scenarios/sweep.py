"""`vcloud sweep SPEC --out DIR`: a grid of settings x seeds, run locally or on a Dask cluster, resumable.

SPEC is TOML (`.toml`) or YAML (`.yaml`, `.yml`) with three fields::

    scenario = "synthetic-cloud"          # a name of `vcloud list`
    seeds = [1, 2, 3]                     # one run per seed and grid point
    [settings]                            # each key a list of values; the grid is their product
    allocator = ["static", "drs"]
    duration_s = [600]
    drs.period_s = [60, 300]              # dotted keys as in `--set` (TOML: a nested table; YAML: either)

and, optionally, `cells`: a list of points (each a mapping of settings to one value) that the grid is run at,
for designs that are not a full product (one factor at a time around the defaults, and chosen pairs)::

    [[cells]]                             # an empty cell: the scenario's defaults
    [[cells]]
    page_cache.enabled = false

The runs are then cells x settings product x seeds (cells outermost); a key may not be both in a cell and in
`settings`. A run's settings (and so its id and its `settings.<key>` columns) hold every key that any cell or
the grid names, at its value in that run (a key a cell leaves out: the scenario's default).

Every grid point is validated before anything runs; a bad SPEC stops with one line naming the field.

A run is a pure function of (scenario, settings, seed): `execute` builds a `ScenarioModel`, steps it to
the end and returns a row of the summary's scalar figures. Its id is a hash of the three, so a run computed
once is never computed again: each finished run is written atomically (temporary file, then `os.replace`) to
`DIR/runs/<run_id>.json`; a rerun of the same SPEC into the same DIR (after a crash or `kill -9`) runs only
the ids not there. A run that raises is a finished run with `error` set (`--retry-errors` runs those again).
At the end the rows of the SPEC's runs, in grid order (settings product, then seeds), become
`DIR/results.parquet`: `run_id, scenario, seed, settings.<key>..., error, <figure>...`. `--frames` also keeps
each run's tables (`vm_trace`, and `tasks`, `jobs` for Hadoop scenarios) in `DIR/runs/<run_id>/`.

Backends: locally `--processes N` worker processes (default: all CPUs; 1: the runs one after another in this
process), each run one task (runs of unequal length balance themselves); the workers write the rows themselves,
as each run finishes, and exit if the sweep's process dies. The workers are forked after this process has
imported what a run needs (`scenarios.worker_pool`), so they start in milliseconds. Mesa's `batch_run` is not
the local backend (it was until issue 16): it forces the spawn start method, so each of its workers imported Mesa,
pandas, SciPy and the scenario again (1.3-2 s, which held 12 full-scale flexslot runs to 1.3x on 2 workers), and
it hands results back only at the end. `ScenarioModel` still runs under `batch_run` for whoever wants it
(`scenarios/batch_model.py`). `--dask ADDRESS` maps `execute` over a Dask distributed cluster (the workers must be
able to import this package and read any file a setting names); `--dask local` starts a `LocalCluster` of
`--processes` single-threaded worker processes, forked from this process after the same imports. Rows go through
the same JSON files whichever backend ran them, so the results are identical.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import itertools
import json
import math
import os
import shutil
import signal
import sys
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Annotated, Any

import pandas as pd
import yaml
from pydantic import BaseModel, ConfigDict, Field, StrictInt, ValidationError, field_validator

from scenarios.base import idle_groups
from scenarios.batch_model import ScenarioModel, one_line
from scenarios.glossary import summary_entry, units
from scenarios.limits import MAX_SEED
from scenarios.outputs import atomic_write, clean_temp_files, temp_name
from scenarios.provenance import provenance
from scenarios.registry import SCENARIOS, ScenarioFileError
from scenarios.runner import write_table
from scenarios.settings import SettingsError, validate
from scenarios.worker_pool import exit_with_parent

FORMATS = {".toml": "TOML", ".yaml": "YAML", ".yml": "YAML"}
RESULTS = "results.parquet"
EXIT_INTERRUPTED = 130


class SweepError(ValueError):
    """Bad input to a sweep (SPEC, --out, --dask): the message is one line."""


class SweepSpec(BaseModel):
    """A SPEC file's fields (settings are checked against the scenario afterwards, point by point)."""

    model_config = ConfigDict(extra="forbid")
    scenario: str
    settings: dict[str, Any] = Field(default_factory=dict)
    cells: list[dict[str, Any]] = Field(default_factory=list)
    seeds: list[Annotated[StrictInt, Field(ge=0, le=MAX_SEED)]] = Field(min_length=1)

    @field_validator("scenario")
    @classmethod
    def _known(cls, name: str) -> str:
        """A name of `vcloud list`, or a scenario file (kept by its absolute path, for the workers)."""
        if name not in SCENARIOS:
            raise ValueError(f"unknown scenario (try: {', '.join(SCENARIOS)}, or a scenario file NAME.py)")
        return SCENARIOS.key(name)

    @field_validator("seeds")
    @classmethod
    def _distinct(cls, seeds: list[int]) -> list[int]:
        repeated = sorted({s for s in seeds if seeds.count(s) > 1})
        if repeated:
            raise ValueError(f"seed {repeated[0]} is given more than once")
        return seeds


@dataclass(frozen=True)
class Run:
    """One point of the grid with one seed; `settings` are flat dotted keys with validated (JSON) values, null for
    the `idle` ones (a policy's knobs under another policy: not read, so not given to the model)."""

    run_id: str
    scenario: str
    settings: dict[str, Any]
    seed: int
    idle: frozenset[str] = frozenset()

    def model_kwargs(self) -> dict[str, Any]:
        return {key.replace(".", "__"): value for key, value in self.settings.items() if key not in self.idle}


@dataclass
class Sweep:
    spec: SweepSpec
    runs: list[Run]
    source: str = "SPEC"
    idle_keys: set[str] = field(default_factory=set)  # the idle settings that made grid points duplicates
    points: int = 0  # grid points x seeds, the duplicates among them included

    def duplicates_note(self) -> str | None:
        """One line on the grid points left out as the same run as another, or None."""
        if not self.idle_keys:
            return None
        left = self.points - len(self.runs)
        keys = ", ".join(sorted(self.idle_keys))
        return (f"{self.source}: {left} of {self.points} runs differ from others only in settings they do not read "
                f"({keys}: a policy's knobs under another policy) and are run once")  # fmt: skip


# ---- SPEC -----------------------------------------------------------------------------------------------
def load_spec(path: str | Path) -> Sweep:
    """Read and validate a SPEC file; every error is a `SweepError` of one line that names the field."""
    path = Path(path)
    kind = FORMATS.get(path.suffix.lower())
    if kind is None:
        raise SweepError(f"{path}: a SPEC is a .toml, .yaml or .yml file")
    try:
        text = path.read_text()
    except (OSError, UnicodeDecodeError) as exc:
        raise SweepError(f"{path}: {getattr(exc, 'strerror', None) or exc}") from None
    try:
        data = tomllib.loads(text) if kind == "TOML" else yaml.safe_load(text)
    except tomllib.TOMLDecodeError as exc:
        raise SweepError(f"{path}: bad TOML: {' '.join(str(exc).split())}") from None
    except yaml.YAMLError as exc:
        raise SweepError(f"{path}: bad YAML: {_yaml_message(exc)}") from None
    return parse_spec(data, source=str(path))


def parse_spec(data: Any, source: str = "SPEC") -> Sweep:
    """A validated sweep from a SPEC's data (a mapping with `scenario`, `settings`, `seeds`)."""
    if not isinstance(data, dict):
        raise SweepError(f"{source}: expected a mapping with fields scenario, settings and seeds")
    try:
        spec = SweepSpec.model_validate(data)
    except ValidationError as exc:
        raise SweepError(f"{source}: {_pydantic_message(exc)}") from None
    try:
        runs, idle_keys = _grid(spec, source)
    except ScenarioFileError as exc:
        raise SweepError(f"{source}: {exc}") from None
    points = (
        len(spec.seeds)
        * max(1, len(spec.cells))
        * math.prod(len(v) for v in _flat_axes(spec.settings, source).values())
    )
    return Sweep(spec, runs, source, idle_keys, points)


def grid(spec: SweepSpec, source: str = "SPEC") -> list[Run]:
    """The runs: for each cell (or once, with no cells), the product of the settings' value lists (first key
    outermost), then the seeds. A point that differs from an earlier one only in settings it does not read (a
    policy's knobs under another policy: `drs.*` under `allocator=static`) is the same run: it is run once, its
    idle settings null in its id and its row."""
    return _grid(spec, source)[0]


def _grid(spec: SweepSpec, source: str) -> tuple[list[Run], set[str]]:
    """The runs, and the idle settings for which points were left out as duplicates."""
    axes = _flat_axes(spec.settings, source)
    cells = [_flat_cell(cell, source, i) for i, cell in enumerate(spec.cells)] or [{}]
    keys = list(dict.fromkeys([*(k for cell in cells for k in cell), *axes]))  # every key a run reports
    scenario = SCENARIOS[spec.scenario]
    runs: list[Run] = []
    seen: dict[str, dict[str, Any]] = {}
    kept: set[str] = set()  # the run ids of the points kept (idle settings nulled)
    idle_keys: set[str] = set()
    for i, cell in enumerate(cells):
        both = next((k for k in cell if k in axes), None)
        if both is not None:
            raise SweepError(f"{source}: cells[{i}].{both} is also in settings: give it in one place")
        for combo in itertools.product(*axes.values()):
            point = {**cell, **dict(zip(axes, combo, strict=True))}
            try:
                settings = validate(scenario.Settings, point)
            except SettingsError as exc:
                where = f" (grid point {_short(point)})" if str(exc).startswith("settings:") else ""
                raise SweepError(f"{source}: {exc}{where}") from None
            dumped = settings.model_dump(mode="json")
            full = {key: _at(dumped, key) for key in keys}
            idle = idle_groups(settings)
            idle_here = frozenset(key for key in keys if key.split(".")[0] in idle)
            canonical = {key: None if key in idle_here else value for key, value in full.items()}
            for seed in spec.seeds:
                whole = run_id(spec.scenario, full, seed)
                if whole in seen:
                    raise SweepError(f"{source}: settings {_short(point)} and {_short(seen[whole])} are the same run")
                seen[whole] = point
                run = Run(run_id(spec.scenario, canonical, seed), spec.scenario, canonical, seed, idle_here)
                if run.run_id in kept:
                    idle_keys.update(idle_here & point.keys())
                    continue
                kept.add(run.run_id)
                runs.append(run)
    return runs, idle_keys


def run_id(scenario: str, settings: dict[str, Any], seed: int) -> str:
    """A stable id of (scenario, settings, seed): 16 hex digits of a SHA-256 of their canonical JSON."""
    text = json.dumps({"scenario": scenario, "settings": settings, "seed": seed}, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def _flat_axes(settings: dict[str, Any], source: str, prefix: str = "") -> dict[str, list[Any]]:
    """{'drs': {'period_s': [60, 300]}} -> {'drs.period_s': [60, 300]}: every leaf a non-empty list."""
    axes: dict[str, list[Any]] = {}
    for key, values in settings.items():
        name = f"{prefix}{key}"
        if isinstance(values, dict):
            sub = _flat_axes(values, source, f"{name}.")
        elif not isinstance(values, list) or not values:
            raise SweepError(f"{source}: settings.{name}: expected a non-empty list of values, got {values!r}")
        else:
            texts = [json.dumps(v, sort_keys=True) for v in values]
            twice = next((v for v, t in zip(values, texts, strict=True) if texts.count(t) > 1), None)
            if len(set(texts)) < len(texts):
                raise SweepError(f"{source}: settings.{name}: value {twice!r} is given more than once")
            sub = {name: values}
        for sub_name, sub_values in sub.items():
            if sub_name in axes:
                raise SweepError(f"{source}: settings.{sub_name} is given more than once")
            axes[sub_name] = sub_values
    return axes


def _flat_cell(cell: dict[str, Any], source: str, i: int, prefix: str = "") -> dict[str, Any]:
    """{'drs': {'enforce': 'shares'}} -> {'drs.enforce': 'shares'}: one value per key (a list is a value)."""
    out: dict[str, Any] = {}
    for key, value in cell.items():
        name = f"{prefix}{key}"
        sub = _flat_cell(value, source, i, f"{name}.") if isinstance(value, dict) else {name: value}
        for sub_name, sub_value in sub.items():
            if sub_name in out:
                raise SweepError(f"{source}: cells[{i}].{sub_name} is given more than once")
            out[sub_name] = sub_value
    return out


def _at(tree: dict[str, Any], dotted: str) -> Any:
    node: Any = tree
    for part in dotted.split("."):
        node = node[part]
    return node


def _short(point: dict[str, Any]) -> str:
    return " ".join(f"{k}={json.dumps(v)}" for k, v in point.items()) or "(defaults)"


def _pydantic_message(exc: ValidationError) -> str:
    errors = exc.errors()
    err = next((e for e in errors if e["type"] == "extra_forbidden"), errors[0])  # a typo, not a missing field
    loc = "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in err["loc"]).lstrip(".")
    if err["type"] == "missing":
        return f"missing field {loc!r}"
    if err["type"] == "extra_forbidden":
        return f"unknown field {loc!r}"
    value = repr(err.get("input"))
    value = value if len(value) <= 60 else value[:57] + "..."
    return f"{loc}={value}: {err['msg'].removeprefix('Value error, ')}"


def _yaml_message(exc: yaml.YAMLError) -> str:
    mark = getattr(exc, "problem_mark", None)
    problem = getattr(exc, "problem", None) or str(exc)
    where = f" (line {mark.line + 1}, column {mark.column + 1})" if mark is not None else ""
    return " ".join(f"{problem}{where}".split())


# ---- one run --------------------------------------------------------------------------------------------
def execute(run: Run, frames: bool = False) -> tuple[dict[str, Any], dict[str, pd.DataFrame]]:
    """Run one point to its end: (its row, its tables if `frames`). A failure is a row with `error`."""
    model = ScenarioModel(run.scenario, rng=run.seed, errors="record", **run.model_kwargs())
    while model.running:
        model.step()
    return result_row(run, model), (model.frames() if frames else {})


def result_row(run: Run, model: ScenarioModel) -> dict[str, Any]:
    return {"run_id": run.run_id, "scenario": run.scenario, "seed": run.seed, "settings": run.settings,
            "error": model.error, "figures": model.figures}  # fmt: skip


def error_row(run: Run, error: str) -> dict[str, Any]:
    return {"run_id": run.run_id, "scenario": run.scenario, "seed": run.seed, "settings": run.settings,
            "error": error, "figures": {}}  # fmt: skip


def _execute_and_store(run: Run, store: str, frames: bool = False) -> None:
    """A local worker's task: the run, its row written to the store the moment it finishes (nothing to send back)."""
    row, tables = execute(run, frames)
    Store(Path(store)).write(row, tables)


# What a run imports when it first needs it (DRS's root finder): imported before the workers are forked, so that they
# share it (`scenarios.worker_pool`). Not scipy.stats: no run imports it since the summary's skewness is written out
# (hadoop_layer/model.py), and importing it cost the sweep's process 0.25-0.3 s before any worker started.
RUN_IMPORTS = ("scipy.optimize",)


def _start_worker() -> None:
    """A local worker's start: it exits with the sweep's process, and at once on Ctrl-C (the whole process group
    gets SIGINT; a KeyboardInterrupt would only end the current run, and the worker would take the next)."""
    exit_with_parent()
    signal.signal(signal.SIGINT, lambda *_: os._exit(EXIT_INTERRUPTED))  # a half-written row is cleaned at the rerun


# ---- the store --------------------------------------------------------------------------------------------
class Store:
    """DIR/runs/<run_id>.json per finished run (written atomically), DIR/runs/<run_id>/ its tables."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.runs = root / "runs"

    def finished(self) -> dict[str, dict[str, Any]]:
        rows = {}
        for path in self.runs.glob("*.json") if self.runs.is_dir() else ():
            with contextlib.suppress(OSError, ValueError):
                rows[path.stem] = json.loads(path.read_text())
        return rows

    def write(self, row: dict[str, Any], frames: dict[str, pd.DataFrame]) -> None:
        rid = row["run_id"]
        self.runs.mkdir(parents=True, exist_ok=True)
        if frames:
            tmp = temp_name(self.runs / rid)
            tmp.mkdir()
            for name, frame in frames.items():
                write_table(tmp / f"{name}.parquet", [frame], units(name))
            shutil.rmtree(self.runs / rid, ignore_errors=True)
            tmp.rename(self.runs / rid)
        atomic_write(self.runs / f"{rid}.json", json.dumps(row, indent=1, default=str).encode())

    def clean(self) -> None:
        """Remove what a killed sweep left half-written."""
        clean_temp_files(self.runs)

    def results(self, runs: list[Run]) -> pd.DataFrame:
        done = self.finished()
        missing = [r.run_id for r in runs if r.run_id not in done]
        if missing:
            raise RuntimeError(f"{len(missing)} runs have no result (first: {missing[0]})")
        rows = []
        for run in runs:
            row = done[run.run_id]
            rows.append({"run_id": run.run_id, "scenario": run.scenario, "seed": run.seed,
                         **{f"settings.{k}": v for k, v in run.settings.items()},
                         "error": row["error"], **row["figures"]})  # fmt: skip
        frame = pd.DataFrame(rows)
        tmp = temp_name(self.root / RESULTS)
        known = {c: summary_entry(c) for c in frame.columns}
        try:
            write_table(tmp, [frame], {c: entry[0] for c, entry in known.items() if entry and entry[0]})
            os.replace(tmp, self.root / RESULTS)
        except BaseException:
            tmp.unlink(missing_ok=True)
            raise
        return frame


# ---- the sweep --------------------------------------------------------------------------------------------
@dataclass
class SweepReport:
    out: Path
    total: int
    skipped: int
    ran: int
    results: pd.DataFrame = field(repr=False)

    @property
    def failed(self) -> int:
        return int(self.results["error"].notna().sum())

    def describe(self) -> str:
        return (f"{self.total} runs: {self.skipped} already finished, {self.ran} ran, {self.failed} failed; "
                f"wrote {self.out / RESULTS}")  # fmt: skip


def run_sweep(
    sweep: Sweep | str | Path,
    out: str | Path,
    *,
    processes: int | None = None,
    dask: Any = None,
    frames: bool = False,
    retry_errors: bool = False,
    progress: bool = True,
) -> SweepReport:
    """Run the sweep's unfinished runs into `out` and write `out/results.parquet`.

    `dask`: None (local processes through `mesa.batch_run`), "local" (a LocalCluster of `processes` workers),
    a scheduler address, or a `distributed.Client`.
    """
    if not isinstance(sweep, Sweep):
        sweep = load_spec(sweep)
    if (note := sweep.duplicates_note()) is not None:
        print(f"vcloud: note: {note}", file=sys.stderr, flush=True)
    out = Path(out)
    if out.exists() and not out.is_dir():
        raise SweepError(f"--out {out}: not a directory")
    if processes is not None and processes < 1:
        raise SweepError(f"--processes {processes}: must be at least 1")
    created = not out.exists()
    out.mkdir(parents=True, exist_ok=True)
    store = Store(out)
    with _locked(out, created):
        store.clean()
        done = store.finished()
        pending = [r for r in sweep.runs if r.run_id not in done or (retry_errors and done[r.run_id].get("error"))]
        spec = {**sweep.spec.model_dump(mode="json"), "provenance": provenance()}
        (out / "spec.json").write_text(json.dumps(spec, indent=1))
        if pending and dask is None:
            _run_local(store, pending, processes, frames, progress)
        elif pending:
            _run_dask(store, pending, dask, processes, frames, progress)
        store.results(sweep.runs)
        results = pd.read_parquet(out / RESULTS)
    return SweepReport(out, len(sweep.runs), len(sweep.runs) - len(pending), len(pending), results)


@contextlib.contextmanager
def _locked(out: Path, created: bool):
    lock = open(out / ".lock", "w")  # noqa: SIM115 (held for the whole sweep)
    try:
        try:
            fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise SweepError(f"--out {out}: another sweep is writing there") from None
        yield
    except SweepError:
        if created:
            shutil.rmtree(out, ignore_errors=True)
        raise
    finally:
        lock.close()


def _run_local(store: Store, pending: list[Run], processes: int | None, frames: bool, progress: bool) -> None:
    from tqdm import tqdm

    from scenarios.worker_pool import run_all

    n = min(processes or os.cpu_count() or 1, len(pending))
    root = str(store.root)
    if n == 1:  # here, one after another: no worker to start
        finished = (_execute_and_store(run, root, frames) for run in pending)
    else:  # the workers start before the progress bar's thread
        finished = run_all(
            _execute_and_store,
            pending,
            n,
            preload=_worker_imports(pending, frames),
            initializer=_start_worker,
            store=root,
            frames=frames,
        )
    for _ in tqdm(finished, total=len(pending), unit="run", disable=not progress or None):
        pass


def _worker_imports(pending: list[Run], frames: bool) -> list[str]:
    """The modules a worker needs for these runs, to import before the workers are forked."""
    return [*RUN_IMPORTS, type(SCENARIOS[pending[0].scenario]).__module__, *(["pyarrow.parquet"] * frames)]


def _run_dask(store, pending, dask, processes, frames, progress) -> None:
    from distributed import as_completed
    from tqdm import tqdm

    from scenarios.dask_client import DaskUnreachable, dask_client

    with contextlib.ExitStack() as stack:
        try:
            client = dask_client(
                stack,
                dask,
                min(processes or os.cpu_count() or 1, len(pending)),
                fork_after=_worker_imports(pending, frames),
            )
        except DaskUnreachable as exc:
            raise SweepError(str(exc)) from None
        by_key = {f"vcloud-run-{r.run_id}": r for r in pending}
        futures = client.map(execute, pending, frames=frames, key=list(by_key), pure=False)
        with tqdm(total=len(futures), unit="run", disable=not progress or None) as bar:
            for future in as_completed(futures):
                run = by_key[future.key]
                if future.status == "finished":
                    row, tables = future.result()
                elif future.status == "error":  # the task died (`execute` records the run's own errors)
                    row, tables = error_row(run, one_line(future.exception())), {}
                else:  # cancelled (the cluster went away): the run stays unfinished, for a rerun
                    raise RuntimeError(f"dask: run {run.run_id} was {future.status}")
                store.write(row, tables)
                future.release()
                bar.update()
