"""Speed of `vcloud.engine.step` against the least NumPy work a tick of the same shape needs.

    python benchmarks/engine.py [--quick] [--ticks N] [--repeats R]

Shapes: 8, 64, 512 and 2,000 hosts of 8 cores at 2400 MHz (datastore 200 MB/s, NIC 125 MB/s), 4 VMs
of 4 vCPUs per host (CPU overcommitted 2:1, so the hosts' water-filling really divides), 6 work items
per VM in CPU (1 or 2 threads), disk-read, disk-write, network and pipelined phases (stream ceilings
of 40 MB/s or none). The pipelined phase is a map's: per MB of its split 20 megacycles, the split read
through the page cache (a file of its own, partly cached) and 0.5 MB of spill written through it, so
the cache stages run (hit shares, dirty data, write-back, eviction: the reads outgrow the cache) and so do
the pipeline's sharing rounds. Every 16th VM is granted less memory than it uses, so the swap stream
and the stall path run; every 5th VM has a CPU limit. Phase amounts are 1e15 (megacycles, MB or
units), so nothing finishes while we measure and every tick has the same shape (checked).

Timing: the tables are built directly (column arrays, no agents), once for the engine and once for
the yardstick; each kernel warms up for a few ticks, then `time.perf_counter` is read around `--ticks`
consecutive ticks, `--repeats` times, the engine and the yardstick in alternation (a busy spell of the
machine slows both, so the ratio is steadier than the rates). The medians are reported as VM-ticks/s
and item-ticks/s, and the ratio is median engine time / median yardstick time. The script puts its own
checkout first on sys.path, so it measures the vcloud next to it, not an installed one.

The yardstick, `minimal_tick`, is the least NumPy work an honest tick of the same shape has to do. It
has the engine's signature: it reads the same tables (the state of record, so whatever derives from
item rows - kinds, hosts, core speeds - is derived again every tick, as kinds change whenever a phase
ends and rows move when items end) and writes every output the engine writes. Each step is done once,
in one pass:

  kinds     one comparison per kind it uses (CPU, disk read, disk write, network);
  gathers   VM -> host, host core speed -> VM -> item, VM host -> item;
  memory    one bincount of item memory and one of active memory per VM; swapped = max(used - granted, 0);
            stall = swapped / used;
  demand    want = CPU threads x core MHz x (1 - stall of the VM); one bincount of want per VM, capped
            by the VM's vCPUs and then its limit;
  CPU       one proportional share per host (one bincount of entitlements, no iterative capping, then
            min with the VM's cap) and one per VM to its threads (got/want of the VM gathered to items);
  I/O       one bincount of streams per datastore (plus one of swapping VMs) and one per NIC, an equal
            share per stream gathered to the items and capped once by the stream's ceiling;
  streams   the items' streams as flat arrays (item, device, need, file), rebuilt when the item table's
            layout changes, as the engine's are;
  cache     per VM the cache's room (granted - used); per file stream its file's cached share (a read
            needs disk for the rest); after progress one bincount each of what streams read and wrote
            per file, write-back of dirty data above the background ratio and eviction of clean data
            above the room, both proportional per VM (one bincount and one gather each, no LRU order);
  pipeline  `pipeline_rounds` rounds (the engine's most), each one proportional share of CPU and of
            I/O as above, asking need x the last round's rate; a rate is min over its needs of
            grant / need (one minimum.at over the streams);
  progress  one update of `remaining` and one test for a phase ending;
  account   one bincount per VM counter that sums over items (CPU time, runnable time, blocked time,
            sys time, disk MB, network MB), the /proc/stat split from those, one gather each of the
            steal and iowait shares back to the items, one in-place add per cumulative counter, one
            write per VM state column.

Divisions that are 0/0 in ordinary ticks (a VM with no CPU demand, no waiting or no blocked thread, a
host without streams) get the cheapest guard (a max with a tiny number, or with one stream); others get
none. It leaves out what the engine does on top of that: the capping passes of water-filling (the
exact max-min shares), the asks' other-need bounds and the rounds' early end, the dirty limit's writer
throttling, LRU order in write-back and eviction, remote (DataNode) streams, LOAD items and WAIT phases,
the interpolated end of a phase, and keeping results equal to the plain reference (to 1e-9). Its numbers
are not the engine's (no capping); only the amount of work is the floor. After timing, both kernels are
checked for the identity usr + sys + steal + iowait + idle = vCPUs x elapsed time, and for swap, write-back
and cache hits having happened.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # this checkout's vcloud, not an installed one

import numpy as np

import vcloud
from vcloud.engine import Physics, step
from vcloud.pagecache import PageCache
from vcloud.tables import HostTable, ItemTable, VMTable
from vcloud.work import Kind

HOST_COUNTS = (8, 64, 512, 2000)
CORES, CORE_MHZ = 8, 2400.0
VMS_PER_HOST, VCPUS = 4, 4
ITEMS_PER_VM = 6
AMOUNT = 1e15  # megacycles or MB: far more than any measurement can use up
# the kinds of a VM's 6 items, rotated by one per VM so that hosts see different mixes
KIND_CYCLE = np.array([Kind.CPU, Kind.PIPE, Kind.DISK_READ, Kind.DISK_WRITE, Kind.NET, Kind.CPU], dtype=np.int8)
PIPE_CPU, PIPE_WRITE = 20.0, 0.5  # a map's megacycles and spill MB per MB of split
SPLIT_MB, SPLIT_CACHED_MB = 1e9, 500.0  # each pipelined item's input file: its cached part grows as it is read


def _filled(table_cls: type, n: int, **columns: object):
    table = table_cls(n)
    table.n = n
    for name, values in columns.items():
        table.view(name)[:] = values
    return table


def build(n_hosts: int) -> tuple[HostTable, VMTable, ItemTable, PageCache]:
    """The benchmark cloud of `n_hosts` hosts and its page caches, straight into the tables."""
    hosts = _filled(HostTable, n_hosts, cores=CORES, core_mhz=CORE_MHZ, mem_mb=65536.0, disk_mbps=200.0, nic_mbps=125.0)
    n_vm = n_hosts * VMS_PER_HOST
    v = np.arange(n_vm)
    vms = _filled(
        VMTable, n_vm,
        host=v // VMS_PER_HOST, vcpus=VCPUS, mem_mb=4096.0, os_mem_mb=256.0, os_active_fraction=0.25,
        cpu_shares=1000.0 * VCPUS, mem_shares=10.0 * 4096, cpu_limit_cfg_mhz=np.inf, mem_limit_cfg_mb=np.inf,
        cpu_entitlement_mhz=np.array([4800.0, 2400.0, 1200.0, 600.0])[v % 4],
        cpu_limit_mhz=np.where(v % 5 == 0, 6000.0, np.inf),
        mem_granted_mb=np.where(v % 16 == 3, 1500.0, 4096.0),  # 6 x 300 MB + 256 MB OS > 1500 MB: swaps
    )  # fmt: skip
    n_items = n_vm * ITEMS_PER_VM
    i = np.arange(n_items)
    item_vm = i // ITEMS_PER_VM
    kind = KIND_CYCLE[(i + item_vm) % ITEMS_PER_VM]
    items = _filled(
        ItemTable, n_items,
        vm=item_vm, kind=kind, remaining=AMOUNT, threads=np.where(i % 4 == 0, 2.0, 1.0),
        io_mbps_max=np.where(i % 2 == 0, np.inf, 40.0), sys_fraction=np.where(kind == Kind.CPU, 0.1, 0.0),
        mem_mb=300.0, mem_active_mb=150.0,
    )  # fmt: skip
    items.owner = [None] * n_items
    # each phase's needs per unit (vcloud.work.Phase.needs), as CloudModel._load_phase writes them
    pipe = kind == Kind.PIPE
    items.need_cpu[:n_items] = np.where(pipe, PIPE_CPU, kind == Kind.CPU)
    io = (kind == Kind.DISK_READ) | (kind == Kind.DISK_WRITE) | (kind == Kind.NET)
    items.widen(2)
    items.stream_vm[:n_items, 0] = np.where(io | pipe, item_vm, -1)
    items.stream_device[:n_items, 0] = kind == Kind.NET
    items.stream_need[:n_items, 0] = io | pipe
    items.stream_write[:n_items, 0] = kind == Kind.DISK_WRITE
    items.stream_vm[:n_items, 1] = np.where(pipe, item_vm, -1)
    items.stream_need[:n_items, 1] = np.where(pipe, PIPE_WRITE, 0.0)
    items.stream_write[:n_items, 1] = pipe
    cache = PageCache()
    for row in pipe.nonzero()[0]:  # a split (read) and a spill file (written) per pipelined item
        items.stream_file[row, 0] = cache.create(int(item_vm[row]), SPLIT_MB, SPLIT_CACHED_MB)
        items.stream_hit[row, 0] = SPLIT_CACHED_MB / SPLIT_MB
        items.stream_file[row, 1] = cache.create(int(item_vm[row]))
    items.layout += 1
    return hosts, vms, items, cache


# ---- the yardstick ------------------------------------------------------------------------------


def _streams(items: ItemTable) -> tuple[np.ndarray, ...]:
    """The streams as flat arrays (item, NIC, need; the file streams' indices, files and directions), kept until
    the layout changes (as the engine keeps its own)."""
    cached = getattr(items, "_minimal_streams", None)
    if cached is not None and cached[0] == items.layout:
        return cached[1]
    n = items.n
    item, col = (items.stream_vm[:n] >= 0).nonzero()
    file = items.stream_file[:n][item, col]
    k = (file >= 0).nonzero()[0]  # the streams through a page-cache file
    flat = (item, items.stream_device[:n][item, col] == 1, items.stream_need[:n][item, col], k, file[k],
            items.stream_write[:n][item, col][k])  # fmt: skip
    items._minimal_streams = (items.layout, flat)
    return flat


def minimal_tick(
    hosts: HostTable, vms: VMTable, items: ItemTable, cache: PageCache, dt: float, physics: Physics
) -> np.ndarray:
    """The least NumPy work a tick of this shape needs (see the module docstring). Returns the ended rows."""
    n_host, n_vm, n = hosts.n, vms.n, items.n
    vm = items.vm[:n]
    vm_host = vms.host[:n_vm]
    core_vm = hosts.core_mhz[:n_host][vm_host]
    core = core_vm[vm]
    s_item, s_nic, s_need, k, k_file, k_write = _streams(items)
    s_vm = vm[s_item]
    s_group = vm_host[s_vm] + n_host * s_nic
    need_cpu = items.need_cpu[:n]
    files, nf = cache.files, cache.files.n
    f_vm = files.vm[:nf]
    # memory
    os_mem = vms.os_mem_mb[:n_vm]
    used = os_mem + np.bincount(vm, items.mem_mb[:n], minlength=n_vm)
    active = os_mem * vms.os_active_fraction[:n_vm] + np.bincount(vm, items.mem_active_mb[:n], minlength=n_vm)
    granted = vms.mem_granted_mb[:n_vm]
    swapped = np.maximum(used - granted, 0.0)
    stall_vm = swapped / used
    # cache: a read needs disk for its file's uncached share
    room = np.maximum(granted - used, 0.0)
    hit = files.cached_mb[k_file] / np.maximum(files.size_mb[k_file], 1e-300)  # a new spill file is empty
    disk_need = s_need.copy()
    disk_need[k] *= np.where(k_write, 1.0, 1.0 - hit)
    # demand
    cpu_threads = items.threads[:n] * (need_cpu > 0)
    want = cpu_threads * core * (1.0 - stall_vm)[vm]
    vcpu_mhz = vms.vcpus[:n_vm] * core_vm
    vm_demand = np.minimum(np.bincount(vm, want, minlength=n_vm), vcpu_mhz)
    weight = vms.cpu_entitlement_mhz[:n_vm]
    host_level = hosts.cores[:n_host] * hosts.core_mhz[:n_host] / np.bincount(vm_host, weight, minlength=n_host)
    vm_share = weight * host_level[vm_host]
    vm_limit = np.minimum(vms.cpu_limit_mhz[:n_vm], vcpu_mhz)
    s_max = items.io_mbps_max[:n][s_item]
    swap_want = swapped * physics.swap_touch_rate
    swapping = np.bincount(vm_host[swap_want > 0], minlength=n_host)
    io_bw = np.concatenate((hosts.disk_mbps[:n_host], hosts.nic_mbps[:n_host]))
    io_count = np.bincount(s_group, minlength=2 * n_host)
    io_count[:n_host] += swapping
    io_level = io_bw / np.maximum(io_count, 1)
    s_want = np.minimum(s_max, io_level[s_group])
    # pipeline: rounds of one proportional share each, asking need x the last round's rate
    ask, s_ask = want, s_want
    for _ in range(physics.pipeline_rounds):
        vm_ask = np.bincount(vm, ask, minlength=n_vm)
        vm_got = np.minimum(vm_share, np.minimum(vm_ask, vm_limit))
        got_cpu = ask * (vm_got / np.maximum(vm_ask, 1e-300))[vm]
        got_io = np.minimum(s_ask, s_want)
        rate = np.divide(got_cpu, need_cpu, out=np.full(n, np.inf), where=need_cpu > 0)
        np.minimum.at(rate, s_item, got_io / np.maximum(disk_need, 1e-300))
        ask, s_ask = np.minimum(want, need_cpu * rate), disk_need * rate[s_item]
    swap_got = np.minimum(swap_want, io_level[vm_host])
    # progress
    remaining = items.remaining[:n]
    remaining -= rate * dt
    done = (remaining <= 0.0).nonzero()[0]
    # cache: reads cached, writes dirtied, write-back above the background ratio, eviction above the room
    s_mb = rate[s_item] * disk_need * dt
    logical = rate[s_item[k]] * s_need[k] * dt
    written = logical * k_write
    miss = (logical - written) * (1.0 - hit)
    from_cache = logical - written - miss
    files.size_mb[:nf] += np.bincount(k_file, written, minlength=nf)
    files.cached_mb[:nf] += np.bincount(k_file, miss + written, minlength=nf)
    files.dirty_mb[:nf] += np.bincount(k_file, written, minlength=nf)
    vm_dirty = np.bincount(f_vm, files.dirty_mb[:nf], minlength=n_vm)
    clean_share = 1.0 - np.minimum(cache.settings.dirty_background_ratio * room / np.maximum(vm_dirty, 1e-300), 1.0)
    wb_mb = vm_dirty * clean_share
    files.dirty_mb[:nf] *= 1.0 - clean_share[f_vm]
    vm_cached = np.bincount(f_vm, files.cached_mb[:nf], minlength=n_vm)
    vm_clean = vm_cached - (vm_dirty - wb_mb)
    keep = 1.0 - np.minimum(np.maximum(vm_cached - room, 0.0) / np.maximum(vm_clean, 1e-300), 1.0)
    files.cached_mb[:nf] = files.dirty_mb[:nf] + (files.cached_mb[:nf] - files.dirty_mb[:nf]) * keep[f_vm]
    # accounting per item
    s_per_mhz = dt / core
    cpu_s = got_cpu * s_per_mhz
    runnable_s = want * s_per_mhz
    io_bound = np.bincount(s_item, minlength=n) > 0
    blocked_s = (io_bound + stall_vm[vm] * cpu_threads) * dt
    sys_s = cpu_s * items.sys_fraction[:n]
    # per VM: one bincount per counter, then the /proc/stat split
    vm_cpu_s = np.bincount(vm, cpu_s, minlength=n_vm)
    vm_runnable_all = np.bincount(vm, runnable_s, minlength=n_vm)
    vm_blocked = np.bincount(vm, blocked_s, minlength=n_vm)
    vm_sys = np.bincount(vm, sys_s, minlength=n_vm)
    swap_mb = swap_got * dt
    vm_disk = np.bincount(s_vm, s_mb * ~s_nic, minlength=n_vm) + swap_mb + wb_mb
    vm_net = np.bincount(s_vm, s_mb * s_nic, minlength=n_vm)
    k_vm = s_vm[k]
    vcpu_s = vms.vcpus[:n_vm] * dt
    vm_runnable = np.minimum(vm_runnable_all, vcpu_s)
    vm_steal = np.maximum(vm_runnable - vm_cpu_s, 0.0)
    vm_idle_all = vcpu_s - vm_runnable
    vm_iowait = np.minimum(vm_idle_all, vm_blocked)
    # attribution to items
    waiting = runnable_s - cpu_s
    items.usr_s[:n] += cpu_s - sys_s
    items.sys_s[:n] += sys_s
    items.steal_s[:n] += waiting * (vm_steal / np.maximum(vm_runnable_all - vm_cpu_s, 1e-300))[vm]
    items.iowait_s[:n] += blocked_s * (vm_iowait / np.maximum(vm_blocked, 1e-300))[vm]
    items.io_mb[:n] += np.bincount(s_item, s_mb, minlength=n)
    items.read_disk_mb[:n] += np.bincount(s_item[k], miss, minlength=n)
    items.read_cache_mb[:n] += np.bincount(s_item[k], from_cache, minlength=n)
    # VM state and cumulative counters
    vm_used_mc = vm_cpu_s * core_vm
    vms.cpu_demand_mhz[:n_vm] = vm_demand
    vms.cpu_used_mhz[:n_vm] = vm_used_mc / dt
    vms.mem_used_mb[:n_vm] = used
    vms.mem_active_mb[:n_vm] = active
    vms.swap_mb[:n_vm] = swapped
    vms.disk_mbps[:n_vm] = vm_disk / dt
    vms.net_mbps[:n_vm] = vm_net / dt
    vms.usr_s[:n_vm] += vm_cpu_s - vm_sys
    vms.sys_s[:n_vm] += vm_sys
    vms.steal_s[:n_vm] += vm_steal
    vms.iowait_s[:n_vm] += vm_iowait
    vms.idle_s[:n_vm] += vm_idle_all - vm_iowait
    vms.cpu_used_mhz_s[:n_vm] += vm_used_mc
    vms.cpu_demand_mhz_s[:n_vm] += vm_demand * dt
    vms.cpu_ready_mhz_s[:n_vm] += vm_steal * core_vm
    vms.disk_mb[:n_vm] += vm_disk
    vms.net_mb[:n_vm] += vm_net
    vms.swap_io_mb[:n_vm] += swap_mb
    vms.writeback_mb[:n_vm] += wb_mb
    vms.read_cache_mb[:n_vm] += np.bincount(k_vm, from_cache, minlength=n_vm)
    vms.read_disk_mb[:n_vm] += np.bincount(k_vm, miss, minlength=n_vm)
    vms.cache_mb[:n_vm] = np.bincount(f_vm, files.cached_mb[:nf], minlength=n_vm)
    vms.dirty_mb[:n_vm] = np.bincount(f_vm, files.dirty_mb[:nf], minlength=n_vm)
    return done


# ---- timing -------------------------------------------------------------------------------------


def _run(tick, ticks: int) -> float:
    start = time.perf_counter()
    for _ in range(ticks):
        tick()
    return (time.perf_counter() - start) / ticks


def default_ticks(n_hosts: int, quick: bool) -> int:
    """About the same work per run for every shape (more ticks for the small ones)."""
    ticks = max(20, min(1000, 100_000 // n_hosts))
    return max(5, ticks // 5) if quick else ticks


def _check_identity(vms: VMTable, elapsed_s: float, what: str) -> None:
    parts = sum(vms.view(c) for c in ("usr_s", "sys_s", "steal_s", "iowait_s", "idle_s"))
    expect = vms.view("vcpus") * elapsed_s
    if not np.allclose(parts, expect, rtol=1e-9):
        raise RuntimeError(f"{what}: usr+sys+steal+iowait+idle != vCPUs x time")
    if not (vms.view("swap_io_mb") > 0).any():
        raise RuntimeError(f"{what}: no VM swapped, the swap path was not exercised")
    if not ((vms.view("writeback_mb") > 0).any() and (vms.view("read_cache_mb") > 0).any()):
        raise RuntimeError(f"{what}: the page cache was not exercised (no write-back or no cache hit)")


def bench(n_hosts: int, ticks: int, repeats: int, dt: float = 1.0) -> dict[str, float]:
    """Median seconds per tick of the engine and of the minimal kernel, timed in alternation."""
    physics = Physics()
    engine_tables, minimal_tables = build(n_hosts), build(n_hosts)
    hosts, vms, items, cache = engine_tables
    clock = [0.0]

    def engine_tick() -> None:
        if step(hosts, vms, items, dt, physics, cache, clock[0]).done_rows.size:
            raise RuntimeError("a phase ended during the benchmark: the shape is not steady")
        clock[0] += dt

    def minimal() -> None:
        if minimal_tick(*minimal_tables, dt, physics).size:
            raise RuntimeError("a phase ended in the minimal kernel")

    warmup = max(10, ticks // 5)
    _run(engine_tick, warmup)
    _run(minimal, warmup)
    t_engine, t_minimal = [], []
    for _ in range(repeats):  # alternate, so that a slow spell of the machine hits both
        t_engine.append(_run(engine_tick, ticks))
        t_minimal.append(_run(minimal, ticks))
    elapsed = (warmup + repeats * ticks) * dt
    _check_identity(engine_tables[1], elapsed, "engine")
    _check_identity(minimal_tables[1], elapsed, "minimal kernel")
    return {
        "vms": engine_tables[1].n,
        "items": engine_tables[2].n,
        "engine_s": statistics.median(t_engine),
        "minimal_s": statistics.median(t_minimal),
    }


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="a fifth of the ticks and 3 repeats")
    parser.add_argument("--ticks", type=int, default=None, help="ticks per timed run (default: by shape)")
    parser.add_argument("--repeats", type=int, default=None, help="timed runs per shape, median reported")
    args = parser.parse_args(argv)
    repeats = args.repeats or (3 if args.quick else 5)
    print(f"vcloud from {Path(vcloud.__file__).parent}; numpy {np.__version__}; median of {repeats} runs")
    print("target: engine within 2x of the minimal kernel (ratio = engine time / minimal time per tick)")
    load, cpus = os.getloadavg()[0], os.cpu_count() or 1
    if load > 0.5 * cpus:
        print(f"warning: the machine is busy (load {load:.1f} on {cpus} CPUs), the figures are unreliable")
    header = (
        f"{'hosts':>6} {'VMs':>6} {'items':>6} {'ticks':>6} {'ms/tick':>8} {'VM-ticks/s':>11} "
        f"{'item-ticks/s':>13} {'min VM-t/s':>11} {'min item-t/s':>13} {'ratio':>6}"
    )
    print(header)
    worst = 0.0
    for n_hosts in HOST_COUNTS:
        ticks = args.ticks or default_ticks(n_hosts, args.quick)
        r = bench(n_hosts, ticks, repeats)
        ratio = r["engine_s"] / r["minimal_s"]
        worst = max(worst, ratio)
        print(
            f"{n_hosts:>6} {r['vms']:>6} {r['items']:>6} {ticks:>6} {r['engine_s'] * 1e3:>8.3f} "
            f"{r['vms'] / r['engine_s']:>11.3g} {r['items'] / r['engine_s']:>13.3g} "
            f"{r['vms'] / r['minimal_s']:>11.3g} {r['items'] / r['minimal_s']:>13.3g} {ratio:>5.2f}x",
            flush=True,
        )
    print(f"worst ratio {worst:.2f}x: {'within' if worst <= 2 else 'ABOVE'} the 2x target")


if __name__ == "__main__":
    main()
