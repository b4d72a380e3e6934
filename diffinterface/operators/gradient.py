"""Gradient of a scalar-valued ``f``: shaped like ``x``.

    >>> import numpy as np, diffinterface as di
    >>> di.gradient(lambda x: (x ** 2).sum(), di.AutoFiniteDiff(), np.array([1.0, 2.0])).round(4)
    array([2., 4.])

Fallback: one pullback with cotangent 1 (reverse mode), or pushforwards over
the basis of ``x`` in batches (forward mode).
"""

from __future__ import annotations

from ..core import FALLBACKS, OPERATORS, Impl, call, prepare, require_scalar_output

_OP = OPERATORS["gradient"]


def prepare_gradient(f, backend, x, *contexts, strict=True):
    """Prepare ``gradient`` for ``f`` at arrays like ``x``."""
    return prepare(_OP, f, backend, x, None, contexts, None, strict)


def gradient(f, backend, x, *contexts, prep=None, out=None):
    """The gradient of the scalar ``f`` at ``x``, shaped like ``x``."""
    return call(_OP, 0, f, backend, x, None, contexts, prep, out, None)


def value_and_gradient(f, backend, x, *contexts, prep=None, out=None):
    """``(f(x), gradient(...))``."""
    return call(_OP, 1, f, backend, x, None, contexts, prep, out, None)


def _gradient_fallback(problem):
    spec = require_scalar_output(problem, "gradient")
    if problem.mode("gradient") == "reverse":
        seed = problem.basis((), spec.dtype)
        impl = problem.impl("pullback", tangents=seed)
        pullback, value_and_pullback = impl.pullback, impl.value_and_pullback

        def value_and_gradient(x, *ctx):
            y, (g,) = value_and_pullback(x, seed, *ctx)
            return y, g

        return Impl(value_and_gradient=value_and_gradient, gradient=lambda x, *ctx: pullback(x, seed, *ctx)[0])

    xp, shape = problem.xp, problem.x_shape
    columns = problem.seeded("pushforward", problem.basis(shape, problem.x_dtype))

    def value_and_gradient(x, *ctx):
        y, parts = columns.value_and_results(x, *ctx)
        return y, xp.reshape(xp.stack(parts), shape)

    return Impl(
        value_and_gradient=value_and_gradient,
        gradient=lambda x, *ctx: xp.reshape(xp.stack(columns.results(x, *ctx)), shape),
    )


FALLBACKS["gradient"] = _gradient_fallback
