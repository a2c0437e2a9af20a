"""`--set KEY=VALUE` overrides, validated once at the edge by the scenario's pydantic model.

Keys are dotted (`drs.period_s=60` sets field `period_s` of the nested `drs` settings). Values are read
as JSON when they parse (numbers, true/false, lists), else as plain strings; a setting whose values are names
(`drs.divvy=6.7`, `hadoop.heartbeat_formula=1.0`, a path) takes the text as written. One argument may hold several
pairs, split where a new `KEY=` begins, so a value may hold spaces (`trace=/my traces/a.tsv`). Unknown keys (with
the nearest known ones) and bad values, `true` given for a number among them, are refused with one line that
names the key and the value.
"""

from __future__ import annotations

import difflib
import json
import math
import re
import types
import typing
import warnings
from typing import Any, Literal

from pydantic import BaseModel, ValidationError

from scenarios.limits import number_text


class SettingsError(ValueError):
    """A bad setting: the message is one line naming the key and the value."""


class RenamedSetting(FutureWarning):
    """An old name of a settings group was used: it still works, for now."""


def renamed_groups(renamed: dict[str, str], tree: dict[str, Any]) -> dict[str, Any]:
    """`tree` (nested settings) with the groups of old names moved to their new names, one warning line each;
    what is given under both names is merged, the new name's values winning."""
    for old, new in renamed.items():
        if old not in tree:
            continue
        warnings.warn(f"settings: {old}.* is now {new}.* (the old name still works, for now)", RenamedSetting,
                      stacklevel=3)  # fmt: skip
        tree = dict(tree)
        value, current = tree.pop(old), tree.get(new)
        tree[new] = {**value, **current} if isinstance(value, dict) and isinstance(current, dict) else current or value
    return tree


# a pair starts where whitespace is followed by KEY= (a dotted name): "a=1 trace=/my dir/x.tsv" is two pairs
_NEXT_PAIR = re.compile(r"\s+(?=[A-Za-z_][\w.]*=)")


def parse_pairs(pairs: list[str], model: type[BaseModel] | None = None) -> dict[str, Any]:
    """['a=1', 'drs.period_s=60 b=x'] -> {'a': 1, 'drs.period_s': 60, 'b': 'x'} (one arg may hold several).
    With `model`, a setting whose values are text (a name, a path) keeps the text as written: `drs.divvy=6.7` is
    the choice '6.7', not the number 6.7."""
    out: dict[str, Any] = {}
    for arg in pairs:
        for pair in _NEXT_PAIR.split(arg.strip()):
            key, sep, raw = pair.partition("=")
            if not sep or not key:
                raise SettingsError(f"setting {pair!r}: expected KEY=VALUE")
            annotation = field_annotation(model, key) if model is not None else None
            out[key] = raw if _takes_text(annotation) else _parse_value(raw)
    return out


def _parse_value(raw: str) -> Any:
    try:
        return json.loads(raw)
    except json.JSONDecodeError:
        return raw


def field_annotation(model: type[BaseModel], dotted: str) -> Any:
    """The type of the setting `dotted` in `model` (through its groups of settings); None if there is none."""
    *parents, leaf = dotted.split(".")
    for name in parents:
        field = model.model_fields.get(name)
        sub = field.annotation if field is not None else None
        if not (isinstance(sub, type) and issubclass(sub, BaseModel)):
            return None
        model = sub
    field = model.model_fields.get(leaf)
    return field.annotation if field is not None else None


def _members(annotation: Any) -> list[Any]:
    """The types (and literal values) a setting of this type accepts."""
    origin = typing.get_origin(annotation)
    if origin in (typing.Union, types.UnionType):
        return [m for a in typing.get_args(annotation) for m in _members(a)]
    if origin is typing.Annotated:
        return _members(typing.get_args(annotation)[0])
    if origin is Literal:
        return [type(a) for a in typing.get_args(annotation)]
    return [origin or annotation]


def _takes_text(annotation: Any) -> bool:
    """Only text (a str or a choice of names): `--set` gives such a setting its value as written."""
    members = [m for m in _members(annotation) if m is not type(None)]
    return bool(members) and all(m is str for m in members)


def setting_keys(model: type[BaseModel], prefix: str = "") -> list[str]:
    """Every setting of `model`, dotted as `--set` takes it."""
    keys = []
    for name, info in model.model_fields.items():
        sub = info.annotation
        if isinstance(sub, type) and issubclass(sub, BaseModel):
            keys += setting_keys(sub, f"{prefix}{name}.")
        else:
            keys.append(f"{prefix}{name}")
    return keys


def did_you_mean(key: str, known: list[str]) -> str:
    """' (did you mean fair.node_delay_s?)' for a near miss, else ''."""
    close = difflib.get_close_matches(key, known, n=2, cutoff=0.75)
    if not close:  # a group's name may be missing or wrong: compare the last part too
        leaf = key.rpartition(".")[2]
        close = [k for k in known if difflib.get_close_matches(leaf, [k.rpartition(".")[2]], cutoff=0.8)][:2]
    return f" (did you mean {' or '.join(close)}?)" if close else ""


def check_not_bool(model: type[BaseModel], flat: dict[str, Any]) -> None:
    """JSON's true/false is no number: pydantic would read `pipeline_rounds=true` as 1."""
    for key, value in flat.items():
        annotation = field_annotation(model, key)
        if annotation is None:  # unknown (refused later by name) or inside a table of settings
            continue
        values = value if isinstance(value, list) else [value]
        if isinstance(value, list) and typing.get_origin(annotation) is list:
            annotation = typing.get_args(annotation)[0]
        members = _members(annotation)
        if bool not in members and typing.Any not in members and any(isinstance(v, bool) for v in values):
            what = "a number" if {int, float} & set(members) else "not true/false"
            raise SettingsError(f"setting {key}={json.dumps(value)}: expected {what}, got true/false")


def nest(flat: dict[str, Any]) -> dict[str, Any]:
    """{'drs.period_s': 60} -> {'drs': {'period_s': 60}}."""
    tree: dict[str, Any] = {}
    for key, value in flat.items():
        node = tree
        *parents, leaf = key.split(".")
        for p in parents:
            node = node.setdefault(p, {})
            if not isinstance(node, dict):
                raise SettingsError(f"setting {key}={value!r}: {p} is not a group of settings")
        node[leaf] = value
    return tree


def flatten(tree: dict[str, Any], prefix: str = "") -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in tree.items():
        if isinstance(value, dict):
            out.update(flatten(value, f"{prefix}{key}."))
        else:
            out[f"{prefix}{key}"] = value
    return out


def check_finite(flat: dict[str, Any]) -> None:
    """NaN and infinities (JSON's NaN/Infinity, which `--set` and Python's json accept) are no setting's value:
    refused here, by name, before pydantic compares them with bounds (`scale=nan: ... less than or equal to 10`)."""
    for key, value in flat.items():
        for v in value if isinstance(value, list) else [value]:
            if (isinstance(v, float) and not math.isfinite(v)) or (isinstance(v, str) and _non_finite_text(v)):
                raise SettingsError(f"setting {key}={value!r}: must be a finite number")


def _non_finite_text(text: str) -> bool:
    """'nan', 'inf', '-Infinity': strings pydantic would read as a non-finite float."""
    try:
        return not math.isfinite(float(text))
    except ValueError:
        return False


def _merge(model: type[BaseModel], base: dict[str, Any], over: dict[str, Any], defaults: BaseModel | None) -> dict:
    """`over` on top of `base`: a group of settings (a nested model) is merged key by key, starting from the group
    in `base` or else from the scenario's default group (`defaults`); any other value (a number, a list, a dict
    such as a table of queues) is replaced whole. Keys not given stay unset (scenarios read `model_fields_set`)."""
    out = dict(base)
    for key, value in over.items():
        field = model.model_fields.get(key)
        sub = field.annotation if field is not None else None
        if isinstance(value, dict) and isinstance(sub, type) and issubclass(sub, BaseModel):
            default = getattr(defaults, key, None) if defaults is not None else None
            start = out.get(key)
            if not isinstance(start, dict):
                start = default.model_dump() if isinstance(default, BaseModel) else {}
            out[key] = _merge(sub, start, value, default)
        else:
            out[key] = value
    return out


def _defaults(model: type[BaseModel]) -> BaseModel | None:
    """The scenario's own defaults (its groups of settings as it sets them), if it has defaults for everything."""
    try:
        return model()
    except ValidationError:
        return None


def validate[S: BaseModel](model: type[S], flat: dict[str, Any], base: dict[str, Any] | None = None) -> S:
    """Build `model` from `base` (a full settings dict; default: the model's own defaults) updated by the dotted
    overrides in `flat`. Starting from the defaults matters for nested settings: `hadoop.io_sort_mb=150` changes
    one field of the scenario's Hadoop (4 map slots on the FlexSlot testbed), not of stock Hadoop's defaults."""
    if not isinstance(base or {}, dict):
        raise SettingsError(f"settings: expected an object of settings, got {base!r:.40}")
    check_finite({**flatten(base or {}), **flat})
    check_not_bool(model, {**flatten(base or {}), **flat})
    renamed = getattr(model, "renamed", {})
    over = renamed_groups(renamed, nest(flat))
    base = renamed_groups(renamed, base) if base else base
    groups = [k for k, v in over.items() if isinstance(v, dict)]
    tree = _merge(model, base or {}, over, _defaults(model) if groups and not base else None)
    try:
        return model.model_validate(tree)
    except ValidationError as exc:
        err = exc.errors()[0]
        key = ".".join(str(p) for p in err["loc"])
        value = flat.get(key, err.get("input"))
        shown = repr(value) if len(repr(value)) <= 80 else f"{repr(value)[:60]}... ({len(repr(value))} characters)"
        if err["type"] == "extra_forbidden":
            raise SettingsError(f"unknown setting {key}={shown}{did_you_mean(key, setting_keys(model))}") from None
        message = _message(err)
        if not key or (err["type"] == "value_error" and isinstance(value, dict)):  # a rule over several settings
            raise SettingsError(f"settings: {message}") from None
        raise SettingsError(f"setting {key}={shown}: {message}") from None


_BOUND_WORDS = {"greater_than": ">", "greater_than_equal": ">=", "less_than": "<", "less_than_equal": "<="}


def _message(err: dict[str, Any]) -> str:
    """pydantic's message, shorter for bounds ('must be <= 10', with the bound as `vcloud show` prints it)."""
    sign = _BOUND_WORDS.get(err["type"])
    if sign is not None:
        bound = next(iter(err.get("ctx", {}).values()), None)
        if isinstance(bound, int | float):
            return f"must be {sign} {number_text(bound)}"
    return err["msg"].removeprefix("Value error, ")
