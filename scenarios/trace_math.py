"""Arithmetic on a run's per-VM trace table that both the tables (`inspect_run`) and the figures (`plots`) use."""

from __future__ import annotations

import numpy as np
import pandas as pd

CPU_STATES = ("usr", "sys", "steal", "iowait", "idle")


def trace_interval(trace: pd.DataFrame) -> float:
    """The sampling interval when the run's config is not at hand: the widest gap between samples.

    Samples fall at whole multiples of the interval while the clock runs, plus one when the layer above
    stops it: that last gap is shorter, never longer (the smallest gap, used before, was that short one)."""
    times = np.unique(trace["time_s"].to_numpy(np.float64))
    if len(times) > 1:
        return float(np.max(np.diff(times)))
    return float(times[0]) if len(times) else 1.0


def row_spans(times: np.ndarray, interval_s: float) -> np.ndarray:
    """Seconds each sample covers: the interval, or less for a sample between multiples (the last, taken when
    the clock stopped), which covers only the time since the multiple before it."""
    times = np.asarray(times, dtype=np.float64)
    k = np.round(times / interval_s)
    on_grid = np.isclose(times, k * interval_s, rtol=1e-9, atol=1e-9)
    return np.where(on_grid, interval_s, times - np.floor(times / interval_s) * interval_s)


def accounted_s(trace: pd.DataFrame) -> pd.Series:
    """Seconds of vCPU time accounted in each row (usr+sys+steal+iowait+idle: vcpus x interval while the
    clock ticks; less, or 0, in samples taken after the layer above stopped the clock)."""
    return sum(trace[f"{s}_s"].astype(np.float64) for s in CPU_STATES)
