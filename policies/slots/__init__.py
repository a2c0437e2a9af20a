"""Slot managers behind `hadoop_layer.interfaces.SlotManager`: one module each, one registry line each."""

from hadoop_layer.interfaces import NoSlotManager
from policies.slots.flexslot import FlexSlotManager, FlexSlotPolicySettings
from policies.slots.skewtune import SkewTuneManager, SkewTuneSettings

# name -> factory(settings of the scenario); FlexSlot's knobs are `--set flexslot_policy.*`, SkewTune's `skewtune.*`
SLOT_MANAGERS = {
    "none": lambda s: NoSlotManager(),
    "flexslot": lambda s: FlexSlotManager(s.flexslot_policy),
    "flexslot-unlimited": lambda s: FlexSlotManager(s.flexslot_policy.model_copy(update={"unlimited": True})),
    "skewtune": lambda s: SkewTuneManager(s.skewtune),
}

__all__ = ["SLOT_MANAGERS", "FlexSlotManager", "FlexSlotPolicySettings", "SkewTuneManager", "SkewTuneSettings"]
