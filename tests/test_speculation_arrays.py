"""Hadoop speculation's look-ahead (`HadoopLookAhead`: its per-tick test over arrays, `RunningEntries.arrays` and
`lag_bounds`) gives the answers of the rule's task-by-task loop (policies/speculation/hadoop.py), on a DRS run where
backups happen and while the tick's endings are processed."""

from __future__ import annotations

from collections import Counter

import numpy as np
import pytest

from hadoop_layer.speculation_outlook import RunningEntries
from hadoop_layer.tasks import TaskKind, TaskState
from policies.speculation import hadoop as spec
from policies.speculation import hadoop_lookahead as look
from scenarios.flexslot import FlexSlot
from scenarios.registry import SCENARIOS
from scenarios.runner import run_model
from scenarios.settings import validate
from tests.helpers import former_job_counts, slow_nodes_mix
from tests.runs import SWIM

LOOP = spec.any_candidate


def loop_answer(cluster) -> bool:
    """The reference: `any_candidate` for every kind with a free slot somewhere."""
    found = False
    for kind in TaskKind:
        capacity = cluster.map_capacity() if kind == TaskKind.MAP else cluster.reduce_capacity()
        if cluster.running(kind) < capacity:
            found = found or LOOP(cluster, kind, cluster.now)
    return found


@pytest.mark.parametrize("allocator", ["drs", "static"])
def test_array_test_answers_as_the_loop_at_every_call(monkeypatch, allocator):
    seen: Counter = Counter()
    loops = Counter()  # loops run while the arrays were available (not while the tick's endings are processed)
    with_arrays = Counter()
    original = look.HadoopLookAhead.may_back_up

    def checked(self, cluster):
        fresh = self._answer[0] != cluster.now
        with_arrays["now"] = fresh and self.entries.arrays() is not None
        with_arrays["while ending"] += with_arrays["now"] and bool(self.entries.ending)  # a tick's ends processed
        answer = original(self, cluster)
        if fresh:
            assert answer == loop_answer(cluster), f"t={cluster.now}"
            seen[answer] += 1
            with_arrays["calls"] += with_arrays["now"]
        return answer

    def counted(cluster, kind, now):
        loops[kind] += with_arrays["now"]
        return LOOP(cluster, kind, now)

    monkeypatch.setattr(look.HadoopLookAhead, "may_back_up", checked)
    monkeypatch.setattr(look, "any_candidate", counted)
    scenario = FlexSlot()
    model = scenario.build(validate(scenario.Settings, {"allocator": allocator, "scale": 0.1}), seed=2)
    run_model(model, scenario.horizon_s(model), progress=False)
    assert model.hadoop_summary()["speculative_attempts"] > 0
    assert seen[True] >= 5 and seen[False] >= 5  # both answers are exercised
    assert with_arrays["calls"] > 0.75 * sum(seen.values())
    assert sum(loops.values()) < 0.25 * with_arrays["calls"]  # the arrays decide most calls they can
    assert with_arrays["while ending"] > 0, with_arrays  # also while the tick's ended attempts are processed


def test_running_arrays_follow_the_attempts_and_are_reused_until_something_changes():
    scenario = FlexSlot()
    model = scenario.build(validate(scenario.Settings, {"scale": 0.05}), seed=1)
    model.run_until(40.0)
    entries = model.running_entries
    arrays = entries.arrays()
    assert entries.arrays() is arrays
    attempts = [a for t in model.trackers for kind in TaskKind for a in t.running[kind]]
    assert len(arrays.gid) == len(attempts) > 0
    by_gid = {a.task.gid: a for a in attempts if len(a.task.active) == 1}
    for gid, kind, progress, start in zip(arrays.gid, arrays.kind, arrays.progress, arrays.task_start, strict=True):
        if gid in by_gid:
            attempt = by_gid[gid]
            assert progress == attempt.progress_score and start == attempt.task.start_s
            assert kind == (0 if attempt.task.kind == TaskKind.MAP else 1)
    model.run_until(41.0)
    assert entries.arrays() is not arrays
    assert np.all(entries.arrays().attempts >= 1)


def test_running_arrays_kept_across_ticks_are_those_of_a_fresh_view(monkeypatch):
    """`RunningEntries` keeps the attempts' rows and task columns while the item table's layout and the task states
    stay (only progress is read again): at every call of a run they equal those new entries build."""
    reused = Counter()
    original = RunningEntries.arrays

    def checked(self):
        before = (self._arrays[0], self._rows)
        arrays = original(self)
        new = RunningEntries(self._model)
        new.ending, new.releasing = self.ending, self.releasing
        fresh = original(new)
        assert (arrays is None) == (fresh is None)
        if arrays is not None:
            for name in ("gid", "kind", "job", "task_start", "progress", "attempts"):
                assert np.array_equal(getattr(arrays, name), getattr(fresh, name)), name
        reused[self._arrays[0] != before[0] and self._rows is before[1]] += 1  # new progress, the rows kept
        return arrays

    monkeypatch.setattr(RunningEntries, "arrays", checked)
    scenario = FlexSlot()
    model = scenario.build(validate(scenario.Settings, {"allocator": "drs", "scale": 0.1}), seed=2)
    run_model(model, scenario.horizon_s(model), progress=False)
    assert reused[True] > 5  # the kept rows were used (13 times in this run)


CASES = [
    pytest.param("flexslot", {"allocator": "drs", "scale": 0.1}, 2, id="flexslot-drs"),
    # a trace's recorded failed and killed attempts replayed, and jobs' setup and cleanup tasks
    pytest.param("trace-replay", {"trace": str(SWIM), "max_jobs": 40}, 1, id="swim-lifecycle",
                 marks=pytest.mark.skipif(not SWIM.exists(), reason="the FB-2009 SWIM trace is not here")),
]  # fmt: skip


@pytest.mark.parametrize(("name", "settings", "seed"), CASES)
def test_lag_bounds_kept_across_first_launches_are_those_computed_afresh(monkeypatch, name, settings, seed):
    """The bounds Hadoop's look-ahead keeps across first launches (`standing_key`) are the ones a rebuild gives: the
    "maybe" bounds exactly, the "sure" ones exactly or (a task launched now, which cannot lag yet) later. A kind
    without a bound keeps none when the launched task's job average is below the gap."""
    kept = Counter()
    original = look.HadoopLookAhead._lag_bounds

    def checked(self, cluster):
        before = (self._bounds_key, self._bounds)
        bounds = original(self, cluster)
        arrays = self.entries.arrays()
        if bounds is not None and arrays is not None:
            fresh, *_ = look.lag_bounds(cluster, arrays)
            reused = before[1] is bounds and before[0] == self.entries.standing_key()[0]
            kept[reused] += 1
            for kind in TaskKind:
                assert bounds[kind][1] == fresh[kind][1], (cluster.now, kind, reused)
                assert bounds[kind][0] == fresh[kind][0] or (reused and fresh[kind][0] == cluster.now)
        return bounds

    monkeypatch.setattr(look.HadoopLookAhead, "_lag_bounds", checked)
    scenario = SCENARIOS[name]
    model = scenario.build(validate(scenario.Settings, settings), seed=seed)
    assert isinstance(model.jobtracker.speculation, look.HadoopLookAhead)
    run_model(model, scenario.horizon_s(model), progress=False, stops_itself=scenario.stops_itself)
    assert kept[True] > 50 and kept[False] > 50  # both paths are exercised


def speculatable(task, job_progress: float, now: float, node: int) -> bool:
    """TaskInProgress.hasSpeculativeTask as plainly written (Task.progress through its properties): the oracle of
    `spec.speculatable_in`."""
    return (
        task.start_s is not None
        and now - task.start_s >= spec.SPECULATIVE_LAG_S
        and len(task.active) <= spec.MAX_TASK_EXECS
        and node not in task.nodes_tried
        and task.state == TaskState.RUNNING
        and job_progress - task.progress >= spec.SPECULATIVE_GAP
        and not task.children
    )


def plain_any_candidate(cluster, kind, now) -> bool:
    """`TaskInProgress.hasSpeculativeTask` over every running task of every job, nothing spared."""
    for job in cluster.jobs:
        running = job.running_tasks[kind]
        if running:
            average = job.progress(kind)
            if average >= spec.SPECULATIVE_GAP and any(speculatable(t, average, now, -1) for t in running):
                return True
    return False


def test_the_loop_that_skips_jobs_without_a_lagging_task_answers_as_the_plain_loop(monkeypatch):
    """`any_candidate` and `candidate` skip a job none of whose running tasks started SPECULATIVE_LAG_S ago, without
    working out its average: the same answers at every call, on a run where both answers occur."""
    answers: Counter = Counter()
    late = Counter()  # calls at which some running task had started just SPECULATIVE_LAG_S ago or more
    original = look.HadoopLookAhead.verdict

    def checked(self, cluster):  # the loop asked at every verdict, whether or not the arrays decide it
        now = cluster.now
        for kind in TaskKind:
            answer = LOOP(cluster, kind, now)
            assert answer == plain_any_candidate(cluster, kind, now), f"t={now} {kind}"
            answers[answer] += 1
            late[any(spec.lagging(j, kind, now) for j in cluster.jobs)] += 1
        return original(self, cluster)

    monkeypatch.setattr(look.HadoopLookAhead, "verdict", checked)
    scenario = FlexSlot()
    model = scenario.build(validate(scenario.Settings, {"allocator": "drs", "scale": 0.1}), seed=2)
    run_model(model, scenario.horizon_s(model), progress=False)
    assert answers[True] >= 5 and answers[False] >= 5
    assert late[False] >= 5  # the skip is exercised


def plain_candidate(tracker, cluster, kind):
    """`candidate` as it was: every job in FIFO order, `speculatable` task by task."""
    now = cluster.now
    for job in cluster.jobs_in_fifo_order():
        running = job.running_tasks[kind]
        if not running:
            continue
        average = job.progress(kind)
        if average < spec.SPECULATIVE_GAP:
            continue
        found = [t for t in running if speculatable(t, average, now, tracker.node)]
        if found:
            if kind == TaskKind.MAP:
                found.sort(key=lambda t: (cluster.locality(t, tracker), t.index))
            return found[0]
    return None


@pytest.mark.parametrize("allocator", ["drs", "slow-nodes"])
def test_the_backup_search_finds_the_former_task_at_every_call(monkeypatch, allocator):
    """`candidate` (its task tests through `speculatable_in`) picks the task the former `speculatable` loop picks,
    at every call of runs with backups; and `speculatable_in` gives `speculatable`'s tasks, in order, with every
    node, for every job and kind at each call."""
    picked: Counter = Counter()
    original = look.candidate

    def checked(tracker, cluster, kind, may_lag=None):
        task = original(tracker, cluster, kind, may_lag)
        assert task is plain_candidate(tracker, cluster, kind), f"t={cluster.now} {kind}"
        picked["filtered"] += may_lag is not None
        for job in cluster.jobs:
            average = job.progress(kind)
            for node in (-1, tracker.node):
                want = [t for t in job.running_tasks[kind] if speculatable(t, average, cluster.now, node)]
                assert list(spec.speculatable_in(job.running_tasks[kind], average, cluster.now, node)) == want
                picked["tested"] += len(want)
        picked[task is not None] += 1
        return task

    monkeypatch.setattr(look, "candidate", checked)
    if allocator == "slow-nodes":  # a third of the hosts slow: backups of maps and reduces
        slow_nodes_mix(look_ahead=True)
        assert picked[True] >= 20 and picked["tested"] >= 100 and picked["filtered"] >= 20, picked
        return
    scenario = FlexSlot()
    model = scenario.build(validate(scenario.Settings, {"allocator": allocator, "scale": 0.1}), seed=2)
    run_model(model, scenario.horizon_s(model), progress=False)
    assert picked[True] >= 1


@pytest.mark.parametrize(("name", "settings", "seed"), CASES)
def test_ledger_counts_are_the_running_jobs_loop(monkeypatch, name, settings, seed):
    """The ledger's arrays that `lag_bounds` reads (kept at every task state change, a job's entering and leaving)
    are, at every rebuild of the bounds, what a loop over the running jobs writes: their finished tasks and tasks
    (at least 1) by 2 x job number + kind, every other number 0 of 1."""
    calls = Counter()
    original = look.lag_bounds

    def checked(cluster, arrays):
        ledger = cluster.ledger
        done, size = former_job_counts(cluster.jobs, ledger.finished.size // 2)
        assert ledger.finished.size == ledger.tasks.size and ledger.finished.size % 2 == 0
        assert np.array_equal(ledger.finished, done) and np.array_equal(ledger.tasks, size), cluster.now
        calls[len(cluster.jobs) > 1] += 1
        return original(cluster, arrays)

    monkeypatch.setattr(look, "lag_bounds", checked)
    scenario = SCENARIOS[name]
    model = scenario.build(validate(scenario.Settings, settings), seed=seed)
    run_model(model, scenario.horizon_s(model), progress=False, stops_itself=scenario.stops_itself)
    assert calls[False] + calls[True] >= 50 and (name == "flexslot" or calls[True] >= 50)


@pytest.mark.parametrize(("name", "settings", "seed"), CASES)
def test_job_averages_read_in_one_gather_are_the_tasks_own_progress(monkeypatch, name, settings, seed):
    """`Job.progress` reads its running tasks' progress in one gather (`tasks._running_progress`): at every speculation
    verdict of a run with backups, the values are each task's `Task.progress`, in order, floats, both when every task
    runs one attempt with a row and beside tasks that do not (a backup, or an attempt ended in the tick being
    processed); and a kept bound's shortcut for a job past the kept averages (`_keeps`) is `Job.progress`."""
    from hadoop_layer import tasks as task_module

    seen: Counter = Counter()
    original_verdict, original_keeps = look.HadoopLookAhead.verdict, look.HadoopLookAhead._keeps

    def verdict(self, cluster):
        progress = cluster._model.item_progress()
        for job in cluster.jobs:
            for kind in TaskKind:
                running = job.running_tasks[kind]
                values = task_module._running_progress(running, progress)
                assert values == [t.progress for t in running] and all(type(v) is float for v in values)
                if running:
                    own_way = any(len(t.active) != 1 or t.active[0].row is None for t in running)
                    seen["others" if own_way else "rows"] += 1
        return original_verdict(self, cluster)

    def keeps(self, task):
        kind, job = task.kind, task.job
        averages = self._group_values()[0]
        if 2 * job.number + (kind == TaskKind.REDUCE) not in averages and self._bounds[kind][1] == np.inf:
            n = len(job.maps if kind == TaskKind.MAP else job.reduces)
            assert job.progress(kind) == job.count(kind, TaskState.DONE) / n
            seen["past the kept averages"] += 1
        return original_keeps(self, task)

    monkeypatch.setattr(look.HadoopLookAhead, "verdict", verdict)
    monkeypatch.setattr(look.HadoopLookAhead, "_keeps", keeps)
    scenario = SCENARIOS[name]
    model = scenario.build(validate(scenario.Settings, settings), seed=seed)
    run_model(model, scenario.horizon_s(model), progress=False, stops_itself=scenario.stops_itself)
    assert seen["rows"] >= 20 and seen["others"] >= 5, seen
    if name == "swim-lifecycle":  # many jobs: some launch their first tasks while the bounds are kept (12 here)
        assert seen["past the kept averages"] >= 5, seen
