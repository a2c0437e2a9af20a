"""The dashboard page: Mesa's SolaraViz with the panels of `figures` as its components.

SolaraViz gives the sidebar (Reset, Play, Step, the controls) and redraws the components after every step; each
component here reads `model.snapshot()` (computed once per step) and sends its panel as a PNG. Panels are built
once per model and updated in place (`figures`), kept on the model so that Reset (a new model) starts afresh.
"""

from __future__ import annotations

from typing import Any

import solara
from mesa.visualization import SolaraViz
from mesa.visualization.utils import force_update

from scenarios.dashboard.figures import PANELS, png
from scenarios.dashboard.models import DashboardModel, ReplayModel
from scenarios.dashboard.panels import summary_line

TITLES = {
    "heat map": "Per-VM steal, iowait, usr+sys and idle shares over time",
    "nodes": "Slots, running and finished tasks per node",
    "VMs": "Per-VM CPU (DRS demand, entitlement, use) and memory",
    "jobs": "Jobs and the map-runtime CDF",
}


def panel_png(model: DashboardModel | ReplayModel, kind: str) -> bytes:
    """The panel `kind` of the model now, as PNG: built on first use, then updated in place."""
    snap = model.snapshot()
    panels: dict[str, Any] = model.__dict__.setdefault("_dashboard_panels", {})
    panel = panels.get(kind)
    if panel is None:
        panels[kind] = panel = PANELS[kind](snap)
    else:
        panel.update(snap)
    return png(panel.fig)


def _panel_component(kind: str):
    def component(model):
        with solara.Card(TITLES[kind], classes=["vcloud-panel"]) as card:
            solara.Image(panel_png(model, kind), width="100%", classes=[f"vcloud-{kind.replace(' ', '-')}"])
        return card

    component.__name__ = f"Panel_{kind.replace(' ', '_')}"
    return component


def Summary(model):
    """The run summary line: simulated time, makespan so far, kills, speculative attempts, skewness."""
    with solara.Card("Run", classes=["vcloud-panel"]) as card, solara.Column(gap="4px"):
        solara.Text(model.describe(), classes=["vcloud-model"])
        solara.Text(summary_line(model.snapshot()), classes=["vcloud-summary"])
    return card


def TimeSlider(model: ReplayModel):
    """A finished run's time: the panels show the run as it was then."""

    def seek(t: float) -> None:
        model.seek(t)
        force_update()

    with solara.Card("Time", classes=["vcloud-panel"]) as card:
        solara.SliderFloat("time (s)", value=model.t, min=0.0, max=model.end_s, step=model.chunk_s / 10,
                           on_value=seek, thumb_label="always")  # fmt: skip
    return card


PANEL_COMPONENTS = [Summary, *(_panel_component(k) for k in PANELS)]


def live_page(scenario: str, model_params: dict[str, Any], name: str | None = None):
    """The page of a live scenario: `model_params` from `controls.model_params` (their values build the first
    model, as Reset will)."""
    first = {k: (v["value"] if isinstance(v, dict) and "type" in v else v) for k, v in model_params.items()}
    model = DashboardModel(**first)
    return SolaraViz(model, components=PANEL_COMPONENTS, model_params=model_params, name=name or f"vcloud {scenario}")


def replay_page(run_dir: str, chunk_s: float = 30.0):
    """The page of a finished run directory, with a time slider; Step and Play move through it."""
    model = ReplayModel(run_dir, chunk_s=chunk_s)
    params = {"run_dir": model.run_dir, "chunk_s": {"type": "SliderInt", "value": int(chunk_s), "min": 1,
              "max": 600, "step": 1, "label": "seconds per step"}}  # fmt: skip
    return SolaraViz(model, components=[TimeSlider, *PANEL_COMPONENTS], model_params=params,
                     name=f"vcloud run {model.run_dir}")  # fmt: skip
