"""What the trace readers return (`TraceJob`), their one error (`TraceError`) and the file intake they share.

Sizes are in MB of 2**20 bytes, the unit of Hadoop's 64 MB block. The intake takes gzip'd files as they are and
skips comments before (and between) Rumen's JSON objects: Apache ships its data files with a licence header, and
Rumen reads its traces with Jackson, whose `ALLOW_COMMENTS` and `ALLOW_YAML_COMMENTS` features read `/* */`, `//`
and `#` comments. Whether a given Rumen build enables them is not stated in its source; skipping them is our rule.
"""

from __future__ import annotations

import gzip
import zlib
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from hadoop_layer.trace_conf import JobConf

MB = float(2**20)


class TraceError(ValueError):
    """A malformed trace record; the message is one line naming the file, the row or job, the field and value."""


Retry = tuple[str, float]  # a recorded attempt that did not succeed: ("FAILED" | "KILLED", runtime s)


@dataclass(frozen=True)
class TraceJob:
    """One job arrival. `map_input_mb` sums to `input_mb`; durations and hosts exist only for Rumen traces.

    Per-task tuples (`map_*`, `reduce_*`) follow the job's successful tasks in file order. Rumen extras:
    `outcome` (SUCCESS, FAILED, KILLED), the recorded `duration_s` (finish - submit; None when not recorded),
    `init_s` (launch - submit: the JobTracker's initialization), the setup and cleanup attempts' runtimes, the
    CPU counters (s; None when absent), a reduce's time after its shuffle (finish - shuffleFinished) and its
    shuffle's (shuffleFinished - start, Rumen's `getShuffleRuntime`; None when unknown or skewed), the hosts
    holding each map's split (`preferredLocations`), the unsuccessful attempts that ran before each success
    (`*_retries`), and the tasks that never succeeded (`unfinished_*`: their attempts). `head_s` (launch to
    the first map or reduce attempt's start) and `tail_s` (the last attempt's end to the job's finish) time the
    job setup and commit that MapReduce 2 runs inside its ApplicationMaster, not as tasks; None when unknown or
    negative (host clocks skewed against the JobTracker's). `wait_s`: submit to the first map or reduce
    attempt's start (the queueing a shared cluster adds, which the trace does not explain; None when unknown).
    `conf`: the knobs of the job's recorded configuration (`jobProperties`) the emulator has. `map_start_s` and
    `reduce_start_s`: per task as the replay makes them (the successful tasks, then those that never succeeded),
    the recorded starts after the submit (s) of the attempts the replay launches, in order (the unsuccessful
    ones before the success, then it; None where unknown or before the submit: skewed).
    `attempt_windows_s`: every attempt of the job (maps, reduces, setup, cleanup) with both times known, as
    (start, finish) s after the submit, those that start before it left out.
    """

    name: str
    submit_s: float
    input_mb: float
    shuffle_mb: float
    output_mb: float
    maps: int
    reduces: int
    map_input_mb: tuple[float, ...]
    map_durations_s: tuple[float, ...] | None = None
    reduce_durations_s: tuple[float, ...] | None = None
    map_hosts: tuple[str, ...] | None = None
    source: str = ""
    outcome: str = "SUCCESS"
    duration_s: float | None = None
    init_s: float | None = None
    setup_s: float | None = None
    cleanup_s: float | None = None
    map_cpu_s: tuple[float | None, ...] | None = None
    reduce_cpu_s: tuple[float | None, ...] | None = None
    reduce_after_shuffle_s: tuple[float | None, ...] | None = None
    reduce_shuffle_s: tuple[float | None, ...] | None = None
    reduce_hosts: tuple[str, ...] | None = None
    map_replicas: tuple[tuple[str, ...], ...] | None = None
    map_retries: tuple[tuple[Retry, ...], ...] | None = None
    reduce_retries: tuple[tuple[Retry, ...], ...] | None = None
    unfinished_maps: tuple[tuple[Retry, ...], ...] = ()
    unfinished_reduces: tuple[tuple[Retry, ...], ...] = ()
    head_s: float | None = None
    tail_s: float | None = None
    wait_s: float | None = None
    conf: JobConf = field(default_factory=JobConf)
    map_start_s: tuple[tuple[float | None, ...], ...] = ()
    reduce_start_s: tuple[tuple[float | None, ...], ...] = ()
    attempt_windows_s: tuple[tuple[float, float], ...] = ()


def fail(where: str, field_name: str, value: object, problem: str) -> TraceError:
    """The one-line error: where, the field and its value (repr, so a newline in it stays escaped), the problem."""
    shown = repr(value)
    return TraceError(f"{where}: field {field_name}={shown if len(shown) <= 60 else shown[:57] + '...'} {problem}")


def list_field(obj: Mapping[str, Any], key: str, where: str) -> list[Any]:
    """A JSON object's list field: [] if absent or null; one line naming the field if it is not a list."""
    value = obj.get(key)
    if value is None:
        return []
    if not isinstance(value, list):
        raise fail(where, key, value, "is not a list")
    return value


def read_text(path: str | Path) -> str:
    """A trace file's text, gunzipped when it starts with gzip's magic bytes; one-line `TraceError`s otherwise."""
    fname = Path(path).name
    try:
        data = Path(path).read_bytes()
    except OSError as exc:
        raise TraceError(f"{fname}: cannot read: {exc.strerror or exc}") from None
    if data[:2] == b"\x1f\x8b":
        try:
            data = gzip.decompress(data)
        except (EOFError, OSError, zlib.error) as exc:
            raise TraceError(f"{fname}: gzip data is truncated or corrupt ({exc})") from None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        byte = data[exc.start]
        raise TraceError(
            f"{fname}: not UTF-8 text (byte 0x{byte:02x} at offset {exc.start}): not a SWIM or Rumen trace"
        ) from None


def skip_blank_and_comments(text: str, pos: int = 0) -> int:
    """The position of the next character that is neither white space nor inside a comment (`/* */`, `//` or `#`
    to the end of the line); len(text) at the end. An unclosed `/*` runs to the end, as nothing follows it."""
    n = len(text)
    while pos < n:
        c = text[pos]
        if c.isspace():
            pos += 1
        elif text.startswith("/*", pos):
            end = text.find("*/", pos + 2)
            pos = n if end < 0 else end + 2
        elif text.startswith("//", pos) or c == "#":
            end = text.find("\n", pos)
            pos = n if end < 0 else end + 1
        else:
            break
    return pos
