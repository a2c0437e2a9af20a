"""The shuffle's request queues as a sparse matrix, and the servlets' tick on it (compiled).

Row r of the queue holds what is asked of one serving node (rows 0..n-1: read from its disk, n..2n-1: send on its
NIC), by reduce column; a row keeps its entries at ascending columns (`q_col`, `q_val`, `q_len`). Every operation
gives the bits of the dense NumPy form it replaced (`ShuffleServer` in `hadoop_layer.shuffle` keeps the reading of
it; tests/test_shuffle_serving.py holds the two against each other).
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from vcloud.numerics import (
    I0,
    halving_stack,
    inline,
    kernel,
    np_sum,
    np_sum_on,
    np_sum_sparse,
    np_sum_sparse_on,
    record,
)
from vcloud.waterfill import fill

DRAINED_MB = 1e-9  # a queue entry at most this is served (float dust of repeated subtraction)


@record
class SparseQueue(NamedTuple):
    """The request queues (module docstring): each row's entries, its sum and whether that sum is stale, and each
    column's count of entries and of entries above DRAINED_MB. `col` and `val` are replaced when rows widen (the
    kernels that may widen them return the new ones)."""

    col: np.ndarray  # rows x room: each row's ascending reduce columns ...
    val: np.ndarray  # ... and MB
    length: np.ndarray  # each row's entries
    row_sum: np.ndarray
    stale: np.ndarray
    col_nnz: np.ndarray
    col_big: np.ndarray


@inline
def _find(cols: np.ndarray, length: int, c: int) -> int:
    """Where column `c` is (or would go) among a queue row's ascending columns `cols[:length]`: a binary search."""
    lo, hi = 0, length
    while lo < hi:
        mid = (lo + hi) >> 1
        if cols[mid] < c:
            lo = mid + 1
        else:
            hi = mid
    return lo


@kernel
def queue_widened(q_col: np.ndarray, q_val: np.ndarray, q_len: np.ndarray, need: int) -> tuple[np.ndarray, np.ndarray]:
    """The sparse queue's rows with room for `need` entries each (at least twice the room they had), entries kept."""
    rows, cap = q_col.shape
    room = max(need, 2 * cap)
    new_col, new_val = np.zeros((rows, room), np.int64), np.zeros((rows, room))
    for r in range(rows):
        for t in range(q_len[r]):
            new_col[r, t], new_val[r, t] = q_col[r, t], q_val[r, t]
    return new_col, new_val


@inline
def _count(col_nnz: np.ndarray, col_big: np.ndarray, c: int, old: float, new: float) -> None:
    """Keep a column's counts of entries (nonzero cells) and of entries above `DRAINED_MB` as cell `c` goes from
    `old` to `new` (0.0: no entry)."""
    col_nnz[c] += (1 if new != 0 else 0) - (1 if old != 0 else 0)
    col_big[c] += (1 if new > DRAINED_MB else 0) - (1 if old > DRAINED_MB else 0)


@inline
def _add_cell(
    q_col: np.ndarray,
    q_val: np.ndarray,
    q_len: np.ndarray,
    r: int,
    c: int,
    x: float,
    col_nnz: np.ndarray,
    col_big: np.ndarray,
) -> None:
    """`queue[r, c] += x` on the sparse queue (the row has room): an entry grows, or one is put at its place; an entry
    that becomes 0.0 is taken out."""
    length = q_len[r]
    p = _find(q_col[r], length, c)
    if p < length and q_col[r, p] == c:
        old = q_val[r, p]
        new = old + x
        _count(col_nnz, col_big, c, old, new)
        if new != 0:
            q_val[r, p] = new
            return
        for t in range(p, length - 1):
            q_col[r, t], q_val[r, t] = q_col[r, t + 1], q_val[r, t + 1]
        q_len[r] = length - 1
    elif x != 0:
        for t in range(length, p, -1):
            q_col[r, t], q_val[r, t] = q_col[r, t - 1], q_val[r, t - 1]
        q_col[r, p], q_val[r, p] = c, x
        q_len[r] = length + 1
        _count(col_nnz, col_big, c, 0.0, x)


@inline
def add_row(
    q_col: np.ndarray,
    q_val: np.ndarray,
    q_len: np.ndarray,
    r: int,
    add_col: np.ndarray,
    add_val: np.ndarray,
    lo: int,
    hi: int,
    place: np.ndarray,
    col_nnz: np.ndarray,
    col_big: np.ndarray,
) -> None:
    """`queue[r, c] += x` for `add_val[lo:hi]` (> 0) at the distinct ascending columns `add_col[lo:hi]` (the row has
    room): entries grow; the new ones go to their places in one backward pass from the row's end, which moves only
    the entries after the first new place (`place`: scratch, as long as `add_col`)."""
    length = q_len[r]
    rc, rv = q_col[r], q_val[r]
    new, p = 0, 0
    for k in range(lo, hi):
        c = add_col[k]
        while p < length and rc[p] < c:  # the columns ascend: the search goes on from the last place
            p += 1
        if p < length and rc[p] == c:
            old = rv[p]
            rv[p] = old + add_val[k]
            _count(col_nnz, col_big, c, old, rv[p])
            place[k] = -1
        else:
            place[k] = p
            new += 1
    if new == 0:
        return
    w, i = length + new - 1, length - 1
    for k in range(hi - 1, lo - 1, -1):
        if place[k] < 0:
            continue
        while i >= place[k]:
            rc[w], rv[w] = rc[i], rv[i]
            w -= 1
            i -= 1
        rc[w], rv[w] = add_col[k], add_val[k]
        _count(col_nnz, col_big, add_col[k], 0.0, add_val[k])
        w -= 1
    q_len[r] = length + new


@kernel
def queue_add(
    q_col: np.ndarray,
    q_val: np.ndarray,
    q_len: np.ndarray,
    rows: np.ndarray,
    cols: np.ndarray,
    amount: np.ndarray,
    col_nnz: np.ndarray,
    col_big: np.ndarray,
) -> tuple[np.ndarray, np.ndarray]:
    """`queue[rows, cols] += amount` on the sparse queue (distinct cells; an amount of 0.0 makes no entry). Returns
    its rows, widened if some row had no room."""
    extra = np.zeros(q_len.size, np.int64)
    for i in range(rows.size):
        extra[rows[i]] += 1
    need = 0
    for r in range(q_len.size):
        if extra[r]:
            need = max(need, q_len[r] + extra[r])
    if need > q_col.shape[1]:
        q_col, q_val = queue_widened(q_col, q_val, q_len, np.int64(need))
    for i in range(rows.size):
        _add_cell(q_col, q_val, q_len, rows[i], cols[i], amount[i], col_nnz, col_big)
    return q_col, q_val


@kernel
def queue_drop_col(
    q_col: np.ndarray,
    q_val: np.ndarray,
    q_len: np.ndarray,
    c: int,
    stale: np.ndarray,
    col_nnz: np.ndarray,
    col_big: np.ndarray,
) -> np.ndarray:
    """`queue[:, c] = 0.0` on the sparse queue, the rows that held some of it marked stale; returns the column as it
    was, dense (its sums then are NumPy's of the former column). Looks at no row when the column has no entry."""
    rows = q_len.size
    out = np.zeros(rows)
    if col_nnz[c] == 0:
        return out
    for r in range(rows):
        length = q_len[r]
        if length == 0:
            continue
        p = _find(q_col[r], length, c)
        if p < length and q_col[r, p] == c:
            out[r] = q_val[r, p]
            for t in range(p, length - 1):
                q_col[r, t], q_val[r, t] = q_col[r, t + 1], q_val[r, t + 1]
            q_len[r] = length - 1
            stale[r] = True
    col_nnz[c] = col_big[c] = 0
    return out


@kernel
def queue_dense(q_col: np.ndarray, q_val: np.ndarray, q_len: np.ndarray, cols: int) -> np.ndarray:
    """The sparse queue as the dense rows x `cols` matrix it stands for (inspection, tests, invariants)."""
    out = np.zeros((q_len.size, cols))
    for r in range(q_len.size):
        for t in range(q_len[r]):
            out[r, q_col[r, t]] = q_val[r, t]
    return out


@inline
def _merge_row(
    q_col: np.ndarray,
    q_val: np.ndarray,
    q_len: np.ndarray,
    r: int,
    add_col: np.ndarray,
    add_val: np.ndarray,
    lo: int,
    hi: int,
    tmp_col: np.ndarray,
    tmp_val: np.ndarray,
    col_nnz: np.ndarray,
    col_big: np.ndarray,
) -> None:
    """Row `r` of the sparse queue plus `add_val[lo:hi]` at the ascending columns `add_col[lo:hi]` (each cell
    `queue[r, c] += x`), its entries that are 0.0 taken out: one merge of the two sorted lists through `tmp_*`."""
    length = q_len[r]
    rc, rv = q_col[r], q_val[r]
    i, k, o = 0, lo, 0
    while i < length or k < hi:
        if k >= hi or (i < length and rc[i] < add_col[k]):
            c, new = rc[i], rv[i]
            i += 1
            if new == 0:
                col_nnz[c] -= 1
                continue
        elif i >= length or add_col[k] < rc[i]:
            c, new = add_col[k], add_val[k]
            k += 1
            if new == 0:
                continue
            _count(col_nnz, col_big, c, 0.0, new)
        else:
            c, old = rc[i], rv[i]  # an entry, maybe 0.0 (served in full this tick): counted among the entries
            new = old + add_val[k]
            i += 1
            k += 1
            col_big[c] += (1 if new > DRAINED_MB else 0) - (1 if old > DRAINED_MB else 0)
            if new == 0:
                col_nnz[c] -= 1
                continue
        tmp_col[o], tmp_val[o] = c, new
        o += 1
    for t in range(o):
        rc[t], rv[t] = tmp_col[t], tmp_val[t]
    q_len[r] = o


@kernel
def shuffle_move(
    queue: SparseQueue,
    width: int,
    n: int,
    left: np.ndarray,
    serve_row: np.ndarray,
    remaining: np.ndarray,
    col_node: np.ndarray,
    held: np.ndarray,
    served_read_mb: np.ndarray,
    served_sent_mb: np.ndarray,
) -> tuple[np.ndarray, np.ndarray, float, np.ndarray, np.ndarray, bool, bool, np.ndarray, np.ndarray]:
    """`hadoop_layer.shuffle.ShuffleServer.tick`'s arithmetic on the sparse queue (row r's requests: `q_val[r,
    :q_len[r]]` at the ascending reduce columns `q_col[r, :q_len[r]]`, all below `width`; `n` serving nodes: rows 0..n-1
    read, n..2n-1 send; `col_node`: each column's reduce's node): what each servlet moved in the tick (`left` less its
    item's remaining) is shared among its requests (water-filling), taken off its queue row, added to the served
    totals; what was read for a reduce on another node joins the send queue, what was sent is held for the reduce.
    Then the changed and stale rows are summed again (`row_sum`, `stale`), rows left with float dust are emptied,
    entries that reached 0.0 are taken out, and `left` becomes what each row has left (`ShuffleServer._set_work`'s
    bookkeeping). The queue, `held`, the served totals, `row_sum`, `stale`, `left` and the column counts (`col_nnz`:
    entries, `col_big`: entries above `DRAINED_MB`) change in place. Returns each row's MB left, the reduce columns
    whose queues or held bytes changed (they may have drained), the MB fetched on the serving node, the running items'
    rows and their MB left (in row order), whether a row with no item has something to serve, whether any bytes are
    held, and the queue's rows (widened if a send row had no room).

    The sums of the dense queue's NumPy form, bit for bit: row sums and whole sums pairwise over the `width` columns
    (`_np_sum_sparse_on`: the entries at their places, the zeros left out, exact since no cell is -0.0), the sent
    rows' column sums in row order; each cell sees the same operations in the same order (taken off, then what its
    node read added). Only the served rows' entries are read, each served row's in one pass while they are at hand
    (its share of the served MB, its sums, what it sends on or holds, and the entries left): a row served in full is
    emptied at once; then the read rows' bytes join their send rows."""
    queue = SparseQueue(*queue)  # records come as tuples (vcloud/numerics.py `record`)
    q_col, q_val, q_len, row_sum, stale = queue.col, queue.val, queue.length, queue.row_sum, queue.stale
    col_nnz, col_big = queue.col_nnz, queue.col_big
    rows2 = 2 * n
    done = np.empty(rows2)
    for i in range(rows2):
        r = serve_row[i]
        done[i] = left[i] - (remaining[r] if r >= 0 else 0.0)
    served = np.flatnonzero(done > 0)
    m = served.size
    need = 0  # a served read row's requests may each join its node's send row
    n_read = n_fetched = n_part = n_nz = 0
    for i in range(m):
        s = served[i]
        if s < n:
            need = max(need, q_len[n + s] + q_len[s])
            n_read += 1
            n_fetched += q_len[s]
        if done[s] < left[s]:
            n_part += 1
            n_nz += q_len[s]
    if need > q_col.shape[1]:
        q_col, q_val = queue_widened(q_col, q_val, q_len, np.int64(need))
    share = np.zeros(0)
    if n_part:  # servers that could not serve their whole queue: water-fill their requests
        group = np.empty(n_nz, np.int64)
        cap = np.empty(n_nz)
        capacity = np.empty(n_part)
        p = q = 0
        for i in range(m):
            s = served[i]
            if done[s] < left[s]:
                capacity[p] = done[s]
                for t in range(q_len[s]):
                    group[q], cap[q] = p, q_val[s, t]
                    q += 1
                p += 1
        share = fill(group, np.zeros(0), cap, capacity, np.zeros(0))
    moved = np.zeros(held.size, np.bool_)  # the reduces whose queues or held bytes changed
    by_server = np.zeros(rows2)
    stack = halving_stack()
    col_sum = np.zeros(width)  # the sent rows' column sums, in row order (the first row, then each next added)
    # read for reduces elsewhere: to send; the rest was fetched locally. The read rows' requests one after the other,
    # at their places in an n_read x width matrix (its whole sum is NumPy's pairwise sum of that matrix)
    f_pos, f_col, fetched = np.empty(n_fetched, np.int64), np.empty(n_fetched, np.int64), np.empty(n_fetched)
    got_row = np.empty(q_col.shape[1])  # a partly served row's shares
    q = fq = 0
    n_sent = 0
    for i in range(m):  # the read rows first (served is ascending)
        s = served[i]
        length = q_len[s]
        rc, rv = q_col[s], q_val[s]
        full = done[s] >= left[s]
        got = rv  # served in full: each request gets what it had
        if not full:
            got = got_row
            for t in range(length):
                got_row[t] = share[q + t]
            q += length
        by_server[s] = np_sum_sparse_on(rc, got, I0, np.int64(length), np.int64(width), stack)
        if s >= n:
            n_sent += 1
            for t in range(length):
                col_sum[rc[t]] += got[t]
        else:
            for t in range(length):
                c = rc[t]
                f_pos[fq], f_col[fq], fetched[fq] = i * width + c, c, got[t] * (1.0 if col_node[c] != s else 0.0)
                fq += 1
        if full:  # every entry reaches 0.0: the row is emptied
            for t in range(length):
                c = rc[t]
                moved[c] = True
                col_nnz[c] -= 1
                if rv[t] > DRAINED_MB:
                    col_big[c] -= 1
            q_len[s] = 0
        else:  # taken off; the entries that reach 0.0 are taken out
            o = 0
            for t in range(length):
                c, old, g = rc[t], rv[t], got[t]
                new = old
                if g != 0:
                    new = old - g
                    moved[c] = True
                    if old > DRAINED_MB and not new > DRAINED_MB:
                        col_big[c] -= 1
                if new != 0:
                    rc[o], rv[o] = c, new
                    o += 1
                else:
                    col_nnz[c] -= 1
            q_len[s] = o
        stale[s] = True
    for i in range(n):
        served_read_mb[i] += by_server[i]
        served_sent_mb[i] += by_server[n + i]
    if n_sent:
        for j in range(width):
            held[j] += col_sum[j]
    local = np_sum_on(by_server, I0, np.int64(n), stack) - np_sum_sparse_on(
        f_pos, fetched, I0, np.int64(n_fetched), np.int64(n_read * width), stack
    )
    # what each read row read joins its node's send row (after every served row was taken off, as the dense form)
    tmp_col, tmp_val = np.empty(q_col.shape[1], np.int64), np.empty(q_col.shape[1])
    fq = 0
    for i in range(n_read):
        s = served[i]
        hi = fq
        while hi < n_fetched and f_pos[hi] < (i + 1) * width:
            hi += 1
        _merge_row(q_col, q_val, q_len, n + s, f_col, fetched, fq, hi, tmp_col, tmp_val, col_nnz, col_big)
        stale[n + s] = True
        fq = hi
    for r in range(rows2):
        if stale[r]:
            row_sum[r] = np_sum_sparse_on(q_col[r], q_val[r], I0, q_len[r], np.int64(width), stack)
            stale[r] = False
    want = row_sum.copy()
    for r in range(rows2):
        if want[r] > 0 and want[r] <= DRAINED_MB:  # float dust of repeated subtraction: served
            for t in range(q_len[r]):
                c = q_col[r, t]
                moved[c] = True
                _count(col_nnz, col_big, c, q_val[r, t], 0.0)
            q_len[r] = 0
            want[r] = row_sum[r] = 0.0
    n_live, start = 0, False
    for r in range(rows2):
        left[r] = want[r]
        if serve_row[r] >= 0:
            n_live += 1
        elif want[r] > 0:
            start = True
    rows, rows_want = np.empty(n_live, np.int64), np.empty(n_live)
    k = 0
    for r in range(rows2):
        if serve_row[r] >= 0:
            rows[k], rows_want[k] = serve_row[r], want[r]
            k += 1
    any_held = False
    for j in range(held.size):
        any_held = any_held or held[j] != 0
    return want, moved, local, rows, rows_want, start, any_held, q_col, q_val


@kernel
def closing_drained(queue: SparseQueue, held: np.ndarray, closing: np.ndarray, drained_mb: float) -> np.ndarray:
    """`hadoop_layer.shuffle.ShuffleServer._close_drained`'s test per closing reduce column: is what it still has
    pending (its cells in the rows that may hold something, `row_sum > 0` or `stale`, plus what is held for it) at most
    `drained_mb`? A sum of cells >= 0 is at least its largest (rounding is monotonic), so a column with an entry above
    `drained_mb` (`col_big`) is not drained, and one without entries has its held bytes pending (0.0 + x is x); only a
    column of float dust is summed, as NumPy sums the gathered `queue[np.ix_(rows, closing)]` along its rows (one
    column: pairwise, a contiguous array; more: row after row, each column alone)."""
    queue = SparseQueue(*queue)  # records come as tuples (vcloud/numerics.py `record`)
    q_col, q_val, q_len, row_sum, stale = queue.col, queue.val, queue.length, queue.row_sum, queue.stale
    col_nnz, col_big = queue.col_nnz, queue.col_big
    k, n_rows = closing.size, row_sum.size
    out = np.empty(k, np.bool_)
    for j in range(k):
        c = closing[j]
        if col_big[c] > 0:
            out[j] = False
            continue
        pending = 0.0
        if col_nnz[c] > 0:
            pos, val = np.empty(col_nnz[c], np.int64), np.empty(col_nnz[c])
            m = e = 0  # m: the rows that may hold something so far; e: the column's entries among them
            for r in range(n_rows):
                if row_sum[r] > 0 or stale[r]:
                    length = q_len[r]
                    p = _find(q_col[r], length, c)
                    if p < length and q_col[r, p] == c:
                        pos[e], val[e] = m, q_val[r, p]
                        e += 1
                    m += 1
            if k == 1:
                pending = np_sum_sparse(pos, val, I0, np.int64(e), np.int64(m))
            else:
                for t in range(e):
                    pending = pending + val[t]
        out[j] = pending + held[c] <= drained_mb
    return out


@kernel
def resum_rows(
    q_col: np.ndarray, q_val: np.ndarray, q_len: np.ndarray, width: int, row_sum: np.ndarray, stale: np.ndarray
) -> None:
    """`hadoop_layer.shuffle.ShuffleServer._sums`: the `stale` rows of the sparse queue summed again into `row_sum`
    (over its first `width` columns), their flags cleared. The dense row's NumPy sum, bit for bit: its pairwise sum over
    the entries alone (`_np_sum_sparse_on`; no cell is -0.0)."""
    stack = halving_stack()
    for r in range(row_sum.size):
        if stale[r]:
            row_sum[r] = np_sum_sparse_on(q_col[r], q_val[r], I0, q_len[r], np.int64(width), stack)
            stale[r] = False


@kernel
def serving_rows(serve_row: np.ndarray, want: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """`hadoop_layer.shuffle.ShuffleServer._set_work`'s split of the queue rows: the item rows of those whose item
    runs (`serve_row` >= 0) and what they want, in row order, and the rows with no item yet that want more than 0
    (NumPy's `serve_row[live]`, `want[live]`, `np.flatnonzero(~live & (want > 0))`: seven calls)."""
    m = k = 0
    for i in range(serve_row.size):
        if serve_row[i] >= 0:
            m += 1
        elif want[i] > 0:
            k += 1
    rows, rows_want, idle = np.empty(m, np.int64), np.empty(m), np.empty(k, np.int64)
    m = k = 0
    for i in range(serve_row.size):
        if serve_row[i] >= 0:
            rows[m], rows_want[m] = serve_row[i], want[i]
            m += 1
        elif want[i] > 0:
            idle[k] = i
            k += 1
    return rows, rows_want, idle


@kernel
def held_ready(
    held: np.ndarray, col_row: np.ndarray, item_kind: np.ndarray, starting: int
) -> tuple[np.ndarray, np.ndarray, np.ndarray, float]:
    """`hadoop_layer.shuffle.ShuffleServer._deliver`'s choice: the reduce columns holding bytes (not 0) whose item's
    phase kind is not one of the bits of `starting` (its child JVM's start or poll: shuffle.STARTING) ascending, their
    item rows and held MB (then set to 0 in `held`), and the MB's sum as NumPy's `held[cols].sum()` adds it
    (pairwise: `np_sum`). Nine NumPy calls a tick before."""
    m = 0
    for c in range(held.size):
        if held[c] != 0 and not (starting >> item_kind[col_row[c]]) & 1:
            m += 1
    cols, rows, mb = np.empty(m, np.int64), np.empty(m, np.int64), np.empty(m)
    j = 0
    for c in range(held.size):
        if held[c] != 0 and not (starting >> item_kind[col_row[c]]) & 1:
            cols[j], rows[j], mb[j] = c, col_row[c], held[c]
            held[c] = 0.0
            j += 1
    return cols, rows, mb, np_sum(mb, I0, np.int64(m))
