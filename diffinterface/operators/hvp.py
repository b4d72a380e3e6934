"""Hessian-vector products of a scalar-valued ``f``: ``H(x) @ t`` for each tangent ``t``.

    >>> import numpy as np, diffinterface as di
    >>> f = lambda x: (x[0] * x[1]) ** 2
    >>> di.hvp(f, di.AutoFiniteDiff(), np.array([1.0, 2.0]), (np.array([1.0, 0.0]),))[0].round(5)
    array([8., 8.])

Results form a tuple shaped like ``x``, one per tangent. Fallback (see
``operators/_second_order.py``): the outer backend's pushforward of the inner
backend's gradient (forward-over-reverse by default), or its pullback when the
outer works in reverse mode. ``gradient_and_hvp`` takes the gradient from that
same pass: no second gradient evaluation.
"""

from __future__ import annotations

from ..core import Operator, Call, Impl, call, prepare, prepared_call, register_operator
from ..core import require_scalar_output
from ._docs import document, document_same_point
from ._second_order import differentiated_problem, outer_mode

_OP = Operator(
    name="hvp",
    order=2,
    seeds="tangents",
    methods=("hvp", "gradient_and_hvp"),
    valued_returns=("first", "second"),
    plain_returns="second",
    scalar_y=True,
    fallback_mode="reverse",
)


def prepare_hvp(f, backend, x, tangents, *contexts, strict=True, has_aux=False):
    return prepare(Call(_OP, f, backend, x, tangents, contexts, has_aux=has_aux), strict)


def prepare_hvp_same_point(f, backend, x, tangents, *contexts, strict=True):
    return prepare(Call(_OP, f, backend, x, tangents, contexts, same_point=True), strict)


@prepared_call(_OP, 0)
def hvp(f, backend, x, tangents, *contexts, prep=None, out=None, has_aux=False):
    return call(Call(_OP, f, backend, x, tangents, contexts, None, 0, prep, out, has_aux))


@prepared_call(_OP, 1)
def gradient_and_hvp(f, backend, x, tangents, *contexts, prep=None, out=None, has_aux=False):
    return call(Call(_OP, f, backend, x, tangents, contexts, None, 1, prep, out, has_aux))


def _hvp_fallback(problem):
    require_scalar_output(problem, "hvp")
    gradient_problem = differentiated_problem(problem, "gradient")
    if outer_mode(gradient_problem.adapter) == "forward":
        impl = gradient_problem.impl("pushforward", tangents=problem.tangents)
        return Impl(hvp=impl.pushforward, gradient_and_hvp=impl.value_and_pushforward)
    # H is symmetric, so the pullback t @ H of the gradient is H @ t.
    impl = gradient_problem.impl("pullback", tangents=problem.tangents)
    return Impl(hvp=impl.pullback, gradient_and_hvp=impl.value_and_pullback)


def _empty(answer):
    return answer.per_seed(
        _OP, answer.x_like, first=lambda x, ctx: answer.x_like()
    )  # the gradient, then products


def _flat_x(plan, hvp, gradient_and_hvp, problem):
    """Tangents like a pytree x, raveled; the gradient and the products unraveled."""
    ravel, unravel = plan.ravel, plan.unravel

    def gradient_and_tree_hvp(x, tangents, *ctx):
        g, products = gradient_and_hvp(ravel(x), tuple(map(ravel, tangents)), *ctx)
        return unravel(g), tuple(map(unravel, products))

    return (
        lambda x, tangents, *ctx: tuple(
            map(unravel, hvp(ravel(x), tuple(map(ravel, tangents)), *ctx))
        ),
        gradient_and_tree_hvp,
    )


register_operator(_OP, fallback=_hvp_fallback, empty=_empty, flat_x=_flat_x)


document(
    _OP,
    prepare_hvp,
    hvp,
    gradient_and_hvp,
    summary="Hessian-vector products ``H(x) @ t`` of a scalar-valued ``f``, one per tangent.",
    x="array or float",
    result="tuple of arrays, one per tangent, each shaped like ``x``",
    valued_summary="The gradient and the Hessian-vector products, from the same pass (no second gradient).",
    example="""\
>>> import numpy as np, diffinterface as di
>>> f, backend = (lambda x: (x[0] * x[1]) ** 2), di.AutoFiniteDiff()
>>> x, tangents = np.array([1.0, 2.0]), (np.array([1.0, 0.0]),)
>>> prep = di.prepare_hvp(f, backend, x, tangents)
>>> di.hvp(f, backend, x, tangents, prep=prep)[0].round(5)
array([8., 8.])
""",
)

document_same_point(
    _OP,
    prepare_hvp_same_point,
    example="""\
>>> import numpy as np, diffinterface as di
>>> f, backend, x = (lambda x: (x ** 3).sum()), di.AutoFiniteDiff(), np.array([1.0, 2.0])
>>> prep = di.prepare_hvp_same_point(f, backend, x, (np.zeros(2),))
>>> di.hvp(f, backend, x, (np.array([1.0, 1.0]),), prep=prep)[0].round(3)
array([ 6., 12.])
""",
)
