"""The guest page cache of each VM: file data in the memory the guest does not hold resident.

Linux (reference/algorithms.md 10.3; `Documentation/sysctl/vm.txt`; Do et al., CLUSTER 2021): every page the
guest is granted beyond its resident memory (OS, daemons, task heaps) holds file data. Reads of cached data
cost no disk; a read from disk leaves its data cached. Writes dirty pages in memory: the flusher writes back
dirty data older than `dirty_expire_s`, and any beyond `dirty_background_ratio` of the cache's memory, at
the datastore's pace; a writer is throttled to disk speed (its writes go through) while the dirty data
passes `dirty_ratio`. A file deleted before write-back never reaches the disk. When the cache outgrows its
memory (a heap grows, the hypervisor takes memory back), clean pages are evicted least recently used, the
inactive list before the active one (a file read again is promoted; the active list is kept at most twice
the inactive one, as the kernel does).

Files are extents, not pages: each has a size, MB cached (clean + dirty) and MB dirty, the time it was last
touched and since when it is dirty. A read sees the file's cached share when it began evenly over the bytes it
reads (less, if eviction shrinks it meanwhile), so it needs (1 - that share) MB of disk per MB; what it reads from
disk is cached as it goes, for the next reader. Defaults: Linux 2.6.24, the FlexSlot guests' kernel:
dirty_ratio 10 %, dirty_background_ratio 5 % (the 2.6.22 defaults; 2.6.30 raised them to 20/10),
dirty_expire_centisecs 3000.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from vcloud import kernels
from vcloud.tables import Columns


@dataclass(frozen=True)
class PageCacheSettings:
    """The guest kernel's page-cache tunables (vm.* sysctls); `enabled=False` models no cache at all."""

    enabled: bool = True
    dirty_ratio: float = 0.10  # vm.dirty_ratio (2.6.24)
    dirty_background_ratio: float = 0.05  # vm.dirty_background_ratio (2.6.24)
    dirty_expire_s: float = 30.0  # vm.dirty_expire_centisecs = 3000

    def __post_init__(self) -> None:
        for name in ("dirty_ratio", "dirty_background_ratio"):
            value = getattr(self, name)
            if not 0.0 <= value <= 1.0:
                raise ValueError(f"page cache {name} must be in 0..1, got {value}")
        if not (self.dirty_expire_s >= 0 and math.isfinite(self.dirty_expire_s)):
            raise ValueError(f"page cache dirty_expire_s must be finite and >= 0, got {self.dirty_expire_s}")


class FileTable(Columns):
    """Files known to the guests' caches; a row is a file for good (ids are stable), `alive` until deleted."""

    SCHEMA = {
        "vm": np.int64,  # the VM whose cache (and datastore) holds it
        "size_mb": np.float64,
        "cached_mb": np.float64,  # clean + dirty
        "dirty_mb": np.float64,
        "dirty_since_s": np.float64,  # when its oldest dirty data was written
        "last_access_s": np.float64,
        "active": np.bool_,  # on the active LRU list (read again after it was cached)
        "alive": np.bool_,
    }


class PageCache:
    """The files of all VMs and the per-tick cache arithmetic the engines call (see the module docstring)."""

    def __init__(self, settings: PageCacheSettings | None = None) -> None:
        self.settings = settings or PageCacheSettings()
        self.files = FileTable()
        self._free: list[int] = []  # ids of deleted files, for reuse
        self._maybe = np.zeros(0, dtype=bool)  # per file: may hold cached or dirty data
        self._resident: np.ndarray | None = np.zeros(0, dtype=np.int64)  # its rows, ascending (None: rebuild)
        self._kept = np.zeros(0, dtype=np.int64)  # the rows the last rebuild kept, ascending ...
        self._added: list[np.ndarray] = []  # ... and the rows touched since (with them: where `_maybe` is True)

    def touch(self, rows: np.ndarray | list[int]) -> None:
        """These files' cached or dirty data may have grown (everything else only shrinks them)."""
        n = self.files.n
        if len(self._maybe) < n:
            self._maybe = np.concatenate([self._maybe, np.zeros(max(n, 2 * len(self._maybe)) - len(self._maybe), bool)])
        new = kernels.cache_touch(self._maybe, np.asarray(rows, dtype=np.int64))  # flags them
        if new.size:
            self._added.append(new)
            self._resident = None

    def resident(self) -> np.ndarray:
        """The files that may hold cached or dirty data, ascending (the rest hold none). The per-tick sums over
        files run over these, not over every file ever created (a day of a 600-node trace creates 400,000 split
        replicas): files holding nothing add exact zeros, so the sums are the same, in the same order. Rebuilt from
        the last rebuild's rows and those touched since (the rows where `_maybe` is True), not from a scan of every
        file's flag."""
        if self._resident is None:
            added = self._added  # rows not in `_kept` (touch adds new rows only), maybe repeated
            added = added[0] if len(added) == 1 else np.concatenate(added)
            files = self.files  # merged, the empty ones left out (their flags cleared), in one compiled pass
            self._resident = self._kept = kernels.cache_resident(
                self._kept, added, files.cached_mb, files.dirty_mb, self._maybe
            )
            self._added = []
        return self._resident

    def create(self, vm: int, size_mb: float = 0.0, cached_mb: float = 0.0, now: float = 0.0) -> int:
        """A new file on VM row `vm`: `size_mb` already on disk, `cached_mb` of it in the cache. Returns its id
        (a deleted file's id is reused: the table stays as small as the live files)."""
        if not (size_mb >= 0 and 0 <= cached_mb <= size_mb):
            raise ValueError(f"file: need 0 <= cached_mb <= size_mb, got {cached_mb}, {size_mb}")
        files = self.files
        if self._free:
            f = self._free.pop()
        else:  # a new row: `files.append`, its columns written here as a reused row's are (not by keywords)
            f = files.n
            if f == len(files.vm):
                files._grow(f + 1)
            files.n = f + 1
        files.vm[f], files.size_mb[f], files.cached_mb[f], files.dirty_mb[f] = vm, size_mb, cached_mb, 0.0
        files.dirty_since_s[f], files.last_access_s[f], files.active[f], files.alive[f] = 0.0, now, False, True
        if cached_mb > 0:
            self.touch([f])
        return f

    def cached_share(self, file: int) -> float:
        """The file's cached share (as Python floats: the same IEEE arithmetic as NumPy's scalars, at every read
        phase's start)."""
        files = self.files
        size = files.size_mb.item(file)
        return min(files.cached_mb.item(file) / size, 1.0) if size > 0 else 0.0

    def delete(self, file: int) -> None:
        """The file is removed: its pages are freed, dirty ones are never written."""
        f = self.files
        if not f.alive[file]:
            return
        f.size_mb[file] = f.cached_mb[file] = f.dirty_mb[file] = 0.0
        f.alive[file] = False
        self._free.append(file)

    def shrink(self, file: int, mb: float) -> None:
        """`mb` of the file is removed (part of an aggregate file); cached and dirty data go in proportion."""
        f = self.files
        size = f.size_mb[file]
        if size <= 0:
            return
        keep = max(size - mb, 0.0) / size
        f.size_mb[file] *= keep
        f.cached_mb[file] *= keep
        f.dirty_mb[file] *= keep


# ---- the per-tick arithmetic (compiled: vcloud/kernels.py; reference.py has it plainly) ---------------------------
def evict(files: FileTable, resident: np.ndarray, vm_rows: np.ndarray, excess: np.ndarray) -> None:
    """Free `excess[v]` MB of clean cached data on each VM v of `vm_rows`: the inactive list first, least recently
    used first; the active list is first cut to twice the inactive one (its oldest files are demoted).
    `resident`: ascending rows that include every file holding cached data (PageCache.resident)."""
    kernels.evict(files.vm, files.cached_mb, files.dirty_mb, files.active, files.last_access_s, resident,
                  np.asarray(vm_rows, np.int64), excess)  # fmt: skip


def write_back(files: FileTable, resident: np.ndarray, wb_mb: np.ndarray) -> None:
    """The flusher cleaned `wb_mb[v]` MB on each VM v: the oldest dirty files first. `resident`: ascending rows
    that include every file holding dirty data (PageCache.resident)."""
    kernels.write_back(files.vm, files.dirty_mb, files.dirty_since_s, resident, wb_mb)
