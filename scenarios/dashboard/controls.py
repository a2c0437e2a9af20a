"""A scenario's pydantic settings as SolaraViz controls (`model_params`), with the fields' own choices and bounds.

A choice (`Literal`) is a Select, a flag a Checkbox, a number bounded on both sides a slider over its bounds when
that range is a natural one for it (a whole number of at most `SLIDER_STEPS` values; a float whose value and default
lie on the slider's steps, as 0.2 on 0..1 does, not 100 on 1..2047); any other number is typed as text and
validated by pydantic like `--set` (its bounds are in the label).
The page shows the settings people turn most (`PRIMARY`, those the scenario has) and every key given with `--set`;
the other settings keep their value (given with `--set`, or the default) as fixed parameters.
Keys are flat, nested ones with `__` for the dot (`drs__period_s`), as `ScenarioModel` takes them.
"""

from __future__ import annotations

import types
import typing
from typing import Any, Literal

import annotated_types as at
from pydantic import BaseModel
from pydantic.fields import FieldInfo

from scenarios.limits import number_text

PRIMARY = (
    "allocator", "scheduler", "speculation", "slot_manager", "benchmark", "scale", "skew_sched", "co_cluster",
    "drs.period_s", "drs.count_ready", "hadoop.io_sort_mb", "hadoop.map_slots", "hadoop.reduce_slots", "job",
    "items_per_vm", "tenants_per_host", "tenant_load", "duration_s", "max_jobs", "phase_s", "fair.delay_scheduling",
    "mean_gap_s", "replay", "replay_io", "time_scale",
)  # fmt: skip
STEP_CONTROL = {"type": "SliderInt", "value": 30, "min": 1, "max": 600, "step": 1,
                "label": "simulated seconds per step"}  # fmt: skip
SLIDER_STEPS = 100  # a bounded float's slider has this many steps across its range


def field_at(settings: type[BaseModel], key: str) -> FieldInfo | None:
    """The field a dotted key names, or None."""
    model: Any = settings
    *parents, leaf = key.split(".")
    for p in parents:
        info = model.model_fields.get(p)
        if info is None or not (isinstance(info.annotation, type) and issubclass(info.annotation, BaseModel)):
            return None
        model = info.annotation
    return model.model_fields.get(leaf)


def _bounds(info: FieldInfo) -> tuple[float | None, float | None, bool, bool]:
    """(low, high, low excluded, high excluded) from the field's Ge/Gt/Le/Lt constraints."""
    lo = hi = None
    lo_open = hi_open = False
    for m in info.metadata:
        if isinstance(m, at.Ge):
            lo = m.ge
        elif isinstance(m, at.Gt):
            lo, lo_open = m.gt, True
        elif isinstance(m, at.Le):
            hi = m.le
        elif isinstance(m, at.Lt):
            hi, hi_open = m.lt, True
    return lo, hi, lo_open, hi_open


def control(key: str, info: FieldInfo, value: Any) -> dict[str, Any] | None:
    """The SolaraViz control of one field at `value`, or None when it is not a choice, flag or number."""
    ann = info.annotation
    label = key
    if typing.get_origin(ann) is Literal:
        return {"type": "Select", "value": value, "values": list(typing.get_args(ann)), "label": label}
    if ann is bool:
        return {"type": "Checkbox", "value": bool(value), "label": label}
    numeric = ann in (int, float) or (
        isinstance(ann, types.UnionType) and set(typing.get_args(ann)) - {type(None)} <= {int, float}
    )
    if not numeric:
        return None
    lo, hi, lo_open, hi_open = _bounds(info)
    if lo is not None and hi is not None and value is not None:
        whole = ann is int or set(typing.get_args(ann)) - {type(None)} == {int}
        if whole and int(hi) - hi_open - (int(lo) + lo_open) <= SLIDER_STEPS:
            return {"type": "SliderInt", "value": int(value), "min": int(lo) + lo_open, "max": int(hi) - hi_open,
                    "step": 1, "label": label}  # fmt: skip
        step = (hi - lo) / SLIDER_STEPS
        low, high = lo + step * lo_open, hi - step * hi_open
        default = info.default if isinstance(info.default, int | float) and not isinstance(info.default, bool) else None
        if not whole and all(_on_steps(v, low, high, step) for v in (value, default) if v is not None):
            return {"type": "SliderFloat", "value": float(value), "min": low, "max": high, "step": step,
                    "label": label}  # fmt: skip
    bounds = [f"{'>' if lo_open else '>='} {number_text(lo)}"] if lo is not None else []
    bounds += [f"{'<' if hi_open else '<='} {number_text(hi)}"] if hi is not None else []
    shown = f" ({', '.join(bounds)})" if bounds else ""
    return {"type": "InputText", "value": "" if value is None else str(value), "label": label + shown}


def _on_steps(value: float, low: float, high: float, step: float) -> bool:
    """Whether a slider from `low` to `high` in steps of `step` can show `value` exactly. Bounds that are budgets
    (limits.py: trace_interval_s up to a day, io.sort.mb up to 2047) are not: a slider over them would move the
    value to its nearest step (io_sort_mb 100 -> 103.3) and Hadoop's whole-MB settings would fail."""
    if not low <= value <= high:
        return False
    k = (value - low) / step
    return abs(k - round(k)) < 1e-6


def model_params(
    scenario: str, settings: BaseModel, given: dict[str, Any], seed: int, chunk_s: float = 30.0
) -> dict[str, Any]:
    """SolaraViz `model_params` for `DashboardModel`: the scenario (fixed), the seed, the step length, the
    controls of `PRIMARY` and of every key in `given` (the `--set` pairs), and `given`'s other keys as fixed."""
    params: dict[str, Any] = {
        "scenario_name": scenario,
        "rng": {"type": "InputText", "value": str(seed), "label": "seed"},
        "chunk_s": {**STEP_CONTROL, "value": int(chunk_s)},
    }
    current = settings.model_dump()
    keys = [k for k in PRIMARY if field_at(type(settings), k) is not None]
    keys += [k for k in given if k not in keys]
    for key in keys:
        info = field_at(type(settings), key)
        value = current
        for part in key.split("."):
            value = value[part]
        made = control(key, info, value) if info is not None else None
        params[key.replace(".", "__")] = made if made is not None else given.get(key, value)
    return params
