"""Pushforward (Jacobian-vector products): ``J(x) @ t`` for each tangent ``t``.

    >>> import numpy as np, diffinterface as di
    >>> f = lambda x: x ** 2
    >>> di.pushforward(f, di.AutoFiniteDiff(), np.array([1.0, 2.0]), (np.array([1.0, 0.0]),))[0].round(4)
    array([2., 0.])

Fallback (reverse-mode adapters): pullbacks over the output's basis give the
Jacobian once, then each tangent is a matrix-vector product.
"""

from __future__ import annotations

from ..core import FALLBACKS, OPERATORS, Impl, Preparation, call, prepare
from ._docs import document

_OP = OPERATORS["pushforward"]


def prepare_pushforward(f, backend, x, tangents, *contexts, y=None, strict=True):
    return prepare(_OP, f, backend, x, tangents, contexts, y, strict)


def pushforward(f, backend, x, tangents, *contexts, prep=None, out=None, y=None):
    if prep.__class__ is Preparation and prep.op is _OP and out is None and y is None:
        return prep.runners[0](f, backend, x, tangents, contexts)
    return call(_OP, 0, f, backend, x, tangents, contexts, prep, out, y)


def value_and_pushforward(f, backend, x, tangents, *contexts, prep=None, out=None, y=None):
    if prep.__class__ is Preparation and prep.op is _OP and out is None and y is None:
        return prep.runners[1](f, backend, x, tangents, contexts)
    return call(_OP, 1, f, backend, x, tangents, contexts, prep, out, y)


def _pushforward_from_pullbacks(problem):
    xp, spec = problem.xp, problem.spec
    m, n = spec.size, problem.x_size
    rows = problem.seeded("pullback", problem.basis(spec.shape, spec.dtype))

    def apply(jacobian_rows, tangents):
        jac = xp.reshape(xp.stack(jacobian_rows), (m, n))
        return tuple(xp.reshape(jac @ xp.reshape(t, (n,)), spec.shape) for t in tangents)

    def value_and_pushforward(x, tangents, *ctx):
        y, parts = rows.value_and_results(x, *ctx)
        return y, apply(parts, tangents)

    return Impl(
        value_and_pushforward=value_and_pushforward,
        pushforward=lambda x, tangents, *ctx: apply(rows.results(x, *ctx), tangents),
    )


FALLBACKS["pushforward"] = _pushforward_from_pullbacks


document(
    _OP, prepare_pushforward, pushforward, value_and_pushforward,
    summary='Pushforwards (Jacobian-vector products) ``J(x) @ t`` for each tangent ``t``.',
    x='array or float',
    result='tuple of arrays, one per tangent, each shaped like ``f(x)``',
    example="""\
>>> import numpy as np, diffinterface as di
>>> f, backend = (lambda x: x ** 2), di.AutoFiniteDiff()
>>> x, tangents = np.array([1.0, 2.0]), (np.array([1.0, 0.0]), np.array([0.0, 1.0]))
>>> prep = di.prepare_pushforward(f, backend, x, tangents)
>>> [t.round(4) for t in di.pushforward(f, backend, x, tangents, prep=prep)]
[array([2., 0.]), array([0., 4.])]
""",
)
