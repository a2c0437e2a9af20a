"""The running attempts' indexes, kept together: `add` and `remove` are the only ways in and out.

An attempt is listed in its task (`attempts`: all, `active`: running, a tuple as it is mostly empty), in its
tracker's slots (`running`, then `history` once it ended), in its job's running reduces (`reduce_attempts`, which
the shuffle feeds) and in the count of running maps and reduces the policies read (`ClusterView.running`). Setup and
cleanup attempts hold a slot but are not maps or reduces to anyone else: they are not counted and fed nothing. A
replayed unsuccessful attempt (trace replay, `TaskAttempt.replayed`) runs its recorded time and fetches nothing: it
is counted, not fed.
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
        task.attempts = (*task.attempts, attempt)
        task.active = (*task.active, attempt)
        attempt.tracker.running[task.kind].add(attempt)
        if task.role:
            return
        self.count[task.kind] += 1
        if task.kind == TaskKind.REDUCE and not attempt.replayed:
            task.job.reduce_attempts.append(attempt)

    def remove(self, attempt: TaskAttempt) -> None:
        """An attempt ended (done, killed, failed; its state is final): its slot is free, it is recorded in the
        ended attempts' columns and goes to its tracker's history."""
        task, tracker = attempt.task, attempt.tracker
        self.ended.add(attempt)
        i = task.active.index(attempt)
        task.active = task.active[:i] + task.active[i + 1 :]
        tracker.running[task.kind].discard(attempt)
        tracker.history.append(attempt)
        if task.role:
            return
        self.count[task.kind] -= 1
        if task.kind == TaskKind.REDUCE and attempt in task.job.reduce_attempts:
            task.job.reduce_attempts.remove(attempt)
