"""Over random clouds: the /proc/stat identity, capacity bounds, and item charges that fit their wall time."""

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.scenarios_random import random_cloud
from vcloud import WorkItem


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 2**31 - 1), pooled=st.booleans(), dt=st.sampled_from([1.0, 0.5, 2.0]))
def test_invariants_hold_every_tick(seed, pooled, dt):
    model = random_cloud(seed, pooled=pooled, dt=dt, check=True)  # check_invariants runs after every tick
    model.run_for(40.0)
    vms = model.vms
    parts = sum(vms.view(c) for c in ("usr_s", "sys_s", "steal_s", "iowait_s", "idle_s"))
    np.testing.assert_allclose(parts, vms.view("vcpus") * model.time, rtol=1e-9)
    if pooled:
        cpu_pool, mem_pool = model.pool_capacity()
        assert vms.view("cpu_entitlement_mhz").sum() <= cpu_pool * (1 + 1e-9)
        assert vms.view("mem_granted_mb").sum() <= mem_pool * (1 + 1e-9)
    for item in model.agents_by_type.get(WorkItem, ()):
        if item.end_s is None:
            continue
        wall = (item.end_s - item.start_s) * item.threads
        charged = item.cputime_s + item.steal_s + item.iowait_s
        assert charged <= wall + 1e-6 + item.threads * model.dt * len(item.phases)
    # what VMs were charged is what their items were charged
    vm_of = {vm.name: vm for vm in model.vm_agents}
    for name, vm in vm_of.items():
        items = [i for i in model.agents_by_type.get(WorkItem, ()) if i.vm is vm]
        assert sum(i.cputime_s for i in items) <= vm.usr_s + vm.sys_s + 1e-6
        assert sum(i.steal_s for i in items) <= vm.steal_s + 1e-6, name
