"""Shared fixtures. What a test may borrow lives here or in a module made for it, never in another test module:
`tests/helpers.py` builds small clouds and clusters (with parameters), `tests/fakes.py` fakes the ClusterView for
policies worked out on paper, `tests/scenarios_random.py` makes random clouds for the engine's oracle tests."""

from __future__ import annotations

import pytest

from hadoop_layer.model import HadoopModel
from tests.helpers import small_cluster


@pytest.fixture
def cluster() -> HadoopModel:
    """Three 2-vCPU slaves on one rack, 2 map and 1 reduce slot each, FIFO, no speculation, no slot manager."""
    return small_cluster()
