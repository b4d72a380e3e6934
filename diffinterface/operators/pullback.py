"""Pullback (vector-Jacobian products): ``c @ J(x)`` for each cotangent ``c``.

    >>> import numpy as np, diffinterface as di
    >>> f = lambda x: x ** 2
    >>> di.pullback(f, di.AutoFiniteDiff(), np.array([1.0, 2.0]), (np.array([0.0, 1.0]),))[0].round(4)
    array([0., 4.])

Fallback (forward-mode adapters): pushforwards over the input's basis give the
Jacobian once, then each cotangent is a vector-matrix product.
"""

from __future__ import annotations

from ..backends.base import Impl
from ._core import FALLBACKS, context_values, prepare, run


def prepare_pullback(f, backend, x, cotangents, *contexts, y=None, strict=False):
    """Prepare ``pullback`` for ``f`` at arrays like ``x`` and a batch like ``cotangents``."""
    return prepare("pullback", f, backend, x, contexts, tangents=cotangents, y=y, strict=strict)


def pullback(f, backend, x, cotangents, *contexts, prep=None, out=None, y=None):
    """``c @ J(x)`` for each ``c`` in the tuple ``cotangents``; a tuple shaped like x."""
    if prep is not None and prep.fast == "pullback" and out is None and y is None:
        fn = prep.impl.pullback
        return fn(x, cotangents, *context_values(contexts)) if contexts else fn(x, cotangents)
    return run("pullback", "pullback", f, backend, x, contexts, prep, tangents=cotangents, out=out, y=y)


def value_and_pullback(f, backend, x, cotangents, *contexts, prep=None, out=None, y=None):
    """``(f(x), pullback(...))``."""
    if prep is not None and prep.fast == "pullback" and out is None and y is None:
        fn = prep.impl.value_and_pullback
        return fn(x, cotangents, *context_values(contexts)) if contexts else fn(x, cotangents)
    return run("pullback", "value_and_pullback", f, backend, x, contexts, prep,
               tangents=cotangents, out=out, y=y, n_values=1)


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
