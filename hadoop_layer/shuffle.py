"""The serving side of the shuffle: each TaskTracker's HTTP server (Hadoop 1.x `MapOutputServlet`).

A reduce fetches every map's partition from the TaskTracker that ran the map. The servlet reads the partition
from its local disk and sends it over its NIC; a fetch from the reduce's own node reads the disk only. Here
each TaskTracker runs up to two daemon work items of the cloud layer: `serve-read` (a disk read on its VM's
host datastore) and `serve-send` (a network stream on its host's NIC). They are not task attempts: their I/O
shows in the VM's disk, network and iowait, and in no attempt's charges.

Bookkeeping is a pair of queues, node x reduce attempt (one column per shuffling reduce attempt), in MB:

  read_q[n, c]  bytes of reduce c's partitions that node n's servlet has still to read from disk;
  send_q[n, c]  bytes node n has read for reduce c (remote) and has still to send.

They are kept sparse: each queue row holds its requests (nonzero cells) as a list of reduce columns in ascending
order and their MB (`q_col`, `q_val`, the first `q_len` places of each row). The SWIM day's heaviest ticks on 600
slaves have 10,000-118,000 requests among 1,200 rows of 512-2,048 columns (2-7 % of the cells): a tick that read
every cell of the served rows spent more time finding the requests than serving them.

A finished map adds its partition to `read_q[node, c]` of every running reduce of its job; a reduce that starts adds
the partitions of all maps already done. Each tick (`tick`, right after the cloud's physics:
`CloudModel.after_step`), what each servlet read (or sent) in the tick is shared among its pending requests equally,
no request above what it still needs (water-filling: the servlet's threads serve the fetches in parallel). Bytes
read for a local reduce are fetched at once (no NIC); bytes read for a remote reduce join the send queue; bytes sent
are added to the reduce's open shuffle phase, which receives them over its own NIC. So every MB a reduce fetches
crosses the serving disk, then the serving NIC, then the receiving NIC, each stage a tick after the one before it at
most. A reduce whose JVM is still starting holds what arrives until its shuffle phase runs.
The shuffle phase is closed when the last map is done and nothing is left for it in any queue.

Each tick is one compiled pass over the served rows' requests (`shuffle_move`), no Python loop over tasks;
a node's items start the first time it serves, and columns open and close, on events.
"""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING

import numpy as np

from hadoop_layer.shuffle_queue import (
    DRAINED_MB,
    closing_drained,
    held_ready,
    queue_add,
    queue_dense,
    queue_drop_col,
    resum_rows,
    serving_rows,
    shuffle_move,
)
from vcloud import WorkItem
from vcloud.model import InvariantError
from vcloud.tables import grown
from vcloud.work import Kind, Phase, disk

if TYPE_CHECKING:
    from hadoop_layer.model import HadoopModel
    from hadoop_layer.tasks import TaskAttempt

# the kinds of a reduce's phases before its shuffle, a bit each: its child JVM's CPU, and its start's wait or getTask
# poll (hadoop_layer/jvms.py); its shuffle phase is NET or PIPE
STARTING = (1 << int(Kind.CPU)) | (1 << int(Kind.WAIT))
_NARROW_FROM = 64  # rows at most this wide are left as they are (ShuffleServer._narrow)


class ServeItem(WorkItem):
    """A TaskTracker daemon's serving stream (not a task attempt): `stage` 0 reads, 1 sends. Its phase is open: the
    server sets what is left after every tick; with nothing left it idles (no demand, no iowait) until more comes."""

    def __init__(self, model: HadoopModel, node: int, stage: int, amount: float) -> None:
        if stage == 0:  # reads the node's map outputs through its page cache
            phase = Phase(
                "serve-read", Kind.PIPE, amount, open=True, streams=(disk(file=model.files.map_output[node]),)
            )
        else:
            phase = Phase("serve-send", Kind.NET, amount, open=True)  # stopped by the server
        super().__init__(model, [phase], name=f"{phase.name}@{model.trackers[node].name}")
        self.node, self.stage = node, stage


class ShuffleMode:
    """How map outputs reach the reduces' open shuffle phases (JobTracker._feed_reduces, _finish_shuffle): one of
    two strategies the model picks by `hadoop.shuffle_serving`. The hooks do nothing unless a mode needs them."""

    def start(self) -> None:
        """The cluster is built (called once, at the model's start)."""

    def available_mb(self, job) -> float:
        """MB a reduce launched now finds in its shuffle phase at once."""
        return 0.0

    def add_reduce(self, attempt: TaskAttempt) -> None:
        """A reduce attempt starts."""

    def drop_reduce(self, attempt: TaskAttempt) -> None:
        """A reduce attempt ended before its shuffle was closed (killed, failed)."""

    def map_done(self, job, node: int, share_mb: float) -> None:
        """A map of `job` on `node` finished: `share_mb` of output for each of the job's reduces."""

    def grow_planned(self, attempt: TaskAttempt, share_mb: float) -> None:
        """The same, for a reduce whose JVM is still starting (its shuffle phase is planned, not loaded)."""

    def grow_running(self, rows: np.ndarray, share_mb: float) -> None:
        """The same, for the reduces in their shuffle (their rows in the item table)."""

    def close(self, attempt: TaskAttempt) -> None:
        """All map outputs are known: the reduce's shuffle ends once it has fetched them."""
        raise NotImplementedError

    def moved(self, owner, row: int) -> None:
        """The cloud moved `owner` to item row `row`."""

    def item_stopped(self, item: WorkItem) -> None:
        """The cloud took one of this mode's own items off its VM."""

    def before_tick(self) -> None:
        """Right before each tick's physics (CloudModel.before_tick)."""

    def tick(self) -> None:
        """Right after each tick's physics (CloudModel.after_step)."""

    def figures(self) -> dict[str, float | None]:
        """The summary's shuffle figures: MB served by the TaskTrackers, of which fetched on the same node."""
        return {"shuffle_served_mb": None, "shuffle_local_mb": None}


class DirectShuffle(ShuffleMode):
    """Fetches cost only the reducer (`shuffle_serving` off): a map's output joins every reduce's shuffle phase at
    once, as work that the reduce's own NIC (or disk) moves."""

    def __init__(self, model: HadoopModel) -> None:
        self.model = model

    def available_mb(self, job) -> float:
        return job.map_output_done_mb / len(job.reduces)

    def grow_planned(self, attempt: TaskAttempt, share_mb: float) -> None:
        k = attempt.shuffle_index
        attempt.phases[k] = replace(attempt.phases[k], amount=attempt.phases[k].amount + share_mb)

    def grow_running(self, rows: np.ndarray, share_mb: float) -> None:
        self.model.add_work_rows(rows, share_mb)

    def close(self, attempt: TaskAttempt) -> None:
        k = attempt.shuffle_index
        if attempt.phase_index < k:
            attempt.phases[k] = replace(attempt.phases[k], open=False)
        else:
            self.model.close_phase(attempt)


class ShuffleServer(ShuffleMode):
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

    def start(self) -> None:
        n = self.nodes = len(self.model.trackers)
        self.served_read_mb, self.served_sent_mb = np.zeros(n), np.zeros(n)
        self.items: list[ServeItem | None] = [None] * (2 * n)  # [read items by node, send items by node]
        self.left = np.zeros(2 * n)  # what each item had left after our last write (its remaining)
        self.serve_row = np.full(2 * n, -1, dtype=np.int64)  # the items' rows in the cloud's item table (-1: none)
        # each queue row's sum as of its last change (stale rows are summed again): a reduce that starts changes the
        # rows of its job's map outputs only, and a sum over the whole matrix per start was most of a busy shuffle
        self._row_sum = np.zeros(2 * n)
        self._stale = np.ones(2 * n, dtype=bool)
        self._hi = 0  # 1 + the highest column in use: the columns beyond hold zeros only
        # the sparse queue (module docstring; rows 0..n-1 read, n..2n-1 send): row r's requests are q_val[r, :q_len[r]]
        # at the ascending columns q_col[r, :q_len[r]], none 0.0; the kernels widen the rows when one has no room
        self.q_col = np.zeros((2 * n, 8), dtype=np.int64)
        self.q_val = np.zeros((2 * n, 8))
        self.q_len = np.zeros(2 * n, dtype=np.int64)
        self._grow(16)

    def _grow(self, cols: int) -> None:
        """Room for `cols` reduce columns (the old ones kept)."""
        old = self.cols
        first = old == 0
        self.col_node = grown(None if first else self.col_node, (cols,), -1, np.int64)  # the reduce's node
        self.held = grown(None if first else self.held, (cols,), 0.0, float)
        self.col_row = grown(None if first else self.col_row, (cols,), -1, np.int64)
        self.closing = grown(None if first else self.closing, (cols,), False, bool)
        # per column, its entries in the queue and those above DRAINED_MB (a closing column with one is not drained)
        self.col_nnz = grown(None if first else self.col_nnz, (cols,), 0, np.int64)
        self.col_big = grown(None if first else self.col_big, (cols,), 0, np.int64)
        self.col_attempt: list[TaskAttempt | None] = (self.col_attempt if not first else []) + [None] * (cols - old)
        self.cols = cols
        self._stale[:] = True

    @property
    def queue(self) -> np.ndarray:
        """Both queues as one dense (2 x nodes) x columns matrix, rows 0..n-1 read, n..2n-1 send: a copy, for
        inspection, tests and invariants."""
        return queue_dense(self.q_col, self.q_val, self.q_len, self.cols)

    @property
    def read_q(self) -> np.ndarray:
        return self.queue[: self.nodes]

    @property
    def send_q(self) -> np.ndarray:
        return self.queue[self.nodes :]

    def sparse_queue(self) -> tuple:
        """The queue as the kernels take it (its rows as they are now): a `SparseQueue`'s fields, a plain tuple
        (vcloud/numerics.py `record`)."""
        return self.q_col, self.q_val, self.q_len, self._row_sum, self._stale, self.col_nnz, self.col_big

    def _add(self, rows: np.ndarray, cols: np.ndarray, amount: np.ndarray) -> None:
        """`queue[rows, cols] += amount` (distinct cells) on the sparse queue."""
        self.q_col, self.q_val = queue_add(
            self.q_col, self.q_val, self.q_len, rows, cols, amount, self.col_nnz, self.col_big
        )

    def _drop_col(self, c: int) -> np.ndarray:
        """Empty reduce column `c` (its rows become stale); returns the column as it was, dense."""
        return queue_drop_col(self.q_col, self.q_val, self.q_len, c, self._stale, self.col_nnz, self.col_big)

    @property
    def busy(self) -> bool:
        """Anything queued at a server, or held for a reduce: else a tick has nothing to move."""
        return bool(self.left.any() or self.held.any())

    # ---- events ---------------------------------------------------------------------------------------
    def add_reduce(self, attempt: TaskAttempt) -> None:
        """A reduce attempt starts: it will fetch its partition of every map output already there and to come."""
        free = self.col_row < 0  # the lowest free column (col_row is -1 exactly where no attempt), else a new one
        c = int(free.argmax())
        if not free[c]:
            c = self.cols
            self._grow(2 * self.cols)
        job = attempt.task.job
        self.col_attempt[c], self.col_row[c] = attempt, attempt.row
        self._hi = max(self._hi, c + 1)
        self.col_node[c] = attempt.tracker.node
        self.held[c], self.closing[c] = 0.0, False
        job.shuffle_cols = np.concatenate((job.shuffle_cols, (c,)))
        attempt.shuffle_col = c
        self.active_cols += 1
        self._enqueue(job.map_output_node_mb / len(job.reduces), np.array([c]))

    def map_done(self, job, node: int, share_mb: float) -> None:
        """A map of `job` on `node` finished: its partitions wait to be fetched by the job's running reduces."""
        cols = job.shuffle_cols
        if not len(cols) or share_mb <= 0:
            return
        self._add(np.full(len(cols), node, dtype=np.int64), cols, np.full(len(cols), share_mb))
        self._stale[node] = True
        self.queued_mb += share_mb * len(cols)
        item = self.items[node]
        if item is None:
            self._set_work()
        else:  # the common case, one node's queue grows: no need to look at the others
            self.model.add_work(item, share_mb * len(cols))
            self.left[node] += share_mb * len(cols)

    def _enqueue(self, per_node_mb: np.ndarray, cols: np.ndarray) -> None:
        n = self.nodes
        self._add(np.tile(np.arange(n), len(cols)), np.repeat(cols, n), np.tile(per_node_mb, len(cols)))
        self._stale[: self.nodes] |= per_node_mb != 0
        self.queued_mb += float(per_node_mb.sum()) * len(cols)
        self._set_work()

    def close(self, attempt: TaskAttempt) -> None:
        """All map outputs are known (the last map is done): close the shuffle once nothing is left to fetch."""
        c = attempt.shuffle_col
        self.closing[c] = True
        self._close_drained(np.array([c]))  # the other closing reduces were tested at the tick: none drained since

    def drop_reduce(self, attempt: TaskAttempt) -> None:
        """A reduce attempt ended (killed, failed; done ones were closed before): forget what it still had to fetch."""
        c = getattr(attempt, "shuffle_col", None)
        if c is None:
            return
        column = self._drop_col(c)
        self.dropped_mb += (column[: self.nodes].sum(), column[self.nodes :].sum(), self.held[c])
        self._set_work()
        self._free(c)

    def _free(self, c: int) -> None:
        attempt = self.col_attempt[c]
        attempt.shuffle_col = None
        job = attempt.task.job
        job.shuffle_cols = job.shuffle_cols[job.shuffle_cols != c]
        self.col_attempt[c] = None
        self.active_cols -= 1
        self.col_row[c], self.held[c], self.closing[c] = -1, 0.0, False
        if c == self._hi - 1:
            used = np.flatnonzero(self.col_row >= 0)
            self._hi = int(used[-1]) + 1 if used.size else 0

    def moved(self, owner, row: int) -> None:
        """The cloud moved `owner` to item row `row` (another item's row was freed)."""
        if isinstance(owner, ServeItem):
            self.serve_row[owner.stage * self.nodes + owner.node] = row
            return
        c = getattr(owner, "shuffle_col", None)
        if c is not None:
            self.col_row[c] = row

    def daemon_io_mb(self) -> np.ndarray:
        """MB the cloud charged the daemons' items: read (from disk or page cache), sent."""
        io = np.zeros(2)
        for item in self.items:
            if item is not None:
                io[item.stage] += item.charged("io_mb") + item.charged("read_cache_mb")
        return io

    def figures(self) -> dict[str, float | None]:
        return {"shuffle_served_mb": float(self.served_read_mb.sum()), "shuffle_local_mb": self.fetched_local_mb}

    def item_stopped(self, item: ServeItem) -> None:
        i = item.stage * self.nodes + item.node
        if self.items[i] is item:
            self.items[i], self.serve_row[i] = None, -1

    def check_queues(self) -> None:
        """The kept row sums are the queue's, its rows' entries are nonzero at ascending columns in use, and the
        column counts are its entries' (check_invariants)."""
        queue = self.queue
        fresh = ~self._stale
        if not np.array_equal(self._row_sum[fresh], queue[fresh].sum(axis=1)):
            raise InvariantError("a shuffle queue's kept row sum is not its sum")
        live = np.arange(self.q_col.shape[1]) < self.q_len[:, None]
        cols = np.where(live, self.q_col, self._hi)
        if (np.diff(cols, axis=1) < 0).any() or (self.q_col[live] >= self._hi).any() or (self.q_val[live] <= 0).any():
            raise InvariantError("a shuffle queue row's entries are not positive at ascending columns in use")
        nnz = np.count_nonzero(live & (np.diff(cols, axis=1, prepend=-1) > 0), axis=1)
        if not np.array_equal(nnz, self.q_len):
            raise InvariantError("a shuffle queue row holds a column twice")
        if not (np.array_equal(self.col_nnz, np.count_nonzero(queue, axis=0))
                and np.array_equal(self.col_big, np.count_nonzero(queue > DRAINED_MB, axis=0))):  # fmt: skip
            raise InvariantError("a shuffle queue's column counts are not its entries'")

    # ---- the serving items ----------------------------------------------------------------------------
    def _set_work(self, want: np.ndarray | None = None) -> None:
        """Make each daemon item have exactly `want` MB left (default: its queue), in one array write. A node's
        item starts the first time it has something to serve and then stays, idle (no demand, no iowait) while its
        queue is empty, as the daemon does: starting and stopping items each time a queue drains costs more than
        it saves."""
        model = self.model
        if want is None:
            want = self._sums()
        else:
            self._row_sum[:] = want
            self._stale[:] = False
        rows, rows_want, idle = serving_rows(self.serve_row, want)
        model.set_remaining_rows(rows, rows_want, counted=False)  # no task's progress moves
        self._start_items(want, idle)
        self.left[:] = want

    def _start_items(self, want: np.ndarray, idle: np.ndarray) -> None:
        """Start the items of the rows `idle` (something to serve, no item yet: `serving_rows`)."""
        model = self.model
        for i in idle:
            node, stage = int(i) % self.nodes, int(i) // self.nodes
            item = self.items[i] = ServeItem(model, node, stage, float(want[i]))
            model.start_item(item, model.trackers[node].vm)
            self.serve_row[i] = item.row

    def _width(self) -> int:
        """The columns a row operation needs: the smallest power of two (at least 16) that holds every column in use.
        The columns beyond hold zeros, and NumPy's pairwise sum of a row of 2^k entries is the sum of its first half
        plus its second's, so a row summed over this prefix gives its full sum bit for bit."""
        width = 16
        while width < self._hi:
            width *= 2
        return min(width, self.cols)

    def _sums(self) -> np.ndarray:
        """Each queue row's sum; only the rows changed since they were last summed are summed again (a row's sum is
        the same alone as in the matrix: each row is contiguous). Compiled: `resum_rows`."""
        resum_rows(self.q_col, self.q_val, self.q_len, self._width(), self._row_sum, self._stale)
        return self._row_sum.copy()

    def tick(self) -> None:
        """Move what the servlets read and sent in the tick along the queues and into the reduces' shuffles. Only
        the servers that moved something are touched, and of their rows only the requests; the arithmetic is compiled
        (hadoop_layer/shuffle_queue.py `shuffle_move`, the dense NumPy form's bits: tests/test_kernels.py)."""
        if not self.busy:
            return
        want, moved, local, rows, rows_want, start, held, self.q_col, self.q_val = shuffle_move(
            self.sparse_queue(), self._width(), self.nodes, self.left, self.serve_row, self.model.items.remaining,
            self.col_node, self.held, self.served_read_mb, self.served_sent_mb,
        )  # fmt: skip
        self.fetched_local_mb += local
        # _set_work(want), its bookkeeping (row sums, stale flags, `left`) done by the kernel
        self.model.set_remaining_rows(rows, rows_want, counted=False)  # no task's progress moves
        if start:
            self._start_items(want, serving_rows(self.serve_row, want)[2])
        if held:
            moved[self._deliver()] = True
        closing = np.flatnonzero(self.closing & moved)
        if closing.size:  # most ticks drain no closing reduce's queue
            self._close_drained(closing)
        self._narrow()

    def _narrow(self) -> None:
        """Give the queue's rows back the room they no longer use: the kernels widen them (to twice their room) when a
        row has none, and a busy hour can leave every row thousands of places wide with a few dozen in use (the SWIM
        day: 1,888, the fullest row 76). The kernels read only each row's first `q_len` places, so rows that far apart
        cost a cache and TLB miss each; kept at twice the fullest row, once that is under a quarter of the room (no
        number changes: the places past `q_len` are never read)."""
        room = self.q_col.shape[1]
        if room > _NARROW_FROM:
            used = int(self.q_len.max())
            if 4 * used < room:
                keep = max(2 * used, _NARROW_FROM // 2)
                self.q_col, self.q_val = self.q_col[:, :keep].copy(), self.q_val[:, :keep].copy()

    def _deliver(self) -> np.ndarray:
        """Hand held bytes to the reduces whose shuffle phase runs (a reduce still starting keeps them held); returns
        the columns handed over."""
        cols, rows, held, total = held_ready(self.held, self.col_row, self.model.items.kind, STARTING)
        if cols.size:
            self.model.add_work_rows(rows, held)
            self.fetched_remote_mb += total
        return cols

    def _close_drained(self, closing: np.ndarray | None = None) -> None:
        """Close the shuffles of the closing reduces (`closing`: those to test; default all) with nothing left."""
        if closing is None:
            closing = np.flatnonzero(self.closing)
        if not closing.size:
            return
        # the pending MB of each (its cells in the rows that may hold something, and its held MB): compiled
        drained = closing_drained(self.sparse_queue(), self.held, closing, DRAINED_MB)
        for c in closing[drained]:
            attempt = self.col_attempt[c]
            self._drop_col(int(c))
            k = attempt.shuffle_index
            if attempt.phase_index >= k:
                self.model.close_phase(attempt)
            else:  # still in its JVM's start or poll: the shuffle phase is not loaded yet
                attempt.phases[k] = replace(attempt.phases[k], open=False)
            self._free(int(c))
