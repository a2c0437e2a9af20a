"""Hadoop Rumen job traces (a stream of JSON LoggedJob objects) as `TraceJob`s, real-data anomalies repaired.

Wrong types, unknown enum values and broken JSON are refused with one line naming the file, the job, the field and
the value: no Hadoop wrote them. What real job histories do contain (attempts that end before they start, tasks
before their job's submit, counters out of range, attempts without a result) is repaired by the rules of
`trace_repair.RULES` and counted (`RumenRead.repairs`); a trace is refused only when no job is left.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from hadoop_layer.trace_conf import job_conf
from hadoop_layer.trace_records import (
    MB,
    Retry,
    TraceError,
    TraceJob,
    fail,
    list_field,
    read_text,
    skip_blank_and_comments,
)
from hadoop_layer.trace_repair import Repairs, counter, made_up_runtime_s

RESULTS = ("SUCCESS", "FAILED", "KILLED")  # Rumen's attempt results (Pre21JobHistoryConstants.Values)


@dataclass
class RumenRead:
    """The jobs read (at most `max_jobs`, in file order), the anomalies repaired in them, and how many job objects
    the file holds (`total_jobs`; None when the file breaks after the jobs read, so only `more` is known)."""

    jobs: list[TraceJob]
    repairs: Repairs = field(default_factory=Repairs)
    total_jobs: int | None = None
    dropped: int = 0


def read_rumen(path: str | Path, max_jobs: int | None = None) -> list[TraceJob]:
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
    return parse_rumen(read_text(path), Path(path).name, max_jobs).jobs


def parse_rumen(text: str, fname: str, max_jobs: int | None = None) -> RumenRead:
    """Decode the first `max_jobs` job objects (all when None) and validate only those; count the rest."""
    decoder, objects = json.JSONDecoder(), []
    pos = skip_blank_and_comments(text)
    while pos < len(text) and (max_jobs is None or len(objects) < max_jobs):
        try:
            obj, pos = decoder.raw_decode(text, pos)
        except json.JSONDecodeError as exc:
            raise TraceError(
                f"{fname} job {len(objects)}: invalid JSON at line {exc.lineno} col {exc.colno}: {exc.msg}"
            ) from None
        objects.append(obj)
        pos = skip_blank_and_comments(text, pos)
    total: int | None = len(objects)
    while pos < len(text):  # the jobs max_jobs leaves out: counted, not validated
        try:
            _, pos = decoder.raw_decode(text, pos)
        except json.JSONDecodeError:
            total = None
            break
        total = None if total is None else total + 1
        pos = skip_blank_and_comments(text, pos)
    repairs = Repairs()
    parsed = [p for i, obj in enumerate(objects) if (p := _rumen_job(obj, f"{fname} job {i}", repairs)) is not None]
    if objects and not parsed:
        raise TraceError(f"{fname}: nothing replayable is left: {repairs.describe()}")
    start_ms = min((submit for _, submit, _ in parsed), default=0.0)
    jobs = [replace(job, submit_s=(ms - start_ms) / 1000.0, source=f"{fname}:{job_id}") for job, ms, job_id in parsed]
    return RumenRead(jobs, repairs, total, len(objects) - len(parsed))


def _rumen_number(obj: Mapping[str, Any], key: str, where: str) -> float | None:
    """A JSON number, or None when absent or null; Rumen writes -1 for "unknown", which callers skip."""
    value = obj.get(key)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise fail(where, key, value, "is not a number")
    if not math.isfinite(value):  # Python's json accepts NaN and Infinity; JSON (and Jackson) do not
        raise fail(where, key, value, "is not a finite number")
    return float(value)


def _first_known(where: str, repairs: Repairs, *sources: tuple[Mapping[str, Any], str]) -> float:
    """The first known, in-range counter among (object, key) pairs, else 0: Rumen fills unknown counters with -1."""
    for obj, key in sources:
        value = counter(_rumen_number(obj, key, where), where, key, repairs)
        if value is not None:
            return value
    return 0.0


def _attempts(task: dict[str, Any], at: str, repairs: Repairs) -> list[dict[str, Any]]:
    """The task's attempts with a result; one without is dropped (ZombieJob.sanitizeLoggedTaskAttempt)."""
    attempts = []
    for attempt in list_field(task, "attempts", at):
        if not isinstance(attempt, dict):
            raise TraceError(f"{at}: attempt is not a JSON object")
        result = attempt.get("result")
        if result is None:
            repairs.note("attempt_no_result", f"{at} {attempt.get('attemptID', '')}".rstrip())
            continue
        if result not in RESULTS:
            raise fail(at, "result", result, f"is not one of {', '.join(RESULTS)}")
        attempts.append(attempt)
    return attempts


def _window(attempt: Mapping[str, Any], at: str) -> tuple[float | None, float | None]:
    """(start, finish) in ms when known (>= 0; Rumen writes -1 for unknown), else None for that end."""
    start, finish = (_rumen_number(attempt, key, at) for key in ("startTime", "finishTime"))
    known = [t if t is not None and t >= 0 else None for t in (start, finish)]
    return known[0], known[1]


def _good_s(attempt: Mapping[str, Any], at: str) -> float | None:
    start, finish = _window(attempt, at)
    return (finish - start) / 1000.0 if start is not None and finish is not None and finish >= start else None


class _JobAttempts:
    """One job's attempts, for runtimes: the well-formed ones by (kind, result), the pool a repair draws on."""

    def __init__(self, groups: dict[str, list[tuple[dict[str, Any], str]]], repairs: Repairs) -> None:
        self.repairs = repairs
        self.good: dict[tuple[str, str], list[float]] = {}
        for kind, attempts in groups.items():
            for attempt, at in attempts:
                runtime = _good_s(attempt, at)
                if runtime is not None:
                    self.good.setdefault((kind, attempt["result"]), []).append(runtime)

    def runtime_s(self, attempt: Mapping[str, Any], at: str, kind: str) -> float:
        """The attempt's recorded runtime, or the repaired one (trace_repair.RULES)."""
        runtime = _good_s(attempt, at)
        if runtime is not None:
            return runtime
        start, finish = _window(attempt, at)
        pool = self.good.get((kind, attempt["result"]), [])
        name = f"{at} {attempt.get('attemptID', '')}".rstrip()
        if start is None or finish is None:
            self.repairs.note("attempt_time_missing", name)
            return made_up_runtime_s(pool)
        self.repairs.note("attempt_ends_before_start", f"{name} ({(finish - start) / 1000:+.0f} s)")
        return made_up_runtime_s(pool if kind == "REDUCE" else [])


def _tasks(tasks: list[Any], where: str, repairs: Repairs) -> tuple[list, list]:
    """Split a job's tasks: (task, its first SUCCESS attempt, where, the unsuccessful attempts that ended before
    it started: retries) for tasks that completed, and the attempts of tasks that never did. Attempts that
    overlap the success are speculative duplicates: the replay leaves those to its speculation policy. Runtimes
    are not read here (`_JobAttempts`): retries hold the attempts until they are."""
    done, unfinished = [], []
    for i, task in enumerate(tasks):
        if not isinstance(task, dict):
            raise TraceError(f"{where} task {i}: not a JSON object")
        at = f"{where} task {task.get('taskID', i)}"
        attempts = _attempts(task, at, repairs)
        win = next((a for a in attempts if a.get("result") == "SUCCESS"), None)
        ended = [a for a in attempts if a.get("result") in ("FAILED", "KILLED")]
        if win is None:
            unfinished.append((ended, at))
            continue
        start = _window(win, at)[0]
        retries = [a for a in ended if start is not None and (_window(a, at)[1] or 0) <= start]
        done.append((task, win, at, retries))
    return done, unfinished


def _cpu_s(attempt: Mapping[str, Any], at: str, repairs: Repairs) -> float | None:
    """CPU seconds of an attempt: `resourceUsageMetrics.cumulativeCpuUsage` (ms), else the sum of `cpuUsages`."""
    usage = attempt.get("resourceUsageMetrics")
    if usage is not None:
        if not isinstance(usage, dict):
            raise fail(at, "resourceUsageMetrics", usage, "is not a JSON object")
        ms = counter(_rumen_number(usage, "cumulativeCpuUsage", at), at, "cumulativeCpuUsage", repairs)
        if ms is not None and ms > 0:
            return ms / 1000.0
    splits = list_field(attempt, "cpuUsages", at)
    if splits:
        if any(isinstance(x, bool) or not isinstance(x, int | float) for x in splits):
            raise fail(at, "cpuUsages", splits, "is not a list of numbers")
        known = [counter(x, at, "cpuUsages", repairs) for x in splits]
        if any(x is None for x in known):
            return None
        return float(sum(splits)) / 1000.0 or None
    return None


def _host(attempt: Mapping[str, Any], at: str) -> str:
    host = attempt.get("hostName")
    if host is not None and not isinstance(host, str):
        raise fail(at, "hostName", host, "is not a string")
    return host or ""


def _replicas(task: Mapping[str, Any], at: str) -> tuple[str, ...]:
    """`preferredLocations` as Rumen `/rack/host` strings (the hosts of the split's replicas)."""
    out = []
    for loc in list_field(task, "preferredLocations", at):
        layers = loc.get("layers") if isinstance(loc, dict) else None
        if not isinstance(layers, list) or not all(isinstance(x, str) for x in layers):
            raise fail(at, "preferredLocations", loc, "is not a location with a list of layers")
        out.append("/" + "/".join(layers))
    return tuple(out)


def _other_task_s(obj: Mapping[str, Any], kind: str, where: str, repairs: Repairs) -> float | None:
    """The runtime of the job's successful SETUP or CLEANUP attempt (`otherTasks`), None if none was recorded
    (or its times are unusable: counted, and the emulator's own cost holds)."""
    for i, task in enumerate(list_field(obj, "otherTasks", where)):
        if not isinstance(task, dict):
            raise TraceError(f"{where} otherTasks {i}: not a JSON object")
        if task.get("taskType") != kind:
            continue
        at = f"{where} task {task.get('taskID', i)}"
        for attempt in _attempts(task, at, repairs):
            if attempt.get("result") == "SUCCESS":
                runtime = _good_s(attempt, at)
                if runtime is None:
                    start, finish = _window(attempt, at)
                    bad = "attempt_time_missing" if start is None or finish is None else "attempt_ends_before_start"
                    repairs.note(bad, f"{at} ({kind.lower()}: the emulator's own cost)")
                return runtime
    return None


def _recorded(task: Mapping[str, Any], at: str) -> list[tuple[float | None, float | None]]:
    """(start, finish) ms of each of the task's attempts that has a result (`_window`; speculative ones too)."""
    attempts = task.get("attempts") if isinstance(task.get("attempts"), list) else []
    return [_window(a, at) for a in attempts if isinstance(a, dict) and a.get("result") in RESULTS]


def _starts_s(attempts: list[Mapping[str, Any]], at: str, submit: float) -> tuple[float | None, ...]:
    """The attempts' starts after the submit (s), in order; None where unknown or before the submit (skewed)."""
    starts = (_window(a, at)[0] for a in attempts)
    return tuple((t - submit) / 1000.0 if t is not None and t >= submit else None for t in starts)


def _job_windows(obj: Mapping[str, Any], where: str, submit: float) -> tuple[tuple[float, float], ...]:
    """Every attempt of the job (maps, reduces, setup, cleanup) with both times known, finishing at or after its
    start and starting at or after the submit, as (start, finish) s after the submit, in start order."""
    out = []
    for key in ("mapTasks", "reduceTasks", "otherTasks"):
        for i, task in enumerate(list_field(obj, key, where)):
            at = f"{where} task {task.get('taskID', i)}" if isinstance(task, dict) else where
            for start, finish in _recorded(task, at) if isinstance(task, dict) else ():
                if start is not None and finish is not None and submit <= start <= finish:
                    out.append(((start - submit) / 1000.0, (finish - submit) / 1000.0))
    return tuple(sorted(out))


def _task_starts(done: list, unfinished: list, submit: float) -> tuple[tuple[float | None, ...], ...]:
    """Per task, in the replay's order (the tasks that succeeded, then those that never did), the recorded starts
    after the submit (s) of the attempts the replay launches, in order: the retries, then the success."""
    starts = [_starts_s([*retries, win], at, submit) for _, win, at, retries in done]  # as map_retries: file order
    return (*starts, *(_starts_s(ended, at, submit) for ended, at in unfinished))


def _submit_ms(obj: Mapping[str, Any], where: str, repairs: Repairs) -> float | None:
    submit = _rumen_number(obj, "submitTime", where)
    if submit is None or submit < 0:
        repairs.note("job_no_submit_time", f"{where} submitTime={obj.get('submitTime')!r}")
        return None
    return submit


def _since_submit_s(ms: float | None, submit: float, where: str, key: str, repairs: Repairs) -> float | None:
    """(ms - submit) in s; None when not recorded (absent or -1) or, counted as skew, before the submit."""
    if ms is None or ms < 0:
        return None
    if ms < submit:
        repairs.note("job_times_skewed", f"{where} {key} {(ms - submit) / 1000:+.0f} s after submitTime")
        return None
    return (ms - submit) / 1000.0


def _rumen_job(obj: object, where: str, repairs: Repairs) -> tuple[TraceJob, float, str] | None:
    """Validate one job object; returns the job (submit_s still 0), its submitTime in ms and its jobID, or None
    when it cannot be placed in time (counted)."""
    if not isinstance(obj, dict):
        raise TraceError(f"{where}: not a JSON object")
    job_id = obj.get("jobID")
    if job_id is None:
        raise TraceError(f"{where}: field jobID is missing")
    if not isinstance(job_id, str) or not job_id:
        raise fail(where, "jobID", job_id, "is not a non-empty string")
    where = f"{where} ({job_id})"
    outcome = obj.get("outcome", "SUCCESS")
    if outcome is None:
        outcome = "SUCCESS"
    if outcome not in RESULTS:
        raise fail(where, "outcome", outcome, f"is not one of {', '.join(RESULTS)}")
    props = obj.get("jobProperties") or {}
    if not isinstance(props, dict):
        raise fail(where, "jobProperties", props, "is not a JSON object")
    heap = _rumen_number(obj, "heapMegabytes", where)
    submit = _submit_ms(obj, where, repairs)
    maps, unfinished_maps = _tasks(list_field(obj, "mapTasks", where), where, repairs)
    reduces, unfinished_reduces = _tasks(list_field(obj, "reduceTasks", where), where, repairs)
    finish = _rumen_number(obj, "finishTime", where)
    launch = _rumen_number(obj, "launchTime", where)
    setup, cleanup = (_other_task_s(obj, kind, where, repairs) for kind in ("SETUP", "CLEANUP"))
    conf = job_conf(props, heap, lambda kind, detail: repairs.note(kind, f"{where} {detail}"))
    if submit is None:
        return None
    groups: dict[str, list[tuple[dict[str, Any], str]]] = {"MAP": [], "REDUCE": []}
    for kind, done, never in (("MAP", maps, unfinished_maps), ("REDUCE", reduces, unfinished_reduces)):
        groups[kind] += [(a, at) for _, win, at, retries in done for a in (win, *retries)]
        groups[kind] += [(a, at) for ended, at in never for a in ended]
    runs = _JobAttempts(groups, repairs)

    def retried(kind: str, attempts: list[dict[str, Any]], at: str) -> tuple[Retry, ...]:
        return tuple((a["result"], runs.runtime_s(a, at, kind)) for a in attempts)

    map_input = tuple(
        _first_known(at, repairs, (task, "inputBytes"), (att, "hdfsBytesRead"), (att, "mapInputBytes")) / MB
        for task, att, at, _ in maps
    )
    if reduces:
        shuffle = sum(
            _first_known(at, repairs, (t, "outputBytes"), (a, "fileBytesWritten"), (a, "mapOutputBytes"))
            for t, a, at, _ in maps
        )
        output = sum(_first_known(at, repairs, (t, "outputBytes"), (a, "hdfsBytesWritten")) for t, a, at, _ in reduces)
    else:
        shuffle, output = 0.0, sum(_first_known(at, repairs, (a, "hdfsBytesWritten")) for _, a, at, _ in maps)
    after_shuffle, shuffle_s = [], []
    for _, att, at, _ in reduces:
        shuffled = _rumen_number(att, "shuffleFinished", at)
        start, end = _window(att, at)
        known = shuffled is not None and shuffled > 0 and end is not None and end >= shuffled
        after_shuffle.append((end - shuffled) / 1000.0 if known else None)
        # Rumen's getShuffleRuntime (ZombieJob: shuffleFinished - startTime); unknown, or before the start (skew)
        began = known and start is not None and shuffled >= start
        shuffle_s.append((shuffled - start) / 1000.0 if began else None)
    starts, ends = [], []
    for kind in ("MAP", "REDUCE"):
        early_tasks = set()
        for attempt, at in groups[kind]:
            start, end = _window(attempt, at)
            if start is not None and start < submit:
                early_tasks.add(at)
                continue  # skewed against the JobTracker's clock: not used for the job's gaps
            if start is not None and attempt["result"] == "SUCCESS":
                starts.append(start)
            if end is not None and end >= submit and attempt["result"] == "SUCCESS":
                ends.append(end)
        for at in sorted(early_tasks):
            repairs.note("task_before_submit", at)
    duration = _since_submit_s(finish, submit, where, "finishTime", repairs)
    init = _since_submit_s(launch, submit, where, "launchTime", repairs)
    head = (min(starts) - launch) / 1000.0 if starts and init is not None else None
    tail = (finish - max(ends)) / 1000.0 if ends and duration is not None else None
    job = TraceJob(
        name=job_id,
        submit_s=0.0,
        input_mb=float(sum(map_input)),
        shuffle_mb=shuffle / MB,
        output_mb=output / MB,
        maps=len(maps),
        reduces=len(reduces),
        map_input_mb=map_input,
        map_durations_s=tuple(runs.runtime_s(att, at, "MAP") for _, att, at, _ in maps),
        reduce_durations_s=tuple(runs.runtime_s(att, at, "REDUCE") for _, att, at, _ in reduces),
        map_hosts=tuple(_host(att, at) for _, att, at, _ in maps),
        outcome=outcome,
        duration_s=duration,
        init_s=init,
        setup_s=setup,
        cleanup_s=cleanup,
        map_cpu_s=tuple(_cpu_s(att, at, repairs) for _, att, at, _ in maps),
        reduce_cpu_s=tuple(_cpu_s(att, at, repairs) for _, att, at, _ in reduces),
        reduce_after_shuffle_s=tuple(after_shuffle),
        reduce_shuffle_s=tuple(shuffle_s),
        reduce_hosts=tuple(_host(att, at) for _, att, at, _ in reduces),
        map_replicas=tuple(_replicas(task, at) for task, _, at, _ in maps),
        map_retries=tuple(retried("MAP", r, at) for _, _, at, r in maps),
        reduce_retries=tuple(retried("REDUCE", r, at) for _, _, at, r in reduces),
        unfinished_maps=tuple(retried("MAP", ended, at) for ended, at in unfinished_maps),
        unfinished_reduces=tuple(retried("REDUCE", ended, at) for ended, at in unfinished_reduces),
        head_s=head if head is not None and head >= 0 else None,
        tail_s=tail if tail is not None and tail >= 0 else None,
        wait_s=(min(starts) - submit) / 1000.0 if starts else None,
        conf=conf,
        map_start_s=_task_starts(maps, unfinished_maps, submit),
        reduce_start_s=_task_starts(reduces, unfinished_reduces, submit),
        attempt_windows_s=_job_windows(obj, where, submit),
    )
    return job, submit, job_id
