"""What a named scenario is: settings with defaults, a builder and a summary of a finished run."""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import Any, Literal

import numpy as np
import pandas as pd
from pydantic import BaseModel, ConfigDict, Field

from policies.allocators import ALLOCATORS
from policies.allocators.drs import DrsSettings
from policies.allocators.heterogeneous import HeterogeneousSettings
from policies.allocators.static import StaticSettings
from vcloud import CloudAllocator, CloudModel


class CloudSettings(BaseModel):
    """Settings every cloud scenario has: the allocator and its knobs, the clock, the trace."""

    model_config = ConfigDict(extra="forbid")
    allocator: Literal["static", "heterogeneous", "drs"] = "drs"
    static: StaticSettings = Field(default_factory=StaticSettings)
    heterogeneous: HeterogeneousSettings = Field(default_factory=HeterogeneousSettings)
    drs: DrsSettings = Field(default_factory=DrsSettings)
    dt: float = Field(1.0, gt=0, le=60, description="tick length, simulated seconds")
    trace_interval_s: float = Field(10.0, gt=0, description="per-VM trace collection interval")
    swap_touch_rate: float = Field(0.2, ge=0, description="fraction of swapped MB paged in per second")

    def make_allocator(self, rng: np.random.Generator) -> CloudAllocator:
        return ALLOCATORS[self.allocator](getattr(self, self.allocator), rng)


class Scenario(ABC):
    name: str
    description: str
    Settings: type[CloudSettings]

    @abstractmethod
    def build(self, settings: CloudSettings, seed: int, check: bool = False) -> CloudModel:
        """A ready model; `run` drives it to the end."""

    @abstractmethod
    def horizon_s(self, model: CloudModel) -> float | None:
        """Simulated seconds to run, or None when the model decides itself (sets `running = False`)."""

    @abstractmethod
    def summary(self, model: CloudModel) -> dict[str, Any]:
        """The figures of a finished run (JSON-serializable)."""

    def frames(self, model: CloudModel) -> dict[str, pd.DataFrame]:
        """Tables written next to the summary as Parquet: name -> frame."""
        return {"vm_trace": model.vm_trace()}
