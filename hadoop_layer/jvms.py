"""The child JVM a task runs in: its start, its reuse by later tasks of the same job, and its getTask poll.

What Hadoop 1.x does (1.2.1 source: TaskTracker.TaskLauncher, TaskRunner, JvmManager, Child):
- A heartbeat reply launches a task; the TaskTracker localizes it, and `JvmManager.reapJvm` either spawns a child
  JVM (fork of `taskjvm.sh`, which execs `java ... Child`) or hands the task to an idle JVM of the same job.
- A new JVM is given its task before it starts (`spawnNewJvm` calls `setRunningTaskForJvm`), so its first
  `getTask` returns it. Its start (JVM boot, class loading from disk, the umbilical RPC) takes seconds: "about 3
  seconds" without reuse (a Q&A answer, weak) and "Launching a new JVM and loading all the classes ... 4-8 seconds"
  (Qubole, 2014). No source splits it into CPU and the rest [NONE].
- `mapred.job.reuse.jvm.num.tasks` (default 1: no reuse; -1: no limit) is how many tasks a JVM runs before it
  exits (Child.main: `if (numTasksToExecute > 0 && ++numTasksExecuted == numTasksToExecute) break`). `reapJvm`
  spawns a new JVM while the tracker has fewer JVMs of the kind than slots; only at that limit does it reuse an idle
  JVM of the same job that has not run all its tasks, else it kills an idle JVM of another job and spawns one. A
  JVM whose task failed or was killed exits (Child's catch, `JvmManager.taskKilled`).
- An idle JVM polls `getTask` (Child.main: `Thread.sleep(500)`, 1500 ms once it has polled 5 times in vain), so a
  reused JVM starts its task at its first poll after the launch.

Here (`hadoop.jvm_start_wall_s`, `jvm_start_core_s`, `jvm_reuse_tasks`, `child_poll_s`):
- A new JVM is two phases at the attempt's head: `jvm_start_core_s` of CPU on one core, then a wait for the rest of
  `jvm_start_wall_s`. The start is one thread's sequence (fork and exec, the JVM's boot, loading and linking classes
  read from disk, the RPC handshake), so its CPU and its waits alternate rather than overlap: contention stretches
  the CPU part and leaves the rest, and uncontended the JVM runs its task `jvm_start_wall_s` after the launch (the
  cloud gives an item launched between ticks the whole tick, vcloud/model.py; the wait adds that part of the tick
  back). A wall time at or below the CPU leaves the CPU phase only.
- A reused JVM has one phase at the head: a wait until its first getTask poll at or after the launch, counted from
  when its previous task ended.
- `JvmPool` keeps each tracker's JVMs of each kind (the slot kind the task runs in) while reuse is on; with the
  default (1 task a JVM) every task spawns a JVM and the pool holds nothing.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import lru_cache

from hadoop_layer.config import HadoopConfig
from vcloud.work import Phase

SLEEP_LONGER_COUNT = 5  # Child.main: after this many empty getTask polls ...
LONG_POLL_S = 1.5  # ... it sleeps 1500 ms between polls


@lru_cache(maxsize=256, typed=True)
def _jvm_cpu(megacycles: float) -> Phase:
    """The start's CPU on one core: one shared (frozen) phase per core speed."""
    return Phase.cpu("setup", megacycles)


def jvm_start(cfg: HadoopConfig, core_mhz: float, launch_s: float = 0.0, dt: float = 1.0) -> list[Phase]:
    """A new child JVM's phases: its CPU, then a wait for the rest of its wall time (none if nothing is left).
    `launch_s` and the cloud's tick `dt` give the part of the launch's tick before it, which the wait adds back."""
    phases = [_jvm_cpu(cfg.jvm_start_core_s * core_mhz)] if cfg.jvm_start_core_s > 0 else []
    rest = cfg.jvm_start_wall_s - cfg.jvm_start_core_s
    if rest > 0:
        lead = launch_s - math.floor(launch_s / dt + 1e-9) * dt
        phases.append(Phase.wait("setup-wait", rest + max(lead, 0.0)))
    return phases


def start_s(cfg: HadoopConfig) -> float:
    """Seconds a new JVM's start takes on an uncontended core (a replayed attempt's recorded runtime includes it)."""
    return max(cfg.jvm_start_wall_s, cfg.jvm_start_core_s)


def next_poll_s(idle_since: float, at: float, poll_s: float) -> float:
    """The first getTask poll at or after `at` of a JVM idle since `idle_since` (it polls at once, then every `poll_s`
    for SLEEP_LONGER_COUNT polls in all, then every LONG_POLL_S)."""
    if poll_s <= 0 or at <= idle_since:
        return max(at, idle_since)
    waited = at - idle_since
    short = (SLEEP_LONGER_COUNT - 1) * poll_s  # the last short poll
    if waited <= short:
        return idle_since + math.ceil(waited / poll_s - 1e-9) * poll_s
    return idle_since + short + math.ceil((waited - short) / LONG_POLL_S - 1e-9) * LONG_POLL_S


def reused_start(cfg: HadoopConfig, idle_since: float, launch_s: float, dt: float = 1.0) -> list[Phase]:
    """A reused JVM's head: a wait until its next getTask poll (none if it polls at the launch). Counted from the
    start of the launch's tick, as the cloud runs the item from there."""
    poll = next_poll_s(idle_since, launch_s, cfg.child_poll_s)
    tick_start = math.floor(launch_s / dt + 1e-9) * dt
    wait = poll - tick_start
    return [Phase.wait("setup-poll", wait)] if wait > 1e-9 and poll > launch_s else []


@dataclass(slots=True)
class Jvm:
    """One child JVM of a tracker: its job, tasks run, whether it runs one now, and since when it idles."""

    job: object
    ran: int = 0
    busy: bool = True
    idle_since: float = 0.0


class JvmPool:
    """Each tracker's child JVMs by slot kind (`JvmManager.JvmManagerForType`), while JVMs are reused."""

    def __init__(self, reuse_tasks: int) -> None:
        self.reuse_tasks = reuse_tasks
        self.jvms: dict[tuple[int, str], list[Jvm]] = {}
        self.spawned = 0
        self.reused = 0

    @property
    def on(self) -> bool:
        return self.reuse_tasks != 1

    def take(self, node: int, kind: str, job: object, slots: int) -> tuple[Jvm | None, bool]:
        """`reapJvm` for a task of `job` launched in a slot of `kind`: (its JVM, whether it is reused). A new JVM while
        the tracker has fewer than `slots` JVMs of the kind; at the limit an idle JVM of `job` (reused), else an idle
        JVM of another job is killed and a new one spawned. Without reuse: (None, False), a new JVM kept nowhere."""
        if not self.on:
            self.spawned += 1
            return None, False
        jvms = self.jvms.setdefault((node, kind), [])
        if len(jvms) >= slots:
            for jvm in jvms:
                if jvm.job is job and not jvm.busy:
                    jvm.busy = True
                    self.reused += 1
                    return jvm, True
            idle = next((j for j in jvms if not j.busy), None)
            if idle is not None:
                jvms.remove(idle)
        jvm = Jvm(job)
        jvms.append(jvm)
        self.spawned += 1
        return jvm, False

    def ended(self, node: int, kind: str, jvm: Jvm | None, ok: bool, at: float) -> None:
        """The attempt in `jvm` ended at `at`: succeeded, the JVM idles (or exits, having run all its tasks); failed
        or killed, it exits."""
        if jvm is None:
            return
        jvms = self.jvms.get((node, kind), [])
        jvm.ran += 1
        jvm.busy, jvm.idle_since = False, at
        exits = not ok or (self.reuse_tasks > 0 and jvm.ran >= self.reuse_tasks)
        if exits and jvm in jvms:
            jvms.remove(jvm)
