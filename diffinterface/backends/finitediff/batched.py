"""AutoFiniteDiff's pushforward of an inner backend's gradient, computed whole by that inner.

As ``SecondOrder``'s outer, finite differences evaluate the inner's gradient at
``x +- h_i t_i`` for every tangent and difference the results. An inner that
evaluates its gradient at a stack of points in one call (``batches_gradients``,
``prepare_batched_gradient`` in core/adapter.py) is handed the whole formula
(steps, points, gradients, differences), written here once against an array
namespace ``xp``, and compiles it as one function of ``(x, tangents, *ctx)``.
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


def batched_pushforward(adapter, problem):
    """The pushforward of ``problem.f`` (an inner's gradient) compiled whole by the inner, or None.

    None when the problem offers no ``batched_f`` (its f is not such a
    gradient), for two-argument f, for a method that is not central or forward
    differences, with workers (the points go to them), or when the inner
    declines.
    """
    if problem.batched_f is None or problem.y is not None or not adapter.batches_points:
        return None
    k = len(problem.tangents)
    step = traceable_step_rule(*adapter._entry_rel_abs(problem), np.asarray(problem.x).dtype)
    if adapter.method == "central":
        formulas = {"pushforward": (2 * k, _central(step, False)),
                    "value_and_pushforward": (2 * k + 1, _central(step, True))}
    else:
        forward = (k + 1, _forward(step))
        formulas = {"pushforward": forward, "value_and_pushforward": forward}
    return problem.batched_f(problem.tangents, formulas)


def traceable_step_rule(rel, absolute, dtype):
    """``step(xp, x, t)``: the step of :meth:`FiniteDiffSteps._step_rule` along ``t`` at ``x``, in ``xp``'s arrays.

    ``max(rel * max|x_i|, abs) / max|t_i|`` over the support of ``t`` (``abs``
    when ``t`` is zero), with ``rel`` and ``abs`` scalars, or arrays of one
    value per entry (a tree's leaves of several dtypes). Written with
    array-namespace functions only, without host conversions, so that a
    framework can trace it; the result is a 0-d array of x's dtype.
    ``max_i(rel * |x_i|)`` is ``rel * max_i |x_i|`` exactly (rounding is
    monotonic), so scalar steps equal the host rule's to the last bit.

    >>> import numpy as np
    >>> step = traceable_step_rule(1e-5, 1e-5, np.dtype("float64"))
    >>> float(step(np, np.array([2.0, -4.0]), np.array([0.0, 2.0])))  # max(1e-5 * 4, 1e-5) / 2
    2e-05
    """
    per_entry = not np.isscalar(rel)
    if per_entry:
        rel, absolute = np.asarray(rel, dtype), np.asarray(absolute, dtype)
        resting = float(np.max(absolute))
    else:
        resting = absolute

    def step(xp, x, t):
        t_abs = xp.abs(t)
        support = t_abs != 0
        t_max = xp.max(t_abs)
        scale = xp.max(xp.where(support, rel * xp.abs(x), 0))
        floor = xp.max(xp.where(support, absolute, 0)) if per_entry else absolute
        moving = xp.maximum(scale, floor) / xp.where(t_max != 0, t_max, 1)
        return xp.where(t_max != 0, moving, resting)

    return step


def _central(step, valued):
    """``build(xp, gradients) -> fn(x, tangents) -> (gradient at x or None, products stacked)``.

    The points are ``[x + h_i t_i..., x - h_i t_i...]``, after ``x`` when ``valued``.
    """

    def build(xp, gradients):
        def central_differences(x, tangents):
            k, first = len(tangents), 1 if valued else 0
            steps = [step(xp, x, t) for t in tangents]
            moves = [h * t for h, t in zip(steps, tangents)]
            points = [x + move for move in moves] + [x - move for move in moves]
            values = gradients(xp.stack([x, *points] if valued else points))
            products = [(values[first + i] - values[first + k + i]) / (2 * h) for i, h in enumerate(steps)]
            return (values[0] if valued else None), xp.stack(products)

        return central_differences

    return build


def _forward(step):
    """``build(xp, gradients) -> fn(x, tangents) -> (gradient at x, products stacked)``: points ``[x, x + h_i t_i...]``."""

    def build(xp, gradients):
        def forward_differences(x, tangents):
            steps = [step(xp, x, t) for t in tangents]
            values = gradients(xp.stack([x, *(x + h * t for h, t in zip(steps, tangents))]))
            return values[0], xp.stack([(values[1 + i] - values[0]) / h for i, h in enumerate(steps)])

        return forward_differences

    return build
