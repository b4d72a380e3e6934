"""Pushforward (Jacobian-vector products): ``J(x) @ t`` for each tangent ``t``.

    >>> import numpy as np, diffinterface as di
    >>> f = lambda x: x ** 2
    >>> di.pushforward(f, di.AutoFiniteDiff(), np.array([1.0, 2.0]), (np.array([1.0, 0.0]),))[0].round(4)
    array([2., 0.])

Fallback (reverse-mode adapters): pullbacks over the output's basis give the
Jacobian once, then each tangent is a matrix-vector product.
"""

from __future__ import annotations

from ..backends.base import Impl
from ._core import FALLBACKS, context_values, prepare, run


def prepare_pushforward(f, backend, x, tangents, *contexts, y=None, strict=False):
    """Prepare ``pushforward`` for ``f`` at arrays like ``x`` and a batch like ``tangents``."""
    return prepare("pushforward", f, backend, x, contexts, tangents=tangents, y=y, strict=strict)


def pushforward(f, backend, x, tangents, *contexts, prep=None, out=None, y=None):
    """``J(x) @ t`` for each ``t`` in the tuple ``tangents``; a tuple shaped like f(x)."""
    if prep is not None and prep.fast == "pushforward" and out is None and y is None:
        fn = prep.impl.pushforward
        return fn(x, tangents, *context_values(contexts)) if contexts else fn(x, tangents)
    return run("pushforward", "pushforward", f, backend, x, contexts, prep, tangents=tangents, out=out, y=y)


def value_and_pushforward(f, backend, x, tangents, *contexts, prep=None, out=None, y=None):
    """``(f(x), pushforward(...))``."""
    if prep is not None and prep.fast == "pushforward" and out is None and y is None:
        fn = prep.impl.value_and_pushforward
        return fn(x, tangents, *context_values(contexts)) if contexts else fn(x, tangents)
    return run("pushforward", "value_and_pushforward", f, backend, x, contexts, prep,
               tangents=tangents, out=out, y=y, n_values=1)


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
