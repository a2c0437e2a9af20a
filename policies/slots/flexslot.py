"""FlexSlot (Guo, Rao, Jiang, Zhou): straggler detection, slot memory resizing and slot number adjustment.

Every measurement interval (`period_s`, which is also Algorithm 1's heartbeat interval T):
- section 3.2: every running map's input processing speed D (MB/s) and progress rate D / S (S its split size),
  each normalized against its maximum over the running maps ("both in the range of 0 to 1"), summed into P
  (`performance`); a 2-cluster k-means (scikit-learn) on P marks the low cluster as stragglers. The printed
  shorthand P = (1 + 1/S) * D is that sum before normalizing: in MB its progress-rate term is 1/64 of the speed's
  for a 64 MB split (in GB, 16 times it), so the text's normalization is what gives both metrics a say;
- section 3.2.1: a straggler that has waited more on I/O than it was stolen from since it started is
  I/O-bound, else CPU-bound (its own breakdown, as Figs 5 and 6 show it: a node's last 5 s mix the phases of
  all its tasks and flip with them);
- Algorithm 1 (3.3), I/O-bound stragglers: if never resized, or S / (D - D_prev) > T, kill it and relaunch
  it at once in its slot grown by (1 + alpha) (heap and io.sort.mb together, as the slot's output buffer
  is what grows); D_prev = D after every check;
- Algorithm 2 (3.4): once a straggler's bottleneck is "insufficient CPU resource" (stolen from at least as much as it
  waited on I/O), while the standard deviation of the nodes' steal times exceeds lambda,
  move one map slot from the node with the smallest steal deviation to the largest, total constant. The printed loop
  would never end (steal is not re-measured inside it), so we make one move per interval and measure
  again: the loop's iterations are the intervals. A straggler that starts in a node's new slot is killed
  and goes back to the queue (3.4, last paragraph).
- `unlimited` (section 4.5, "FlexSlot with unlimited slots"): no total; a node whose vCPUs idled more than
  `idle_threshold` and was stolen from less than lambda gets a map slot while the pool has free CPU; a node
  stolen from more than 2 lambda gives one back, down to its configured count.
Steal and iowait are per node, in vCPU-seconds per second over the last interval. The paper gives no
lambda; 0.1 vCPU-s/s (2.5 % of a 4-vCPU node) is our choice.
"""

from __future__ import annotations

import functools
from typing import TYPE_CHECKING

import numpy as np
from pydantic import BaseModel, ConfigDict, Field

from hadoop_layer.interfaces import ClusterView, Kill, Restart, SetSlots, SlotAction, SlotManager
from hadoop_layer.tasks import Task, TaskAttempt, TaskKind
from hadoop_layer.tracker import TaskTracker

if TYPE_CHECKING:
    from threadpoolctl import ThreadpoolController


class FlexSlotPolicySettings(BaseModel):
    model_config = ConfigDict(extra="forbid")
    period_s: float = Field(5.0, ge=0.1, le=86400, description="measurement interval; Algorithm 1's T")
    alpha: float = Field(0.2, gt=0, description="slot memory step (section 3.3: empirically 0.2)")
    lam: float = Field(0.1, ge=0, description="Algorithm 2's lambda: steal std threshold, vCPU-s per s")
    max_heap_mb: float = Field(1024.0, ge=16, le=65536, description="a slot never grows beyond this heap")
    min_runtime_s: float = Field(60.0, ge=0, description="maps younger than this are not judged (ours)")
    straggler_gap: float = Field(
        1.0, gt=0, le=1, description="the low k-means cluster straggles if its centre < gap x the other's (1: always)"
    )
    resize: bool = Field(True, description="Algorithm 1 on")
    move_slots: bool = Field(True, description="Algorithm 2 on")
    unlimited: bool = Field(False, description="add/remove slots by node performance, no total")
    idle_threshold: float = Field(0.2, ge=0, le=1, description="unlimited: idle vCPU share that earns a slot")
    max_map_slots: int = Field(8, ge=1, le=64, description="unlimited: most map slots a node may get")


def performance(speed: np.ndarray, size: np.ndarray) -> np.ndarray:
    """FlexSlot 3.2's P: input processing speed D and progress rate D / S, each normalized against its maximum
    among the tasks, summed (0 to 2). A task slow for its size (more data, or expensive records) scores low."""
    speed, size = np.asarray(speed, dtype=float), np.asarray(size, dtype=float)
    progress_rate = speed / size
    return _over_max(speed) + _over_max(progress_rate)


def _over_max(x: np.ndarray) -> np.ndarray:
    top = x.max() if len(x) else 0.0
    return x / top if top > 0 else np.zeros_like(x)


@functools.cache
def _openmp() -> ThreadpoolController:
    """Scikit-learn's Lloyd runs an OpenMP region per iteration. On the few dozen points of a FlexSlot interval the
    pool's threads, spinning between regions on a busy machine, cost 20 times the fit (6.7 -> 0.3 ms of CPU a call,
    2 loaded cores); on one thread the chunks' sums also add up in one order, the same in every run. One controller
    for the process, of the OpenMP libraries only (`select`): making one looks up the loaded libraries (3 ms), and a
    limit reads the state of every library its controller holds, to restore it after."""
    from threadpoolctl import ThreadpoolController

    return ThreadpoolController().select(user_api="openmp")


def stragglers_by_kmeans(performance: np.ndarray, gap: float = 1.0) -> np.ndarray:
    """Boolean mask of the low cluster of a 2-means split of `performance` (FlexSlot 3.2).

    The low cluster "are considered significant different from the rest of tasks": they are the stragglers (gap
    1.0, the default). A `gap` below 1 asks more, the low centre below `gap` times the high one: an ablation, not
    the paper's rule (0.5 was this policy's default until the study of issue 14)."""
    if len(performance) < 3 or np.ptp(performance) <= 0:
        return np.zeros(len(performance), dtype=bool)
    if not np.isfinite(performance).all():  # scikit-learn's own check is skipped below (assume_finite)
        raise ValueError("stragglers_by_kmeans: performance must be finite")
    import sklearn  # scikit-learn takes 0.5 s to import: only when FlexSlot runs k-means
    from sklearn.cluster import KMeans

    x = performance.reshape(-1, 1)
    init = np.array([[performance.min()], [performance.max()]])
    # the estimator's parameters are these, always valid: checking them again was a third of a fit (0.3 -> 0.2 ms);
    # the data's finiteness is checked above, in one NumPy call (scikit-learn's check is a tenth of a fit)
    with _openmp().limit(limits=1), sklearn.config_context(skip_parameter_validation=True, assume_finite=True):
        fit = KMeans(n_clusters=2, init=init, n_init=1).fit(x)
    low = fit.labels_[np.argmin(performance)]
    centres = fit.cluster_centers_.ravel()
    if centres[low] >= gap * centres[1 - low]:
        return np.zeros(len(performance), dtype=bool)
    return fit.labels_ == low


def resize_needed(kill_count: int, split_mb: float, speed: float, previous_speed: float, wasted_s: float) -> bool:
    """Algorithm 1, line 7: kill and grow if never resized, or if the last growth cut the input processing time
    S/D_prev - S/D by more than the processing time another kill would waste. The extracted formula reads
    S / (D - D_prev) > T; we follow the sentence that explains it ("until the resulting decrease in the input
    processing time no longer outweighs the wasted processing time due to task killing, i.e. the last heartbeat
    interval T"). The paper judges a restarted task one heartbeat after its launch, so a kill wastes T there;
    here a task is first judged after `min_runtime_s`, so the waste is the attempt's run time, passed in."""
    if kill_count == 0:
        return True
    if speed <= 0 or previous_speed <= 0:
        return False
    return split_mb / previous_speed - split_mb / speed > wasted_s


def slot_move(steal: np.ndarray, lam: float) -> tuple[int, int] | None:
    """Algorithm 2, one iteration: (from node, to node) when the steal std exceeds lambda, else None."""
    if len(steal) < 2 or np.std(steal) <= lam:
        return None
    delta = steal - steal.mean()
    return int(np.argmin(delta)), int(np.argmax(delta))


class FlexSlotManager(SlotManager):
    name = "flexslot"

    def __init__(self, settings: FlexSlotPolicySettings | None = None) -> None:
        self.settings = s = settings or FlexSlotPolicySettings()
        self.period_s = s.period_s
        self.kill_count: dict[Task, int] = {}
        self.previous_speed: dict[Task, float] = {}
        self._last: np.ndarray | None = None  # per node steal, iowait, idle at the last look (`_node_rates`)
        self._slot_added_at: dict[TaskTracker, float] = {}

    def adjust(self, cluster: ClusterView) -> list[SlotAction]:
        now = cluster.now
        rates = self._node_rates(cluster)
        actions: list[SlotAction] = []
        maps = [a for t in cluster.trackers for a in t.running[TaskKind.MAP]]
        maps = [a for a in maps if now - (a.start_s or now) >= self.settings.min_runtime_s]
        stragglers: list[TaskAttempt] = []
        if maps:
            speed = np.array([ClusterView.input_speed_mbps(a, now) for a in maps])
            size = np.array([max(a.task.input_mb, 1e-9) for a in maps])
            mask = stragglers_by_kmeans(performance(speed, size), self.settings.straggler_gap)
            stragglers = [a for a, slow in zip(maps, mask, strict=True) if slow]
            speeds = dict(zip(maps, speed, strict=True))
        cpu_bound = False
        for attempt in stragglers:
            io_bound = attempt.iowait_s > attempt.steal_s  # its own breakdown so far (Figs 5 and 6)
            cpu_bound |= not io_bound
            if self.settings.resize and io_bound:
                actions += self._resize(attempt, speeds[attempt], now)
            elif attempt.tracker in self._slot_added_at and attempt.start_s >= self._slot_added_at[attempt.tracker]:
                actions.append(Kill(attempt))  # a straggler landed on the new slot: reassign it
                del self._slot_added_at[attempt.tracker]
        if self.settings.move_slots and not self.settings.unlimited and cpu_bound:
            actions += self._move(cluster, rates, now)  # 3.4: only once a straggler is found short of CPU
        if self.settings.unlimited:
            actions += self._unlimited(cluster, rates)
        return actions

    def _node_rates(self, cluster: ClusterView) -> np.ndarray:
        """Per node (rows in `cluster.trackers`' order) steal, iowait and idle over the last interval, vCPU-seconds
        per second. Read from the VM table's columns at once: a VM agent's properties read one number each."""
        trackers = cluster.trackers
        if not trackers:
            return np.zeros((0, 3))
        vms = trackers[0].vm.model.vms
        rows = np.array([t.vm.row for t in trackers], dtype=np.int64)
        now = np.stack([vms.view(c)[rows] for c in ("steal_s", "iowait_s", "idle_s")], axis=1)
        before = now if self._last is None or self._last.shape != now.shape else self._last
        self._last = now
        return (now - before) / self.period_s

    def _resize(self, attempt: TaskAttempt, speed: float, now: float) -> list[SlotAction]:
        task = attempt.task
        kills = self.kill_count.get(task, 0)
        wasted = max(self.period_s, now - (attempt.start_s or now))
        grow = resize_needed(kills, task.input_mb, speed, self.previous_speed.get(task, 0.0), wasted)
        self.previous_speed[task] = speed
        heap = attempt.heap_mb * (1.0 + self.settings.alpha)
        if not grow or heap > self.settings.max_heap_mb:
            return []
        self.kill_count[task] = kills + 1
        io_sort = float(round(attempt.io_sort_mb * (1.0 + self.settings.alpha)))  # io.sort.mb is an int
        return [Restart(attempt, heap, io_sort)]

    def _move(self, cluster: ClusterView, rates: np.ndarray, now: float) -> list[SlotAction]:
        trackers = cluster.trackers
        move = slot_move(rates[:, 0].copy(), self.settings.lam)
        if move is None:
            return []
        give, take = trackers[move[0]], trackers[move[1]]
        if give is take or give.map_slots <= 1:
            return []
        self._slot_added_at[take] = now
        return [SetSlots(give, map_slots=give.map_slots - 1), SetSlots(take, map_slots=take.map_slots + 1)]

    def _unlimited(self, cluster: ClusterView, rates: np.ndarray) -> list[SlotAction]:
        base, lam = cluster.config.map_slots, self.settings.lam
        vms = [t.vm for t in cluster.trackers]
        pool_free = sum(vm.cpu_used_mhz for vm in vms) < 0.95 * sum(vm.cpu_entitlement_mhz for vm in vms)
        actions: list[SlotAction] = []
        for t, (steal, _, idle) in zip(cluster.trackers, rates.tolist(), strict=True):
            vcpus = t.vm.vcpus
            if pool_free and idle / vcpus > self.settings.idle_threshold and steal < lam:
                if t.map_slots < self.settings.max_map_slots:
                    actions.append(SetSlots(t, map_slots=t.map_slots + 1))
            elif steal > 2 * lam and t.map_slots > base:
                actions.append(SetSlots(t, map_slots=t.map_slots - 1))
        return actions
