"""Named scenarios: one line each."""

from scenarios.base import Scenario
from scenarios.coupling_experiments import EXPERIMENTS
from scenarios.delay_experiments import DelayScheduling
from scenarios.flexslot import FlexSlot
from scenarios.samr_experiments import SamrHeterogeneous
from scenarios.scheduler_experiments import EXPERIMENTS as SCHEDULER_EXPERIMENTS
from scenarios.synthetic_cloud import SyntheticCloud
from scenarios.trace_replay import TraceReplay

SCENARIOS: dict[str, Scenario] = {
    s.name: s
    for s in (
        FlexSlot(),
        SyntheticCloud(),
        TraceReplay(),
        *EXPERIMENTS,
        *SCHEDULER_EXPERIMENTS,
        DelayScheduling(),
        SamrHeterogeneous(),
    )
}
DEFAULT_SCENARIO = "flexslot"
