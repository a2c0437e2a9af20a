"""Quincy: scheduling as a min-cost flow (Isard et al., SOSP 2009), as H-Quincy ports it to Hadoop 1.x.

Sources: /work/shared/papers/h-quincy.txt (H-Quincy, "HQ" below) and algorithms.md 8 ("A8"). One flow network
per slot kind (maps, reduces), built from the running jobs whenever the cluster changed:

    task --(1, cost)--> X (cluster aggregator) --> R_l (racks) --> C_m (computers) --(slots of m)--> S (sink)
    task --(1, gamma)--> C_m for preferred computers, task --(1, rho_l)--> R_l for preferred racks,
    task --(1, upsilon)--> U_j (job j's unscheduled node) --(F_j - E_j)--> S.

Each task supplies one unit; U_j supplies F_j - N_j (a demand when negative), so job j runs between E_j and
F_j of its N_j tasks (HQ 3.2.1). Costs (HQ 3.2.2, A8): data transfer psi per GB through a rack switch and xi
per GB through the core switch; alpha (to X) is the cost on the worst computer, rho_l the worst in rack l,
gamma_m the cost on m; upsilon = omega x seconds the task has waited unscheduled; a running task's edge to its
computer costs gamma - theta (theta = seconds it has run, the continuation cost). Costs are integers for the
solver: round(cost x cost_scale); at the default 1000, one unit is psi x 1 MB (1/1024 GB, rounded) or 2 ms of
waiting. Reduces enter their network once the job passes Hadoop's slow start; their data is their partition of
the finished maps' outputs, where those maps ran. Fairness (A8): A_j = max-min integer shares of the kind's
slots over the jobs' N_j; "none" E_j = 0, F_j = N_j; "fair-preemption" E_j = F_j = A_j; "fair" (running tasks
keep their slots) F_j = max(A_j, running_j) and E_j = A_j as far as the free slots allow.

The flow is solved again when a job arrives or ends, an attempt starts or ends, or slots change (launches the
plan itself made are not changes), and otherwise cached; see `_idle` for the one exception. The network is built
as lists (a map's edges and costs are computed once per split and cached) and solved by OR-Tools' min-cost
flow (`mincostflow.py`); where several assignments are optimal, it picks one of them.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Literal

import numpy as np
from pydantic import BaseModel, ConfigDict, Field

from hadoop_layer.interfaces import ClusterView, Kill, Launch, TaskScheduler
from hadoop_layer.tasks import Job, Task, TaskAttempt, TaskKind, TaskState
from hadoop_layer.tracker import TaskTracker
from policies.schedulers.mincostflow import network_simplex
from vcloud.waterfill import waterfill
from vcloud.work import ItemState

GB_MB = 1024.0


class QuincySettings(BaseModel):
    model_config = ConfigDict(extra="forbid")
    fairness: Literal["none", "fair", "fair-preemption"] = Field(
        "none",
        description="none: E=0, F=N (HQ 3.4 'Q', what H-Quincy implements); fair: E=F=A_j as far as running tasks, "
        "never killed, allow; fair-preemption: E=F=A_j, running tasks may go to U_j and are killed (A8)",
    )
    psi: float = Field(1.0, ge=0, description="cost per GB through a rack switch (HQ 3.2.2; A8 ToR cost 1)")
    xi: float = Field(2.0, ge=0, description="cost per GB through the core switch (HQ 3.2.2; A8 core cost 2)")
    omega: float = Field(0.5, ge=0, description="wait-time factor, cost per second unscheduled (HQ 3.2.2, A8)")
    preferred_fraction: float = Field(
        0.1, gt=0, le=1, description="preferred computers/racks hold >= this share of the input (A8, FIRM 0.1)"
    )
    cost_scale: float = Field(1000.0, gt=0, description="integer solver costs = round(cost x cost_scale) (ours)")
    idle_resolve_s: float = Field(
        1.0,
        ge=0,
        description="re-solve an unchanged cluster after this long when a free tracker gets nothing while tasks "
        "wait unscheduled: waiting costs grow with time (ours)",
    )
    preemption_period_s: float = Field(
        1.0, ge=0.1, le=86400, description="how often fair-preemption asks for kills (ours)"
    )


@dataclass
class Plan:
    """One solved network: where the optimal flow sends each task."""

    routed: dict[int, list[Task]] = field(default_factory=dict)  # computer node -> pending tasks sent there
    unscheduled: list[Task] = field(default_factory=list)  # pending tasks sent to U_j
    kills: list[TaskAttempt] = field(default_factory=list)  # running attempts sent to U_j (preemption)
    cost: int = 0  # total cost of the flow, in scaled integer units


_SINK, _RACK, _COMPUTER, _X, _UNSCHEDULED, _TASKS = range(6)  # node kinds of a _Network


@dataclass
class _Network:
    """One slot kind's flow network as lists (node demands; edges' ends, capacities and costs), what each node
    is (`kind`, and its rack, computer, job or group number in `ident`), where the edges of the racks, of X
    and of each task group start, the task groups, and the cost constant left out of the network."""

    demand: list[int] = field(default_factory=list)
    kind: list[int] = field(default_factory=list)
    ident: list[int] = field(default_factory=list)
    src: list[int] = field(default_factory=list)
    tgt: list[int] = field(default_factory=list)
    cap: list[int] = field(default_factory=list)
    weight: list[int] = field(default_factory=list)
    rack_first: dict[int, int] = field(default_factory=dict)
    rack_size: dict[int, int] = field(default_factory=dict)
    x_first: int = 0
    group_first: list[int] = field(default_factory=list)
    groups: list[list[Task]] = field(default_factory=list)
    constant: int = 0

    def node(self, kind: int, ident: int, demand: int = 0) -> int:
        self.demand.append(demand)
        self.kind.append(kind)
        self.ident.append(ident)
        return len(self.demand) - 1

    def edge(self, u: int, v: int, capacity: int, weight: int) -> None:
        self.src.append(u)
        self.tgt.append(v)
        self.cap.append(capacity)
        self.weight.append(weight)


def integer_shares(capacity: int, demands: list[int]) -> list[int]:
    """Max-min fair integer shares A_j (A8: "A_j ~ min(N_j, M/K) water-filled"): vcloud.waterfill, then the
    largest fractional parts get the slots the floors leave, so the shares sum to min(capacity, sum demands)."""
    if not demands:
        return []
    caps = np.asarray(demands, dtype=float)
    share = waterfill(np.zeros(len(caps), dtype=np.int64), None, caps, np.array([float(capacity)]))
    base = np.minimum(np.floor(share + 1e-9), caps).astype(np.int64)
    left = int(min(capacity, caps.sum()) - base.sum())
    for i in np.argsort(-(share - base), kind="stable"):
        if left <= 0:
            break
        if base[i] < caps[i]:
            base[i] += 1
            left -= 1
    return [int(b) for b in base]


class QuincyScheduler(TaskScheduler):
    name = "quincy"

    def __init__(self, settings: QuincySettings | None = None) -> None:
        # OR-Tools is imported with the scheduler that needs it (not with the package: network_simplex), here and
        # not at the first solve, so that `solve_times_s` does not count the import
        import ortools.graph.python.min_cost_flow  # noqa: F401

        self.settings = settings or QuincySettings()
        self.plans: dict[TaskKind, Plan] = {TaskKind.MAP: Plan(), TaskKind.REDUCE: Plan()}
        self.solve_times_s: list[float] = []  # network_simplex time of each solve (both kinds), perf_counter
        self.solved_at_s: float | None = None
        self._signature: tuple | None = None
        self._topology: _Topology | None = None
        self._map_cache: dict[Task, tuple] = {}  # task -> (its replicas, _Costs, static edges)
        self._static_cache: dict[tuple, tuple] = {}  # interned static edge lists of maps
        # seconds the ended attempts of each unfinished task ran (from ClusterView.ended_since), for its wait
        self._ran: dict[Task, float] = {}
        self._ended_seen = 0
        # fair-preemption kills between heartbeats: the model runs `adjust` every period_s (periodic policies)
        fp = self.settings.fairness == "fair-preemption"
        self.period_s: float | None = self.settings.preemption_period_s if fp else None

    # ---- the interface --------------------------------------------------------------------------------------
    def assign(self, tracker: TaskTracker, cluster: ClusterView) -> list[Launch]:
        """Launch what the current optimal flow sends to this tracker's computer node, into its free slots."""
        if self._signature_of(cluster) != self._signature or self._idle(tracker, cluster):
            self.solve(cluster)
        launches: list[Launch] = []
        for kind, plan in self.plans.items():
            free = tracker.free(kind)
            queue = plan.routed.get(tracker.node, [])
            while free > 0 and queue:
                task = queue.pop(0)
                if task.state != TaskState.PENDING:
                    continue
                locality = cluster.locality(task, tracker) if kind == TaskKind.MAP else None
                launches.append(Launch(task, locality))
                free -= 1
        if launches and self._signature is not None:
            # the launches follow the plan, so the flow stays optimal: do not count them as a change
            maps = sum(launch.task.kind == TaskKind.MAP for launch in launches)
            jobs, ended, running_maps, running_reduces, caps = self._signature
            self._signature = (jobs, ended, running_maps + maps, running_reduces + len(launches) - maps, caps)
        return launches

    def adjust(self, cluster: ClusterView) -> list[Kill]:
        return self.preemptions(cluster)

    def preemptions(self, cluster: ClusterView) -> list[Kill]:
        """Running attempts the optimal flow sends to their job's unscheduled node (fair-preemption only)."""
        if self.settings.fairness != "fair-preemption":
            return []
        if self._signature_of(cluster) != self._signature:
            self.solve(cluster)
        kills = [Kill(a) for plan in self.plans.values() for a in plan.kills if a.state == ItemState.RUNNING]
        for plan in self.plans.values():
            plan.kills = []
        return kills

    # ---- solving ----------------------------------------------------------------------------------------------
    def solve(self, cluster: ClusterView) -> None:
        """Rebuild and solve both networks; one entry in solve_times_s per call."""
        for attempt in cluster.ended_since(self._ended_seen):
            task = attempt.task
            if task.state != TaskState.DONE:
                self._ran[task] = self._ran.get(task, 0) + attempt.runtime_s
        self._ended_seen = cluster.ended_count()
        spent = 0.0
        for kind in (TaskKind.MAP, TaskKind.REDUCE):
            net = self.build(cluster, kind)
            if not net.groups:
                self.plans[kind] = Plan()
                continue
            start = time.perf_counter()
            flow = network_simplex(net.demand, net.src, net.tgt, net.cap, net.weight).tolist()
            spent += time.perf_counter() - start
            self.plans[kind] = self._plan(net, flow)
        self.solve_times_s.append(spent)
        self.solved_at_s = cluster.now
        self._signature = self._signature_of(cluster)

    def build(self, cluster: ClusterView, kind: TaskKind) -> _Network:
        """The flow network of one slot kind, with its task nodes ("T", g) and a constant cost left out of it.

        Tasks whose edges are identical (same job, same integer costs: e.g. never-run splits with the same
        replica racks) share one node of supply k with edges of capacity k: the same optimum, a far smaller
        network. Without preemption a running task has a single edge, to its computer: those of a job on a
        computer share a node at cost 0, and their continuation costs are the returned constant."""
        s, now = self.settings, cluster.now
        trackers = cluster.trackers
        topology = self._topology_of(trackers)
        slots = [t.map_slots if kind == TaskKind.MAP else t.reduce_slots for t in trackers]
        jobs = [j for j in cluster.jobs if _eligible(j, kind)]
        live = (TaskState.PENDING, TaskState.RUNNING)
        per_job = [[t for t in _tasks(j, kind) if t.state in live] for j in jobs]
        pinned = [0] * len(trackers)
        running = []
        for ts in per_job:
            active = [t.active[-1].tracker.node for t in ts if t.state == TaskState.RUNNING]
            running.append(len(active))
            for node in active:
                pinned[node] += 1
        n = [len(ts) for ts in per_job]
        free = sum(max(c - p, 0) for c, p in zip(slots, pinned, strict=True))
        lower, upper = self._bounds(n, running, sum(slots), free)

        net = _Network()
        sink = net.node(_SINK, 0, int(sum(upper)))
        rack_node: dict[int, int] = {}
        computer_node: list[int] = []
        order: list[tuple[int, int]] = []  # (rack, -1) or (rack, tracker i), in node order
        for i, t in enumerate(trackers):  # each rack's node before its first computer's
            if t.rack not in rack_node:
                rack_node[t.rack] = net.node(_RACK, t.rack)
                order.append((t.rack, -1))
            computer_node.append(net.node(_COMPUTER, t.node))
            order.append((t.rack, i))
        by_rack: dict[int, int] = {}
        for t, c in zip(trackers, slots, strict=True):
            by_rack[t.rack] = by_rack.get(t.rack, 0) + c
        for rack, i in order:  # edges by source: each R to its computers, each C to S
            if i < 0:
                net.rack_first[rack] = len(net.src)
                for k, t in enumerate(trackers):
                    if t.rack == rack:
                        net.edge(rack_node[rack], computer_node[k], slots[k], 0)
                net.rack_size[rack] = len(net.src) - net.rack_first[rack]
            else:
                net.edge(computer_node[i], sink, max(slots[i], pinned[trackers[i].node]), 0)
        x = net.node(_X, 0)
        net.x_first = len(net.src)
        for rack, c in by_rack.items():
            net.edge(x, rack_node[rack], c, 0)

        preempt = s.fairness == "fair-preemption"
        targets = {("X",): x} | {("R", r): v for r, v in rack_node.items()}
        targets |= {("C", t.node): computer_node[i] for i, t in enumerate(trackers)}
        groups: dict[tuple, list[Task]] = {}
        group_edges: list[tuple] = []  # per group: ((target node, scaled cost), ...)
        for job, ts, n_j, e_j, f_j in zip(jobs, per_job, n, lower, upper, strict=True):
            u = net.node(_UNSCHEDULED, job.number, int(n_j - f_j))
            net.edge(u, sink, int(f_j - e_j), 0)
            shared = None
            if kind == TaskKind.REDUCE:
                costs = _reduce_costs(job, topology, s)
                shared = costs, self._static_edges(costs, targets, intern=False)
            job_start = job.start_s if job.start_s is not None else now
            never_ran = self._scale(s.omega * max(now - job_start, 0.0))
            for task in ts:
                costs, static = shared or self._map_edges(task, topology, targets)
                running_task = task.state == TaskState.RUNNING
                if running_task and not preempt:
                    attempt = task.active[-1]
                    here = attempt.tracker.node
                    theta = now - (attempt.start_s if attempt.start_s is not None else now)
                    net.constant += self._scale(costs.at(here) - theta)
                    key: tuple = (job.number, 1, here)  # one node per job and computer
                    if key not in groups:
                        groups[key] = []
                        group_edges.append(((targets[("C", here)], 0),))
                    groups[key].append(task)
                    continue
                wait = self._scale(s.omega * _waited_s(task, now, self._ran)) if task.launches else never_ran
                if running_task:  # its own node: it may be killed (sent to U) or kept at the continuation cost
                    attempt = task.active[-1]
                    here = attempt.tracker.node
                    theta = now - (attempt.start_s if attempt.start_s is not None else now)
                    stay = self._scale(costs.at(here) - theta)
                    groups[(job.number, 2, task.index)] = [task]
                    group_edges.append(((targets[("C", here)], stay), (u, wait)))
                    continue
                key = (job.number, 0, wait, id(static))  # equal edge lists are one (cached) object
                if key not in groups:
                    groups[key] = []
                    group_edges.append(((u, wait), *static))
                groups[key].append(task)
        net.groups = list(groups.values())
        for tasks, edges in zip(net.groups, group_edges, strict=True):
            node = net.node(_TASKS, len(net.group_first), -len(tasks))
            net.group_first.append(len(net.src))
            for target, w in edges:
                net.edge(node, target, len(tasks), w)
        return net

    def _bounds(self, n: list[int], running: list[int], slots: int, free: int) -> tuple[list[int], list[int]]:
        """E_j and F_j per job (A8 fairness variants). A_j: integer max-min shares of the kind's slots."""
        fairness = self.settings.fairness
        if fairness == "none":
            return [0] * len(n), list(n)
        share = integer_shares(slots, n)
        if fairness == "fair-preemption":
            return share, share
        # without preemption the running tasks stay: F_j >= running_j, and the lower bounds must fit the free
        # slots, which go to the jobs below their share max-min fairly
        deficit = [max(a - r, 0) for a, r in zip(share, running, strict=True)]
        extra = integer_shares(free, deficit)
        lower = [min(a, r + x) for a, r, x in zip(share, running, extra, strict=True)]
        upper = [max(a, r) for a, r in zip(share, running, strict=True)]
        return lower, upper

    def _topology_of(self, trackers: list[TaskTracker]) -> _Topology:
        """The racks of the computers; a change of them drops the cached map costs."""
        rack_of = [t.rack for t in trackers]
        if self._topology is None or self._topology.rack_of != rack_of:
            self._topology = _Topology(rack_of)
            self._map_cache.clear()
            self._static_cache.clear()
        return self._topology

    def _map_edges(self, task: Task, topology: _Topology, targets: dict[tuple, int]) -> tuple[_Costs, tuple]:
        """A map's costs and its scaled edges to X, its racks and computers, computed once per split."""
        hit = self._map_cache.get(task)
        if hit is None or hit[0] is not task.replicas_key:
            costs = _map_costs(task, topology, self.settings)
            hit = (task.replicas_key, costs, self._static_edges(costs, targets))
            self._map_cache[task] = hit
        return hit[1], hit[2]

    def _static_edges(self, costs: _Costs, targets: dict[tuple, int], intern: bool = True) -> tuple:
        """((node, scaled cost), ...) to X, the preferred racks and computers; interned: equal lists, one object."""
        edges = [(targets[("X",)], self._scale(costs.alpha))]
        edges += [(targets[("R", r)], self._scale(c)) for r, c in costs.racks.items()]
        edges += [(targets[("C", m)], self._scale(c)) for m, c in costs.nodes.items()]
        key = tuple(edges)
        return self._static_cache.setdefault(key, key) if intern else key

    def _plan(self, net: _Network, flow: list[int]) -> Plan:
        """Read the flow: tasks sent straight to C_m, or through X and R_l (spread as the aggregators' flow is)."""
        plan = Plan(cost=sum(w * f for w, f in zip(net.weight, flow, strict=True) if f) + net.constant)
        kind, ident = net.kind, net.ident
        at_x: list[Task] = []
        at_rack: dict[int, list[Task]] = {}
        ends = [*net.group_first[1:], len(net.src)]
        for tasks, first, end in zip(net.groups, net.group_first, ends, strict=True):
            queue = list(tasks)
            for k in range(first, end):
                f, dest = flow[k], net.tgt[k]
                sent, queue = queue[:f], queue[f:]
                if not sent:
                    continue
                if kind[dest] == _X:
                    at_x += sent
                elif kind[dest] == _RACK:
                    at_rack.setdefault(ident[dest], []).extend(sent)
                elif kind[dest] == _COMPUTER:
                    plan.routed.setdefault(ident[dest], []).extend(t for t in sent if t.state == TaskState.PENDING)
                else:
                    plan.kills += [t.active[-1] for t in sent if t.state == TaskState.RUNNING]
                    plan.unscheduled += [t for t in sent if t.state == TaskState.PENDING]
        for k in range(net.x_first, net.x_first + len(net.rack_first)):
            sent, at_x = at_x[: flow[k]], at_x[flow[k] :]
            at_rack.setdefault(ident[net.tgt[k]], []).extend(sent)
        for rack, queue in at_rack.items():
            first = net.rack_first[rack]
            for k in range(first, first + net.rack_size[rack]):
                sent, queue = queue[: flow[k]], queue[flow[k] :]
                plan.routed.setdefault(ident[net.tgt[k]], []).extend(sent)
        return plan

    # ---- when to re-solve -------------------------------------------------------------------------------------
    @staticmethod
    def _signature_of(cluster: ClusterView) -> tuple:
        """Changes when a job arrives or ends, an attempt starts or ends, slots change, or a job gets new maps
        (a repartitioned map's pieces)."""
        return (
            tuple((j.number, len(j.maps)) for j in cluster.jobs),
            cluster.ended_count(),
            cluster.running(TaskKind.MAP),
            cluster.running(TaskKind.REDUCE),
            (cluster.map_capacity(), cluster.reduce_capacity()),
        )

    def _idle(self, tracker: TaskTracker, cluster: ClusterView) -> bool:
        """A free tracker the plan gives nothing while tasks wait unscheduled, and the plan is old."""
        if self.solved_at_s is None or cluster.now - self.solved_at_s < self.settings.idle_resolve_s:
            return False
        return any(
            tracker.free(kind) > 0
            and not any(t.state == TaskState.PENDING for t in plan.routed.get(tracker.node, []))
            and any(t.state == TaskState.PENDING for t in plan.unscheduled)
            for kind, plan in self.plans.items()
        )

    def _scale(self, cost: float) -> int:
        return round(cost * self.settings.cost_scale)


# ---- costs ------------------------------------------------------------------------------------------------
def _eligible(job: Job, kind: TaskKind) -> bool:
    return True if kind == TaskKind.MAP else bool(job.reduces) and job.reduces_schedulable()


def _tasks(job: Job, kind: TaskKind) -> list[Task]:
    return job.maps if kind == TaskKind.MAP else job.reduces


def _waited_s(task: Task, now: float, ran_before: dict[Task, float]) -> float:
    """nu: seconds the task has spent unscheduled since its job started (time in attempts taken off; `ran_before`:
    its ended attempts')."""
    job_start = task.job.start_s if task.job.start_s is not None else now
    ran = ran_before.get(task, 0) + sum(a.runtime_s for a in task.active)
    return max(now - job_start - ran, 0.0)


class _Topology:
    """Computers' racks, and rack sizes."""

    def __init__(self, rack_of: list[int]) -> None:
        self.rack_of = rack_of
        self.rack_size: dict[int, int] = {}
        for r in rack_of:
            self.rack_size[r] = self.rack_size.get(r, 0) + 1


@dataclass
class _Costs:
    """A task's edge costs, unscaled: alpha (to X), rho per preferred rack, gamma per preferred computer, and
    `at(m)`, the transfer cost on any computer m (for a running task's continuation edge)."""

    alpha: float
    racks: dict[int, float]
    nodes: dict[int, float]
    at: Callable[[int], float]


def _map_costs(task: Task, top: _Topology, s: QuincySettings) -> _Costs:
    """Transfer cost of the split from its nearest replica: 0 on a holder, psi x GB in a holder's rack, xi x GB
    elsewhere. Preferred: the holders and their racks (each holds all of the split, above preferred_fraction).
    rho_l, the worst computer of rack l, is psi x GB unless every computer of the rack holds a replica."""
    gb = task.input_mb / GB_MB
    holders = sorted({int(n) for n in task.replicas})
    per_rack: dict[int, int] = {}
    for m in holders:
        per_rack[top.rack_of[m]] = per_rack.get(top.rack_of[m], 0) + 1
    racks = {r: (s.psi * gb if top.rack_size[r] > k else 0.0) for r, k in per_rack.items()}
    worst = s.xi if len(per_rack) < len(top.rack_size) else (s.psi if len(holders) < len(top.rack_of) else 0.0)

    def at(m: int) -> float:
        return 0.0 if m in holders else (s.psi * gb if top.rack_of[m] in per_rack else s.xi * gb)

    return _Costs(worst * gb, racks, dict.fromkeys(holders, 0.0), at)


def _reduce_costs(job: Job, top: _Topology, s: QuincySettings) -> _Costs:
    """A reduce fetches its partition of every finished map's output from where the map ran: psi per GB from
    the computer's rack (not itself), xi per GB from other racks; preferred: >= preferred_fraction of it."""
    racks = np.asarray(top.rack_of)
    share = np.zeros(len(racks))
    node = job.model.ended.node  # where each map's successful attempt ran (Task.won)
    for t in job.maps:
        if t.state == TaskState.DONE and t.won >= 0:
            share[node[t.won]] += t.output_mb_final / len(job.reduces) / GB_MB
    total = share.sum()
    by_rack = np.bincount(racks, share, minlength=int(racks.max()) + 1)
    in_rack = by_rack[racks]
    cost = s.psi * (in_rack - share) + s.xi * (total - in_rack)
    on = [float(c) for c in cost]
    if total <= 0:
        return _Costs(max(on), {}, {}, on.__getitem__)
    nodes = {int(m): on[int(m)] for m in np.flatnonzero(share >= s.preferred_fraction * total)}
    rack_ids = {int(r): float(cost[racks == r].max()) for r in np.flatnonzero(by_rack >= s.preferred_fraction * total)}
    return _Costs(max(on), rack_ids, nodes, on.__getitem__)
