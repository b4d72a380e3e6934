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

from ..core import FALLBACKS, OPERATORS, Impl, call, prepare, prepared_fast_path
from ._docs import document

_OP = OPERATORS["jacobian"]


def prepare_jacobian(f, backend, x, *contexts, y=None, strict=True):
    return prepare(_OP, f, backend, x, None, contexts, y, strict)


@prepared_fast_path(_OP, 0)
def jacobian(f, backend, x, *contexts, prep=None, out=None, y=None):
    return call(_OP, 0, f, backend, x, None, contexts, prep, out, y)


@prepared_fast_path(_OP, 1)
def value_and_jacobian(f, backend, x, *contexts, prep=None, out=None, y=None):
    return call(_OP, 1, f, backend, x, None, contexts, prep, out, y)


def _jacobian_fallback(problem):
    xp, spec = problem.xp, problem.spec
    shape = spec.shape + problem.x_shape
    if problem.mode("jacobian") == "forward":
        seeded = problem.seeded("pushforward", problem.basis(problem.x_shape, problem.x_dtype))
        axis = -1  # each pushforward is a column
    else:
        seeded = problem.seeded("pullback", problem.basis(spec.shape, spec.dtype))
        axis = 0  # each pullback is a row

    def value_and_jacobian(x, *ctx):
        y, parts = seeded.value_and_results(x, *ctx)
        return y, xp.reshape(xp.stack(parts, axis=axis), shape)

    return Impl(
        value_and_jacobian=value_and_jacobian,
        jacobian=lambda x, *ctx: xp.reshape(xp.stack(seeded.results(x, *ctx), axis=axis), shape),
    )


FALLBACKS["jacobian"] = _jacobian_fallback


document(
    _OP, prepare_jacobian, jacobian, value_and_jacobian,
    summary='The Jacobian of ``f`` at ``x``, of shape ``f(x).shape + x.shape``.',
    x='array',
    result='array of shape ``f(x).shape + x.shape``',
    example="""\
>>> import numpy as np, diffinterface as di
>>> f, backend = (lambda x: x ** 2), di.AutoFiniteDiff()
>>> prep = di.prepare_jacobian(f, backend, np.zeros(2))
>>> di.jacobian(f, backend, np.array([1.0, 2.0]), prep=prep).round(4)
array([[2., 0.],
       [0., 4.]])
""",
)
