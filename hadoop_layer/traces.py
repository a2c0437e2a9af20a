"""Public workload traces (SWIM TSV, Hadoop Rumen JSON) turned into job arrivals for the emulator.

Sizes are in MB of 2**20 bytes, the unit of Hadoop's 64 MB block. Readers return jobs in file order and
validate everything they return first: a malformed row or object raises `TraceError` and nothing partial is
returned; with `max_jobs` only the jobs returned are validated, the rest counted. Rumen traces are read by
`hadoop_layer/rumen.py`, which repairs real-data anomalies (`trace_repair.py`) rather than refusing them.
`read_trace` tells the formats apart by content, not by file name (Hadoop ships Rumen traces as `.json.gz`
and without suffixes), and every reader takes gzip'd files as they are.
"""

from __future__ import annotations

import json
import math
import statistics
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from hadoop_layer.rumen import RumenRead, parse_rumen, read_rumen
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
from hadoop_layer.trace_repair import Repairs

__all__ = ["MB", "Retry", "Topology", "TraceError", "TraceJob", "TraceRead", "load_trace", "median_or", "read_rumen",
           "read_swim", "read_text", "read_topology", "read_trace", "trace_format"]  # fmt: skip

SWIM_BYTES_PER_REDUCE = 64 * 2**20  # SWIM README: "amount of data per reduce task ... e.g., 67108864"
SWIM_MIN_SIDE_BYTES = 1024  # GenerateReplayScript raises shuffle and output below 1 KB to 1 KB before counting reduces
MAX_MAPS_PER_JOB = 200_000  # a job's maps are objects: a row of 10**18 bytes would fill the machine's memory


def trace_format(text: str) -> str:
    """ "rumen" (a stream of JSON job objects), "topology" (a Rumen topology object) or "swim" (TSV rows).
    Comments before the JSON (a licence header) are skipped (trace_records)."""
    head = text[skip_blank_and_comments(text) :]
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


@dataclass
class TraceRead:
    """A trace as read: its format, the jobs (the first `max_jobs` in file order), the anomalies repaired in
    them, how many jobs the file holds (None: more than read, the count unknown past a break) and how many
    were left out as unplaceable (`dropped`, counted in `repairs`)."""

    kind: str
    jobs: list[TraceJob]
    repairs: Repairs
    total_jobs: int | None
    dropped: int = 0

    @property
    def cut(self) -> bool:
        """Did `max_jobs` leave jobs of the file out?"""
        return self.total_jobs is None or self.total_jobs > len(self.jobs) + self.dropped


def load_trace(path: str | Path, max_jobs: int | None = None, **swim_options: Any) -> TraceRead:
    """Read a SWIM or Rumen trace, whichever the content is (gzip'd or not), validating only the first
    `max_jobs` jobs (all when None): what is not replayed is not checked either, only counted."""
    text = read_text(path)
    kind = trace_format(text)
    fname = Path(path).name
    if not text.strip():
        raise TraceError(f"{fname}: the file is empty: no jobs" if not text else f"{fname}: only blank lines: no jobs")
    if kind == "topology":
        raise TraceError(f"{fname}: this is a Rumen topology file, not a job trace (give it as topology=PATH)")
    if skip_blank_and_comments(text) >= len(text):
        raise TraceError(f"{fname}: only comments: no jobs")
    if kind == "rumen":
        got: RumenRead = parse_rumen(text, fname, max_jobs)
        return TraceRead(kind, got.jobs, got.repairs, got.total_jobs, got.dropped)
    jobs, total = _parse_swim(text, fname, max_jobs=max_jobs, **swim_options)
    return TraceRead(kind, jobs, Repairs(), total)


def read_trace(path: str | Path, **swim_options: Any) -> tuple[str, list[TraceJob]]:
    """Read a SWIM or Rumen trace, whichever the content is (gzip'd or not): (format, jobs)."""
    got = load_trace(path, **swim_options)
    return got.kind, got.jobs


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
    for i, rack in enumerate(list_field(root, "children", f"{fname} root")):
        where = f"{fname} rack {i}"
        if not isinstance(rack, dict) or not isinstance(rack.get("name"), str) or not rack["name"]:
            raise TraceError(f"{where}: field name is missing or not a string")
        if any(rack["name"] == name for name, _ in racks):
            raise TraceError(f"{where}: rack {rack['name']!r} is named twice")
        hosts = []
        for j, host in enumerate(list_field(rack, "children", where)):
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


def _swim_number(text: str, where: str, field: str, *, whole: bool) -> float | int:
    """A finite, non-negative number; byte counts must be whole (SWIM parses them with Long.parseLong)."""
    try:
        value = float(text)
    except ValueError:
        raise fail(where, field, text, "is not a number") from None
    if not math.isfinite(value):
        raise fail(where, field, text, "is not a finite number")
    if value < 0:
        raise fail(where, field, text, "is negative")
    if not whole:
        return value
    if not value.is_integer():
        raise fail(where, field, text, "is not a whole number of bytes")
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
    )[0]


def _parse_swim(
    text: str,
    fname: str,
    *,
    original_nodes: int = 600,
    emulated_nodes: int = 30,
    block_mb: float = 64.0,
    bytes_per_reduce: int = SWIM_BYTES_PER_REDUCE,
    swim_reduce_cap: bool = True,
    max_jobs: int | None = None,
) -> tuple[list[TraceJob], int]:
    """The first `max_jobs` rows' jobs (all when None), validated, and the number of job rows in the file."""
    if original_nodes <= 0 or emulated_nodes <= 0 or block_mb <= 0 or bytes_per_reduce <= 0:
        raise ValueError("original_nodes, emulated_nodes, block_mb and bytes_per_reduce must be positive")
    jobs: list[TraceJob] = []
    lines = text.splitlines()
    for lineno, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        if max_jobs is not None and len(jobs) >= max_jobs:  # the rest is counted, not validated
            return jobs, len(jobs) + sum(1 for rest in lines[lineno - 1 :] if rest.strip())
        where = f"{fname} line {lineno}"
        cols = line.rstrip("\r\n").split("\t")
        if len(cols) not in (6, 7):
            raise TraceError(f"{where}: expected 6 or 7 tab-separated fields, got {len(cols)}")
        name = cols[0].strip()
        if not name:
            raise fail(where, "job_name", cols[0], "is empty")
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
            raise fail(where, "map_input_bytes", cols[3], f"makes {maps:,} maps, more than {MAX_MAPS_PER_JOB:,}")
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
    return jobs, len(jobs)


def median_or(values: list[float], default: float) -> float:
    """The median of the known values, else `default` (sizing tasks a trace did not time)."""
    return statistics.median(values) if values else default
