"""The Dask client of `--dask ADDRESS|local` for the commands that run their runs on a cluster (sweep, reproduce)."""

from __future__ import annotations

import contextlib
import os
from collections.abc import Sequence
from importlib import import_module
from typing import Any


class DaskUnreachable(ValueError):
    """No Dask scheduler answers at the address given: the user's input (one line, exit 2)."""


def dask_client(stack: contextlib.ExitStack, dask: Any, workers: int | None, *, fork_after: Sequence[str] | None = None
                ) -> Any:  # fmt: skip
    """A `distributed.Client`: `dask` itself when it is one, a LocalCluster of `workers` processes for "local" (default
    one per CPU), else a connection to the scheduler at that address; closed with `stack`.

    A LocalCluster's nannies spawn their workers (`distributed.worker.multiprocessing-method`), and a spawned worker
    imports Mesa, pandas, SciPy and the scenario again before its first run: 1.5-2.5 s each. With `fork_after`, this
    process imports those modules, then the workers are forked from it and inherit them. This process has threads
    then (the cluster's event loop forks from its own thread while the main thread waits for it): Dask supports
    `fork`, and the forked worker starts its own loop, but use it only for runs that, like the sweep's, start no
    threads of their own in this process before the cluster is up."""
    from distributed import Client, LocalCluster

    if isinstance(dask, Client):
        return dask
    if dask == "local":
        import dask as dask_config

        method = "spawn" if fork_after is None else "fork"
        for name in fork_after or ():
            import_module(name)
        with dask_config.config.set({"distributed.worker.multiprocessing-method": method}):
            cluster = stack.enter_context(
                LocalCluster(
                    n_workers=workers or os.cpu_count() or 1,
                    threads_per_worker=1,
                    processes=True,
                    dashboard_address=None,
                )
            )
        return stack.enter_context(Client(cluster))
    try:
        return stack.enter_context(Client(dask, timeout="10s"))
    except (OSError, TimeoutError, ValueError) as exc:
        raise DaskUnreachable(f"--dask {dask}: cannot connect: {' '.join(str(exc).split())}") from None
