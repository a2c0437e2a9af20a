"""Hadoop 1.x settings the emulator honours, with the defaults of mapred-default.xml (algorithms.md 2.1).

FlexSlot's testbed differs from the stock defaults in slot counts (4 map, 2 reduce per node) and runs
Hadoop 1.1.1, whose heartbeat formula is the 1.1+ one; scenarios set those.
"""

from __future__ import annotations

import math
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator


class HadoopConfig(BaseModel):
    model_config = ConfigDict(extra="forbid")
    map_slots: int = Field(2, ge=0, le=64, description="mapred.tasktracker.map.tasks.maximum")
    reduce_slots: int = Field(2, ge=0, le=64, description="mapred.tasktracker.reduce.tasks.maximum")
    child_heap_mb: float = Field(200.0, ge=16, le=65536, description="mapred.child.java.opts -Xmx")
    jvm_overhead_mb: float = Field(
        64.0, ge=0, le=65536, description="resident memory of a task JVM beyond its heap (ours)"
    )
    io_sort_mb: float = Field(100.0, ge=1, le=2047, description="in the heap; Hadoop 1.x refuses > 2047")
    io_sort_spill_percent: float = Field(0.80, gt=0, le=1, description="io.sort.spill.percent: buffer share to spill")
    io_sort_record_percent: float = Field(0.05, gt=0, lt=1, description="io.sort.record.percent: record metadata")
    io_sort_factor: int = Field(10, ge=2, le=10000, description="io.sort.factor: streams merged at once")
    block_mb: float = Field(64.0, ge=1, le=16384, description="dfs.block.size (Hadoop's smallest: 1 MB)")
    replication: int = Field(3, ge=1, le=16, description="dfs.replication")
    heartbeat_formula: Literal["0.20", "1.0", "1.1"] = Field("1.1", description="JobTracker heartbeat interval rule")
    heartbeats_in_second: int = Field(100, ge=1, le=10000, description="mapred.heartbeats.in.second")
    heartbeat_scaling: float = Field(1.0, ge=0.01, le=100, description="mapreduce.jobtracker.heartbeat.scaling.factor")
    reduce_slowstart: float = Field(0.05, ge=0, le=1, description="mapred.reduce.slowstart.completed.maps")
    parallel_copies: int = Field(5, ge=1, le=1000, description="mapred.reduce.parallel.copies")
    shuffle_input_buffer_percent: float = Field(
        0.70, gt=0, le=1, description="mapred.job.shuffle.input.buffer.percent: heap share for map outputs"
    )
    shuffle_merge_percent: float = Field(
        0.66, gt=0, le=1, description="mapred.job.shuffle.merge.percent: in-memory merge starts here"
    )
    inmem_merge_threshold: int = Field(
        1000, ge=1, le=1_000_000, description="mapred.inmem.merge.threshold: or at this many map outputs"
    )
    max_attempts: int = Field(4, ge=1, le=100, description="mapred.map.max.attempts / reduce.max.attempts")
    task_failure_probability: float = Field(0.0, ge=0, lt=1, description="chance an attempt fails (ours)")
    # ---- what a task pays before and after it computes (docs/model.md "Fixed costs"; hadoop_layer/jvms.py) ----
    jvm_start_core_s: float = Field(
        1.0,
        ge=0,
        le=3600,
        description="CPU a child JVM's start burns, core-seconds: part of jvm_start_wall_s, stretched by CPU "
        "contention. No source gives the split of the start into CPU and the rest [NONE] (ours)",
    )
    jvm_start_wall_s: float = Field(
        3.0,
        ge=0,
        le=3600,
        description="from a task's launch to its child JVM running it, s, on an uncontended core: fork of "
        "taskjvm.sh, JVM start, class loading, the umbilical's getTask. 'about 3 seconds' without JVM reuse (a Q&A "
        "answer, weak); Qubole 2014: 'Launching a new JVM and loading all the classes ... 4-8 seconds'. The CPU "
        "(jvm_start_core_s) then a wait of the rest; 0 (or <= jvm_start_core_s): the CPU only",
    )
    jvm_reuse_tasks: int = Field(
        1,
        ge=-1,
        le=1_000_000,
        description="mapred.job.reuse.jvm.num.tasks: tasks of one job a child JVM runs before it exits (1: no reuse, "
        "Hadoop's default; -1: no limit). JvmManager.reapJvm reuses an idle JVM of the same job only once the "
        "tracker has as many JVMs as slots of that kind; a reused JVM skips the start and waits for its getTask poll",
    )
    child_poll_s: float = Field(
        0.5,
        ge=0,
        le=60,
        description="an idle child JVM's getTask poll (Child.main: Thread.sleep(500), 1500 ms after 5 empty polls): "
        "a reused JVM gets its task at its next poll; 0: at once. A new JVM gets its task on its first call",
    )
    task_commit: bool = Field(
        True,
        description="a task that wrote output (a map of a map-only job, a reduce) commits it (Task.done: "
        "commitPending, then canCommit every 1 s until the JobTracker's approval comes back in the tracker's next "
        "heartbeat reply); off: it ends with its last write",
    )
    outofband_heartbeat: bool = Field(
        False,
        description="mapreduce.tasktracker.outofband.heartbeat (Hadoop 1.x default false): false, the JobTracker hears "
        "of an attempt's end at its tracker's next heartbeat (job completion, slow start, the schedulers' counts and "
        "the next launch in that slot wait for it); true, at once (the extra heartbeat's own launches are not "
        "modelled: the slot is filled at the next regular one)",
    )
    shuffle_serving: bool = Field(
        True, description="charge map-output fetches to the serving node's disk and NIC (ours; hadoop_layer/shuffle.py)"
    )
    shuffle_copiers: bool = Field(
        True,
        description="each reduce fetches from at most parallel_copies nodes at a time, in a random rotation "
        "(ReduceCopier, algorithms.md 2.3; hadoop_layer/copiers.py); off: every pending fetch at once. With "
        "shuffle_serving only (without the servlets no fetch is served)",
    )
    datanode_serving: bool = Field(
        True,
        description="charge remote HDFS reads and the write pipeline to the DataNodes' disks and NICs "
        "(algorithms.md 10.1; hadoop_layer/datanode.py)",
    )
    pipelined_tasks: bool = Field(
        True, description="a task's reading, computing and writing overlap at one bottleneck rate (10.2; plans.py)"
    )
    merge_cpu_mc_per_mb: float = Field(20.0, ge=0, le=1e6, description="CPU to merge-sort one MB (ours)")
    taskalloc_capacity_pad: float = Field(0.01, ge=0, le=1, description="mapred.jobtracker.taskalloc.capacitypad")

    # The job lifecycle of Hadoop 1.x (JobInProgress.initTasks, JobTracker.getSetupAndCleanupTasks; HADOOP-3150:
    # "Job cleanup is done by a separate task. Job is declared SUCCEEDED/FAILED after the cleanup task has
    # finished"). On by default, as Hadoop 1.x runs them (docs/model.md).
    job_setup_cleanup: bool = Field(
        True,
        description="mapred.committer.job.setup.cleanup.needed (Hadoop 1.x default true; JobInProgress."
        "obtainJobSetupTask / obtainJobCleanupTask): init, a setup task and a cleanup task per job",
    )
    job_init_s: float = Field(
        1.0,
        ge=0,
        le=3600,
        description="JobInProgress.initTasks (split meta-info read, TIPs made), s. No measured figure [NONE]; the "
        "2009 Rumen traces' launchTime - submitTime is 0.4-1.6 s; Pavlo et al. (SIGMOD 2009) measured 10 s from "
        "submission to the first map on 100 nodes (init, setup and heartbeats together)",
    )
    setup_cleanup_s: float = Field(
        1.0,
        ge=0,
        le=3600,
        description="a setup/cleanup task's OutputCommitter work (setupJob, commitJob) beyond its JVM start, s "
        "[NONE] (ours; the 2009 trace's setup and cleanup attempts take 1.8-2.7 s in all)",
    )

    @field_validator("io_sort_mb")
    @classmethod
    def _whole_sort_buffer(cls, value: float) -> float:
        """Hadoop 1.x reads io.sort.mb as an int (MapTask: job.getInt), and the spill model takes whole MB."""
        if not float(value).is_integer():
            raise ValueError("must be a whole number of MB (Hadoop reads io.sort.mb as an int)")
        return value

    @field_validator("jvm_reuse_tasks")
    @classmethod
    def _reuse_not_zero(cls, value: int) -> int:
        """Hadoop asserts numTasksToExecute != 0 (Child.main): 1 is no reuse, -1 no limit."""
        if value == 0:
            raise ValueError("must be -1 (no limit) or >= 1 (1: no reuse, Hadoop's default)")
        return value

    @model_validator(mode="after")
    def _sort_buffer_fits_the_heap(self) -> HadoopConfig:
        """The sort buffer (io.sort.mb) is allocated inside the task's heap: a smaller heap fails every map."""
        if not self.io_sort_mb < self.child_heap_mb:
            raise ValueError(f"hadoop.io_sort_mb={self.io_sort_mb:g} must be below hadoop.child_heap_mb="
                             f"{self.child_heap_mb:g} (the sort buffer lives in the task's heap)")  # fmt: skip
        return self


def heartbeat_interval_s(trackers: int, config: HadoopConfig) -> float:
    """JobTracker.getNextHeartbeatInterval for the chosen Hadoop version (algorithms.md 2.6)."""
    n = trackers
    if config.heartbeat_formula == "0.20":
        ms = max(1000 * (n // 100 + 1), 3000)
    elif config.heartbeat_formula == "1.0":
        ms = max(1000 * config.heartbeat_scaling * math.ceil(n / config.heartbeats_in_second), 3000)
    else:
        ms = max(int(1000 * config.heartbeat_scaling * n / config.heartbeats_in_second), 300)
    return ms / 1000.0
