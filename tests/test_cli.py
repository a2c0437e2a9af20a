"""The command line: what a run writes, how bad input is refused, and that a seed means the same numbers."""

import json
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

from scenarios.cli import main
from vcloud.trace import COLUMNS

QUICK = ["duration_s=120", "trace_interval_s=20"]


def test_list_names_the_scenarios(capsys):
    assert main(["list"]) == 0
    assert "synthetic-cloud" in capsys.readouterr().out


def test_run_writes_summary_trace_and_a_config_that_reruns_it(tmp_path):
    out = tmp_path / "run"
    assert main(["run", "synthetic-cloud", "--set", *QUICK, "--set", "allocator=static", "--out", str(out),
                 "--quiet", "--check"]) == 0  # fmt: skip
    assert sorted(p.name for p in out.iterdir()) == ["config.json", "summary.json", "vm_trace.parquet"]
    trace = pd.read_parquet(out / "vm_trace.parquet")
    assert list(trace.columns) == list(COLUMNS)
    assert len(trace) == 32 * 6  # 32 VMs x 120 s / 20 s
    summary = json.loads((out / "summary.json").read_text())
    assert summary["allocator"] == "static" and summary["simulated_s"] == 120.0
    again = tmp_path / "again"
    assert main(["run", "--config", str(out / "config.json"), "--out", str(again), "--quiet"]) == 0
    assert json.loads((again / "summary.json").read_text()) == summary


@pytest.mark.parametrize(
    ("args", "needle"),
    [
        (["run", "nosuch"], "unknown scenario 'nosuch'"),
        (["run", "--set", "drs.perod_s=5"], "unknown setting drs.perod_s=5"),
        (["run", "--set", "drs.period_s=-5"], "drs.period_s=-5"),
        (["run", "--set", "allocator=magic"], "allocator='magic'"),
        (["run", "--set", "hosts=0"], "hosts=0"),
        (["run", "--set", "noequals"], "'noequals'"),
        (["run", "--set", "allocator=heterogeneous", "heterogeneous.cpu_mhz=[1,2]"], "heterogeneous.cpu_mhz"),
    ],
)
def test_bad_input_is_one_line_exit_2_and_nothing_written(tmp_path, capsys, args, needle):
    out = tmp_path / "never"
    assert main([*args, "--out", str(out), "--quiet"]) == 2
    err = capsys.readouterr().err.strip()
    assert needle in err and "\n" not in err
    assert not out.exists() and list(tmp_path.iterdir()) == []


SCRIPT = """
import hashlib, sys
from scenarios.registry import SCENARIOS
from scenarios.settings import validate
sc = SCENARIOS["synthetic-cloud"]
settings = validate(sc.Settings, {"duration_s": 300, "tenants_per_host": 1, "tenant_load": "random"})
m = sc.build(settings, seed=int(sys.argv[1]))
m.run_until(300.0)
df = m.vm_trace()
print(hashlib.sha256(df.to_csv(index=False).encode()).hexdigest(), len(df))
"""


def test_same_seed_same_trace_in_separate_processes():
    root = Path(__file__).resolve().parents[1]

    def trace_digest(seed: int, hash_seed: int) -> str:
        return subprocess.run([sys.executable, "-c", SCRIPT, str(seed)], cwd=root, capture_output=True, text=True,
                              check=True, env={"PYTHONHASHSEED": str(hash_seed), "PATH": ""}).stdout  # fmt: skip

    first, second = trace_digest(11, 1), trace_digest(11, 2)
    assert first == second
    assert int(first.split()[1]) == (32 + 8) * 30  # 32 pool VMs and 8 tenants, every 10 s for 300 s
    assert trace_digest(12, 1) != first  # the seed matters: the check above could fail
