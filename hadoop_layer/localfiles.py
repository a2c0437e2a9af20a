"""The files a Hadoop 1.x node reads and writes, as the guests' page caches know them (vcloud/pagecache.py).

* HDFS block replicas: one file per (split, node), created on first read, `block_mb` already on disk and not
  cached (the input was written long before); a read leaves it cached on the node that served it.
* Spill files: one per map attempt (`attempt_*/output/spillN.out` together), written by the spill thread and
  the final flush, read by `mergeParts`, deleted when the attempt ends (Hadoop removes them after the merge,
  and the attempt directory on a kill): spills deleted before write-back never reach the disk.
* Map outputs: one aggregate file per node (`file.out` of every map that ran there), written by the merge (or
  the single spill), read by the shuffle servlet; a job's share is removed when the job ends (the TaskTracker
  purges its job directories), cached and dirty data in proportion.
* Reduce merge files: one per reduce attempt (its on-disk map outputs and merge passes), deleted at its end.
* HDFS output: one aggregate file per node, its replicas' blocks; written and never read again.
"""

from __future__ import annotations

from vcloud.pagecache import PageCache


class NodeFiles:
    """File ids of the nodes' data (see the module docstring); `vm_rows[node]` is the node's VM row."""

    def __init__(self, cache: PageCache, vm_rows: list[int]) -> None:
        self.cache, self.vm_rows = cache, vm_rows
        self.map_output = [cache.create(vm) for vm in vm_rows]
        self.hdfs_output = {vm: cache.create(vm) for vm in vm_rows}
        self._blocks: dict[int, dict[int, int]] = {}  # task gid -> VM row -> file

    def block(self, task_gid: int, vm: int, size_mb: float, now: float) -> int:
        """The replica on VM row `vm` of the split of task `task_gid` (created on first use, on disk, not cached)."""
        files = self._blocks.get(task_gid)
        if files is None:
            files = self._blocks[task_gid] = {}
        f = files.get(vm)
        if f is None:
            f = files[vm] = self.cache.create(vm, size_mb, 0.0, now)
        return f

    def forget_blocks(self, task_gids: range) -> None:
        """The tasks will read their splits no more (their job has ended, `ended.retire`): their replicas' file ids
        are dropped, not the files (their cached pages stay until evicted). Gid 0, which repartitioned pieces share,
        is kept. A key and a file id per replica read held 63 MB at the end of a SWIM day on 600 slaves (406,000)."""
        for gid in task_gids:
            if gid:
                self._blocks.pop(gid, None)

    def scratch(self, vm: int, now: float) -> int:
        """A new empty local file (spills of a map attempt, merges of a reduce attempt)."""
        return self.cache.create(vm, now=now)

    def output_file(self, vm: int) -> int:
        return self.hdfs_output.get(vm, -1)

    def delete(self, file: int) -> None:
        if file >= 0:
            self.cache.delete(file)

    def drop_map_output(self, node: int, mb: float) -> None:
        """A job's map outputs on `node` are purged."""
        self.cache.shrink(self.map_output[node], mb)
