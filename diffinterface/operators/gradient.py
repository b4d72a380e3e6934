"""Gradient of a scalar-valued ``f``: shaped like ``x``.

    >>> import numpy as np, diffinterface as di
    >>> di.gradient(lambda x: (x ** 2).sum(), di.AutoFiniteDiff(), np.array([1.0, 2.0])).round(4)
    array([2., 4.])

Fallback: one pullback with cotangent 1 (reverse mode), or pushforwards over
the basis of ``x`` in batches (forward mode).
"""

from __future__ import annotations

from ..core import Operator, Call, Impl, call, prepare, prepared_call, register_operator
from ..core import require_scalar_output
from ._docs import document
from ._seeded import impl_from_seeded

_OP = Operator(
    name="gradient",
    order=1,
    seeds=None,
    methods=("gradient", "value_and_gradient"),
    valued_returns=("value", "first"),
    plain_returns="first",
    scalar_y=True,
    fallback_mode="reverse",
    for_array_outputs="jacobian",
)


def prepare_gradient(f, backend, x, *contexts, strict=True, has_aux=False):
    return prepare(Call(_OP, f, backend, x, None, contexts, has_aux=has_aux), strict)


@prepared_call(_OP, 0)
def gradient(f, backend, x, *contexts, prep=None, out=None, has_aux=False):
    return call(Call(_OP, f, backend, x, None, contexts, None, 0, prep, out, has_aux))


@prepared_call(_OP, 1)
def value_and_gradient(f, backend, x, *contexts, prep=None, out=None, has_aux=False):
    return call(Call(_OP, f, backend, x, None, contexts, None, 1, prep, out, has_aux))


def _gradient_fallback(problem):
    spec = require_scalar_output(problem, "gradient")
    if problem.mode("gradient") == "reverse":
        seed = problem.basis((), spec.dtype)
        impl = problem.impl("pullback", tangents=seed)
        pullback, value_and_pullback = impl.pullback, impl.value_and_pullback

        def value_and_gradient(x, *ctx):
            y, (g,) = value_and_pullback(x, seed, *ctx)
            return y, g

        return Impl(
            value_and_gradient=value_and_gradient,
            gradient=lambda x, *ctx: pullback(x, seed, *ctx)[0],
        )

    xp, shape = problem.xp, problem.x_shape
    columns = problem.seeded("pushforward", problem.basis(shape, problem.x_dtype))
    return impl_from_seeded(_OP, columns, lambda parts: xp.reshape(xp.stack(parts), shape))


def _empty(answer):
    return Impl(
        gradient=lambda x, *ctx: answer.x_like(),
        value_and_gradient=lambda x, *ctx: (answer.value(x, ctx), answer.x_like()),
    )


def _flat_x(plan, gradient, value_and_gradient, problem):
    ravel, unravel = plan.ravel, plan.unravel

    def value_and_tree_gradient(x, *ctx):
        value, g = value_and_gradient(ravel(x), *ctx)
        return value, unravel(g)

    return (lambda x, *ctx: unravel(gradient(ravel(x), *ctx))), value_and_tree_gradient


register_operator(_OP, fallback=_gradient_fallback, empty=_empty, flat_x=_flat_x)


document(
    _OP,
    prepare_gradient,
    gradient,
    value_and_gradient,
    summary="The gradient of a scalar-valued ``f`` at ``x``, shaped like ``x``.",
    x="array or float",
    result="array shaped like ``x``",
    example="""\
>>> import numpy as np, diffinterface as di
>>> f, backend = (lambda x: (x ** 2).sum()), di.AutoFiniteDiff()
>>> prep = di.prepare_gradient(f, backend, np.zeros(3))
>>> di.gradient(f, backend, np.array([1.0, 2.0, 3.0]), prep=prep).round(4)
array([2., 4., 6.])
>>> value, grad = di.value_and_gradient(f, backend, np.ones(3), prep=prep)
>>> float(value), grad.round(4)
(3.0, array([2., 2., 2.]))
""",
)
