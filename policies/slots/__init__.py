"""Slot managers behind `hadoop_layer.interfaces.SlotManager`: one module each, one registry line each."""

from hadoop_layer.interfaces import NoSlotManager
from policies.slots.flexslot import FlexSlotManager, FlexSlotPolicySettings

# name -> factory(settings of the scenario); FlexSlot's knobs are `--set flexslot_policy.*`
SLOT_MANAGERS = {
    "none": lambda s: NoSlotManager(),
    "flexslot": lambda s: FlexSlotManager(s.flexslot_policy),
    "flexslot-unlimited": lambda s: FlexSlotManager(s.flexslot_policy.model_copy(update={"unlimited": True})),
}

__all__ = ["SLOT_MANAGERS", "FlexSlotManager", "FlexSlotPolicySettings"]
