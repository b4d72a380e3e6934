"""Jacobian of an array-valued ``f``: shape ``f(x).shape + x.shape``.

    >>> import numpy as np, diffinterface as di
    >>> di.jacobian(lambda x: x ** 2, di.AutoFiniteDiff(), np.array([1.0, 2.0])).round(4)
    array([[2., 0.],
           [0., 4.]])

Fallback: pushforwards over the basis of ``x`` (forward mode) or pullbacks over
the basis of ``f(x)`` (reverse mode), in batches chosen at preparation; the
mode follows the backend, or the smaller side when the backend does both.
"""

from __future__ import annotations

from ..core import Operator, Call, Impl, call, prepare, prepared_call, register_operator
from ._docs import document
from ._seeded import impl_from_seeded

_OP = Operator(
    name="jacobian",
    order=1,
    seeds=None,
    methods=("jacobian", "value_and_jacobian"),
    valued_returns=("value", "first"),
    plain_returns="first",
    two_argument=True,
    tree_output=True,
    fallback_mode="smaller side",
    result_shape="y+x",
)


def prepare_jacobian(f, backend, x, *contexts, y=None, strict=True, has_aux=False):
    return prepare(Call(_OP, f, backend, x, None, contexts, y, has_aux=has_aux), strict)


@prepared_call(_OP, 0)
def jacobian(f, backend, x, *contexts, prep=None, out=None, y=None, has_aux=False):
    return call(Call(_OP, f, backend, x, None, contexts, y, 0, prep, out, has_aux))


@prepared_call(_OP, 1)
def value_and_jacobian(f, backend, x, *contexts, prep=None, out=None, y=None, has_aux=False):
    return call(Call(_OP, f, backend, x, None, contexts, y, 1, prep, out, has_aux))


def _jacobian_fallback(problem):
    xp, spec = problem.xp, problem.spec
    shape = spec.shape + problem.x_shape
    if problem.mode("jacobian") == "forward":
        seeded = problem.seeded("pushforward", problem.basis(problem.x_shape, problem.x_dtype))
        axis = -1  # each pushforward is a column
    else:
        seeded = problem.seeded("pullback", problem.basis(spec.shape, spec.dtype))
        axis = 0  # each pullback is a row

    return impl_from_seeded(
        _OP, seeded, lambda parts: xp.reshape(xp.stack(parts, axis=axis), shape)
    )


def _empty(answer):
    def jacobian(x, *ctx):
        return answer.zeros(answer.y_shape + answer.x_shape, answer.y_dtype)

    return Impl(
        jacobian=jacobian, value_and_jacobian=lambda x, *ctx: (answer.value(x, ctx), jacobian(x))
    )


def _flat_x(plan, jacobian, value_and_jacobian, problem):
    """A Jacobian tree like x, leaf ``l`` of shape ``y.shape + l.shape`` (the output shape is learned)."""
    ravel, lead = plan.ravel, tuple(problem.spec.shape)

    def value_and_tree_jacobian(x, *ctx):
        value, j = value_and_jacobian(ravel(x), *ctx)
        return value, plan.unravel_last(j, lead)

    return (
        lambda x, *ctx: plan.unravel_last(jacobian(ravel(x), *ctx), lead)
    ), value_and_tree_jacobian


def _flat_y(plan, jacobian, value_and_jacobian, x_plan):
    """A Jacobian tree like y (of trees like x for a pytree x), as ``jax.jacobian``."""
    nested, unravel = plan.unravel_first, plan.unravel

    def value_and_tree_jacobian(x, *ctx):
        value, j = value_and_jacobian(x, *ctx)
        return unravel(value), nested(j, x_plan)

    return (lambda x, *ctx: nested(jacobian(x, *ctx), x_plan)), value_and_tree_jacobian


register_operator(_OP, fallback=_jacobian_fallback, empty=_empty, flat_x=_flat_x, flat_y=_flat_y)


document(
    _OP,
    prepare_jacobian,
    jacobian,
    value_and_jacobian,
    summary="The Jacobian of ``f`` at ``x``, of shape ``f(x).shape + x.shape``.",
    x="array",
    result="array of shape ``f(x).shape + x.shape``",
    example="""\
>>> import numpy as np, diffinterface as di
>>> f, backend = (lambda x: x ** 2), di.AutoFiniteDiff()
>>> prep = di.prepare_jacobian(f, backend, np.zeros(2))
>>> di.jacobian(f, backend, np.array([1.0, 2.0]), prep=prep).round(4)
array([[2., 0.],
       [0., 4.]])
""",
)
