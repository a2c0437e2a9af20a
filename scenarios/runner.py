"""Running a scenario's model to its end, and writing a run directory.

The command line, sweeps and Mesa's batch_run model (`batch_model.py`, which the dashboard steps), the report and
the scenarios that run pilot models all run models through here, so a run advances the same way everywhere.
"""

from __future__ import annotations

import functools
import gc
import json
import math
import shutil
import sys
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from scenarios.glossary import units
from scenarios.outputs import commit_dir, temp_dir
from scenarios.provenance import provenance

if TYPE_CHECKING:
    import pandas as pd

    from vcloud import CloudModel


FREEZE_EVERY = 10  # chunks
# the young generation's collection threshold while a model runs (Python's default is 700): a run allocates objects
# that mostly die young (plans, streams, lists per tick), and a collection every 700 net allocations walked the
# survivors of each again and again (2.8 % of a SWIM day's CPU, 8,870 young and 998 middle collections)
GC_YOUNG_THRESHOLD = 10_000


def unfinished(model: CloudModel, horizon_s: float | None) -> bool:
    """Has the model more to do: it runs (a Hadoop model stops itself when its jobs end) and its horizon is ahead."""
    return model.running and (horizon_s is None or model.time < horizon_s)


def advance(model: CloudModel, horizon_s: float | None, chunk_s: float = 30.0) -> float:
    """Run one chunk of `chunk_s` simulated seconds, cut at the horizon; returns the seconds asked for."""
    step = chunk_s if horizon_s is None else min(chunk_s, horizon_s - float(model.time))
    model.run_for(step)
    return step


def run_model(
    model: CloudModel, horizon_s: float | None, progress: bool = True, chunk_s: float = 30.0, stops_itself: bool = False
) -> None:
    """Advance to `horizon_s` (or until the model stops itself) with a progress bar in simulated seconds.

    `stops_itself`: the horizon is only a limit (a Hadoop run ends when its jobs do), so the bar has no total.
    The objects that exist before the run (modules, the built model) are frozen out of the cyclic garbage
    collector while it runs: a full collection would walk all of them again and again (0.2-0.3 s of a
    1,000-tick flexslot run) for nothing, as none of them become garbage during the run. Every `FREEZE_EVERY` chunks
    the objects the run made and kept are frozen as well: a long run's attempts and plans were walked by every full
    collection (13 % of a SWIM day's CPU on 600 slaves)."""
    from tqdm import tqdm

    if progress:
        from vcloud.numerics import say_if_compiling  # vcloud (and Mesa) load with the model, not with the CLI

        say_if_compiling()
    model.start()
    if horizon_s is not None and math.isfinite(horizon_s):
        model.tracer.reserve(math.ceil((horizon_s - float(model.time)) / model.tracer.interval_s) + 2)
    total = None if stops_itself else horizon_s
    gc.freeze()
    thresholds = gc.get_threshold()
    gc.set_threshold(GC_YOUNG_THRESHOLD, *thresholds[1:])
    try:
        with tqdm(total=total, unit="sim-s", disable=not progress or None, leave=False, mininterval=0.5) as bar:
            chunks = 0
            while unfinished(model, horizon_s):
                bar.update(advance(model, horizon_s, chunk_s))
                chunks += 1
                if chunks % FREEZE_EVERY == 0:  # what the run made and kept (its attempts, plans) is frozen too
                    gc.collect(1)  # the young garbage first, so that no cycle is frozen
                    gc.freeze()
    finally:
        gc.set_threshold(*thresholds)
        gc.unfreeze()
    release_freed_memory()


def release_freed_memory() -> None:
    """Hand the C heap's free pages back to the system (glibc's `malloc_trim`; nothing where there is none). A long
    run frees much of what it made (its attempts' objects, the jobs' splits), and glibc keeps the holes resident:
    the tables built after the run (in part by Arrow's own allocator, which cannot reuse them) came on top of them
    (33 MB at the end of a SWIM day on 600 slaves, issue 16). Arrow's own pool (mimalloc) keeps what a table's
    conversion freed as well: it is asked to give it back first, if Arrow is loaded."""
    arrow = sys.modules.get("pyarrow")
    if arrow is not None:
        arrow.default_memory_pool().release_unused()
    trim = _malloc_trim()
    if trim is not None:
        trim(0)


@functools.cache
def _malloc_trim() -> Callable[[int], int] | None:
    import ctypes
    import ctypes.util

    try:
        return ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6").malloc_trim
    except (OSError, AttributeError):  # not glibc
        return None


def write_run(out: Path, summary: dict[str, Any], config: dict[str, Any], frames: dict) -> None:
    """Write everything into a temporary sibling directory, then rename it to `out` in one step. `frames`: name ->
    frame, or what builds it: the frame (`Scenario.frame_makers`) or its parts in order (`Scenario.part_makers`).
    Each table is built, written and dropped in turn (a part at a time when given in parts), so only one table (or
    part) exists at a time."""
    import pandas as pd

    tmp = temp_dir(out)
    release_freed_memory()  # what the summary's figures freed, before the tables come on top
    try:
        with_provenance = {**summary, "provenance": provenance()}
        (tmp / "summary.json").write_text(json.dumps(_null_non_finite(with_provenance), indent=1))
        (tmp / "config.json").write_text(json.dumps(_finite_json(config), indent=1))
        for name in list(frames):
            made = frames[name]
            if callable(made):
                made = made()
            write_table(tmp / f"{name}.parquet", [made] if isinstance(made, pd.DataFrame) else made, units(name))
            del made
            release_freed_memory()  # the next table is built in the holes this one left
        commit_dir(tmp, out)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise


def write_table(path: Path, parts: Iterable[pd.DataFrame], column_units: dict[str, str] | None = None) -> None:
    """One Parquet file of the frames `parts` yields, in order: it reads back as their concatenation (with a fresh
    index), as `DataFrame.to_parquet(index=False)` of that frame would write it (the same Arrow schema, pandas
    metadata and compression), but a part at a time: each is converted to Arrow, written and dropped before the
    next is built. The schema is the first part's; a later part of other types is an error, not a cast. The
    schema's metadata also holds the columns' units (`vcloud.units`, scenarios/glossary.py) and the provenance
    (`vcloud.provenance`: package version, git commit)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    ours = {"vcloud.provenance": json.dumps(provenance()), "vcloud.units": json.dumps(column_units or {})}
    writer = None
    try:
        for part in parts:
            table = pa.Table.from_pandas(part, preserve_index=False)
            kept = {**table.schema.metadata, **ours}
            if part.attrs:  # as pandas keeps them
                kept["PANDAS_ATTRS"] = json.dumps(part.attrs)
            table = table.replace_schema_metadata(kept)
            del part
            if writer is None:
                writer = pq.ParquetWriter(path, table.schema, compression="snappy")
            elif not table.schema.equals(writer.schema, check_metadata=True):
                raise ValueError(f"{path.name}: a part's columns differ from the first's:\n{table.schema}")
            writer.write_table(table)
            del table
            release_freed_memory()  # else each part's conversion leaves some behind (52 MB over a trace's ten parts)
        if writer is None:
            raise ValueError(f"{path.name}: no part to write (an empty table is one empty frame)")
    finally:
        if writer is not None:
            writer.close()


def _null_non_finite(value: Any) -> Any:
    """`value` with its NaN and infinite floats as None: JSON has no such numbers (`JSON.parse` refuses the NaN
    Python's json writes). A scenario that can produce them says why in its summary (trace-replay's
    `null_reasons`); this is the last guard for the others."""
    if isinstance(value, dict):
        return {k: _null_non_finite(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_null_non_finite(v) for v in value]
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return value


def _finite_json(value: Any) -> Any:
    """`value` with its non-finite floats as the strings "inf", "-inf", "nan": JSON has no such numbers (and
    `--config` refuses Python's Infinity), while a setting's default may be unlimited."""
    if isinstance(value, dict):
        return {k: _finite_json(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_finite_json(v) for v in value]
    if isinstance(value, float) and not math.isfinite(value):
        return str(value)
    return value
