"""Derivative of ``f`` at a scalar ``x``: shaped like ``f(x)``.

    >>> import numpy as np, diffinterface as di
    >>> round(float(di.derivative(np.sin, di.AutoFiniteDiff(), 0.0)), 6)
    1.0

Fallback: one pushforward with tangent 1 (forward mode), or one pullback per
output element (reverse mode) seeded from the output shape learned at
preparation, so a prepared call spends no evaluation on learning it.
"""

from __future__ import annotations

from ..core import Operator, Call, Impl, call, prepare, prepared_call, register_operator
from ._docs import document
from ._seeded import impl_from_seeded

_OP = Operator(
    name="derivative",
    order=1,
    seeds=None,
    methods=("derivative", "value_and_derivative"),
    valued_returns=("value", "first"),
    plain_returns="first",
    scalar_x=True,
    two_argument=True,
    result_shape="y",
)


def prepare_derivative(f, backend, x, *contexts, y=None, strict=True, has_aux=False):
    return prepare(Call(_OP, f, backend, x, None, contexts, y, has_aux=has_aux), strict)


@prepared_call(_OP, 0)
def derivative(f, backend, x, *contexts, prep=None, out=None, y=None, has_aux=False):
    return call(Call(_OP, f, backend, x, None, contexts, y, 0, prep, out, has_aux))


@prepared_call(_OP, 1)
def value_and_derivative(f, backend, x, *contexts, prep=None, out=None, y=None, has_aux=False):
    return call(Call(_OP, f, backend, x, None, contexts, y, 1, prep, out, has_aux))


def _derivative_fallback(problem):
    if problem.mode("derivative") == "forward":
        seed = problem.basis((), problem.x_dtype)
        impl = problem.impl("pushforward", tangents=seed)
        pushforward, value_and_pushforward = impl.pushforward, impl.value_and_pushforward

        def value_and_derivative(x, *ctx):
            y, (dy,) = value_and_pushforward(x, seed, *ctx)
            return y, dy

        return Impl(
            value_and_derivative=value_and_derivative,
            derivative=lambda x, *ctx: pushforward(x, seed, *ctx)[0],
        )

    xp, spec = problem.xp, problem.spec
    rows = problem.seeded("pullback", problem.basis(spec.shape, spec.dtype))
    return impl_from_seeded(_OP, rows, lambda parts: xp.reshape(xp.stack(parts), spec.shape))


def _empty(answer):
    return Impl(
        derivative=lambda x, *ctx: answer.y_like(),
        value_and_derivative=lambda x, *ctx: (answer.value(x, ctx), answer.y_like()),
    )


register_operator(_OP, fallback=_derivative_fallback, empty=_empty)


document(
    _OP,
    prepare_derivative,
    derivative,
    value_and_derivative,
    summary="The derivative ``df/dx`` at a scalar ``x``, shaped like ``f(x)``.",
    x="float or 0-d array",
    result="array shaped like ``f(x)``",
    example="""\
>>> import numpy as np, diffinterface as di
>>> f, backend = (lambda x: np.stack([np.sin(x), x ** 2])), di.AutoFiniteDiff()
>>> prep = di.prepare_derivative(f, backend, 0.0)
>>> di.derivative(f, backend, 1.0, prep=prep).round(4)
array([0.5403, 2.    ])
""",
)
