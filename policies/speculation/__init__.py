"""Speculation policies behind `hadoop_layer.interfaces.SpeculationPolicy`: one module each, one registry line each."""

from hadoop_layer.interfaces import NoSpeculation
from policies.registry import Entry
from policies.speculation.hadoop_lookahead import HadoopLookAhead
from policies.speculation.late import LateSettings, LateSpeculation
from policies.speculation.samr import LateWithHistory, SamrSettings, SamrSpeculation

# name -> how to make it; LATE's and SAMR's knobs are `--set late.*` and `--set samr.*` (policies/registry.py)
SPECULATION: dict[str, Entry] = {
    "none": Entry(lambda _: NoSpeculation()),
    "hadoop": Entry(lambda _: HadoopLookAhead()),  # hadoop.py's rule behind the heartbeat clock's look-ahead
    "late": Entry(lambda s: LateWithHistory(s) if s.history_weights else LateSpeculation(s), LateSettings),
    "samr": Entry(SamrSpeculation, SamrSettings),
}

__all__ = ["SPECULATION", "LateSettings", "LateSpeculation", "LateWithHistory", "SamrSettings", "SamrSpeculation"]
