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


def traceable_step_rule(rel, absolute, dtype):
    """``steps(xp, x, tangents)``: the step of :meth:`FiniteDiffSteps._step_rule` along each tangent, in ``xp``.

    ``tangents`` is stacked along a first axis; the result holds one step per
    tangent, ``max(rel * max|x_i|, abs) / max|t_i|`` over the support of ``t``
    (``abs`` when ``t`` is zero), with ``rel`` and ``abs`` scalars, or arrays of
    one value per entry (a tree's leaves of several dtypes). Written with
    array-namespace functions only, without host conversions and whatever the
    number of tangents, so that a framework traces it once; the steps have x's
    dtype. ``max_i(rel * |x_i|)`` is ``rel * max_i |x_i|`` exactly (rounding is
    monotonic), so scalar steps equal the host rule's to the last bit.

    >>> import numpy as np
    >>> steps = traceable_step_rule(1e-5, 1e-5, np.dtype("float64"))
    >>> steps(np, np.array([2.0, -4.0]), np.array([[0.0, 2.0], [0.0, 0.0]])).tolist()  # max(1e-5 * 4, 1e-5) / 2
    [2e-05, 1e-05]
    """
    per_entry = not np.isscalar(rel)
    if per_entry:
        rel, absolute = np.asarray(rel, dtype), np.asarray(absolute, dtype)
        resting = float(np.max(absolute))
    else:
        resting = absolute

    def steps(xp, x, tangents):
        t_abs = xp.abs(tangents)
        support = t_abs != 0
        # the maxima in one reduction (each costs a compiled kernel): |t|, rel |x| and abs over t's
        # support
        candidates = [t_abs, xp.where(support, rel * xp.abs(x), 0)]
        if per_entry:
            candidates.append(xp.where(support, absolute, 0))
        stacked = xp.stack([xp.reshape(c, (c.shape[0], -1)) for c in candidates])
        maxima = xp.max(stacked, axis=2)
        t_max, scale = maxima[0], maxima[1]
        floor = maxima[2] if per_entry else absolute
        moving = xp.maximum(scale, floor) / xp.where(t_max != 0, t_max, 1)
        return xp.where(t_max != 0, moving, resting)

    return steps


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
