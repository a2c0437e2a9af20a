"""Public workload traces (SWIM TSV, Hadoop Rumen JSON) turned into job arrivals for the emulator.

Sizes are in MB of 2**20 bytes, the unit of Hadoop's 64 MB block. Readers return jobs in file order and
validate everything first: a malformed row or object raises `TraceError` and nothing partial is returned.
`read_trace` tells the formats apart by content, not by file name (Hadoop ships Rumen traces as `.json.gz`
and without suffixes), and every reader takes gzip'd files as they are.
"""

from __future__ import annotations

import gzip
import json
import math
import statistics
import zlib
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


Retry = tuple[str, float]  # a recorded attempt that did not succeed: ("FAILED" | "KILLED", runtime s)


@dataclass(frozen=True)
class TraceJob:
    """One job arrival. `map_input_mb` sums to `input_mb`; durations and hosts exist only for Rumen traces.

    Per-task tuples (`map_*`, `reduce_*`) follow the job's successful tasks in file order. Rumen extras:
    `outcome` (SUCCESS, FAILED, KILLED), the recorded `duration_s` (finish - submit; None when not recorded),
    `init_s` (launch - submit: the JobTracker's initialization), the setup and cleanup attempts' runtimes, the
    CPU counters (s; None when absent), a reduce's time after its shuffle (finish - shuffleFinished), the hosts
    holding each map's split (`preferredLocations`), the unsuccessful attempts that ran before each success
    (`*_retries`), and the tasks that never succeeded (`unfinished_*`: their attempts). `head_s` (launch to
    the first map or reduce attempt's start) and `tail_s` (the last attempt's end to the job's finish) time the
    job setup and commit that MapReduce 2 runs inside its ApplicationMaster, not as tasks; None when unknown or
    negative (host clocks skewed against the JobTracker's).
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
    reduce_hosts: tuple[str, ...] | None = None
    map_replicas: tuple[tuple[str, ...], ...] | None = None
    map_retries: tuple[tuple[Retry, ...], ...] | None = None
    reduce_retries: tuple[tuple[Retry, ...], ...] | None = None
    unfinished_maps: tuple[tuple[Retry, ...], ...] = ()
    unfinished_reduces: tuple[tuple[Retry, ...], ...] = ()
    head_s: float | None = None
    tail_s: float | None = None


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


def trace_format(text: str) -> str:
    """ "rumen" (a stream of JSON job objects), "topology" (a Rumen topology object) or "swim" (TSV rows)."""
    head = text.lstrip()
    if not head.startswith(("{", "[")):
        return "swim"
    if head.startswith("{"):
        try:
            first, _ = json.JSONDecoder().raw_decode(head)
        except json.JSONDecodeError:
            return "rumen"  # the Rumen reader reports where the JSON breaks
        if isinstance(first, dict) and "children" in first and "jobID" not in first:
            return "topology"
    return "rumen"


def read_trace(path: str | Path, **swim_options: Any) -> tuple[str, list[TraceJob]]:
    """Read a SWIM or Rumen trace, whichever the content is (gzip'd or not): (format, jobs)."""
    text = read_text(path)
    kind = trace_format(text)
    fname = Path(path).name
    if not text.strip():
        raise TraceError(f"{fname}: the file is empty: no jobs" if not text else f"{fname}: only blank lines: no jobs")
    if kind == "topology":
        raise TraceError(f"{fname}: this is a Rumen topology file, not a job trace (give it as topology=PATH)")
    if kind == "rumen":
        return kind, _parse_rumen(text, fname)
    return kind, _parse_swim(text, fname, **swim_options)


@dataclass(frozen=True)
class Topology:
    """A Rumen cluster topology (LoggedNetworkTopology): racks of hosts, in file order."""

    racks: tuple[tuple[str, tuple[str, ...]], ...]

    @property
    def hosts(self) -> list[tuple[str, str]]:
        """(rack, host) of every host."""
        return [(rack, host) for rack, hosts in self.racks for host in hosts]


def read_topology(path: str | Path, max_hosts: int | None = None) -> Topology:
    """Read a Rumen topology file: `{"name": "<root>", "children": [{"name": RACK, "children": [{"name": HOST}]}]}`.
    A host or rack named twice is refused (each host becomes one VM, known by its name), and so are more than
    `max_hosts` hosts."""
    fname = Path(path).name
    text = read_text(path)
    try:
        root = json.loads(text)
    except json.JSONDecodeError as exc:
        raise TraceError(f"{fname}: invalid JSON at line {exc.lineno} col {exc.colno}: {exc.msg}") from None
    if not isinstance(root, dict) or "jobID" in root:
        raise TraceError(f"{fname}: not a Rumen topology (expected an object with name and children)")
    racks = []
    seen: dict[str, str] = {}  # host -> its rack
    for i, rack in enumerate(_list(root, "children", f"{fname} root")):
        where = f"{fname} rack {i}"
        if not isinstance(rack, dict) or not isinstance(rack.get("name"), str) or not rack["name"]:
            raise TraceError(f"{where}: field name is missing or not a string")
        if any(rack["name"] == name for name, _ in racks):
            raise TraceError(f"{where}: rack {rack['name']!r} is named twice")
        hosts = []
        for j, host in enumerate(_list(rack, "children", where)):
            if not isinstance(host, dict) or not isinstance(host.get("name"), str) or not host["name"]:
                raise TraceError(f"{where} ({rack['name']}) host {j}: field name is missing or not a string")
            name = host["name"]
            if name in seen:
                raise TraceError(f"{where} ({rack['name']}) host {j}: host {name!r} is named twice "
                                 f"(also in rack {seen[name]!r})")  # fmt: skip
            seen[name] = rack["name"]
            if max_hosts is not None and len(seen) > max_hosts:
                raise TraceError(f"{fname}: more than {max_hosts:,} hosts (each host is one VM of the cluster)")
            hosts.append(name)
        racks.append((rack["name"], tuple(hosts)))
    if not any(hosts for _, hosts in racks):
        raise TraceError(f"{fname}: the topology has no hosts")
    return Topology(tuple(racks))


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
    return _parse_swim(
        read_text(path),
        Path(path).name,
        original_nodes=original_nodes,
        emulated_nodes=emulated_nodes,
        block_mb=block_mb,
        bytes_per_reduce=bytes_per_reduce,
        swim_reduce_cap=swim_reduce_cap,
    )


def _parse_swim(
    text: str,
    fname: str,
    *,
    original_nodes: int = 600,
    emulated_nodes: int = 30,
    block_mb: float = 64.0,
    bytes_per_reduce: int = SWIM_BYTES_PER_REDUCE,
    swim_reduce_cap: bool = True,
) -> list[TraceJob]:
    if original_nodes <= 0 or emulated_nodes <= 0 or block_mb <= 0 or bytes_per_reduce <= 0:
        raise ValueError("original_nodes, emulated_nodes, block_mb and bytes_per_reduce must be positive")
    jobs: list[TraceJob] = []
    for lineno, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        where = f"{fname} line {lineno}"
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


RESULTS = ("SUCCESS", "FAILED", "KILLED")  # Rumen's attempt results (Pre21JobHistoryConstants.Values)


def _attempts(task: dict[str, Any], at: str) -> list[dict[str, Any]]:
    attempts = []
    for attempt in _list(task, "attempts", at):
        if not isinstance(attempt, dict):
            raise TraceError(f"{at}: attempt is not a JSON object")
        result = attempt.get("result")
        if result is not None and result not in RESULTS:
            raise _fail(at, "result", result, f"is not one of {', '.join(RESULTS)}")
        attempts.append(attempt)
    return attempts


def _tasks(tasks: list[Any], where: str):
    """Split a job's tasks: (task, its first SUCCESS attempt, where, the unsuccessful attempts that ended before
    it started: retries) for tasks that completed, and the finished attempts of tasks that never did. Attempts
    that overlap the success are speculative duplicates: the replay leaves those to its speculation policy."""
    done, unfinished = [], []
    for i, task in enumerate(tasks):
        if not isinstance(task, dict):
            raise TraceError(f"{where} task {i}: not a JSON object")
        at = f"{where} task {task.get('taskID', i)}"
        attempts = _attempts(task, at)
        win = next((a for a in attempts if a.get("result") == "SUCCESS"), None)
        ended = [a for a in attempts if a.get("result") in ("FAILED", "KILLED")]
        if win is None:
            unfinished.append(tuple((a["result"], _duration_s(a, at)) for a in ended))
            continue
        start = _rumen_number(win, "startTime", at)
        retries = tuple(
            (a["result"], _duration_s(a, at))
            for a in ended
            if start is not None and (_rumen_number(a, "finishTime", at) or 0) <= start
        )
        done.append((task, win, at, retries))
    return done, unfinished


def _duration_s(attempt: Mapping[str, Any], at: str) -> float:
    start, finish = (_rumen_number(attempt, key, at) for key in ("startTime", "finishTime"))
    if start is None or start < 0:
        raise _fail(at, "startTime", attempt.get("startTime"), "is missing or negative")
    if finish is None or finish < start:
        raise _fail(at, "finishTime", attempt.get("finishTime"), f"is missing or before startTime={start:.0f}")
    return (finish - start) / 1000.0


def _cpu_s(attempt: Mapping[str, Any], at: str) -> float | None:
    """CPU seconds of an attempt: `resourceUsageMetrics.cumulativeCpuUsage` (ms), else the sum of `cpuUsages`."""
    usage = attempt.get("resourceUsageMetrics")
    if usage is not None:
        if not isinstance(usage, dict):
            raise _fail(at, "resourceUsageMetrics", usage, "is not a JSON object")
        ms = _rumen_number(usage, "cumulativeCpuUsage", at)
        if ms is not None and ms > 0:
            return ms / 1000.0
    splits = _list(attempt, "cpuUsages", at)
    if splits:
        if any(isinstance(x, bool) or not isinstance(x, int | float) or x < 0 for x in splits):
            raise _fail(at, "cpuUsages", splits, "is not a list of non-negative numbers")
        return float(sum(splits)) / 1000.0 or None
    return None


def _host(attempt: Mapping[str, Any], at: str) -> str:
    host = attempt.get("hostName")
    if host is not None and not isinstance(host, str):
        raise _fail(at, "hostName", host, "is not a string")
    return host or ""


def _replicas(task: Mapping[str, Any], at: str) -> tuple[str, ...]:
    """`preferredLocations` as Rumen `/rack/host` strings (the hosts of the split's replicas)."""
    out = []
    for loc in _list(task, "preferredLocations", at):
        layers = loc.get("layers") if isinstance(loc, dict) else None
        if not isinstance(layers, list) or not all(isinstance(x, str) for x in layers):
            raise _fail(at, "preferredLocations", loc, "is not a location with a list of layers")
        out.append("/" + "/".join(layers))
    return tuple(out)


def _other_task_s(obj: Mapping[str, Any], kind: str, where: str) -> float | None:
    """The runtime of the job's successful SETUP or CLEANUP attempt (`otherTasks`), None if none was recorded."""
    for i, task in enumerate(_list(obj, "otherTasks", where)):
        if not isinstance(task, dict):
            raise TraceError(f"{where} otherTasks {i}: not a JSON object")
        if task.get("taskType") != kind:
            continue
        at = f"{where} task {task.get('taskID', i)}"
        for attempt in _attempts(task, at):
            if attempt.get("result") == "SUCCESS":
                return _duration_s(attempt, at)
    return None


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
    return _parse_rumen(read_text(path), Path(path).name)


def _parse_rumen(text: str, fname: str) -> list[TraceJob]:
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
    outcome = obj.get("outcome", "SUCCESS")
    if outcome is None:
        outcome = "SUCCESS"
    if outcome not in RESULTS:
        raise _fail(where, "outcome", outcome, f"is not one of {', '.join(RESULTS)}")
    finish = _rumen_number(obj, "finishTime", where)
    launch = _rumen_number(obj, "launchTime", where)
    maps, unfinished_maps = _tasks(_list(obj, "mapTasks", where), where)
    reduces, unfinished_reduces = _tasks(_list(obj, "reduceTasks", where), where)
    map_input = tuple(
        _first_known(at, (task, "inputBytes"), (att, "hdfsBytesRead"), (att, "mapInputBytes")) / MB
        for task, att, at, _ in maps
    )
    if reduces:
        shuffle = sum(
            _first_known(at, (t, "outputBytes"), (a, "fileBytesWritten"), (a, "mapOutputBytes")) for t, a, at, _ in maps
        )
        output = sum(_first_known(at, (t, "outputBytes"), (a, "hdfsBytesWritten")) for t, a, at, _ in reduces)
    else:
        shuffle, output = 0.0, sum(_first_known(at, (a, "hdfsBytesWritten")) for _, a, at, _ in maps)
    after_shuffle = []
    for _, att, at, _ in reduces:
        shuffled = _rumen_number(att, "shuffleFinished", at)
        end = _rumen_number(att, "finishTime", at)
        known = shuffled is not None and shuffled > 0 and end is not None and end >= shuffled
        after_shuffle.append((end - shuffled) / 1000.0 if known else None)
    starts = [_rumen_number(a, "startTime", at) for _, a, at, _ in (*maps, *reduces)]
    ends = [_rumen_number(a, "finishTime", at) for _, a, at, _ in (*maps, *reduces)]
    head = (min(starts) - launch) / 1000.0 if starts and launch is not None and launch >= submit else None
    tail = (finish - max(ends)) / 1000.0 if ends and finish is not None and finish >= submit else None
    job = TraceJob(
        name=job_id,
        submit_s=0.0,
        input_mb=float(sum(map_input)),
        shuffle_mb=shuffle / MB,
        output_mb=output / MB,
        maps=len(maps),
        reduces=len(reduces),
        map_input_mb=map_input,
        map_durations_s=tuple(_duration_s(att, at) for _, att, at, _ in maps),
        reduce_durations_s=tuple(_duration_s(att, at) for _, att, at, _ in reduces),
        map_hosts=tuple(_host(att, at) for _, att, at, _ in maps),
        outcome=outcome,
        duration_s=(finish - submit) / 1000.0 if finish is not None and finish >= submit else None,
        init_s=(launch - submit) / 1000.0 if launch is not None and launch >= submit else None,
        setup_s=_other_task_s(obj, "SETUP", where),
        cleanup_s=_other_task_s(obj, "CLEANUP", where),
        map_cpu_s=tuple(_cpu_s(att, at) for _, att, at, _ in maps),
        reduce_cpu_s=tuple(_cpu_s(att, at) for _, att, at, _ in reduces),
        reduce_after_shuffle_s=tuple(after_shuffle),
        reduce_hosts=tuple(_host(att, at) for _, att, at, _ in reduces),
        map_replicas=tuple(_replicas(task, at) for task, _, at, _ in maps),
        map_retries=tuple(r for *_, r in maps),
        reduce_retries=tuple(r for *_, r in reduces),
        unfinished_maps=tuple(unfinished_maps),
        unfinished_reduces=tuple(unfinished_reduces),
        head_s=head if head is not None and head >= 0 else None,
        tail_s=tail if tail is not None and tail >= 0 else None,
    )
    return job, submit, job_id


def median_or(values: list[float], default: float) -> float:
    """The median of the known values, else `default` (sizing tasks a trace did not time)."""
    return statistics.median(values) if values else default
