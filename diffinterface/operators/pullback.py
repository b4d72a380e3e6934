"""Pullback (vector-Jacobian products): ``c @ J(x)`` for each cotangent ``c``.

    >>> import numpy as np, diffinterface as di
    >>> f = lambda x: x ** 2
    >>> di.pullback(f, di.AutoFiniteDiff(), np.array([1.0, 2.0]), (np.array([0.0, 1.0]),))[0].round(4)
    array([0., 4.])

Fallback (forward-mode adapters): pushforwards over the input's basis give the
Jacobian once, then each cotangent is a vector-matrix product.
"""

from __future__ import annotations

from ..core import FALLBACKS, OPERATORS, Impl, Preparation, call, prepare
from ._docs import document

_OP = OPERATORS["pullback"]


def prepare_pullback(f, backend, x, cotangents, *contexts, y=None, strict=True):
    return prepare(_OP, f, backend, x, cotangents, contexts, y, strict)


def pullback(f, backend, x, cotangents, *contexts, prep=None, out=None, y=None):
    if prep.__class__ is Preparation and prep.op is _OP and out is None and y is None:
        return prep.runners[0](f, backend, x, cotangents, contexts)
    return call(_OP, 0, f, backend, x, cotangents, contexts, prep, out, y)


def value_and_pullback(f, backend, x, cotangents, *contexts, prep=None, out=None, y=None):
    if prep.__class__ is Preparation and prep.op is _OP and out is None and y is None:
        return prep.runners[1](f, backend, x, cotangents, contexts)
    return call(_OP, 1, f, backend, x, cotangents, contexts, prep, out, y)


def _pullback_from_pushforwards(problem):
    xp, spec = problem.xp, problem.spec
    m, n = spec.size, problem.x_size
    columns = problem.seeded("pushforward", problem.basis(problem.x_shape, problem.x_dtype))

    def apply(jacobian_columns, cotangents):
        jac = xp.stack([xp.reshape(c, (m,)) for c in jacobian_columns], axis=1)
        return tuple(xp.reshape(xp.reshape(c, (m,)) @ jac, problem.x_shape) for c in cotangents)

    def value_and_pullback(x, cotangents, *ctx):
        y, parts = columns.value_and_results(x, *ctx)
        return y, apply(parts, cotangents)

    return Impl(
        value_and_pullback=value_and_pullback,
        pullback=lambda x, cotangents, *ctx: apply(columns.results(x, *ctx), cotangents),
    )


FALLBACKS["pullback"] = _pullback_from_pushforwards


document(
    _OP, prepare_pullback, pullback, value_and_pullback,
    summary='Pullbacks (vector-Jacobian products) ``c @ J(x)`` for each cotangent ``c``.',
    x='array or float',
    result='tuple of arrays, one per cotangent, each shaped like ``x``',
    example="""\
>>> import numpy as np, diffinterface as di
>>> f, backend = (lambda x: x ** 2), di.AutoFiniteDiff()
>>> x, cotangents = np.array([1.0, 2.0]), (np.array([0.0, 1.0]),)
>>> prep = di.prepare_pullback(f, backend, x, cotangents)
>>> di.pullback(f, backend, x, cotangents, prep=prep)[0].round(4)
array([0., 4.])
""",
)
