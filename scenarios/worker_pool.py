"""Local worker processes that start with this process's imports: the sweep's local backend.

A spawned worker is a fresh interpreter that imports Mesa, pandas, pyarrow, SciPy and the scenario again before
its first run: 1.3-2 s per worker, which is why 12 one-to-two-second runs were only 1.3x faster on 2 workers than
on 1 (issue 16). `mesa.batch_run` cannot avoid it: it calls `multiprocessing.set_start_method("spawn",
force=True)`. Here the workers are forked instead, after this process has imported what a run needs (`preload`),
so they inherit those modules for nothing.

Fork copies only the calling thread. A process with other threads (a Dask client's event loop, a progress bar's
monitor, a test runner's helpers) may be forked while one of them holds a lock, which the child would then find
taken for ever (Python 3.12 warns about exactly this). Such a process gets its workers from a fork server: one
clean process that imports the same modules once and forks the workers from itself.
"""

from __future__ import annotations

import multiprocessing
import os
import threading
from collections.abc import Callable, Iterable, Iterator, Sequence
from concurrent.futures import Future, ProcessPoolExecutor, as_completed
from concurrent.futures.process import BrokenProcessPool
from importlib import import_module
from multiprocessing.context import BaseContext
from typing import Any


def context(preload: Sequence[str]) -> BaseContext:
    """Fork when this process has one thread (the workers share its imported modules), else a fork server that
    has imported `preload`."""
    if threading.active_count() == 1:
        return multiprocessing.get_context("fork")
    ctx = multiprocessing.get_context("forkserver")
    ctx.set_forkserver_preload(list(preload))  # only for a fork server not yet started in this process
    return ctx


def run_all(
    fn: Callable[..., Any],
    items: Iterable[Any],
    workers: int,
    *,
    preload: Sequence[str] = (),
    initializer: Callable[[], None] | None = None,
    **kwargs: Any,
) -> Iterator[Any]:
    """`fn(item, **kwargs)` for each item on `workers` processes, one item per task (runs of unequal length
    balance themselves): the workers start here, before the caller starts any thread of its own (a progress bar);
    the iterator yields the results as the tasks finish. A task's exception is raised from it; the tasks not
    started are then cancelled, and the running ones end with their runs (or with this process: `initializer`)."""
    for name in preload:
        import_module(name)
    pool = ProcessPoolExecutor(workers, mp_context=context(preload), initializer=initializer)
    try:
        futures = [pool.submit(fn, item, **kwargs) for item in items]
    except BaseException:
        pool.shutdown(wait=False, cancel_futures=True)
        raise
    return _as_finished(pool, futures)


def _as_finished(pool: ProcessPoolExecutor, futures: list[Future]) -> Iterator[Any]:
    try:
        for future in as_completed(futures):
            try:
                result = future.result()
            except BrokenProcessPool:
                raise RuntimeError("a worker process died (killed, or out of memory?): the runs it had not "
                                   "finished are not stored; the same command runs them again") from None  # fmt: skip
            yield result
    except BaseException:
        pool.shutdown(wait=False, cancel_futures=True)
        raise
    pool.shutdown()


_watchdog_started = False


def exit_with_parent() -> None:
    """In a pool worker (its `initializer`): exit when the process that started the pool is gone (`kill -9` leaves
    a pool's workers running, each finishing its run and taking the next for nobody).

    Watches the parent's sentinel (a pipe that multiprocessing closes when the parent dies), not `os.getppid()`: a
    worker of a fork server is the server's child, not the sweep's."""
    global _watchdog_started
    parent = multiprocessing.parent_process()
    if _watchdog_started or parent is None:
        return
    _watchdog_started = True

    def watch() -> None:
        parent.join()
        os._exit(1)

    if not parent.is_alive():  # died while this worker started
        os._exit(1)
    threading.Thread(target=watch, name="pool-parent-watchdog", daemon=True).start()
