"""What a long run keeps (issue 16: a SWIM day on 600 nodes within 1 GB): a job's tasks exist from its submission,
not from the build, and making them later moves no number."""

from __future__ import annotations

import gc

import numpy as np
import pandas as pd
import pytest

from scenarios.runner import run_model
from tests.runs import SWIM, swim


@pytest.mark.skipif(not SWIM.exists(), reason="the FB-2009 SWIM trace is not here")
def test_a_jobs_tasks_are_made_at_its_submission_numbered_as_at_build():
    scenario, model = swim()
    jobs = [job for _, job in model.replay.added]
    assert all(job.splits is not None for job in jobs), "no task exists before the run"
    later = jobs[-1]
    assert later.submit_s > 0
    model.run_for(later.submit_s / 2)
    assert later.splits is not None
    run_model(model, scenario.horizon_s(model), progress=False, stops_itself=True)
    first = 1
    for job in jobs:
        gids = [t.gid for t in (*job.maps, *job.reduces)]
        assert job.splits is None and gids == list(range(first, first + len(gids)))
        first += len(gids)
        # an ended job is searched for no more maps: it keeps no locality caches (Job.forget_pending)
        assert job.end_s is not None and not (job._node_cache or job._rack_cache or job._any)
    assert model.tasks == first


@pytest.mark.skipif(not SWIM.exists(), reason="the FB-2009 SWIM trace is not here")
def test_tasks_made_at_build_or_at_submission_give_the_same_run():
    runs = []
    for early in (False, True):
        scenario, model = swim()
        if early:
            for _, job in model.replay.added:
                job.make_tasks()
        run_model(model, scenario.horizon_s(model), progress=False, stops_itself=True)
        runs.append(scenario.frames(model))
    for table in ("tasks", "jobs", "vm_trace"):
        pd.testing.assert_frame_equal(runs[0][table], runs[1][table])


def test_an_ended_attempt_is_freed_and_its_record_keeps_what_its_readers_read():
    # the readers' values of an ended attempt, as it ends with its whole plan still there, against its record in the
    # model's `ended` columns after the run (hadoop_layer/ended.py); the object itself is garbage once it has ended
    import weakref

    from hadoop_layer.profiles import PUMA
    from hadoop_layer.tasks import TaskAttempt
    from policies.speculation.samr import SamrSpeculation, stage_times
    from tests.helpers import small_cluster, uniform_maps

    model = small_cluster(slaves=3, speculation=SamrSpeculation(), task_failure_probability=0.2, max_attempts=8)
    model.add_job("j", PUMA["wordcount"], 0.0, uniform_maps(12), 2)
    jt, at_end, refs = model.jobtracker, {}, []

    def read(a) -> tuple:
        stages = stage_times(a.task.kind, [p.name for p in a.phases], a.start_s, a.phase_end_s, 3)
        return (a.name, a.tracker, a.locality, a.start_s, a.end_s, a.speculative, a.output_mb, a.spills,
                a.cputime_s, a.steal_s, a.iowait_s, a.charged("read_disk_mb"), a.charged("read_cache_mb"),
                a.runtime_s, list(a.phase_end_s), [p.name for p in a.phases], stages.tolist())  # fmt: skip

    def finished(attempt: TaskAttempt, original=jt.attempt_finished) -> None:
        at_end[attempt.name] = read(attempt)
        refs.append(weakref.ref(attempt))
        original(attempt)

    jt.attempt_finished = finished
    model.run_until(30.0)
    running = model.running_attempts()
    assert running and all(a in set(model.agents) for a in running)
    # every running attempt that is not failing keeps CPython's shared-key layout, no dict of its own (TaskAttempt)
    assert not [a for a in running if not a.will_fail and any(type(r) is dict for r in gc.get_referents(a))]
    del running
    model.run_until(3000.0)
    ended = [a for a in model.attempts() if a.state != "running"]
    assert any(a.state == "failed" for a in ended) and any(a.state == "done" for a in ended)
    assert len(refs) > 12 and not [r for r in refs if r() is not None], "an ended attempt is still referenced"
    assert not [a for a in gc.get_objects() if isinstance(a, TaskAttempt) and a.model is model and a.row is None]
    for a in ended:
        assert a.progress_score == (1.0 if a.state == "done" else 0.0)  # processed_mb of the tasks table
        if a.name in at_end:  # finished of itself (not killed): noted at its end
            assert read(a) == at_end[a.name]


def test_a_trace_sample_keeps_only_the_vms_whose_values_changed_and_reads_back_the_same():
    # a value with the bits of the VM's value at the sample before (+0.0 before the first) is not written: a column
    # that stays zero or constant takes no memory (a read-only store proves nothing is written); -0.0 and NaN are
    # kept as they are; the parts, cut anywhere, read every sample's values back
    import pandas as pd

    from vcloud.trace import VALUES, TraceRecorder

    class VMs:  # what the parts read of the VM table
        n = 3
        columns = {"host": np.array([0, 0, 1]), "vcpus": np.array([2, 2, 4])}

        def view(self, name: str) -> np.ndarray:
            return self.columns[name]

    recorder = TraceRecorder(10.0)
    samples = [
        np.array([0.0, -0.0, 0.0]),
        np.array([0.0, -0.0, 0.0]),
        np.array([1.5, 2.0, np.nan]),
        np.array([1.5, 2.0, np.nan]),
        np.array([1.5, 0.0, np.nan]),
        np.zeros(3),
    ]
    for k, values in enumerate(samples):
        recorder._row(3)
        store = recorder._values["sys_s"]
        store.flags.writeable = k not in (1, 3)  # as the sample before: nothing is written (this would raise)
        recorder._put("sys_s", k, values)
        store.flags.writeable = True
        for c in VALUES:
            if c != "sys_s":
                recorder._put(c, k, np.zeros(3))
        recorder._times.append(10.0 * (k + 1))
    assert recorder._at["sys_s"][1 : len(samples) + 1].tolist() == [1, 1, 4, 4, 5, 7]  # -0.0; 3; none; 1; 2
    assert not recorder._values["usr_s"].any() and not recorder._changed["usr_s"].any()
    vms = VMs()
    whole = recorder.frame(vms, ["a", "b", "c"], ["h0", "h1"])
    got = whole["sys_s"].to_numpy().reshape(len(samples), 3)
    assert got.view(np.uint32).tolist() == np.array(samples, np.float32).view(np.uint32).tolist()  # bit for bit
    assert np.signbit(got[0]).tolist() == [False, True, False]
    for rows in (1, 3, 4, 7, 10**6):
        parts = list(recorder.parts(vms, ["a", "b", "c"], ["h0", "h1"], rows))
        pd.testing.assert_frame_equal(pd.concat(parts, ignore_index=True), whole, check_exact=True)


@pytest.mark.skipif(not SWIM.exists(), reason="the FB-2009 SWIM trace is not here")
def test_an_ended_jobs_split_replica_ids_are_forgotten_and_their_files_kept():
    # the replica files its maps read stay in the page cache (their cached pages count); only the ids go
    from hadoop_layer.ended import EndedTaskList

    scenario, model = swim()
    model.start()
    model.run_for(450.0)
    blocks = model.files._blocks
    ids = [f for gid, files in blocks.items() if gid for f in files.values()]
    assert ids, "no split read yet"
    run_model(model, scenario.horizon_s(model), progress=False, stops_itself=True)
    jobs = [job for _, job in model.replay.added]
    assert all(isinstance(job._maps, EndedTaskList) for job in jobs)
    assert not [gid for gid in blocks if gid], "an ended job's split ids are kept"
    assert model.cache.files.alive[ids].all()  # the files stay
