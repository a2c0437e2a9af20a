"""The order of one instant is the one list that says it (`vcloud.model.INSTANT`): a run's hooks, engine stages,
finished items and events at t, recorded as they run, come in its order, each row once or more; a job submitted at
t is an event after the tick at t, so the tick at t + dt is the first to see it."""

from __future__ import annotations

from itertools import groupby

from hadoop_layer.profiles import PUMA
from hadoop_layer.tasks import Job
from tests.helpers import busy, small_cluster, uniform_maps
from vcloud import engine
from vcloud.model import INSTANT


def test_the_engines_rows_are_its_stages_in_its_order():
    names = [name for name, _ in INSTANT]
    stages = [name for name, _ in engine.STAGES]
    first = names.index(stages[0])
    assert names[first : first + len(stages)] == stages
    assert len(set(names)) == len(names)


def test_an_instant_runs_in_the_order_of_the_list(monkeypatch):
    t = 10.0
    model = small_cluster()
    seen: list[tuple[float, str]] = []
    jobs_at_before_tick: dict[float, int] = {}

    def note(row: str) -> None:
        seen.append((float(model.time), row))

    def hook(row: str, original):
        def wrapped(*args):
            note(row)
            if row == "before_tick":
                jobs_at_before_tick[float(model.time)] = len(model.jobtracker.jobs)
            return original(*args)

        return wrapped

    def stage(row: str, original):
        def wrapped(*args):
            note(row)
            return original(*args)

        return wrapped

    monkeypatch.setattr(engine, "STAGES", tuple((name, stage(name, fn)) for name, fn in engine.STAGES))
    for row in ("before_tick", "after_step", "after_tick"):
        setattr(model, row, hook(row, getattr(model, row)))
    model._record_trace = hook("LOW events", model._record_trace)  # the trace sample, scheduled at the start
    submit = Job.submit_event
    monkeypatch.setattr(Job, "submit_event", lambda job: (note("DEFAULT events"), submit(job)))
    job = model.add_job("j", PUMA["grep"], t, uniform_maps(2), 0)  # submitted at t
    model.every(5.0, lambda: note("DEFAULT events"))  # periodic work of a layer
    busy(model, model.trackers[0].vm, seconds=9.5, on_finish=lambda item: note("finished"))  # ends in the tick at t
    model.run_until(t + 1.5)

    at_t = [row for time, row in seen if time == t]
    assert [row for row, _ in groupby(at_t)] == [row for row, _ in INSTANT]
    assert jobs_at_before_tick[t] == 0 and jobs_at_before_tick[t + 1] == 1 and job.submit_s == t
