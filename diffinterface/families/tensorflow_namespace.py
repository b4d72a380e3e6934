"""An array-API namespace over ``tf.experimental.numpy``, for one-source functions of TensorFlow tensors.

``di.array_namespace(x)`` returns this module when ``x`` is a ``tf.Tensor``
or ``tf.Variable`` (``AutoTensorFlow`` traces f with them). TensorFlow's
numpy API (``tf.experimental.numpy``) has numpy's names; the array API's
own names that it lacks (``concat``, ``astype``, ``permute_dims``,
``matrix_transpose``, ``pow``, ``acos``..., ``cumulative_sum``,
``vecdot``, ``unstack``, ``linalg.vector_norm``...) are written here with
TensorFlow operations, all of which have gradients in both modes. Every
other name falls through to ``tf.experimental.numpy``; a name neither
provides raises an AttributeError naming it.

Nothing here turns on ``tnp.experimental_enable_numpy_behavior()``: that
would change every TensorFlow tensor in the process (global
configuration). While AutoTensorFlow traces or runs f, tensors have the array
API's array object (``x.T``, ``x.mT``, ``@`` with 1-d operands, ``x.size``,
``x.__array_namespace__()``...:
``diffinterface/backends/tensorflow/array_object.py``); elsewhere they keep
TensorFlow's own, and ``xp.matmul(a, b)``, ``xp.matrix_transpose(x)`` and
``xp.permute_dims(x, axes)`` do the same anywhere.

Examples
--------
>>> import tensorflow as tf
>>> from diffinterface.families import tensorflow_namespace as xp
>>> x = tf.constant([3.0, 4.0], dtype=tf.float64)
>>> float(xp.linalg.vector_norm(xp.concat([x, xp.flip(x)])))   # the norm of [3, 4, 4, 3]
7.0710678118654755
"""

from __future__ import annotations

import math
import sys
import types

import tensorflow as tf
import tensorflow.experimental.numpy as tnp

from . import exact_products

__array_api_version__ = "2023.12"

float32, float64, complex64, complex128 = tnp.float32, tnp.float64, tnp.complex64, tnp.complex128
int32, int64, bool = tnp.int32, tnp.int64, tnp.bool_

# the array API's names of numpy functions tf.experimental.numpy has under numpy's names
acos, asin, atan, acosh, asinh, atanh, atan2 = (
    tnp.arccos,
    tnp.arcsin,
    tnp.arctan,
    tnp.arccosh,
    tnp.arcsinh,
    tnp.arctanh,
    tnp.arctan2,
)
pow = tnp.power
bitwise_invert = tnp.bitwise_not


def asarray(obj, dtype=None, device=None, copy=None):
    if device is not None:
        with tf.device(device):
            return tnp.asarray(obj, dtype=dtype)
    return tnp.asarray(obj, dtype=dtype)


def astype(x, dtype, /, *, copy=True, device=None):
    return tf.cast(x, dtype)


def zeros(shape, dtype=None, device=None):
    return tnp.zeros(shape, dtype=dtype or tnp.float64)


def ones(shape, dtype=None, device=None):
    return tnp.ones(shape, dtype=dtype or tnp.float64)


def concat(arrays, /, *, axis=0):
    if axis is None:
        return tf.concat([tf.reshape(a, (-1,)) for a in arrays], 0)
    return tf.concat(list(arrays), axis)


def permute_dims(x, /, axes):
    return tf.transpose(x, axes)


def matrix_transpose(x, /):
    return tf.linalg.matrix_transpose(x)


def bitwise_left_shift(x1, x2, /):
    dtype = tnp.result_type(x1, x2)
    return tf.bitwise.left_shift(tf.cast(x1, dtype), tf.cast(x2, dtype))


def bitwise_right_shift(x1, x2, /):
    dtype = tnp.result_type(x1, x2)
    return tf.bitwise.right_shift(tf.cast(x1, dtype), tf.cast(x2, dtype))


def trunc(x, /):
    return tf.where(x < 0, tf.math.ceil(x), tf.math.floor(x))


def copysign(x1, x2, /):
    return tf.abs(x1) * tf.where(
        tnp.signbit(x2), tf.constant(-1, x1.dtype), tf.constant(1, x1.dtype)
    )


def _cumulative(op, x, axis, include_initial, initial):
    if axis is None:
        if len(x.shape) != 1:
            raise ValueError("cumulative functions: axis=None needs a 1-d x (the array API's rule)")
        axis = 0
    result = op(x, axis=axis)
    if include_initial:
        shape = tf.tensor_scatter_nd_update(tf.shape(result), [[axis % len(x.shape)]], [1])
        result = tf.concat([tf.fill(shape, tf.constant(initial, result.dtype)), result], axis)
    return result


def cumulative_sum(x, /, *, axis=None, dtype=None, include_initial=False):
    return _cumulative(
        tf.cumsum, x if dtype is None else tf.cast(x, dtype), axis, include_initial, 0
    )


def cumulative_prod(x, /, *, axis=None, dtype=None, include_initial=False):
    # TensorFlow's cumprod and the second derivative of its reduce_prod divide by the factors
    # (silently wrong where one is zero): products of the factors only.
    return exact_products.cumulative_prod(
        sys.modules[__name__], x, axis=axis, dtype=dtype, include_initial=include_initial
    )


def prod(x, /, *, axis=None, dtype=None, keepdims=False):
    return exact_products.prod(sys.modules[__name__], x, axis=axis, dtype=dtype, keepdims=keepdims)


def unstack(x, /, *, axis=0):
    return tuple(tf.unstack(x, axis=axis))


def vecdot(x1, x2, /, *, axis=-1):
    return tf.reduce_sum(tf.math.conj(x1) * x2, axis=axis)


def var(x, /, *, axis=None, correction=0.0, keepdims=False):
    # written out in x's dtype: tnp.var mixes in an int64 count, which TensorFlow's dtype rules refuse
    mean = tf.reduce_mean(x, axis=axis, keepdims=True)
    squares = tf.reduce_sum(tf.square(tf.abs(x - mean)), axis=axis, keepdims=keepdims)
    # the number of entries each result sums over
    count = tf.cast(tf.size(x), squares.dtype) / tf.cast(tf.size(squares), squares.dtype)
    return squares / (count - tf.cast(correction, squares.dtype))


def std(x, /, *, axis=None, correction=0.0, keepdims=False):
    return tf.sqrt(var(x, axis=axis, correction=correction, keepdims=keepdims))


def log2(x, /):
    return tf.math.log(x) / tf.math.log(tf.constant(2, x.dtype))


def log10(x, /):
    return tf.math.log(x) / tf.math.log(tf.constant(10, x.dtype))


def sort(x, /, *, axis=-1, descending=False, stable=True):
    return tf.sort(x, axis=axis, direction="DESCENDING" if descending else "ASCENDING")


def argsort(x, /, *, axis=-1, descending=False, stable=True):
    return tf.argsort(
        x, axis=axis, direction="DESCENDING" if descending else "ASCENDING", stable=stable
    )


def flip(x, /, *, axis=None):
    axes = range(len(x.shape)) if axis is None else (axis,) if isinstance(axis, int) else axis
    return tf.reverse(x, axis=list(axes))


def _axes(axis):
    return list(axis) if isinstance(axis, tuple) else axis


def mean(x, /, *, axis=None, keepdims=False):
    return tf.reduce_mean(x, axis=_axes(axis), keepdims=keepdims)


def round(x, /):
    # TensorFlow's round has no gradient (None); its derivative is zero wherever it exists
    return tf.stop_gradient(tf.round(x))


def take(x, indices, /, *, axis=None):
    return tnp.take(x, indices, axis=axis)


def repeat(x, repeats, /, *, axis=None):
    # tf.repeat, not tnp.repeat: the latter converts an array of repeats to numpy, which a traced
    # one is not
    return tf.repeat(x, repeats, axis=axis)


def squeeze(x, /, axis):
    return tf.squeeze(x, axis=axis)


def stack(arrays, /, *, axis=0):
    return tf.stack(list(arrays), axis=axis)


def clip(x, /, min=None, max=None):
    if min is not None:
        x = tf.maximum(x, min)
    if max is not None:
        x = tf.minimum(x, max)
    return x


# -- linalg --------------------------------------------------------------------------------------


def _vector_norm(x, /, *, axis=None, keepdims=False, ord=2):
    if ord == 2:
        return tf.sqrt(tf.reduce_sum(tf.square(tf.abs(x)), axis=axis, keepdims=keepdims))
    if ord == math.inf:
        return tf.reduce_max(tf.abs(x), axis=axis, keepdims=keepdims)
    if ord == -math.inf:
        return tf.reduce_min(tf.abs(x), axis=axis, keepdims=keepdims)
    if ord == 1:
        return tf.reduce_sum(tf.abs(x), axis=axis, keepdims=keepdims)
    return tf.reduce_sum(tf.abs(x) ** ord, axis=axis, keepdims=keepdims) ** (1.0 / ord)


def _matrix_norm(x, /, *, keepdims=False, ord="fro"):
    axes = (-2, -1)
    if ord == "fro":
        return _vector_norm(x, axis=axes, keepdims=keepdims)
    if ord in (1, -1, math.inf, -math.inf):
        summed = tf.reduce_sum(tf.abs(x), axis=-2 if ord in (1, -1) else -1, keepdims=True)
        pick = tf.reduce_max if ord > 0 else tf.reduce_min
        result = pick(summed, axis=-1 if ord in (1, -1) else -2, keepdims=True)
    else:
        singular = tf.linalg.svd(x, compute_uv=False)
        if ord == "nuc":
            result = tf.reduce_sum(singular, axis=-1)
        elif ord in (2, -2):
            result = (tf.reduce_max if ord == 2 else tf.reduce_min)(singular, axis=-1)
        else:
            raise ValueError(
                f"linalg.matrix_norm(ord=...): expected 'fro', 'nuc', 1, -1, 2, -2, inf or -inf; got {ord!r}"
            )
        result = result[..., None, None]
    return result if keepdims else tf.squeeze(result, axis=axes)


def _solve(x1, x2, /):
    if len(x2.shape) == 1:  # a vector right-hand side (the array API's rule)
        return tf.linalg.solve(x1, x2[:, None])[..., 0]
    batch = tf.broadcast_static_shape(x1.shape[:-2], x2.shape[:-2])
    return tf.linalg.solve(
        tf.broadcast_to(x1, [*batch, *x1.shape[-2:]]), tf.broadcast_to(x2, [*batch, *x2.shape[-2:]])
    )


def _slogdet(x, /):
    return tf.linalg.slogdet(x)


def _matrix_power(x, n, /):
    if n < 0:
        x, n = tf.linalg.inv(x), -n
    result = tf.eye(x.shape[-1], batch_shape=x.shape[:-2], dtype=x.dtype)
    for _ in range(n):
        result = tf.matmul(result, x)
    return result


def _trace(x, /, *, offset=0, dtype=None):
    return tf.reduce_sum(_diagonal(x, offset=offset), axis=-1)


def _diagonal(x, /, *, offset=0):
    return tf.linalg.diag_part(x, k=offset)


def _cross(x1, x2, /, *, axis=-1):
    if axis != -1:
        return tf.experimental.numpy.moveaxis(
            tf.linalg.cross(tnp.moveaxis(x1, axis, -1), tnp.moveaxis(x2, axis, -1)), -1, axis
        )
    return tf.linalg.cross(x1, x2)


def _eigh(x, /):
    return tf.linalg.eigh(x)


def _svd(x, /, *, full_matrices=True):
    s, u, v = tf.linalg.svd(x, full_matrices=full_matrices)
    return u, s, tf.linalg.adjoint(v)


linalg = types.SimpleNamespace(
    vector_norm=_vector_norm,
    matrix_norm=_matrix_norm,
    solve=_solve,
    slogdet=_slogdet,
    matrix_power=_matrix_power,
    trace=_trace,
    diagonal=_diagonal,
    cross=_cross,
    eigh=_eigh,
    svd=_svd,
    det=tf.linalg.det,
    inv=tf.linalg.inv,
    cholesky=tf.linalg.cholesky,
    pinv=tf.linalg.pinv,
    eigvalsh=tf.linalg.eigvalsh,
    svdvals=lambda x, /: tf.linalg.svd(x, compute_uv=False),
    outer=lambda x1, x2, /: tf.tensordot(x1, x2, axes=0),
    matmul=tnp.matmul,  # 1-d operands too, as the array API's (tf.linalg.matmul refuses them)
    matrix_transpose=matrix_transpose,
    tensordot=tnp.tensordot,
    vecdot=vecdot,
)


def __getattr__(name):
    try:
        return getattr(tnp, name)
    except AttributeError:
        raise AttributeError(
            f"array_namespace(x).{name}: TensorFlow's array namespace (tf.experimental.numpy, completed by "
            "diffinterface.families.tensorflow_namespace) has no function of that name"
        ) from None
