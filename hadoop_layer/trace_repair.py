"""Real job histories carry anomalies; the Rumen reader repairs each by a stated rule and counts it by kind.

Host clocks skew against each other and the JobTracker's, attempts lose their result or their times, counters
overflow. Rumen's own consumer of traces, ZombieJob (hadoop-tools/hadoop-rumen), repairs rather than refuses, and
the rules below follow it where it says; where it says nothing the rule is ours, and says so. A trace is refused
only when no job is left to replay (`Repairs.nothing_left`).
"""

from __future__ import annotations

import statistics
from collections import Counter
from dataclasses import dataclass, field

LONG_MAX = 2**63 - 1  # Rumen's counters are Java longs: a larger value is not one Hadoop wrote
MADE_UP_RUNTIME_S = 0.1  # ZombieJob.sanitizeTaskRuntime: "Negative running time ... set default to 100ms"

RULES: dict[str, str] = {
    "attempt_ends_before_start": (
        "a map attempt runs 0.1 s (ZombieJob.sanitizeTaskRuntime: a negative running time becomes 100 ms); a reduce "
        "attempt runs the median of its job's well-formed reduce attempts of the same result (ZombieJob makes a "
        "reduce with startTime >= finishTime up from the job's recorded distribution: 'have seen "
        "startTime>finishTime'; the median instead of a random draw keeps the replay deterministic), else 0.1 s"
    ),
    "attempt_time_missing": (
        "an attempt without a start or finish time runs the median of its job's well-formed attempts of the same "
        "kind and result (ZombieJob makes such a runtime up from the job's distribution), else 0.1 s"
    ),
    "attempt_no_result": "the attempt is dropped (ZombieJob.sanitizeLoggedTaskAttempt drops an attempt with no result)",
    "task_before_submit": (
        "ours: the attempt keeps its runtime (both its ends come from one TaskTracker's clock); its start is not "
        "used for the job's wait or setup gap, which are then unknown (host clocks skewed against the JobTracker's)"
    ),
    "job_times_skewed": (
        "ours: a job's finish or launch before its submit leaves that duration unknown: the job replays but is "
        "not compared"
    ),
    "job_no_submit_time": "ours: a job without a (non-negative) submitTime cannot be placed in time: it is left out",
    "counter_negative": (
        "a counter below -1 (Rumen's 'unknown') is read as unknown, the next source is tried, else 0 (ZombieJob: "
        "'InputBytes for task ... is not defined' -> 0)"
    ),
    "counter_out_of_range": (
        "a counter that is not a whole number up to 2**63 - 1 (a Java long, as Rumen writes it) is read as unknown, "
        "the next source is tried, else 0"
    ),
    "job_conf_unreadable": "a recorded knob no Hadoop could have run with is ignored: the cluster's hadoop.* holds",
}


@dataclass
class Repairs:
    """Counts of the anomalies repaired, by kind, with the first place each was seen (for the one stderr line)."""

    counts: Counter[str] = field(default_factory=Counter)
    first: dict[str, str] = field(default_factory=dict)

    def note(self, kind: str, where: str) -> None:
        if kind not in RULES:
            raise KeyError(f"unknown anomaly kind {kind!r}")
        self.counts[kind] += 1
        self.first.setdefault(kind, where)

    def __bool__(self) -> bool:
        return bool(self.counts)

    def summary(self) -> dict[str, dict[str, object]]:
        """`summary.json`'s `anomalies_repaired`: per kind, how many, the rule and the first one seen."""
        return {k: {"count": n, "rule": RULES[k], "first": self.first[k]} for k, n in sorted(self.counts.items())}

    def describe(self) -> str:
        """Every kind with its count and first place, on one line."""
        return "; ".join(f"{n} {k} (first: {self.first[k]})" for k, n in sorted(self.counts.items()))

    def line(self, fname: str) -> str:
        """The one stderr line."""
        total = sum(self.counts.values())
        return f"{fname}: repaired {total} anomal{'y' if total == 1 else 'ies'} (rules in summary.json): " + (
            self.describe()
        )


def made_up_runtime_s(good: list[float]) -> float:
    """A runtime for an attempt whose own is unusable: the median of the job's well-formed ones, else 0.1 s."""
    return statistics.median(good) if good else MADE_UP_RUNTIME_S


def counter(value: object, where: str, key: str, repairs: Repairs) -> float | None:
    """A byte or CPU counter that is known (>= 0) and in range, else None (unknown); anomalies are counted.
    Rumen writes -1 for unknown; anything else below, or above a Java long, or fractional, is an anomaly."""
    if value is None or isinstance(value, bool) or not isinstance(value, int | float):
        return None  # a wrong type was refused before (Rumen reader)
    if value == -1:
        return None
    if value < -1:
        repairs.note("counter_negative", f"{where} {key}={value!r}")
        return None
    if value > LONG_MAX or (isinstance(value, float) and not value.is_integer()):
        repairs.note("counter_out_of_range", f"{where} {key}={value!r}")
        return None
    return float(value)
