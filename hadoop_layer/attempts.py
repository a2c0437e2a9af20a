"""The running attempts' indexes, kept together: `add` and `remove` are the only ways in and out.

An attempt is counted in its task (`launches`) and listed in it while it runs (`active`, a tuple as it is mostly
empty), in its tracker's slots (`running`), in its job's running reduces (`reduce_attempts`, which the shuffle
feeds) and in the count of running maps and reduces the policies read (`ClusterView.running`); once it has ended
it is a row of the model's `ended` columns (hadoop_layer/ended.py). Setup and cleanup attempts hold a slot but are
not maps or reduces to anyone else: they are not counted and fed nothing. A replayed unsuccessful attempt (trace
replay, `TaskAttempt.replayed`) runs its recorded time and fetches nothing: it is counted, not fed.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from hadoop_layer.tasks import TaskKind

if TYPE_CHECKING:
    from hadoop_layer.ended import EndedAttempts
    from hadoop_layer.tasks import TaskAttempt


class AttemptRegistry:
    def __init__(self, ended: EndedAttempts) -> None:
        self.ended = ended  # where an attempt is recorded once it has ended (in its final state)
        self.count: dict[TaskKind, int] = {TaskKind.MAP: 0, TaskKind.REDUCE: 0}  # running maps / reduces

    def add(self, attempt: TaskAttempt) -> None:
        """A launched attempt runs in its tracker's slot."""
        task = attempt.task
        task.launches += 1
        task.active = (*task.active, attempt)
        attempt.tracker.running[task.kind].add(attempt)
        if task in task.job.running_tasks[task.kind]:  # Job.running_attempts: the attempts of its running tasks
            task.job.running_attempts[task.kind] += 1
        if task.role:
            return
        self.count[task.kind] += 1
        if task.kind == TaskKind.REDUCE and not attempt.replayed:
            task.job.reduce_attempts.append(attempt)

    def remove(self, attempt: TaskAttempt) -> int:
        """An attempt ended (done, killed, failed; its state is final): its slot is free, and it is recorded in the
        ended attempts' columns, whose row is returned; nothing here holds the object any more."""
        task = attempt.task
        row = self.ended.add(attempt)
        active = task.active
        if len(active) == 1 and active[0] is attempt:  # mostly: the task's only attempt
            task.active = ()
        else:
            i = active.index(attempt)
            task.active = active[:i] + active[i + 1 :]
        kind, job = task.kind, task.job
        attempt.tracker.running[kind].discard(attempt)
        if task in job.running_tasks[kind]:
            job.running_attempts[kind] -= 1
        if task.role:
            return row
        self.count[kind] -= 1
        if kind == TaskKind.REDUCE and not attempt.replayed:  # as `add` listed it: one scan, not a test and a scan
            job.reduce_attempts.remove(attempt)
        return row
