"""Public workload traces (SWIM TSV, Hadoop Rumen JSON) turned into job arrivals for the emulator.

Sizes are in MB of 2**20 bytes, the unit of Hadoop's 64 MB block. Readers return jobs in file order and
validate everything first: a malformed row or object raises `TraceError` and nothing partial is returned.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

MB = float(2**20)
SWIM_BYTES_PER_REDUCE = 64 * 2**20  # SWIM README: "amount of data per reduce task ... e.g., 67108864"
SWIM_MIN_SIDE_BYTES = 1024  # GenerateReplayScript raises shuffle and output below 1 KB to 1 KB before counting reduces
MAX_MAPS_PER_JOB = 200_000  # a job's maps are objects: a row of 10**18 bytes would fill the machine's memory


class TraceError(ValueError):
    """A malformed trace record; the message is one line naming the file, the row or job, the field and value."""


@dataclass(frozen=True)
class TraceJob:
    """One job arrival. `map_input_mb` sums to `input_mb`; durations and hosts exist only for Rumen traces."""

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


def _fail(where: str, field: str, value: object, problem: str) -> TraceError:
    shown = repr(value)  # repr escapes newlines, so the message stays on one line
    return TraceError(f"{where}: field {field}={shown if len(shown) <= 60 else shown[:57] + '...'} {problem}")


def _swim_number(text: str, where: str, field: str, *, whole: bool) -> float | int:
    """A finite, non-negative number; byte counts must be whole (SWIM parses them with Long.parseLong)."""
    try:
        value = float(text)
    except ValueError:
        raise _fail(where, field, text, "is not a number") from None
    if not math.isfinite(value):
        raise _fail(where, field, text, "is not a finite number")
    if value < 0:
        raise _fail(where, field, text, "is negative")
    if not whole:
        return value
    if not value.is_integer():
        raise _fail(where, field, text, "is not a whole number of bytes")
    return int(text) if text.strip().isdecimal() else int(value)


def _text_line(data: bytes, where: str) -> str:
    """UTF-8 text, or a `TraceError` naming the file and line (a binary file given as a trace)."""
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        at = where if " line " in where else f"{where} line {line}"
        raise TraceError(f"{at}: not UTF-8 text (byte {data[exc.start]:#04x}): a binary file?") from None


def read_swim(
    path: str | Path,
    *,
    original_nodes: int = 600,
    emulated_nodes: int = 30,
    block_mb: float = 64.0,
    bytes_per_reduce: int = SWIM_BYTES_PER_REDUCE,
    swim_reduce_cap: bool = True,
) -> list[TraceJob]:
    """Read a SWIM workload (`jobN, submit_s, gap_s, map_input_bytes, shuffle_bytes, reduce_output_bytes[, path]`).

    Scaling follows SWIM's GenerateReplayScript.printOutput (SWIMProjectUCB/SWIM, workloadSuite/): every byte
    count becomes `bytes * emulated_nodes // original_nodes` (Java long arithmetic, so floored); submit times
    are not scaled ("Currently not done" there). The 2009 Facebook file comes from 600 machines, the 2010 one
    from 3,000: pass `original_nodes=3000` for it. Reduces, when the row has shuffle bytes, are SWIM's
    `Math.round((shuffle + output) / bytes_per_reduce)` on the scaled bytes, each raised to 1 KB first, at
    least 1, and (with `swim_reduce_cap`) SWIM's quirk `emulated_nodes // 5` when that exceeds
    `emulated_nodes` (kept at least 1); `bytes_per_reduce` is a SWIM command-line argument, defaulted to the
    64 MiB its README suggests. Deliberate departures, to keep the trace's sizes rather than the replay
    harness's: a row with shuffle 0 is map-only (SWIM gives every job a reduce via its 1 KB floor), and input
    is not raised to one 64 MB partition; maps are ceil(input / block_mb), full blocks then the remainder,
    and a job with no input gets one map of 0 MB (FileInputFormat gives a zero-length file one empty split,
    and SWIM always runs at least one map).
    """
    if original_nodes <= 0 or emulated_nodes <= 0 or block_mb <= 0 or bytes_per_reduce <= 0:
        raise ValueError("original_nodes, emulated_nodes, block_mb and bytes_per_reduce must be positive")
    fname = Path(path).name
    jobs: list[TraceJob] = []
    with open(path, "rb") as handle:
        for lineno, data in enumerate(handle, start=1):
            where = f"{fname} line {lineno}"
            line = _text_line(data, where)
            if not line.strip():
                continue
            cols = line.rstrip("\r\n").split("\t")
            if len(cols) not in (6, 7):
                raise TraceError(f"{where}: expected 6 or 7 tab-separated fields, got {len(cols)}")
            name = cols[0].strip()
            if not name:
                raise _fail(where, "job_name", cols[0], "is empty")
            submit_s = float(_swim_number(cols[1], where, "submit_s", whole=False))
            _swim_number(cols[2], where, "gap_s", whole=False)  # validated only: submit_s already carries it
            raw = [
                _swim_number(cols[i], where, f, whole=True)
                for i, f in ((3, "map_input_bytes"), (4, "shuffle_bytes"), (5, "reduce_output_bytes"))
            ]
            inp, shuffle, output = (b * emulated_nodes // original_nodes for b in raw)
            input_mb = inp / MB
            maps = max(1, math.ceil(input_mb / block_mb))
            if maps > MAX_MAPS_PER_JOB:
                raise _fail(where, "map_input_bytes", cols[3], f"makes {maps:,} maps, more than {MAX_MAPS_PER_JOB:,}")
            map_input_mb = (block_mb,) * (maps - 1) + (input_mb - (maps - 1) * block_mb,)
            if raw[1] == 0:
                reduces = 0
            else:
                side = max(shuffle, SWIM_MIN_SIDE_BYTES) + max(output, SWIM_MIN_SIDE_BYTES)
                reduces = max(1, int((2 * side + bytes_per_reduce) // (2 * bytes_per_reduce)))  # Java Math.round
                if swim_reduce_cap and reduces > emulated_nodes:
                    reduces = max(1, emulated_nodes // 5)
            src = f"{fname}:{lineno}"
            jobs.append(
                TraceJob(name, submit_s, input_mb, shuffle / MB, output / MB, maps, reduces, map_input_mb, source=src)
            )
    return jobs


def _rumen_number(obj: Mapping[str, Any], key: str, where: str) -> float | None:
    """A JSON number, or None when absent or null; Rumen writes -1 for "unknown", which callers skip."""
    value = obj.get(key)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise _fail(where, key, value, "is not a number")
    if not math.isfinite(value):  # Python's json accepts NaN and Infinity
        raise _fail(where, key, value, "is not a finite number")
    return float(value)


def _first_known(where: str, *sources: tuple[Mapping[str, Any], str]) -> float:
    """The first non-negative counter among (object, key) pairs, else 0: Rumen fills unknown counters with -1."""
    for obj, key in sources:
        value = _rumen_number(obj, key, where)
        if value is not None and value >= 0:
            return value
    return 0.0


def _list(obj: Mapping[str, Any], key: str, where: str) -> list[Any]:
    value = obj.get(key)
    if value is None:
        return []
    if not isinstance(value, list):
        raise _fail(where, key, value, "is not a list")
    return value


def _successful(tasks: list[Any], where: str) -> list[tuple[dict[str, Any], dict[str, Any], str]]:
    """(task, its first SUCCESS attempt, where) for tasks that completed; others never produced work."""
    done = []
    for i, task in enumerate(tasks):
        if not isinstance(task, dict):
            raise TraceError(f"{where} task {i}: not a JSON object")
        at = f"{where} task {task.get('taskID', i)}"
        for attempt in _list(task, "attempts", at):
            if not isinstance(attempt, dict):
                raise TraceError(f"{at}: attempt is not a JSON object")
            if attempt.get("result") == "SUCCESS":
                done.append((task, attempt, at))
                break
    return done


def _duration_s(attempt: Mapping[str, Any], at: str) -> float:
    start, finish = (_rumen_number(attempt, key, at) for key in ("startTime", "finishTime"))
    if start is None or start < 0:
        raise _fail(at, "startTime", attempt.get("startTime"), "is missing or negative")
    if finish is None or finish < start:
        raise _fail(at, "finishTime", attempt.get("finishTime"), f"is missing or before startTime={start:.0f}")
    return (finish - start) / 1000.0


def read_rumen(path: str | Path) -> list[TraceJob]:
    """Read a Rumen job trace: a stream of JSON job objects, each with `mapTasks`/`reduceTasks` and attempts.

    Only tasks with a SUCCESS attempt count (the first such attempt gives duration and host), so a job killed
    before any map finished has 0 maps. Bytes follow Rumen's own counter mapping (LoggedTask
    incorporateMapCounters/incorporateReduceCounters): map input is the task's `inputBytes` (HDFS_BYTES_READ),
    else the attempt's `hdfsBytesRead`, else `mapInputBytes`; shuffle is the maps' `outputBytes`
    (FILE_BYTES_WRITTEN, the materialised map output), else `fileBytesWritten`, else `mapOutputBytes`;
    output is the reduces' `outputBytes` (HDFS_BYTES_WRITTEN), else `hdfsBytesWritten`. A job without a
    successful reduce is map-only: shuffle 0 and output the maps' `hdfsBytesWritten`. Hosts are Rumen's
    `/rack/host` strings verbatim, matching its topology files ("" when unrecorded).
    """
    fname = Path(path).name
    data = Path(path).read_bytes()
    text = _text_line(data, fname)
    decoder, pos, objects = json.JSONDecoder(), 0, []
    while True:
        while pos < len(text) and text[pos].isspace():
            pos += 1
        if pos >= len(text):
            break
        try:
            obj, pos = decoder.raw_decode(text, pos)
        except json.JSONDecodeError as exc:
            raise TraceError(
                f"{fname} job {len(objects)}: invalid JSON at line {exc.lineno} col {exc.colno}: {exc.msg}"
            ) from None
        objects.append(obj)
    parsed = [_rumen_job(obj, f"{fname} job {i}") for i, obj in enumerate(objects)]
    start_ms = min((submit for _, submit, _ in parsed), default=0.0)
    return [replace(job, submit_s=(ms - start_ms) / 1000.0, source=f"{fname}:{job_id}") for job, ms, job_id in parsed]


def _rumen_job(obj: object, where: str) -> tuple[TraceJob, float, str]:
    """Validate one job object; returns the job (submit_s still 0), its submitTime in ms and its jobID."""
    if not isinstance(obj, dict):
        raise TraceError(f"{where}: not a JSON object")
    job_id = obj.get("jobID")
    if job_id is None:
        raise TraceError(f"{where}: field jobID is missing")
    if not isinstance(job_id, str) or not job_id:
        raise _fail(where, "jobID", job_id, "is not a non-empty string")
    where = f"{where} ({job_id})"
    submit = _rumen_number(obj, "submitTime", where)
    if submit is None:
        raise TraceError(f"{where}: field submitTime is missing")
    if submit < 0:
        raise _fail(where, "submitTime", obj["submitTime"], "is negative")
    maps = _successful(_list(obj, "mapTasks", where), where)
    reduces = _successful(_list(obj, "reduceTasks", where), where)
    map_input = tuple(
        _first_known(at, (task, "inputBytes"), (att, "hdfsBytesRead"), (att, "mapInputBytes")) / MB
        for task, att, at in maps
    )
    if reduces:
        shuffle = sum(
            _first_known(at, (t, "outputBytes"), (a, "fileBytesWritten"), (a, "mapOutputBytes")) for t, a, at in maps
        )
        output = sum(_first_known(at, (t, "outputBytes"), (a, "hdfsBytesWritten")) for t, a, at in reduces)
    else:
        shuffle, output = 0.0, sum(_first_known(at, (a, "hdfsBytesWritten")) for _, a, at in maps)
    hosts = []
    for _, att, at in maps:
        host = att.get("hostName")
        if host is not None and not isinstance(host, str):
            raise _fail(at, "hostName", host, "is not a string")
        hosts.append(host or "")
    job = TraceJob(
        name=job_id,
        submit_s=0.0,
        input_mb=float(sum(map_input)),
        shuffle_mb=shuffle / MB,
        output_mb=output / MB,
        maps=len(maps),
        reduces=len(reduces),
        map_input_mb=map_input,
        map_durations_s=tuple(_duration_s(att, at) for _, att, at in maps),
        reduce_durations_s=tuple(_duration_s(att, at) for _, att, at in reduces),
        map_hosts=tuple(hosts),
    )
    return job, submit, job_id
