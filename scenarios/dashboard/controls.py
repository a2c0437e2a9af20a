"""A scenario's pydantic settings as SolaraViz controls (`model_params`), with the fields' own choices and bounds.

A choice (`Literal`) is a Select, a flag a Checkbox, a number bounded on both sides a slider over its bounds; a
number with one bound or none is typed as text and validated by pydantic like `--set` (its bound is in the label).
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

PRIMARY = (
    "allocator", "scheduler", "speculation", "slot_manager", "benchmark", "scale", "skew_sched", "co_cluster",
    "drs.period_s", "drs.count_ready", "hadoop.io_sort_mb", "hadoop.map_slots", "hadoop.reduce_slots", "job",
    "items_per_vm", "tenants_per_host", "tenant_load", "duration_s", "max_jobs", "phase_s",
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
        if ann is int:
            return {"type": "SliderInt", "value": int(value), "min": int(lo) + lo_open, "max": int(hi) - hi_open,
                    "step": 1, "label": label}  # fmt: skip
        step = (hi - lo) / SLIDER_STEPS
        return {"type": "SliderFloat", "value": float(value), "min": lo + step * lo_open, "max": hi - step * hi_open,
                "step": step, "label": label}  # fmt: skip
    bound = "" if lo is None else f" ({'>' if lo_open else '>='} {lo:g})"
    return {"type": "InputText", "value": "" if value is None else str(value), "label": label + bound}


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
