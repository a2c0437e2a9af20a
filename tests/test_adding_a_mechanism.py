"""docs/policies.md's recipe for a physics mechanism, followed: a toy per-VM CPU cap, added in a copy of the code base
as the recipe says (a VM column and its agent attribute, one new module with its settings, record, kernel, engine
stage and reference stage, and one line each where the engine and the reference list their stages and the physics
its settings), five production files in all; then a run checked against a figure worked out by hand, the plain
reference tick, the scenario settings that derive from the mechanism's, and numba compiling the kernel."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

MECHANISM = '''"""A per-VM CPU cap (a toy of docs/policies.md's recipe): a VM's threads want at most `cap` MHz together.

Each VM's cap is its `cpu_cap_mhz` column, or the `vm_cap.mhz` setting where the column is 0; over the cap, the VM's
items' CPU wants are scaled down alike. Runs after the demand stage, so every later stage sees the capped wants.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
from pydantic import BaseModel, ConfigDict, Field

from vcloud.numerics import kernel


class VMCapSettings(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)
    mhz: float | None = Field(None, gt=0, le=1e6, description="each VM's threads want at most this MHz (None: no cap)")


class CapInputs(NamedTuple):
    """Per item its VM and CPU want; per VM its own cap (0: the setting's)."""

    vm: np.ndarray
    want_cpu: np.ndarray
    cpu_cap_mhz: np.ndarray


@kernel
def capped_wants(inputs: CapInputs, default_mhz: float) -> np.ndarray:
    inputs = CapInputs(*inputs)  # the record comes as a plain tuple of its fields
    total = np.zeros(inputs.cpu_cap_mhz.size)
    for i in range(inputs.vm.size):
        total[inputs.vm[i]] += inputs.want_cpu[i]
    out = inputs.want_cpu.copy()
    for i in range(inputs.vm.size):
        v = inputs.vm[i]
        cap = inputs.cpu_cap_mhz[v] if inputs.cpu_cap_mhz[v] > 0 else default_mhz
        if cap > 0 and total[v] > cap:
            out[i] = inputs.want_cpu[i] * (cap / total[v])
    return out


def stage_vm_cap(st, hosts, vms, items, physics) -> None:
    """Each VM's CPU wants scaled down to its cap."""
    default = physics.vm_cap.mhz or 0.0
    if default == 0.0 and not vms.cpu_cap_mhz[: vms.n].any():
        return
    inputs = (items.vm[: items.n], st.want_cpu, vms.cpu_cap_mhz[: vms.n])  # CapInputs' fields
    st.want_cpu = capped_wants(inputs, default)


def reference_vm_cap(tick) -> None:
    """The same, VM by VM (the oracle)."""
    default = tick.physics.vm_cap.mhz or 0.0
    for v, mine in tick.items_of_vm.items():
        cap = float(tick.vms.cpu_cap_mhz[v]) or default
        total = sum(tick.want_cpu[i] for i in mine)
        if cap > 0 and total > cap:
            for i in mine:
                tick.want_cpu[i] *= cap / total
'''

CHECK = '''"""Run in the copy: the hand-worked figure, the reference tick, the derived settings."""

import copy

import numpy as np

from scenarios.registry import SCENARIOS
from scenarios.settings import validate
from tests.helpers import busy, one_host
from vcloud import Phase, Physics, WorkItem, engine, reference

# by hand: a 4-core 2000 MHz host; VM a (capped by the setting at 1200 MHz) runs two CPU-bound threads, each wanting
# a core: capped alike to 600 MHz each, a 3000-megacycle item ends at 5 s. VM b has its own column cap (500 MHz).
model = one_host(cores=4, core_mhz=2000.0, physics=Physics(vm_cap={"mhz": 1200.0}))
a = model.add_vm("a", model.host_agents[0], vcpus=2, mem_mb=4096)
b = model.add_vm("b", model.host_agents[0], vcpus=2, mem_mb=4096)
model.vms.cpu_cap_mhz[b.row] = 500.0
first = a.run(WorkItem(model, [Phase.cpu("work", 3000.0)]))
second = a.run(WorkItem(model, [Phase.cpu("work", 3000.0)]))
spin = busy(model, b)
model.run_for(10.0)
assert abs(first.end_s - 5.0) < 1e-9 and abs(second.end_s - 5.0) < 1e-9, (first.end_s, second.end_s)
assert abs(spin.cputime_s - 10 * 500.0 / 2000.0) < 1e-9, spin.cputime_s
assert b.cpu_cap_mhz == 500.0 and a.cpu_cap_mhz == 0.0

# the plain reference gives the same tick, stage by stage, on a busier cloud
model = one_host(cores=2, core_mhz=2000.0, physics=Physics(vm_cap={"mhz": 900.0}))
vms = [model.add_vm(f"v{k}", model.host_agents[0], vcpus=2, mem_mb=4096) for k in range(3)]
model.vms.cpu_cap_mhz[vms[2].row] = 2500.0  # its own cap, not the setting's
for vm in vms:
    busy(model, vm, threads=2), vm.run(WorkItem(model, [Phase.read("r", 500.0)], io_mbps_max=40.0))
model.start()
model.run_for(2.0)
tables = (model.hosts, model.vms, model.items)
fast = engine.step(*copy.deepcopy(tables), 1.0, model.physics, now=2.0)
plain = reference.step(*copy.deepcopy(tables), 1.0, model.physics, now=2.0)
for name in ("want_cpu", "got_cpu1", "rate", "got_cpu", "progress"):
    np.testing.assert_allclose(getattr(fast.state, name), getattr(plain.state, name), rtol=1e-9, err_msg=name)
per_vm = np.bincount(model.items.vm[: model.items.n], fast.state.want_cpu, minlength=3)
assert np.allclose(per_vm, [900.0, 900.0, 2500.0]), per_vm

# the scenario settings derive from the mechanism's, with its bounds
scenario = SCENARIOS["synthetic-cloud"]
settings = validate(scenario.Settings, {"vm_cap.mhz": 1200})
assert settings.cloud_physics()["physics"].vm_cap.mhz == 1200.0
try:
    validate(scenario.Settings, {"vm_cap.mhz": -1})
except Exception as e:  # one line naming the field and the value
    assert "vm_cap.mhz" in str(e), e
else:
    raise AssertionError("a negative cap was accepted")
print("ok")
'''

COMPILED = '''"""Run in the copy with numba on: the kernel compiles and gives the arithmetic of its plain form."""

import numpy as np

from vcloud.vmcap import CapInputs, capped_wants

got = capped_wants(CapInputs(np.array([0, 0, 1]), np.array([1000.0, 3000.0, 700.0]), np.array([0.0, 600.0])), 2000.0)
assert got.tolist() == [500.0, 1500.0, 600.0], got
print("ok")
'''


def add_line(path: Path, after: str, line: str) -> None:
    """Put `line` after the first line whose text (stripped) starts with `after`."""
    lines = path.read_text().splitlines(keepends=True)
    i = next(k for k, text in enumerate(lines) if text.strip().startswith(after))
    lines.insert(i + 1, line + "\n")
    path.write_text("".join(lines))


def like_line(path: Path, model: str, old: str, new: str) -> None:
    """A line made like the first one starting with `model` (its idiom and indentation), `old` replaced by `new`."""
    line = next(text for text in path.read_text().splitlines() if text.strip().startswith(model))
    add_line(path, model, line.replace(old, new))


def test_a_per_vm_cap_is_a_column_a_module_and_three_lines(tmp_path):
    copy = tmp_path / "repo"
    for package in ("vcloud", "hadoop_layer", "policies", "scenarios", "tests"):
        shutil.copytree(ROOT / package, copy / package, ignore=shutil.ignore_patterns("__pycache__"))
    vcloud = copy / "vcloud"
    # 1. the column, and the agent attribute that reads it
    add_line(
        vcloud / "tables.py", '"cpu_limit_cfg_mhz": np.float64', '        "cpu_cap_mhz": np.float64,  # (toy) 0: none'
    )
    like_line(vcloud / "agents.py", "cpu_limit_cfg_mhz =", "cpu_limit_cfg_mhz", "cpu_cap_mhz")
    # 2. the mechanism: settings, record, kernel, engine stage and reference stage
    (vcloud / "vmcap.py").write_text(MECHANISM)
    # 3. the engine: its import, its settings in Physics, its stage after demand
    add_line(vcloud / "engine.py", "from vcloud.work import", "from vcloud.vmcap import VMCapSettings, stage_vm_cap")
    field = '    vm_cap: VMCapSettings = Field(default_factory=VMCapSettings, description="(toy) per-VM CPU cap")'
    add_line(vcloud / "engine.py", "swap_touch_rate: float = Field(", field)
    add_line(vcloud / "engine.py", '("demand", stage_demand),', '    ("vm_cap", stage_vm_cap),')
    # 4. the reference: its import and its stage after demand
    add_line(vcloud / "reference.py", "from vcloud.work import", "from vcloud.vmcap import reference_vm_cap")
    add_line(vcloud / "reference.py", '("demand", _Tick.demand),', '    ("vm_cap", reference_vm_cap),')
    (copy / "check.py").write_text(CHECK)
    (copy / "compiled.py").write_text(COMPILED)

    env = {**os.environ, "PYTHONPATH": str(copy), "NUMBA_DISABLE_JIT": "1"}  # plain Python: nothing to compile
    done = subprocess.run([sys.executable, "check.py"], cwd=copy, env=env, capture_output=True, text=True, check=False)
    assert done.returncode == 0 and done.stdout.strip() == "ok", done.stderr[-3000:]
    env.pop("NUMBA_DISABLE_JIT")
    done = subprocess.run(
        [sys.executable, "compiled.py"], cwd=copy, env=env, capture_output=True, text=True, check=False
    )
    assert done.returncode == 0 and done.stdout.strip() == "ok", done.stderr[-3000:]
    production = ("vcloud", "hadoop_layer", "policies", "scenarios")
    touched = {
        path.relative_to(copy).as_posix()
        for package in production
        for path in (copy / package).rglob("*.py")
        if not (ROOT / path.relative_to(copy)).exists()
        or (ROOT / path.relative_to(copy)).read_text() != path.read_text()
    }
    assert touched == {"vcloud/tables.py", "vcloud/agents.py", "vcloud/vmcap.py", "vcloud/engine.py",
                       "vcloud/reference.py"}  # fmt: skip
