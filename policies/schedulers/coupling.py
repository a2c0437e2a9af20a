"""Coupling Scheduler (Tan, Meng, Zhang; /work/shared/papers/coupling-scheduler.txt).

Reduces are launched gradually, as the job's map progress runs ahead of its reduce progress (Sec. II-A.1,
Algorithm 1), and placed by Wait Scheduling near the "centrality" of the job's intermediate data
(Sec. II-A.2, Algorithm 2). Maps come from fair-share candidate lists (the slot allocation of the Fair
Scheduler, the paper's ref. [12]) thinned by Random Peeking (Sec. II-B, Algorithm 3, Eq. (3)) instead of
delay scheduling. State carried across heartbeats (Algorithm 2's "static values") lives in the scheduler.

Where the extracted text is garbled, the reading taken is said where it is used.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
from pydantic import BaseModel, ConfigDict, Field

from hadoop_layer.hdfs import Locality
from hadoop_layer.interfaces import ClusterView, Launch, TaskScheduler
from hadoop_layer.tasks import Job, JobState, Task, TaskKind, TaskState
from hadoop_layer.tracker import TaskTracker

MAP = TaskKind.MAP
# Fair Scheduler job weights by priority (algorithms.md 6.1, H121 FairScheduler): the "running / weight" order.
PRIORITY_WEIGHT = {"VERY_HIGH": 4.0, "HIGH": 2.0, "NORMAL": 1.0, "LOW": 0.5, "VERY_LOW": 0.25}


class CouplingSettings(BaseModel):
    """The paper's knobs, under its own names."""

    model_config = ConfigDict(extra="forbid")
    threshold: float = Field(3.0, gt=0, description="Alg. 1 line 3: delta = 1 - exp(-R / threshold); Sec. II-A.1")
    D: int = Field(7, ge=1, description="length of the centrality list L(i); Sec. II-A.2 'e.g., D = 7'")
    K: int | None = Field(
        None, ge=1, description="nodes peeked per heartbeat; None = N (Sec. II-B: 'the scheduler checks every node')"
    )
    alpha_rack_reduce: float = Field(0.7, ge=0, le=1, description="alpha_j: rack data and a running reduce of j here")
    alpha_rack: float = Field(0.8, ge=0, le=1, description="alpha_j: rack data, no running reduce of j on the node")
    alpha_other: float = Field(1.0, ge=0, le=1, description="alpha_j otherwise (Sec. II-B, after Eq. (3))")
    beta: float | None = Field(
        None, gt=0, description="fixed beta for all jobs (Figs. 11, 15 use 0.1 and 0.5); None = beta_j of Eq. (3)"
    )
    lists_skip_job_nodes: bool = Field(
        False,
        description="not the paper's reading: build L(i) over V_r minus the nodes that already run a reduce of the "
        "job (when any remain); False = V_r as defined in Sec. II-A.2, 'the set of nodes that have available reduce "
        "slots', with Algorithm 2 line 12 skipping those nodes (see CouplingScheduler._lists)",
    )


# ---- Algorithm 1 ------------------------------------------------------------------------------------------
def mismatch(job: Job, threshold: float) -> float:
    """Algorithm 1: how far the job's map progress runs ahead of its reduce progress (Sec. II-A.1)."""
    pending_reduces = job.pending_reduces
    if pending_reduces <= 0:
        return 0.0
    if job.pending_maps == 0:  # line 9, tested first: a job without maps has unit = 0
        return 4.0 + 1.0 / pending_reduces
    desired_maps, desired_reduces = len(job.maps), len(job.reduces)
    delta = 1.0 - math.exp(-desired_reduces / threshold)
    unit = delta * desired_maps / desired_reduces
    map_progress = job.finished_maps / unit
    red_progress = job.finished_reduces + job.count(TaskKind.REDUCE, TaskState.RUNNING) + 1
    return (map_progress - red_progress) / desired_reduces


# ---- Algorithm 2 ------------------------------------------------------------------------------------------
def centrality_lists(
    data_mb: dict[int, float], candidates: Sequence[int], racks: np.ndarray, D: int, rng: np.random.Generator
) -> tuple[list[int], list[int], list[int]]:
    """Eq. (1) C_i(v) = sum_u w_i(u) h(v, u) for v in V_r, h(u, v) the hops on the cluster's two-level tree (same
    node 0, same rack 1, else 2 via the core switch); the D smallest in increasing order (ties in random
    order) form L(i), split into L1 (the centrality), L2 (2nd and 3rd) and L3 (the rest) (Sec. II-A.2).

    The terms w_i(u) h(v, u) come from one array product (h is 0, 1 or 2: the products are the scalar ones, bit
    for bit); each C_i(v) is still Python's sum of them in `data_mb`'s order (its compensated float sum)."""
    costs = [0.0] * len(candidates)  # no map output yet: every candidate costs nothing
    if data_mb and len(candidates):
        sources = np.fromiter(data_mb, dtype=np.int64, count=len(data_mb))
        weights = np.fromiter(data_mb.values(), dtype=float, count=len(data_mb))
        nodes = np.asarray(candidates, dtype=np.int64)
        h = np.where(racks[nodes][:, None] == racks[sources][None, :], 1, 2)
        h[nodes[:, None] == sources[None, :]] = 0
        costs = [sum(row) for row in (weights * h).tolist()]
    tie = rng.permutation(len(candidates)) if len(candidates) > 1 else [0] * len(candidates)
    order = sorted(range(len(candidates)), key=lambda i: (costs[i], tie[i]))
    chosen = [int(candidates[i]) for i in order[:D]]
    return chosen[:1], chosen[1:3], chosen[3:]


def wait_step(
    wait: int,
    n: int,
    node: int,
    lists: tuple[list[int], list[int], list[int]],
    busy: bool,
    avoidable: bool,
    launch: Callable[[], bool],
) -> int:
    """Algorithm 2, lines 11-27, for the heartbeat of `node` once `wait` has been counted (line 10).

    Returns the new wait; 0 means the candidate is cleared (launched, or more than 4N heartbeats waited).
    `busy`: the node runs a reduce of the candidate job (line 12). `avoidable`: busy, and another node with a
    free reduce slot runs none of the job's reduces: then the random round (lines 20-24) skips this node too,
    "we avoid multiple ReduceTasks of a job on the same node if possible" (Sec. II-A.2, after Mantri [9]).
    Line 12 is garbled in the text; read as "(i - 1) x N < wait <= i x N AND v in L_i(J) AND ...".
    """
    for i in (1, 2, 3):
        if (i - 1) * n < wait <= i * n and node in lists[i - 1] and not busy:
            if launch():
                return 0
            wait = i * n + 1
    if 3 * n < wait <= 4 * n and not avoidable and launch():
        return 0
    if wait > 4 * n:
        return 0
    return wait


def cluster_heartbeats(trackers: Sequence[TaskTracker], since_s: float, now: float) -> int:
    """Heartbeats the N trackers sent in (since_s, now] on their clocks (offset + k x interval).

    Hadoop's trackers heartbeat every interval even when full; the emulator skips heartbeats that could launch
    nothing (tracker.py), so Algorithm 2's counter counts the cluster's heartbeat clocks, not the calls. Read from
    the clock's arrays (a tracker's clock row is its node): the same float arithmetic per tracker as a loop."""
    if not trackers:
        return 0
    clock = trackers[0].clock
    if len(trackers) == len(clock.trackers):
        offset, interval = clock.offset, clock.interval
    else:
        nodes = np.fromiter((t.node for t in trackers), dtype=np.int64, count=len(trackers))
        offset, interval = clock.offset[nodes], clock.interval[nodes]
    return int(_beats_until(offset, interval, now) - _beats_until(offset, interval, since_s))


def _beats_until(offset: np.ndarray, interval: np.ndarray, at: float) -> float:
    """Sum over the clocks of floor((at - offset) / interval): each term an integer far below 2**53, so the sum is
    exact and a difference of two such sums is the sum of the clocks' differences."""
    return float(np.floor((at - offset) / interval + 1e-9).sum())


@dataclass
class WaitCandidate:
    """Algorithm 2's static values: the candidate job, its lists L1..L3, and its wait counter (kept as the
    time it became candidate plus the jumps of line 16)."""

    job: Job
    lists: tuple[list[int], list[int], list[int]]
    since_s: float
    bonus: int = 0


# ---- Algorithm 3 ------------------------------------------------------------------------------------------
def beta_j(pending_maps: int, n_m: float) -> float:
    """beta_j = 0.1 + 0.9 (1 - exp(-M_p^j / max(N_m, 1))) (Sec. II-B; the closing parenthesis is lost in the text)."""
    return 0.1 + 0.9 * (1.0 - math.exp(-pending_maps / max(n_m, 1.0)))


def peek_probability(local: bool, alpha: float, p_m: float, n_m: float, beta: float) -> float:
    """Eq. (3): p_j = 1 with local data on the node, else 1 - alpha_j (p_m^j)^beta_j (1 - exp(-N_m)).

    The extracted Eq. (3) is garbled; this reading gives the paper's limits: N_m large -> 1 - alpha (p_m)^beta,
    N_m = 0 -> 1 (Sec. II-B, "Below we consider some extreme cases")."""
    if local:
        return 1.0
    return 1.0 - alpha * p_m**beta * (1.0 - math.exp(-n_m))


def random_peeking(probabilities: Sequence[float], rng: np.random.Generator) -> list[bool]:
    """Algorithm 3: keep candidate j if rand < p_j, rand uniform on [0, 1]."""
    return [p >= 1.0 or rng.random() < p for p in probabilities]


def fair_candidates(jobs: Sequence[Job], slots: int) -> list[Job]:
    """Map candidates ignoring locality: each slot to the job with the fewest running maps per weight
    (the Fair Scheduler's FairShareComparator for non-needy jobs, algorithms.md 6.3; one pool, no min shares),
    counting the candidates already given; ties by start time then job number (unique: the order of `jobs` never
    decides). Each entry is [running maps, pending maps, weight, job], for the jobs with a pending map."""
    if slots <= 0:
        return []
    pool = [
        [len(j.running_tasks[MAP]), j.pending_maps, PRIORITY_WEIGHT.get(j.priority, 1.0), j]
        for j in jobs
        if j.pending_maps > 0
    ]
    out: list[Job] = []
    for _ in range(slots):
        if not pool:
            break
        entry = min(pool, key=lambda e: (e[0] / e[2], e[3].start_s, e[3].number))
        out.append(entry[3])
        entry[0] += 1
        entry[1] -= 1
        if entry[1] == 0:
            pool.remove(entry)
    return out


def best_level(job: Job, node: int, rack: int, taken: set[Task]) -> Locality | None:
    """The best locality (NODE or RACK) of the job's pending maps for this node; None if neither.

    `Job.find_map` returns requeued maps first whatever their locality; they are stepped over here."""
    skip, best = set(taken), None
    while True:
        hit = job.find_map(node, rack, Locality.RACK, skip)
        if hit is None:
            return best
        task, level = hit
        if level == Locality.NODE:
            return level
        if not task.launches:  # from the locality caches: nothing node-local is left
            return Locality.RACK if level == Locality.RACK else best
        if level == Locality.RACK:
            best = Locality.RACK
        skip.add(task)


# ---- the scheduler ----------------------------------------------------------------------------------------
class CouplingScheduler(TaskScheduler):
    """Reduces one at a time, cluster-wide, as Algorithm 2 prescribes (checked line by line against the paper):

    - line 1: one static `candidate` for the whole JobTracker, not one per job or per node;
    - lines 4-8: a heartbeat that finds no candidate only picks one (the job of largest mismatch m0 > 0) and
      launches nothing; the "else" branch (lines 9-28) is what launches;
    - lines 13-14 and 21-22: one ReduceTask is launched for the candidate, then candidate = NULL, so the next
      heartbeat picks again (possibly the same job): at most one reduce per heartbeat and one per pick;
    - line 12: rounds 1-3 launch only on a node of L1, L2, L3 that runs no reduce of J; a round is N heartbeats
      ("allows ReduceTasks to check up to 3 x N number of heartbeats (three rounds)", Sec. II-A.2). When the
      centrality already runs a reduce of J (likely for J's second and later reduces: it stays the cheapest
      node while it has a free slot) the first round passes without a launch.
    - Algorithm 1 line 9: a job whose maps are all launched gets 4 + 1/pendingReduces, so among such jobs the
      one with the fewest pending reduces goes first; a 27-reduce Sort goes after every smaller job.
    """

    name = "coupling"

    def __init__(self, settings: CouplingSettings | None = None) -> None:
        self.settings = settings or CouplingSettings()
        self.candidate: WaitCandidate | None = None
        self._outputs: dict[Job, tuple[int, dict[int, float]]] = {}  # _map_output_by_node, by Job.state_changes
        self._beats_before: tuple[tuple, float] = ((), 0.0)  # _heartbeats: the candidate's part, by its start

    def assign(self, tracker: TaskTracker, cluster: ClusterView) -> list[Launch]:
        jobs = cluster.jobs
        launches = self._maps(tracker, cluster, jobs) if tracker.free(TaskKind.MAP) else []
        return launches + self._reduce(tracker, cluster, jobs)

    # ---- maps: fair-share candidates, random peeking ----------------------------------------------------------
    def _maps(self, tracker: TaskTracker, cluster: ClusterView, jobs: list[Job]) -> list[Launch]:
        candidates = fair_candidates(jobs, tracker.free(TaskKind.MAP))
        if not candidates:
            return []
        launches: list[Launch] = []
        taken: set[Task] = set()
        probability: dict[Job, float] = {}
        peeked: list = []  # the K sampled trackers and N_m, drawn once per heartbeat when first needed
        for job in candidates:
            level = best_level(job, tracker.node, tracker.rack, taken)
            if level == Locality.NODE:
                p = 1.0
            else:
                if not peeked:
                    peeked += self._sample(cluster)
                if job not in probability:
                    probability[job] = self._peek(job, tracker, level, peeked[0], peeked[1], taken)
                p = probability[job]
            if not random_peeking([p], cluster.rng)[0]:
                continue
            hit = job.find_map(tracker.node, tracker.rack, Locality.OFF_RACK, taken)
            if hit is not None:
                launches.append(Launch(hit[0], hit[1]))
                taken.add(hit[0])
        return launches

    def _sample(self, cluster: ClusterView) -> tuple[list[TaskTracker], float]:
        """K random nodes (all N if K is None or >= N) and N_m = N x K2 / K, K2 = peeked nodes with a free map slot."""
        trackers, k = cluster.trackers, self.settings.K
        if k is None or k >= len(trackers):
            sample = list(trackers)
        else:
            sample = [trackers[i] for i in cluster.rng.choice(len(trackers), size=k, replace=False)]
        return sample, len(trackers) * sum(t.free(TaskKind.MAP) > 0 for t in sample) / len(sample)

    def _peek(
        self, job: Job, tracker: TaskTracker, level: Locality | None, sample: list[TaskTracker], n_m: float, taken
    ) -> float:
        """p_j of Eq. (3) for a job without node-local data here, from the K peeked nodes."""
        s = self.settings
        k1 = sum(best_level(job, t.node, t.rack, taken) == Locality.NODE for t in sample)
        p_m = k1 / len(sample)
        if level == Locality.RACK:
            reduce_here = any(a.task.job is job for a in tracker.running[TaskKind.REDUCE])
            alpha = s.alpha_rack_reduce if reduce_here else s.alpha_rack
        else:
            alpha = s.alpha_other
        beta = s.beta if s.beta is not None else beta_j(job.pending_maps, n_m)
        return peek_probability(False, alpha, p_m, n_m, beta)

    # ---- reduces: mismatch, wait scheduling ---------------------------------------------------------------
    def _reduce(self, tracker: TaskTracker, cluster: ClusterView, jobs: list[Job]) -> list[Launch]:
        c = self.candidate
        if c is not None and (c.job.state != JobState.RUNNING or c.job.pending_reduces == 0):
            c = self.candidate = None
        if c is None:
            self.candidate = self._pick(cluster, jobs)
            return []
        trackers, now = cluster.trackers, cluster.now
        n = len(trackers)
        wait = max(self._heartbeats(trackers, c.since_s, now) + c.bonus, 1)
        busy = _runs_reduce_of(tracker, c.job)
        avoidable = busy and any(t.free(TaskKind.REDUCE) and not _runs_reduce_of(t, c.job) for t in trackers)
        launched: list[Launch] = []

        def launch() -> bool:
            if tracker.free(TaskKind.REDUCE) <= 0:
                return False
            task = c.job.find_reduce(set())
            if task is None:
                return False
            launched.append(Launch(task))
            return True

        new_wait = wait_step(wait, n, tracker.node, c.lists, busy, avoidable, launch)
        if new_wait == 0:
            self.candidate = None
        else:
            c.bonus += new_wait - wait
        return launched

    def _pick(self, cluster: ClusterView, jobs: list[Job]) -> WaitCandidate | None:
        """Algorithm 2 lines 4-8: the job with the largest mismatch m0 > 0 (ties at random) becomes candidate.

        Jobs still held back by Hadoop's reduce slow start (HadoopConfig.reduce_slowstart) are not considered:
        set it to 0 to let the mismatch alone decide."""
        scored = [(mismatch(j, self.settings.threshold), j) for j in jobs if j.reduces and j.reduces_schedulable()]
        scored = [(m, j) for m, j in scored if m > 0]
        if not scored:
            return None
        top = max(m for m, _ in scored)
        best = [j for m, j in scored if m == top]
        job = best[int(cluster.rng.integers(len(best)))] if len(best) > 1 else best[0]
        return WaitCandidate(job, self._lists(job, cluster), cluster.now)

    def _lists(self, job: Job, cluster: ClusterView) -> tuple[list[int], list[int], list[int]]:
        """L1, L2, L3 over V_r (nodes with a free reduce slot now), w_i(u) = map output of job i stored on u.

        Sec. II-A.2 defines V_r without regard to the job ("the set of nodes that have available reduce slots")
        and Algorithm 2 line 12 tests "node v has no running ReduceTasks of J" on the list nodes, a test that
        would never fail if the lists left those nodes out: so by default they stay in. `lists_skip_job_nodes`
        takes the other reading of "we avoid multiple ReduceTasks of a job on the same node if possible" (the
        lists hold the nodes where J's reduce could go), for comparison."""
        data = self._map_output_by_node(job)
        free = [t.node for t in cluster.trackers if t.free(TaskKind.REDUCE) > 0]
        if self.settings.lists_skip_job_nodes:
            other = [t.node for t in cluster.trackers if t.free(TaskKind.REDUCE) > 0 and not _runs_reduce_of(t, job)]
            free = other or free
        racks = np.array([t.rack for t in cluster.trackers])
        return centrality_lists(data, free, racks, self.settings.D, cluster.rng)

    def _heartbeats(self, trackers: list[TaskTracker], since_s: float, now: float) -> int:
        """cluster_heartbeats(trackers, since_s, now) with the `since_s` part (`_beats_until`) kept while the candidate
        waits."""
        clock = trackers[0].clock if trackers else None
        if clock is None or len(trackers) != len(clock.trackers):
            return cluster_heartbeats(trackers, since_s, now)
        offset, interval = clock.offset, clock.interval
        key = (since_s, clock.phase_changes, len(trackers))
        if self._beats_before[0] != key:
            self._beats_before = (key, _beats_until(offset, interval, since_s))
        return int(_beats_until(offset, interval, now) - self._beats_before[1])

    def _map_output_by_node(self, job: Job) -> dict[int, float]:
        """w_i(u): the output of the job's finished maps by the node their successful attempt ran on (Task.won),
        added in map order. Kept until one of the job's tasks changes state (`Job.state_changes`): a map's output
        and its attempt's row are set as it is done and stay so while it is."""
        key = job.state_changes
        cached = self._outputs.get(job)
        if cached is not None and cached[0] == key:
            return cached[1]
        if len(self._outputs) > 64:  # forget the ended jobs'
            self._outputs = {j: v for j, v in self._outputs.items() if j.state == JobState.RUNNING}
        data: dict[int, float] = {}
        ran_on = job.model.ended.node  # where each map's successful attempt ran (Task.won)
        for task in job.maps:
            if task.state == TaskState.DONE and task.won >= 0:
                node = int(ran_on[task.won])
                data[node] = data.get(node, 0.0) + task.output_mb_final
        self._outputs[job] = (key, data)
        return data


def _runs_reduce_of(tracker: TaskTracker, job: Job) -> bool:
    return any(a.task.job is job for a in tracker.running[TaskKind.REDUCE])
