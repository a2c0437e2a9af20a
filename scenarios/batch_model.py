"""`ScenarioModel`: any named scenario as a Mesa model that `mesa.batch_run` can drive.

    from mesa.batchrunner import batch_run
    from scenarios.batch_model import ScenarioModel

    rows = batch_run(ScenarioModel, {"scenario": "synthetic-cloud", "duration_s": 600,
                                     "allocator": ["static", "drs"], "drs__period_s": [60, 300]},
                     rng=[1, 2, 3], number_processes=1, max_steps=10_000)

Every parameter is a keyword argument: `scenario` (a name of `scenarios.registry.SCENARIOS`), then the
scenario's settings, flat, with the dots of nested keys written as double underscores (`drs__period_s=60`
is `--set drs.period_s=60`); the seed comes as `rng` (an int; `batch_run(..., rng=[1, 2])`). Settings are
validated as for `vcloud run`: a bad one raises `SettingsError` naming the key and the value.

The scenario's own model (`self.sim`, a `CloudModel`) keeps simulated time; this wrapper only drives it.
Mesa's heartbeat is left running here, so each `step()` is one `model.steps` and advances the simulation
by `chunk_s` simulated seconds (default 30 s, the same chunks as `vcloud run`, so the figures are those of
`vcloud run` with the same settings and seed). When the scenario's horizon is reached or its model stops
itself, the step computes the summary and sets `running = False`, which ends `batch_run`'s loop
(`while model.running and model.steps < max_steps`). `max_steps` must cover the run: at least
`horizon_s / chunk_s` (60 steps for `synthetic-cloud`'s 1800 s), or Hadoop runs' length / `chunk_s`; a run
cut short by `max_steps` reports `finished=False` and no figures.

Model reporters: `finished`, `error`, `sim_time_s` and every scalar figure of the scenario's summary, nested
dicts flattened with dotted keys (`items_done.cpu`, `cloud.pool_cpu_utilization`), lists left out. The summary
is known only at the end, so the DataCollector holding the figures is built and collected once, when the run
finishes: `batch_run` returns one row per run whatever `data_collection_period` is.

`errors="record"` turns an exception while building or running into `error="<Type>: <message>"` and a
finished run without figures, instead of raising (a sweep goes on past a failing run).
"""

from __future__ import annotations

from typing import Any, Literal

import numpy as np
from mesa import DataCollector, Model

from scenarios.registry import SCENARIOS
from scenarios.runner import advance, unfinished
from scenarios.settings import SettingsError, validate

BASE_REPORTERS = ("finished", "error", "sim_time_s")


class ScenarioModel(Model):
    def __init__(
        self,
        scenario: str = "synthetic-cloud",
        *,
        rng: int | np.integer | None = None,
        chunk_s: float = 30.0,
        errors: Literal["raise", "record"] = "raise",
        **settings: Any,
    ) -> None:
        if scenario not in SCENARIOS:
            raise SettingsError(f"unknown scenario {scenario!r} (try: {', '.join(SCENARIOS)})")
        if not chunk_s > 0:
            raise ValueError(f"chunk_s must be > 0, got {chunk_s}")
        if errors not in ("raise", "record"):
            raise ValueError(f"errors must be 'raise' or 'record', got {errors!r}")
        self.seed = _seed(rng)
        super().__init__(rng=self.seed)
        self.named_scenario = SCENARIOS[scenario]  # not `scenario`: Mesa reserves it (SolaraViz reads it)
        self.scenario_name = scenario
        self.chunk_s, self.errors = float(chunk_s), errors
        self.settings = validate(self.named_scenario.Settings, {k.replace("__", "."): v for k, v in settings.items()})
        self.figures: dict[str, Any] = {}
        self.error: str | None = None
        self.finished = False
        self.sim = None
        self.horizon_s: float | None = None
        self.datacollector = DataCollector(model_reporters=_reporters(()))
        try:
            self.sim = self.named_scenario.build(self.settings, self.seed)
            self.sim.start()  # the first allocation: a bad one fails here, as in `vcloud run`
            self.horizon_s = self.named_scenario.horizon_s(self.sim)
        except Exception as exc:
            self._fail(exc)
        self.datacollector.collect(self)

    def step(self) -> None:
        """Advance `chunk_s` simulated seconds (one chunk of `scenarios.runner.run_model`)."""
        if self.finished:
            return
        sim, horizon = self.sim, self.horizon_s
        try:
            if unfinished(sim, horizon):
                advance(sim, horizon, self.chunk_s)
            if not unfinished(sim, horizon):
                self.figures = scalar_figures(self.named_scenario.summary(sim))
                self._finish()
        except Exception as exc:
            self._fail(exc)

    @property
    def sim_time_s(self) -> float:
        return float(self.sim.time) if self.sim is not None else 0.0

    def frames(self) -> dict:
        """The scenario's per-run tables (`vm_trace`, and `tasks`, `jobs` for Hadoop): name -> DataFrame."""
        return self.named_scenario.frames(self.sim) if self.sim is not None and self.error is None else {}

    def _fail(self, exc: Exception) -> None:
        if self.errors == "raise":
            raise exc
        self.error, self.figures = one_line(exc), {}
        self._finish()

    def _finish(self) -> None:
        self.finished, self.running = True, False
        self.datacollector = DataCollector(model_reporters=_reporters(self.figures))
        self.datacollector.collect(self)


def _reporters(figures) -> dict[str, Any]:
    reporters: dict[str, Any] = {name: (lambda m, name=name: getattr(m, name)) for name in BASE_REPORTERS}
    reporters.update({name: (lambda m, name=name: m.figures[name]) for name in figures})
    return reporters


def _seed(rng: Any) -> int:
    """An int seed: the scenario is built from it. None (unseeded) draws one; it is reported as `model.seed`."""
    if rng is None:
        return int(np.random.SeedSequence().generate_state(1, np.uint64)[0] >> 1)
    if isinstance(rng, int | np.integer) and not isinstance(rng, bool) and rng >= 0:
        return int(rng)
    raise TypeError(f"rng must be a non-negative int seed (a run is a function of its seed), got {rng!r}")


def scalar_figures(summary: dict[str, Any], prefix: str = "") -> dict[str, Any]:
    """The summary's scalars, nested dicts flattened with dotted keys; lists (per-VM tables) left out."""
    out: dict[str, Any] = {}
    for key, value in summary.items():
        if isinstance(value, dict):
            out.update(scalar_figures(value, f"{prefix}{key}."))
        elif not isinstance(value, list | tuple):
            out[f"{prefix}{key}"] = value.item() if isinstance(value, np.generic) else value
    return out


def one_line(exc: BaseException) -> str:
    text = " ".join(str(exc).split())
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__
