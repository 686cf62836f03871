"""Executors: where the independent tasks of a run go (``--executor``; issue 15).

``get_executor(spec)`` turns a spec into an :class:`Executor`:

- ``local`` (default): in this process, one task after the other;
- ``processes[:N]``: a pool of N worker processes on this machine (default: the cores),
  started with ``spawn`` so that a worker inherits no threads or locks of the parent;
- ``dask[:ADDRESS]``: a Dask ``distributed.Client`` on a running scheduler at ADDRESS
  (``dask:tcp://host:8786``), or, without one, a ``LocalCluster`` of worker processes
  (one per core, one thread each, quiet logs, no dashboard). Needs ``unitize[dask]``;
  Dask is imported only here, and only when such an executor is asked for.

``Executor.map(fn, items)`` returns ``[fn(x) for x in items]`` in the order of
``items`` whatever the order the workers finish in; ``fn`` must be a module-level
function and ``items`` picklable. An executor is a context manager: leaving it shuts
the pool or cluster down. Results must not depend on the executor: callers cut their
work into tasks from the data alone and concatenate the results in task order.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Any, Protocol, TypeVar

from ..errors import RunError

if TYPE_CHECKING:
    from concurrent.futures import ProcessPoolExecutor

    import distributed

T = TypeVar("T")
R = TypeVar("R")

SPECS = "local, processes[:N] or dask[:ADDRESS]"
#: seconds to wait for a Dask scheduler given by address before giving up
CONNECT_TIMEOUT = 10
DASK_EXTRA = "pip install 'unitize[dask]'"


class TaskMap(Protocol):
    """What runs independent tasks: ``map(fn, items)`` is ``[fn(x) for x in items]``, in the order of ``items``
    (an :class:`Executor`, or any object with such a ``map``)."""

    def map(self, fn: Callable[[T], R], items: Iterable[T], /) -> list[R]: ...


def cores() -> int:
    """The cores this process may run on (its affinity mask where the system has one, else
    ``os.cpu_count()``): the default number of workers, and the most started."""
    if hasattr(os, "sched_getaffinity"):
        return max(1, len(os.sched_getaffinity(0)))
    return max(1, os.cpu_count() or 1)


def forks() -> bool:
    """Whether :func:`forked_pool` gives a pool here: forking is the platform's safe default on Linux only."""
    import sys

    return sys.platform.startswith("linux")


def forked_pool(workers: int, initializer: Callable[..., None] | None = None, initargs: tuple[Any, ...] = ()) -> ProcessPoolExecutor | None:
    """A pool of ``workers`` processes forked from this one, for a run's own work on data it already holds
    (no import in the child); None where it does not fork (:func:`forks`): the caller then does the work here.
    A task's arguments are pickled to the child; what every task shares goes once, unpickled, as the
    ``initializer``'s ``initargs`` (a forked child inherits them). Unlike the ``processes`` executor, the
    children share the parent's memory until they write to it, so they must only compute and return."""
    import gc
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor

    class FrozenHeapPool(ProcessPoolExecutor):
        """The parent's objects are kept out of the cyclic collector while the pool lives (:func:`gc.freeze`): a child's
        collection would walk every inherited object, and so copy, page by page, the heap it shares with its parent."""

        def shutdown(self, wait: bool = True, *, cancel_futures: bool = False) -> None:
            try:
                super().shutdown(wait, cancel_futures=cancel_futures)
            finally:
                gc.unfreeze()

    if not forks():
        return None
    gc.freeze()  # before the children fork (at the pool's first tasks)
    try:
        return FrozenHeapPool(max_workers=workers, mp_context=multiprocessing.get_context("fork"), initializer=initializer, initargs=initargs)
    except BaseException:
        gc.unfreeze()
        raise


class Executor:
    """Runs ``fn`` over items; the base runs them here, in order (``local``)."""

    name = "local"
    workers = 1

    def map(self, fn: Callable[[T], R], items: Iterable[T]) -> list[R]:
        return [fn(x) for x in items]

    @property
    def parallel(self) -> bool:
        """Whether tasks leave this process (then they are shipped pickled, and are worth cutting smaller)."""
        return False

    def close(self) -> None:
        """Release the workers (nothing to release here)."""

    def __enter__(self) -> Executor:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.name!r}, {self.workers} worker(s)>"


class LocalExecutor(Executor):
    """In-process and sequential: today's path, and the reference every other executor must match."""


class _Parallel(Executor):
    """An executor whose tasks leave this process: ``_run`` maps a non-empty list of them."""

    @property
    def parallel(self) -> bool:
        return True

    def map(self, fn: Callable[[T], R], items: Iterable[T]) -> list[R]:
        items = list(items)
        return self._run(fn, items) if items else []

    def _run(self, fn: Callable[[T], R], items: list[T]) -> list[R]:
        raise NotImplementedError


class ProcessExecutor(_Parallel):
    """A ``concurrent.futures.ProcessPoolExecutor`` of ``workers`` spawned processes, started at the first map;
    never more than the cores (:func:`cores`: more processes than cores only compete for them). ``name`` keeps
    what was asked for (``processes:32``), ``workers`` says how many run (the manifest's run section records both)."""

    def __init__(self, workers: int | None = None, name: str | None = None):
        self.workers = min(workers or cores(), cores())
        self.name = name or f"processes:{self.workers}"
        self._pool: ProcessPoolExecutor | None = None

    def _run(self, fn: Callable[[T], R], items: list[T]) -> list[R]:
        if self._pool is None:
            import multiprocessing
            from concurrent.futures import ProcessPoolExecutor

            self._pool = ProcessPoolExecutor(max_workers=self.workers, mp_context=multiprocessing.get_context("spawn"))
        return list(self._pool.map(fn, items))

    def close(self) -> None:
        if self._pool is not None:
            self._pool.shutdown(wait=True, cancel_futures=True)
            self._pool = None


class DaskExecutor(_Parallel):
    """A ``distributed.Client``: on the scheduler at ``address``, or on a ``LocalCluster`` of its own."""

    def __init__(self, address: str | None = None, workers: int | None = None, name: str | None = None):
        try:
            import distributed
        except ImportError:
            raise RunError(f"--executor {name or 'dask'}: Dask is not installed; install the extra: {DASK_EXTRA}") from None
        self.name = name or ("dask:" + address if address else "dask")
        self._cluster: distributed.LocalCluster | None = None
        self._client: distributed.Client | None
        if address:
            try:
                self._client = distributed.Client(address, timeout=CONNECT_TIMEOUT, set_as_default=False)
            except (OSError, TimeoutError, ValueError) as exc:
                raise RunError(
                    f"--executor {self.name}: no Dask scheduler answered at {address} within {CONNECT_TIMEOUT} s "
                    f"({type(exc).__name__}: {exc}); start one (`dask scheduler`, then `dask worker {address}`) "
                    "or use --executor dask for a local cluster"
                ) from None
            self.workers = max(1, len(self._client.scheduler_info().get("workers", {})))
        else:
            self.workers = workers or cores()
            self._cluster = distributed.LocalCluster(
                n_workers=self.workers,
                threads_per_worker=1,
                processes=True,
                dashboard_address=None,
                silence_logs=logging.ERROR,
            )
            self._client = distributed.Client(self._cluster, set_as_default=False)

    def _run(self, fn: Callable[[T], R], items: list[T]) -> list[R]:
        client = self._client
        assert client is not None, "the executor was closed"
        # pure=False: every task runs (no deduplication of equal items by their hash)
        futures = client.map(fn, items, pure=False)
        try:
            return client.gather(futures)
        finally:
            for f in futures:
                f.release()

    def close(self) -> None:
        client, cluster = self._client, self._cluster
        self._client = self._cluster = None
        if client is not None:
            client.close()
        if cluster is not None:
            cluster.close()


def get_executor(spec: str | None = None) -> Executor:
    """The executor named by ``spec`` (``None``: ``local``); a bad spec is a :class:`RunError`."""
    spec = (spec or "local").strip()
    kind, sep, arg = spec.partition(":")
    if kind == "local" and not sep:
        return LocalExecutor()
    if kind == "processes":
        if not sep:
            return ProcessExecutor()
        if not arg.isdigit() or int(arg) < 1:
            raise RunError(f"--executor {spec}: N must be a positive number of processes, e.g. processes:2")
        return ProcessExecutor(int(arg), name=spec)
    if kind == "dask":
        if sep and not arg:
            raise RunError(f"--executor {spec}: give a scheduler address after 'dask:' (dask:tcp://HOST:8786), or plain dask")
        return DaskExecutor(arg or None, name=spec)
    raise RunError(f"--executor: unknown {spec!r}; use {SPECS}")


def executor_of(executor: Executor | str | None) -> tuple[Executor, bool]:
    """An executor for a spec or an executor object, and whether the caller owns it (and must close it)."""
    if isinstance(executor, Executor):
        return executor, False
    return get_executor(executor), True


__all__ = ["CONNECT_TIMEOUT", "DaskExecutor", "Executor", "LocalExecutor", "ProcessExecutor", "SPECS", "TaskMap", "cores", "executor_of", "get_executor"]
