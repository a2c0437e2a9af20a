"""Rows of a per-VM or per-node figure: names as people write them, and consecutive names grouped when a cluster
has more than fit on a page. Shared by the dashboard (`scenarios.dashboard.views`) and the paper figures
(`scenarios.plots`), so both name and group a cluster the same way.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

import numpy as np


def clean_names(names: list[str]) -> list[str]:
    """Host and VM names as people write them: Rumen's regex escapes dropped (`cluster50213\\.dom\\.com`), and a
    domain that every name shares cut (`cluster50213`). Each distinct name is cleaned once (a column of attempts
    repeats its nodes' names thousands of times)."""
    distinct = list(dict.fromkeys(str(n) for n in names))
    plain = [re.sub(r"\\(.)", r"\1", n) for n in distinct]
    if len(names) > 1 and all("." in n for n in plain) and len({n[n.index(".") :] for n in plain}) == 1:
        plain = [n[: n.index(".")] for n in plain]
    cleaned = dict(zip(distinct, plain, strict=True))
    return [cleaned[str(n)] for n in names]


@dataclass(frozen=True)
class Groups:
    """Rows of a per-VM (or per-node) chart: `of[i]` is the row of name i, `labels` the rows' names."""

    of: np.ndarray
    labels: list[str]

    @property
    def grouped(self) -> bool:
        return len(self.labels) < len(self.of)


def group_rows(names: list[str], max_rows: int) -> Groups:
    """One row per name when they fit, else consecutive names in groups of equal size ("a … b (k)")."""
    clean = clean_names(names)
    n = len(clean)
    if n <= max_rows:
        return Groups(np.arange(n), clean)
    size = math.ceil(n / max_rows)
    of = np.arange(n) // size
    labels = [f"{clean[i]} … {clean[min(i + size, n) - 1]} ({min(size, n - i)})" for i in range(0, n, size)]
    return Groups(of, labels)
