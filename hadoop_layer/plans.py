"""The phases of a map or reduce attempt, from its split, its slot's memory and Hadoop's settings.

Map (algorithms.md 2.2): JVM start, then the input in up to four chunks of read -> map -> spill (reading
and mapping are pipelined in Hadoop; chunks approximate that), then, with more than one spill, the
merge (read spills, merge-sort CPU, write the final output). Map-only jobs write their output to HDFS
instead (local replica + pipeline to the other replicas over the network).
Reduce (2.3): JVM start, shuffle (network; an open phase fed as maps finish), then the on-disk
merges, the final merge read, the reduce function, and the replicated output write.
Progress marks follow Hadoop 1.x (2.4): a map's progress is the input consumed (spread over read, map and
spill writes, which in Hadoop overlap); a reduce's is (copy + sort + reduce) / 3.
"""

from __future__ import annotations

from itertools import accumulate

from hadoop_layer.config import HadoopConfig
from hadoop_layer.hdfs import Locality
from hadoop_layer.spill import map_spill, reduce_merge
from hadoop_layer.tasks import Task
from vcloud.work import Phase

Mark = tuple[float, float]  # progress score at a phase's start and end (WorkItem.progress_marks)
MAX_CHUNKS = 1  # each chunk adds phase boundaries, and each boundary costs up to one tick


def _keep(phases: list[Phase], marks: list[Mark]) -> tuple[list[Phase], list[Mark]]:
    """Drop empty phases: each would cost a tick for nothing."""
    kept = [(p, m) for p, m in zip(phases, marks, strict=True) if p.amount > 0]
    return [p for p, _ in kept], [m for _, m in kept]


def map_plan(task: Task, locality: Locality, io_sort_mb: float, cfg: HadoopConfig, core_mhz: float, reduces: int):
    """Phases, progress marks, spill count and final output MB of a map attempt."""
    phases = [Phase.cpu("setup", cfg.jvm_start_core_s * core_mhz)]
    marks = [(0.0, 0.0)]
    read = Phase.read if locality == Locality.NODE else Phase.net
    if reduces == 0:
        chunks, spills, out_mb = 1, 0, task.output_mb
        phases += [
            read("read", task.input_mb),
            Phase.cpu("map", task.cpu_mc),
            Phase.write("hdfs-write", out_mb),
            Phase.net("hdfs-replicate", out_mb * (cfg.replication - 1)),
        ]
        marks += [(0.0, 0.5), (0.5, 1.0), (1.0, 1.0), (1.0, 1.0)]
        return (*_keep(phases, marks), spills, out_mb)
    plan = map_spill(
        task.output_mb,
        task.output_records,
        io_sort_mb=io_sort_mb,
        spill_percent=cfg.io_sort_spill_percent,
        record_percent=cfg.io_sort_record_percent,
        sort_factor=cfg.io_sort_factor,
        combine_ratio=task.job.profile.combine_ratio,
    )
    # Spills happen while the input is consumed (collection blocks on a full buffer), so the input consumed
    # (Hadoop's map progress) moves through the read, the map and the spill writes, in proportion to their MB:
    # a map that spills much progresses slowly, as a real one does.
    # (plain floats, not NumPy: this runs at every map launch; the sums are left to right, as NumPy's of 3 are)
    chunks = max(1, min(plan.spills, MAX_CHUNKS))
    weights = [task.input_mb / chunks, task.input_mb / chunks, plan.spill_write_mb / chunks]
    total = max((weights[0] + weights[1] + weights[2]) * chunks, 1e-12)
    edges = [0.0, *(float(x / total) for x in accumulate(weights * chunks))]
    for k in range(chunks):
        phases += [
            read("read", task.input_mb / chunks),
            Phase.cpu("map", task.cpu_mc / chunks),
            Phase.write("spill", plan.spill_write_mb / chunks),
        ]
        marks += [(edges[3 * k + i], edges[3 * k + i + 1]) for i in range(3)]
    if plan.spills > 1:
        phases += [
            Phase.read("merge-read", plan.merge_read_mb),
            Phase.cpu("merge", plan.merge_read_mb * cfg.merge_cpu_mc_per_mb),
            Phase.write("merge-write", plan.merge_write_mb),
        ]
        marks += [(1.0, 1.0)] * 3
    return (*_keep(phases, marks), plan.spills, plan.output_mb)


def reduce_start_plan(available_mb: float, cfg: HadoopConfig, core_mhz: float):
    """The first phases of a reduce attempt: JVM start and the shuffle of what is available so far."""
    phases = [Phase.cpu("setup", cfg.jvm_start_core_s * core_mhz), Phase.net("shuffle", available_mb, open=True)]
    marks = [(0.0, 0.0)] * len(phases)
    return phases, marks


def reduce_finish_plan(segments_mb: list[float], task: Task, heap_mb: float, cfg: HadoopConfig):
    """Everything after the shuffle: merges (2.3), reduce CPU, replicated output. Returns phases, marks, input MB."""
    merge = reduce_merge(
        segments_mb,
        heap_mb=heap_mb,
        shuffle_input_buffer_percent=cfg.shuffle_input_buffer_percent,
        shuffle_merge_percent=cfg.shuffle_merge_percent,
        inmem_merge_threshold=cfg.inmem_merge_threshold,
        sort_factor=cfg.io_sort_factor,
    )
    profile = task.job.profile
    input_mb = float(sum(segments_mb))
    out_mb = input_mb * profile.reduce_selectivity
    third = 1.0 / 3.0
    phases = [
        Phase.write("merge-write", merge.disk_write_mb),
        Phase.read("merge-read", merge.disk_read_mb),
        Phase.cpu("sort", merge.disk_read_mb * cfg.merge_cpu_mc_per_mb),
        Phase.cpu("reduce", input_mb * profile.reduce_cpu_mc_per_mb),
        Phase.write("hdfs-write", out_mb),
        Phase.net("hdfs-replicate", out_mb * (cfg.replication - 1)),
    ]
    marks = [
        (third, 0.5),
        (0.5, 2 * third - 0.05),
        (2 * third - 0.05, 2 * third),
        (2 * third, 1.0),
        (1.0, 1.0),
        (1.0, 1.0),
    ]
    phases, marks = _keep(phases, marks)
    return phases, marks, input_mb, out_mb
