"""Per-VM traces: one row per (collection time, VM), interval sums of the guest accounting.

Each value column is one float32 array of shape (samples, VMs) that grows by doubling; `vm`, `host`
and `vcpus` are not stored per row but rebuilt from the VM table. That is 48 bytes a row: 1,000 VMs x
10,000 one-second samples hold 480 MB at most: a sample equal to the one before it, or all zeros, is not
written (`TraceRecorder._put`), and its rows take no memory. The default 10 s interval needs a tenth of
that. (Mesa's DataCollector keeps a Python tuple per agent record, about 100 B each, plus a copy when the
frame is built: reference/mesa-3.5.md 2.1.)
"""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np
import pandas as pd

from vcloud.tables import HostTable, VMTable, grown

COLUMNS = (
    "time_s", "vm", "host", "vcpus", "cpu_demand_mhz", "cpu_entitlement_mhz", "cpu_used_mhz",
    "usr_s", "sys_s", "steal_s", "iowait_s", "idle_s", "mem_active_mb", "mem_granted_mb", "swap_mb",
    "disk_mbps", "cache_mb", "dirty_mb", "cache_hit", "balloon_mb", "touched_mb",
)  # fmt: skip
VALUES = COLUMNS[4:]
_INTERVAL_SUMS = ("usr_s", "sys_s", "steal_s", "iowait_s", "idle_s")
_RATES = {"cpu_demand_mhz": "cpu_demand_mhz_s", "cpu_used_mhz": "cpu_used_mhz_s", "disk_mbps": "disk_mb"}
_CURRENT = ("cpu_entitlement_mhz", "mem_active_mb", "mem_granted_mb", "swap_mb", "cache_mb", "dirty_mb", "balloon_mb")
_READS = ("read_cache_mb", "read_disk_mb")  # cache_hit: the share of the interval's file reads the page cache served
# touched_mb: memory the guest touched in the interval (vcloud/memory.py): heap in use it holds + page cache read or
# written (at most what is cached)


class TraceRecorder:
    def __init__(self, interval_s: float) -> None:
        if not interval_s > 0:
            raise ValueError(f"trace interval must be > 0, got {interval_s}")
        self.interval_s = interval_s
        self._data: dict[str, np.ndarray] = {}
        self._source: dict[str, np.ndarray] = {}  # per column and sample: the row of `_data` that holds its values
        self._kept: dict[str, np.ndarray] = {}  # per column: the values of its last sample
        self._times: list[float] = []
        self._last: dict[str, np.ndarray] = {}
        self._last_time = 0.0
        self._capacity = 64  # rows of the first allocation

    def reserve(self, samples: int) -> None:
        """Room for `samples` rows from the start, when the run's length is known: the arrays never grow by copying
        (a copy holds old and new at once), and rows not yet written take no memory (np.zeros maps pages lazily)."""
        if not self._data:
            self._capacity = max(self._capacity, int(samples))

    def _row(self, n_vm: int) -> int:
        k = len(self._times)
        if not self._data:
            self._data = {c: np.zeros((self._capacity, n_vm), np.float32) for c in VALUES}
            self._source = {c: np.zeros(self._capacity, np.int64) for c in VALUES}
        elif k == len(next(iter(self._data.values()))):
            for c, a in self._data.items():
                self._data[c] = grown(a, (2 * len(a), n_vm), 0.0)
                self._source[c] = grown(self._source[c], (2 * len(a),), 0)
        return k

    def record(self, now: float, hosts: HostTable, vms: VMTable) -> None:
        span = now - self._last_time
        if span <= 0:
            return
        k = self._row(vms.n)
        cum = {c: vms.view(c).copy() for c in (*_INTERVAL_SUMS, *_RATES.values(), *_READS, "cache_touched_mb")}
        cache_touched = cum["cache_touched_mb"] - self._last.get("cache_touched_mb", 0.0)
        self._put("touched_mb", k, vms.view("mem_touched_mb") + np.minimum(cache_touched, vms.view("cache_mb")))
        hit, miss = (cum[c] - self._last.get(c, 0.0) for c in _READS)
        self._put("cache_hit", k, np.divide(hit, hit + miss, out=np.full(vms.n, np.nan), where=hit + miss > 0))
        for c in _INTERVAL_SUMS:
            self._put(c, k, cum[c] - self._last.get(c, 0.0))
        for c, source in _RATES.items():
            self._put(c, k, (cum[source] - self._last.get(source, 0.0)) / span)
        for c in _CURRENT:
            self._put(c, k, vms.view(c))
        self._times.append(now)
        self._last, self._last_time = cum, now

    def _put(self, column: str, k: int, values: np.ndarray) -> None:
        """Sample k of a column. Rows not written are np.zeros' untouched pages, which take no memory, so a sample
        whose values have the bits of the sample before it is not written but read from that sample's row
        (`_source`), and a row of +0.0 bits is not written at all: a column that stays zero or constant (sys time,
        hypervisor swap and balloon without reclamation; entitlements between allocator periods) costs next to
        nothing (~21 MB a column on the SWIM day's 600 VMs)."""
        row = values.astype(np.float32)
        kept = self._kept.get(column)
        if kept is not None and np.array_equal(row.view(np.uint32), kept.view(np.uint32)):
            self._source[column][k] = self._source[column][k - 1]
            return
        if row.view(np.uint32).any():
            self._data[column][k] = row
        self._source[column][k] = k
        self._kept[column] = row

    def frame(self, vms: VMTable, vm_names: list[str], host_names: list[str]) -> pd.DataFrame:
        """The tidy per-VM frame: one row per (time_s, vm), columns `COLUMNS`."""
        return next(self.parts(vms, vm_names, host_names))

    def parts(
        self, vms: VMTable, vm_names: list[str], host_names: list[str], rows: int | None = None
    ) -> Iterator[pd.DataFrame]:
        """The tidy frame (`frame`) as consecutive frames of whole samples, about `rows` rows each (at least one
        sample; all at once if None; one empty frame if nothing was recorded). Written a part at a time
        (`runner.write_table`), a long run's table never exists whole: its repeated time, VM and host columns were
        94 MB of a SWIM day on 600 slaves (5.3 M rows), and Parquet's buffers as much again."""
        k, n = len(self._times), vms.n
        step = k if rows is None else rows // max(n, 1)
        step = max(step, 1)
        times = np.asarray(self._times, dtype=np.float64)
        vm_codes, host_codes = np.arange(n, dtype=np.int32), vms.view("host").astype(np.int32)
        vcpus = vms.view("vcpus").astype(np.int16)
        for a in range(0, max(k, 1), step):
            b = min(a + step, k)
            columns: dict[str, object] = {
                "time_s": np.repeat(times[a:b], n),
                "vm": pd.Categorical.from_codes(np.tile(vm_codes, b - a), categories=vm_names),
                "host": pd.Categorical.from_codes(np.tile(host_codes, b - a), categories=host_names),
                "vcpus": np.tile(vcpus, b - a),
            }
            for c in VALUES:
                columns[c] = self._data[c][self._source[c][a:b]].reshape(-1) if b > a else np.zeros(0, np.float32)
            yield pd.DataFrame(columns, copy=False)
