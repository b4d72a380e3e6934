"""Derivative of ``f`` at a scalar ``x``: shaped like ``f(x)``.

    >>> import numpy as np, diffinterface as di
    >>> float(di.derivative(np.sin, di.AutoFiniteDiff(), 0.0))
    1.0

Fallback: one pushforward with tangent 1 (forward mode), or one pullback per
output element (reverse mode) seeded from the output shape learned at
preparation, so a prepared call spends no evaluation on learning it.
"""

from __future__ import annotations

from ..backends.base import Impl
from ._core import FALLBACKS, context_values, prepare, run


def prepare_derivative(f, backend, x, *contexts, y=None, strict=False):
    """Prepare ``derivative`` for ``f`` at a scalar like ``x``."""
    return prepare("derivative", f, backend, x, contexts, y=y, strict=strict, scalar_x=True)


def derivative(f, backend, x, *contexts, prep=None, out=None, y=None):
    """``df/dx`` at the scalar ``x``, shaped like ``f(x)``."""
    if prep is not None and prep.fast == "derivative" and out is None and y is None:
        fn = prep.impl.derivative
        return fn(x, *context_values(contexts)) if contexts else fn(x)
    return run("derivative", "derivative", f, backend, x, contexts, prep, out=out, y=y, scalar_x=True)


def value_and_derivative(f, backend, x, *contexts, prep=None, out=None, y=None):
    """``(f(x), derivative(...))``."""
    if prep is not None and prep.fast == "derivative" and out is None and y is None:
        fn = prep.impl.value_and_derivative
        return fn(x, *context_values(contexts)) if contexts else fn(x)
    return run("derivative", "value_and_derivative", f, backend, x, contexts, prep,
               out=out, y=y, n_values=1, scalar_x=True)


def _derivative_fallback(problem):
    if problem.mode("derivative") == "forward":
        seed = problem.basis((), problem.x_dtype)
        impl = problem.impl("pushforward", tangents=seed)
        pushforward, value_and_pushforward = impl.pushforward, impl.value_and_pushforward

        def value_and_derivative(x, *ctx):
            y, (dy,) = value_and_pushforward(x, seed, *ctx)
            return y, dy

        return Impl(value_and_derivative=value_and_derivative, derivative=lambda x, *ctx: pushforward(x, seed, *ctx)[0])

    xp, spec = problem.xp, problem.spec
    rows = problem.seeded("pullback", problem.basis(spec.shape, spec.dtype))

    def value_and_derivative(x, *ctx):
        y, parts = rows.value_and_results(x, *ctx)
        return y, xp.reshape(xp.stack(parts), spec.shape)

    return Impl(
        value_and_derivative=value_and_derivative,
        derivative=lambda x, *ctx: xp.reshape(xp.stack(rows.results(x, *ctx)), spec.shape),
    )


FALLBACKS["derivative"] = _derivative_fallback
