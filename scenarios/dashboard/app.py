"""The dashboard page (Solara): a sidebar with Reset, Play and Step and the scenario's controls, and the panels.

The page keeps Mesa's model protocol (`step()`, `running`; Reset builds `type(model)(**controls)`) but not
SolaraViz's frame: SolaraViz 3.5 lays components out as half-width draggable cards under "Page 0" tabs, shows
`model.time` in steps beside our simulated seconds, leaves Play showing pause (and disabled) when the run ends,
and its inputs show neither a slider's value nor a setting's description. Here Play stops by itself at the end
(Reset is always there), sliders show their value, every control says what it does, and only the selected
policies' knobs are listed (`controls.visible_keys`).

Panels are Vega-Lite charts (`charts.Board`, `vega.VegaView`) whose data change in place, and two tables (jobs,
events). One lock per model keeps a step and a redraw apart (Play steps in a thread).
"""

from __future__ import annotations

import threading
import time
from typing import Any

import solara

from scenarios.dashboard.charts import Board
from scenarios.dashboard.controls import Control, model_kwargs, visible_keys
from scenarios.dashboard.models import DashboardModel, ReplayModel
from scenarios.dashboard.panels import summary_line
from scenarios.dashboard.vega import VegaView, resync_handler
from scenarios.dashboard.views import job_table

STYLE = """
.vcloud-panel .v-card__title { font-size: 16px; word-break: normal; overflow-wrap: normal; }
.vcloud-summary, .vcloud-model { font-size: 15px; }
.vcloud-note { font-size: 13px; color: #555; }
.vcloud-help { font-size: 12.5px; color: #555; margin: -6px 0 8px 0; line-height: 1.25; }
.vcloud-vega .vega-embed summary { opacity: 0.9; }
.v-navigation-drawer .v-input__slider { margin-top: 26px; }
"""
PANEL_TITLES = {
    "cluster": "Cluster",
    "heat map": "Per-VM CPU states",
    "hosts": "Hosts and their VMs",
    "nodes": "Slots and tasks per node",
    "timeline": "Task timeline",
    "shares": "Pool and queue shares",
    "memory": "Memory",
}


def lock_of(model: Any) -> threading.Lock:
    """The model's lock: a step and a redraw never run at once."""
    return model.__dict__.setdefault("_dashboard_lock", threading.Lock())


def board_of(model: DashboardModel | ReplayModel) -> Board:
    """The model's panels, updated to its snapshot now (made on first use, again when a replay moves back)."""
    snap = model.snapshot()
    board: Board | None = model.__dict__.get("_board")
    if board is None or snap.time_s < board.time:
        board = model.__dict__["_board"] = Board(snap)
    elif snap.time_s != board.time or getattr(board, "_snap", None) is not snap:
        board.update(snap)
    board._snap = snap
    return board


@solara.component
def Chart(board: Board, kind: str, patch: dict[str, Any]):
    """One panel: its note (what is aggregated or paged) and its chart; `patch` (the chart's last change) is a
    prop so that a step re-renders the panel, and the widget receives the change."""
    chart = board.charts[kind]
    note = board.notes.get(kind)
    with solara.Card(PANEL_TITLES[kind], classes=["vcloud-panel", f"vcloud-{kind.replace(' ', '-')}"]):
        if note:
            solara.Text(note, classes=["vcloud-note"])
        if chart.has_data:
            VegaView.element(spec=chart.embed_spec(), patch=patch, on_resync=resync_handler(chart))
        else:
            solara.Text("nothing to draw yet: step the model", classes=["vcloud-note"])


@solara.component
def Tables(model, board: Board, version: int):
    snap = model.snapshot()
    if snap.jobs is not None:
        with solara.Card("Jobs", classes=["vcloud-panel", "vcloud-jobs"]):
            solara.DataFrame(job_table(snap.jobs), items_per_page=8)
    with solara.Card("Events", classes=["vcloud-panel", "vcloud-events"]):
        events = board.events(snap)
        if len(events):
            solara.DataFrame(events, items_per_page=8)
        else:
            solara.Text("no speculative launch, kill, slot resize or pool re-division yet", classes=["vcloud-note"])


@solara.component
def Panels(model, version: int):
    """Everything the model shows at this moment (`version` changes after every step or seek)."""
    with lock_of(model):
        board = board_of(model)
        line = summary_line(model.snapshot())
    with solara.Card(classes=["vcloud-panel", "vcloud-run"]), solara.Column(gap="4px"):
        solara.Text(model.describe(), classes=["vcloud-model"])
        solara.Text(line, classes=["vcloud-summary"])
    for kind in ("cluster", "heat map", "hosts", "nodes", "timeline", "shares", "memory"):
        if kind in board.charts:
            Chart(board, kind, board.charts[kind].patch)
    Tables(model, board, version)


@solara.component
def Controller(model: solara.Reactive, version: solara.Reactive, make, replay: bool = False):
    """Reset, Play/Pause and Step. Play steps until the model stops, then stops itself: Reset and (in a replay)
    the time slider stay usable."""
    playing = solara.use_reactive(False)
    _ = version.value  # re-rendered after every step or seek: a replay moved back from its end can play again
    running = model.value.running

    def play_loop() -> None:
        while playing.value:
            m = model.value
            if not m.running:
                break
            with lock_of(m):
                m.step()
            version.set(version.value + 1)
            time.sleep(0.05)  # let a redraw reach the browser between steps
        playing.set(False)

    solara.lab.use_task(play_loop, dependencies=[playing.value], prefer_threaded=True)  # type: ignore[arg-type]

    def step() -> None:
        m = model.value
        with lock_of(m):
            m.step()
        version.set(version.value + 1)

    def reset() -> None:
        playing.set(False)
        model.set(make())
        version.set(version.value + 1)

    with solara.Row(justify="space-between"):
        solara.Button("Reset", color="primary", on_click=reset)
        solara.Button("Pause" if playing.value else "Play", color="primary",
                      on_click=lambda: playing.set(not playing.value),
                      disabled=not running and not playing.value)  # fmt: skip
        solara.Button("Step", color="primary", on_click=step, disabled=playing.value or not running)
    if not running:
        solara.Text("the run has ended: Reset starts it again" if not replay else
                    "at the end of the run: Reset goes back to t = 0", classes=["vcloud-note"])  # fmt: skip


@solara.component
def ControlInput(control: Control, value: Any, on_value):
    kind = control.kind
    if kind == "Select":
        solara.Select(control.label, value=value, values=control.values, on_value=on_value)
    elif kind == "Checkbox":
        solara.Checkbox(label=control.label, value=bool(value), on_value=on_value)
    elif kind == "SliderInt":
        solara.SliderInt(control.label, value=int(value), min=int(control.min), max=int(control.max),
                         step=int(control.step or 1), on_value=on_value, thumb_label="always")  # fmt: skip
    elif kind == "SliderFloat":
        solara.SliderFloat(control.label, value=float(value), min=control.min, max=control.max, step=control.step,
                           on_value=on_value, thumb_label="always")  # fmt: skip
    else:
        solara.InputText(control.label, value="" if value is None else str(value), on_value=on_value)
    if control.help:
        solara.Text(control.help, classes=["vcloud-help"])


@solara.component
def LivePage(scenario: str, settings_type: Any, given: dict[str, Any], seed: int, chunk_s: float):
    """A scenario, live: its controls (changed values apply at Reset) and its panels."""
    initial = solara.use_memo(lambda: {"seed": str(seed), "chunk_s": int(chunk_s), **_current(settings_type, given)},
                              [])  # fmt: skip
    values = solara.use_reactive(initial)

    def make() -> DashboardModel:
        v = values.value
        return DashboardModel(scenario, rng=v["seed"], chunk_s=float(v["chunk_s"]), **model_kwargs(v, initial, given))

    model = solara.use_reactive(solara.use_memo(make, []))
    version = solara.use_reactive(0)
    solara.Style(STYLE)
    with solara.AppBar():
        solara.AppBarTitle(f"vcloud dashboard: {scenario}")
    with solara.Sidebar():
        with solara.Card("Run", classes=["vcloud-controls"]):
            Controller(model, version, make)
        with solara.Card("Settings (apply at Reset)", classes=["vcloud-controls"]):
            for control in visible_keys(scenario, settings_type, values.value, given):
                ControlInput(
                    control,
                    values.value.get(control.key, control.value),
                    lambda val, k=control.key: values.set({**values.value, k: val}),
                )
    Panels(model.value, version.value)


@solara.component
def ReplayPage(run_dir: str, chunk_s: float):
    """A finished run directory: opens on its end; the slider and Step/Play move through it."""

    def make() -> ReplayModel:
        return ReplayModel(run_dir, chunk_s=chunk_s, at_end=False)

    model = solara.use_reactive(solara.use_memo(lambda: ReplayModel(run_dir, chunk_s=chunk_s), []))
    version = solara.use_reactive(0)
    solara.Style(STYLE)
    m = model.value

    def seek(t: float) -> None:
        with lock_of(m):
            m.seek(t)
        version.set(version.value + 1)

    with solara.AppBar():
        solara.AppBarTitle(f"vcloud run {m.run_dir}")
    with solara.Sidebar(), solara.Card("Replay", classes=["vcloud-controls"]):
        Controller(model, version, make, replay=True)
        solara.Text(f"{chunk_s:g} simulated seconds per step", classes=["vcloud-help"])
    with solara.Card("Time", classes=["vcloud-panel", "vcloud-time"]):
        solara.SliderFloat("time (s)", value=round(m.t, 1), min=0.0, max=m.end_s, step=max(m.end_s / 500, 0.1),
                           on_value=seek, thumb_label="always")  # fmt: skip
    Panels(m, version.value)


def _current(settings_type: Any, given: dict[str, Any]) -> dict[str, Any]:
    from scenarios.settings import flatten, validate

    return flatten(validate(settings_type, given).model_dump())
