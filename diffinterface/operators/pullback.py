"""Pullback (vector-Jacobian products): ``c @ J(x)`` for each cotangent ``c``.

    >>> import numpy as np, diffinterface as di
    >>> f = lambda x: x ** 2
    >>> di.pullback(f, di.AutoFiniteDiff(), np.array([1.0, 2.0]), (np.array([0.0, 1.0]),))[0].round(4)
    array([0., 4.])

Fallback (forward-mode adapters): pushforwards over the input's basis give the
Jacobian once, then each cotangent is a vector-matrix product.
"""

from __future__ import annotations

from ..core import Operator, Call, call, prepare, prepared_call, register_operator
from ._docs import document, document_same_point
from ._seeded import through_jacobian

_OP = Operator(
    name="pullback",
    order=1,
    seeds="cotangents",
    methods=("pullback", "value_and_pullback"),
    valued_returns=("value", "first"),
    plain_returns="first",
    two_argument=True,
    tree_output=True,
    fallback_mode="reverse",
)


def prepare_pullback(f, backend, x, cotangents, *contexts, y=None, strict=True, has_aux=False):
    return prepare(Call(_OP, f, backend, x, cotangents, contexts, y, has_aux=has_aux), strict)


def prepare_pullback_same_point(f, backend, x, cotangents, *contexts, strict=True):
    return prepare(Call(_OP, f, backend, x, cotangents, contexts, same_point=True), strict)


@prepared_call(_OP, 0)
def pullback(f, backend, x, cotangents, *contexts, prep=None, out=None, y=None, has_aux=False):
    return call(Call(_OP, f, backend, x, cotangents, contexts, y, 0, prep, out, has_aux))


@prepared_call(_OP, 1)
def value_and_pullback(
    f, backend, x, cotangents, *contexts, prep=None, out=None, y=None, has_aux=False
):
    return call(Call(_OP, f, backend, x, cotangents, contexts, y, 1, prep, out, has_aux))


def _pullback_from_pushforwards(problem):
    return through_jacobian(_OP, problem)


def _empty(answer):
    return answer.per_seed(_OP, answer.x_like)


def _flat_x(plan, pullback, value_and_pullback, problem):
    """Results like a pytree x; the value and the cotangents are y's."""
    ravel, unravel = plan.ravel, plan.unravel

    def value_and_tree_pullback(x, cotangents, *ctx):
        value, results = value_and_pullback(ravel(x), cotangents, *ctx)
        return value, tuple(map(unravel, results))

    return (
        lambda x, cotangents, *ctx: tuple(map(unravel, pullback(ravel(x), cotangents, *ctx)))
    ), value_and_tree_pullback


def _flat_y(plan, pullback, value_and_pullback, x_plan):
    """Cotangents like a pytree output, raveled; the value unraveled; the results are x's already."""
    ravel, unravel = plan.ravel, plan.unravel

    def value_and_tree_pullback(x, cotangents, *ctx):
        value, results = value_and_pullback(x, tuple(map(ravel, cotangents)), *ctx)
        return unravel(value), results

    return (
        lambda x, cotangents, *ctx: pullback(x, tuple(map(ravel, cotangents)), *ctx)
    ), value_and_tree_pullback


register_operator(
    _OP, fallback=_pullback_from_pushforwards, empty=_empty, flat_x=_flat_x, flat_y=_flat_y
)


document(
    _OP,
    prepare_pullback,
    pullback,
    value_and_pullback,
    summary="Pullbacks (vector-Jacobian products) ``c @ J(x)`` for each cotangent ``c``.",
    x="array or float",
    result="tuple of arrays, one per cotangent, each shaped like ``x``",
    example="""\
>>> import numpy as np, diffinterface as di
>>> f, backend = (lambda x: x ** 2), di.AutoFiniteDiff()
>>> x, cotangents = np.array([1.0, 2.0]), (np.array([0.0, 1.0]),)
>>> prep = di.prepare_pullback(f, backend, x, cotangents)
>>> di.pullback(f, backend, x, cotangents, prep=prep)[0].round(4)
array([0., 4.])
""",
)

document_same_point(
    _OP,
    prepare_pullback_same_point,
    example="""\
>>> import numpy as np, diffinterface as di
>>> backend, x = di.AutoFiniteDiff(), np.array([1.0, 2.0])
>>> def f(x):
...     return np.array([x[0] * x[1], x[1] ** 2])
>>> prep = di.prepare_pullback_same_point(f, backend, x, (np.zeros(2),))
>>> for u in (np.array([1.0, 0.0]), np.array([0.0, 1.0])):  # the rows of the Jacobian, one pass each
...     print(di.pullback(f, backend, x, (u,), prep=prep)[0].round(4))
[2. 1.]
[0. 4.]
""",
)
