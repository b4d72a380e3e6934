"""Second-order fallbacks' shared step: the outer backend differentiates the inner's first derivative.

A problem's adapter names its ``outer`` and ``inner`` adapters (a plain
adapter is both; ``SecondOrder`` sets them, see
``diffinterface/wrappers/second_order.py``). :func:`differentiated_problem`
builds the problem the outer differentiates: ``f`` replaced by the inner's
gradient (for hvp and hessian) or derivative (for second_derivative).

Which pairs work:

- an outer whose adapter has ``framework = None`` (AutoFiniteDiff, the zero
  backends) only evaluates functions at concrete arrays, so it differentiates
  any inner's prepared first derivative;
- an outer and inner of one framework: the inner hands over its first
  derivative as a function that framework can trace again (the adapter hooks
  ``differentiable_value_and_gradient`` / ``_derivative``);
- an outer and inner of different frameworks: the adapter's
  ``bridge_first_derivative`` (``SecondOrder`` has DifferentiateWith's) hands
  the inner's first derivative over as a function of the outer's arrays whose
  derivatives are the inner's ``gradient_and_hvp`` /
  ``value_derivative_and_second_derivative``; without one, an
  :class:`~diffinterface.UnsupportedError` at preparation names both backends.
"""

from __future__ import annotations

import numpy as np

from ..families import array_namespace
from ..core import Problem, Spec
from ..errors import UnsupportedError


def outer_mode(adapter):
    """The mode the outer works in: its own, or forward (over the inner) when it does both."""
    outer = adapter.outer
    if outer.capabilities.mode != "both":
        return outer.capabilities.mode
    return outer.backend.mode or "forward"


def _describe_pair(outer, inner):
    if outer.backend == inner.backend:
        return repr(outer.backend)
    return f"SecondOrder(outer={outer.backend!r}, inner={inner.backend!r})"


def _first_derivative(problem, outer, inner, operator, batched=False):
    """``(value_and_<operator>, <operator> or None)`` of the inner, as functions ``outer`` can differentiate.

    The plain one is given when the inner is prepared (an outer that only
    evaluates): the outer then needs no value, and the inner computes none.
    With ``batched`` (the outer evaluates through ``batched_f``) both are
    prepared at their first call, if any.
    """
    inner_problem = problem.replace(adapter=inner)
    if outer.capabilities.framework is None:
        # The outer only evaluates at concrete arrays of the user's family: any prepared inner
        # works.
        if batched:
            return _prepared_at_first_use(inner_problem, operator)
        impl = inner_problem.impl(operator)
        return getattr(impl, "value_and_" + operator), getattr(impl, operator)
    pair = _describe_pair(outer, inner)
    # an inner computing in the namespace of x's family (traceable_families) hands the outer of that
    # family's framework a function it traces, as an inner of its own framework does, where it can
    if (
        problem.family == outer.capabilities.framework
        and problem.family in inner.capabilities.traceable_families
    ):
        traced = inner.differentiable_first_derivative(operator, inner_problem)
        if traced is not None:
            return traced, None
    if inner.capabilities.framework != outer.capabilities.framework:
        # The outer traces its own framework only: a wrapper that can bridge frameworks
        # (SecondOrder, through DifferentiateWith's rules) hands the inner's first derivative over
        # as a function of the outer's arrays whose derivatives are the inner's second-order
        # operators.
        bridged = problem.adapter.bridge_first_derivative(
            inner_problem, inner.capabilities.framework, operator
        )
        if bridged is not None:
            return bridged, None
        computed_by = inner.capabilities.framework or "numpy, outside any AD framework"
        raise UnsupportedError(
            f"backend: {pair} cannot work: the outer backend traces {outer.capabilities.framework} computations "
            f"and cannot differentiate the inner's {operator}, computed by {computed_by}. "
            "Use an outer and inner of the same framework, or AutoFiniteDiff() as the outer backend."
        )
    function = inner.differentiable_first_derivative(operator, inner_problem)
    if function is None:
        raise UnsupportedError(
            f"backend: {pair} cannot work: the inner adapter {type(inner).__name__} does not provide its "
            f"{operator} as a function {outer.capabilities.framework} can differentiate again "
            f"(differentiable_value_and_{operator}). Use AutoFiniteDiff() as the outer backend."
        )
    return function, None


def _prepared_at_first_use(problem, operator):
    """``(value_and_<operator>, <operator>)`` of ``problem``, prepared when one of them is first called.

    For an inner that ``batches_gradients``: an evaluating outer that asks for
    its formula and all its points' gradients compiled into one call
    (``batched_f``, below) never calls these, and preparing them compiles (JAX), so the preparation compiles
    the batched function only. The batched preparation traces the same
    gradient, so an f the inner cannot differentiate is still refused at
    preparation.
    """
    prepared = []

    def impl():
        if not prepared:
            prepared.append(problem.impl(operator))
        return prepared[0]

    value_and_name = "value_and_" + operator
    return (
        lambda x, *ctx: getattr(impl(), value_and_name)(x, *ctx),
        lambda x, *ctx: getattr(impl(), operator)(x, *ctx),
    )


def _common_dtype(a, b):
    try:
        return np.result_type(a, b).name
    except TypeError:  # a dtype numpy does not know (bfloat16): keep x's
        return b


def _concat(xp, parts):
    concatenate = getattr(xp, "concatenate", None) or xp.concat
    return concatenate(parts)


def differentiated_problem(problem, operator, *, with_value=False):
    """The problem the outer differentiates: ``problem.f`` replaced by the inner's first derivative.

    ``operator`` is "gradient" (for hvp and hessian) or "derivative" (for
    second_derivative). Without ``with_value`` the new function is that
    derivative, shaped like x (gradient) or like f(x) (derivative). With it,
    the function also carries f(x), so one outer pass gives value, first and
    second derivatives: ``[f(x), *gradient.ravel()]`` (flat, length 1 + x.size)
    or ``stack([f(x), derivative])`` (shape ``(2, *f(x).shape)``).
    Raises UnsupportedError when the outer cannot differentiate the inner.
    """
    outer, inner = problem.adapter.outer, problem.adapter.inner
    # An evaluating outer may ask for the gradients at all its points in one call.
    batched = (
        outer.capabilities.batches_points
        and inner.capabilities.batches_gradients
        and operator == "gradient"
        and not with_value
        and problem.tree is None
    )
    value_and_first, plain_first = _first_derivative(problem, outer, inner, operator, batched)
    if operator == "gradient":
        first_spec = Spec(problem.x_shape, problem.x_dtype)
    else:
        first_spec = problem.spec
    if not with_value and plain_first is not None:
        first = plain_first
        spec = first_spec
    elif not with_value:

        def first(x, *ctx):
            return value_and_first(x, *ctx)[1]

        spec = first_spec
    elif operator == "gradient":

        def first(x, *ctx):
            value, gradient = value_and_first(x, *ctx)
            xp = array_namespace(gradient)
            return _concat(xp, (xp.reshape(value, (1,)), xp.reshape(gradient, (-1,))))

        spec = Spec((1 + problem.x_size,), _common_dtype(problem.spec.dtype, problem.x_dtype))
    else:

        def first(x, *ctx):
            value, derivative = value_and_first(x, *ctx)
            return array_namespace(derivative).stack((value, derivative))

        spec = Spec((2, *first_spec.shape), first_spec.dtype)
    batched_f = None
    if batched:
        inner_problem = problem.replace(adapter=inner)

        def batched_f(tangents, formulas):
            return inner.prepare_batched_gradient(
                inner_problem.replace(tangents=tangents), formulas
            )

    return Problem(
        outer,
        first,
        problem.x,
        None,
        problem.contexts,
        None,
        strict=problem.strict,
        spec=spec,
        batched_f=batched_f,
        constant_output_is_zero=True,
    )
