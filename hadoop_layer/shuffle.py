"""The serving side of the shuffle: each TaskTracker's HTTP server (Hadoop 1.x `MapOutputServlet`).

A reduce fetches every map's partition from the TaskTracker that ran the map. The servlet reads the partition
from its local disk and sends it over its NIC; a fetch from the reduce's own node reads the disk only. Here
each TaskTracker runs up to two daemon work items of the cloud layer: `serve-read` (a disk read on its VM's
host datastore) and `serve-send` (a network stream on its host's NIC). They are not task attempts: their I/O
shows in the VM's disk, network and iowait, and in no attempt's charges.

Bookkeeping is a pair of queues, node x reduce attempt (one column per shuffling reduce attempt), in MB:

  read_q[n, c]  bytes of reduce c's partitions that node n's servlet has still to read from disk;
  send_q[n, c]  bytes node n has read for reduce c (remote) and has still to send.

A finished map adds its partition to `read_q[node, c]` of every running reduce of its job; a reduce that starts adds
the partitions of all maps already done. Each tick (`tick`, right after the cloud's physics:
`CloudModel.after_step`), what each servlet read (or sent) in the tick is shared among its pending requests equally,
no request above what it still needs (water-filling: the servlet's threads serve the fetches in parallel). Bytes
read for a local reduce are fetched at once (no NIC); bytes read for a remote reduce join the send queue; bytes sent
are added to the reduce's open shuffle phase, which receives them over its own NIC. So every MB a reduce fetches
crosses the serving disk, then the serving NIC, then the receiving NIC, each stage a tick after the one before it at
most. A reduce whose JVM is still starting holds what arrives until its shuffle phase runs.
The shuffle phase is closed when the last map is done and nothing is left for it in any queue.

Each tick costs a few NumPy operations on the (nodes x shuffling reduces) queues, no Python loop over tasks;
items start, stop and columns open and close on events.
"""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING

import numpy as np

from vcloud import WorkItem
from vcloud.waterfill import waterfill
from vcloud.work import Kind, Phase

if TYPE_CHECKING:
    from hadoop_layer.model import HadoopModel
    from hadoop_layer.tasks import TaskAttempt

_NET = int(Kind.NET)
DRAINED_MB = 1e-9  # a queue entry below this is served (float dust of repeated subtraction)


class ServeItem(WorkItem):
    """A TaskTracker daemon's serving stream (not a task attempt): `stage` 0 reads, 1 sends. Its phase is open: the
    server sets what is left after every tick and stops the item when its queue is empty."""

    def __init__(self, model: HadoopModel, node: int, stage: int, amount: float) -> None:
        kind = Kind.DISK_READ if stage == 0 else Kind.NET
        phase = Phase("serve-read" if stage == 0 else "serve-send", kind, amount, open=True)  # stopped by the server
        super().__init__(model, [phase], name=f"{phase.name}@{model.trackers[node].name}")
        self.node, self.stage = node, stage


class ShuffleServer:
    """Map-output serving for all TaskTrackers (see the module docstring)."""

    def __init__(self, model: HadoopModel) -> None:
        self.model = model
        self.nodes = 0
        self.cols = 0
        # totals, MB: read from disk / sent by NIC per serving node; fetched by reduces (remote: through their NIC)
        self.served_read_mb = np.zeros(0)
        self.served_sent_mb = np.zeros(0)
        self.queued_mb = 0.0  # partitions requested (one per map output and fetching reduce attempt)
        self.fetched_local_mb = 0.0  # read for a reduce on the same node
        self.fetched_remote_mb = 0.0  # sent and handed to the reduce's shuffle phase
        # requested by reduce attempts that ended (killed, failed) before they had it: not yet read / read but not
        # sent / sent but not handed over (the reduce was still starting)
        self.dropped_mb = np.zeros(3)
        self.active_cols = 0  # reduce attempts with a column
        self.items_io_mb = np.zeros(2)  # what the cloud charged the stopped daemon items (read, send)

    def start(self) -> None:
        n = self.nodes = len(self.model.trackers)
        self.served_read_mb, self.served_sent_mb = np.zeros(n), np.zeros(n)
        self.items: list[ServeItem | None] = [None] * (2 * n)  # [read items by node, send items by node]
        self.left = np.zeros(2 * n)  # what each item had left after our last write (its remaining)
        self.serve_row = np.full(2 * n, -1, dtype=np.int64)  # the items' rows in the cloud's item table (-1: none)
        self._grow(16)

    def _grow(self, cols: int) -> None:
        old = self.cols
        n = self.nodes

        def widen(a: np.ndarray, fill) -> np.ndarray:
            b = np.full((*a.shape[:-1], cols), fill, dtype=a.dtype)
            b[..., :old] = a
            return b

        if old == 0:
            self.read_q, self.send_q = np.zeros((n, 0)), np.zeros((n, 0))
            self.held, self.col_row, self.col_node = np.zeros(0), np.zeros(0, np.int64), np.zeros(0, np.int64)
            self.closing = np.zeros(0, bool)
            self.col_attempt: list[TaskAttempt | None] = []
        self.read_q, self.send_q = widen(self.read_q, 0.0), widen(self.send_q, 0.0)
        self.held, self.col_row = widen(self.held, 0.0), widen(self.col_row, -1)
        self.col_node, self.closing = widen(self.col_node, -1), widen(self.closing, False)
        self.col_attempt += [None] * (cols - old)
        self.cols = cols

    @property
    def busy(self) -> bool:
        return self.active_cols > 0 or bool(self.left.any())

    # ---- events ---------------------------------------------------------------------------------------
    def add_reduce(self, attempt: TaskAttempt) -> None:
        """A reduce attempt starts: it will fetch its partition of every map output already there and to come."""
        free = [c for c, a in enumerate(self.col_attempt) if a is None]
        c = free[0] if free else self.cols
        if c >= self.cols:
            self._grow(2 * self.cols)
        job = attempt.task.job
        self.col_attempt[c], self.col_row[c], self.col_node[c] = attempt, attempt.row, attempt.tracker.node
        self.held[c], self.closing[c] = 0.0, False
        attempt.shuffle_col = c
        self.active_cols += 1
        self._enqueue(job.map_output_node_mb / len(job.reduces), np.array([c]))

    def map_done(self, job, node: int, share_mb: float) -> None:
        """A map of `job` on `node` finished: its partitions wait to be fetched by the job's running reduces."""
        cols = [a.shuffle_col for a in job.reduce_attempts if a.shuffle_col is not None]
        if not cols or share_mb <= 0:
            return
        add = np.zeros(self.nodes)
        add[node] = share_mb
        self._enqueue(add, np.array(cols))

    def _enqueue(self, per_node_mb: np.ndarray, cols: np.ndarray) -> None:
        self.read_q[:, cols] += per_node_mb[:, None]
        self.queued_mb += float(per_node_mb.sum()) * len(cols)
        self._set_work(0, self.read_q.sum(axis=1))

    def finish(self, attempt: TaskAttempt) -> None:
        """All map outputs are known (the last map is done): close the shuffle once nothing is left to fetch."""
        self.closing[attempt.shuffle_col] = True
        self._close_drained()

    def drop_reduce(self, attempt: TaskAttempt) -> None:
        """A reduce attempt ended (killed, failed; done ones were closed before): forget what it still had to fetch."""
        c = getattr(attempt, "shuffle_col", None)
        if c is None:
            return
        self.dropped_mb += (self.read_q[:, c].sum(), self.send_q[:, c].sum(), self.held[c])
        self.read_q[:, c], self.send_q[:, c] = 0.0, 0.0
        self._set_work(0, self.read_q.sum(axis=1))
        self._set_work(1, self.send_q.sum(axis=1))
        self._free(c)

    def _free(self, c: int) -> None:
        self.col_attempt[c].shuffle_col = None
        self.col_attempt[c] = None
        self.active_cols -= 1
        self.col_row[c], self.col_node[c], self.held[c], self.closing[c] = -1, -1, 0.0, False

    def moved(self, owner, row: int) -> None:
        """The cloud moved `owner` to item row `row` (another item's row was freed)."""
        if isinstance(owner, ServeItem):
            self.serve_row[owner.stage * self.nodes + owner.node] = row
            return
        c = getattr(owner, "shuffle_col", None)
        if c is not None:
            self.col_row[c] = row

    def item_stopped(self, item: ServeItem) -> None:
        i = item.stage * self.nodes + item.node
        if self.items[i] is item:
            self.items[i], self.serve_row[i] = None, -1
            self.items_io_mb[item.stage] += item.charged("io_mb")
            item.remove()  # a daemon stream, not kept as an agent once it stops

    # ---- the serving items ----------------------------------------------------------------------------
    def _set_work(self, stage: int, want: np.ndarray) -> None:
        """Make each node's `stage` item have exactly `want[node]` MB left: one array write for the running
        items; items start (a node's queue was empty) and stop (it is drained) on events."""
        n, model = self.nodes, self.model
        want = np.where(want > DRAINED_MB, want, 0.0)
        base = stage * n
        rows = self.serve_row[base : base + n]
        live = rows >= 0
        for node in np.flatnonzero(live & (want == 0)):  # drained: the daemon stops serving
            model.stop_item(self.items[base + node], "done")
        live &= want > 0
        model.set_remaining_rows(rows[live], want[live])
        for node in np.flatnonzero(~live & (want > 0)):
            item = self.items[base + node] = ServeItem(model, int(node), stage, float(want[node]))
            model.start_item(item, model.trackers[node].vm)
            self.serve_row[base + node] = item.row
        self.left[base : base + n] = want

    def _done_in_tick(self, stage: int) -> np.ndarray:
        """MB each node's `stage` item read or sent in the tick just run."""
        base = stage * self.nodes
        rows = self.serve_row[base : base + self.nodes]
        now = np.where(rows >= 0, self.model.items.remaining[np.maximum(rows, 0)], 0.0)
        return self.left[base : base + self.nodes] - now

    @staticmethod
    def _serve(queue: np.ndarray, done: np.ndarray) -> np.ndarray:
        """Share each node's `done` MB among its pending requests (row entries) equally, none above its need."""
        nodes, cols = np.nonzero(queue)
        if nodes.size == 0:
            return np.zeros_like(queue)
        got = np.zeros_like(queue)
        got[nodes, cols] = waterfill(nodes, None, queue[nodes, cols], np.maximum(done, 0.0))
        return got

    def tick(self) -> None:
        """Move what the servlets read and sent in the tick along the queues and into the reduces' shuffles."""
        if not self.busy:
            return
        sent = self._serve(self.send_q, self._done_in_tick(1))
        read = self._serve(self.read_q, self._done_in_tick(0))
        self.send_q -= sent
        self.read_q -= read
        _sweep(self.read_q)
        local = read * (self.col_node[None, :] == np.arange(self.nodes)[:, None])
        self.send_q += read - local
        _sweep(self.send_q)
        self.served_read_mb += read.sum(axis=1)
        sent_by_node = sent.sum(axis=1)
        self.served_sent_mb += sent_by_node
        self.fetched_local_mb += float(local.sum())
        self._set_work(1, self.send_q.sum(axis=1))
        self._set_work(0, self.read_q.sum(axis=1))
        arrived = sent.sum(axis=0)
        if arrived.any():
            self.held += arrived
        self._deliver()
        self._close_drained()

    def _deliver(self) -> None:
        """Hand held bytes to the reduces whose shuffle phase runs (a reduce still starting keeps them held)."""
        cols = np.flatnonzero(self.held)
        if cols.size == 0:
            return
        rows = self.col_row[cols]
        ready = self.model.items.kind[rows] == _NET
        if ready.any():
            self.model.add_work_rows(rows[ready], self.held[cols[ready]])
            self.fetched_remote_mb += float(self.held[cols[ready]].sum())
            self.held[cols[ready]] = 0.0

    def _close_drained(self) -> None:
        if not self.closing.any():
            return
        pending = self.read_q.sum(axis=0) + self.send_q.sum(axis=0) + self.held
        for c in np.flatnonzero(self.closing & (pending <= DRAINED_MB)):
            attempt = self.col_attempt[c]
            self.read_q[:, c], self.send_q[:, c] = 0.0, 0.0
            if self.model.items.kind[attempt.row] == _NET:
                self.model.close_phase(attempt)
            else:  # still in its JVM start: the shuffle phase is not loaded yet
                from hadoop_layer.tasks import SHUFFLE

                attempt.phases[SHUFFLE] = replace(attempt.phases[SHUFFLE], open=False)
            self._free(int(c))


def _sweep(queue: np.ndarray) -> None:
    """Clear the nodes whose queue is down to float dust (their daemon item stops: nothing would serve it)."""
    dust = queue.sum(axis=1) <= DRAINED_MB
    if dust.any():
        queue[dust] = 0.0
