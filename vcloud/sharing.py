"""Rounds of sharing in a tick: cores to VMs to threads, bandwidth to streams, and a multi-resource phase's asks.

A phase that needs CPU and I/O at once advances at one rate set by its bottleneck (SimGrid's ptask model, DESIGN.md
4), so each need asks only what the others let it use; rounds of water-filling (`vcloud.waterfill`) repeat until the
asks settle. The plain per-agent form of the same rule is `vcloud.reference`.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from vcloud.hostpool import HostPools, host_pool_share
from vcloud.numerics import all_close, all_equal, kernel, larger, np_max, np_min, record, sum_by
from vcloud.waterfill import fill


@record
class VMCores(NamedTuple):
    """Per VM: what its vCPUs can take, its limit, host and weight (entitlement); per host: its cores' MHz."""

    vcpu_mhz: np.ndarray
    limit: np.ndarray
    host: np.ndarray
    weight: np.ndarray
    host_mhz: np.ndarray


@record
class Grants(NamedTuple):
    """A sharing round's grants: per item MHz, per stream MB/s, per VM its swap and write-back streams' MB/s."""

    cpu: np.ndarray
    io: np.ndarray
    swap: np.ndarray
    wb: np.ndarray


@record
class PipelineItems(NamedTuple):
    """Per running item: what the rounds of sharing read."""

    need_cpu: np.ndarray
    vm: np.ndarray
    want_cpu: np.ndarray
    cpu_weight: np.ndarray
    wait_rows: np.ndarray  # the WAIT items (rate 1) ...
    load_rows: np.ndarray  # ... and the LOAD items (rate 0)


@record
class PipelineStreams(NamedTuple):
    """Per stream (ordered by item): what the rounds of sharing read."""

    item: np.ndarray
    starts: np.ndarray  # where each item's streams start ...
    owners: np.ndarray  # ... and those items
    multi: np.ndarray  # per item: its phase needs more than one resource
    want: np.ndarray
    need: np.ndarray
    bonus: np.ndarray


@record
class DeviceShares(NamedTuple):
    """The io stage's other streams and devices: each VM's swap and write-back want, each stream's device row, and
    each device's MB/s."""

    swap_want: np.ndarray
    wb_want: np.ndarray
    group: np.ndarray
    bw: np.ndarray


@kernel
def least(io: np.ndarray, starts: np.ndarray, owners: np.ndarray, n: int) -> np.ndarray:
    """Each item's least ratio over its streams (inf if it has none); streams are ordered by item, `starts` are
    where each owner's run begins (`np.minimum.reduceat`)."""
    out = np.full(n, np.inf)
    for j in range(starts.size):
        end = starts[j + 1] if j + 1 < starts.size else io.size
        m = io[starts[j]]
        for s in range(starts[j] + 1, end):
            m = np_min(m, io[s])
        out[owners[j]] = m
    return out


@kernel
def rates(
    got_cpu: np.ndarray,
    need_cpu: np.ndarray,
    got_io: np.ndarray,
    s_bonus: np.ndarray,
    s_need: np.ndarray,
    starts: np.ndarray,
    owners: np.ndarray,
    wait_rows: np.ndarray,
    load_rows: np.ndarray,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Each item's rate (min over its needs of grant / need) and the ratios grant / need: per item of its CPU, per
    stream of the stream (inf where there is no such need). A waiting phase runs at rate 1, a load never ends."""
    n, k = need_cpu.size, s_bonus.size
    cpu = np.full(n, np.inf)
    for i in range(n):
        if need_cpu[i] > 0:
            cpu[i] = got_cpu[i] / need_cpu[i]
    io = np.full(k, np.inf)
    for s in range(k):
        if s_need[s] > 0:
            io[s] = (got_io[s] + s_bonus[s]) / s_need[s]
    rate = least(io, starts, owners, n)
    for i in range(n):
        rate[i] = np_min(cpu[i], rate[i])
    for i in wait_rows:
        rate[i] = 1.0
    for i in load_rows:
        rate[i] = 0.0  # never progresses; a phase whose every need is in the cache ends at once (inf)
    return rate, cpu, io


@kernel
def asks(
    cpu: np.ndarray,
    io: np.ndarray,
    item: np.ndarray,
    starts: np.ndarray,
    owners: np.ndarray,
    multi: np.ndarray,
    want_cpu: np.ndarray,
    need_cpu: np.ndarray,
    s_want: np.ndarray,
    s_need: np.ndarray,
    s_bonus: np.ndarray,
) -> tuple[np.ndarray, np.ndarray]:
    """What each need of a multi-resource phase asks for in the next round: as much as the phase's other needs let
    it use (the ratios `cpu`, `io` of their grants), never more than its standalone want. A stream's other needs are
    the item's lowest ratio, except for its first stream that has the lowest (argmin's choice, the CPU coming after
    the streams): for that one the least of the CPU and of the other streams."""
    n, k = cpu.size, io.size
    other_cpu = least(io, starts, owners, n)
    other = np.empty(k)
    for s in range(k):
        other[s] = np_min(cpu[item[s]], other_cpu[item[s]])
    for j in range(starts.size):
        end = starts[j + 1] if j + 1 < starts.size else k
        for first in range(starts[j], end):
            if io[first] == other[first]:
                m = np.inf if first == starts[j] else io[starts[j]]
                for s in range(starts[j] + 1, end):
                    m = np_min(m, np.inf if s == first else io[s])
                other[first] = np_min(cpu[owners[j]], m)
                break
    want = want_cpu.copy()
    for i in range(n):
        ask = need_cpu[i] * other_cpu[i] if multi[i] and np.isfinite(other_cpu[i]) else np.inf
        want[i] = np_min(want[i], ask)
    s_ask = s_want.copy()
    for s in range(k):
        ask = s_need[s] * other[s] if multi[item[s]] and np.isfinite(other[s]) else np.inf
        s_ask[s] = np_min(s_ask[s], np_max(ask - s_bonus[s], 0.0))
    return want, s_ask


@kernel
def share_cpu(
    want: np.ndarray, weight: np.ndarray, vm: np.ndarray, cores: VMCores, pools: HostPools
) -> tuple[np.ndarray, np.ndarray]:
    """Host cores -> VMs by entitlement (capped by demand and limit; through host-local pools if `pools` has
    them) -> threads by weight (capped by want). Returns each VM's and each item's MHz."""
    cores, pools = VMCores(*cores), HostPools(*pools)  # records come as tuples (vcloud/numerics.py `record`)
    pooled, limit0, reservation, group, w, shares = (
        pools.pooled,
        pools.limit0,
        pools.reservation,
        pools.group,
        pools.weight,
        pools.shares,
    )
    vm_vcpu_mhz, vm_limit, vm_host, vm_weight, host_mhz = (
        cores.vcpu_mhz,
        cores.limit,
        cores.host,
        cores.weight,
        cores.host_mhz,
    )
    n_vm = vm_host.size
    vm_want = sum_by(vm, want, n_vm)
    vm_cap = np.empty(n_vm)
    for v in range(n_vm):
        vm_cap[v] = np_min(np_min(vm_want[v], vm_vcpu_mhz[v]), vm_limit[v])
    if pooled.size:
        vm_got = host_pool_share(vm_cap, vm_host, host_mhz, pooled, limit0, reservation, group, w, shares)
    else:
        vm_got = fill(vm_host, vm_weight, vm_cap, host_mhz, np.zeros(0))
    return vm_got, fill(vm, weight, want, vm_got, vm_want)


@kernel
def share_io(
    s_want: np.ndarray, swap_want: np.ndarray, wb_want: np.ndarray, io_group: np.ndarray, io_bw: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Equal shares per stream on each datastore and NIC; a swap and a write-back stream per VM on its datastore.
    Returns the streams', the swap streams' and the write-back streams' MB/s."""
    k, n_vm = s_want.size, swap_want.size
    got = fill(io_group, np.zeros(0), np.concatenate((s_want, swap_want, wb_want)), io_bw, np.zeros(0))
    return got[:k].copy(), got[k : k + n_vm].copy(), got[k + n_vm :].copy()


@kernel
def pipeline(
    rounds: int,
    any_multi: bool,
    firsts: Grants,
    items: PipelineItems,
    streams: PipelineStreams,
    cores: VMCores,
    pools: HostPools,
    devices: DeviceShares,
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """`vcloud.engine.stage_pipeline`: rounds of sharing in which each need of a multi-resource phase asks only what
    the phase's other needs let it use (`asks`); a resource whose asks did not change is not shared again, and the
    rounds stop once the asks settle. `firsts`: the first round's grants. Returns each item's rate, the last round's
    grants and each item's CPU rate while runnable."""
    firsts, items, streams = Grants(*firsts), PipelineItems(*items), PipelineStreams(*streams)  # tuples (`record`)
    devices = DeviceShares(*devices)  # (`cores` and `pools` go to `share_cpu` as they came)
    got_cpu1, got_io1, swap_got1, wb_got1 = firsts.cpu, firsts.io, firsts.swap, firsts.wb
    need_cpu, vm, want_cpu, cpu_weight = items.need_cpu, items.vm, items.want_cpu, items.cpu_weight
    wait_rows, load_rows = items.wait_rows, items.load_rows
    item, starts, owners, multi = streams.item, streams.starts, streams.owners, streams.multi
    s_want, s_need, s_bonus = streams.want, streams.need, streams.bonus
    swap_want, wb_want, io_group, io_bw = devices.swap_want, devices.wb_want, devices.group, devices.bw
    rate, cpu, ratio_io = rates(got_cpu1, need_cpu, got_io1, s_bonus, s_need, starts, owners, wait_rows, load_rows)
    got_cpu, got_io, swap_got, wb_got = got_cpu1, got_io1, swap_got1, wb_got1
    if any_multi:
        first_cpu, first_io = cpu, ratio_io
        shared_cpu, shared_io = want_cpu, s_want  # the asks the current grants answer
        asked_cpu, asked_io = np.zeros(0), np.zeros(0)
        for r in range(rounds - 1):
            # a need's potential: the larger of what it got competing with its standalone want (round 1) and now
            # (two needs that cap each other's asks would otherwise never grow again)
            want, ask_io = asks(larger(first_cpu, cpu), larger(first_io, ratio_io), item, starts, owners, multi,
                                want_cpu, need_cpu, s_want, s_need, s_bonus)  # fmt: skip
            if r > 0 and all_close(want, asked_cpu) and all_close(ask_io, asked_io):
                break
            asked_cpu, asked_io = want, ask_io
            if not all_equal(want, shared_cpu):
                got_cpu = share_cpu(want, cpu_weight, vm, cores, pools)[1]
                shared_cpu = want
            if not all_equal(ask_io, shared_io):
                got_io, swap_got, wb_got = share_io(ask_io, swap_want, wb_want, io_group, io_bw)
                shared_io = ask_io
            rate, cpu, ratio_io = rates(got_cpu, need_cpu, got_io, s_bonus, s_need, starts, owners, wait_rows,
                                        load_rows)  # fmt: skip
    runnable = np.empty(rate.size)
    for i in range(rate.size):
        runnable[i] = np_max(got_cpu1[i], (rate[i] if np.isfinite(rate[i]) else 0.0) * need_cpu[i])
    return rate, got_cpu, got_io, swap_got, wb_got, runnable
