"""`vcloud show SCENARIO`: every setting of a scenario (dotted, as `--set` takes it) with its type or choices,
default, bounds and description, read from the scenario's pydantic model so it can never drift from what
`validate` accepts. Rules over several settings are in the models' validators and docs/model.md ("Bounds")."""

from __future__ import annotations

import json
import types
import typing
from typing import Any, Literal

import annotated_types as at
from pydantic import BaseModel
from pydantic.fields import FieldInfo

from scenarios.base import Scenario
from scenarios.limits import number_text

_BOUNDS = ((at.Gt, "gt", ">"), (at.Ge, "ge", ">="), (at.Lt, "lt", "<"), (at.Le, "le", "<="))


def setting_rows(model: type[BaseModel], defaults: BaseModel | None = None, prefix: str = "") -> list[dict[str, str]]:
    """One row per leaf setting: name, type, default, bounds, description (nested models are flattened, with the
    defaults the outer model gives them: the FlexSlot testbed's 4 map slots, not HadoopConfig's 2)."""
    defaults = defaults if defaults is not None else model()
    rows: list[dict[str, str]] = []
    for name, info in model.model_fields.items():
        key, value = f"{prefix}{name}", getattr(defaults, name)
        if isinstance(info.annotation, type) and issubclass(info.annotation, BaseModel):
            rows.extend(setting_rows(info.annotation, value, f"{key}."))
            continue
        rows.append({"setting": key, "type": _short(_type_text(info.annotation)), "default": _default_text(value),
                     "bounds": _bounds_text(info), "description": info.description or ""})  # fmt: skip
    return rows


def show_settings(scenario: Scenario) -> str:
    """The text of `vcloud show`: a header line, then one aligned row per setting."""
    rows = setting_rows(scenario.Settings)
    cols = ("setting", "type", "default", "bounds")
    widths = {c: max(len(c), *(len(r[c]) for r in rows)) for c in cols}
    lines = [f"{scenario.name}: {scenario.description}", ""]
    lines.append("  ".join(c.ljust(widths[c]) for c in cols) + "  description")
    for r in rows:
        lines.append("  ".join(r[c].ljust(widths[c]) for c in cols) + f"  {r['description']}".rstrip())
    return "\n".join(lines)


def _type_text(annotation: Any) -> str:
    origin = typing.get_origin(annotation)
    if origin is Literal:
        return "|".join(str(a) for a in typing.get_args(annotation))
    if origin in (typing.Union, types.UnionType):
        parts = [_type_text(a) for a in typing.get_args(annotation) if a is not type(None)]
        return "|".join(parts) + (" or null" if type(None) in typing.get_args(annotation) else "")
    if origin is typing.Annotated:
        return _type_text(typing.get_args(annotation)[0])
    if origin is not None:
        args = ", ".join(_type_text(a) for a in typing.get_args(annotation))
        return f"{origin.__name__}[{args}]"
    return getattr(annotation, "__name__", str(annotation))


def _default_text(value: Any) -> str:
    return _short(json.dumps(value, default=_plain))


def _plain(value: Any) -> Any:
    return value.model_dump(mode="json") if isinstance(value, BaseModel) else str(value)


def _short(text: str, width: int = 40) -> str:
    return text if len(text) <= width else text[: width - 3] + "..."


def _bounds_text(info: FieldInfo) -> str:
    parts = []
    for meta in info.metadata:
        for kind, attr, sign in _BOUNDS:
            if isinstance(meta, kind):
                parts.append(f"{sign} {number_text(getattr(meta, attr))}")
        if isinstance(meta, at.MinLen):
            parts.append(f"length >= {meta.min_length}")
        if isinstance(meta, at.MaxLen):
            parts.append(f"length <= {meta.max_length}")
    return ", ".join(parts)
