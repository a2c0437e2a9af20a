"""Named scenarios: one line each."""

from scenarios.base import Scenario
from scenarios.synthetic_cloud import SyntheticCloud

SCENARIOS: dict[str, Scenario] = {s.name: s for s in (SyntheticCloud(),)}
DEFAULT_SCENARIO = "synthetic-cloud"
