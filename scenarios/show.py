"""`vcloud show SCENARIO [--group NAME] [KEY]`: every setting of a scenario (dotted, as `--set` takes it) with its
default, type or whole list of choices, bounds and description, read from the scenario's pydantic model so it can
never drift from what `validate` accepts; in lines of at most 120 columns. Rules over several settings are in the
models' validators and docs/model.md ("Bounds")."""

from __future__ import annotations

import json
import textwrap
import types
import typing
from typing import Any, Literal

import annotated_types as at
from pydantic import BaseModel
from pydantic.fields import FieldInfo

from scenarios.base import POLICY_GROUPS, Scenario
from scenarios.limits import number_text
from scenarios.settings import SettingsError, did_you_mean

WIDTH = 120
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
        rows.append({"setting": key, "type": _type_text(info.annotation), "default": _default_text(value),
                     "bounds": _bounds_text(info), "description": _description(model, name)})  # fmt: skip
    return rows


def _description(model: type[BaseModel], name: str) -> str:
    """The field's description, or the one of the class it overrides (a scenario that changes only a default
    keeps the testbed's words)."""
    for cls in model.__mro__:
        info = getattr(cls, "model_fields", {}).get(name) if isinstance(cls, type) else None
        if info is not None and info.description:
            return info.description
    return ""


def show_settings(scenario: Scenario, group: str | None = None, key: str | None = None) -> str:
    """The text of `vcloud show`: the scenario's line, then each setting (of `group`, or the one `key`, or of the
    group `key` names) as `KEY = DEFAULT  (type, bounds)` and its description beneath, grouped by settings group."""
    rows = setting_rows(scenario.Settings)
    rows.sort(key=lambda r: "." in r["setting"])  # the top level first, then the groups in the model's order
    groups = sorted({r["setting"].split(".")[0] for r in rows if "." in r["setting"]})
    wanted = rows
    if group is not None:
        if group not in groups:
            raise SettingsError(f"--group {group}: no such group of settings (groups: {', '.join(groups)})")
        wanted = [r for r in wanted if r["setting"].startswith(f"{group}.")]
    if key is not None:
        chosen = [r for r in wanted if r["setting"] == key or r["setting"].startswith(f"{key}.")]
        if not chosen:
            known = [r["setting"] for r in wanted]
            raise SettingsError(f"no setting {key} in {scenario.name}{did_you_mean(key, known)}")
        wanted = chosen
    lines = textwrap.wrap(f"{scenario.name}: {scenario.description}", WIDTH, subsequent_indent="    ")
    if group is None and key is None:
        lines += textwrap.wrap(f"groups (--group NAME): {', '.join(groups)}", WIDTH, subsequent_indent="    ")
    heading = None
    for r in wanted:
        here = r["setting"].split(".")[0] if "." in r["setting"] else ""
        if here != heading:
            heading = here
            lines += ["", f"[{here}]{_used_when(here)}" if here else "[top level]"]
        lines += _setting_lines(r)
    return "\n".join(lines)


def _used_when(group: str) -> str:
    """' read only with allocator=drs' for a policy's group of knobs."""
    if group not in POLICY_GROUPS:
        return ""
    field, names = POLICY_GROUPS[group]
    return f" read only with {' or '.join(f'{field}={n}' for n in sorted(names))}"


def _setting_lines(row: dict[str, str]) -> list[str]:
    kind = ", ".join(p for p in (row["type"], row["bounds"]) if p)
    wrap = textwrap.TextWrapper(WIDTH, break_on_hyphens=False)
    wrap.subsequent_indent = "        "
    head = wrap.wrap(f"{row['setting']} = {row['default']}  ({kind})")
    wrap.initial_indent = wrap.subsequent_indent = "    "
    return head + wrap.wrap(row["description"])


def _type_text(annotation: Any) -> str:
    origin = typing.get_origin(annotation)
    if origin is Literal:
        return "one of " + " | ".join(str(a) for a in typing.get_args(annotation))
    if origin in (typing.Union, types.UnionType):
        parts = [_type_text(a) for a in typing.get_args(annotation) if a is not type(None)]
        return " | ".join(parts) + (" or null" if type(None) in typing.get_args(annotation) else "")
    if origin is typing.Annotated:
        return _type_text(typing.get_args(annotation)[0])
    if origin is not None:
        args = ", ".join(_type_text(a) for a in typing.get_args(annotation))
        return f"{origin.__name__}[{args}]"
    return getattr(annotation, "__name__", str(annotation))


def _default_text(value: Any) -> str:
    return json.dumps(value, default=_plain)


def _plain(value: Any) -> Any:
    return value.model_dump(mode="json") if isinstance(value, BaseModel) else str(value)


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
