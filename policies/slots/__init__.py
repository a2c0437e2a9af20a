"""Slot managers behind `hadoop_layer.interfaces.SlotManager` (SkewTune and FlexSlot come with their issue)."""

from hadoop_layer.interfaces import NoSlotManager

SLOT_MANAGERS = {"none": NoSlotManager}
