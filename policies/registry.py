"""A registry line: what a scenario calls a policy, the settings model of its knobs, and how to make it.

The naming rule: a policy's knobs are the settings group named after its registry key (`--set fair.node_delay_s=15`,
`--set flexslot.alpha=0.3`); a variant that shares another entry's knobs names that group (`flexslot-unlimited`
uses `flexslot.*`). Scenario settings derive their choices and groups from the registries
(scenarios/base.py `policy_fields`), so a new policy is one module plus one line here.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal

from pydantic import BaseModel


@dataclass(frozen=True)
class Entry:
    """`make(knobs, *args)` builds the policy from its settings group (None if it has no `settings`); allocators
    also get the model's random generator."""

    make: Callable[..., Any]
    settings: type[BaseModel] | None = None
    group: str | None = None  # the settings group, when shared with another entry


def group_of(name: str, entry: Entry) -> str | None:
    """The settings group an entry reads: its own name (dashes as underscores) unless it shares another's."""
    if entry.settings is None:
        return None
    return entry.group or name.replace("-", "_")


def choices(registry: dict[str, Entry]) -> Any:
    """The registry's names as a `Literal` type, for a settings field that picks one."""
    return Literal[tuple(registry)]


def build(registry: dict[str, Entry], name: str, settings: Any, *args: Any) -> Any:
    """Make the policy `name` with its knobs read from `settings` (a scenario's settings: one group per entry)."""
    entry = registry[name]
    group = group_of(name, entry)
    return entry.make(getattr(settings, group) if group else None, *args)
