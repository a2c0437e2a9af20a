"""The cluster-scheduler scenarios: Capacity's queue shares and user limits, Quincy's locality against Fair."""

import numpy as np
import pytest

from scenarios.registry import SCENARIOS
from scenarios.runner import run_model
from scenarios.scheduler_experiments import POLICIES
from scenarios.settings import validate


def _run(name: str, **settings) -> dict:
    scenario = SCENARIOS[name]
    model = scenario.build(validate(scenario.Settings, settings), seed=1)
    run_model(model, scenario.horizon_s(model), progress=False)
    return scenario.summary(model)


def _queues(b_ulf: float = 1.0, c_ulp: int = 50) -> dict:
    return {
        "A": {"capacity": 50, "maximum_capacity": 60, "user_limit_factor": 2.0},
        "B": {"capacity": 30, "user_limit_factor": b_ulf},
        "C": {"capacity": 20, "minimum_user_limit_percent": c_ulp},
    }


def test_capacity_queues_get_their_capacity_borrow_up_to_maximum_and_users_are_limited():
    # 40 map slots; capacities 20 / 12 / 8 slots. A alone: its user may take 2 x 20 but maximum-capacity 60 % caps it
    # at 24 (0.6) with 16 slots idle. A + B: B's one user is held to 1 x 12 (0.3) although 4 slots stay idle. All
    # three: each at its capacity, 0.5 / 0.3 / 0.2. In C, 3 active users and minimum user limit 50 %: a user may
    # hold max(ceil(8 / 3), ceil(0.5 x 8)) = 4 slots (5 once C is past its capacity): two users run, the third waits.
    # Measured shares sit below: a freed slot stays empty until its tracker's next heartbeat, up to a tenth of the
    # slots with maps that read and compute at once and spill to the page cache (0.01-0.03 with sequential phases
    # and no cache, whose maps were longer).
    summary = _run("capacity-queues")
    assert summary["map_slots"] == 40
    expected = {"A alone": [0.6, 0.0, 0.0], "A+B": [0.6, 0.3, 0.0], "A+B+C": [0.5, 0.3, 0.2]}
    for window, shares in expected.items():
        measured = np.array(list(summary["windows"][window]["map_share"].values()))
        assert np.all(measured <= np.array(shares) + 0.01) and np.all(measured >= 0.9 * np.array(shares)), window
    users = sorted(summary["queue_C_users"].values(), key=lambda u: -u["mean_map_slots"])
    assert [u["mean_map_slots"] for u in users] == pytest.approx([4.0, 4.0, 0.0], abs=0.4)
    assert max(u["max_map_slots"] for u in users) <= 5


def test_a_larger_user_limit_factor_lets_b_borrow_and_a_full_user_limit_lets_one_user_take_c():
    # B's user-limit-factor 1.5: its one user may hold int(12 x 1.5) = 18, so B takes the 4 slots A leaves idle:
    # 16 = 0.4. C's minimum user limit 100 %: the first user's limit is all of C's 8 slots, the others get none.
    summary = _run("capacity-queues", phase_s=400.0, capacity={"queues": _queues(b_ulf=1.5, c_ulp=100)})
    measured = np.array(list(summary["windows"]["A+B"]["map_share"].values()))
    assert np.all(measured <= [0.61, 0.41, 0.01]) and np.all(measured >= [0.9 * 0.6, 0.9 * 0.4, 0.0])
    users = sorted(u["mean_map_slots"] for u in summary["queue_C_users"].values())
    assert users[:2] == [0.0, 0.0] and 0.9 * 8.0 <= users[2] <= 8.0  # less the heartbeat gaps, as above


@pytest.fixture(scope="module")
def locality_runs() -> dict[str, dict]:
    return {k: _run("quincy-locality", **POLICIES[k]) for k in ("Fair naive", "Q", "Q data x500")}


def test_quincy_with_the_papers_costs_is_at_least_as_local_as_naive_fair_and_moves_less(locality_runs):
    # psi 1, xi 2 per GB, omega 0.5 per s: a 64 MB split off-rack costs 0.125 = a quarter second of waiting, so the
    # flow hardly waits, but it picks, among the waiting tasks, those local to the freed slot. Measured (seed 1):
    # node-local 0.28 vs 0.21, 13.6 vs 14.7 GB across racks.
    naive, q = locality_runs["Fair naive"], locality_runs["Q"]
    assert q["locality"]["node"] >= naive["locality"]["node"] - 0.02
    assert q["moved_mb"]["cross_rack_mb"] < naive["moved_mb"]["cross_rack_mb"]
    assert q["solver"]["solves"] > 0 and naive["solver"] is None
    assert q["jobs_succeeded"] == naive["jobs_succeeded"] == 12


def test_quincy_with_dear_data_is_more_local_and_moves_less_across_racks(locality_runs):
    # psi 500, xi 1000: a split off-rack costs as much as 2 minutes of waiting. Measured (seed 1): node-local
    # 0.60 vs 0.21, 7.5 vs 14.7 GB across racks; the price is jobs 2.5 times longer (waiting for local slots).
    naive, q = locality_runs["Fair naive"], locality_runs["Q data x500"]
    assert q["locality"]["node"] > naive["locality"]["node"] + 0.05
    assert q["locality"]["off_rack"] < naive["locality"]["off_rack"] - 0.05
    assert q["moved_mb"]["cross_rack_mb"] < 0.7 * naive["moved_mb"]["cross_rack_mb"]
    assert q["mean_job_s"] > naive["mean_job_s"]
