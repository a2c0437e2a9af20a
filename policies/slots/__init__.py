"""Slot managers behind `hadoop_layer.interfaces.SlotManager`: one module each, one registry line each."""

from hadoop_layer.interfaces import NoSlotManager
from policies.registry import Entry
from policies.slots.flexslot import FlexSlotManager, FlexSlotPolicySettings
from policies.slots.skewtune import SkewTuneManager, SkewTuneSettings

# name -> how to make it; knobs are `--set <name>.*` (policies/registry.py); the unlimited variant shares flexslot's
SLOT_MANAGERS: dict[str, Entry] = {
    "none": Entry(lambda _: NoSlotManager()),
    "flexslot": Entry(FlexSlotManager, FlexSlotPolicySettings),
    "flexslot-unlimited": Entry(
        lambda s: FlexSlotManager(s.model_copy(update={"unlimited": True})), FlexSlotPolicySettings, "flexslot"
    ),
    "skewtune": Entry(SkewTuneManager, SkewTuneSettings),
}

__all__ = ["SLOT_MANAGERS", "FlexSlotManager", "FlexSlotPolicySettings", "SkewTuneManager", "SkewTuneSettings"]
