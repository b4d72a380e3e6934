"""The array API's functions over ``autograd.numpy``, each with derivatives in both modes.

The names autograd lacks or cannot differentiate, written with its
primitives; the package (:mod:`diffinterface.families.autograd_namespace`)
re-exports them and falls through to ``autograd.numpy`` for the rest.
"""

from __future__ import annotations

import builtins
import math

import autograd.numpy as anp
import numpy as np
from autograd.extend import defjvp, defvjp, primitive
from autograd.numpy.numpy_vjps import unbroadcast_f
from autograd.tracer import getval, isbox


def _axes(axis, ndim):
    """``axis`` (None, an int or a tuple) as a tuple of non-negative ints."""
    if axis is None:
        return tuple(range(ndim))
    if isinstance(axis, int):
        axis = (axis,)
    return tuple(a % ndim if ndim else a for a in axis)


def _index_along(axis, ndim, index):
    """An indexing tuple that applies ``index`` along ``axis`` and keeps the other axes whole."""
    key = [slice(None)] * ndim
    key[axis] = index
    return tuple(key)


# -- creation and data types ----------------------------------------------------------------


@primitive
def _cast(x, dtype):
    # a cotangent or tangent may reach here as a Python float (a scalar leaf's seed), which has no
    # astype
    return x.astype(dtype) if hasattr(x, "astype") else np.asarray(x, dtype=dtype)


# autograd's own astype has no forward-mode rule; this cast differentiates in both modes.
defvjp(_cast, lambda ans, x, dtype: lambda g: _cast(g, getval(x).dtype))
defjvp(_cast, lambda g, ans, x, dtype: _cast(g, dtype))


def astype(x, dtype, /, *, copy=True, device=None):
    """``x`` as ``dtype``, differentiable in both modes (a cast to the same dtype returns ``x`` unless ``copy``)."""
    if np.dtype(getval(x).dtype) == np.dtype(dtype):
        return x * 1 if copy and isbox(x) else (np.array(x, copy=True) if copy else x)
    return _cast(x, dtype)


def asarray(obj, /, *, dtype=None, device=None, copy=None):
    """``obj`` as an array; a box stays the box it is (so its derivative flows on)."""
    if isbox(obj):
        return obj if dtype is None else astype(obj, dtype, copy=bool(copy))
    if isinstance(obj, (list, tuple)) and any(isbox(a) for a in obj):
        return stack([asarray(a, dtype=dtype) for a in obj])
    return np.asarray(obj, dtype=dtype, copy=copy)


def zeros_like(x, /, *, dtype=None, device=None):
    return np.zeros_like(getval(x), dtype=dtype)


def ones_like(x, /, *, dtype=None, device=None):
    return np.ones_like(getval(x), dtype=dtype)


def empty_like(x, /, *, dtype=None, device=None):
    return np.empty_like(getval(x), dtype=dtype)


def meshgrid(*arrays, indexing="xy"):
    """Coordinate grids, as broadcasts of the 1-D ``arrays`` (differentiable in each)."""
    n = len(arrays)
    shape = [builtins.int(getval(a).size) for a in arrays]
    if indexing == "xy" and n > 1:
        shape[0], shape[1] = shape[1], shape[0]
    grids = []
    for i, a in enumerate(arrays):
        axis = i if indexing != "xy" or n < 2 or i > 1 else 1 - i
        view = [1] * n
        view[axis] = -1
        grids.append(broadcast_to(anp.reshape(a, view), tuple(shape)))
    return grids


# -- elementwise --------------------------------------------------------------------------------


def positive(x, /):
    """``+x`` (a copy; ``x * 1`` keeps the sign of zeros and NaNs)."""
    return x * 1


def copysign(x1, x2, /):
    """The magnitude of ``x1`` with the sign bit of ``x2`` (differentiable in ``x1``)."""
    magnitude = anp.abs(x1)
    # where on the magnitudes themselves: a float64 -1.0/1.0 factor would promote float32 x1
    return anp.where(np.signbit(getval(x2)), -magnitude, magnitude)


def clip(x, /, min=None, max=None):
    """``x`` limited to ``[min, max]``; the bounds may be arrays (autograd's own clip differentiates x only)."""
    if min is not None:
        x = anp.maximum(x, min)
    if max is not None:
        x = anp.minimum(x, max)
    return x


@primitive
def hypot(x1, x2, /):
    """``sqrt(x1**2 + x2**2)`` without overflow, with derivatives in both modes."""
    return np.hypot(x1, x2)


# autograd.numpy's hypot has no forward-mode rule.
# A broadcast argument's cotangent is summed back to its shape (autograd's unbroadcast,
# differentiable).
defvjp(
    hypot,
    lambda ans, x1, x2: unbroadcast_f(x1, lambda g: g * x1 / ans),
    lambda ans, x1, x2: unbroadcast_f(x2, lambda g: g * x2 / ans),
)
defjvp(hypot, lambda g, ans, x1, x2: g * x1 / ans, lambda g, ans, x1, x2: g * x2 / ans)


# -- statistics ---------------------------------------------------------------------------------


def var(x, /, *, axis=None, correction=0.0, keepdims=False):
    """The variance, divided by ``N - correction``."""
    centered = x - anp.mean(x, axis=axis, keepdims=True)
    count = math.prod(getval(x).shape[a] for a in _axes(axis, anp.ndim(x)))
    return anp.real(anp.sum(centered * anp.conj(centered), axis=axis, keepdims=keepdims)) / (
        count - correction
    )


def std(x, /, *, axis=None, correction=0.0, keepdims=False):
    """The standard deviation, ``sqrt(var(x, ...))``."""
    return anp.sqrt(var(x, axis=axis, correction=correction, keepdims=keepdims))


def _cumulative_axis(x, axis, name):
    if axis is None:
        if anp.ndim(x) != 1:
            raise ValueError(
                f"{name}: axis: expected an axis for a {anp.ndim(x)}-d array; got None"
            )
        return 0
    return axis % anp.ndim(x)


def _with_initial(result, x, axis, initial, include_initial):
    if not include_initial:
        return result
    shape = list(getval(result).shape)
    shape[axis] = 1
    return anp.concatenate([np.full(shape, initial, dtype=getval(result).dtype), result], axis=axis)


def cumulative_sum(x, /, *, axis=None, dtype=None, include_initial=False):
    """Running sums along ``axis``, with a leading zero when ``include_initial``."""
    axis = _cumulative_axis(x, axis, "cumulative_sum")
    result = anp.cumsum(x if dtype is None else astype(x, dtype), axis=axis)
    return _with_initial(result, x, axis, 0, include_initial)


# -- linear algebra -----------------------------------------------------------------------------


def matrix_transpose(x, /):
    return anp.swapaxes(x, -1, -2)


def vecdot(x1, x2, /, *, axis=-1):
    """The dot product of vectors along ``axis``, conjugating ``x1``."""
    return anp.sum(anp.conj(x1) * x2, axis=axis)


# -- manipulation -------------------------------------------------------------------------------


def broadcast_to(x, /, shape):
    """``x`` repeated to ``shape`` (autograd's own fails on new leading axes in reverse mode)."""
    shape = tuple(shape)
    if getval(x).shape == shape:
        return x
    return x * np.ones(shape, dtype=np.result_type(getval(x).dtype, np.int8))


def broadcast_arrays(*arrays):
    shape = np.broadcast_shapes(*(getval(a).shape for a in arrays))
    return [broadcast_to(a, shape) for a in arrays]


def concat(arrays, /, *, axis=0):
    """Arrays joined along ``axis`` (``None``: flattened first)."""
    if axis is None:
        return anp.concatenate([anp.reshape(a, (-1,)) for a in arrays])
    return anp.concatenate(list(arrays), axis=axis)


def flip(x, /, *, axis=None):
    """``x`` with the order of elements reversed along ``axis`` (all axes for ``None``)."""
    ndim = anp.ndim(x)
    flipped = _axes(axis, ndim)
    return x[tuple(slice(None, None, -1) if i in flipped else slice(None) for i in range(ndim))]


def permute_dims(x, /, axes):
    return anp.transpose(x, tuple(axes))


def reshape(x, /, shape, *, copy=None):
    return anp.reshape(x, tuple(shape))


def squeeze(x, /, axis):
    return anp.squeeze(x, axis=axis)


def stack(arrays, /, *, axis=0):
    return anp.stack(list(arrays), axis=axis)


def unstack(x, /, *, axis=0):
    """The slices of ``x`` along ``axis``, as a tuple."""
    ndim = anp.ndim(x)
    axis = axis % ndim
    return tuple(x[_index_along(axis, ndim, i)] for i in range(getval(x).shape[axis]))


def roll(x, /, shift, *, axis=None):
    """``x`` shifted by ``shift`` along ``axis`` (flattened for ``None``), one axis at a time.

    autograd's own pullback negates ``shift`` and fails for a tuple of shifts.
    """
    if axis is None:
        return anp.reshape(roll(anp.reshape(x, (-1,)), shift, axis=0), getval(x).shape)
    axes = (axis,) if isinstance(axis, int) else tuple(axis)
    shifts = (shift,) * len(axes) if isinstance(shift, int) else tuple(shift)
    for step, along in zip(shifts, axes):
        x = anp.roll(x, step, axis=along)
    return x


def repeat(x, repeats, /, *, axis=None):
    """Each element of ``x`` repeated ``repeats`` times along ``axis`` (flattened first for ``None``), by indexing.

    autograd's own fails on 0-d ``x`` and on an array of repeats in reverse mode.
    """
    if axis is None:
        x, axis = anp.reshape(x, (-1,)), 0
    ndim = anp.ndim(x)
    axis = axis % ndim
    index = np.repeat(np.arange(getval(x).shape[axis]), np.asarray(getval(repeats)))
    return x[_index_along(axis, ndim, index)]


def tile(x, repetitions, /):
    """``x`` repeated ``repetitions[i]`` times along axis ``i``, the repetitions aligned with x's last axes.

    autograd's own pullback aligns them with the first axes: wrong when there
    are fewer repetitions than axes.
    """
    repetitions = tuple(repetitions)
    ndim = max(anp.ndim(x), len(repetitions))
    x = anp.reshape(x, (1,) * (ndim - anp.ndim(x)) + getval(x).shape)
    for axis, count in enumerate((1,) * (ndim - len(repetitions)) + repetitions):
        if count != 1:
            x = (
                anp.concatenate([x] * count, axis=axis)
                if count
                else x[_index_along(axis, ndim, slice(0, 0))]
            )
    return x


def take(x, indices, /, *, axis=None):
    """The elements of ``x`` at ``indices`` along ``axis`` (``None`` for 1-d ``x``)."""
    ndim = anp.ndim(x)
    if axis is None:
        if ndim != 1:
            raise ValueError(f"take: axis: expected an axis for a {ndim}-d array; got None")
        axis = 0
    return x[_index_along(axis % ndim, ndim, np.asarray(getval(indices)))]


def take_along_axis(x, indices, /, *, axis=-1):
    """The elements of ``x`` at ``indices`` (shaped like ``x`` but along ``axis``)."""
    indices = np.asarray(getval(indices))
    ndim = anp.ndim(x)
    axis = axis % ndim
    grids = list(np.ogrid[tuple(slice(n) for n in indices.shape)])
    grids[axis] = indices
    return x[tuple(grids)]


def diff(x, /, *, axis=-1, n=1, prepend=None, append=None):
    parts = [p for p in (prepend, x, append) if p is not None]
    joined = anp.concatenate(parts, axis=axis) if len(parts) > 1 else x
    return anp.diff(joined, n=n, axis=axis)


# -- searching and sorting -----------------------------------------------------------------------


def where(condition, x1, x2, /):
    return anp.where(getval(condition), x1, x2)


def sort(x, /, *, axis=-1, descending=False, stable=True):
    """``x`` sorted along ``axis``, gathered by its ``argsort`` (autograd's own sort is wrong on 2-d arrays)."""
    return take_along_axis(
        x, argsort(x, axis=axis, descending=descending, stable=stable), axis=axis
    )


def argsort(x, /, *, axis=-1, descending=False, stable=True):
    values = getval(x)
    if descending:
        # a stable descending order: reverse, sort stably, map back
        flipped = np.flip(values, axis=axis)
        order = np.argsort(flipped, axis=axis, kind="stable")
        return np.flip(values.shape[axis] - 1 - order, axis=axis)
    return np.argsort(values, axis=axis, kind="stable" if stable else None)


def _unique_not_differentiable(name):
    def refuse(x, /):
        if isbox(x):
            raise NotImplementedError(
                f"array_namespace(x).{name}: autograd has no derivative for {name}; "
                f"compute it on di.Constant data or outside the differentiated function"
            )
        return getattr(np, name)(x)

    refuse.__name__ = name
    return refuse


unique_all = _unique_not_differentiable("unique_all")
unique_counts = _unique_not_differentiable("unique_counts")
unique_inverse = _unique_not_differentiable("unique_inverse")
unique_values = _unique_not_differentiable("unique_values")


def _fall_through(name, autograd_module, numpy_module, prefix=""):
    """``autograd_module.name``, guarded where autograd has no derivative for it; else ``numpy_module.name``."""
    from autograd.core import VJPNode, primitive_vjps
    from autograd.tracer import notrace_primitives

    found = getattr(autograd_module, name, None)
    if found is None:
        try:
            return getattr(numpy_module, name)
        except AttributeError:
            raise AttributeError(
                f"array_namespace(x) over autograd has no {prefix}{name}"
            ) from None
    traced = getattr(found, "_is_autograd_primitive", False)
    if traced and found not in primitive_vjps and found not in notrace_primitives[VJPNode]:

        def refuse_boxes(*args, **kwargs):
            if any(isbox(a) for a in args) or any(isbox(v) for v in kwargs.values()):
                raise NotImplementedError(
                    f"array_namespace(x).{prefix}{name}: autograd has no derivative for {prefix}{name}; "
                    f"write it with other array-API functions, or use another backend (di.AutoJAX(), di.AutoTorch())"
                )
            return found(*args, **kwargs)

        refuse_boxes.__name__ = name
        return refuse_boxes
    return found
