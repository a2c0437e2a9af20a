"""Speculation policies behind `hadoop_layer.interfaces.SpeculationPolicy`."""

from hadoop_layer.interfaces import NoSpeculation
from policies.speculation.hadoop import HadoopSpeculation

SPECULATION = {"none": NoSpeculation, "hadoop": HadoopSpeculation}
