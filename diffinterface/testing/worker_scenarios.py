"""The kit's worker cases: evaluations of f through ``workers`` give the serial results, bit for bit.

For each backend whose selector has a ``workers`` field (a
:class:`~diffinterface.frozen.Frozen` value or a dataclass, third-party ones
included), each operator that evaluates f at independent points (gradient,
jacobian, hessian, a batched pushforward and hvp, AutoSparse's jacobian) is
run with ``workers=None``, with a thread pool (an Executor) and with its
``map`` (a map-like callable): the three results must be equal, bit for bit.
A last case gives the backend an f that raises at one point: the error must
be a ``di.WorkerError`` naming the evaluation, chained to f's exception.
A selector without the field declares that it runs f in this process only:
its case checks that asking for workers raises a TypeError naming ``workers``.

    >>> import diffinterface as di
    >>> [case.id for case in worker_cases({"fd": di.AutoFiniteDiff()})][:2]
    ['fd-workers-gradient', 'fd-workers-jacobian']
"""

from __future__ import annotations

import numpy as np

from .batch_scenarios import _fields, _run, _scalar
from .families import to_numpy

N = 7
OPERATORS = ("gradient", "jacobian", "hessian", "pushforward", "hvp", "sparse_jacobian", "failure")


def takes_workers(selector):
    """True when the selector has a ``workers`` field (its evaluations of f may run elsewhere)."""
    return "workers" in _fields(selector)


def with_workers(selector, workers):
    """The same selector with ``workers=workers``."""
    values = {name: getattr(selector, name) for name in _fields(selector)}
    return type(selector)(**{**values, "workers": workers})


def _fails_off_x(x):
    """``_scalar``, but raising at every point whose third entry moved from x's (0.25)."""
    if x[2] != 0.25:
        raise FloatingPointError("the model diverged")
    return _scalar(x)


def _result(operator, backend, x, seeds):
    import diffinterface as di  # the public API: the kit sits above it

    if operator == "gradient":
        return di.gradient(_scalar, backend, x, prep=di.prepare_gradient(_scalar, backend, x))
    return _run(operator, backend, x, seeds)[0]


class WorkerCase:
    """One backend and one operator, run serially, through a thread pool and through its map."""

    def __init__(self, backend_id, backend, operator):
        self.backend_id, self.backend, self.operator = backend_id, backend, operator
        self.id = (
            f"{backend_id}-workers-{operator}"
            if takes_workers(backend)
            else f"{backend_id}-no-workers"
        )

    def __repr__(self):
        return f"WorkerCase({self.id})"

    def check(self):
        if not takes_workers(self.backend):
            self._check_declared()
            return
        from concurrent.futures import ThreadPoolExecutor

        rng = np.random.default_rng(1)
        x = rng.uniform(-1.0, 1.0, N)
        seeds = tuple(rng.normal(size=N) for _ in range(3))
        with ThreadPoolExecutor(3) as pool:
            if self.operator == "failure":
                self._check_failure(pool, x)
                return
            serial = self._numpy(_result(self.operator, with_workers(self.backend, None), x, seeds))
            for label, workers in (("an Executor", pool), ("a map-like callable", pool.map)):
                got = self._numpy(
                    _result(self.operator, with_workers(self.backend, workers), x, seeds)
                )
                assert got.dtype == serial.dtype and np.array_equal(got, serial), (
                    f"{self.id}: with {label} as workers the result differs from the serial one "
                    f"(largest difference {np.max(np.abs(got - serial))})"
                )

    @staticmethod
    def _numpy(result):
        if isinstance(result, tuple):
            return np.stack([to_numpy(r) for r in result])
        return to_numpy(result.toarray() if hasattr(result, "toarray") else result)

    def _check_failure(self, pool, x):
        import diffinterface as di

        x = x.copy()
        x[2] = 0.25
        try:
            di.gradient(_fails_off_x, with_workers(self.backend, pool), x)
        except di.WorkerError as error:
            assert "evaluation" in str(error) and "entry 2" in str(error), (
                f"{self.id}: {error} names no evaluation"
            )
            assert isinstance(error.__cause__, FloatingPointError), (
                f"{self.id}: not chained to f's error: {error!r}"
            )
            return
        raise AssertionError(f"{self.id}: f raised in a worker, and no di.WorkerError came back")

    def _check_declared(self):
        try:
            with_workers(self.backend, 2)
        except TypeError as error:
            assert "workers" in str(error), f"{self.id}: the refusal does not name workers: {error}"
            return
        raise AssertionError(
            f"{self.id}: {self.backend!r} has no workers field, yet took workers=2"
        )


def worker_cases(backends):
    """The cases for ``backends`` (id -> selector): one per operator, or one that checks the backend
    declares it takes no workers."""
    cases = []
    for backend_id, backend in backends.items():
        if takes_workers(backend):
            cases += [WorkerCase(backend_id, backend, operator) for operator in OPERATORS]
        else:
            cases.append(WorkerCase(backend_id, backend, None))
    return cases
