"""The rows of `vcloud reproduce`'s report kept one file per entry, so that a rerun into the same DIR resumes.

As `vcloud sweep` keeps each finished run in DIR/runs/<run_id>.json, the report keeps each measured entry in
DIR/entries/NN.json the moment it is measured: its plot DIR/NN.png first, then the row, each written to a hidden
temporary sibling and renamed into place, so an interrupted or failed report leaves the finished entries whole
and nothing half-written. A row file holds the configuration it was measured under (`key`: quick or full scale,
seed, the entry's figure), as a sweep's run id holds its scenario, settings and seed: a rerun reuses a row only
under the same key (and with its plot there), and measures the entry again otherwise, saying why in one line. It also
holds the version and git commit that measured it (`provenance`; not part of the key: entries measured by another
commit are reused, and the rows file says which commit measured each).

The finished report is DIR/report.md for people and DIR/rows.json for programs (`write_rows`): every row without its
plot, with the commit that measured it, the report's configuration and the date. `python -m scenarios.report_docs
DIR` copies a full report's rows.json to docs/report-rows.json and rewrites each results page's current table from it.
"""

from __future__ import annotations

import datetime
import io
import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from scenarios import plots
from scenarios.outputs import atomic_write, clean_temp_files
from scenarios.provenance import provenance

if TYPE_CHECKING:
    from matplotlib.figure import Figure

Row = dict[str, str]


def row_key(quick: bool, seed: int, figure: str) -> dict[str, Any]:
    """What a row depends on besides the code: a row measured under another key is not this report's."""
    return {"quick": quick, "seed": seed, "figure": figure}


class RowStore:
    """DIR/entries/NN.json (key and row) and DIR/NN.png per measured entry; NN counts from 01."""

    def __init__(self, out: Path) -> None:
        self.out = out
        self.entries = out / "entries"

    def path(self, n: int) -> Path:
        return self.entries / f"{n:02d}.json"

    def png(self, n: int) -> str:
        return f"{n:02d}.png"

    def load(self, n: int, key: dict[str, Any]) -> Row | None:
        """Entry `n`'s row if it was measured under `key` and its plot is there; None (and a one-line note on
        stderr when a file was there but cannot be reused): measure it again."""
        path = self.path(n)
        if not path.is_file():
            return None
        try:
            stored = json.loads(path.read_text())
            old, row = stored["key"], stored["row"]
        except (OSError, ValueError, KeyError, TypeError):
            return _note(path, "unreadable")
        if old != key:
            return _note(path, f"measured {_describe(old)}, this report is {_describe(key)}")
        if not (self.out / self.png(n)).is_file():
            return _note(path, f"its plot {self.png(n)} is missing")
        return row

    def write(self, n: int, key: dict[str, Any], row: Row, fig: Figure) -> None:
        """Entry `n`'s plot, then its row: a row on disk always has its plot."""
        self.entries.mkdir(parents=True, exist_ok=True)
        png = io.BytesIO()
        plots.save(fig, png, fmt="png")
        atomic_write(self.out / self.png(n), png.getvalue())
        stored = {"key": key, "row": row, "provenance": provenance()}
        atomic_write(self.path(n), json.dumps(stored, indent=1).encode())

    def measured_by(self, n: int) -> str | None:
        """The git commit that measured entry `n` (None: unknown, an entry written before entries kept it)."""
        try:
            return json.loads(self.path(n).read_text())["provenance"]["git_commit"]
        except (OSError, ValueError, KeyError, TypeError):
            return None

    def write_rows(self, rows: list[tuple[int, Row]], quick: bool, seed: int) -> Path:
        """DIR/rows.json: the report for programs (docs/report-rows.json is a full report's)."""
        path = self.out / "rows.json"
        command = "vcloud reproduce --out DIR" + (" --quick" if quick else "")
        listed = [{"n": n, **{k: v for k, v in row.items() if k != "plot"}, "measured_by": self.measured_by(n)}
                  for n, row in rows]  # fmt: skip
        today = datetime.datetime.now(datetime.UTC).date().isoformat()
        data = {"quick": quick, "seed": seed, "command": command, "date": today, "written_by": provenance(),
                "rows": listed}  # fmt: skip
        atomic_write(path, (json.dumps(data, indent=1) + "\n").encode())
        return path

    def clean(self) -> None:
        """Remove the temporary files an interrupted report left (its finished rows stay)."""
        clean_temp_files(self.out)
        clean_temp_files(self.entries)


def _describe(key: Any) -> str:
    if not isinstance(key, dict):
        return "under an unknown configuration"
    scale = "quick" if key.get("quick") else "full scale"
    return f"{scale}, seed {key.get('seed')}, for {key.get('figure')!r}"


def _note(path: Path, why: str) -> None:
    print(f"vcloud: note: {path}: {why}: measuring it again", file=sys.stderr)
    return None
