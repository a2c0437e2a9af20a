"""Speculation policies behind `hadoop_layer.interfaces.SpeculationPolicy`: one module each, one registry line each."""

from hadoop_layer.interfaces import NoSpeculation
from policies.speculation.hadoop import HadoopSpeculation
from policies.speculation.late import LateSettings, LateSpeculation
from policies.speculation.samr import LateWithHistory, SamrSettings, SamrSpeculation

# name -> factory(settings of the scenario); LATE's and SAMR's knobs are `--set late.*` and `--set samr.*`
SPECULATION = {
    "none": lambda s: NoSpeculation(),
    "hadoop": lambda s: HadoopSpeculation(),
    "late": lambda s: LateWithHistory(s.late) if s.late.history_weights else LateSpeculation(s.late),
    "samr": lambda s: SamrSpeculation(s.samr),
}

__all__ = ["SPECULATION", "LateSettings", "LateSpeculation", "LateWithHistory", "SamrSettings", "SamrSpeculation"]
