"""Per-VM traces: one row per (collection time, VM), interval sums of the guest accounting.

Each value column keeps, per sample, only the VMs whose value changed since the sample before (a bit per VM and
their float32 values, `TraceRecorder._put`); `vm`, `host` and `vcpus` are not stored per row but rebuilt from the
VM table. A whole row is 48 bytes as the tables give it (1,000 VMs x 10,000 one-second samples: 480 MB); a VM
whose values hold still between samples, or stay zero, costs a bit a column. The default 10 s interval samples a
tenth as often. (Mesa's DataCollector keeps a Python tuple per agent record, about 100 B each, plus a copy when the
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
        # per value column (`_put`): the VMs whose value changed at each sample, one bit a VM (a row per sample), the
        # changed values one after another (float32), and where each sample's values start (`_at[c][k]` to
        # `_at[c][k + 1]`); `_kept`: the column's values at its last sample (zeros before the first)
        self._changed: dict[str, np.ndarray] = {}
        self._values: dict[str, np.ndarray] = {}
        self._at: dict[str, np.ndarray] = {}
        self._kept: dict[str, np.ndarray] = {}
        self._times: list[float] = []
        self._last: dict[str, np.ndarray] = {}
        self._last_time = 0.0
        self._capacity = 64  # samples of the first allocation

    def reserve(self, samples: int) -> None:
        """Room for `samples` samples from the start, when the run's length is known: the arrays never grow by
        copying (a copy holds old and new at once), and room not yet written takes no memory (np.zeros maps pages
        lazily)."""
        if not self._changed:
            self._capacity = max(self._capacity, int(samples))

    def _row(self, n_vm: int) -> int:
        k = len(self._times)
        if not self._changed:
            for c in VALUES:
                self._changed[c] = np.zeros((self._capacity, -(-n_vm // 8)), np.uint8)
                self._values[c] = np.zeros(self._capacity * n_vm, np.float32)
                self._at[c] = np.zeros(self._capacity + 1, np.int64)
                self._kept[c] = np.zeros(n_vm, np.float32)
        elif k == len(next(iter(self._changed.values()))):
            for c, bits in self._changed.items():
                self._changed[c] = grown(bits, (2 * len(bits), bits.shape[1]), 0)
                self._at[c] = grown(self._at[c], (2 * len(bits) + 1,), 0)
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
        """Sample k of a column: only the VMs whose value has other bits than at the sample before (+0.0 before the
        first) are written, a bit each in the sample's row of `_changed` and their values in `_values`; untouched
        rows and room are np.zeros' pages, which take no memory. A VM's value changes at 10-26 % of a SWIM day's
        samples on 600 slaves (few VMs are busy at once), and a column that stays zero or constant (sys time,
        hypervisor swap and balloon without reclamation) costs next to nothing: the day's trace held 186 MB as whole
        rows of the samples with a change, 0.2 of that so."""
        row = values.astype(np.float32)
        kept = self._kept[column]
        changed = row.view(np.uint32) != kept.view(np.uint32)
        at = self._at[column]
        start = int(at[k])
        if changed.any():
            new = row[changed]
            data = self._values[column]
            if start + len(new) > len(data):
                self._values[column] = data = grown(data, (max(2 * len(data), start + len(new)),), 0.0)
            data[start : start + len(new)] = new
            self._changed[column][k] = np.packbits(changed)
            kept[changed] = new
            start += len(new)
        at[k + 1] = start

    def _samples(self, column: str, a: int, b: int, before: np.ndarray) -> np.ndarray:
        """Samples a..b-1 of a column, (b - a, VMs), from its values at sample a - 1 (`before`): each VM's value is
        the last written at or before the sample (indices into `before` and the written values, carried forward)."""
        n = len(before)
        changed = np.unpackbits(self._changed[column][a:b], axis=1, count=n).view(np.bool_)
        first, last = int(self._at[column][a]), int(self._at[column][b])
        source = np.zeros(changed.shape, np.int64)  # 0: `before`; i > 0: the written value first + i - 1
        source[changed] = np.arange(1, last - first + 1)  # row-major: sample by sample, VMs in order, as written
        np.maximum.accumulate(source, axis=0, out=source)
        pool = np.concatenate([np.zeros(1, np.float32), self._values[column][first:last]])
        out = pool[source]
        held = source == 0
        out[held] = np.broadcast_to(before, out.shape)[held]
        return out

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
        before = {c: np.zeros(n, np.float32) for c in VALUES}  # each column's values at the sample before the part
        for a in range(0, max(k, 1), step):
            b = min(a + step, k)
            columns: dict[str, object] = {
                "time_s": np.repeat(times[a:b], n),
                "vm": pd.Categorical.from_codes(np.tile(vm_codes, b - a), categories=vm_names),
                "host": pd.Categorical.from_codes(np.tile(host_codes, b - a), categories=host_names),
                "vcpus": np.tile(vcpus, b - a),
            }
            for c in VALUES:
                block = self._samples(c, a, b, before[c]) if b > a else np.zeros((0, n), np.float32)
                if b > a:
                    before[c] = block[-1].copy()
                columns[c] = block.reshape(-1)
                del block
            yield pd.DataFrame(columns, copy=False)
