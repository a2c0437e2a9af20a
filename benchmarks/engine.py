"""Speed of `vcloud.engine.step` against the least NumPy work a tick of the same shape needs.

    python benchmarks/engine.py [--quick] [--ticks N] [--repeats R]

Shapes: 8, 64, 512 and 2,000 hosts of 8 cores at 2400 MHz (datastore 200 MB/s, NIC 125 MB/s), 4 VMs
of 4 vCPUs per host (CPU overcommitted 2:1, so the hosts' water-filling really divides), 6 work items
per VM in CPU (1 or 2 threads), disk-read, disk-write and network phases (stream ceilings of 40 MB/s
or none). Every 16th VM is granted less memory than it uses, so the swap stream and the stall
path run; every 5th VM has a CPU limit. Phase amounts are 1e15 (megacycles or MB), so nothing
finishes while we measure and every tick has the same shape (checked).

Timing: the tables are built directly (column arrays, no agents), a few ticks warm up, then
`time.perf_counter` around `--ticks` consecutive ticks, repeated `--repeats` times; the median is
reported as VM-ticks/s and item-ticks/s.

The yardstick, `minimal_tick`, is the least NumPy work an honest tick of the same shape has to do.
Static per-item and per-VM gathers (item -> host, item core speed, threads x core MHz, the ceilings
on each stream) are precomputed once, outside the timed loop, as a model that never moves items
could cache them. Per tick it does, and only once each:

  memory    one bincount of item memory per VM; swapped = max(used - granted, 0); stall = swapped / used;
  demand    one gather of the VM stall to the items: want = threads x core MHz x (1 - stall);
            one bincount of want per VM, capped by the VM's vCPUs and limit;
  CPU       one proportional share per host (entitlement-weighted, one bincount of the weights, no
            iterative capping, then min with the VM's cap) and one per VM to its threads (got/want
            of the VM gathered to its items);
  I/O       one bincount of outstanding disk streams per host (swap streams included) and one of
            network streams, an equal share per stream gathered to the items and capped once;
  progress  one rate (the three grants added: they are zero outside their own kind) and one
            update of `remaining`, plus the test for a phase ending;
  account   one bincount per VM counter that needs a sum over items (cpu time, runnable time,
            blocked time, sys time, disk MB, net MB), the /proc/stat split from those, one gather
            each of the steal and iowait shares back to the items, and one in-place add per
            cumulative item counter (usr, sys, steal, iowait, io_mb) and per VM counter.

It leaves out what the engine does on top of that: the capping loop of water-filling, the kind
tests done afresh every tick, LOAD items, the interpolated end of a phase, the guards for zero
division. Its results are not the engine's (no capping), only its amount of work is the floor.
"""

from __future__ import annotations

import argparse
import statistics
import time

import numpy as np

from vcloud.engine import Physics, step
from vcloud.tables import HostTable, ItemTable, VMTable
from vcloud.work import Kind

HOST_COUNTS = (8, 64, 512, 2000)
CORES, CORE_MHZ = 8, 2400.0
VMS_PER_HOST, VCPUS = 4, 4
ITEMS_PER_VM = 6
AMOUNT = 1e15  # megacycles or MB: far more than any measurement can use up
# the kinds of a VM's 6 items, rotated by one per VM so that hosts see different mixes
KIND_CYCLE = np.array([Kind.CPU, Kind.CPU, Kind.DISK_READ, Kind.DISK_WRITE, Kind.NET, Kind.CPU], dtype=np.int8)


def _filled(table_cls: type, n: int, **columns: object):
    table = table_cls(n)
    table.n = n
    for name, values in columns.items():
        table.view(name)[:] = values
    return table


def build(n_hosts: int) -> tuple[HostTable, VMTable, ItemTable]:
    """The benchmark cloud of `n_hosts` hosts, straight into the tables."""
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
    return hosts, vms, items


# ---- the yardstick ------------------------------------------------------------------------------


class MinimalTick:
    """The least NumPy work a tick of this shape needs (see the module docstring)."""

    def __init__(self, hosts: HostTable, vms: VMTable, items: ItemTable, physics: Physics) -> None:
        self.n_host, self.n_vm, self.n_item = hosts.n, vms.n, items.n
        self.vm = items.view("vm").copy()
        self.vm_host = vms.view("host").copy()
        self.item_host = self.vm_host[self.vm]
        kind = items.view("kind")
        core_vm = hosts.view("core_mhz")[self.vm_host]
        self.core_item = core_vm[self.vm]
        self.is_cpu = (kind == Kind.CPU).astype(float)
        self.is_disk = ((kind == Kind.DISK_READ) | (kind == Kind.DISK_WRITE)).astype(float)
        self.is_net = (kind == Kind.NET).astype(float)
        self.cpu_full = items.view("threads") * self.core_item * self.is_cpu
        self.blocked_io = self.is_disk + self.is_net
        self.disk_cap = np.minimum(items.view("io_mbps_max"), hosts.view("disk_mbps")[self.item_host]) * self.is_disk
        self.net_cap = np.minimum(items.view("io_mbps_max"), hosts.view("nic_mbps")[self.item_host]) * self.is_net
        self.disk_streams_static = np.bincount(self.item_host, self.is_disk, minlength=self.n_host)
        self.net_streams = np.bincount(self.item_host, self.is_net, minlength=self.n_host)
        self.vcpu_s = vms.view("vcpus").astype(float)
        self.vm_ceiling = np.minimum(self.vcpu_s * core_vm, vms.view("cpu_limit_mhz"))
        self.host_mhz = hosts.view("cores") * hosts.view("core_mhz")
        self.weight = vms.view("cpu_entitlement_mhz").copy()
        self.disk_bw = hosts.view("disk_mbps").copy()
        self.nic_bw = hosts.view("nic_mbps").copy()
        self.os_mem = vms.view("os_mem_mb").copy()
        self.granted = vms.view("mem_granted_mb").copy()
        self.mem = items.view("mem_mb").copy()
        self.sys_fraction = items.view("sys_fraction").copy()
        self.touch = physics.swap_touch_rate
        self.remaining = items.view("remaining").copy()
        self.item_acc = {k: np.zeros(self.n_item) for k in ("usr", "sys", "steal", "iowait", "io_mb")}
        self.vm_acc = {k: np.zeros(self.n_vm) for k in ("usr", "sys", "steal", "iowait", "idle", "disk", "net", "swap")}

    def __call__(self, dt: float) -> np.ndarray:
        vm, n_vm, n_host, vm_host = self.vm, self.n_vm, self.n_host, self.vm_host
        # memory
        used = self.os_mem + np.bincount(vm, self.mem, minlength=n_vm)
        swapped = np.maximum(used - self.granted, 0.0)
        stall = swapped / used
        # demand
        want = self.cpu_full * (1.0 - stall)[vm]
        vm_want = np.minimum(np.bincount(vm, want, minlength=n_vm), self.vm_ceiling)
        # CPU: host -> VM, VM -> threads, each one proportional share
        level = self.host_mhz / np.bincount(vm_host, self.weight, minlength=n_host)
        vm_got = np.minimum(self.weight * level[vm_host], vm_want)
        got_cpu = want * (vm_got / vm_want)[vm]
        # I/O: equal share per stream on each datastore / NIC
        swap_want = swapped * self.touch
        has_swap = swap_want > 0
        disk_level = self.disk_bw / (self.disk_streams_static + np.bincount(vm_host, has_swap, minlength=n_host))
        got_disk = np.minimum(self.disk_cap, disk_level[self.item_host])
        swap_got = np.minimum(swap_want, disk_level[vm_host])
        got_net = np.minimum(self.net_cap, (self.nic_bw / self.net_streams)[self.item_host])
        # progress
        rate = got_cpu + got_disk + got_net
        progress = rate * dt
        self.remaining -= progress
        done = np.flatnonzero(self.remaining <= 0)
        # accounting
        cpu_s = got_cpu * (dt / self.core_item)
        runnable_s = want * (dt / self.core_item)
        blocked_s = (self.blocked_io + stall[vm] * self.is_cpu) * dt
        io_mb = (got_disk + got_net) * dt
        vm_cpu_s = np.bincount(vm, cpu_s, minlength=n_vm)
        vm_runnable_all = np.bincount(vm, runnable_s, minlength=n_vm)
        vm_runnable = np.minimum(vm_runnable_all, self.vcpu_s * dt)
        vm_blocked = np.bincount(vm, blocked_s, minlength=n_vm)
        vm_sys = np.bincount(vm, cpu_s * self.sys_fraction, minlength=n_vm)
        vm_disk = np.bincount(vm, got_disk, minlength=n_vm) * dt + swap_got * dt
        vm_net = np.bincount(vm, got_net, minlength=n_vm) * dt
        vm_steal = np.maximum(vm_runnable - vm_cpu_s, 0.0)
        vm_idle = self.vcpu_s * dt - vm_runnable
        vm_iowait = np.minimum(vm_idle, vm_blocked)
        steal_share = vm_steal / (vm_runnable_all - vm_cpu_s + 1e-300)
        iowait_share = vm_iowait / (vm_blocked + 1e-300)
        acc = self.item_acc
        acc["usr"] += cpu_s - cpu_s * self.sys_fraction
        acc["sys"] += cpu_s * self.sys_fraction
        acc["steal"] += (runnable_s - cpu_s) * steal_share[vm]
        acc["iowait"] += blocked_s * iowait_share[vm]
        acc["io_mb"] += io_mb
        acc = self.vm_acc
        acc["usr"] += vm_cpu_s - vm_sys
        acc["sys"] += vm_sys
        acc["steal"] += vm_steal
        acc["iowait"] += vm_iowait
        acc["idle"] += vm_idle - vm_iowait
        acc["disk"] += vm_disk
        acc["net"] += vm_net
        acc["swap"] += swap_got * dt
        return done


# ---- timing -------------------------------------------------------------------------------------


def _time(tick, ticks: int, repeats: int, warmup: int) -> float:
    """Median seconds per tick over `repeats` runs of `ticks` ticks, after `warmup` ticks."""
    for _ in range(warmup):
        tick()
    runs = []
    for _ in range(repeats):
        start = time.perf_counter()
        for _ in range(ticks):
            tick()
        runs.append((time.perf_counter() - start) / ticks)
    return statistics.median(runs)


def default_ticks(n_hosts: int, quick: bool) -> int:
    """About the same work per run for every shape (more ticks for the small ones)."""
    ticks = max(20, min(2000, 200_000 // n_hosts))
    return max(5, ticks // 10) if quick else ticks


def bench(n_hosts: int, ticks: int, repeats: int, dt: float = 1.0) -> dict[str, float]:
    physics = Physics()
    hosts, vms, items = build(n_hosts)
    minimal = MinimalTick(hosts, vms, items, physics)

    def engine_tick() -> None:
        result = step(hosts, vms, items, dt, physics)
        if result.done_rows.size:
            raise RuntimeError("a phase ended during the benchmark: the shape is not steady")

    def minimal_tick() -> None:
        if minimal(dt).size:
            raise RuntimeError("a phase ended in the minimal kernel")

    warmup = max(3, ticks // 10)
    t_engine = _time(engine_tick, ticks, repeats, warmup)
    t_minimal = _time(minimal_tick, ticks, repeats, warmup)
    if not (vms.view("swap_io_mb") > 0).any():
        raise RuntimeError("no VM swapped: the swap path was not exercised")
    return {
        "hosts": n_hosts,
        "vms": vms.n,
        "items": items.n,
        "ticks": ticks,
        "engine_s": t_engine,
        "minimal_s": t_minimal,
    }


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="a tenth of the ticks and 3 repeats")
    parser.add_argument("--ticks", type=int, default=None, help="ticks per timed run (default: by shape)")
    parser.add_argument("--repeats", type=int, default=None, help="timed runs per shape, median reported")
    args = parser.parse_args(argv)
    repeats = args.repeats or (3 if args.quick else 5)
    print(f"numpy {np.__version__}; median of {repeats} runs; target: engine within 3x of the minimal kernel")
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
            f"{r['hosts']:>6} {r['vms']:>6} {r['items']:>6} {ticks:>6} {r['engine_s'] * 1e3:>8.3f} "
            f"{r['vms'] / r['engine_s']:>11.3g} {r['items'] / r['engine_s']:>13.3g} "
            f"{r['vms'] / r['minimal_s']:>11.3g} {r['items'] / r['minimal_s']:>13.3g} {ratio:>5.2f}x",
            flush=True,
        )
    print(f"worst ratio {worst:.2f}x: {'within' if worst <= 3 else 'ABOVE'} the 3x target")


if __name__ == "__main__":
    main()
