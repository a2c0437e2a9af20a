"""Coupling Scheduler (coupling-scheduler.txt): Algorithms 1-3 on hand-worked cases, and whole runs."""

from types import SimpleNamespace

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hadoop_layer.hdfs import Locality
from hadoop_layer.interfaces import Launch
from hadoop_layer.profiles import PUMA
from hadoop_layer.tasks import TaskKind
from policies.schedulers.coupling import (
    PRIORITY_WEIGHT,
    CouplingScheduler,
    CouplingSettings,
    beta_j,
    centrality_lists,
    cluster_heartbeats,
    fair_candidates,
    mismatch,
    peek_probability,
    random_peeking,
    wait_step,
)
from tests.helpers import no_heartbeats, two_rack_cluster, uniform_maps


class _Job:
    """The counters Algorithm 1 reads."""

    def __init__(self, maps, reduces, finished_maps, pending_maps, finished_reduces, running_reduces):
        self.maps, self.reduces = [None] * maps, [None] * reduces
        self.finished_maps, self.pending_maps = finished_maps, pending_maps
        self.finished_reduces, self._running = finished_reduces, running_reduces
        self.pending_reduces = reduces - finished_reduces - running_reduces

    def count(self, kind, state):
        assert (kind, state) == (TaskKind.REDUCE, "running")
        return self._running


@pytest.mark.parametrize(
    ("job", "expected"),
    [
        # M=100, R=10: delta = 1 - exp(-10/3) = 0.964326, unit = 9.643260; 40 maps done -> map progress 4.147975;
        # reduce progress = 1 done + 1 running + 1 = 3; mismatch = (4.147975 - 3) / 10 = 0.114797
        (_Job(100, 10, 40, 30, 1, 1), 0.1147975),
        # 20 maps done -> 2.073987: (2.073987 - 3) / 10 = -0.092601 (the job asks for no reduce)
        (_Job(100, 10, 20, 50, 1, 1), -0.0926013),
        # no pending maps, 4 pending reduces: line 9 gives 4 + 1/4
        (_Job(100, 10, 90, 0, 5, 1), 4.25),
        # no pending reduces: 0
        (_Job(100, 10, 90, 0, 8, 2), 0.0),
        # Table IV job 1 (M=148, R=15): unit = (1 - e^-5) x 148 / 15 = 9.800186; the first reduce needs
        # finished/unit > 1: 9 maps give (0.918350 - 1)/15 < 0, 10 maps give (1.020389 - 1)/15 = 0.00135926
        (_Job(148, 15, 9, 100, 0, 0), (9 / 9.800185589609022 - 1) / 15),
        (_Job(148, 15, 10, 100, 0, 0), 0.00135926),
    ],
)
def test_algorithm_1_mismatch(job, expected):
    assert mismatch(job, threshold=3.0) == pytest.approx(expected, abs=1e-7)


def test_wait_scheduling_lists_follow_the_centrality_of_the_map_outputs():
    # Two racks {0, 1} and {2, 3}; map outputs w = 100 MB on node 0, 50 on node 1, 30 on node 2.
    # C(v) = sum_u w(u) h(v, u), h = 0 same node, 1 same rack, 2 across racks:
    #   C(0) = 50x1 + 30x2 = 110; C(1) = 100x1 + 30x2 = 160; C(2) = 100x2 + 50x2 = 300; C(3) = 200 + 100 + 30 = 330
    racks, data, rng = np.array([0, 0, 1, 1]), {0: 100.0, 1: 50.0, 2: 30.0}, np.random.default_rng(0)
    assert centrality_lists(data, [0, 1, 2, 3], racks, 7, rng) == ([0], [1, 2], [3])
    # node 0 has no free reduce slot: V_r = {1, 2, 3}, so 1 is the centrality and L3 is empty
    assert centrality_lists(data, [1, 2, 3], racks, 7, rng) == ([1], [2, 3], [])
    # D = 2 keeps the two cheapest
    assert centrality_lists(data, [0, 1, 2, 3], racks, 2, rng) == ([0], [1], [])
    # no data yet: every cost is 0 and the order is random, but all nodes are listed
    l1, l2, l3 = centrality_lists({}, [0, 1, 2, 3], racks, 7, rng)
    assert sorted(l1 + l2 + l3) == [0, 1, 2, 3] and len(l1) == 1 and len(l2) == 2


def test_wait_scheduling_rounds():
    # N = 4 nodes: round i covers (i-1)N < wait <= iN; L1 = [0], L2 = [1, 2], L3 = [3]
    lists, n = ([0], [1, 2], [3]), 4

    def step(wait, node, busy=False, avoidable=False, ok=True):
        calls = []
        new = wait_step(wait, n, node, lists, busy, avoidable, lambda: calls.append(node) or ok)
        return new, bool(calls)

    assert step(1, 1) == (1, False)  # round 1 is for L1 only
    assert step(2, 0) == (0, True)  # the centrality launches
    assert step(5, 0) == (5, False)  # round 2: node 0 is not in L2
    assert step(5, 2) == (0, True)
    assert step(5, 2, busy=True) == (5, False)  # node 2 runs a reduce of the job already
    assert step(9, 3) == (0, True)  # round 3: L3
    assert step(13, 1) == (0, True)  # round 4: any node
    assert step(13, 1, busy=True, avoidable=True) == (13, False)  # ...but not twice on a node if avoidable
    assert step(17, 0) == (0, False)  # past 4N: the candidate is dropped
    # a failed launch on the centrality jumps to round 2 (line 16: wait = 1 x N + 1)
    assert step(2, 0, ok=False) == (5, True)


def two_map_outputs(sched, **settings):
    """4 nodes, a wordcount job whose maps 0 and 1 are done: 60 MB of output on node 2, 20 MB on node 3."""
    model = two_rack_cluster(sched, reduce_slowstart=0.0, **settings)
    job = model.add_job("j", PUMA["wordcount"], 0.0, uniform_maps(4), 2)
    no_heartbeats(model)
    model.run_until(1.0)
    for task, node, mb in ((job.maps[0], 2, 60.0), (job.maps[1], 3, 20.0)):
        job.set_state(task, "done")
        done = SimpleNamespace(task=task, tracker=model.trackers[node], number=0, locality=None, state="done",
                               start_s=0.0, end_s=1.0, speculative=False, output_mb=mb, spills=0, ended_row=-1,
                               phases=(), phase_end_s=())  # fmt: skip
        task.won, task.output_mb_final = model.ended.add(done), mb  # a successful attempt's record, on `node`
    return model, job


def test_wait_scheduling_places_reduces_near_the_map_outputs_round_by_round():
    # 4 nodes, racks {0, 2} and {1, 3}; 3-second heartbeats ("1.0" formula): in any 3 s each tracker beats
    # once, so t0 + 3k has seen exactly 4k cluster heartbeats.
    sched = CouplingScheduler()
    model, job = two_map_outputs(sched)
    # mismatch: unit = (1 - e^(-2/3)) x 4 / 2 = 0.973166; (2 / 0.973166 - 1) / 2 = 0.527574 > 0.
    # C(0) = 60x1 + 20x2 = 100, C(1) = 60x2 + 20x1 = 140, C(2) = 20x2 = 40, C(3) = 60x2 = 120:
    # L1 = [2], L2 = [0, 3], L3 = [1]
    view, trackers = model.jobtracker.view, model.trackers

    def reduces(node):
        return [launch.task for launch in sched.assign(trackers[node], view) if launch.task.kind == TaskKind.REDUCE]

    model.run_until(10.0)
    assert reduces(0) == [] and sched.candidate.job is job  # Algorithm 2 line 7: the candidate, no launch yet
    assert sched.candidate.lists == ([2], [0, 3], [1])
    model.run_until(11.0)  # round 1: only the centrality
    assert reduces(0) == [] and reduces(3) == []
    assert reduces(2) == [job.reduces[0]] and sched.candidate is None
    model.run_until(12.0)
    assert reduces(1) == [] and sched.candidate.since_s == 12.0
    model.run_until(18.0)  # 8 cluster heartbeats: round 2, L2 = [0, 3]
    assert reduces(2) == [] and reduces(1) == []
    assert reduces(3) == [job.reduces[0]]


def test_random_peeking_probability_by_hand():
    # alpha = 0.8, p_m = 2/8 = 0.25, N_m = 8 x 4/8 = 4, M_p = 10:
    # beta = 0.1 + 0.9 (1 - e^(-10/4)) = 0.926124; 0.25^beta = 0.276961; p = 1 - 0.8 x 0.276961 x (1 - e^-4) = 0.782490
    beta = beta_j(10, 4.0)
    assert beta == pytest.approx(0.9261235, abs=1e-6)
    assert peek_probability(False, 0.8, 0.25, 4.0, beta) == pytest.approx(0.7824896, abs=1e-6)
    assert peek_probability(True, 0.8, 0.25, 4.0, beta) == 1.0  # local data: launch
    assert peek_probability(False, 0.8, 0.25, 0.0, beta) == 1.0  # no free map slot elsewhere: launch
    assert peek_probability(False, 1.0, 1.0, 50.0, beta) == pytest.approx(0.0, abs=1e-12)  # all data elsewhere


def test_random_peeking_keeps_each_candidate_with_its_probability():
    # 20000 Bernoulli(0.3) draws: standard deviation of the kept fraction sqrt(0.3 x 0.7 / 20000) = 0.00324;
    # tolerance 4 sigma = 0.013
    kept = random_peeking([0.3] * 20000, np.random.default_rng(7))
    assert abs(np.mean(kept) - 0.3) < 0.013
    assert all(random_peeking([1.0] * 100, np.random.default_rng(7)))


@pytest.mark.parametrize(("beta", "p"), [(None, 0.5727345), (0.5, 0.4446755)])
def test_random_peeking_in_a_heartbeat(beta, p):
    # 4 nodes in one rack, one map slot each; 8 maps whose blocks live on nodes 0 and 1 only. Node 3 beats:
    # no local data, rack data, no reduce of the job there -> alpha = 0.8; K = N = 4 peeked: K1 = 2 (nodes 0, 1),
    # K2 = 4 free -> p_m = 0.5, N_m = 4; M_p = 8 -> beta_j = 0.1 + 0.9 (1 - e^-2) = 0.878198;
    # p = 1 - 0.8 x 0.5^0.878198 x (1 - e^-4) = 0.572734 (fixed beta = 0.5: 1 - 0.8 x 0.707107 x 0.981684 = 0.444675)
    sched = CouplingScheduler(CouplingSettings(beta=beta))
    model = two_rack_cluster(sched, racks=1, map_slots=1)
    job = model.add_job("j", PUMA["grep"], 0.0, uniform_maps(8), 0)
    for task in job.maps:
        task.replicas = np.array([0, 1])
    for cache in (job._node_cache, job._rack_cache):
        cache.clear()
    for cache in (job._node_cache[0], job._node_cache[1], job._rack_cache[0]):
        cache.extend(reversed(job.maps))
    no_heartbeats(model)
    model.run_until(1.0)
    view = model.jobtracker.view
    # 10000 heartbeats: sigma = sqrt(0.57 x 0.43 / 10000) = 0.0050; tolerance 4 sigma = 0.02
    launched = [len(sched.assign(model.trackers[3], view)) for _ in range(10000)]
    assert abs(np.mean(launched) - p) < 0.02
    local = sched.assign(model.trackers[0], view)
    assert len(local) == 1 and local[0].locality == Locality.NODE  # p = 1 on a node with local data


def _run_jobs(scheduler, seconds=4000.0, **hadoop):
    model = two_rack_cluster(scheduler, **hadoop)
    jobs = [
        model.add_job("big", PUMA["wordcount"], 0.0, uniform_maps(24, core_s=20.0), 6),
        model.add_job("small", PUMA["grep"], 15.0, uniform_maps(4), 2),
        model.add_job("maponly", PUMA["grep"], 30.0, uniform_maps(6), 0),
    ]
    model.run_until(seconds)
    return model, jobs


@pytest.mark.parametrize("settings", [{}, {"K": 2}, {"beta": 0.1, "D": 2}])
def test_coupling_runs_jobs_to_the_end_and_launches_reduces_as_maps_progress(settings):
    model, jobs = _run_jobs(CouplingScheduler(CouplingSettings(**settings)), reduce_slowstart=0.0)
    assert all(j.state == "succeeded" for j in jobs)
    model.check_hadoop_end()
    for job in jobs[:2]:
        # Algorithm 1: the k-th reduce (k = 0, 1, ...) starts only when finished maps / unit > k + 1 while
        # maps are pending (the reduces launched before it are done or running)
        unit = (1 - np.exp(-len(job.reduces) / 3.0)) * len(job.maps) / len(job.reduces)
        map_ends = [t.successful.end_s for t in job.maps]
        map_starts = [t.attempts[0].start_s for t in job.maps]
        starts = sorted(a.start_s for t in job.reduces for a in t.attempts)
        for k, start in enumerate(starts):
            done = sum(e <= start for e in map_ends)
            if sum(s <= start for s in map_starts) < len(job.maps):  # maps still pending (line 9 not in force)
                assert done / unit > k + 1, (job.name, k, done, unit)


def test_coupling_survives_failed_attempts():
    # failed attempts requeue their tasks (retried first by Job.find_map, stepped over by best_level)
    model, jobs = _run_jobs(CouplingScheduler(), 8000.0, task_failure_probability=0.2, max_attempts=8)
    assert all(j.state == "succeeded" for j in jobs)
    assert any(a.state == "failed" for a in model.attempts())
    model.check_hadoop_end()


def test_wait_scheduling_lists_keep_nodes_running_a_reduce_of_the_job_unless_told():
    # As above: L1 = [2], L2 = [0, 3], L3 = [1] from map outputs of 60 MB on node 2 and 20 MB on node 3.
    # With a reduce of the job on node 2, which has a second reduce slot, node 2 is still in V_r (Sec. II-A.2: the
    # nodes with available reduce slots) and still the centrality; Algorithm 2 line 12 then skips it in round 1.
    # The other reading leaves it out: C(0) = 100, C(3) = 120, C(1) = 140.
    sched = CouplingScheduler()
    model, job = two_map_outputs(sched, reduce_slots=2)
    model.jobtracker.launch(model.trackers[2], Launch(job.reduces[0]))
    view = model.jobtracker.view
    assert sched._lists(job, view) == ([2], [0, 3], [1])
    sched.settings = CouplingSettings(lists_skip_job_nodes=True)
    assert sched._lists(job, view) == ([0], [3, 1], [])


def test_cluster_heartbeats_counts_each_clock_s_beats_in_the_window():
    """Beats at offset + k x interval in (since, now], summed over the trackers: read from the clock's arrays, the
    same count as each tracker's own floor arithmetic, for the whole cluster and for a subset of it."""
    rng = np.random.default_rng(3)
    clock = SimpleNamespace(offset=rng.uniform(0, 3, 50), interval=rng.choice([0.3, 1.0, 3.0], 50), trackers=[])
    clock.trackers = [SimpleNamespace(node=i, clock=clock) for i in range(50)]

    def beats_until(t, at):
        return int(np.floor((at - clock.offset[t.node]) / clock.interval[t.node] + 1e-9))

    def by_hand(trackers, since, now):
        return sum(beats_until(t, now) - beats_until(t, since) for t in trackers)

    for since, now in [(0.0, 10.0), (2.5, 2.5), (7.3, 100.9)]:
        assert cluster_heartbeats(clock.trackers, since, now) == by_hand(clock.trackers, since, now)
        assert cluster_heartbeats(clock.trackers[::3], since, now) == by_hand(clock.trackers[::3], since, now)
    one = SimpleNamespace(offset=np.array([0.5]), interval=np.array([3.0]))
    one.trackers = [SimpleNamespace(node=0, clock=one)]
    assert cluster_heartbeats(one.trackers, 0.0, 9.5) == 4  # beats at 0.5, 3.5, 6.5 and 9.5 (the window is (0, 9.5])
    assert cluster_heartbeats(one.trackers, 0.5, 9.4) == 2  # 3.5, 6.5: the beat at `since` is not in it
    assert cluster_heartbeats([], 0.0, 9.5) == 0


@settings(max_examples=80, deadline=None)
@given(
    seed=st.integers(0, 2**16),
    times=st.lists(st.floats(0.0, 5000.0, allow_nan=False), min_size=2, max_size=8),
    n=st.integers(1, 40),
)
def test_the_scheduler_s_heartbeat_count_keeps_the_window_start_and_counts_as_cluster_heartbeats(seed, times, n):
    """CouplingScheduler._heartbeats keeps the candidate's start part across calls: the same count as
    cluster_heartbeats for every window, also after the clock's phase changes (HeartbeatClock.phase_changes)."""
    rng = np.random.default_rng(seed)
    clock = SimpleNamespace(offset=rng.uniform(0, 3, n), interval=rng.choice([0.3, 1.0, 3.0], n), trackers=[],
                            phase_changes=0)  # fmt: skip
    clock.trackers = [SimpleNamespace(node=i, clock=clock) for i in range(n)]
    sched = CouplingScheduler()
    since = min(times)
    for now in sorted(times):
        assert sched._heartbeats(clock.trackers, since, now) == cluster_heartbeats(clock.trackers, since, now)
    clock.offset[:] = rng.uniform(0, 3, n)  # set_phase
    clock.phase_changes += 1
    for now in sorted(times):
        assert sched._heartbeats(clock.trackers, since, now) == cluster_heartbeats(clock.trackers, since, now)
    assert sched._heartbeats(clock.trackers[: n // 2], since, max(times)) == cluster_heartbeats(
        clock.trackers[: n // 2], since, max(times)
    )


class _Hashable(SimpleNamespace):
    __hash__ = object.__hash__  # a job: hashed by identity


def _fair_candidates_by_hand(jobs, slots):
    running = {j: len(j.running_tasks[TaskKind.MAP]) for j in jobs}
    left = {j: j.pending_maps for j in jobs}
    out = []
    for _ in range(slots):
        pool = [j for j in jobs if left[j] > 0]
        if not pool:
            break
        job = min(pool, key=lambda j: (running[j] / PRIORITY_WEIGHT.get(j.priority, 1.0), j.start_s, j.number))
        out.append(job)
        running[job] += 1
        left[job] -= 1
    return out


@settings(max_examples=100, deadline=None)
@given(
    specs=st.lists(
        st.tuples(st.integers(0, 6), st.integers(0, 4), st.sampled_from(list(PRIORITY_WEIGHT)), st.integers(0, 3)),
        max_size=8,
    ),
    slots=st.integers(0, 12),
)
def test_fair_candidates_are_those_of_the_plain_loop(specs, slots):
    jobs = [_Hashable(running_tasks={TaskKind.MAP: [None] * r}, pending_maps=p, priority=prio,
                            start_s=float(start), number=i) for i, (r, p, prio, start) in enumerate(specs)]  # fmt: skip
    assert fair_candidates(jobs, slots) == _fair_candidates_by_hand(jobs, slots)
