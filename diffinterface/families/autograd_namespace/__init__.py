"""An array-API namespace over ``autograd.numpy`` whose functions all have derivatives.

``di.array_namespace(x)`` returns this module when ``x`` is one of autograd's
boxes (``AutoAutograd`` traces f with them). ``autograd.numpy`` wraps every
numpy function, but many of the array API's names have no derivative rule
there: ``concat`` gives a Jacobian of zeros (autograd only warns),
``vecdot``, ``flip``, ``take``, ``cumulative_sum``, ``linalg.vector_norm``
... raise ``NotImplementedError: VJP of ... not defined``. Here each of those
is written with autograd primitives that have derivatives (``concat`` with
``concatenate``, ``vecdot`` as a sum of products, norms by their formulas),
so one function source gets the same derivatives as under JAX and torch.
Where autograd's own rule is wrong (``sort``'s forward rule on 2-d arrays,
``tile``'s pullback with fewer repetitions than axes, ``roll``'s with a tuple
of shifts, ``repeat`` on 0-d arrays, ``clip`` with array bounds) or missing in forward mode (``det``,
``inv``, ``slogdet``, ``solve``, ``cholesky``, ``eigh``, ``svdvals``,
``pinv``: :mod:`.linalg_rules`), the function is written here too. Only the
singular vectors of ``linalg.svd`` have no forward rule; their pushforward
raises an error naming the way around it (``linalg.svdvals``, reverse mode).

Every other name falls through to ``autograd.numpy`` (then to ``numpy`` for
what autograd does not wrap: ``finfo``, dtypes). Functions whose results do
not depend smoothly on their inputs (comparisons, ``argmax``, ``signbit``,
bitwise operations, dtype queries) work on the unboxed values: their
derivative is zero by definition, not by accident. A function autograd
cannot differentiate raises a ``NotImplementedError`` naming it and the way
around it, never a silent zero.

Examples
--------
>>> import numpy as np, autograd
>>> from diffinterface.families import autograd_namespace as xp
>>> f = lambda x: xp.linalg.vector_norm(xp.concat([x, xp.flip(x)]))
>>> autograd.grad(f)(np.array([3.0, 4.0])).round(4)   # the norm of [3, 4, 4, 3]: 2 x / sqrt(50)
array([0.8485, 1.1314])
"""

from __future__ import annotations

import sys

import autograd.numpy as anp
import numpy as np
from autograd.tracer import getval

from .functions import (
    _fall_through,
    argsort,
    asarray,
    astype,
    broadcast_arrays,
    broadcast_to,
    clip,
    concat,
    copysign,
    cumulative_sum,
    diff,
    empty_like,
    flip,
    hypot,
    matrix_transpose,
    meshgrid,
    ones_like,
    permute_dims,
    positive,
    repeat,
    reshape,
    roll,
    sort,
    squeeze,
    stack,
    std,
    take,
    take_along_axis,
    tile,
    unique_all,
    unique_counts,
    unique_inverse,
    unique_values,
    unstack,
    var,
    vecdot,
    where,
    zeros_like,
)
from .. import exact_products
from .linalg_extension import Linalg

__array_api_version__ = "2023.12"


def _not_differentiable(name):
    """``numpy.name`` on the unboxed values: for functions that are piecewise constant or integer-valued."""
    function = getattr(np, name)

    def on_values(*args, **kwargs):
        return function(*(getval(a) for a in args), **{k: getval(v) for k, v in kwargs.items()})

    on_values.__name__ = name
    on_values.__doc__ = (
        f"``numpy.{name}`` on unboxed values (its derivative is zero where it exists)."
    )
    return on_values


for _name in (
    "signbit",
    "nextafter",
    "bitwise_and",
    "bitwise_left_shift",
    "bitwise_invert",
    "bitwise_or",
    "bitwise_right_shift",
    "bitwise_xor",
    "can_cast",
    "isdtype",
    "result_type",
    "count_nonzero",
    "nonzero",
    "searchsorted",
    "all",
    "any",
    "isfinite",
    "isinf",
    "isnan",
    "equal",
    "not_equal",
    "less",
    "less_equal",
    "greater",
    "greater_equal",
    "logical_and",
    "logical_or",
    "logical_xor",
    "logical_not",
    "argmax",
    "argmin",
):
    globals()[_name] = _not_differentiable(_name)
del _name


def prod(x, /, *, axis=None, dtype=None, keepdims=False):
    """The product over ``axis``, exact where factors are zero (autograd's own divides by them)."""
    return exact_products.prod(sys.modules[__name__], x, axis=axis, dtype=dtype, keepdims=keepdims)


def cumulative_prod(x, /, *, axis=None, dtype=None, include_initial=False):
    """Running products along ``axis``, exact where factors are zero."""
    return exact_products.cumulative_prod(
        sys.modules[__name__], x, axis=axis, dtype=dtype, include_initial=include_initial
    )


#: the linalg extension
linalg = Linalg()


def __getattr__(name):
    if name.startswith("__"):
        raise AttributeError(name)
    return _fall_through(name, anp, np)
