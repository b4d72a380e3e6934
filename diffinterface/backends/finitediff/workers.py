"""Evaluations of ``f`` through workers: the one place where a batch of independent evaluations is dispatched.

A backend that evaluates ``f`` at many points whose values do not depend on
one another (finite differences: ``AutoFiniteDiff(workers=...)``) hands the
whole batch to :meth:`Dispatcher.evaluate`, which runs it through the
selector's ``workers``:

=====================================  ========================================================
``workers``                            how the batch runs
=====================================  ========================================================
an int ``n``                           a process pool of ``n`` workers (``forkserver`` start,
                                       ``spawn`` where there is none), started at preparation and
                                       shut down when the preparation is garbage-collected, or by
                                       :func:`close_workers`
a ``concurrent.futures.Executor``      one ``submit`` per evaluation; the first failure cancels
                                       the rest
a ``dask.distributed.Client``          one ``client.map`` of the whole batch, gathered in order
a map-like callable                    ``workers(func, tasks)``, scipy's convention
                                       (``multiprocessing.Pool(4).map``, ``executor.map``)
=====================================  ========================================================

The functions evaluated travel as :class:`Shipped`: pickled with cloudpickle
where it is installed (it comes with dask; plain pickle cannot send a lambda,
a closure or a function of ``__main__`` to another process) at every call
(:meth:`Shipped.now`), so that a worker evaluates f as the caller would now,
a changed global, closure cell or attribute included; a worker process loads
each distinct pickle once (they are named by a hash of their bytes). Results come back in the
order of the tasks, so a derivative combines exactly the values a serial run
would: results equal the serial ones bit for bit (for an ``f`` that is
deterministic). An exception raised by ``f`` comes back as a
:class:`WorkerError` naming the evaluation (which point, as x moved along
which entries), chained to ``f``'s own exception (its remote traceback
attached as a note); a worker process that dies gives a :class:`WorkerError`
too (an int's pool is then replaced on the next call).

Nothing here is imported by ``import diffinterface`` beyond this module,
which imports no pool: ``concurrent.futures``, ``multiprocessing`` and
``distributed`` are imported when a dispatcher is built.

    >>> from concurrent.futures import ThreadPoolExecutor
    >>> with ThreadPoolExecutor(2) as pool:
    ...     dispatcher = Dispatcher(pool, owner=None)
    ...     shipped = Shipped((lambda x, ctx: x * ctx[0],), processes=False)
    ...     dispatcher.evaluate(shipped, [(0, 0, 1.0, (2.0,)), (1, 0, 3.0, (2.0,))], base=0.0)
    [2.0, 6.0]
"""

from __future__ import annotations

import os
import _thread
import pickle
import weakref

from ...errors import DifferentiationError
from ...placement import workers_kind


class WorkerError(DifferentiationError):
    """An evaluation of ``f`` through ``workers`` failed: ``f`` raised there, or a worker process died.

    The message names the evaluation (its index in the batch and the point, as
    the entries of x it moved); ``__cause__`` is ``f``'s own exception, with
    the worker's traceback as a note. A ``di.DifferentiationError``.

    Attributes
    ----------
    args : tuple of str
        ``(message,)``, naming the evaluation that failed (its index in the
        batch and the point, as the entries of x it moved), or what could not
        be sent to the workers.
    __cause__ : BaseException
        The exception behind it: ``f``'s own, with the worker's traceback as a
        note; the pool's error where a worker process died; the pickling
        error where ``f`` could not be sent.

    Examples
    --------
    >>> import numpy as np, diffinterface as di
    >>> from concurrent.futures import ThreadPoolExecutor
    >>> def f(x):
    ...     if x[1] > 1:
    ...         raise ValueError("the simulation diverged")
    ...     return (x ** 2).sum()
    >>> with ThreadPoolExecutor(2) as pool:
    ...     try:
    ...         di.gradient(f, di.AutoFiniteDiff(workers=pool), np.ones(3))
    ...     except di.WorkerError as error:
    ...         print(type(error.__cause__).__name__, "|", str(error)[:67])
    ValueError | f raised in a worker at evaluation 3 of 6 (x moved at entry 1 by +6
    """


def _describe(point, base):
    """Which point an evaluation was at, as the entries of x it moved: ``x moved at entry 3 by +6.1e-06``."""
    import numpy as np

    try:
        moved = np.reshape(np.asarray(point) - np.asarray(base), -1)
    except (TypeError, ValueError):  # a point of another shape than x: say no more than that
        return "a point"
    entries = np.flatnonzero(moved)
    if not len(entries):
        return "x itself"
    shown = ", ".join(f"{i} by {moved[i]:+.2g}" for i in entries[:4])
    more = f" and {len(entries) - 4} more" if len(entries) > 4 else ""
    return f"x moved at entr{'y' if len(entries) == 1 else 'ies'} {shown}{more}"


class _TaskFailed(Exception):
    """``f`` raised in a worker: ``(task number, error, remote traceback text)``, picklable to cross processes."""


#: token -> the functions of a :class:`Shipped` loaded in this (worker) process, the latest few kept
_LOADED: dict = {}
_KEPT_LOADED = 8


#: a Dask worker with several threads unpickles tasks concurrently (``_thread``: importing threading
#: here would add to every ``import diffinterface``)
_LOADED_LOCK = _thread.allocate_lock()


def _loaded(token, payload):
    with _LOADED_LOCK:
        functions = _LOADED.get(token)
        if functions is None:
            functions = pickle.loads(payload)  # cloudpickle's output loads with plain pickle
            if len(_LOADED) >= _KEPT_LOADED:
                _LOADED.pop(next(iter(_LOADED)))
            _LOADED[token] = functions
    return functions


class Shipped:
    """The functions a batch evaluates, ``function(point, ctx) -> value``, callable on one task.

    A task is ``(number, index into functions, point, ctx)``, ``number`` its place in the batch. Pickled (to reach
    another process) as the bytes of cloudpickle, or of pickle without it;
    ``processes=True`` makes them at construction, so that an ``f`` that
    cannot travel is refused at preparation. Each call dispatches
    :meth:`now`, a fresh copy whose pickle is made anew.
    """

    def __init__(self, functions, processes):
        self.functions = tuple(functions)
        self.processes = processes
        self._payload = None
        if processes:
            self.payload()

    def now(self):
        """These functions as they are at this call: pickled afresh (f's globals, closure cells and
        attributes may have changed since the last call), in a new object (a Dask client keeps the
        pickle of a function object it has seen)."""
        return Shipped(self.functions, self.processes)

    def payload(self):
        """``(token, bytes)``: the pickled functions and a hash of them, which names them in a worker."""
        if self._payload is None:
            try:
                import cloudpickle
            except ImportError:  # plain pickle sends functions importable by name only
                cloudpickle = pickle
            import hashlib

            try:
                data = cloudpickle.dumps(self.functions)
            except Exception as error:
                hint = (
                    "define f at module level, or install cloudpickle (pip install cloudpickle)"
                    if cloudpickle is pickle
                    else "use threads (a concurrent.futures.ThreadPoolExecutor)"
                )
                raise WorkerError(
                    f"workers: f (or a context) cannot be sent to another process: {error}. Where f holds "
                    f"what cannot be pickled (a lock, an open file, a compiled extension object), {hint}"
                ) from error
            # named by content: equal bytes load as equal functions, so a worker reuses what it loaded
            # while f is unchanged, and a changed f (other bytes) is loaded afresh
            self._payload = (hashlib.blake2b(data, digest_size=16).hexdigest(), data)
        return self._payload

    def __reduce__(self):
        return (_ShippedCopy, self.payload())

    def __call__(self, task):
        number, index, point, ctx = task
        try:
            return self.functions[index](point, ctx)
        except Exception as error:  # noqa: BLE001 - whatever f raises goes back to the caller, named
            import traceback

            remote = traceback.format_exc()
            try:
                pickle.dumps(error)
            except Exception:  # noqa: BLE001 - an exception that cannot travel back: its text does
                error = RuntimeError(f"{type(error).__name__}: {error}")
            raise _TaskFailed(number, error, remote) from None


class _ShippedCopy(Shipped):
    """A :class:`Shipped` unpickled in a worker: its functions loaded once per process."""

    def __init__(self, token, payload):  # pickle's call, with what __reduce__ gave
        self.functions = _loaded(token, payload)
        self._payload = (token, payload)
        self.processes = True


class _OwnedPool:
    """The process pool of ``workers=n``: started at preparation, replaced after a worker died, closable."""

    def __init__(self, size):
        self.size = size
        self.executor = None
        self.start()
        _POOLS.add(self)

    def start(self):
        import multiprocessing
        from concurrent.futures import ProcessPoolExecutor

        # forkserver: a fork of a process that runs threads (JAX's, torch's) can deadlock; spawn
        # elsewhere
        method = (
            "forkserver" if "forkserver" in multiprocessing.get_all_start_methods() else "spawn"
        )
        self.executor = ProcessPoolExecutor(
            self.size, mp_context=multiprocessing.get_context(method)
        )
        # the workers started now (one task each), not by the first call
        for future in [self.executor.submit(os.getpid) for _ in range(self.size)]:
            future.result()

    def current(self):
        if self.executor is None:  # closed by close_workers(), or broken: a fresh pool
            self.start()
        return self.executor

    def close(self):
        executor, self.executor = self.executor, None
        if executor is not None:
            executor.shutdown(wait=False, cancel_futures=True)


_POOLS: weakref.WeakSet = weakref.WeakSet()


def close_workers(prep=None):
    """Shut down the process pools that ``AutoFiniteDiff(workers=n)`` preparations started.

    Each pool otherwise lives as long as its preparation (it is shut down
    when the preparation is garbage-collected). A preparation whose pool was
    closed starts a new one on its next call. Executors, map-like callables
    and Dask clients given as ``workers`` are the caller's to close.

    Parameters
    ----------
    prep : Preparation, optional
        Close only the pool of this preparation (one made with
        ``AutoFiniteDiff(workers=n)`` itself; a wrapper's pool closes with
        the others, or when its preparation is collected). None: every pool.

    Returns
    -------
    int
        How many pools were shut down.

    Examples
    --------
    >>> import numpy as np, diffinterface as di
    >>> prep = di.prepare_gradient(np.sum, di.AutoFiniteDiff(workers=1), np.ones(2))
    >>> di.close_workers(prep), di.close_workers()
    (1, 0)
    """
    if prep is None:
        pools = list(_POOLS)
    else:
        dispatcher = getattr(getattr(prep, "impl", None), "dispatcher", None)
        pools = [dispatcher.pool] if dispatcher is not None and dispatcher.pool is not None else []
    closed = 0
    for pool in pools:
        if pool.executor is not None:
            pool.close()
            closed += 1
    return closed


def crosses_processes(workers):
    """True when ``workers`` runs tasks in other processes (their functions are then pickled at preparation, so that one that cannot travel is refused there)."""
    kind = workers_kind(workers)
    return kind in ("processes", "client") or (
        kind == "executor" and type(workers).__name__ == "ProcessPoolExecutor"
    )


class Dispatcher:
    """Runs batches of tasks through one ``workers`` value (see the module docstring); ``owner``: what
    keeps an int's pool alive (the pool is shut down when ``owner`` is garbage-collected)."""

    def __init__(self, workers, owner):
        self.workers = workers
        self.kind = workers_kind(workers)
        self.pool = None
        if self.kind == "processes":
            self.pool = _OwnedPool(int(workers))
            if owner is not None:
                weakref.finalize(owner, self.pool.close)

    def evaluate(self, shipped, tasks, base):
        """The values of ``shipped`` on each task, in order; ``base`` (x) names a failed evaluation's point."""
        if not tasks:
            return []
        if self.kind == "map":
            try:
                return list(self.workers(shipped, tasks))
            except _TaskFailed as failure:
                raise self._failed(failure, tasks, base) from failure.args[1]
            except WorkerError:
                raise
            except Exception as error:
                raise WorkerError(
                    f"workers: the map-like callable {self.workers!r} raised {type(error).__name__} while "
                    f"evaluating f at {len(tasks)} points: {error}"
                ) from error
        if self.kind == "client":
            return self._on_cluster(shipped, tasks, base)
        executor = self.pool.current() if self.pool is not None else self.workers
        return self._on_executor(executor, shipped, tasks, base)

    def _on_executor(self, executor, shipped, tasks, base):
        from concurrent.futures import FIRST_EXCEPTION, wait
        from concurrent.futures.process import BrokenProcessPool

        futures = [executor.submit(shipped, task) for task in tasks]
        wait(futures, return_when=FIRST_EXCEPTION)
        for index, future in enumerate(futures):
            if future.done() and future.exception() is not None:
                for other in futures:
                    other.cancel()
                error = future.exception()
                if isinstance(error, _TaskFailed):
                    raise self._failed(error, tasks, base) from error.args[1]
                if isinstance(error, BrokenProcessPool) and self.pool is not None:
                    self.pool.close()  # the next call starts a fresh pool
                raise WorkerError(
                    f"workers: evaluation {index + 1} of {len(tasks)} ({_describe(tasks[index][2], base)}) did not "
                    f"come back: {type(error).__name__}: {error}. A worker process that exits (os._exit, a crash, "
                    "running out of memory) ends the batch"
                ) from error
        return [future.result() for future in futures]

    def _on_cluster(self, shipped, tasks, base):
        from distributed import as_completed

        client = self.workers
        # one batch; pure=False: equal tasks still run; the key names the tasks on the dashboard
        futures = client.map(shipped, tasks, pure=False, key="diffinterface-evaluation")
        try:
            for future in as_completed(futures):
                if future.status == "error":
                    error = future.exception()
                    index = futures.index(future)
                    if isinstance(error, _TaskFailed):
                        raise self._failed(error, tasks, base) from error.args[1]
                    raise WorkerError(
                        f"workers: evaluation {index + 1} of {len(tasks)} ({_describe(tasks[index][2], base)}) failed "
                        f"on the Dask cluster: {type(error).__name__}: {error}"
                    ) from error
            return client.gather(futures)
        finally:
            client.cancel([future for future in futures if not future.done()])

    @staticmethod
    def _failed(failure, tasks, base):
        """The :class:`WorkerError` for ``f`` raising at one task (``failure``: a :class:`_TaskFailed`)."""
        number, error, remote = failure.args
        if hasattr(error, "add_note"):
            error.add_note(f"raised in a worker:\n{remote}")
        return WorkerError(
            f"f raised in a worker at evaluation {number + 1} of {len(tasks)} ({_describe(tasks[number][2], base)}): "
            f"{type(error).__name__}: {error}. The same f evaluated serially (workers=None) raises it too, with "
            "its traceback"
        )
