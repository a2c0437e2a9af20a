"""What a named scenario is: settings with defaults, a builder and a summary of a finished run."""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable, Iterable, Iterator
from functools import partial
from typing import Any, ClassVar

import numpy as np
import pandas as pd
from pydantic import BaseModel, ConfigDict, Field, create_model, model_validator

from policies.allocators import ALLOCATORS
from policies.registry import Entry, build, choices, group_of
from scenarios import limits as L
from scenarios.settings import renamed_groups
from vcloud import CloudAllocator, CloudModel, Physics
from vcloud.pagecache import PageCacheSettings

# rows of a big table built, converted and written at once (`Scenario.part_makers`): a trace row is 86 B, a tasks
# row (nine strings) about 0.5 KB while its part is made and written (70 MB for 131,072 rows of a SWIM run's table)
TRACE_PART_ROWS = 1 << 17
TASK_PART_ROWS = 1 << 15


def _whole(make: Callable[[], pd.DataFrame]) -> Iterator[pd.DataFrame]:
    """A table that is not made in parts: its frame as its one part."""
    yield make()


# a policy's settings group -> (the field that picks the policy, the registry names that read the group)
POLICY_GROUPS: dict[str, tuple[str, frozenset[str]]] = {}


def policy_fields(field: str, registry: dict[str, Entry], default: str, description: str) -> dict[str, Any]:
    """Settings fields from a registry (policies/registry.py): `field` picks an entry by name, and each entry's
    group of knobs is a field named by the registry's naming rule. For `pydantic.create_model`."""
    fields: dict[str, Any] = {field: (choices(registry), Field(default, description=description))}
    for name, entry in registry.items():
        if (group := group_of(name, entry)) is not None:
            POLICY_GROUPS[group] = (field, POLICY_GROUPS.get(group, (field, frozenset()))[1] | {name})
    for name, entry in registry.items():
        group = group_of(name, entry)
        if group is not None and group not in fields:
            fields[group] = (entry.settings, Field(default_factory=entry.settings))
    return fields


def idle_groups(settings: BaseModel) -> set[str]:
    """The policy settings groups that `settings` do not read: `drs.*` under `allocator=static`, `fair.*` under
    `scheduler=fifo` (their values change nothing in a run)."""
    return {group for group, (field, names) in POLICY_GROUPS.items()
            if hasattr(settings, group) and getattr(settings, field, None) not in names}  # fmt: skip


AllocatorName = choices(ALLOCATORS)  # for scenarios that choose another default allocator
# the cloud's mechanisms' settings as vcloud declares them (Physics, MemorySettings, PageCacheSettings), beside the
# allocator and its knobs from the registry
_CloudMechanisms = create_model(
    "_CloudMechanisms",
    __config__=ConfigDict(extra="forbid"),
    **policy_fields(
        "allocator",
        ALLOCATORS,
        "drs",
        "how the pool reaches the VMs: static (configured shares, FlexSlot's Homo.), "
        "heterogeneous (per-VM CPU, Heter.), drs (demand-based, every drs.period_s)",
    ),
    **{name: (field.annotation, field) for name, field in Physics.model_fields.items()},
    page_cache=(PageCacheSettings, Field(default_factory=PageCacheSettings, description="the guests' page cache")),
)


class CloudSettings(_CloudMechanisms):
    """Settings every cloud scenario has: the allocator and its knobs (from the registry), the cloud's mechanisms
    (from vcloud), the clock, the trace."""

    model_config = ConfigDict(extra="forbid")
    renamed: ClassVar[dict[str, str]] = {}  # old name of a settings group -> its name now (still accepted)
    dt: float = Field(1.0, ge=L.MIN_DT_S, le=60, description="tick length, simulated seconds")
    trace_interval_s: float = Field(10.0, ge=L.MIN_DT_S, le=L.DAY_S, description="per-VM trace collection interval")

    def cloud_physics(self) -> dict[str, Any]:
        """The cloud's mechanisms as `CloudModel` takes them (one place for every scenario)."""
        return {
            "physics": Physics(**{name: getattr(self, name) for name in Physics.model_fields}),
            "page_cache": self.page_cache,
        }

    length_field: ClassVar[str] = "the run's length"

    def run_length_s(self) -> float | None:
        """Simulated seconds the run may last (its fixed length, or its time limit); None: not known here."""
        return None

    def vm_count(self) -> int:
        """VMs the run traces."""
        return 0

    @model_validator(mode="before")
    @classmethod
    def _old_names(cls, data: Any) -> Any:
        return renamed_groups(cls.renamed, data) if isinstance(data, dict) else data

    @model_validator(mode="after")
    def _fits_in_time_and_memory(self) -> CloudSettings:
        """Refuse runs of more ticks or trace rows than limits.py allows, before they start."""
        if self.trace_interval_s < self.dt:
            raise ValueError(
                f"trace_interval_s={self.trace_interval_s:g} is below dt={self.dt:g}: a sample per tick at most"
            )
        length = self.run_length_s()
        if length is not None:
            field = self.length_field
            if why := L.ticks_text(length, self.dt):
                raise ValueError(f"dt={self.dt:g}: {why}; raise dt or lower {field}")
            if why := L.trace_rows_text(length, self.trace_interval_s, self.vm_count()):
                raise ValueError(f"trace_interval_s={self.trace_interval_s:g}: {why}; raise it or lower {field}")
        return self

    def make_allocator(self, rng: np.random.Generator) -> CloudAllocator:
        return build(ALLOCATORS, self.allocator, self, rng)


class TestbedSettings(CloudSettings):
    """The FlexSlot testbed's pool (section 4.1): 8 hosts of 2x4 cores at 2.4 GHz with 64 GB, VMs of 4 vCPUs and
    4 GB, a 153.6 GHz / 128 GB pool. Disk and network are ours (docs/model.md): 60 MB/s per host datastore under
    many concurrent streams, 1 GbE NICs; hosts in racks of `hosts_per_rack`."""

    hosts: int = Field(8, ge=1, le=L.MAX_HOSTS, description="hypervisor hosts")
    hosts_per_rack: int = Field(4, ge=1, le=L.MAX_HOSTS, description="hosts per rack (one uplink to the core each)")
    cores_per_host: int = Field(8, ge=1, le=L.MAX_CORES_PER_HOST, description="physical cores per host")
    core_mhz: float = Field(2400.0, ge=L.MIN_CORE_MHZ, le=L.MAX_CORE_MHZ, description="MHz of a core (a vCPU's most)")
    host_mem_mb: float = Field(65536.0, ge=256, le=L.MAX_MEM_MB, description="memory per host, MB")
    disk_mbps: float = Field(
        100.0,
        ge=L.MIN_MBPS,
        le=L.MAX_MBPS,
        description="a host datastore's sequential rate for one stream (a 7200 rpm disk of the era); disk_seek shares "
        "it among concurrent streams",
    )
    nic_mbps: float = Field(125.0, ge=L.MIN_MBPS, le=L.MAX_MBPS, description="1 GbE")
    vcpus: int = Field(4, ge=1, le=L.MAX_VCPUS, description="per VM; at most the host's cores")
    vm_mem_mb: float = Field(4096.0, ge=64, le=L.MAX_MEM_MB, description="per VM; at most the host's memory")
    pool_cpu_mhz: float | None = Field(
        153600.0,
        ge=L.MIN_CORE_MHZ,
        le=L.MAX_HOSTS * L.MAX_CORES_PER_HOST * L.MAX_CORE_MHZ,
        description="the resource pool's CPU, MHz (null: the hosts' capacity)",
    )
    pool_mem_mb: float | None = Field(
        131072.0, ge=64, le=L.MAX_HOSTS * L.MAX_MEM_MB, description="the resource pool's memory, MB (null: the hosts')"
    )

    @model_validator(mode="after")
    def _vms_fit_their_hosts(self) -> TestbedSettings:
        """vSphere powers on no VM with more vCPUs than its host has cores, or more memory than the host."""
        if self.vcpus > self.cores_per_host:
            raise ValueError(f"vcpus={self.vcpus} is more than cores_per_host={self.cores_per_host}")
        if self.vm_mem_mb > self.host_mem_mb:
            raise ValueError(f"vm_mem_mb={self.vm_mem_mb:g} is more than host_mem_mb={self.host_mem_mb:g}")
        return self


class Scenario(ABC):
    name: str
    description: str
    Settings: type[CloudSettings]
    stops_itself = False  # True: the horizon is only a time limit; the model ends the run when its work is done

    def unfinished(self, model: CloudModel) -> str | None:
        """Why a run that reached its horizon did not do what it was for (None: it did), in one line."""
        return None

    @abstractmethod
    def build(self, settings: CloudSettings, seed: int, check: bool = False) -> CloudModel:
        """A ready model; `run` drives it to the end."""

    @abstractmethod
    def horizon_s(self, model: CloudModel) -> float | None:
        """Simulated seconds to run, or None when the model decides itself (sets `running = False`)."""

    @abstractmethod
    def summary(self, model: CloudModel) -> dict[str, Any]:
        """The figures of a finished run (JSON-serializable)."""

    def frame_makers(self, model: CloudModel) -> dict[str, Callable[[], pd.DataFrame]]:
        """Tables written next to the summary as Parquet: name -> what builds it. A run is written a table at a time
        (`runner.write_run`), each dropped before the next is built: a SWIM day's tables on 600 slaves held 0.2 GB
        at once beside the model (issue 16)."""
        return {"vm_trace": model.vm_trace}

    def part_makers(
        self, model: CloudModel, rows: int | None = None
    ) -> dict[str, Callable[[], Iterable[pd.DataFrame]]]:
        """What a run writes (`runner.write_run`): the tables of `frame_makers`, each as what yields its frame in
        consecutive parts (their concatenation is the frame), the big ones (`vm_trace`) in parts of about
        `TRACE_PART_ROWS` rows (`rows`, if given, for every table in parts): a table at a time held a SWIM day's
        5.3 M-row trace whole beside the model, and Parquet's buffers for it (issue 16). A table that has no parts
        is one."""
        makers: dict[str, Callable[[], Iterable[pd.DataFrame]]] = {
            name: partial(_whole, make) for name, make in self.frame_makers(model).items()
        }
        if "vm_trace" in makers:
            makers["vm_trace"] = partial(model.vm_trace_parts, rows or TRACE_PART_ROWS)
        return makers

    def frames(self, model: CloudModel) -> dict[str, pd.DataFrame]:
        """Tables written next to the summary as Parquet: name -> frame (all built at once)."""
        return {name: make() for name, make in self.frame_makers(model).items()}
