"""The knobs of a traced job's own configuration (Rumen `jobProperties`, LoggedJob `heapMegabytes`) the emulator has.

Rumen keeps each job's configuration as recorded (JobConfigurationParser; ZombieJob.getJobConf copies it into the
job's JobConf), under the Hadoop 1.x names or the 2.x names that replaced them (Hadoop's DeprecatedProperties
table). A 2.x name wins over its 1.x name, as a 2.x job reads it. What the emulator has per job: reduce slow start,
the sort buffer (`io.sort.mb`) and the task heap (`-Xmx` of the child JVM options); speculation on/off per kind.
Knobs the emulator has only for the whole cluster, or not at all (JVM reuse), are listed as recorded but not
honoured. A value Hadoop could not have run with (a slow start of 1.5, no -Xmx) is a repaired anomaly: ignored.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass

# (1.x name, 2.x name) of each knob read here (mapred-default.xml; DeprecatedProperties)
SLOWSTART = ("mapred.reduce.slowstart.completed.maps", "mapreduce.job.reduce.slowstart.completedmaps")
IO_SORT_MB = ("io.sort.mb", "mapreduce.task.io.sort.mb")
CHILD_OPTS = ("mapred.child.java.opts",)
MAP_OPTS = ("mapred.map.child.java.opts", "mapreduce.map.java.opts")
REDUCE_OPTS = ("mapred.reduce.child.java.opts", "mapreduce.reduce.java.opts")
MAP_SPECULATIVE = ("mapred.map.tasks.speculative.execution", "mapreduce.map.speculative")
REDUCE_SPECULATIVE = ("mapred.reduce.tasks.speculative.execution", "mapreduce.reduce.speculative")
# recorded knobs the emulator does not take per job: its value for the cluster (hadoop.*) holds for every job
NOT_PER_JOB = (
    ("mapred.job.reuse.jvm.num.tasks", "mapreduce.job.jvm.numtasks"),  # no JVM reuse in the emulator
    ("io.sort.factor", "mapreduce.task.io.sort.factor"),
    ("io.sort.spill.percent", "mapreduce.map.sort.spill.percent"),
    ("mapred.reduce.parallel.copies", "mapreduce.reduce.shuffle.parallelcopies"),
    ("mapred.job.shuffle.input.buffer.percent", "mapreduce.reduce.shuffle.input.buffer.percent"),
    ("mapred.job.shuffle.merge.percent", "mapreduce.reduce.shuffle.merge.percent"),
    ("mapred.map.max.attempts", "mapreduce.map.maxattempts"),
    ("mapred.reduce.max.attempts", "mapreduce.reduce.maxattempts"),
)
HEAP_MB = (16.0, 65536.0)  # the heaps the emulator takes (HadoopConfig.child_heap_mb)
_XMX = re.compile(r"(?:^|\s)-Xmx(\d+)([kKmMgG]?)(?=\s|$)")
_UNIT_MB = {"": 1 / 2**20, "k": 1 / 1024, "m": 1.0, "g": 1024.0}


@dataclass(frozen=True)
class JobConf:
    """A job's own values; None: not recorded (or ignored as unreadable), the cluster's `hadoop.*` value holds."""

    reduce_slowstart: float | None = None
    io_sort_mb: float | None = None
    map_heap_mb: float | None = None
    reduce_heap_mb: float | None = None
    map_speculative: bool | None = None
    reduce_speculative: bool | None = None
    not_honoured: tuple[str, ...] = ()  # names of recorded knobs the emulator has only for the whole cluster

    @property
    def honoured(self) -> dict[str, float | bool]:
        """The knobs this job sets, by the emulator's names."""
        return {k: v for k, v in self.__dict__.items() if k != "not_honoured" and v is not None}


def xmx_mb(opts: str) -> float | None:
    """The heap of JVM options (the last -Xmx, as the JVM takes it; bytes without a unit), None without one."""
    found = _XMX.findall(opts)
    if not found:
        return None
    digits, unit = found[-1]
    return int(digits) * _UNIT_MB[unit.lower()]


def _boolean(text: str) -> bool | None:
    """Configuration.getBoolean: "true" or "false", any case, else the default (here: None)."""
    low = text.strip().lower()
    return True if low == "true" else False if low == "false" else None


def job_conf(props: Mapping[str, object], heap_megabytes: float | None, note: Callable[[str, str], None]) -> JobConf:
    """The emulator's knobs from a job's recorded properties. `note(kind, detail)` counts a value no Hadoop
    could have run with; the value is then ignored. `heap_megabytes` (LoggedJob, from mapred.child.java.opts)
    stands in when the properties give no -Xmx."""

    def value(names: tuple[str, ...]) -> str | None:
        for name in reversed(names):  # the 2.x name first
            if name in props and props[name] is not None:
                return str(props[name])
        return None

    def number(names: tuple[str, ...], low: float, high: float, *, low_open: bool = False) -> float | None:
        text = value(names)
        if text is None:
            return None
        try:
            x = float(text.strip().rstrip("fF"))  # Configuration.getFloat takes "0.5f" as Java's parseFloat does
        except ValueError:
            x = float("nan")
        if not (low < x <= high if low_open else low <= x <= high):
            note("job_conf_unreadable", f"{names[-1]}={text!r}")
            return None
        return x

    slowstart = number(SLOWSTART, 0.0, 1.0)
    io_sort = number(IO_SORT_MB, 0.0, 2047.0, low_open=True)  # MapTask refuses io.sort.mb > 2047 (and <= 0)
    if io_sort is not None and not io_sort.is_integer():
        note("job_conf_unreadable", f"{IO_SORT_MB[-1]}={io_sort!r} (read as an int)")
        io_sort = None
    child = value(CHILD_OPTS)
    default_heap = xmx_mb(child) if child is not None else None
    if default_heap is None and heap_megabytes is not None and heap_megabytes > 0:
        default_heap = heap_megabytes
    heaps = []
    for names in (MAP_OPTS, REDUCE_OPTS):
        opts = value(names)
        heap = xmx_mb(opts) if opts is not None else None
        heap = heap if heap is not None else default_heap
        if heap is not None and not HEAP_MB[0] <= heap <= HEAP_MB[1]:
            note("job_conf_unreadable", f"{names[-1]} heap of {heap:g} MB")
            heap = None
        heaps.append(heap)
    if io_sort is not None and any(h is not None and io_sort >= h for h in heaps):
        note("job_conf_unreadable", f"{IO_SORT_MB[-1]}={io_sort:g} is not below the heap ({heaps})")
        io_sort = None
    specs = []
    for names in (MAP_SPECULATIVE, REDUCE_SPECULATIVE):
        text = value(names)
        flag = _boolean(text) if text is not None else None
        if text is not None and flag is None:
            note("job_conf_unreadable", f"{names[-1]}={text!r}")
        specs.append(flag)
    unused = tuple(names[-1] for names in NOT_PER_JOB if value(names) is not None)
    return JobConf(slowstart, io_sort, heaps[0], heaps[1], specs[0], specs[1], unused)
