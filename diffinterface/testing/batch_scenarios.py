"""The kit's batch-size cases: every sweep gives the same results whatever the selector's ``batch_size``.

For each backend whose selector has a ``batch_size`` field (a
:class:`~diffinterface.frozen.Frozen` value or a dataclass, third-party ones
included), each operator that sweeps seeds (jacobian, hessian, a batched
pushforward, pullback and hvp, AutoSparse's jacobian, and the gradient,
a sweep over x's entries in forward mode) is run with
``batch_size`` 1, a middle value and the number of seeds: the results must
agree with each other (to rounding: XLA and torch pick their kernels by
the batch's width, so a sum may be added in another order) and with the
answer known in advance, and ``di.batch_size(prep)`` must not exceed the size asked for.

How equal: a backend that sweeps one seed at a time whatever the size asked
(``di.batch_size(prep)`` is 1 each time: autograd, finite differences) must
give the same results bit for bit. A vectorized backend may differ by the
rounding of a sum added in another order, and by nothing more: XLA (Eigen),
torch (its BLAS) and TensorFlow pick a matrix product's kernel, and with it
the order in which each entry's terms are added, by the batch's width (a
matrix-vector product for one seed, blocked matrix products whose blocking
depends on the width for more), so no batch size reproduces another's
additions. Each entry is then bounded by :data:`TERMS_ULPS` units of
roundoff times the sum of the magnitudes of the terms it adds
(``|J| |t|`` for a pushforward ``J t``): the bound of two summation orders of
the same terms; an entry whose terms are all zero must be zero in both.
A selector without the field declares that its sweeps take no batch size:
its case checks that asking for one raises a TypeError naming ``batch_size``.

    >>> import diffinterface as di
    >>> [case.id for case in batch_cases({"jax": di.AutoJAX()})][:2]
    ['jax-batch-gradient', 'jax-batch-jacobian']
"""

from __future__ import annotations

import dataclasses

import numpy as np

from ..core import get_adapter
from ..families import array_namespace
from ..frozen import Frozen
from .families import convert, to_numpy

#: seeds of each sweep: the size of x (jacobian columns, hessian rows) and the number of tangents
N = 7
#: the batch sizes each sweep runs with: one seed, a middle value (not a divisor of N), all
SIZES = (1, 3, N)
#: the difference allowed between two batch sizes' results of a vectorized sweep, in units of
#: roundoff (eps) times the magnitudes of each entry's terms: two orders of adding N terms differ by
#: at most (N - 1) of them (to first order), and one more for a term rounded by another kernel (a
#: vectorized tanh against a scalar one)
TERMS_ULPS = N
OPERATORS = ("gradient", "jacobian", "hessian", "pushforward", "pullback", "hvp", "sparse_jacobian")

_M = (np.arange(5 * N).reshape(5, N) % 4 - 1.5) / 3.0


def _vector(x):
    """f(x) = M @ tanh(x) + x[:5] ** 2: a dense Jacobian (5, N)."""
    xp = array_namespace(x)
    return xp.matmul(xp.asarray(_M, dtype=x.dtype), xp.tanh(x)) + x[:5] ** 2  # TensorFlow: no 1-d @


def _vector_jacobian(x):
    j = _M * (1 - np.tanh(x) ** 2)[None, :]
    j[:, :5] += np.diag(2 * x[:5])
    return j


def _scalar(x):
    """f(x) = sum(tanh(x) ** 2) + sum(x[1:] * x[:-1]): a tridiagonal Hessian."""
    xp = array_namespace(x)
    return xp.sum(xp.tanh(x) ** 2) + xp.sum(x[1:] * x[:-1])


def _scalar_gradient_terms(x):
    """The terms each entry of ``_scalar``'s gradient adds: ``2 t (1 - t**2)``, ``x[i-1]`` and ``x[i+1]``."""
    t = np.tanh(x)
    left, right = np.concatenate([[0.0], x[:-1]]), np.concatenate([x[1:], [0.0]])
    return np.stack([2 * t * (1 - t**2), left, right])


def _scalar_hessian(x):
    t = np.tanh(x)
    h = np.diag(2 * (1 - t**2) * (1 - 3 * t**2))
    h += np.eye(N, k=1) + np.eye(N, k=-1)
    return h


def _banded(x):
    """f(x) = sin(x_i) * (x_{i-1} + x_{i+1}) inside, x ** 2 at both ends: a tridiagonal Jacobian (N, N)."""
    xp = array_namespace(x)
    inner = xp.sin(x[1:-1]) * (x[:-2] + x[2:])
    concat = getattr(xp, "concat", None) or xp.concatenate
    return concat([x[:1] ** 2, inner, x[-1:] ** 2])


def _banded_jacobian(x):
    j = np.zeros((N, N))
    j[0, 0], j[-1, -1] = 2 * x[0], 2 * x[-1]
    for i in range(1, N - 1):
        j[i, i] = np.cos(x[i]) * (x[i - 1] + x[i + 1])
        j[i, i - 1] = j[i, i + 1] = np.sin(x[i])
    return j


def _fields(selector):
    if isinstance(selector, Frozen):
        return selector.__frozen_fields__
    if dataclasses.is_dataclass(selector) and not isinstance(selector, type):
        return tuple(field.name for field in dataclasses.fields(selector))
    return ()


def takes_batch_size(selector):
    """True when the selector has a ``batch_size`` field (its sweeps run in batches of that size)."""
    return "batch_size" in _fields(selector)


def with_batch_size(selector, size):
    """The same selector with ``batch_size=size``."""
    values = {name: getattr(selector, name) for name in _fields(selector)}
    return type(selector)(**{**values, "batch_size": size})


def _family(selector):
    families = get_adapter(selector).capabilities.families
    return (
        "numpy"
        if "numpy" in families
        else next((f for f in families if f in ("torch", "jax")), "numpy")
    )


def _run(operator, backend, x, seeds):
    import diffinterface as di  # the public API: the kit sits above it

    if operator == "gradient":
        prep = di.prepare_gradient(_scalar, backend, x)
        return di.gradient(_scalar, backend, x, prep=prep), prep
    if operator == "jacobian":
        prep = di.prepare_jacobian(_vector, backend, x)
        return di.jacobian(_vector, backend, x, prep=prep), prep
    if operator == "hessian":
        prep = di.prepare_hessian(_scalar, backend, x)
        return di.hessian(_scalar, backend, x, prep=prep), prep
    if operator == "pushforward":
        prep = di.prepare_pushforward(_vector, backend, x, seeds)
        return di.pushforward(_vector, backend, x, seeds, prep=prep), prep
    if operator == "pullback":
        prep = di.prepare_pullback(_vector, backend, x, seeds)
        return di.pullback(_vector, backend, x, seeds, prep=prep), prep
    if operator == "hvp":
        prep = di.prepare_hvp(_scalar, backend, x, seeds)
        return di.hvp(_scalar, backend, x, seeds, prep=prep), prep
    sparse = di.AutoSparse(
        backend, sparsity_detector=di.DenseSparsityDetector(backend), dense_result=True
    )
    prep = di.prepare_jacobian(_banded, sparse, x)
    return di.jacobian(_banded, sparse, x, prep=prep), prep


def _magnitudes(operator, x, seeds):
    """The sum of the magnitudes of the terms each entry of the result adds up (``|J| |t|`` for ``J t``)."""
    if operator in ("pushforward", "hvp"):
        matrix = np.abs(_vector_jacobian(x) if operator == "pushforward" else _scalar_hessian(x))
        return np.stack([matrix @ np.abs(t) for t in seeds])
    if operator == "pullback":
        return np.stack([np.abs(c) @ np.abs(_vector_jacobian(x)) for c in seeds])
    if operator == "gradient":
        return np.abs(_scalar_gradient_terms(x)).sum(axis=0)
    return np.abs(_expected(operator, x, seeds))


def _expected(operator, x, seeds):
    if operator == "gradient":
        return _scalar_gradient_terms(x).sum(axis=0)
    if operator == "jacobian":
        return _vector_jacobian(x)
    if operator == "hessian":
        return _scalar_hessian(x)
    if operator == "pushforward":
        return np.stack([_vector_jacobian(x) @ t for t in seeds])
    if operator == "pullback":
        return np.stack([c @ _vector_jacobian(x) for c in seeds])
    if operator == "hvp":
        return np.stack([_scalar_hessian(x) @ t for t in seeds])
    return _banded_jacobian(x)


class BatchCase:
    """One backend and one sweeping operator, run with each batch size of :data:`SIZES`."""

    def __init__(self, backend_id, backend, operator):
        self.backend_id, self.backend, self.operator = backend_id, backend, operator
        self.id = (
            f"{backend_id}-batch-{operator}"
            if takes_batch_size(backend)
            else f"{backend_id}-no-batch-size"
        )

    def __repr__(self):
        return f"BatchCase({self.id})"

    def check(self):
        if not takes_batch_size(self.backend):
            self._check_declared()
            return
        rng = np.random.default_rng(0)
        x_np = rng.uniform(-1.0, 1.0, N)
        seed_size = 5 if self.operator == "pullback" else N
        seeds_np = [rng.normal(size=seed_size) for _ in range(N)]
        family = _family(self.backend)
        x = convert(x_np, family)
        seeds = tuple(convert(s, family) for s in seeds_np)
        expected = _expected(self.operator, x_np, seeds_np)
        results, chosen_sizes = {}, set()
        for size in SIZES:
            result, prep = _run(self.operator, with_batch_size(self.backend, size), x, seeds)
            result = (
                np.stack([to_numpy(r) for r in result])
                if isinstance(result, tuple)
                else to_numpy(result)
            )
            chosen = _batch_size(prep)
            assert chosen is None or 1 <= chosen <= size, (
                f"{self.id}: batch_size={size} asked, di.batch_size(prep) = {chosen}"
            )
            np.testing.assert_allclose(
                result,
                expected,
                rtol=1e-5,
                atol=1e-6,
                err_msg=f"{self.id}: batch_size={size} against the known answer",
            )
            results[size] = result
            chosen_sizes.add(chosen)
        bound = (
            TERMS_ULPS * np.finfo(results[N].dtype).eps * _magnitudes(self.operator, x_np, seeds_np)
        )
        for size in SIZES[:-1]:
            if chosen_sizes == {1}:  # one seed at a time whatever was asked: nothing can differ
                np.testing.assert_array_equal(
                    results[size],
                    results[N],
                    err_msg=f"{self.id}: batch_size={size} against batch_size={N}",
                )
                continue
            difference = np.abs(results[size] - results[N])
            worst = np.unravel_index(np.argmax(difference - bound), difference.shape)
            assert (difference <= bound).all(), (
                f"{self.id}: batch_size={size} against batch_size={N}: entry {worst} differs by "
                f"{difference[worst]:.3g}, more than the rounding of its terms' order ({bound[worst]:.3g})"
            )

    def _check_declared(self):
        try:
            with_batch_size(self.backend, 2)
        except TypeError as error:
            assert "batch_size" in str(error), (
                f"{self.id}: the refusal does not name batch_size: {error}"
            )
            return
        raise AssertionError(
            f"{self.id}: {self.backend!r} has no batch_size field, yet took batch_size=2"
        )


def _batch_size(prep):
    import diffinterface as di

    return di.batch_size(prep)


def batch_cases(backends):
    """The cases for ``backends`` (id -> selector): one per sweeping operator, or one that checks the
    backend declares it takes no batch size."""
    cases = []
    for backend_id, backend in backends.items():
        if takes_batch_size(backend):
            cases += [BatchCase(backend_id, backend, operator) for operator in OPERATORS]
        else:
            cases.append(BatchCase(backend_id, backend, None))
    return cases
