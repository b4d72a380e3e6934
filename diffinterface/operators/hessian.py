"""Hessian of a scalar-valued ``f``: shape ``x.shape + x.shape``.

    >>> import numpy as np, diffinterface as di
    >>> f = lambda x: (x[0] * x[1]) ** 2
    >>> di.hessian(f, di.AutoFiniteDiff(), np.array([1.0, 2.0])).round(5)
    array([[8., 8.],
           [8., 2.]])

Fallback (see ``backends/second_order.py``): hvps over the basis of ``x``,
that is the outer backend's pushforwards (or pullbacks) of the inner
backend's gradient, in batches of the outer's ``max_batch`` chosen at
preparation. For ``value_gradient_and_hessian`` the outer differentiates
``[f(x), gradient]`` in one pass, so the gradient is not evaluated a second
time.
"""

from __future__ import annotations

from ..backends.base import Impl
from ..backends.second_order import cast, differentiated_problem, outer_mode
from ._core import FALLBACKS, prepare, require_scalar_output, run


def prepare_hessian(f, backend, x, *contexts, strict=False):
    """Prepare ``hessian`` for ``f`` at arrays like ``x``."""
    return prepare("hessian", f, backend, x, contexts, strict=strict)


def hessian(f, backend, x, *contexts, prep=None, out=None):
    """The Hessian of the scalar ``f`` at ``x``, shape ``x.shape + x.shape``."""
    return run("hessian", "hessian", f, backend, x, contexts, prep, out=out)


def value_gradient_and_hessian(f, backend, x, *contexts, prep=None, out=None):
    """``(f(x), gradient, hessian)``; ``out`` is ``(gradient buffer, hessian buffer)``, None entries allowed."""
    return run("hessian", "value_gradient_and_hessian", f, backend, x, contexts, prep, out=out, n_values=1)


def _batched(problem, seeds, operator):
    """``(products, value_and_products)``: the primitive ``operator`` of ``problem`` over ``seeds``.

    Seeds go in batches of at most the outer adapter's ``max_batch``, each
    prepared here once; only the first batch's pass gives the value.
    """
    step = problem.adapter.max_batch or len(seeds)
    batches = [seeds[i : i + step] for i in range(0, len(seeds), step)]
    impls = [problem.impl(operator, tangents=batch) for batch in batches]
    calls = [(getattr(impl, operator), batch) for impl, batch in zip(impls, batches)]
    first_with_value = getattr(impls[0], "value_and_" + operator)

    def products(x, *ctx):
        parts = []
        for call, batch in calls:
            parts.extend(call(x, batch, *ctx))
        return parts

    def value_and_products(x, *ctx):
        value, parts = first_with_value(x, batches[0], *ctx)
        parts = list(parts)
        for call, batch in calls[1:]:
            parts.extend(call(x, batch, *ctx))
        return value, parts

    return products, value_and_products


def _hessian_fallback(problem):
    spec = require_scalar_output(problem, "hessian")
    xp, x_shape, x_dtype, n = problem.xp, problem.x_shape, problem.x_dtype, problem.x_size
    shape = x_shape + x_shape
    gradient_problem = differentiated_problem(problem, "gradient")
    # d/dx [f, gradient] = [gradient, H]: value, gradient and H from one outer pass.
    augmented_problem = differentiated_problem(problem, "gradient", with_value=True)
    if outer_mode(gradient_problem.adapter) == "forward":
        operator, seeds = "pushforward", problem.basis(x_shape, x_dtype)
        augmented_seeds = seeds
    else:
        # H is symmetric: pullbacks of basis vectors give its rows; the augmented output
        # [f, gradient] takes cotangents with a 0 for f.
        operator, seeds = "pullback", problem.basis(x_shape, x_dtype)
        augmented_seeds = problem.basis((1 + n,), augmented_problem.spec.dtype)[1:]
    hvps = _batched(gradient_problem, seeds, operator)[0]
    augmented_hvps = _batched(augmented_problem, augmented_seeds, operator)[1]
    # Row i of the augmented products is [gradient . e_i, (H e_i)^T] (forward) or e_i^T H (reverse).
    skip_first = operator == "pushforward"

    def hessian(x, *ctx):
        return xp.reshape(xp.stack(hvps(x, *ctx)), shape)

    def value_gradient_and_hessian(x, *ctx):
        value_and_gradient, rows = augmented_hvps(x, *ctx)
        rows = xp.stack(rows)
        if skip_first:
            rows = rows[:, 1:]
        return (
            cast(value_and_gradient[0], spec.dtype),
            cast(xp.reshape(value_and_gradient[1:], x_shape), x_dtype),
            cast(xp.reshape(rows, shape), x_dtype),
        )

    return Impl(hessian=hessian, value_gradient_and_hessian=value_gradient_and_hessian)


FALLBACKS["hessian"] = _hessian_fallback
