"""Same-point recipes for autograd (``prepare_pullback_same_point``, ``prepare_hvp_same_point``).

autograd's ``make_vjp`` records f's pass at x once and returns a function
that runs the backward pass for any cotangent: at preparation, f (for hvp,
its gradient) is recorded at x; each call runs only the backward passes.
A pushforward re-evaluates f in forward mode, so it keeps the ordinary recipe.
"""

from __future__ import annotations

import autograd
import numpy as np

from ...core import OPERATORS, Impl


def prepare_same_point(operator, problem, vjp_of, bound, breaks, to_x_dtype):
    """The same-point :class:`~diffinterface.core.Impl` for ``problem`` (the adapter's helpers given), or None."""
    if problem.tree is not None or operator not in ("pullback", "hvp"):
        return None
    fn = bound(problem.f, problem.ctx)
    if operator == "hvp":
        vjp, first = vjp_of(autograd.grad(fn), problem.x, None)
    else:
        vjp, first = vjp_of(fn, problem.x, breaks(problem))
    x_dtype = np.dtype(problem.x_dtype)

    def products(seeds):
        return tuple(to_x_dtype(vjp(s), x_dtype) for s in seeds)

    plain, valued = OPERATORS[operator].methods
    return Impl(
        **{
            plain: lambda x, seeds, *ctx: products(seeds),
            valued: lambda x, seeds, *ctx: (np.array(first), products(seeds)),
        }
    )
