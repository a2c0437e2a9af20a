"""What the clock asks of Mesa's event queue beyond Mesa's public API: the one module that reads Mesa's private parts.

Mesa 3.5's public clock is `Model.schedule_event`, `schedule_recurring`, `run_for` and `run_until` (`mesa.time`);
everything else here uses only those. Two needs have no public form in Mesa 3.5, so they live here, and nothing
else in the code base names a private attribute of Mesa (a Mesa upgrade mends this module only):

- `stop_mesa_step`: the cloud ticks every `dt` through its own event chain (vcloud/model.py), so Mesa's one-second
  step must not run. Mesa has no public switch for it; its own M/M/c example (mesa-examples,
  `examples/mmc_queue/model.py`) stops `Model._default_schedule` as done here.
- `next_event_s`: the time of the next event in the queue, which a layer's chain of events asks at every link (a
  link runs at once when no other event comes first; links that would do nothing are counted up to the next
  event). `EventList.peek_ahead` is public but the list is `Model._event_list`, and `peek_ahead` scans the
  whole heap for cancelled events (`heapq.nsmallest`, O(n) a call). The heap's first is read instead, a cancelled
  event included: Mesa leaves a cancelled event in the heap until its time (the stopped step's first, at 1 s, is
  one), and an earlier "next event" only makes the chain schedule a link it could have run at once, or count fewer
  links ahead: the same links at the same times (the layer above tests its chain).

The end of the clock loop running now (`CloudModel.advancing_until`) needs nothing private: `CloudModel.run_for`
and `run_until` keep it.
"""

from __future__ import annotations

import math

from mesa import Model


def stop_mesa_step(model: Model) -> None:
    """Stop the model's one-second `step()` schedule that `Model.__init__` started (`model.step()` then only moves
    the clock one second, running the events due)."""
    model._default_schedule.stop()


def next_event_s(model: Model) -> float:
    """When the first event in the model's queue is due (inf: none); a cancelled event counts (module docstring)."""
    events = model._event_list._events
    return float(events[0].time) if events else math.inf
