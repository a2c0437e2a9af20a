"""The Dask client of `--dask ADDRESS|local` for the commands that run their runs on a cluster (sweep, reproduce)."""

from __future__ import annotations

import contextlib
import os
from typing import Any


class DaskUnreachable(ValueError):
    """No Dask scheduler answers at the address given: the user's input (one line, exit 2)."""


def dask_client(stack: contextlib.ExitStack, dask: Any, workers: int | None) -> Any:
    """A `distributed.Client`: `dask` itself when it is one, a LocalCluster of `workers` processes for "local" (default
    one per CPU), else a connection to the scheduler at that address; closed with `stack`."""
    from distributed import Client, LocalCluster

    if isinstance(dask, Client):
        return dask
    if dask == "local":
        cluster = stack.enter_context(LocalCluster(n_workers=workers or os.cpu_count() or 1, threads_per_worker=1,
                                                   processes=True, dashboard_address=None))  # fmt: skip
        return stack.enter_context(Client(cluster))
    try:
        return stack.enter_context(Client(dask, timeout="10s"))
    except (OSError, TimeoutError, ValueError) as exc:
        raise DaskUnreachable(f"--dask {dask}: cannot connect: {' '.join(str(exc).split())}") from None
