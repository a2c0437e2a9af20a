"""Golden digests: three small seeded runs whose output tables must not change unless the physics does.

A refactor or a speed change must keep every number: the sha256 of each run's tables (`tasks`, `jobs`,
`vm_trace`, rows sorted, written as CSV with every float in full) is compared with `golden_digests.json`
(the runs, `RUNS`, and the digest are in tests/runs.py, which other tests share).
The runs cover FlexSlot's restarts and slot moves, LATE and SAMR backups, SkewTune's repartition, task
failures, the job lifecycle, the Fair and Capacity schedulers, DRS, and both shuffle modes.

When a change is *meant* to move numbers (new physics, a bug fix), rewrite the file deliberately:

    VCLOUD_UPDATE_GOLDEN=1 .venv/bin/python -m pytest tests/test_golden_digests.py

and say in the commit message why the numbers moved. Never update them to make a refactor pass.
"""

from __future__ import annotations

import json
import os

import pytest

from tests.runs import GOLDEN, RUNS, run_digests

UPDATE = os.environ.get("VCLOUD_UPDATE_GOLDEN") == "1"


@pytest.mark.parametrize("run", sorted(RUNS))
def test_seeded_runs_give_the_committed_tables(run):
    found = run_digests(*RUNS[run])
    golden = json.loads(GOLDEN.read_text()) if GOLDEN.exists() else {}
    if UPDATE:
        golden[run] = found
        GOLDEN.write_text(json.dumps(dict(sorted(golden.items())), indent=1) + "\n")
    assert run in golden, f"no digests for {run}: VCLOUD_UPDATE_GOLDEN=1 writes them (say why in the commit)"
    assert found == golden[run], f"{run}: the tables changed (see this module's docstring before updating)"
