"""A scenario's pydantic settings as SolaraViz controls (`model_params`), with the fields' own choices and bounds.

A choice (`Literal`) is a Select, a flag a Checkbox, a number bounded on both sides a slider over its bounds when
that range is a natural one for it (a whole number of at most `SLIDER_STEPS` values; a float whose value and default
lie on the slider's steps, as 0.2 on 0..1 does, not 100 on 1..2047); any other number is typed as text and
validated by pydantic like `--set` (its bounds are in the label).
The page shows the settings people turn most (`PRIMARY`, those the scenario has), the knobs of the policies
selected now (the scheduler's, the speculation's, the slot manager's, the allocator's: `fair.*` only under Fair)
and every key given with `--set`; each with its value and its description (the field's). The other settings keep
their value (given with `--set`, or the default).
Keys are flat, nested ones with `__` for the dot (`drs__period_s`), as `ScenarioModel` takes them.
"""

from __future__ import annotations

import types
import typing
from dataclasses import dataclass
from typing import Any, Literal

import annotated_types as at
from pydantic import BaseModel
from pydantic.fields import FieldInfo

from policies.allocators import ALLOCATORS
from policies.registry import Entry, group_of
from policies.schedulers import SCHEDULERS
from policies.slots import SLOT_MANAGERS
from policies.speculation import SPECULATION
from scenarios.limits import number_text

PRIMARY = (
    "allocator", "scheduler", "speculation", "slot_manager", "benchmark", "scale", "skew_sched", "co_cluster",
    "drs.period_s", "drs.count_ready", "hadoop.io_sort_mb", "hadoop.map_slots", "hadoop.reduce_slots", "job",
    "items_per_vm", "tenants_per_host", "tenant_load", "duration_s", "max_jobs", "phase_s", "mean_gap_s", "replay",
    "replay_io", "time_scale",
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


POLICIES: dict[str, dict[str, Entry]] = {
    "allocator": ALLOCATORS, "scheduler": SCHEDULERS, "speculation": SPECULATION, "slot_manager": SLOT_MANAGERS,
}  # fmt: skip
SEED_HELP = "the run is a function of its seed"
STEP_HELP = "how far Step (and each step of Play) moves the simulation"


@dataclass(frozen=True)
class Control:
    """One input of the sidebar: its key (dotted), widget kind, label, value now, description, choices/bounds."""

    key: str
    kind: str  # Select, Checkbox, SliderInt, SliderFloat, InputText
    label: str
    value: Any
    help: str = ""
    values: tuple | None = None
    min: float | None = None
    max: float | None = None
    step: float | None = None


def policy_groups(settings: type[BaseModel], values: dict[str, Any]) -> tuple[set[str], set[str]]:
    """The settings groups of the selected policies, and those of every policy (selected or not)."""
    selected, every = set(), set()
    for field, registry in POLICIES.items():
        if field_at(settings, field) is None:
            continue
        for name, entry in registry.items():
            group = group_of(name, entry)
            if group is None or field_at(settings, group) is None:
                continue
            every.add(group)
            if name == values.get(field):
                selected.add(group)
    return selected, every


def visible_keys(
    scenario: str, settings: type[BaseModel], values: dict[str, Any], given: dict[str, Any]
) -> list[Control]:
    """The sidebar's inputs for `values` (dotted keys, with "seed" and "chunk_s"): seed, step length, the primary
    settings, the selected policies' knobs (scalars), and the keys given with `--set`; no other policy's knobs."""
    selected, every = policy_groups(settings, values)
    keys = [k for k in PRIMARY if field_at(settings, k) is not None]
    for group in sorted(selected):
        model = field_at(settings, group).annotation
        keys += [f"{group}.{name}" for name in model.model_fields if f"{group}.{name}" not in keys]
    keys += [k for k in given if k not in keys]
    keys = [k for k in keys if k.split(".")[0] not in every - selected]
    out = [Control("seed", "InputText", "seed", values.get("seed", "1"), SEED_HELP),
           Control("chunk_s", "SliderInt", "simulated seconds per step", values.get("chunk_s", 30), STEP_HELP,
                   min=1, max=600, step=1)]  # fmt: skip
    for key in keys:
        info = field_at(settings, key)
        made = control(key, info, values.get(key)) if info is not None else None
        if made is None:
            continue
        out.append(Control(key, made["type"], made["label"], made["value"], info.description or "",
                           tuple(made["values"]) if "values" in made else None, made.get("min"), made.get("max"),
                           made.get("step")))  # fmt: skip
    return out


def model_kwargs(values: dict[str, Any], initial: dict[str, Any], given: dict[str, Any]) -> dict[str, Any]:
    """`DashboardModel`'s settings keywords: what was given with `--set` and what was changed on the page."""
    keys = [k for k in values if k in given or values[k] != initial.get(k)]
    return {k.replace(".", "__"): values[k] for k in keys if k not in ("seed", "chunk_s")}
