"""Mesa's event queue behind vcloud/clock.py: no other module reads a private attribute of Mesa's model; the next
event's time is the queue's first; Mesa's one-second step is stopped; the clock loop's end is kept while it runs."""

from __future__ import annotations

import math
import re
from pathlib import Path

from mesa import Model

from tests.helpers import one_host
from vcloud.clock import next_event_s, stop_mesa_step

ROOT = Path(__file__).resolve().parents[1]


def test_only_vcloud_clock_reads_a_private_attribute_of_mesas_model():
    model = Model(rng=1)
    private = {n for n in (*vars(model), *dir(Model)) if n.startswith("_") and not n.startswith("__")}
    assert {"_event_list", "_default_schedule", "_advance_time"} <= private
    pattern = re.compile(r"\.(" + "|".join(map(re.escape, sorted(private))) + r")\b")
    found = [
        f"{path.relative_to(ROOT)}:{text[: m.start()].count(chr(10)) + 1}: {m.group(1)}"
        for folder in ("vcloud", "hadoop_layer", "policies", "scenarios", "tests", "benchmarks")
        for path in sorted((ROOT / folder).rglob("*.py"))
        if path != ROOT / "vcloud" / "clock.py"
        for text in [path.read_text()]
        for m in pattern.finditer(text)
    ]
    assert found == []


class Calls:
    def __init__(self, model) -> None:
        self.model, self.seen = model, []

    def note(self) -> None:
        self.seen.append((float(self.model.time), getattr(self.model, "advancing_until", None)))


def test_the_next_event_is_the_queues_first_and_mesas_step_is_stopped():
    model = Model(rng=1)
    stop_mesa_step(model)
    calls = Calls(model)
    model.schedule_event(calls.note, at=0.25)
    model.schedule_event(calls.note, at=3.0)
    assert next_event_s(model) == 0.25
    model.run_until(2.0)
    assert next_event_s(model) == 3.0 and model.steps == 0  # the stopped step's cancelled event left at 1 s
    model.run_until(4.0)
    assert next_event_s(model) == math.inf and model.steps == 0


def test_the_clock_loops_end_is_kept_while_it_runs():
    model = one_host()
    calls = Calls(model)
    for t in (0.5, 2.5, 6.5):
        model.schedule_event(calls.note, at=t)
    model.run_until(2.0)
    model.run_for(4.5)
    assert calls.seen == [(0.5, 2.0), (2.5, 6.5), (6.5, 6.5)]
    assert model.advancing_until == -math.inf and model.time == 6.5 and model.ticks == 6
    assert next_event_s(model) == 7.0  # the tick
