"""Same-point recipes for JAX (``prepare_pushforward_same_point`` and friends, ``core/same_point.py``).

At preparation, ``jax.linearize`` (pushforward; hvp, linearizing the
gradient) or ``jax.vjp`` (pullback) runs f once at x and keeps the residuals;
each call applies the linear map to the stacked seeds in one compiled,
vmapped function, so f's forward (and, for hvp, backward) pass is not run again.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

from ...core import OPERATORS, Impl
from .calls import _owned, _unstacked, _wrap, _x64_scope
from .transforms import _like


def _linear_map(operator, g, x):
    """``(first, linear)``: f(x) (the gradient for hvp) and the map of one seed, from one pass at x."""
    if operator == "pushforward":
        return jax.linearize(g, x)
    if operator == "hvp":
        return jax.linearize(jax.grad(g), x)
    y, vjp = jax.vjp(g, x)
    return y, (lambda c: vjp(c)[0])


def prepare_same_point(adapter, operator, problem):
    """The same-point :class:`~diffinterface.core.Impl` of ``operator`` for ``problem`` (an array x), or None."""
    if problem.tree is not None or operator not in ("pushforward", "pullback", "hvp"):
        return None
    f, ctx, numpy_family = problem.f, problem.ctx, problem.family == "numpy"
    wide = adapter._wide(problem)
    with _x64_scope(wide):
        x = jnp.asarray(problem.x)
        first, linear = _linear_map(operator, lambda x: f(x, *ctx), x)
        like = first if operator == "pullback" else x
        one = jax.jit(lambda seed: linear(_like(seed, like)))
        products = jax.jit(jax.vmap(lambda seed: linear(_like(seed, like))))
        first = _owned(first) if numpy_family else first
    k = len(problem.tangents)

    if k == 1:  # the common call of a Krylov solver: no stacking

        def stacked_products(seeds):
            if len(seeds) != 1:
                return batched_products(seeds)
            product = one(seeds[0])
            return (_owned(product),) if numpy_family else (product,)

    else:

        def stacked_products(seeds):
            return batched_products(seeds)

    if numpy_family:

        def batched_products(seeds):
            return _unstacked(_owned(products(np.stack(seeds))))

    else:

        def batched_products(seeds):
            stacked = products(jnp.stack(seeds))
            return tuple(stacked[i] for i in range(len(seeds)))

    run = _wrap(stacked_products, None, wide)
    plain, valued = OPERATORS[operator].methods
    fresh = np.array if numpy_family else (lambda a: a)  # numpy results are the caller's to write into
    return Impl(**{plain: lambda x, seeds, *ctx: run(seeds),
                   valued: lambda x, seeds, *ctx: (fresh(first), run(seeds))})
