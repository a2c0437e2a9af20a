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


# TickState fields by what they are per: items, streams (the items' streams, then the LOAD items'); the rest per VM
ITEM_FIELDS = {"want_cpu", "cpu_weight", "got_cpu1", "rate", "got_cpu", "runnable_mhz", "progress", "frac_dt"}
STREAM_FIELDS = {"s_factor", "s_bonus", "s_group", "s_vm", "s_need", "s_want", "s_full", "got_io1", "got_io"}
IDLE_ZERO = {"want_cpu", "cpu_weight", "got_cpu1", "got_cpu", "runnable_mhz", "progress"}  # per idle row ...
IDLE_STREAM_ZERO = {"s_bonus", "s_want", "s_full", "got_io1", "got_io"}  # ... and per stream of one


def compare_states(a: engine.TickState, b: engine.TickState, n: int) -> None:
    """The engine's tick state `a` against the reference's `b` (every row), stage by stage (the first stage that
    differs is named). When the engine left idle rows out (`a.rows`: the rows it ticked), its per-item and per-stream
    arrays are the reference's at those rows, and the reference gives the rows left out exact zeros."""
    rows = np.arange(n) if a.rows is None else a.rows
    idle = np.setdiff1d(np.arange(n), rows)
    ticked = np.isin(b.s_item, rows)  # the reference's streams of ticked rows
    for stage, fields in engine.STAGE_FIELDS.items():
        for name in fields:
            x, y, msg = getattr(a, name), getattr(b, name), f"stage {stage}: {name}"
            if name in ITEM_FIELDS:
                if name in IDLE_ZERO:
                    np.testing.assert_array_equal(y[idle], 0.0, err_msg=msg)
                y = y[rows]
            elif name in STREAM_FIELDS:
                mine = ticked[: y.size]
                if name in IDLE_STREAM_ZERO:
                    np.testing.assert_array_equal(y[~mine], 0.0, err_msg=msg)
                y = y[mine]
            elif name == "s_item":
                x, y = rows[x], y[ticked]
            elif name == "done_rows":  # the reference counts an idle row done (an open phase with 0 left)
                x, y = rows[x], y[np.isin(y, rows)]
            np.testing.assert_allclose(x, y, rtol=1e-9, atol=1e-9, err_msg=msg)


@pytest.mark.parametrize("seed", range(25))
def test_vectorized_and_reference_ticks_agree(seed, monkeypatch):
    monkeypatch.setattr(engine, "MIN_IDLE_ROWS", 1)  # idle rows are left out of these small clouds' ticks too
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
        compare_states(got.state, want.state, items_b.n)
        np.testing.assert_array_equal(got.done_rows, want.done_rows)
        np.testing.assert_allclose(got.done_offset_s, want.done_offset_s, rtol=1e-9, atol=1e-9)
        for col in VMTable.SCHEMA:
            np.testing.assert_allclose(vms_a.view(col), vms_b.view(col), rtol=1e-9, atol=1e-9, err_msg=col)
        for col in ItemTable.SCHEMA:
            np.testing.assert_allclose(items_a.view(col), items_b.view(col), rtol=1e-9, atol=1e-9, err_msg=col)
        for col in FileTable.SCHEMA:
            a, b = cache_a.files.view(col), cache_b.files.view(col)
            np.testing.assert_allclose(a, b, rtol=1e-9, atol=1e-9, err_msg=f"file {col}")


def test_the_reference_runs_the_engines_stages_in_its_order():
    assert [name for name, _ in reference.STAGES] == [name for name, _ in engine.STAGES]
