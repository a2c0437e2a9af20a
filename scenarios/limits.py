"""Upper bounds on what one run may ask for, so no run starts that cannot finish in hours or fit in memory.

Each is a physical or historical limit of the systems modelled, or a budget of this emulator (a tick costs
about 1 ms at the FlexSlot testbed's size; a trace row 48 bytes; a task a few kB). `vcloud show SCENARIO`
prints every setting's bounds; docs/model.md ("Bounds") gives the reasons.
"""

from __future__ import annotations

DAY_S = 86_400.0
MAX_DURATION_S = 30 * DAY_S  # simulated seconds in one run
MIN_DT_S = 0.01  # a tenth of Hadoop 1.1's shortest heartbeat (0.3 s) and below any phase worth resolving
MAX_TICKS = 20_000_000  # duration / dt: about 5 hours of ticks at 1 ms each
MAX_TRACE_ROWS = 20_000_000  # (duration / trace interval) x VMs: about 1 GB of trace
MAX_HOSTS = 10_000
MAX_SLAVES = 4_000  # the largest Hadoop MRv1 clusters (Yahoo!, 2011); the JobTracker's limit that led to YARN
MAX_CORES_PER_HOST = 512
MAX_VCPUS = 128  # vSphere's per-VM maximum (6.5 and later; 5.1 allowed 64)
MIN_CORE_MHZ, MAX_CORE_MHZ = 100.0, 10_000.0
MAX_MEM_MB = 16 * 1024 * 1024  # 16 TB: the largest hosts vSphere supports
MIN_MBPS, MAX_MBPS = 1.0, 100_000.0  # a datastore or NIC slower than 1 MB/s moves nothing in a useful time
MAX_SLOTS = 64  # per TaskTracker and kind
MAX_MAPS = 200_000  # map tasks of one run (FlexSlot's wordcount at scale 1: 2,568)
MAX_JOBS = 100_000
MIN_BLOCK_MB, MAX_BLOCK_MB = 1.0, 16_384.0  # dfs.namenode.fs-limits.min-block-size is 1 MB
MAX_IO_SORT_MB = 2047.0  # Hadoop 1.x MapTask: "Invalid io.sort.mb" above 2047 (an int array of bytes)
MAX_HEAP_MB = 65_536.0
MAX_SEED = 2**63 - 1  # a seed is kept as a 64-bit integer (results.parquet's seed column)


def number_text(value: float) -> str:
    """A bound as people write it: 2592000, not 2.592e+06; 0.01 as it is."""
    return str(int(value)) if float(value).is_integer() else f"{value:g}"


def ticks_text(duration_s: float, dt: float) -> str | None:
    """Why `duration_s` at `dt` is too many ticks (None if it is not)."""
    ticks = duration_s / dt
    if ticks > MAX_TICKS:
        return f"{ticks:,.0f} ticks ({duration_s:g} s / dt {dt:g} s), more than {MAX_TICKS:,}"
    return None


def trace_rows_text(duration_s: float, interval_s: float, vms: int) -> str | None:
    """Why a per-VM trace of `vms` VMs every `interval_s` for `duration_s` is too big (None if it is not)."""
    rows = duration_s / interval_s * vms
    if rows > MAX_TRACE_ROWS:
        return (f"up to {rows:,.0f} trace rows ({vms} VMs x {duration_s:g} s / {interval_s:g} s), "
                f"more than {MAX_TRACE_ROWS:,}")  # fmt: skip
    return None
