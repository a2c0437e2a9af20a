"""FIFO with pinned tasks: given tasks may only run on given nodes (FlexSlot's "Heter. + Skew-sched").

FlexSlot section 2.2 forced the stragglers of an earlier run onto the nodes it had made powerful for
them; everything else is scheduled as FIFO does.
"""

from __future__ import annotations

from hadoop_layer.interfaces import ClusterView
from hadoop_layer.tasks import Task
from hadoop_layer.tracker import TaskTracker
from policies.schedulers.fifo import FifoScheduler


class PinnedFifoScheduler(FifoScheduler):
    name = "fifo-pinned"

    def __init__(self, pins: dict[tuple[int, int], frozenset[int]]) -> None:
        """`pins[(job number, map index)]` = the nodes that map may run on."""
        self.pins = pins

    def forbidden(self, tracker: TaskTracker, cluster: ClusterView) -> set[Task]:
        out = set()
        for job in cluster.jobs:
            for (number, index), nodes in self.pins.items():
                if number == job.number and tracker.node not in nodes and index < len(job.maps):
                    out.add(job.maps[index])
        return out
