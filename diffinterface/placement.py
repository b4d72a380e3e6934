"""Where and in what batches evaluations and sweeps run: the checks of ``batch_size``,
``memory_budget`` and ``AutoFiniteDiff(workers=...)``.

They run at selector construction and import nothing: an Executor or a Dask
Client exists only once its module was imported, so each is recognized
through ``sys.modules``. The devices a framework's backend splits its sweeps
across are checked by that framework's array family (``AutoJAX(devices=...)``:
:func:`diffinterface.families.jax.jax_devices`).
"""

from __future__ import annotations

import sys


def _positive_int(selector, field, meaning):
    value = getattr(selector, field)
    if value is None:
        return
    if (
        isinstance(value, bool) or not hasattr(type(value), "__index__") or value < 1
    ):  # NumPy ints too
        error = (
            ValueError
            if not isinstance(value, bool) and hasattr(type(value), "__index__")
            else TypeError
        )
        raise error(f"{type(selector).__name__}({field}=...) expected {meaning}; got {value!r}")


def check_batch_fields(selector):
    """Refuse a ``batch_size`` that is not a positive int, a ``memory_budget`` that is not a positive
    number of bytes, and both given together.

    Both bound every sweep over seeds (``diffinterface/core/batching.py``):
    ``batch_size`` is how many seeds one vectorized pass takes, ``memory_budget``
    the bytes the automatic choice (``batch_size=None``) aims under.
    """
    _positive_int(
        selector,
        "batch_size",
        "a positive int (seeds per vectorized pass) or None (chosen from memory_budget)",
    )
    _positive_int(
        selector,
        "memory_budget",
        "a positive int, in bytes (256 * 2**20 for 256 MiB), or None (the default budget)",
    )
    if selector.batch_size is not None and selector.memory_budget is not None:
        # the budget only steers the automatic choice, which a given batch_size replaces
        raise ValueError(
            f"{type(selector).__name__}(batch_size=..., memory_budget=...) expected one of them; got "
            f"batch_size={selector.batch_size!r} and memory_budget={selector.memory_budget!r}. "
            "batch_size fixes the seeds per vectorized pass, memory_budget lets the preparation "
            "choose it (batch_size=None): give the one you mean"
        )


def workers_kind(workers):
    """What ``AutoFiniteDiff(workers=...)`` was given: None, "processes", "executor", "client" or "map".

    Refuses anything else with an error naming ``workers``. Imports nothing: an
    Executor or a Dask Client exists only once its module was imported.

    >>> workers_kind(None), workers_kind(4), workers_kind(map)
    (None, 'processes', 'map')
    """
    if workers is None:
        return None
    expected = (
        "AutoFiniteDiff(workers=...) expected None (one evaluation after the other), a positive int (a "
        "process pool of that many workers), a concurrent.futures.Executor, a dask.distributed.Client, "
        "or a map-like callable workers(func, iterable) such as multiprocessing.Pool(4).map"
    )
    if not isinstance(workers, bool) and hasattr(type(workers), "__index__"):
        if workers < 1:
            raise ValueError(f"{expected}; got {workers!r}")
        return "processes"
    futures, distributed = sys.modules.get("concurrent.futures"), sys.modules.get("distributed")
    if futures is not None and isinstance(workers, futures.Executor):
        return "executor"
    if distributed is not None and isinstance(workers, distributed.Client):
        return "client"
    if callable(workers):
        return "map"
    raise TypeError(f"{expected}; got {workers!r}")
