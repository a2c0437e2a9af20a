"""The tick of `engine.step`, written plainly per host, VM, item and stream: the oracle the tests compare to.

Slow on purpose and never used by the model. It runs the same named stages as engine.py (memory, demand, cpu,
io, pipeline, progress, account) and fills the same `TickState`, so a test can say which stage differs. Keep it
in step with engine.py when the physics changes.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np

from vcloud.diskseek import reference_disk_seek
from vcloud.engine import ENTITLEMENT_FLOOR_MHZ, RECLAIM_BATCH, Physics, TickResult, TickState
from vcloud.hostpool import share_host_cores_reference
from vcloud.tables import HostTable, ItemTable, VMTable
from vcloud.waterfill import waterfill_reference
from vcloud.work import Device, Kind

INF = math.inf


def _share(groups: dict[int, list], weight: dict, cap: dict, capacity: dict) -> dict:
    got: dict = {}
    for g, members in groups.items():
        alloc = waterfill_reference([weight[i] for i in members], [cap[i] for i in members], capacity[g])
        got.update(zip(members, alloc, strict=True))
    return got


class _Tick:
    """One tick's plain computation; each method is one stage of engine.py."""

    def __init__(
        self, hosts: HostTable, vms: VMTable, items: ItemTable, dt: float, physics: Physics, cache, now: float
    ) -> None:
        self.hosts, self.vms, self.items, self.dt, self.physics = hosts, vms, items, dt, physics
        self.cache, self.now = cache, now
        self.disk_share: dict[int, float] = {}  # per datastore, what its streams' seeks leave (disk_seek)
        self.st = TickState()
        self.it = range(items.n)
        self.vm_of = [int(items.vm[i]) for i in self.it]
        self.kind = [Kind(int(items.kind[i])) for i in self.it]
        self.host_of_vm = [int(vms.host[v]) for v in range(vms.n)]
        self.core = [float(hosts.core_mhz[self.host_of_vm[v]]) for v in range(vms.n)]
        self.items_of_vm: dict[int, list[int]] = {v: [] for v in range(vms.n)}
        for i in self.it:
            self.items_of_vm[self.vm_of[i]].append(i)
        # streams: (item, column) in row-major order, then one disk stream per LOAD item
        self.streams = [(i, c) for i in self.it for c in range(items.width) if items.stream_vm[i, c] >= 0]
        self.streams += [(i, -1) for i in self.it if self.kind[i] == Kind.LOAD]

    def memory(self) -> None:
        vms, items = self.vms, self.items
        self.used, self.active, self.swapped, self.stall = {}, {}, {}, {}
        for v in range(vms.n):
            mine = self.items_of_vm[v]
            self.used[v] = vms.os_mem_mb[v] + sum(items.mem_mb[i] for i in mine)
            self.active[v] = vms.os_mem_mb[v] * vms.os_active_fraction[v] + sum(items.mem_active_mb[i] for i in mine)
            self.swapped[v] = max(self.used[v] - vms.mem_granted_mb[v], 0.0)
            self.stall[v] = self.swapped[v] / self.used[v] if self.used[v] > 0 else 0.0
        self.reclaim()

    def reclaim(self) -> None:
        """vcloud/memory.py per VM: the target, the balloon's step, what the guest and the hypervisor swap."""
        vms, cfg = self.vms, self.physics.memory
        self.guest, self.target, self.balloon, self.hv_swap, self.held, self.heap_touched = {}, {}, {}, {}, {}, {}
        if not cfg.reclaim:
            for v in range(vms.n):
                self.guest[v] = self.target[v] = float(vms.mem_granted_mb[v])
                self.balloon[v] = self.hv_swap[v] = 0.0
                self.held[v], self.heap_touched[v] = min(self.used[v], self.guest[v]), self.active[v]
            self._write_memory()
            return
        files = self.cache.files if self.cache is not None and self.cache.settings.enabled else None
        cached = {v: 0.0 for v in range(vms.n)}
        for f in range(files.n if files is not None else 0):
            cached[int(files.vm[f])] += float(files.cached_mb[f])
        held_before = {v: min(self.used[v], vms.mem_mb[v] - vms.balloon_mb[v]) + cached[v] for v in range(vms.n)}
        top = {v: min(vms.mem_mb[v], vms.mem_limit_cfg_mb[v]) for v in range(vms.n)}
        for v in range(vms.n):
            self.target[v] = min(float(vms.mem_granted_mb[v]), top[v])
        k = 1.0 / (1.0 - cfg.idle_tax)
        for h in range(self.hosts.n):
            limit = float(self.hosts.pool_mem_limit_mb[h])
            pooled = [v for v in range(vms.n) if self.host_of_vm[v] == h and vms.in_pool[v]]
            if math.isinf(limit) or not pooled:
                continue
            weight = []
            for v in pooled:
                f = min(max(vms.mem_touched_mb[v] / held_before[v], 0.0), 1.0) if held_before[v] > 0 else 1.0
                weight.append(vms.mem_shares[v] / (f + k * (1.0 - f)))
            base = waterfill_reference(weight, [min(held_before[v], top[v]) for v in pooled], limit)
            extra = waterfill_reference(weight, [top[v] - b for v, b in zip(pooled, base, strict=True)],
                                        max(limit - sum(base), 0.0))  # fmt: skip
            for v, b, e in zip(pooled, base, extra, strict=True):
                self.target[v] = b + e
        for v in range(vms.n):
            size, balloon = float(vms.mem_mb[v]), float(vms.balloon_mb[v])
            want = min(max(balloon + held_before[v] - self.target[v], 0.0), cfg.balloon_max_fraction * size) - balloon
            if want > 0:  # free guest pages at the non-sleeping rate, then reclaimed ones at the sleeping rate
                free = max(size - balloon - self.used[v] - cached[v], 0.0)
                quick = min(want, free, cfg.balloon_free_mb_s * self.dt)
                step = quick + min(want - quick, cfg.balloon_inflate_mb_s * (self.dt - quick / cfg.balloon_free_mb_s))
            else:
                step = max(want, -cfg.balloon_deflate_mb_s * self.dt)
            self.balloon[v] = balloon + step
            self.guest[v] = size - self.balloon[v]
            guest_swap = max(self.used[v] - self.guest[v], 0.0)
            resident = self.used[v] - guest_swap
            self.held[v] = resident + min(cached[v], max(self.guest[v] - self.used[v], 0.0))
            self.hv_swap[v] = max(self.held[v] - self.target[v], 0.0)
            stall = guest_swap / self.used[v] if self.used[v] > 0 else 0.0
            stall += self.hv_swap[v] / self.held[v] if self.held[v] > 0 else 0.0
            self.stall[v] = min(stall, 1.0)
            self.swapped[v] = guest_swap + self.hv_swap[v]
            self.heap_touched[v] = min(self.active[v], resident)
        self._write_memory()

    def _write_memory(self) -> None:
        vms = self.vms
        for v in range(vms.n):
            vms.balloon_mb[v], vms.mem_target_mb[v] = self.balloon[v], self.target[v]
            vms.hv_swap_mb[v] = self.hv_swap[v]
            vms.mem_held_mb[v], vms.mem_touched_mb[v] = self.held[v], self.heap_touched[v]

    def cache_stage(self) -> None:
        vms, items = self.vms, self.items
        self.factor = {s: 1.0 for s in self.streams}
        self.bonus = {s: 0.0 for s in self.streams}
        self.cap = {v: 0.0 for v in range(vms.n)}
        self.wb_want = {v: 0.0 for v in range(vms.n)}
        if self.cache is None or not self.cache.settings.enabled:
            return
        cfg, files = self.cache.settings, self.cache.files
        for v in range(vms.n):
            self.cap[v] = max(self.guest[v] - self.used[v], 0.0)
        mine = {v: [f for f in range(files.n) if files.vm[f] == v] for v in range(vms.n)}
        for v in range(vms.n):
            excess = sum(files.cached_mb[f] for f in mine[v]) - self.cap[v]
            if excess > 0:
                self._evict(mine[v], excess)
        headroom = {}
        for v in range(vms.n):
            dirty = sum(files.dirty_mb[f] for f in mine[v])
            expired = sum(files.dirty_mb[f] for f in mine[v] if self.now - files.dirty_since_s[f] >= cfg.dirty_expire_s)
            due = max(expired, dirty - cfg.dirty_background_ratio * self.cap[v], 0.0)
            self.wb_want[v] = min(due / self.dt, self.hosts.disk_mbps[self.host_of_vm[v]])
            headroom[v] = max(cfg.dirty_ratio * self.cap[v] - dirty, 0.0) / self.dt
        writers: dict[int, list] = {}
        for s in self.streams:
            i, c = s
            if c < 0 or items.stream_device[i, c] != Device.DISK or items.stream_file[i, c] < 0:
                continue
            f = int(items.stream_file[i, c])
            if items.stream_write[i, c]:
                writers.setdefault(int(items.stream_vm[i, c]), []).append(s)
            else:
                hit = files.cached_mb[f] / files.size_mb[f] if files.size_mb[f] > 0 else 0.0
                self.factor[s] = 1.0 - min(hit, items.stream_hit[i, c])

        for v, mine_w in writers.items():  # the headroom below the dirty limit, shared by writers with work left
            active = [s for s in mine_w if items.remaining[s[0]] > 0]
            for s in active:
                self.bonus[s] = headroom[v] / len(active)

    def _evict(self, mine: list[int], excess: float) -> None:
        """Kernel LRU: demote the oldest active files until active <= 2 x inactive, then free clean pages of the
        inactive list, oldest first, then of the active list."""
        files = self.cache.files
        mine = [f for f in mine if files.cached_mb[f] - files.dirty_mb[f] > 0]
        act = sum(files.cached_mb[f] for f in mine if files.active[f])
        inact = sum(files.cached_mb[f] for f in mine if not files.active[f])
        demote, before = max(act - 2.0 * inact, 0.0) / 3.0, 0.0
        for f in sorted((f for f in mine if files.active[f]), key=lambda f: files.last_access_s[f]):
            if demote > 0 and before < demote:
                files.active[f] = False
            before += files.cached_mb[f]
        for f in sorted(mine, key=lambda f: (bool(files.active[f]), files.last_access_s[f])):
            take = min(max(excess, 0.0), files.cached_mb[f] - files.dirty_mb[f])
            files.cached_mb[f] -= take
            excess -= take

    def demand(self) -> None:
        items, hosts = self.items, self.hosts
        self.want_cpu, self.cpu_weight = {}, {}
        for i in self.it:
            v = self.vm_of[i]
            if self.kind[i] == Kind.LOAD:
                self.want_cpu[i] = items.load_cpu_mhz[i] * (1 - self.stall[v])
                self.cpu_weight[i] = items.load_cpu_mhz[i] / self.core[v]
            elif items.need_cpu[i] > 0:
                self.want_cpu[i] = items.threads[i] * self.core[v] * (1 - self.stall[v])
                self.cpu_weight[i] = items.threads[i]
            else:
                self.want_cpu[i], self.cpu_weight[i] = 0.0, 0.0
        self.s_vm, self.s_group, self.s_need, self.s_want, self.s_full = {}, {}, {}, {}, {}
        for s in self.streams:
            i, c = s
            if c >= 0:
                v, dev = int(items.stream_vm[i, c]), int(items.stream_device[i, c])
                self.s_need[s] = float(items.stream_need[i, c]) * self.factor[s]
            else:
                v, dev = self.vm_of[i], Device.DISK
                self.s_need[s] = 0.0
            h = self.host_of_vm[v]
            self.s_vm[s] = v
            # a device of the host, or a direction of its rack's uplink
            self.s_group[s] = (dev, int(hosts.rack[h])) if dev >= Device.UPLINK else (dev, h)
            bw = self.capacity(self.s_group[s])
            if c >= 0:
                left = items.remaining[i]
                busy = left > 0 and self.s_need[s] > 0 and left * self.s_need[s] > self.bonus[s] * self.dt
                self.s_want[s] = min(items.io_mbps_max[i], bw) if busy else 0.0
                self.s_full[s] = self.s_want[s]
                if items.open[i]:  # a fed queue wants no more than it has in the tick
                    self.s_want[s] = min(self.s_want[s], left * self.s_need[s] / self.dt)
            else:
                self.s_want[s] = min(items.load_disk_mbps[i], bw)
                self.s_full[s] = self.s_want[s]
        self.swap_want = {
            v: min(self.swapped[v] * self.physics.swap_touch_rate, hosts.disk_mbps[self.host_of_vm[v]])
            for v in range(self.vms.n)
        }

    def share_cpu(self, want: dict) -> tuple[dict, dict]:
        vms, hosts = self.vms, self.hosts
        vm_want = {v: sum(want[i] for i in self.items_of_vm[v]) for v in range(vms.n)}
        demand = {v: min(vm_want[v], vms.vcpus[v] * self.core[v]) for v in range(vms.n)}
        caps = {v: min(demand[v], vms.cpu_limit_mhz[v]) for v in range(vms.n)}
        vm_got = share_host_cores_reference(hosts, vms, caps, ENTITLEMENT_FLOOR_MHZ)
        got = _share(self.items_of_vm, self.cpu_weight, want, vm_got)
        return vm_got, got

    def share_io(self, want: dict) -> tuple[dict, dict]:
        hosts = self.hosts
        racks = {int(r) for r in hosts.rack[: hosts.n]}
        groups: dict = {(d, h): [] for d in (Device.DISK, Device.NIC) for h in range(hosts.n)}
        groups |= {(d, r): [] for d in (Device.UPLINK, Device.DOWNLINK) for r in racks}
        caps, weights = {}, {}
        for s in self.streams:
            groups[self.s_group[s]].append(s)
            caps[s], weights[s] = want[s], 1.0
        for v in range(self.vms.n):
            for key, w in ((("swap", v), self.swap_want[v]), (("wb", v), self.wb_want[v])):
                groups[(0, self.host_of_vm[v])].append(key)
                caps[key], weights[key] = w, 1.0
        capacity = {g: self.capacity(g) for g in groups}
        got = _share(groups, weights, caps, capacity)
        vr = range(self.vms.n)
        return {s: got[s] for s in self.streams}, {v: got[("swap", v)] for v in vr}, {v: got[("wb", v)] for v in vr}

    def capacity(self, group: tuple[int, int]) -> float:
        device, where = group
        if device >= Device.UPLINK:
            ratio = self.physics.rack_oversubscription
            hosts = self.hosts
            nics = sum(hosts.nic_mbps[h] for h in range(hosts.n) if hosts.rack[h] == where)
            return INF if ratio is None else nics / ratio
        if device == Device.NIC:
            return float(self.hosts.nic_mbps[where])
        return float(self.hosts.disk_mbps[where]) * self.disk_share.get(where, 1.0)

    def cpu(self) -> None:
        self.vm_got1, self.got_cpu1 = self.share_cpu(self.want_cpu)

    def io(self) -> None:
        self.got_io1, self.swap_got1, self.wb_got1 = self.share_io(self.s_want)

    def rates(self, got_cpu: dict, got_io: dict) -> tuple[dict, dict, dict]:
        items = self.items
        cpu_ratio = {i: got_cpu[i] / items.need_cpu[i] if items.need_cpu[i] > 0 else INF for i in self.it}
        s_ratio = {
            s: (got_io[s] + self.bonus[s]) / self.s_need[s] if self.s_need[s] > 0 else INF
            for s in self.streams
            if s[1] >= 0
        }
        rate = {}
        for i in self.it:
            r = min([cpu_ratio[i], *(x for (j, _), x in s_ratio.items() if j == i)])
            if self.kind[i] == Kind.WAIT:
                r = 1.0
            rate[i] = 0.0 if self.kind[i] == Kind.LOAD else r
        return rate, cpu_ratio, s_ratio

    def pipeline(self) -> None:
        """Rounds in which each need of a multi-resource phase asks what the phase's other needs let it use."""
        items = self.items
        n_needs = {i: int(items.need_cpu[i] > 0) for i in self.it}
        for i, c in self.streams:
            if c >= 0:
                n_needs[i] += 1
        multi = {i: n_needs[i] > 1 for i in self.it}
        rate, cpu_ratio, s_ratio = self.rates(self.got_cpu1, self.got_io1)
        got_cpu, got_io, swap_got, wb_got = self.got_cpu1, self.got_io1, self.swap_got1, self.wb_got1
        if any(multi.values()):
            first_cpu, first_s, asked = dict(cpu_ratio), dict(s_ratio), None
            for _ in range(self.physics.pipeline_rounds - 1):
                want, s_want = dict(self.want_cpu), dict(self.s_want)
                for i in self.it:
                    if not multi[i]:
                        continue
                    mine = [s for s in self.streams if s[0] == i and s[1] >= 0]
                    needs = [
                        ("cpu", max(cpu_ratio[i], first_cpu[i])),
                        *((s, max(s_ratio[s], first_s[s])) for s in mine),
                    ]
                    for key, _ in needs:
                        other = min((r for k, r in needs if k != key), default=INF)
                        if other == INF:
                            continue
                        if key == "cpu":
                            want[i] = min(want[i], items.need_cpu[i] * other) if items.need_cpu[i] > 0 else want[i]
                        else:
                            ask = max(self.s_need[key] * other - self.bonus[key], 0.0)
                            s_want[key] = min(s_want[key], ask)
                if asked is not None and all(
                    math.isclose(a, b, rel_tol=1e-5, abs_tol=1e-8)
                    for a, b in zip([*want.values(), *s_want.values()], asked, strict=True)
                ):
                    break
                asked = [*want.values(), *s_want.values()]
                _, got_cpu = self.share_cpu(want)
                got_io, swap_got, wb_got = self.share_io(s_want)
                rate, cpu_ratio, s_ratio = self.rates(got_cpu, got_io)
        runnable = {i: max(self.got_cpu1[i], (rate[i] if rate[i] != INF else 0.0) * items.need_cpu[i])
                    for i in self.it}  # fmt: skip
        self.rate, self.got_cpu, self.got_io, self.swap_got, self.runnable = rate, got_cpu, got_io, swap_got, runnable
        self.wb_got = wb_got

    def progress(self) -> None:
        items, dt = self.items, self.dt
        self.done_rows, self.done_offset = [], []
        self.prog, self.frac = {}, {}
        for i in self.it:
            frac, progress = 1.0, 0.0
            if self.kind[i] != Kind.LOAD:
                possible = self.rate[i] * dt
                if possible >= items.remaining[i]:
                    frac = items.remaining[i] / possible if possible > 0 else 0.0  # nothing left: ends at once
                    progress = items.remaining[i]
                    items.remaining[i] = 0.0
                    self.done_rows.append(i)
                else:
                    progress = possible
                    items.remaining[i] -= possible
            self.prog[i], self.frac[i] = progress, frac

    def account(self) -> None:
        items, vms, dt = self.items, self.vms, self.dt
        cpu_s, runnable_s, blocked_s, own_mb = {}, {}, {}, {i: 0.0 for i in self.it}
        vm_disk = {v: self.swap_got[v] * dt + self.wb_got[v] * dt for v in range(vms.n)}
        vm_net = {v: 0.0 for v in range(vms.n)}
        daemon_blocked = {v: 0.0 for v in range(vms.n)}
        stream_mb = {}
        for s in self.streams:
            i, c = s
            mb = self.got_io[s] * dt if c < 0 else max(self.prog[i] * self.s_need[s] - self.bonus[s] * dt, 0.0)
            v = self.s_vm[s]
            if self.s_group[s][0] >= Device.UPLINK:  # the switch's, not the VM's
                stream_mb[s] = mb
                continue
            if self.s_group[s][0] == Device.NIC:
                vm_net[v] += mb
            else:
                vm_disk[v] += mb
                if v != self.vm_of[i] and self.got_io[s] > 0 and self.got_io1[s] > 0:
                    busy = min(self.got_io[s] / self.got_io1[s], 1.0)
                    daemon_blocked[v] += busy * self.frac[i] * dt
            stream_mb[s] = mb
            if v == self.vm_of[i]:
                own_mb[i] += mb
        f_run = {}
        for i in self.it:
            v, need = self.vm_of[i], items.need_cpu[i]
            load = self.kind[i] == Kind.LOAD
            cpu_mc = self.got_cpu[i] * dt if load else self.prog[i] * need
            cpu_s[i] = cpu_mc / self.core[v]
            cpu_bound = need > 0 and self.got_cpu1[i] / need <= self.rate[i]
            if cpu_bound or load:
                f_run[i] = 1.0
            else:
                used = self.rate[i] * need if need > 0 else 0.0
                f_run[i] = min(used / self.runnable[i], 1.0) if self.runnable[i] > 0 else 0.0
            runnable_s[i] = f_run[i] * self.want_cpu[i] * self.frac[i] * dt / self.core[v]
            io_active = float(any(self.s_want[s] > 0 for s in self.streams if s[0] == i))
            if items.open[i]:  # a fed queue waits for the time its bytes take at its streams' full speed
                took = [min(stream_mb[s] / (self.s_full[s] * dt), 1.0) if self.s_full[s] > 0 else 0.0
                        for s in self.streams if s[0] == i]  # fmt: skip
                io_active = max(took, default=0.0) / self.frac[i] if self.frac[i] > 0 else 0.0
            threads = items.threads[i] if need > 0 else 0.0
            io_blocked = io_active * (1.0 - (0.0 if load else f_run[i]))
            blocked_s[i] = (self.stall[v] * threads * f_run[i] + io_blocked) * self.frac[i] * dt
        for v in range(vms.n):
            mine = self.items_of_vm[v]
            vcpu_s = vms.vcpus[v] * dt
            total_cpu = sum(cpu_s[i] for i in mine)
            runnable = min(sum(runnable_s[i] for i in mine), vcpu_s)
            steal = max(runnable - total_cpu, 0.0)
            blocked = sum(blocked_s[i] for i in mine) + daemon_blocked[v]
            iowait = min(vcpu_s - runnable, blocked)
            sys_s = sum(cpu_s[i] * items.sys_fraction[i] for i in mine)
            waiting = sum(runnable_s[i] - cpu_s[i] for i in mine)
            for i in mine:
                items.usr_s[i] += cpu_s[i] * (1 - items.sys_fraction[i])
                items.sys_s[i] += cpu_s[i] * items.sys_fraction[i]
                items.steal_s[i] += (runnable_s[i] - cpu_s[i]) * steal / waiting if waiting > 0 else 0.0
                items.iowait_s[i] += blocked_s[i] * iowait / blocked if blocked > 0 else 0.0
                items.io_mb[i] += own_mb[i]
            used_mc = sum(cpu_s[i] * self.core[v] for i in mine)
            demand = min(sum(f_run[i] * self.want_cpu[i] for i in mine), vms.vcpus[v] * self.core[v])
            vms.cpu_demand_mhz[v] = demand
            vms.cpu_used_mhz[v] = used_mc / dt
            vms.mem_used_mb[v], vms.mem_active_mb[v], vms.swap_mb[v] = self.used[v], self.active[v], self.swapped[v]
            vms.disk_mbps[v], vms.net_mbps[v] = vm_disk[v] / dt, vm_net[v] / dt
            vms.usr_s[v] += total_cpu - sys_s
            vms.sys_s[v] += sys_s
            vms.steal_s[v] += steal
            vms.iowait_s[v] += iowait
            vms.idle_s[v] += vcpu_s - runnable - iowait
            vms.cpu_used_mhz_s[v] += used_mc
            vms.cpu_demand_mhz_s[v] += demand * dt
            vms.cpu_ready_mhz_s[v] += steal * self.core[v]
            vms.disk_mb[v] += vm_disk[v]
            vms.net_mb[v] += vm_net[v]
            vms.swap_io_mb[v] += self.swap_got[v] * dt
            vms.writeback_mb[v] += self.wb_got[v] * dt
        assert all(math.isfinite(x) for x in vms.usr_s[: vms.n])

    def cache_update(self) -> None:
        if self.cache is None or not self.cache.settings.enabled:
            return
        items, vms, files = self.items, self.vms, self.cache.files
        for s in self.streams:
            i, c = s
            if c < 0 or items.stream_device[i, c] != Device.DISK or items.stream_file[i, c] < 0:
                continue
            f, v = int(items.stream_file[i, c]), int(items.stream_vm[i, c])
            logical = self.prog[i] * float(items.stream_need[i, c])
            disk_mb = logical * self.factor[s]
            self.cache.touch([f])
            if items.stream_write[i, c]:
                files.size_mb[f] += logical
                files.cached_mb[f] = min(files.cached_mb[f] + logical, files.size_mb[f])
                dirtied = min(logical, self.bonus[s] * self.dt)
                if dirtied > 0:
                    if files.dirty_mb[f] <= 0:
                        files.dirty_since_s[f] = self.now
                    files.dirty_mb[f] += dirtied
            else:
                files.cached_mb[f] = min(files.cached_mb[f] + disk_mb, files.size_mb[f])
                hit = logical - disk_mb
                if hit > 0:
                    files.active[f] = True
                items.read_disk_mb[i] += disk_mb
                items.read_cache_mb[i] += hit
                vms.read_disk_mb[v] += disk_mb
                vms.read_cache_mb[v] += hit
            if self.physics.memory.reclaim:
                vms.cache_touched_mb[v] += logical
            if logical > 0:
                files.last_access_s[f] = self.now
        for v in range(vms.n):
            left = self.wb_got[v] * self.dt
            for f in sorted((f for f in range(files.n) if files.vm[f] == v and files.dirty_mb[f] > 0),
                            key=lambda f: files.dirty_since_s[f]):  # fmt: skip
                take = min(left, files.dirty_mb[f])
                files.dirty_mb[f] -= take
                left -= take
            mine = [f for f in range(files.n) if files.vm[f] == v]
            excess = sum(files.cached_mb[f] for f in mine) - self.cap[v]
            if excess > 0:
                self._evict(mine, excess + RECLAIM_BATCH * self.cap[v])
            vms.cache_mb[v] = sum(files.cached_mb[f] for f in range(files.n) if files.vm[f] == v)
            vms.dirty_mb[v] = sum(files.dirty_mb[f] for f in range(files.n) if files.vm[f] == v)

    def state(self) -> TickState:
        """The stages' results as the arrays engine.py keeps (for the stage-by-stage comparison)."""
        st, it, vr = self.st, list(self.it), range(self.vms.n)
        n_host = self.hosts.n
        arr = np.array
        st.used, st.active = arr([self.used[v] for v in vr]), arr([self.active[v] for v in vr])
        st.swapped, st.stall = arr([self.swapped[v] for v in vr]), arr([self.stall[v] for v in vr])
        st.guest_mem, st.target = arr([self.guest[v] for v in vr]), arr([self.target[v] for v in vr])
        st.balloon, st.hv_swap = arr([self.balloon[v] for v in vr]), arr([self.hv_swap[v] for v in vr])
        st.held, st.heap_touched = arr([self.held[v] for v in vr]), arr([self.heap_touched[v] for v in vr])
        st.s_factor = arr([self.factor[s] for s in self.streams if s[1] >= 0])
        st.s_bonus = arr([self.bonus[s] for s in self.streams if s[1] >= 0])
        st.cache_cap, st.wb_want = arr([self.cap[v] for v in vr]), arr([self.wb_want[v] for v in vr])
        st.wb_got = arr([self.wb_got[v] for v in vr])
        st.want_cpu, st.cpu_weight = arr([self.want_cpu[i] for i in it]), arr([self.cpu_weight[i] for i in it])
        st.s_item = arr([i for i, _ in self.streams], dtype=np.int64)
        n_rack = int(self.hosts.rack[:n_host].max()) + 1
        st.s_group = arr([g[1] + n_host * g[0] if g[0] < Device.UPLINK else 2 * n_host + (g[0] - Device.UPLINK) * n_rack
                          + g[1] for g in (self.s_group[s] for s in self.streams)], dtype=np.int64)  # fmt: skip
        st.s_vm = arr([self.s_vm[s] for s in self.streams], dtype=np.int64)
        st.s_need = arr([self.s_need[s] for s in self.streams])
        st.s_want = arr([self.s_want[s] for s in self.streams])
        st.s_full = arr([self.s_full[s] for s in self.streams])
        st.swap_want = arr([self.swap_want[v] for v in vr])
        st.vm_got1, st.got_cpu1 = arr([self.vm_got1[v] for v in vr]), arr([self.got_cpu1[i] for i in it])
        st.got_io1 = arr([self.got_io1[s] for s in self.streams])
        st.rate, st.got_cpu = arr([self.rate[i] for i in it]), arr([self.got_cpu[i] for i in it])
        st.got_io = arr([self.got_io[s] for s in self.streams])
        st.swap_got = arr([self.swap_got[v] for v in vr])
        st.runnable_mhz = arr([self.runnable[i] for i in it])
        st.progress = arr([self.prog[i] for i in it])
        st.frac_dt = arr([self.frac[i] * self.dt for i in it])
        st.done_rows = arr(self.done_rows, dtype=np.int64)
        return st


# the stages in engine.STAGES' order, each a function of the tick (a mechanism's reference stage is one more line)
STAGES: tuple[tuple[str, Callable[[_Tick], None]], ...] = (
    ("memory", _Tick.memory),
    ("cache", _Tick.cache_stage),
    ("demand", _Tick.demand),
    ("disk_seek", reference_disk_seek),
    ("cpu", _Tick.cpu),
    ("io", _Tick.io),
    ("pipeline", _Tick.pipeline),
    ("progress", _Tick.progress),
    ("account", _Tick.account),
    ("cache_update", _Tick.cache_update),
)


def step(
    hosts: HostTable, vms: VMTable, items: ItemTable, dt: float, physics: Physics, cache=None, now: float = 0.0
) -> TickResult:
    tick = _Tick(hosts, vms, items, dt, physics, cache, now)
    for _name, stage in STAGES:
        stage(tick)
    ended = [(i, tick.frac[i] * dt) for i in tick.done_rows if not items.open[i]]
    return TickResult(np.array([i for i, _ in ended], dtype=np.int64), np.array([o for _, o in ended]), tick.state())
