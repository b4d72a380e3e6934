"""Hessian of a scalar-valued ``f``: shape ``x.shape + x.shape``.

    >>> import numpy as np, diffinterface as di
    >>> f = lambda x: (x[0] * x[1]) ** 2
    >>> di.hessian(f, di.AutoFiniteDiff(), np.array([1.0, 2.0])).round(5)
    array([[8., 8.],
           [8., 2.]])

Fallback (see ``backends/second_order.py``): the outer backend's Jacobian of
the inner backend's gradient, that is hvps over the basis of ``x`` in batches
chosen at preparation (or the outer's native Jacobian). For
``value_gradient_and_hessian`` the outer differentiates ``[f(x), gradient]``
in one pass, so the gradient is not evaluated a second time.
"""

from __future__ import annotations

from ..backends.base import Impl
from ..backends.second_order import cast, differentiated_problem
from ._core import FALLBACKS, prepare, require_scalar_output, run


def prepare_hessian(f, backend, x, *contexts, strict=False):
    """Prepare ``hessian`` for ``f`` at arrays like ``x``."""
    return prepare("hessian", f, backend, x, contexts, strict=strict)


def hessian(f, backend, x, *contexts, prep=None, out=None):
    """The Hessian of the scalar ``f`` at ``x``, shape ``x.shape + x.shape``."""
    return run("hessian", "hessian", f, backend, x, contexts, prep, out=out)


def value_gradient_and_hessian(f, backend, x, *contexts, prep=None, out=None):
    """``(f(x), gradient, hessian)``; ``out`` is ``(gradient buffer, hessian buffer)``, None entries allowed."""
    return run("hessian", "value_gradient_and_hessian", f, backend, x, contexts, prep, out=out, n_values=1)


def _hessian_fallback(problem):
    spec = require_scalar_output(problem, "hessian")
    xp, x_shape, x_dtype = problem.xp, problem.x_shape, problem.x_dtype
    shape = x_shape + x_shape
    jacobian = differentiated_problem(problem, "gradient").impl("jacobian").jacobian
    # d/dx [f, gradient] = [gradient, H]: value, gradient and H from one outer pass.
    augmented = differentiated_problem(problem, "gradient", with_value=True).impl("jacobian")

    def hessian(x, *ctx):
        return xp.reshape(jacobian(x, *ctx), shape)

    def value_gradient_and_hessian(x, *ctx):
        value_and_gradient, rows = augmented.value_and_jacobian(x, *ctx)
        return (
            cast(value_and_gradient[0], spec.dtype),
            cast(xp.reshape(value_and_gradient[1:], x_shape), x_dtype),
            cast(xp.reshape(rows[1:], shape), x_dtype),
        )

    return Impl(hessian=hessian, value_gradient_and_hessian=value_gradient_and_hessian)


FALLBACKS["hessian"] = _hessian_fallback
