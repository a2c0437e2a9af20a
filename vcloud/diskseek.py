"""A disk serving several sequential streams at once loses throughput to seeks as it switches between them.

A datastore's `disk_mbps` is the drive's sequential rate for one stream. When more streams read or write it at once,
the head moves between them, and each switch costs a seek plus, on average, half a revolution (`switch_ms`: 8.5 ms
average read seek of 7200 rpm drives of 2009-2013, HGST Deskstar 7K4000 and Seagate Barracuda datasheets, plus
4.17 ms, half of 8.33 ms a revolution at 7200 rpm). What decides how often it switches is the I/O scheduler:
- inside one guest, Linux's default elevator CFQ (`block/cfq-iosched.c`) gives each sequential stream a time slice
  of `slice_sync` (100 ms) before the next, idling up to `slice_idle` (8 ms) for the stream's next request; from
  Linux 2.6.32 `low_latency` (on by default) shortens the slices so that a round of all streams stays within
  `target_latency` (300 ms), but never below 2 x `slice_idle`. The share of the disk's time spent transferring is
  T / (T + switch): with T the slice. Kernels before 2.6.32 (the FlexSlot guests' 2.6.24) keep 100 ms slices.
- between the VMs of one ESXi datastore, the hypervisor's disk scheduler serves `sched_quantum` (8,
  `Disk.SchedQuantum`) sequential requests of a VM before it switches to another (VMware, "Disk.SchedQuantum",
  vSphere Storage blog 2012-08), each request the guest's readahead (`request_kb`: 128 KB, Linux VM_MAX_READAHEAD):
  8 x 128 KB at 100 MB/s is 10.2 ms between switches.
So a datastore with its streams from one VM delivers `disk_mbps x T / (T + switch)`, and one with streams from
several VMs `disk_mbps x q / (q + switch)`, q = sched_quantum x request / disk_mbps; the streams then share what
it delivers as before (`vcloud.waterfill`). Every stream with a want counts: reads, writes that reach the disk, the
page-in and the flusher's write-back.

Where it stops: the drive's own cache and elevator ordering (which shorten some seeks), the outer-to-inner zone
rates and the queue depth's effect on the switch are not modelled; CFQ's async (write) slices (40 ms) are taken as
the sync ones. Measured curves for a given drive replace the formula's constants, not its shape.
"""

from __future__ import annotations

from typing import Literal, NamedTuple

import numpy as np
from pydantic import BaseModel, ConfigDict, Field

from vcloud.numerics import kernel, record
from vcloud.work import Device


class DiskSeekSettings(BaseModel):
    """How a datastore's throughput falls with the sequential streams it serves at once (the module docstring)."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    scheduler: Literal["cfq", "none"] = Field(
        "cfq", description="the guests' I/O scheduler: cfq (Linux's default), none (no seek cost between streams)"
    )
    low_latency: bool = Field(True, description="CFQ's low_latency (Linux >= 2.6.32; off: 100 ms slices, as 2.6.24)")
    switch_ms: float = Field(
        12.67, ge=0, le=100, description="a switch between streams: average seek + half a turn, ms"
    )
    slice_sync_ms: float = Field(100.0, gt=0, le=10_000, description="CFQ slice_sync: a stream's time slice, ms")
    slice_idle_ms: float = Field(8.0, ge=0, le=1000, description="CFQ slice_idle; slices never below twice this, ms")
    target_latency_ms: float = Field(300.0, gt=0, le=10_000, description="CFQ target_latency with low_latency, ms")
    sched_quantum: int = Field(8, ge=1, le=1024, description="ESXi Disk.SchedQuantum: a VM's requests before a switch")
    request_kb: float = Field(128.0, gt=0, le=65536, description="a sequential request: Linux's readahead, KB")


@record
class SeekCurve(NamedTuple):
    """`DiskSeekSettings` in seconds, as the kernel reads them (`low_latency` as 1.0 or 0.0)."""

    switch_s: float
    slice_s: float
    idle_s: float
    target_s: float
    low_latency: float
    quantum_mb: float  # what a VM moves before the hypervisor switches: sched_quantum x request


def curve(settings: DiskSeekSettings) -> SeekCurve:
    """The settings' `SeekCurve`, made once per settings object (frozen) rather than once a tick."""
    global _CURVE
    if _CURVE[0] is not settings:
        _CURVE = (settings, SeekCurve(settings.switch_ms / 1000, settings.slice_sync_ms / 1000,
                                      settings.slice_idle_ms / 1000, settings.target_latency_ms / 1000,
                                      1.0 if settings.low_latency else 0.0,
                                      settings.sched_quantum * settings.request_kb / 1024))  # fmt: skip
    return _CURVE[1]


_CURVE: tuple = (None, None)


def guest_share(n: int, c: SeekCurve) -> float:
    """The share of a disk's time one guest's CFQ spends transferring with `n` sequential streams."""
    if n <= 1:
        return 1.0
    slice_s = c.slice_s
    if c.low_latency and n * c.slice_s > c.target_s:
        slice_s = max(c.target_s / n, 2 * c.idle_s)
    return slice_s / (slice_s + c.switch_s)


def host_share(disk_mbps: float, c: SeekCurve) -> float:
    """The share of a datastore's time transferring while several VMs stream to it (ESXi's quantum per VM)."""
    turn_s = c.quantum_mb / disk_mbps
    return turn_s / (turn_s + c.switch_s)


@record
class DiskStreams(NamedTuple):
    """The tick's streams with a want (items' streams, each VM's page-in and write-back) and where they are."""

    s_group: np.ndarray  # each item stream's row of io_bw (datastores are rows 0..hosts-1)
    s_vm: np.ndarray
    s_want: np.ndarray
    vm_host: np.ndarray
    swap_want: np.ndarray
    wb_want: np.ndarray


@kernel
def seek_shares(streams: DiskStreams, disk_mbps: np.ndarray, c: SeekCurve) -> np.ndarray:
    """Each datastore's share of `disk_mbps` delivered this tick: `guest_share` of its streams if they all come from
    one VM, `host_share` if from several, 1 with one stream or none."""
    streams, c = DiskStreams(*streams), SeekCurve(*c)  # records come as tuples (vcloud/numerics.py `record`)
    n_host, n_vm = disk_mbps.size, streams.vm_host.size
    per_vm = np.zeros(n_vm, np.int64)  # streams each VM has on its datastores ...
    vm_on = np.full(n_host, -1, np.int64)  # ... the VM of each datastore's streams (-2: several)
    count = np.zeros(n_host, np.int64)
    for s in range(streams.s_group.size):
        h = streams.s_group[s]
        if h < n_host and streams.s_want[s] > 0:
            v = streams.s_vm[s]
            count[h] += 1
            vm_on[h] = v if vm_on[h] == -1 or vm_on[h] == v else -2
            per_vm[v] += 1
    for v in range(n_vm):
        h = streams.vm_host[v]
        for want in (streams.swap_want[v], streams.wb_want[v]):
            if want > 0:
                count[h] += 1
                vm_on[h] = v if vm_on[h] == -1 or vm_on[h] == v else -2
    share = np.ones(n_host)
    for h in range(n_host):
        if count[h] <= 1:
            continue
        if vm_on[h] == -2:
            turn_s = c.quantum_mb / disk_mbps[h]
            share[h] = turn_s / (turn_s + c.switch_s)
        else:
            slice_s = c.slice_s
            if c.low_latency > 0 and count[h] * c.slice_s > c.target_s:
                slice_s = max(c.target_s / count[h], 2 * c.idle_s)
            share[h] = slice_s / (slice_s + c.switch_s)
    return share


def stage_disk_seek(st, hosts, vms, items, physics) -> None:
    """Datastores lose throughput to seeks between the sequential streams they serve at once."""
    seek = physics.disk_seek
    if seek.scheduler == "none":
        return
    n_host = hosts.n
    streams = (st.s_group, st.s_vm, st.s_want, st.vm_host, st.swap_want, st.wb_want)  # DiskStreams' fields
    disk = st.io_bw[:n_host]
    disk *= seek_shares(streams, disk.copy(), tuple(curve(seek)))  # (kernels take records as plain tuples)


def reference_disk_seek(tick) -> None:
    """The same, datastore by datastore (the oracle): `tick.disk_share` scales what `capacity` gives a datastore."""
    seek = tick.physics.disk_seek
    tick.disk_share = {}
    if seek.scheduler == "none":
        return
    c = curve(seek)
    on: dict[int, list[int]] = {}  # datastore -> the VM of each stream on it
    for s in tick.streams:
        device, where = tick.s_group[s]
        if device == Device.DISK and tick.s_want[s] > 0:
            on.setdefault(where, []).append(tick.s_vm[s])
    for v in range(tick.vms.n):
        for want in (tick.swap_want[v], tick.wb_want[v]):
            if want > 0:
                on.setdefault(tick.host_of_vm[v], []).append(v)
    for h, owners in on.items():
        if len(owners) > 1:
            several = len(set(owners)) > 1
            disk = float(tick.hosts.disk_mbps[h])
            tick.disk_share[h] = host_share(disk, c) if several else guest_share(len(owners), c)
