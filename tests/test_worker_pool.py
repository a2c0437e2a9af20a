"""`scenarios.worker_pool`: forked workers that share the parent's imports; a fork server when threads run."""

import os
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from scenarios.worker_pool import context, run_all

ROOT = Path(__file__).resolve().parents[1]


def _square_or_die(x: int) -> int:
    if x < 0:
        os._exit(3)  # as a worker killed by the OOM killer
    return x * x


def _imported(name: str) -> bool:
    return name in sys.modules


FORKED = """
import sys
from scenarios.worker_pool import context, run_all
from tests.test_worker_pool import _imported, _square_or_die
assert context([]).get_start_method() == "fork"
assert "tabnanny" not in sys.modules
assert list(run_all(_imported, ["tabnanny", "tabnanny"], 2, preload=["tabnanny"])) == [True, True]
assert list(run_all(_imported, ["pydoc_data.topics"], 2)) == [False]
assert sorted(run_all(_square_or_die, range(6), 2)) == [0, 1, 4, 9, 16, 25]
"""


def test_workers_forked_from_a_single_threaded_parent_inherit_what_it_preloaded():
    # a fresh interpreter: this one may have threads left by other tests (the fork-server path, tested below)
    subprocess.run([sys.executable, "-c", FORKED], cwd=ROOT, check=True)


def test_a_process_with_threads_gets_its_workers_from_a_fork_server():
    stop = threading.Event()
    thread = threading.Thread(target=stop.wait)
    thread.start()
    try:
        assert context(["colorsys"]).get_start_method() == "forkserver"
        assert sorted(run_all(_square_or_die, [1, 2, 3], 2)) == [1, 4, 9]
    finally:
        stop.set()
        thread.join()


def test_a_worker_that_dies_stops_the_run_with_a_one_line_error():
    with pytest.raises(RuntimeError, match="a worker process died"):
        list(run_all(_square_or_die, [1, -1, 2, 3], 2))
