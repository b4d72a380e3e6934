"""Gradient of a scalar-valued ``f``: shaped like ``x``.

    >>> import numpy as np, diffinterface as di
    >>> di.gradient(lambda x: (x ** 2).sum(), di.AutoFiniteDiff(), np.array([1.0, 2.0])).round(4)
    array([2., 4.])

Fallback: one pullback with cotangent 1 (reverse mode), or pushforwards over
the basis of ``x`` in batches (forward mode).
"""

from __future__ import annotations

from ..backends.base import Impl
from ._core import FALLBACKS, context_values, prepare, require_scalar_output, run


def prepare_gradient(f, backend, x, *contexts, strict=False):
    """Prepare ``gradient`` for ``f`` at arrays like ``x``."""
    return prepare("gradient", f, backend, x, contexts, strict=strict)


def gradient(f, backend, x, *contexts, prep=None, out=None):
    """The gradient of the scalar ``f`` at ``x``, shaped like ``x``."""
    if prep is not None and prep.fast == "gradient" and out is None:
        fn = prep.impl.gradient
        return fn(x, *context_values(contexts)) if contexts else fn(x)
    return run("gradient", "gradient", f, backend, x, contexts, prep, out=out)


def value_and_gradient(f, backend, x, *contexts, prep=None, out=None):
    """``(f(x), gradient(...))``."""
    if prep is not None and prep.fast == "gradient" and out is None:
        fn = prep.impl.value_and_gradient
        return fn(x, *context_values(contexts)) if contexts else fn(x)
    return run("gradient", "value_and_gradient", f, backend, x, contexts, prep, out=out, n_values=1)


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
