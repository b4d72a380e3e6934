"""Batches of seeds: the one place where a sweep's batch size is chosen, and where seeds are cut into batches.

A sweep runs one primitive over many seeds: the basis vectors of a Jacobian's
columns or rows, a Hessian's rows, the tangents of a batched pushforward,
pullback or hvp, AutoSparse's colors, SecondOrder's points. A vectorized
sweep holds every seed's intermediates at once, so its working memory is the
number of seeds times f's. Each backend that vectorizes asks
:func:`choose_batch_size` at preparation for the largest batch it may run at
once, and runs its sweep in batches of that size inside one vectorized
function (JAX: ``lax.map`` over batches; torch: ``vmap(chunk_size=)``).

The choice, from the selector's ``batch_size`` and ``memory_budget``:

- ``batch_size`` given: that many seeds (or all, when there are fewer);
- else, with ``memory_budget`` given, or a sweep of more than
  :data:`WHOLE_SWEEP_SEEDS` seeds: the largest batch whose estimated working
  memory (the backend's estimate of one seed's bytes, times the batch) fits
  ``memory_budget`` bytes (:data:`DEFAULT_MEMORY_BUDGET` when None);
- else the whole sweep at once: a small sweep (or an unprepared call) spends
  no time on an estimate.

The batch size decided is recorded on the prepared implementation
(:func:`record`) and read back by :func:`batch_size` (``di.batch_size(prep)``).

    >>> import diffinterface as di
    >>> choose_batch_size(di.AutoJAX(batch_size=32), 1024, lambda: None)
    32
    >>> choose_batch_size(di.AutoJAX(memory_budget=2**20), 1024, lambda: 2**16)  # 1 MiB / 64 KiB per seed
    16
    >>> cut(tuple(range(5)), 2)
    [(0, 1), (2, 3), (4,)]
"""

from __future__ import annotations

from collections.abc import Callable

#: The working memory an automatic batch aims under when the selector names no ``memory_budget``:
#: small beside a laptop's memory and a 16 GiB GPU's, large enough that the batches of a sweep
#: are seldom small enough to cost time.
DEFAULT_MEMORY_BUDGET = 1 << 30

#: With neither ``batch_size`` nor ``memory_budget`` given, a sweep of at most this many seeds
#: runs whole, without estimating its memory at preparation (an estimate compiles or evaluates f
#: once more): its working memory is at most this many times f's own.
WHOLE_SWEEP_SEEDS = 64


def requested(backend):
    """``(batch_size, memory_budget)`` of a selector; ``(None, None)`` for one without those fields."""
    return backend.batch_size, backend.memory_budget


def choose_batch_size(
    backend, n: int, seed_bytes: Callable[[], int | None], one_off: bool = False
) -> int:
    """The number of seeds one vectorized pass of a sweep over ``n`` seeds takes (at least 1, at most ``n``).

    ``seed_bytes()`` is the backend's estimate of the working memory one seed
    adds to a batch, in bytes (None: unknown, the sweep runs whole); it is
    only called when the choice needs it. An unprepared call (``one_off``)
    estimates nothing unless ``memory_budget`` is given: it runs as the
    framework's own transform would, spending no evaluation on an estimate.

    Examples
    --------
    >>> import diffinterface as di
    >>> choose_batch_size(di.AutoTorch(), 10, lambda: 2**40)  # a small sweep runs whole
    10
    >>> choose_batch_size(di.AutoTorch(memory_budget=2**30), 100, lambda: 2**40)  # one seed over budget
    1
    """
    size, budget = requested(backend)
    n = max(int(n), 1)
    if size is not None:
        return min(size, n)
    if budget is None and (n <= WHOLE_SWEEP_SEEDS or one_off):
        return n
    per_seed = seed_bytes()
    if not per_seed:
        return n
    budget = DEFAULT_MEMORY_BUDGET if budget is None else budget
    return max(1, min(n, budget // per_seed))


def batch_bounds(n: int, size: int) -> list:
    """``(start, stop)`` of each batch of a sweep over ``n`` seeds in batches of ``size``.

    >>> batch_bounds(5, 2)
    [(0, 2), (2, 4), (4, 5)]
    """
    return [(start, min(start + size, n)) for start in range(0, n, size)]


def cut(seeds, size: int) -> list:
    """``seeds`` (a sequence) cut into consecutive batches of at most ``size``."""
    return [seeds[start:stop] for start, stop in batch_bounds(len(seeds), size)]


def record(impl, size):
    """``impl`` (a prepared :class:`~diffinterface.core.adapter.Impl`) marked with the batch size its sweeps use."""
    impl.batch_size = size
    return impl


def batch_size(prep):
    """The number of seeds one vectorized pass of ``prep``'s sweeps takes, decided at its preparation.

    None for a preparation that sweeps no seeds (a gradient by one backward
    pass, a single pushforward) or whose backend does not say.

    Parameters
    ----------
    prep : Preparation
        What a ``prepare_<operator>`` returned.

    Returns
    -------
    int or None

    Examples
    --------
    >>> import numpy as np, diffinterface as di
    >>> f = lambda x: np.sin(x)
    >>> prep = di.prepare_jacobian(f, di.AutoFiniteDiff(batch_size=2), np.ones(5))
    >>> di.batch_size(prep)
    1
    """
    impl = getattr(prep, "impl", None)
    if impl is None:
        raise TypeError(
            f"prep: expected a preparation (what prepare_<operator> returns); got {type(prep).__name__}"
        )
    return getattr(impl, "batch_size", None)
