"""Shared fixtures. What a test may borrow lives here or in a module made for it, never in another test module:
`tests/helpers.py` builds small clouds and clusters (with parameters), `tests/runs.py` builds seeded scenario runs
(the SWIM replay, the FlexSlot testbed, the golden runs), `tests/fakes.py` fakes the ClusterView for policies worked
out on paper, `tests/scenarios_random.py` makes random clouds for the engine's oracle tests. tests/test_test_modules.py
checks that no test module imports another."""

from __future__ import annotations

import pytest

from hadoop_layer.model import HadoopModel
from tests.helpers import small_cluster


@pytest.fixture
def cluster() -> HadoopModel:
    """Three 2-vCPU slaves on one rack, 2 map and 1 reduce slot each, FIFO, no speculation, no slot manager."""
    return small_cluster()
