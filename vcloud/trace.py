"""Per-VM traces: one row per (collection time, VM), interval sums of the guest accounting.

Rows are stored as float32 blocks (64 bytes a row): 1,000 VMs x 10,000 one-second samples is 640 MB,
and the default 10 s interval makes it 64 MB. Mesa's DataCollector would keep Python tuples per
agent record (about 100 B each plus a copy when the frame is built; reference/mesa-3.5.md 2.1).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from vcloud.tables import HostTable, VMTable

COLUMNS = (
    "time_s", "vm", "host", "vcpus", "cpu_demand_mhz", "cpu_entitlement_mhz", "cpu_used_mhz",
    "usr_s", "sys_s", "steal_s", "iowait_s", "idle_s", "mem_active_mb", "mem_granted_mb", "swap_mb",
    "disk_mbps",
)  # fmt: skip
_INTERVAL_SUMS = ("usr_s", "sys_s", "steal_s", "iowait_s", "idle_s")


class TraceRecorder:
    def __init__(self, interval_s: float) -> None:
        if not interval_s > 0:
            raise ValueError(f"trace interval must be > 0, got {interval_s}")
        self.interval_s = interval_s
        self._blocks: list[np.ndarray] = []
        self._times: list[float] = []
        self._last: dict[str, np.ndarray] = {}
        self._last_time = 0.0

    def record(self, now: float, hosts: HostTable, vms: VMTable) -> None:
        n = vms.n
        span = now - self._last_time
        if span <= 0:
            return
        cum = {c: vms.view(c).copy() for c in (*_INTERVAL_SUMS, "cpu_demand_mhz_s", "cpu_used_mhz_s", "disk_mb")}
        delta = {c: cum[c] - self._last.get(c, np.zeros(n)) for c in cum}
        block = np.empty((n, len(COLUMNS) - 1), dtype=np.float32)
        block[:, 0] = np.arange(n)
        block[:, 1] = vms.view("host")
        block[:, 2] = vms.view("vcpus")
        block[:, 3] = delta["cpu_demand_mhz_s"] / span
        block[:, 4] = vms.view("cpu_entitlement_mhz")
        block[:, 5] = delta["cpu_used_mhz_s"] / span
        for k, c in enumerate(_INTERVAL_SUMS):
            block[:, 6 + k] = delta[c]
        block[:, 11] = vms.view("mem_active_mb")
        block[:, 12] = vms.view("mem_granted_mb")
        block[:, 13] = vms.view("swap_mb")
        block[:, 14] = delta["disk_mb"] / span
        self._blocks.append(block)
        self._times.append(now)
        self._last, self._last_time = cum, now

    @property
    def nbytes(self) -> int:
        return sum(b.nbytes for b in self._blocks)

    def frame(self, vm_names: list[str], host_names: list[str]) -> pd.DataFrame:
        """The tidy per-VM frame of the issue: one row per (time_s, vm)."""
        if not self._blocks:
            return pd.DataFrame({c: pd.Series(dtype="float64") for c in COLUMNS})
        data = np.concatenate(self._blocks)
        n = len(vm_names)
        df = pd.DataFrame(data[:, 3:], columns=list(COLUMNS[4:]))
        df.insert(0, "time_s", np.repeat(np.asarray(self._times, dtype=np.float64), n))
        df.insert(1, "vm", pd.Categorical.from_codes(data[:, 0].astype(np.int32), categories=vm_names))
        df.insert(2, "host", pd.Categorical.from_codes(data[:, 1].astype(np.int32), categories=host_names))
        df.insert(3, "vcpus", data[:, 2].astype(np.int16))
        return df
