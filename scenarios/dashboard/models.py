"""The Mesa models the dashboard page drives: SolaraViz steps them and rebuilds them from its controls on Reset.

SolaraViz calls `model.step()` for Step and Play, and `type(model)(**controls)` for Reset, so every control is a
keyword argument here. Controls arrive as the widgets give them (a seed typed as text), so both models convert.
"""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path
from typing import Any

from mesa import Model

from scenarios.batch_model import ScenarioModel, one_line
from scenarios.dashboard.panels import RunFrames, Snapshot, TaskLedger, live_snapshot, read_run, replay_snapshot
from scenarios.settings import SettingsError


class DashboardModel(ScenarioModel):
    """A named scenario advanced `chunk_s` simulated seconds per `step()` (the same chunks as `vcloud run`).

    A bad combination of controls (e.g. `skew_sched` without `allocator=heterogeneous`) does not break the page:
    the model is left empty and finished, and the summary line shows the error until the controls are mended."""

    def __init__(
        self,
        scenario_name: str = "flexslot",
        *,
        rng: int | str = 1,
        chunk_s: float = 30.0,
        scenario: Any = None,
        **settings: Any,
    ) -> None:
        """`scenario_name` names ours; `scenario` is Mesa's own Scenario object, which SolaraViz's Reset passes to
        any model that takes that keyword: it carries nothing the settings do not, so it is ignored."""
        self.ledger = TaskLedger()
        self._snap: tuple[float, Snapshot] | None = None
        settings = {k: (None if v == "" else v) for k, v in settings.items()}  # an emptied text control: no value
        seed = 1
        try:
            seed = parse_seed(rng)
            super().__init__(scenario_name, rng=seed, chunk_s=float(chunk_s), errors="record", **settings)
        except (SettingsError, ValueError, TypeError) as exc:
            if "rng" not in vars(self):  # it failed before Model.__init__ ran (which sets `rng`)
                Model.__init__(self, rng=seed)
            self.scenario_name, self.chunk_s, self.settings, self.seed = scenario_name, float(chunk_s), None, seed
            self.sim, self.horizon_s, self.figures = None, None, {}
            self.error, self.finished, self.running = one_line(exc), True, False

    def describe(self) -> str:
        """Which model is on the page: scenario, seed, step length."""
        return f"{self.scenario_name}, seed {self.seed}, {self.chunk_s:g} simulated s per step"

    def snapshot(self) -> Snapshot:
        """The panels' data now, computed once per simulated time whatever the number of panels drawing it."""
        now = float(self.sim.time) if self.sim is not None else -1.0
        if self._snap is None or self._snap[0] != now:
            self._snap = (now, live_snapshot(self.sim, self.ledger, self.error, self.settings))
        return self._snap[1]


def parse_seed(rng: int | str) -> int:
    """The seed control's text as a non-negative int."""
    try:
        seed = int(str(rng).strip())
    except ValueError:
        raise SettingsError(f"seed {rng!r}: not a whole number") from None
    if seed < 0:
        raise SettingsError(f"seed {rng!r}: must be >= 0")
    return seed


@lru_cache(maxsize=4)
def _frames(path: str) -> RunFrames:
    """Read once per run directory: Reset and the time slider cut the same tables."""
    return read_run(Path(path))


class ReplayModel(Model):
    """A finished run directory shown at time `t`: each `step()` moves `chunk_s` seconds on, `seek` jumps."""

    def __init__(
        self, run_dir: str = ".", *, chunk_s: float = 30.0, rng: int | None = None, at_end: bool = True
    ) -> None:
        """`at_end`: open on the finished run (what people come to see); Reset opens at t = 0 to play it."""
        super().__init__(rng=rng)
        self.run_dir = str(Path(run_dir).resolve())
        self.frames = _frames(self.run_dir)
        self.chunk_s = float(chunk_s)
        self.end_s = self.frames.end_s
        self.t = 0.0
        self._snap: tuple[float, Snapshot] | None = None
        self.seek(self.end_s if at_end else 0.0)

    def describe(self) -> str:
        return f"run {self.run_dir}, {self.chunk_s:g} s per step"

    def step(self) -> None:
        self.seek(self.t + self.chunk_s)

    def seek(self, t: float) -> None:
        self.t = min(max(float(t), 0.0), self.end_s)
        self.running = self.t < self.end_s

    def snapshot(self) -> Snapshot:
        """The run at `t`, cut once per position of the slider."""
        if self._snap is None or self._snap[0] != self.t:
            self._snap = (self.t, replay_snapshot(self.frames, self.t))
        return self._snap[1]
