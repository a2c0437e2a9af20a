"""scenarios/mechanism_study.py: the study's table from two sweep directories (made up here, two seeds)."""

import json

import pandas as pd
import pytest

from scenarios import mechanism_study as ms


def tasks(slow_steal: float) -> pd.DataFrame:
    # ten maps of 10 s with 1 s of steal, and one of 100 s (the slowest tenth) with `slow_steal`
    runtime = [10.0] * 10 + [100.0]
    steal = [1.0] * 10 + [slow_steal]
    return pd.DataFrame({"kind": "m", "state": "done", "start_s": 0.0, "end_s": runtime, "steal_s": steal})


def write_sweep(root, rows):
    """Rows as `vcloud sweep` writes them: DIR/runs/RUN_ID.json and, with --frames, DIR/runs/RUN_ID/tasks.parquet."""
    (root / "runs").mkdir(parents=True)
    for row in rows:
        row = dict(row)
        rid, seed, slow_steal = row.pop("run_id"), row.pop("seed"), row.pop("slow_steal")
        settings = {k.removeprefix("settings."): row.pop(k) for k in list(row) if k.startswith("settings.")}
        (root / "runs" / rid).mkdir()
        tasks(slow_steal).to_parquet(root / "runs" / rid / "tasks.parquet")
        record = {"run_id": rid, "seed": seed, "settings": settings, "error": None, "figures": row}
        (root / "runs" / f"{rid}.json").write_text(json.dumps(record))
    return root


def figures(makespan, max_min, skew=1.0, kills=0):
    return {"makespan_s": makespan, "maps_per_node_max_over_min": max_min, "map_runtime_skewness": skew,
            "killed_attempts": kills, "cloud.entitlement_persistence.cpu": 0.5,
            "cloud.entitlement_persistence.mem": None}  # fmt: skip


def test_a_cell_gathers_static_drs_and_the_slot_managers_of_its_physics(tmp_path):
    static = [{"run_id": f"s{hard}{seed}", "seed": seed, "settings.allocator": "static",
               "settings.static.hard_limit": hard, "settings.benchmark": "wordcount", "slow_steal": 10.0,
               **figures(1000.0, 1.2 if hard else 1.5)}
              for hard in (True, False) for seed in (1, 2)]  # fmt: skip
    drs = [{"run_id": f"d{sm}{enforce}{seed}", "seed": seed, "settings.allocator": "drs",
            "settings.drs.enforce": enforce, "settings.benchmark": "wordcount", "settings.slot_manager": sm,
            "slow_steal": 30.0, **figures({"none": 900.0, "skewtune": 855.0, "flexslot": 990.0}[sm] * seed, 2.0)}
           for enforce in ("host-pool", "shares") for sm in ms.SLOT_MANAGERS for seed in (1, 2)]  # fmt: skip
    t = ms.table(ms.load(write_sweep(tmp_path / "static", static)), ms.load(write_sweep(tmp_path / "drs", drs)))
    assert list(t.cell) == ["defaults", "per-VM shares"]
    row = t.iloc[0]
    # the drs.* cell takes the static runs of the defaults' physics
    assert row["maps max/min static"] == 1.2 and row["maps max/min shares control"] == 1.5
    assert row["maps max/min DRS"] == 2.0
    # Fig 6: the 100 s map's steal rate over the mean map's: 0.1 / ((10 x 0.1 + 0.1) / 11) = 1.0; 0.3 / 0.118 = 2.54
    assert row["steal ratio static"] == pytest.approx(1.0)
    assert row["steal ratio DRS"] == pytest.approx(0.3 / (1.3 / 11))
    assert row["SkewTune %"] == pytest.approx(-5.0) and row["FlexSlot %"] == pytest.approx(10.0)
    assert "| wordcount | per-VM shares | 1.20 / 2.00 (1.50) |" in ms.markdown(t)


def test_the_assumptions_name_their_cells_and_a_gap_keys_as_the_default():
    def name(**settings):
        return ms.cell_name(pd.Series({f"settings.{k.replace('__', '.')}": v for k, v in settings.items()}))

    assert name(drs__cpu_spare_by="demand") == "(a) spare by demand"
    assert name(drs__enforce="limit", drs__cpu_spare_pass=False) == "per-VM limits + (b) no spare pass"
    assert name(co_cluster=True, co_cluster_hosts=4.0) == "second cluster + (c) on hosts 0-3"
    assert name(co_cluster=True, co_cluster_hosts=float("nan")) == "second cluster"  # a column with a gap
    assert name(drs__cpu_spare_by="shares", drs__cpu_spare_pass=True, drs__enforce="host-pool") == "defaults"
    # a static sweep that wrote 4 and a DRS sweep that wrote 4.0 (or None and NaN) key the same physics
    a = pd.DataFrame({"x": [4, None]}, dtype=object)
    b = pd.DataFrame({"x": [4.0, float("nan")]})
    assert ms._key(a, ["x"]).tolist() == ms._key(b, ["x"]).tolist() == ["4", "None"]
