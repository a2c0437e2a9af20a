"""The phases of a map or reduce attempt, from its split, its slot's memory, its route and Hadoop's settings.

Pipelined (`hadoop.pipelined_tasks`, the default; algorithms.md 10.2): a map is JVM start, one phase that
reads its split (locally or from the replica's DataNode), maps and spills at one rate set by its
bottleneck, the flush of the last spill, and the merge of spills (read, merge-sort CPU and write at once).
A map-only map writes its output down the HDFS pipeline as it maps. A reduce is JVM start, the shuffle (an
open phase fed as maps finish, writing its merges to disk as it fetches), the rest of the merge writes, the
intermediate merge passes, and one phase in which the last merge pass feeds the reduce function whose output
goes down the HDFS pipeline.
Sequential (the model before pipelining, for comparison): read -> map -> spill -> merge-read -> merge ->
merge-write, and for reduces merge-write -> merge-read -> sort -> reduce -> output write, one resource each.
Progress marks follow Hadoop 1.x (2.4): a map's progress is the input consumed; a reduce's is
(copy + sort + reduce) / 3.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from itertools import accumulate

from hadoop_layer.config import HadoopConfig
from hadoop_layer.datanode import read_streams, write_streams
from hadoop_layer.hdfs import Locality
from hadoop_layer.jvms import jvm_start
from hadoop_layer.spill import MapSpill, ReduceMerge, map_spill, reduce_merge
from hadoop_layer.tasks import COMMIT, Task
from vcloud.work import Device, Kind, Phase, Stream, disk, nic

Mark = tuple[float, float]  # progress score at a phase's start and end (WorkItem.progress_marks)


@dataclass(frozen=True, slots=True)
class Route:
    """Where an attempt's HDFS data comes from and goes to (hadoop_layer/datanode.py): the VM row of the replica
    it reads (-1: its own node), the VM rows of its output's further replicas, and whether those DataNodes'
    work is charged to them (`hadoop.datanode_serving`)."""

    source_vm: int = -1
    pipeline_vms: tuple[int, ...] = ()
    serving: bool = True
    # page-cache files (hadoop_layer/localfiles.py; -1: none): the split's replica read, the attempt's spills or
    # reduce merges, the node's map outputs, and the HDFS output on this node and on each pipeline VM
    source_file: int = -1
    scratch_file: int = -1
    map_output_file: int = -1
    output_file: int = -1
    pipeline_files: tuple[int, ...] = ()
    # whether the read, and each hop into a pipeline VM, crosses between racks (through their uplinks)
    source_cross_rack: bool = False
    pipeline_cross_rack: tuple[bool, ...] = ()

    def __init__(
        self,
        source_vm: int = -1,
        pipeline_vms: tuple[int, ...] = (),
        serving: bool = True,
        source_file: int = -1,
        scratch_file: int = -1,
        map_output_file: int = -1,
        output_file: int = -1,
        pipeline_files: tuple[int, ...] = (),
        source_cross_rack: bool = False,
        pipeline_cross_rack: tuple[bool, ...] = (),
    ) -> None:
        """The fields set through their slots, as vcloud's `Stream.__init__` does: a frozen dataclass's own
        `__init__` calls `object.__setattr__` for each of the ten (1.4 us; a route is made at every launch)."""
        s = _ROUTE_SLOTS
        s[0](self, source_vm)
        s[1](self, pipeline_vms)
        s[2](self, serving)
        s[3](self, source_file)
        s[4](self, scratch_file)
        s[5](self, map_output_file)
        s[6](self, output_file)
        s[7](self, pipeline_files)
        s[8](self, source_cross_rack)
        s[9](self, pipeline_cross_rack)

    def reads(self) -> list[Stream]:
        return read_streams(self.source_vm, self.serving, self.source_file, self.source_cross_rack)

    def writes(self, replication: int, per_mb: float = 1.0) -> list[Stream]:
        return write_streams(self.pipeline_vms, self.serving, replication, self.output_file, self.pipeline_files,
                             self.pipeline_cross_rack, per_mb)  # fmt: skip


_ROUTE_SLOTS = tuple(getattr(Route, f).__set__ for f in Route.__slots__)  # the fields' slot setters, in order
LOCAL = Route()


def _keep(phases: list[Phase], marks: list[Mark]) -> tuple[list[Phase], list[Mark]]:
    """Drop empty phases: each would cost a tick for nothing. (Most plans have none: those are kept as they are.)"""
    for p in phases:
        if not p.amount > 0:
            break
    else:
        return phases, marks
    kept = [(p, m) for p, m in zip(phases, marks, strict=True) if p.amount > 0]
    return [p for p, _ in kept], [m for _, m in kept]


@lru_cache(maxsize=4096, typed=True)
def _cached_spill(
    output_mb: float,
    records: float,
    io_sort_mb: float,
    spill_percent: float,
    record_percent: float,
    sort_factor: int,
    combine_ratio: float,
) -> MapSpill:
    return map_spill(output_mb, records, io_sort_mb=io_sort_mb, spill_percent=spill_percent,
                     record_percent=record_percent, sort_factor=sort_factor, combine_ratio=combine_ratio)  # fmt: skip


def spill_of(task: Task, io_sort_mb: float, cfg: HadoopConfig) -> MapSpill:
    """`map_spill` of a map of `task`'s output in a sort buffer of `io_sort_mb`. The maps of a job mostly have the same
    output (a SWIM day: 300 shapes in 130,000 launches), so the (frozen) results are kept by their arguments and
    their types; a zero output is worked out each time (0.0 and -0.0 are one key but not one result)."""
    args = (task.output_mb, task.output_records, io_sort_mb, cfg.io_sort_spill_percent, cfg.io_sort_record_percent,
            cfg.io_sort_factor, task.job.profile.combine_ratio)  # fmt: skip
    if task.output_mb == 0:
        return _cached_spill.__wrapped__(*args)
    return _cached_spill(*args)


def _committed(phases: list[Phase], marks: list[Mark], out_mb: float, cfg: HadoopConfig):
    """A plan that wrote `out_mb` of HDFS output ends in the task commit (`hadoop.task_commit`; tasks.COMMIT)."""
    if cfg.task_commit and out_mb > 0:
        return [*phases, COMMIT], [*marks, (1.0, 1.0)]
    return phases, marks


def hdfs_read(name: str, mb: float, route: Route) -> Phase:
    """An HDFS read of `mb` on its own: from the local datastore, or served by the replica's DataNode."""
    if route.source_vm >= 0 and not route.serving:
        return Phase.net(name, mb)
    return _io(name, mb, route.reads())


def _io(name: str, mb: float, streams: list[Stream]) -> Phase:
    """`mb` through `streams` on its own (a plain disk phase when there is one stream, of no file, on this node)."""
    if len(streams) == 1 and streams[0].file < 0 and streams[0].vm < 0 and streams[0].device == Device.DISK:
        return Phase.write(name, mb) if streams[0].write else Phase.read(name, mb)
    return Phase.pipe(name, mb, 0.0, streams)


def _write(mb: float, route: Route, cfg: HadoopConfig) -> tuple[list[Phase], list[Mark]]:
    """An HDFS write of `mb` on its own (the task's output after its last record)."""
    if not route.serving:
        phases = [_io("hdfs-write", mb, [disk(write=True, file=route.output_file)]),
                  Phase.net("hdfs-replicate", mb * (cfg.replication - 1))]  # fmt: skip
        return phases, [(1.0, 1.0)] * 2
    return [_io("hdfs-write", mb, route.writes(cfg.replication))], [(1.0, 1.0)]


_MAP_MARKS = ((0.0, 1.0), (1.0, 1.0))  # a pipelined map's map (its input) and last spill, after its JVM's phases


def map_plan(
    task: Task,
    locality: Locality,
    io_sort_mb: float,
    cfg: HadoopConfig,
    core_mhz: float,
    reduces: int,
    route: Route = LOCAL,
    head: list[Phase] | None = None,
):
    """Phases, progress marks, spill count and final output MB of a map attempt. `head`: its child JVM's phases
    (hadoop_layer/jvms.py; default: a new JVM's start, launched at a tick)."""
    phases = list(jvm_start(cfg, core_mhz) if head is None else head)
    marks = [(0.0, 0.0)] * len(phases)
    if reduces == 0:
        spills, out_mb = 0, task.output_mb
        if cfg.pipelined_tasks and task.input_mb > 0:  # records are mapped as they are read, output written as made
            streams = route.reads() + route.writes(cfg.replication, out_mb / task.input_mb)
            phases.append(Phase.pipe("map", task.input_mb, task.cpu_mc / task.input_mb, streams))
            marks.append((0.0, 1.0))
            return (*_committed(*_keep(phases, marks), out_mb, cfg), spills, out_mb)
        write, write_marks = _write(out_mb, route, cfg)
        phases += [hdfs_read("read", task.input_mb, route), Phase.cpu("map", task.cpu_mc), *write]
        marks += [(0.0, 0.5), (0.5, 1.0), *write_marks]
        return (*_committed(*_keep(phases, marks), out_mb, cfg), spills, out_mb)
    plan = spill_of(task, io_sort_mb, cfg)
    input_mb, spills = task.input_mb, plan.spills
    if cfg.pipelined_tasks and input_mb > 0:
        # MapTask (algorithms.md 10.2): the record reader streams the split while the mapper runs and collects;
        # the SpillThread writes each full buffer while the mapper goes on, so all spills but the last overlap
        # the map (the mapper waits only when the spill writer falls behind: the shared rate's bottleneck);
        # the last one is written by flush() after the last record; then mergeParts. Progress (2.4) is the
        # input consumed: 1.0 when the last record is read.
        overlapped = plan.spill_write_mb * (spills - 1) / spills if spills > 1 else 0.0
        spill_file = route.scratch_file if spills > 1 else route.map_output_file  # one spill is file.out
        streams = route.reads()
        if overlapped:  # (a map that spills once has no spill beside it: Phase.pipe would drop the empty stream)
            streams.append(disk(overlapped / input_mb, write=True, file=spill_file))
        phases.append(Phase.pipe("map", input_mb, task.cpu_mc / input_mb, streams))
        phases.append(_io("spill", plan.spill_write_mb - overlapped, [disk(write=True, file=spill_file)]))
        if spills > 1:
            write_per_mb = plan.merge_write_mb / plan.merge_read_mb if plan.merge_read_mb > 0 else 0.0
            streams = [disk(file=route.scratch_file), disk(write_per_mb, write=True, file=route.map_output_file)]
            phases.append(Phase.pipe("merge", plan.merge_read_mb, cfg.merge_cpu_mc_per_mb, streams))
            return (*_keep(phases, [*marks, *_MAP_MARKS, (1.0, 1.0)]), spills, plan.output_mb)
        return (*_keep(phases, [*marks, *_MAP_MARKS]), spills, plan.output_mb)
    # Sequential phases (pipelined_tasks off): the input consumed (Hadoop's map progress) moves through the
    # read, the map and the spill writes, in proportion to their MB.
    # (plain floats, not NumPy: this runs at every map launch; the sums are left to right, as NumPy's of 3 are)
    weights = [task.input_mb, task.input_mb, plan.spill_write_mb]
    total = max(weights[0] + weights[1] + weights[2], 1e-12)
    edges = [0.0, *(float(x / total) for x in accumulate(weights))]
    spill_file = route.scratch_file if plan.spills > 1 else route.map_output_file
    phases += [
        hdfs_read("read", task.input_mb, route),
        Phase.cpu("map", task.cpu_mc),
        _io("spill", plan.spill_write_mb, [disk(write=True, file=spill_file)]),
    ]
    marks += [(edges[i], edges[i + 1]) for i in range(3)]
    if plan.spills > 1:
        phases += [
            _io("merge-read", plan.merge_read_mb, [disk(file=route.scratch_file)]),
            Phase.cpu("merge", plan.merge_read_mb * cfg.merge_cpu_mc_per_mb),
            _io("merge-write", plan.merge_write_mb, [disk(write=True, file=route.map_output_file)]),
        ]
        marks += [(1.0, 1.0)] * 3
    return (*_keep(phases, marks), plan.spills, plan.output_mb)


def reduce_start_plan(
    available_mb: float,
    cfg: HadoopConfig,
    core_mhz: float,
    merge_write_per_mb: float = 0.0,
    merge_file: int = -1,
    head: list[Phase] | None = None,
):
    """The first phases of a reduce attempt: its child JVM's (`head`, as `map_plan`'s) and the shuffle of what is
    available so far. The shuffle's index is the number of the JVM's phases (`TaskAttempt.shuffle_index`).

    Pipelined (`hadoop.pipelined_tasks`), the shuffle writes `merge_write_per_mb` MB to the local disk per MB
    fetched while it fetches (ReduceCopier's in-memory and on-disk mergers run beside the copiers; 10.2)."""
    if cfg.pipelined_tasks and merge_write_per_mb > 0:
        shuffle = Phase("shuffle", Kind.PIPE, available_mb, open=True,
                        streams=(nic(), disk(merge_write_per_mb, write=True, file=merge_file)))  # fmt: skip
    else:
        shuffle = Phase.net("shuffle", available_mb, open=True)
    phases = [*(jvm_start(cfg, core_mhz) if head is None else head), shuffle]
    marks = [(0.0, 0.0)] * len(phases)
    return phases, marks


def reduce_merge_plan(segments_mb: list[float], heap_mb: float, cfg: HadoopConfig) -> ReduceMerge:
    """The merges of a reduce's shuffle and sort (2.3) for these map-output segments, in fetch order."""
    return reduce_merge(
        segments_mb,
        heap_mb=heap_mb,
        shuffle_input_buffer_percent=cfg.shuffle_input_buffer_percent,
        shuffle_merge_percent=cfg.shuffle_merge_percent,
        inmem_merge_threshold=cfg.inmem_merge_threshold,
        sort_factor=cfg.io_sort_factor,
    )


def reduce_finish_plan(
    merge: ReduceMerge,
    task: Task,
    cfg: HadoopConfig,
    route: Route = LOCAL,
    written_in_shuffle_mb: float = 0.0,
    reduce_cpu_mc: float | None = None,
):
    """Everything after the shuffle: merges (2.3), reduce CPU, replicated output. Returns phases, marks, input MB.
    The reduce function's CPU is `reduce_cpu_mc` (a replayed trace's), else the profile's per MB of input.

    Pipelined: what the shuffle did not write already is written first; the intermediate merge passes read (and
    merge) their segments; the last pass streams into the reduce function, whose output goes down the HDFS
    pipeline as it is made (one phase over the reduce input: its progress is the reduce third, 2.4)."""
    profile = task.job.profile
    input_mb = merge.shuffle_mb
    out_mb = input_mb * profile.reduce_selectivity
    reduce_cpu = input_mb * profile.reduce_cpu_mc_per_mb if reduce_cpu_mc is None else reduce_cpu_mc
    third = 1.0 / 3.0
    if cfg.pipelined_tasks and input_mb > 0:
        final_read = merge.final_disk_mb
        cpu = final_read * cfg.merge_cpu_mc_per_mb + reduce_cpu
        merges = route.scratch_file
        streams = [disk(final_read / input_mb, file=merges), *route.writes(cfg.replication, out_mb / input_mb)]
        intermediate = merge.disk_read_mb - final_read
        phases = [
            _io("merge-write", max(merge.disk_write_mb - written_in_shuffle_mb, 0.0), [disk(write=True, file=merges)]),
            Phase.pipe("merge", intermediate, cfg.merge_cpu_mc_per_mb, [disk(file=merges)])
            if intermediate > 0
            else None,
            Phase.pipe("reduce", input_mb, cpu / input_mb, streams),
        ]
        marks = [(third, 0.5), (0.5, 2 * third), (2 * third, 1.0)]
        kept = [(p, m) for p, m in zip(phases, marks, strict=True) if p is not None]
        phases, marks = _committed(*_keep([p for p, _ in kept], [m for _, m in kept]), out_mb, cfg)
        return phases, marks, input_mb, out_mb
    write, write_marks = _write(out_mb, route, cfg)
    phases = [
        _io("merge-write", merge.disk_write_mb, [disk(write=True, file=route.scratch_file)]),
        _io("merge-read", merge.disk_read_mb, [disk(file=route.scratch_file)]),
        Phase.cpu("sort", merge.disk_read_mb * cfg.merge_cpu_mc_per_mb),
        Phase.cpu("reduce", reduce_cpu),
        *write,
    ]
    marks = [
        (third, 0.5),
        (0.5, 2 * third - 0.05),
        (2 * third - 0.05, 2 * third),
        (2 * third, 1.0),
        *write_marks,
    ]
    phases, marks = _committed(*_keep(phases, marks), out_mb, cfg)
    return phases, marks, input_mb, out_mb


# ---- uncontended times (trace replay sizes attempts to their recorded runtimes with these) ---------------------
def phase_uncontended_s(phase: Phase, core_mhz: float, disk_mbps: float, nic_mbps: float) -> float:
    """Seconds `phase` takes alone on its nodes: one thread on a core, each datastore and NIC to itself (the
    streams on one device of one node add up), rack uplinks free, no page cache; pipelined: its bottleneck's."""
    if phase.kind == Kind.WAIT:
        return phase.amount
    cpu, streams = phase.needs()
    per_device: dict[tuple[Device, int], float] = {}
    for st in streams:
        per_device[(st.device, st.vm)] = per_device.get((st.device, st.vm), 0.0) + st.mb_per_unit
    rates = {Device.DISK: disk_mbps, Device.NIC: nic_mbps}
    io = max((mb / rates[d] for (d, _), mb in per_device.items() if d in rates), default=0.0)
    return phase.amount * max(cpu / core_mhz, io)


def cpu_for_runtime(
    phases: list[Phase], name: str, runtime_s: float, core_mhz: float, disk_mbps: float, nic_mbps: float
) -> float:
    """Megacycles to add to phase `name` so that all of `phases` take `runtime_s` alone (phase_uncontended_s).
    Pipelined, the CPU hides behind the phase's I/O until it is the bottleneck; a runtime shorter than the
    other phases and this one's I/O can take gets no CPU (and is exceeded)."""
    names = [p.name for p in phases]
    i = names.index(name) if name in names else -1  # absent: a CPU phase of none yet (plans drop empty phases)
    others = sum(phase_uncontended_s(p, core_mhz, disk_mbps, nic_mbps) for k, p in enumerate(phases) if k != i)
    own = phases[i].needs()[0] * phases[i].amount if i >= 0 else 0.0
    return max((runtime_s - others) * core_mhz - own, 0.0)
