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

from typing import TYPE_CHECKING, NamedTuple

import numpy as np

from hadoop_layer.shuffle import STARTING, ShuffleServer
from hadoop_layer.shuffle_queue import DRAINED_MB, SparseQueue, add_row, queue_widened
from vcloud.model import InvariantError
from vcloud.numerics import inline, kernel, np_min, record
from vcloud.tables import grown

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
        backlog_add(self.backlog, node, cols, share_mb, self.waiting, self.changed)
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
        if (np.diff(pairs) <= 0).any():  # copiers_release walks them along the queue's rows
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
        (module docstring); only the (reduce, node) pairs with a backlog are looked at. Compiled: vcloud/py
        `copiers_take` (the NumPy form's bits: tests/test_kernels.py).

        Not called while no column can be taken from: a column becomes one only by a change (a backlog grows, a copier
        frees: `_look` is set) or, changed before, once its JVM start ends, so the look goes on while a changed column
        with a backlog and a free copier is left (the kernel leaves exactly those in their JVM start)."""
        if not self._look:
            return
        # the records as plain tuples of their fields (vcloud/numerics.py `record`)
        reduces = (self.changed, self.waiting, self.in_flight, self.col_row, self.backlog, self.position, self.next_at,
                   self.col_node)  # CopierColumns  # fmt: skip
        self.fetch_node, self.fetch_col, took, self.q_col, self.q_val = copiers_take(
            self.copiers, reduces, self.model.items.kind, STARTING, self.fetch_node, self.fetch_col,
            (self.disk_mb, self.send_mb, self.nic_mb), self.sparse_queue(),  # CopyRates, SparseQueue
        )  # fmt: skip
        self._look = copiers_look(self.changed, self.waiting, self.in_flight, self.copiers, self._hi)
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
            self.fetch_node, self.fetch_col = copiers_release(
                self.q_col, self.q_val, self.q_len, self.fetch_node, self.fetch_col, self.in_flight, self.changed
            )
            self._look |= self.fetch_col.size < under_way  # a copier freed

    def rotation(self, c: int) -> np.ndarray:
        """The nodes in reduce column `c`'s visiting order (for inspection and tests)."""
        return np.argsort(self.position[c])

    def stream_mb(self, nodes: np.ndarray, cols: np.ndarray) -> np.ndarray:
        """What one fetch from `nodes` for reduce columns `cols` (same shape) moves in a tick at most: the serving
        host's disk, its NIC and the receiving host's NIC at full rate (the disk alone on the same node)."""
        to = self.col_node[cols]
        return np.where(nodes == to, self.disk_mb[nodes], np.minimum(self.send_mb[nodes], self.nic_mb[to]))


@record
class CopierColumns(NamedTuple):
    """Per reduce column: the copiers' state (`CopierShuffle`'s attributes of the same names, `to_node`: col_node)."""

    changed: np.ndarray  # its backlog or copiers changed since it was looked at
    waiting: np.ndarray  # nodes with a backlog for it
    in_flight: np.ndarray  # fetches under way
    col_row: np.ndarray  # its reduce's item row
    backlog: np.ndarray  # columns x nodes: MB of finished maps not yet fetched
    position: np.ndarray  # columns x nodes: each node's place in its rotation
    next_at: np.ndarray  # where its rotation goes on
    to_node: np.ndarray  # its reduce's node


@record
class CopyRates(NamedTuple):
    """Per node: the MB one fetch stream moves in a tick from its disk, on its send side and into its NIC."""

    disk_mb: np.ndarray
    send_mb: np.ndarray
    nic_mb: np.ndarray


@inline
def _take_in_rotation(
    cum: float,
    r: int,
    mb: float,
    v: int,
    to: int,
    free: int,
    disk_mb: np.ndarray,
    send_mb: np.ndarray,
    nic_mb: np.ndarray,
) -> tuple[float, bool]:
    """A crowded reduce's `r`-th candidate in rotation order, node `v` with `mb` for it (`cum`: the costs of those
    before it, summed in that order): the sum with its cost (`mb` over what one stream moves in a tick: the serving
    disk on the reduce's own node `to`, else the serving node's send and the reduce's NIC), and whether a copier takes
    it (the time taken before it is below the free copiers', or fewer than those were taken)."""
    cost = mb / (disk_mb[v] if v == to else np_min(send_mb[v], nic_mb[to]))
    cum = cost if r == 0 else cum + cost
    return cum, (cum - cost < free) or (r < free)


@kernel
def copiers_look(changed: np.ndarray, waiting: np.ndarray, in_flight: np.ndarray, copiers: int, hi: int) -> bool:
    """Some of the first `hi` reduce columns changed, has a backlog and a free copier: `copiers_take` may take a node
    at the next look (`CopierShuffle.before_tick`; NumPy's `(changed & (waiting > 0) & (in_flight < copiers)).any()`
    was five calls a tick)."""
    for c in range(hi):  # noqa: SIM110  (a loop: numba compiles no generator for any())
        if changed[c] and waiting[c] > 0 and in_flight[c] < copiers:
            return True
    return False


@kernel
def copiers_take(
    copiers: int,
    reduces: CopierColumns,
    item_kind: np.ndarray,
    starting: int,
    fetch_node: np.ndarray,
    fetch_col: np.ndarray,
    rates: CopyRates,
    queue: SparseQueue,
) -> tuple[np.ndarray, np.ndarray, bool, np.ndarray, np.ndarray]:
    """`hadoop_layer.copiers.CopierShuffle.before_tick`: the reduce columns whose backlog or copiers changed, that
    have a backlog, a free copier and a running shuffle phase (the kind of their item row, `col_row`, is not one of
    the bits of `starting`: the child JVM's start or poll, STARTING) are looked at; their free
    copiers take nodes in rotation (`_take`'s rule: each free copier at least one node, more while the copier-ticks
    spent before a node are below the free copiers). Changes the per-column state, `backlog`, the sparse queue's read
    rows (`queue[node, c] += backlog[c, node]`, `shuffle_move`'s layout, with its column counts) and `stale` in place;
    returns the fetches under way (`fetch_node`, `fetch_col`: by column, then node, as they come, the new ones among
    them: `copiers_release` walks them along the queue's rows; their order moves no number), whether any node was
    taken and the queue's rows (widened if a read row had no room). The NumPy form's bits: cost = MB / one stream's
    MB a tick, the costs before a node summed in rotation order as np.cumsum does (less the node's own).

    A column's candidates are its nodes with a backlog (`waiting` counts them) but those with a fetch under way
    (uniqueHosts), so their number is known before its row is read, and the scan of the row stops at the last one;
    a crowded reduce's few candidates are put in rotation order by insertion, and one with many (hundreds on a busy
    cluster) walks its rotation instead (the inverse of `position`'s row): they come in its order without a sort.
    Only the nodes taken are kept."""
    reduces, rates, queue = CopierColumns(*reduces), CopyRates(*rates), SparseQueue(*queue)  # tuples (`record`)
    changed, waiting, in_flight, col_row = reduces.changed, reduces.waiting, reduces.in_flight, reduces.col_row
    backlog, position, next_at, to_node = reduces.backlog, reduces.position, reduces.next_at, reduces.to_node
    disk_mb, send_mb, nic_mb = rates.disk_mb, rates.send_mb, rates.nic_mb
    q_col, q_val, q_len, stale = queue.col, queue.val, queue.length, queue.stale
    col_nnz, col_big = queue.col_nnz, queue.col_big
    n, n_cols = backlog.shape[1], changed.size
    cols = np.empty(n_cols, np.int64)
    m = 0
    for c in range(n_cols):
        if changed[c] and waiting[c] > 0 and in_flight[c] < copiers and not (starting >> item_kind[col_row[c]]) & 1:
            cols[m] = c
            m += 1
    if m == 0:
        return fetch_node, fetch_col, False, q_col, q_val
    k_of = np.full(n_cols, -1, np.int64)
    for j in range(m):
        changed[cols[j]] = False
        k_of[cols[j]] = j
    # the looked-at columns' fetches under way, grouped by column (`first_busy[j]:first_busy[j + 1]`); their nodes'
    # backlogs are not candidates
    count = np.zeros(m, np.int64)
    first_busy = np.zeros(m + 1, np.int64)
    for f in range(fetch_col.size):
        j = k_of[fetch_col[f]]
        if j >= 0:
            first_busy[j + 1] += 1
            if backlog[fetch_col[f], fetch_node[f]] > 0:
                count[j] -= 1
    for j in range(m):
        first_busy[j + 1] += first_busy[j]
    busy_nodes = np.empty(first_busy[m], np.int64)
    at_busy = first_busy[:m].copy()
    for f in range(fetch_col.size):
        j = k_of[fetch_col[f]]
        if j >= 0:
            busy_nodes[at_busy[j]] = fetch_node[f]
            at_busy[j] += 1
    total = 0
    crowded = False  # some reduce has more nodes than free copiers: it takes them in rotation order
    for j in range(m):
        c = cols[j]
        count[j] += waiting[c]
        total += count[j]
        crowded = crowded or count[j] > copiers - in_flight[c]
    if total == 0:
        return fetch_node, fetch_col, False, q_col, q_val
    # the nodes taken, by reduce: one with no more candidates than free copiers takes them all (found by node); a
    # crowded one walks its rotation from where it stopped and takes each candidate while the time taken before it is
    # below the free copiers' (or fewer than those were taken): the costs summed in rotation order as np.cumsum does,
    # less the node's own. Each candidate's `at` is its place in the rotation from where it stopped.
    k, node, at = np.empty(total, np.int64), np.empty(total, np.int64), np.empty(total, np.int64)
    busy = np.zeros(n, np.bool_)
    node_at = np.empty(n, np.int64)  # a crowded reduce's rotation: the node at each place
    e = 0
    for j in range(m):
        if count[j] == 0:
            continue
        c = cols[j]
        for f in range(first_busy[j], first_busy[j + 1]):
            busy[busy_nodes[f]] = True
        row, shift, free, to = backlog[c], next_at[c], copiers - in_flight[c], to_node[c]
        if count[j] <= max(free, 24):  # found by node (stopping at the last candidate), then, if crowded, put in
            first = e  # rotation order by insertion and taken while time is left
            for v in range(n):
                if row[v] > 0 and not busy[v]:
                    place = position[c, v] - shift
                    k[e], node[e], at[e] = j, v, place + n if place < 0 else place
                    e += 1
                    if e - first == count[j]:
                        break
            if count[j] > free:
                for i in range(first + 1, e):
                    place, v = at[i], node[i]
                    p = i - 1
                    while p >= first and at[p] > place:
                        at[p + 1], node[p + 1] = at[p], node[p]
                        p -= 1
                    at[p + 1], node[p + 1] = place, v
                cum, kept = 0.0, first
                for i in range(first, e):
                    v = node[i]
                    cum, take = _take_in_rotation(cum, i - first, row[v], v, to, free, disk_mb, send_mb, nic_mb)
                    if take:
                        k[kept], node[kept], at[kept] = j, v, at[i]
                        kept += 1
                e = kept
        else:  # many: walk the rotation, the candidates coming in its order
            for v in range(n):
                node_at[position[c, v]] = v
            cum, r = 0.0, 0
            for a in range(n):
                place = shift + a
                v = node_at[place - n if place >= n else place]
                if row[v] > 0 and not busy[v]:
                    cum, take = _take_in_rotation(cum, r, row[v], v, to, free, disk_mb, send_mb, nic_mb)
                    if take:
                        k[e], node[e], at[e] = j, v, a
                        e += 1
                    r += 1
                    if r == count[j]:
                        break
        for f in range(first_busy[j], first_busy[j + 1]):
            busy[busy_nodes[f]] = False
    n_new = e
    extra = np.zeros(n, np.int64)  # new entries per read row
    for f in range(n_new):
        extra[node[f]] += 1
    need = 0
    for v in range(n):
        if extra[v]:
            need = max(need, q_len[v] + extra[v])
    if need > q_col.shape[1]:
        q_col, q_val = queue_widened(q_col, q_val, q_len, np.int64(need))
    last = np.full(m, -1, np.int64)
    taken = np.zeros(m, np.int64)
    new_c, new_v = np.empty(n_new, np.int64), np.empty(n_new, np.int64)  # by column, then node
    for f in range(n_new):
        j = k[f]
        new_c[f], new_v[f] = cols[j], node[f]
        taken[j] += 1
        last[j] = max(last[j], at[f])
    for j in range(m):
        c = cols[j]
        in_flight[c] += taken[j]
        waiting[c] -= taken[j]
        if taken[j] > 0:
            next_at[c] = (next_at[c] + last[j] + 1) % n
    if crowded:  # a crowded column's nodes came in rotation order: by node within each column
        lo = 0
        while lo < n_new:
            hi = lo + 1
            while hi < n_new and new_c[hi] == new_c[lo]:
                hi += 1
            if hi - lo > 24:
                new_v[lo:hi] = np.sort(new_v[lo:hi])
            else:
                for i in range(lo + 1, hi):
                    v = new_v[i]
                    p = i - 1
                    while p >= lo and new_v[p] > v:
                        new_v[p + 1] = new_v[p]
                        p -= 1
                    new_v[p + 1] = v
            lo = hi
    # queue[node, c] += backlog[c, node], row by row: the new fetches by node (a counting sort: by column within)
    start = np.zeros(n + 1, np.int64)
    for f in range(n_new):
        start[new_v[f] + 1] += 1
    for v in range(n):
        start[v + 1] += start[v]
    add_col, add_val = np.empty(n_new, np.int64), np.empty(n_new)
    at_v = start[:n].copy()
    for f in range(n_new):
        v, c = new_v[f], new_c[f]
        add_col[at_v[v]], add_val[at_v[v]] = c, backlog[c, v]
        backlog[c, v] = 0.0
        at_v[v] += 1
    place = np.empty(n_new, np.int64)
    for v in range(n):
        if start[v + 1] > start[v]:
            add_row(q_col, q_val, q_len, v, add_col, add_val, start[v], start[v + 1], place, col_nnz, col_big)
            stale[v] = True
    new_node = np.empty(fetch_node.size + n_new, np.int64)
    new_col = np.empty(fetch_col.size + n_new, np.int64)
    i = o = 0  # the new fetches put at their places among those under way (no pair in both): a few among many
    for f in range(n_new):
        c, v = new_c[f], new_v[f]
        lo, hi = i, fetch_node.size  # the first fetch under way after (c, v)
        while lo < hi:
            mid = (lo + hi) >> 1
            if fetch_col[mid] < c or (fetch_col[mid] == c and fetch_node[mid] < v):
                lo = mid + 1
            else:
                hi = mid
        span = lo - i
        new_node[o : o + span] = fetch_node[i:lo]
        new_col[o : o + span] = fetch_col[i:lo]
        o += span
        new_node[o], new_col[o] = v, c
        o += 1
        i = lo
    new_node[o:] = fetch_node[i:]
    new_col[o:] = fetch_col[i:]
    return new_node, new_col, True, q_col, q_val


@kernel
def copiers_release(
    q_col: np.ndarray,
    q_val: np.ndarray,
    q_len: np.ndarray,
    fetch_node: np.ndarray,
    fetch_col: np.ndarray,
    in_flight: np.ndarray,
    changed: np.ndarray,
) -> tuple[np.ndarray, np.ndarray]:
    """`hadoop_layer.copiers.CopierShuffle._release`: the fetches whose read queue cell (sparse: `shuffle_move`'s
    layout) is drained free their copier (the reduce's count under way drops, its copiers look again); returns the
    fetches still under way, in order. The fetches come by column, then node (`copiers_take`), so each node's come by
    column: each is found by walking its node's row from where that node's last one stopped (one pass, no search)."""
    k = fetch_node.size
    keep = np.empty(k, np.bool_)
    at = np.zeros(q_len.size, np.int64)  # per row, where the walk is
    m = 0
    for f in range(k):
        v, c = fetch_node[f], fetch_col[f]
        t = at[v]
        while t < q_len[v] and q_col[v, t] < c:
            t += 1
        at[v] = t
        keep[f] = not (q_val[v, t] if t < q_len[v] and q_col[v, t] == c else 0.0) <= DRAINED_MB
        if keep[f]:
            m += 1
        else:
            in_flight[fetch_col[f]] -= 1
            changed[fetch_col[f]] = True
    if m == k:
        return fetch_node, fetch_col
    nodes, cols = np.empty(m, np.int64), np.empty(m, np.int64)
    m = 0
    for f in range(k):
        if keep[f]:
            nodes[m], cols[m] = fetch_node[f], fetch_col[f]
            m += 1
    return nodes, cols


@kernel
def backlog_add(
    backlog: np.ndarray, node: int, cols: np.ndarray, share_mb: float, waiting: np.ndarray, changed: np.ndarray
) -> None:
    """`hadoop_layer.copiers.CopierShuffle.map_done`'s writes: `share_mb` more in node `node`'s backlog of each reduce
    column of `cols` (distinct), a column whose backlog there was empty counting one more node in `waiting`, each
    marked `changed`. One call instead of five NumPy calls (~4 us) at every map's end (140,000 in the SWIM day's
    first 20,000 s)."""
    for j in range(cols.size):
        c = cols[j]
        had = backlog[c, node]
        if had == 0:
            waiting[c] += 1
        backlog[c, node] = had + share_mb
        changed[c] = True
