"""The vectorized tick and the plain per-agent reference tick must agree to 1e-9."""

import copy

import numpy as np
import pytest

from tests.scenarios_random import random_cloud
from vcloud import engine, reference
from vcloud.pagecache import FileTable
from vcloud.tables import ItemTable, VMTable


def _tables(model):
    return copy.deepcopy(model.hosts), copy.deepcopy(model.vms), copy.deepcopy(model.items)


@pytest.mark.parametrize("seed", range(25))
def test_vectorized_and_reference_ticks_agree(seed):
    model = random_cloud(seed)
    model.start()
    for _ in range(3):  # a few ticks in, phases have moved on and counters are non-zero
        model.run_for(1.0)
    if seed % 2:  # host-local pools (vcloud/hostpool.py, memory.py): some VMs pooled, their hosts' limits random
        r = np.random.default_rng(seed)
        model.vms.in_pool[: model.vms.n] = r.random(model.vms.n) < 0.7
        model.hosts.pool_cpu_limit_mhz[: model.hosts.n] = r.uniform(500, 12000, model.hosts.n)
        model.hosts.pool_cpu_reservation_mhz[: model.hosts.n] = r.uniform(0, 3000, model.hosts.n)
        model.hosts.pool_mem_limit_mb[: model.hosts.n] = r.uniform(500, 8000, model.hosts.n)
    hosts, vms_a, items_a = _tables(model)
    _, vms_b, items_b = _tables(model)
    for dt in (1.0, 0.25):  # (the second step starts from the first's state: balloons have moved)
        cache_a, cache_b = copy.deepcopy(model.cache), copy.deepcopy(model.cache)
        got = engine.step(hosts, vms_a, items_a, dt, model.physics, cache_a, float(model.time))
        want = reference.step(hosts, vms_b, items_b, dt, model.physics, cache_b, float(model.time))
        for stage, fields in engine.STAGE_FIELDS.items():  # the first stage that differs is named
            for name in fields:
                a, b = getattr(got.state, name), getattr(want.state, name)
                np.testing.assert_allclose(a, b, rtol=1e-9, atol=1e-9, err_msg=f"stage {stage}: {name}")
        np.testing.assert_array_equal(got.done_rows, want.done_rows)
        np.testing.assert_allclose(got.done_offset_s, want.done_offset_s, rtol=1e-9, atol=1e-9)
        for col in VMTable.SCHEMA:
            np.testing.assert_allclose(vms_a.view(col), vms_b.view(col), rtol=1e-9, atol=1e-9, err_msg=col)
        for col in ItemTable.SCHEMA:
            np.testing.assert_allclose(items_a.view(col), items_b.view(col), rtol=1e-9, atol=1e-9, err_msg=col)
        for col in FileTable.SCHEMA:
            a, b = cache_a.files.view(col), cache_b.files.view(col)
            np.testing.assert_allclose(a, b, rtol=1e-9, atol=1e-9, err_msg=f"file {col}")
