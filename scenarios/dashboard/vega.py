"""A Vega-Lite chart on the page whose data change in place: the widget (`VegaView`) and the bookkeeping of what the
browser holds (`LiveChart`).

Why Vega-Lite (specs written with Altair) and not Mesa's `make_plot_component` or Plotly: the page must work
offline, and the only chart libraries whose browser code ships in the installed packages are Vega, Vega-Lite and
vega-embed (solara-assets keeps copies at exact versions; Plotly's widget needs its own frontend, fetched from a
CDN). Vega gives hover (tooltips), zoom and pan (scale bindings), a chooser bound to a parameter and downloads (PNG,
SVG) with no code of ours; and a Vega view takes changesets, so a step sends the rows that changed. Solara's own
`FigureAltair` (and Mesa's Altair components, built on it) re-embed the whole chart on every change and load the
libraries by major version (`vega@5`), which the offline copies do not answer: hence this small widget.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Iterable
from typing import Any

import ipyvuetify as v
import pandas as pd
import traitlets

VEGA_LITE_SCHEMA = "https://vega.github.io/schema/vega-lite/v5.2.0.json"  # the version the page loads


class VegaView(v.VuetifyTemplate):
    """The browser side (`vega_view.vue`): `spec` embeds a chart, `patch` changes its datasets."""

    template_file = os.path.join(os.path.dirname(os.path.realpath(__file__)), "vega_view.vue")
    spec = traitlets.Dict().tag(sync=True)
    patch = traitlets.Dict().tag(sync=True)
    cdn = traitlets.Unicode(None, allow_none=True).tag(sync=True)
    on_resync = traitlets.Callable(None, allow_none=True)

    def vue_resync(self, seq: Any = None) -> None:
        """The view missed a patch (it was mounted late, or reloaded): send the whole chart again."""
        if self.on_resync is not None:
            self.on_resync(self)


def records(frame: pd.DataFrame) -> list[dict[str, Any]]:
    """Rows as JSON-ready dicts, NaN as null (JSON has no NaN); through pandas' C writer, ten times faster than
    `to_dict` on the heat map's thousands of cells."""
    if frame is None or not len(frame):
        return []
    return json.loads(frame.to_json(orient="records", double_precision=6))


class LiveChart:
    """One chart of the page: its spec (without data) and the datasets the browser holds, changed by `ops`.

    `set(name, frame)` replaces a dataset; `upsert(name, frame, field, since)` removes its rows whose `field` is at
    least `since` and inserts `frame` (a time series growing at its end: the last, still open bin and the new
    ones); `upsert_open(name, frame, field)` removes the rows flagged `field == True` (running attempts) and
    inserts `frame`. Each call records the change; `flush()` turns them into one patch (and a sequence number).

    The datasets as the browser holds them (`data`) are needed only for a first embed or a resync: the changes are
    applied to them when they are read (or every `MAX_PENDING` changes), not at each step, where joining a growing
    frame cost more than the rows sent."""

    MAX_PENDING = 64

    def __init__(self, spec: dict[str, Any], datasets: Iterable[str], file: str) -> None:
        self.base_spec = {**spec, "$schema": VEGA_LITE_SCHEMA}
        self.file = file
        self._data: dict[str, pd.DataFrame] = {n: pd.DataFrame() for n in datasets}
        self._pending: list[tuple[str, pd.DataFrame, str | None, Any]] = []  # (dataset, rows, field, value)
        self._filled: dict[str, bool | None] = dict.fromkeys(self._data, False)  # has rows (None: read to know)
        self.ops: list[dict[str, Any]] = []
        self.seq = 0
        self.patch: dict[str, Any] = {}
        self.signals: dict[str, Any] = {}
        self.rows_sent = 0  # rows sent in patches: what "incremental" saves is measurable
        self._embedded: dict[str, Any] | None = None

    @property
    def data(self) -> dict[str, pd.DataFrame]:
        """Each dataset as the browser holds it now."""
        for name, frame, field, value in self._pending:
            old = self._data[name]
            if field is None:
                kept = old.iloc[:0]
            elif value is True:
                kept = old[~old[field].astype(bool)] if len(old) else old
            else:
                kept = old[old[field] < value] if len(old) else old
            joined = pd.concat([kept, frame], ignore_index=True) if len(kept) else frame.reset_index(drop=True)
            self._data[name] = joined
        self._pending = []
        self._filled = {n: len(f) > 0 for n, f in self._data.items()}
        return self._data

    def _change(self, name: str, frame: pd.DataFrame, field: str | None, value: Any) -> None:
        self._pending.append((name, frame, field, value))
        self._filled[name] = True if len(frame) else (False if field is None else None)
        if len(self._pending) >= self.MAX_PENDING:
            _ = self.data

    def set(self, name: str, frame: pd.DataFrame) -> None:
        self._change(name, frame, None, None)
        self.ops.append({"name": name, "remove": "all", "rows": records(frame)})

    def upsert(self, name: str, frame: pd.DataFrame, field: str, since: float) -> None:
        self._change(name, frame, field, since)
        self.ops.append({"name": name, "remove": {"field": field, "value": since, "cmp": "ge"}, "rows": records(frame)})

    def upsert_open(self, name: str, frame: pd.DataFrame, field: str) -> None:
        self._change(name, frame, field, True)
        self.ops.append({"name": name, "remove": {"field": field, "value": True, "cmp": "eq"}, "rows": records(frame)})

    @property
    def has_data(self) -> bool:
        """Whether every dataset has rows: Vega lays out an empty chart with infinite extents (and a concatenation
        of charts never recovers), so a chart is embedded once it has data."""
        if None in self._filled.values():  # an upsert of no rows: whether rows are left is known by applying it
            _ = self.data
        return all(self._filled.values())

    def embed_spec(self) -> dict[str, Any]:
        """The spec a view embeds first: the chart as it was when first shown (then patches follow it)."""
        if self._embedded is None:
            self._embedded = self.full_spec()
        return self._embedded

    def full_spec(self) -> dict[str, Any]:
        """The spec with every dataset as the browser should hold it now (a first embed, or a resync)."""
        datasets = {n: records(f) for n, f in self.data.items()}
        usermeta = {"seq": self.seq, "file": self.file}
        return {**self.base_spec, "datasets": datasets, "usermeta": usermeta}

    def flush(self) -> dict[str, Any]:
        """The patch of the changes since the last flush (the same patch again when nothing changed)."""
        if self.ops or self.signals:
            self.rows_sent += sum(len(op["rows"]) for op in self.ops)
            self.patch = {"seq": self.seq + 1, "base": self.seq, "ops": self.ops, "signals": dict(self.signals)}
            self.seq += 1
            self.ops = []
        return self.patch


def resync_handler(chart: LiveChart) -> Callable[[VegaView], None]:
    """What a view that missed a patch gets: the chart as it is now."""

    def resync(widget: VegaView) -> None:
        widget.spec = chart.full_spec()

    return resync
