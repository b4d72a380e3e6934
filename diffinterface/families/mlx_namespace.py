"""An array-API namespace over ``mlx.core``, for one-source functions of MLX arrays.

``di.array_namespace(x)`` returns this module when ``x`` is an ``mx.array``
(``AutoMLX`` differentiates f with them). ``mlx.core`` already has most of
the array API's names; what differs is written here with MLX operations,
each of which MLX differentiates in both modes:

- ``asarray`` keeps a numpy array's dtype (``mx.array`` of a float64 numpy
  array makes float32 unless told);
- creation functions take (and ignore) ``device=``: MLX arrays live in
  unified memory and each operation picks its stream;
- keywords named differently (``clip(min=, max=)``, ``var(correction=)``,
  ``sort(descending=)``, ``astype(copy=)``, ``cumulative_sum(include_initial=)``,
  ``sum(dtype=)``);
- names MLX lacks (``copysign``, ``hypot``, ``signbit``, ``newaxis``,
  ``bool``, ``linalg.vector_norm``, ``linalg.matrix_norm``...).

Every other name falls through to ``mlx.core``; a name neither provides
raises an AttributeError naming it. MLX has no complex128: a complex128
array is refused by ``asarray`` with MLX's own error.

Examples
--------
>>> import numpy as np
>>> from diffinterface.families import mlx_namespace as xp
>>> x = xp.asarray(np.array([3.0, 4.0]))
>>> x.dtype == xp.float64, float(xp.linalg.vector_norm(xp.concat([x, xp.flip(x)])))
(True, 7.0710678118654755)
"""

from __future__ import annotations

import builtins
import math
import sys
import types

import mlx.core as mx
import numpy as np

from . import exact_products, mlx_linalg

__array_api_version__ = "2023.12"

float32, float64, complex64 = mx.float32, mx.float64, mx.complex64
int32, int64, bool = mx.int32, mx.int64, mx.bool_
e, pi, inf, nan, newaxis = math.e, math.pi, math.inf, math.nan, None

#: numpy dtypes (and their names) -> MLX's, for arrays and dtypes given as numpy's
_DTYPES = {
    name: getattr(mx, name)
    for name in (
        "float16",
        "bfloat16",
        "float32",
        "float64",
        "complex64",
        "int8",
        "int16",
        "int32",
        "int64",
        "uint8",
        "uint16",
        "uint32",
        "uint64",
    )
}
_DTYPES["bool"] = mx.bool_


def dtype_of(dtype):
    """``dtype`` (an MLX dtype, a numpy dtype or a name such as "float64") as MLX's; None stays None."""
    if dtype is None or isinstance(dtype, mx.Dtype):
        return dtype
    name = dtype if isinstance(dtype, str) else np.dtype(dtype).name
    try:
        return _DTYPES[name]
    except KeyError:
        raise TypeError(
            f"dtype: expected a dtype MLX has ({', '.join(_DTYPES)}); got {dtype!r}"
        ) from None


def asarray(obj, /, *, dtype=None, device=None, copy=None):
    if isinstance(obj, mx.array):
        return obj if dtype is None else mx.astype(obj, dtype_of(dtype))
    if isinstance(obj, (np.ndarray, np.generic)) and dtype is None:
        dtype = obj.dtype  # mx.array would make a float64 array float32
    return mx.array(obj, dtype=dtype_of(dtype))


def astype(x, dtype, /, *, copy=True, device=None):
    return mx.astype(x, dtype_of(dtype))


def _created(make):
    def create(*args, dtype=None, device=None, **options):
        return make(*args, dtype=dtype_of(dtype), **options)

    create.__name__ = make.__name__
    return create


zeros, ones, empty, eye, full, arange, linspace = map(
    _created, (mx.zeros, mx.ones, mx.zeros, mx.eye, mx.full, mx.arange, mx.linspace)
)
zeros_like, ones_like, empty_like, full_like = map(
    _created, (mx.zeros_like, mx.ones_like, mx.zeros_like, mx.full_like)
)


def _reduction(reduce):
    def reduction(x, /, *, axis=None, dtype=None, keepdims=False):
        result = reduce(x, axis=axis, keepdims=keepdims)
        return result if dtype is None else mx.astype(result, dtype_of(dtype))

    reduction.__name__ = reduce.__name__
    return reduction


sum, prod = _reduction(mx.sum), _reduction(mx.prod)


def var(x, /, *, axis=None, correction=0.0, keepdims=False):
    return mx.var(x, axis=axis, keepdims=keepdims, ddof=int(correction))


def std(x, /, *, axis=None, correction=0.0, keepdims=False):
    return mx.std(x, axis=axis, keepdims=keepdims, ddof=int(correction))


def clip(x, /, min=None, max=None):
    return mx.clip(x, min, max)


def sort(x, /, *, axis=-1, descending=False, stable=True):
    result = mx.sort(x, axis=axis)
    return mx.flip(result, axis=axis) if descending else result


def argsort(x, /, *, axis=-1, descending=False, stable=True):
    if descending:  # the last of equal entries first would break stability: sort the negation
        return mx.argsort(-x, axis=axis)
    return mx.argsort(x, axis=axis)


def _cumulative(accumulate, identity):
    def cumulative(x, /, *, axis=None, dtype=None, include_initial=False):
        if axis is None:
            x, axis = mx.reshape(x, (-1,)), 0
        result = accumulate(x, axis=axis)
        if dtype is not None:
            result = mx.astype(result, dtype_of(dtype))
        if not include_initial:
            return result
        shape = list(result.shape)
        shape[axis] = 1
        return mx.concatenate([mx.full(shape, identity, dtype=result.dtype), result], axis=axis)

    return cumulative


cumulative_sum = _cumulative(mx.cumsum, 0)


def cumulative_prod(x, /, *, axis=None, dtype=None, include_initial=False):
    # MLX's cumprod has no JVP, and the VJP of its VJP divides by the factors (NaN where one is
    # zero): products of the factors only
    return exact_products.cumulative_prod(
        sys.modules[__name__], x, axis=axis, dtype=dtype, include_initial=include_initial
    )


def copysign(x1, x2, /):
    return mx.abs(x1) * mx.where(signbit(x2), -1, 1)


def signbit(x, /):
    # -0.0 has its sign bit set: 1 / -0.0 is -inf
    return mx.logical_or(x < 0, mx.logical_and(x == 0, mx.reciprocal(x) < 0))


def hypot(x1, x2, /):
    return mx.sqrt(x1 * x1 + x2 * x2)


def take(x, indices, /, *, axis=None):
    # integer indices have no derivative: MLX would try one ("Cannot calculate JVP with respect to
    # indices")
    return mx.take(x, mx.stop_gradient(asarray(indices)), axis=axis)


def take_along_axis(x, indices, /, *, axis=-1):
    return mx.take_along_axis(x, mx.stop_gradient(asarray(indices)), axis=axis)


def __getattr__(name):
    try:
        return getattr(mx, name)
    except AttributeError:
        raise AttributeError(
            f"the MLX array namespace (diffinterface.families.mlx_namespace) has no {name!r}: "
            "neither the array API as written here nor mlx.core provides it"
        ) from None


# -- linalg --------------------------------------------------------------------------------------


def _vector_norm(x, /, *, axis=None, keepdims=False, ord=2):
    if ord == 2:
        return mx.sqrt(
            mx.sum(
                x * x
                if not mx.issubdtype(x.dtype, mx.complexfloating)
                else mx.real(x * mx.conj(x)),
                axis=axis,
                keepdims=keepdims,
            )
        )
    if ord == builtins.float("inf"):
        return mx.max(mx.abs(x), axis=axis, keepdims=keepdims)
    if ord == -builtins.float("inf"):
        return mx.min(mx.abs(x), axis=axis, keepdims=keepdims)
    return mx.sum(mx.abs(x) ** ord, axis=axis, keepdims=keepdims) ** (1.0 / ord)


def _matrix_norm(x, /, *, keepdims=False, ord="fro"):
    if ord == "fro":
        result = mx.sqrt(mx.sum(mx.abs(x) ** 2, axis=(-2, -1)))
    elif ord in ("nuc", 2, -2):
        singular = mlx_linalg.svdvals(x)
        reduce = {"nuc": mx.sum, 2: mx.max, -2: mx.min}[ord]
        result = reduce(singular, axis=-1)
    elif ord in (1, -1, builtins.float("inf"), -builtins.float("inf")):
        axis = -2 if ord in (1, -1) else -1  # column sums for 1, row sums for inf
        sums = mx.sum(mx.abs(x), axis=axis)
        result = mx.max(sums, axis=-1) if ord > 0 else mx.min(sums, axis=-1)
    else:
        raise ValueError(
            f"linalg.matrix_norm(ord=...): expected 'fro', 'nuc', 1, -1, 2, -2, inf or -inf; got {ord!r}"
        )
    return mx.expand_dims(result, (-2, -1)) if keepdims else result


def _trace(x, /, *, offset=0, dtype=None):
    result = mx.trace(x, offset=offset, axis1=-2, axis2=-1)
    return result if dtype is None else mx.astype(result, dtype_of(dtype))


def _diagonal(x, /, *, offset=0):
    return mx.diagonal(x, offset=offset, axis1=-2, axis2=-1)


linalg = types.SimpleNamespace(
    **{name: getattr(mx.linalg, name) for name in dir(mx.linalg) if not name.startswith("_")},
)
linalg.vector_norm, linalg.matrix_norm = _vector_norm, _matrix_norm
linalg.matrix_transpose, linalg.vecdot = mx.matrix_transpose, mx.vecdot
linalg.outer, linalg.trace, linalg.diagonal = mx.outer, _trace, _diagonal
# MLX's factorizations with the derivatives MLX lacks (mlx_linalg.py)
for _name in (
    "inv",
    "solve",
    "matrix_power",
    "eigh",
    "eigvalsh",
    "cholesky",
    "svdvals",
    "svd",
    "pinv",
    "cross",
):
    setattr(linalg, _name, getattr(mlx_linalg, _name))
