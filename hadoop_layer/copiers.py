"""The reduce side of the shuffle as Hadoop 1.x runs it: a few copier threads per reduce (`hadoop.shuffle_copiers`).

`ShuffleServer` alone lets every servlet work on every pending (map output, reduce) request at once. Hadoop's
ReduceCopier (algorithms.md 2.3, H121 `ReduceTask.java`) has `mapred.reduce.parallel.copies` (5) MapOutputCopier
threads; its scheduling loop walks the hosts with known map outputs in a random order (`Collections.shuffle`) and
schedules one output from each host that has no fetch outstanding (`uniqueHosts`); a host comes back after its fetch
is done. So a reduce fetches from at most `parallel_copies` hosts at a time, each one in turn.

Fluid form, per reduce attempt (one queue column): its map outputs wait in a backlog per serving node until a copier
takes them (the copiers start with the reduce task: none while its JVM starts); taking moves a node's whole backlog
for the reduce into the servlet's read queue, where `ShuffleServer` serves it as before. A fetch holds its copier
until the servlet has read all it took (its send, which the queues stage a tick behind the read, overlaps the next
fetch's read, as the servlet streams). Nodes are taken in a random rotation drawn when the reduce starts (from a
stream of its own, so no other draw moves); the rotation goes on from where it stopped, so every node with outputs
is visited once a round (Hadoop reshuffles at each pass: the same in expectation).

A fetch is usually far shorter than a tick (SWIM's partitions are ~1 MB; one stream moves tens of MB a second), and
a copier that finishes one starts the next at once. So within a tick, each free copier has one tick of time: taking
a node's backlog of b MB costs b / (what one stream moves in a tick: the serving host's disk, its NIC and the
receiving host's NIC at full rate; the disk only for a fetch on the same node). Each free copier takes at least one
node, and nodes are taken in rotation while the time taken before them is below the free copiers' time. Per-fetch
latency (HTTP set-up, the 1 s poll for map completion events) is not modelled, nor the penalty box of failed
fetches (no fetch fails here).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from hadoop_layer.shuffle import DRAINED_MB, ShuffleServer
from vcloud import kernels
from vcloud.model import InvariantError
from vcloud.tables import grown
from vcloud.work import Kind

if TYPE_CHECKING:
    from hadoop_layer.model import HadoopModel
    from hadoop_layer.tasks import TaskAttempt

_ROTATION_STREAM = 0x5C0  # the spawn key of the copiers' random stream (any constant no other stream uses)


class CopierShuffle(ShuffleServer):
    """The serving queues of `ShuffleServer`, fed by each reduce's copiers (see the module docstring)."""

    def __init__(self, model: HadoopModel) -> None:
        self.copiers = model.hadoop.parallel_copies
        seed = model.rng.bit_generator.seed_seq
        self.rotation_rng = np.random.default_rng(
            np.random.SeedSequence(seed.entropy, spawn_key=(*seed.spawn_key, _ROTATION_STREAM))
        )
        super().__init__(model)

    def start(self) -> None:
        model = self.model
        hosts = model.vms.view("host")[np.array([t.vm.row for t in model.trackers], dtype=np.int64)]
        # per node, what one stream moves in a tick at full rate: hosts and their devices do not change in a run
        self.disk_mb = model.dt * model.hosts.view("disk_mbps")[hosts]
        self.nic_mb = model.dt * model.hosts.view("nic_mbps")[hosts]
        self.send_mb = np.minimum(self.disk_mb, self.nic_mb)  # read and sent by the serving node
        # the fetches under way, (serving node, reduce column) pairs by column, then node: a few per reduce, a list
        self.fetch_node, self.fetch_col = np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64)
        # some column may have become one the copiers take from since they last looked (`before_tick`)
        self._look = True
        super().start()

    def _grow(self, cols: int) -> None:
        first, n = self.cols == 0, self.nodes
        # by reduce column, then node (a reduce's row is contiguous: the copiers look at a few reduces' rows)
        self.backlog = grown(None if first else self.backlog, (cols, n), 0.0, float)  # MB no copier took yet
        self.position = grown(None if first else self.position, (cols, n), 0, np.int64)  # place in the rotation
        self.next_at = grown(None if first else self.next_at, (cols,), 0, np.int64)  # where the rotation goes on
        self.in_flight = grown(None if first else self.in_flight, (cols,), 0, np.int64)  # fetches under way
        self.waiting = grown(None if first else self.waiting, (cols,), 0, np.int64)  # nodes with a backlog
        # something changed since the copiers last looked (new backlog, a copier freed): else they would take nothing
        self.changed = grown(None if first else self.changed, (cols,), False, bool)
        super()._grow(cols)

    @property
    def fetching(self) -> np.ndarray:
        """nodes x columns: True where a copier is on (node, reduce column); for inspection and tests."""
        on = np.zeros((self.nodes, self.cols), dtype=bool)
        on[self.fetch_node, self.fetch_col] = True
        return on

    @property
    def busy(self) -> bool:
        """Also: a fetch under way (`in_flight` counts `fetch_col`'s entries, check_queues), asked first: a length."""
        return bool(self.fetch_col.size) or super().busy

    # ---- events ---------------------------------------------------------------------------------------
    def add_reduce(self, attempt: TaskAttempt) -> None:
        """A reduce attempt starts: its copiers draw their rotation; they take their first nodes before the next
        tick's physics (`before_tick`), as any free copier."""
        super().add_reduce(attempt)  # the outputs already there join its backlog (_enqueue)
        c = attempt.shuffle_col
        self.position[c][self.rotation_rng.permutation(self.nodes)] = np.arange(self.nodes)  # (row c's view: 1-D)
        self.next_at[c] = 0

    def _enqueue(self, per_node_mb: np.ndarray, cols: np.ndarray) -> None:
        self.queued_mb += float(per_node_mb.sum()) * len(cols)
        self.backlog[cols] += per_node_mb[None, :]
        self.waiting[cols] = np.count_nonzero(self.backlog[cols], axis=1)
        self.changed[cols] = True
        self._look = True

    def map_done(self, job, node: int, share_mb: float) -> None:
        """A map of `job` on `node` finished: its partitions wait for the copiers of the job's running reduces."""
        cols = job.shuffle_cols
        if not len(cols) or share_mb <= 0:
            return
        kernels.backlog_add(self.backlog, node, cols, share_mb, self.waiting, self.changed)
        self._look = True
        self.queued_mb += share_mb * len(cols)

    def drop_reduce(self, attempt: TaskAttempt) -> None:
        c = getattr(attempt, "shuffle_col", None)
        if c is not None:
            self.dropped_mb[0] += self.backlog[c].sum()
        super().drop_reduce(attempt)

    def _free(self, c: int) -> None:
        self.backlog[c] = 0.0
        if self.in_flight[c]:
            keep = self.fetch_col != c
            self.fetch_node, self.fetch_col = self.fetch_node[keep], self.fetch_col[keep]
        self.in_flight[c] = self.waiting[c] = 0
        super()._free(c)

    def _close_drained(self, closing: np.ndarray | None = None) -> None:
        if closing is None:
            closing = np.flatnonzero(self.closing)
        super()._close_drained(closing[self.waiting[closing] == 0])  # a backlog is still to fetch

    def check_queues(self) -> None:
        """Also: each (node, reduce) fetch is under way once, the counts are those of the fetches and backlogs."""
        super().check_queues()
        pairs = self.fetch_col * self.nodes + self.fetch_node
        if (np.diff(pairs) <= 0).any():  # kernels.copiers_release walks them along the queue's rows
            raise InvariantError("the fetches are not by column, then node, each once (uniqueHosts)")
        if not np.array_equal(self.in_flight, np.bincount(self.fetch_col, minlength=self.cols)):
            raise InvariantError("a reduce's count of fetches under way is not its fetches'")
        if not np.array_equal(self.waiting, np.count_nonzero(self.backlog, axis=1)):
            raise InvariantError("a reduce's count of nodes with a backlog is not its backlog's")

    # ---- the copiers ----------------------------------------------------------------------------------
    def before_tick(self) -> None:
        """Free copiers take nodes before the tick's physics, so what they took is served in the tick. A reduce
        whose backlog and copiers did not change since its copiers last looked is skipped: they took then all they
        could (each free copier takes a node if one is not under way), so they would take nothing now. A reduce in
        its JVM start has no copiers yet (ReduceTask.run makes its ReduceCopier once the task runs): it is looked at
        again each tick until its shuffle phase runs (`changed` stays set). Free copiers take nodes in their rotation
        (module docstring); only the (reduce, node) pairs with a backlog are looked at. Compiled: vcloud/kernels.py
        `copiers_take` (the NumPy form's bits: tests/test_kernels.py).

        Not called while no column can be taken from: a column becomes one only by a change (a backlog grows, a copier
        frees: `_look` is set) or, changed before, once its JVM start ends, so the look goes on while a changed column
        with a backlog and a free copier is left (the kernel leaves exactly those in their JVM start)."""
        if not self._look:
            return
        self.fetch_node, self.fetch_col, took, self.q_col, self.q_val = kernels.copiers_take(
            self.copiers, self.changed, self.waiting, self.in_flight, self.col_row, self.model.items.kind,
            int(Kind.CPU), self.backlog, self.position, self.next_at, self.col_node, self.fetch_node, self.fetch_col,
            self.disk_mb, self.send_mb, self.nic_mb, self.q_col, self.q_val, self.q_len, self._stale, self.col_nnz,
            self.col_big, DRAINED_MB,
        )  # fmt: skip
        self._look = kernels.copiers_look(self.changed, self.waiting, self.in_flight, self.copiers, self._hi)
        if took:
            self._set_work()

    def tick(self) -> None:
        super().tick()
        self._release()

    def _release(self) -> None:
        """Copiers whose fetch the servlet has read in full are free again. Its send is still to come: the servlet
        streams a fetch (reads and sends at once), which the queues stage a tick apart, so holding the copier until
        the send would idle the disk a tick between fetches."""
        if self.fetch_col.size:
            under_way = self.fetch_col.size
            self.fetch_node, self.fetch_col = kernels.copiers_release(
                self.q_col, self.q_val, self.q_len, self.fetch_node, self.fetch_col, self.in_flight, self.changed,
                DRAINED_MB,
            )  # fmt: skip
            self._look |= self.fetch_col.size < under_way  # a copier freed

    def rotation(self, c: int) -> np.ndarray:
        """The nodes in reduce column `c`'s visiting order (for inspection and tests)."""
        return np.argsort(self.position[c])

    def stream_mb(self, nodes: np.ndarray, cols: np.ndarray) -> np.ndarray:
        """What one fetch from `nodes` for reduce columns `cols` (same shape) moves in a tick at most: the serving
        host's disk, its NIC and the receiving host's NIC at full rate (the disk alone on the same node)."""
        to = self.col_node[cols]
        return np.where(nodes == to, self.disk_mb[nodes], np.minimum(self.send_mb[nodes], self.nic_mb[to]))
