"""`Column`: an object's attribute backed by one cell of an array, the one idiom for numbers kept in tables.

Agents and records hold their row; their numbers live in arrays (DESIGN.md 3): hosts' and VMs' in the model's
tables (vcloud/agents.py). The layers above declare theirs the same way (their agents' counters in their own
arrays, their records of what has ended), so the numbers an object exposes are visible to readers, grep and IDEs.
"""

from __future__ import annotations

from collections.abc import Callable
from operator import attrgetter, methodcaller
from typing import Any


class Column[T]:
    """The attribute `name` of an object as `obj.<table>.<column>[obj.<at>]`, a plain Python value.

    `table`: the dotted path from the object to what holds the column ("model.hosts": the model's host table;
    "ended": a record's columns); `column`: the column's name there (the attribute's by default), a field of
    it if `table` is a structured array (`fields`); `at`: the object's attribute that holds its row; `cell`: the
    entry of a two-dimensional column's row (`clock.slots[node, 0]`). `convert` makes the
    reader's value of the NumPy scalar (default: the declared type's, `Column[float]` reads a float, or `.item()`).
    Read-only unless `writable`: the tables' owners write them, an object only the numbers it owns. With `mirror`
    the object owns the number and keeps it as `_<name>` too, read at an attribute's cost, the cell a copy for
    compiled code (for a number read far more often than written: a cell costs ten times an attribute's read)."""

    def __init__(
        self,
        table: str,
        *,
        column: str | None = None,
        at: str = "row",
        cell: int | None = None,
        fields: bool = False,
        convert: Callable[[Any], T] | None = None,
        writable: bool = False,
        mirror: bool = False,
    ) -> None:
        self.table, self.column, self.at, self.cell = table, column, at, cell
        self.fields, self.convert, self.writable, self.mirror = fields, convert, writable or mirror, mirror
        self.kept: str | None = None

    def __set_name__(self, owner: type, name: str) -> None:
        self.name = name
        if self.convert is None:  # `Column[float]` reads float(x): NumPy's x.item() takes ten times longer
            of = getattr(self, "__orig_class__", None)
            kind = of.__args__[0] if of is not None else None
            self.convert = kind if kind in (float, int, bool) else methodcaller("item")
        column = self.column or name
        if self.fields:
            table = attrgetter(self.table)
            self._array: Callable[[Any], Any] = lambda obj: table(obj)[column]
        else:
            self._array = attrgetter(f"{self.table}.{column}")
        self._row = attrgetter(self.at)
        if self.mirror:
            self.kept = f"_{name}"

    def __get__(self, obj: Any, owner: type | None = None) -> T:
        if obj is None:
            return self  # type: ignore[return-value]
        if self.kept is not None:
            return getattr(obj, self.kept)
        array, row = self._array(obj), self._row(obj)
        return self.convert(array[row] if self.cell is None else array[row, self.cell])

    def __set__(self, obj: Any, value: T) -> None:
        if not self.writable:
            raise AttributeError(f"{type(obj).__name__}.{self.name} is read from its table ({self.table})")
        if self.kept is not None:
            setattr(obj, self.kept, value)
        row = self._row(obj)
        self._array(obj)[row if self.cell is None else (row, self.cell)] = value
