"""Second derivative of ``f`` at a scalar ``x``: shaped like ``f(x)``.

    >>> import numpy as np, diffinterface as di
    >>> float(di.second_derivative(np.sin, di.AutoFiniteDiff(), np.pi / 2).round(6))
    -1.0

Fallback (see ``operators/_second_order.py``): the outer backend's derivative of
the inner backend's derivative. For ``value_derivative_and_second_derivative``
the outer differentiates ``stack([f(x), derivative])`` in one pass.
"""

from __future__ import annotations

from ..core import Operator, Call, Impl, call, prepare, prepared_call, register_operator
from ._docs import document
from ._second_order import differentiated_problem

_OP = Operator(
    name="second_derivative",
    order=2,
    seeds=None,
    methods=("second_derivative", "value_derivative_and_second_derivative"),
    valued_returns=("value", "first", "second"),
    plain_returns="second",
    scalar_x=True,
    result_shape="y",
)


def prepare_second_derivative(f, backend, x, *contexts, strict=True, has_aux=False):
    return prepare(Call(_OP, f, backend, x, None, contexts, has_aux=has_aux), strict)


@prepared_call(_OP, 0)
def second_derivative(f, backend, x, *contexts, prep=None, out=None, has_aux=False):
    return call(Call(_OP, f, backend, x, None, contexts, None, 0, prep, out, has_aux))


@prepared_call(_OP, 1)
def value_derivative_and_second_derivative(
    f, backend, x, *contexts, prep=None, out=None, has_aux=False
):
    return call(Call(_OP, f, backend, x, None, contexts, None, 1, prep, out, has_aux))


def _second_derivative_fallback(problem):
    derivative = differentiated_problem(problem, "derivative").impl("derivative").derivative
    augmented = differentiated_problem(problem, "derivative", with_value=True).impl("derivative")

    def value_derivative_and_second_derivative(x, *ctx):
        # d/dx [f, f'] = [f', f'']
        value_and_first, first_and_second = augmented.value_and_derivative(x, *ctx)
        return value_and_first[0], value_and_first[1], first_and_second[1]

    return Impl(
        second_derivative=derivative,
        value_derivative_and_second_derivative=value_derivative_and_second_derivative,
    )


def _empty(answer):
    y_like = answer.y_like
    return Impl(
        second_derivative=lambda x, *ctx: y_like(),
        value_derivative_and_second_derivative=lambda x, *ctx: (
            answer.value(x, ctx),
            y_like(),
            y_like(),
        ),
    )


register_operator(_OP, fallback=_second_derivative_fallback, empty=_empty)


document(
    _OP,
    prepare_second_derivative,
    second_derivative,
    value_derivative_and_second_derivative,
    summary="The second derivative ``d2f/dx2`` at a scalar ``x``, shaped like ``f(x)``.",
    x="float or 0-d array",
    result="array shaped like ``f(x)``",
    example="""\
>>> import numpy as np, diffinterface as di
>>> backend = di.AutoFiniteDiff()
>>> prep = di.prepare_second_derivative(np.sin, backend, 0.0)
>>> float(di.second_derivative(np.sin, backend, np.pi / 2, prep=prep).round(6))
-1.0
""",
)
