"""The virtual cloud: hosts, VMs and a shared resource pool; CPU/disk/network/memory delivery and the
guest's usr/sys/steal/iowait/idle accounting. Knows nothing about Hadoop (DESIGN.md section 4)."""

from vcloud.agents import VM, Host, WorkItem
from vcloud.allocator import CloudAllocator, CloudView, Entitlements
from vcloud.engine import Physics
from vcloud.interference import ConstantLoad, LoadProfile, PeriodicLoad, RandomLoad, TraceLoad
from vcloud.model import CloudModel, InvariantError
from vcloud.work import Kind, Phase

__all__ = [
    "VM", "CloudAllocator", "CloudModel", "CloudView", "ConstantLoad", "Entitlements", "Host", "InvariantError",
    "Kind", "LoadProfile", "PeriodicLoad", "Phase", "Physics", "RandomLoad", "TraceLoad", "WorkItem",
]  # fmt: skip
