"""Pushforward (Jacobian-vector products): ``J(x) @ t`` for each tangent ``t``.

    >>> import numpy as np, diffinterface as di
    >>> f = lambda x: x ** 2
    >>> di.pushforward(f, di.AutoFiniteDiff(), np.array([1.0, 2.0]), (np.array([1.0, 0.0]),))[0].round(4)
    array([2., 0.])

Fallback (reverse-mode adapters): pullbacks over the output's basis give the
Jacobian once, then each tangent is a matrix-vector product.
"""

from __future__ import annotations

from ..core import Operator, Call, call, prepare, prepared_call, register_operator
from ._docs import document, document_same_point
from ._seeded import through_jacobian

_OP = Operator(
    name="pushforward",
    order=1,
    seeds="tangents",
    methods=("pushforward", "value_and_pushforward"),
    valued_returns=("value", "first"),
    plain_returns="first",
    two_argument=True,
    tree_output=True,
    result_shape="y",
)


def prepare_pushforward(f, backend, x, tangents, *contexts, y=None, strict=True, has_aux=False):
    return prepare(Call(_OP, f, backend, x, tangents, contexts, y, has_aux=has_aux), strict)


def prepare_pushforward_same_point(f, backend, x, tangents, *contexts, strict=True):
    return prepare(Call(_OP, f, backend, x, tangents, contexts, same_point=True), strict)


@prepared_call(_OP, 0)
def pushforward(f, backend, x, tangents, *contexts, prep=None, out=None, y=None, has_aux=False):
    return call(Call(_OP, f, backend, x, tangents, contexts, y, 0, prep, out, has_aux))


@prepared_call(_OP, 1)
def value_and_pushforward(
    f, backend, x, tangents, *contexts, prep=None, out=None, y=None, has_aux=False
):
    return call(Call(_OP, f, backend, x, tangents, contexts, y, 1, prep, out, has_aux))


def _pushforward_from_pullbacks(problem):
    return through_jacobian(_OP, problem)


def _empty(answer):
    return answer.per_seed(_OP, answer.y_like)


def _flat_x(plan, pushforward, value_and_pushforward, problem):
    """Tangents like a pytree x, raveled; the results are shaped like y already."""
    ravel = plan.ravel
    return (
        lambda x, tangents, *ctx: pushforward(ravel(x), tuple(map(ravel, tangents)), *ctx),
        lambda x, tangents, *ctx: value_and_pushforward(
            ravel(x), tuple(map(ravel, tangents)), *ctx
        ),
    )


def _flat_y(plan, pushforward, value_and_pushforward, x_plan):
    """Results (and the value) like a pytree output."""
    unravel = plan.unravel

    def value_and_tree_pushforward(x, tangents, *ctx):
        value, results = value_and_pushforward(x, tangents, *ctx)
        return unravel(value), tuple(map(unravel, results))

    return (
        lambda x, tangents, *ctx: tuple(map(unravel, pushforward(x, tangents, *ctx)))
    ), value_and_tree_pushforward


register_operator(
    _OP, fallback=_pushforward_from_pullbacks, empty=_empty, flat_x=_flat_x, flat_y=_flat_y
)


document(
    _OP,
    prepare_pushforward,
    pushforward,
    value_and_pushforward,
    summary="Pushforwards (Jacobian-vector products) ``J(x) @ t`` for each tangent ``t``.",
    x="array or float",
    result="tuple of arrays, one per tangent, each shaped like ``f(x)``",
    example="""\
>>> import numpy as np, diffinterface as di
>>> f, backend = (lambda x: x ** 2), di.AutoFiniteDiff()
>>> x, tangents = np.array([1.0, 2.0]), (np.array([1.0, 0.0]), np.array([0.0, 1.0]))
>>> prep = di.prepare_pushforward(f, backend, x, tangents)
>>> [t.round(4) for t in di.pushforward(f, backend, x, tangents, prep=prep)]
[array([2., 0.]), array([0., 4.])]
""",
)

document_same_point(
    _OP,
    prepare_pushforward_same_point,
    example="""\
>>> import numpy as np, diffinterface as di
>>> f, backend, x = (lambda x: x ** 2), di.AutoFiniteDiff(), np.array([1.0, 2.0])
>>> prep = di.prepare_pushforward_same_point(f, backend, x, (np.zeros(2),))
>>> di.pushforward(f, backend, x, (np.array([1.0, 1.0]),), prep=prep)[0].round(4)
array([2., 4.])
""",
)
