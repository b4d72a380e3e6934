"""Hessian of a scalar-valued ``f``: shape ``x.shape + x.shape``.

    >>> import numpy as np, diffinterface as di
    >>> f = lambda x: (x[0] * x[1]) ** 2
    >>> di.hessian(f, di.AutoFiniteDiff(), np.array([1.0, 2.0])).round(5)
    array([[8., 8.],
           [8., 2.]])

Fallback (see ``operators/_second_order.py``): hvps over the basis of ``x``,
that is the outer backend's pushforwards (or pullbacks) of the inner
backend's gradient, in batches of the outer's ``max_batch`` chosen at
preparation. For ``value_gradient_and_hessian`` the outer differentiates
``[f(x), gradient]`` in one pass, so the gradient is not evaluated a second
time.
"""

from __future__ import annotations

from ..families import cast
from ..core import Operator, Call, Impl, call, prepare, prepared_call, register_operator
from ..core import require_scalar_output
from ..core.batching import record
from ._docs import document
from ._second_order import differentiated_problem, outer_mode

_OP = Operator(
    name="hessian",
    order=2,
    seeds=None,
    methods=("hessian", "value_gradient_and_hessian"),
    valued_returns=("value", "first", "second"),
    plain_returns="second",
    scalar_y=True,
    fallback_mode="reverse",
    result_shape="x+x",
)


def prepare_hessian(f, backend, x, *contexts, strict=True, has_aux=False):
    return prepare(Call(_OP, f, backend, x, None, contexts, has_aux=has_aux), strict)


@prepared_call(_OP, 0)
def hessian(f, backend, x, *contexts, prep=None, out=None, has_aux=False):
    return call(Call(_OP, f, backend, x, None, contexts, None, 0, prep, out, has_aux))


@prepared_call(_OP, 1)
def value_gradient_and_hessian(f, backend, x, *contexts, prep=None, out=None, has_aux=False):
    return call(Call(_OP, f, backend, x, None, contexts, None, 1, prep, out, has_aux))


def _hessian_fallback(problem):
    spec = require_scalar_output(problem, "hessian")
    xp, x_shape, x_dtype, n = problem.xp, problem.x_shape, problem.x_dtype, problem.x_size
    shape = x_shape + x_shape
    gradient_problem = differentiated_problem(problem, "gradient")
    # d/dx [f, gradient] = [gradient, H]: value, gradient and H from one outer pass.
    augmented_problem = differentiated_problem(problem, "gradient", with_value=True)
    if outer_mode(gradient_problem.adapter) == "forward":
        operator, seeds = "pushforward", problem.basis(x_shape, x_dtype)
        augmented_seeds = seeds
    else:
        # H is symmetric: pullbacks of basis vectors give its rows; the augmented output
        # [f, gradient] takes cotangents with a 0 for f.
        operator, seeds = "pullback", problem.basis(x_shape, x_dtype)
        augmented_seeds = problem.basis((1 + n,), augmented_problem.spec.dtype)[1:]
    seeded = gradient_problem.seeded(operator, seeds)
    hvps = seeded.results
    augmented_hvps = augmented_problem.seeded(operator, augmented_seeds).value_and_results
    # Row i of the augmented products is [gradient . e_i, (H e_i)^T] (forward) or e_i^T H (reverse).
    skip_first = operator == "pushforward"

    def hessian(x, *ctx):
        return xp.reshape(xp.stack(hvps(x, *ctx)), shape)

    def value_gradient_and_hessian(x, *ctx):
        value_and_gradient, rows = augmented_hvps(x, *ctx)
        rows = xp.stack(rows)
        if skip_first:
            rows = rows[:, 1:]
        return (
            cast(value_and_gradient[0], spec.dtype),
            cast(xp.reshape(value_and_gradient[1:], x_shape), x_dtype),
            cast(xp.reshape(rows, shape), x_dtype),
        )

    return record(
        Impl(hessian=hessian, value_gradient_and_hessian=value_gradient_and_hessian),
        seeded.batch_size,
    )


def _empty(answer):
    def hessian(x, *ctx):
        return answer.zeros(answer.x_shape + answer.x_shape, answer.x_dtype)

    return Impl(
        hessian=hessian,
        value_gradient_and_hessian=lambda x, *ctx: (
            answer.value(x, ctx),
            answer.x_like(),
            hessian(x),
        ),
    )


def _flat_x(plan, hessian, value_gradient_and_hessian, problem):
    """A Hessian tree like x of trees like x, block ``[i][j]`` shaped ``leaf_i + leaf_j``."""
    ravel, unravel, square = plan.ravel, plan.unravel, plan.unravel_square

    def value_gradient_and_tree_hessian(x, *ctx):
        value, g, h = value_gradient_and_hessian(ravel(x), *ctx)
        return value, unravel(g), square(h)

    return (lambda x, *ctx: square(hessian(ravel(x), *ctx))), value_gradient_and_tree_hessian


register_operator(_OP, fallback=_hessian_fallback, empty=_empty, flat_x=_flat_x)


document(
    _OP,
    prepare_hessian,
    hessian,
    value_gradient_and_hessian,
    summary="The Hessian of a scalar-valued ``f`` at ``x``, of shape ``x.shape + x.shape``.",
    x="array",
    result="array of shape ``x.shape + x.shape``",
    valued_summary="``f(x)``, the gradient and the Hessian, from one pass.",
    example="""\
>>> import numpy as np, diffinterface as di
>>> f, backend = (lambda x: (x[0] * x[1]) ** 2), di.AutoFiniteDiff()
>>> prep = di.prepare_hessian(f, backend, np.ones(2))
>>> di.hessian(f, backend, np.array([1.0, 2.0]), prep=prep).round(5)
array([[8., 8.],
       [8., 2.]])
""",
)
