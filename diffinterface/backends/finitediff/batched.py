"""AutoFiniteDiff's pushforward of an inner backend's gradient, computed whole by that inner.

As ``SecondOrder``'s outer, finite differences evaluate the inner's gradient at
``x +- h_i t_i`` for every tangent and difference the results. An inner that
evaluates its gradient at a stack of points in one call (``batches_gradients``,
``prepare_batched_gradient`` in core/adapter.py) is handed the whole formula
(steps, points, gradients, differences), written here once against an array
namespace ``xp`` with the gradients mapped over the tangents, and compiles it
as one function of ``(x, tangents, *ctx)``.
A prepared call then makes one call into the inner's framework, with no host
arithmetic between the gradient evaluations: the steps are computed inside,
from the same rule as :meth:`FiniteDiffSteps._step_rule`. Results equal the
per-point differences up to the rounding of the compiled arithmetic (a
compiler may fuse the differences with the gradients' last operations, or
divide by the step through its reciprocal), which a difference quotient
amplifies by ``1 / h`` like any rounding of the gradients.
"""

from __future__ import annotations

import numpy as np

from ...core import Impl
from .steps import traceable_step_rule


def batched_pushforward(adapter, problem):
    """The pushforward of ``problem.f`` (an inner's gradient) compiled whole by the inner, or None.

    None when the problem offers no ``batched_f`` (its f is not such a
    gradient), for two-argument f, for a method that is not central or forward
    differences, with workers (the points go to them), or when the inner
    declines.
    """
    if (
        problem.batched_f is None
        or problem.y is not None
        or not adapter.capabilities.batches_points
    ):
        return None
    steps = traceable_step_rule(*adapter._entry_rel_abs(problem), np.asarray(problem.x).dtype)
    # One formula serves both methods: compiling a second costs more than a first gradient of f (its
    # reductions and differences are kernels of their own), where the gradient at x costs one point
    # more. (gradients per tangent, formula)
    formula = (2, _central(steps)) if adapter.method == "central" else (1, _forward(steps))
    impl = problem.batched_f(problem.tangents, {"value_and_pushforward": formula})
    if impl is None:
        return None
    value_and_pushforward = impl.value_and_pushforward

    def pushforward(x, tangents, *ctx):
        return value_and_pushforward(x, tangents, *ctx)[1]

    return Impl(pushforward=pushforward, value_and_pushforward=value_and_pushforward)


def _per_tangent(xp, steps, tangents):
    """``steps`` (one per tangent) shaped to multiply ``tangents``, stacked along a first axis."""
    return xp.reshape(steps, (steps.shape[0],) + (1,) * (tangents.ndim - 1))


def _central(steps_along):
    """``build(xp, gradient, mapped) -> fn(x, tangents) -> (gradient at x, products stacked)``.

    Each product is ``(g(x + h_i t_i) - g(x - h_i t_i)) / (2 h_i)``, the differences mapped over
    the tangents (``mapped(fn, moves)``, fn of one tangent's move).
    """

    def build(xp, gradient, mapped):
        def central_differences(x, tangents):
            x, stacked = xp.asarray(x), xp.stack(tangents)  # x may be a Python float
            h = _per_tangent(xp, steps_along(xp, x, stacked), stacked)
            # the gradients mapped, their differences outside: the same arithmetic whatever the
            # map's batches
            plus, minus = mapped(lambda move: (gradient(x + move), gradient(x - move)), h * stacked)
            return gradient(x), (plus - minus) / (2 * h)

        return central_differences

    return build


def _forward(steps_along):
    """``build(xp, gradient, mapped) -> fn(x, tangents) -> (gradient at x, products stacked)``."""

    def build(xp, gradient, mapped):
        def forward_differences(x, tangents):
            x, stacked = xp.asarray(x), xp.stack(tangents)  # x may be a Python float
            h = _per_tangent(xp, steps_along(xp, x, stacked), stacked)
            at_x = gradient(x)
            return at_x, (mapped(lambda move: gradient(x + move), h * stacked) - at_x) / h

        return forward_differences

    return build
