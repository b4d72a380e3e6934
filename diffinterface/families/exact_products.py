"""Products whose derivatives stay exact where factors are zero, for namespaces whose own do not.

autograd's ``prod`` and TensorFlow's ``cumprod`` differentiate by dividing the
product by each factor: where a factor is zero that gives NaN (autograd) or a
silently wrong zero (TensorFlow's cumulative product, and the second
derivative of its ``reduce_prod``). These functions use only multiplications,
so every order of derivative is exact in both modes. They take the namespace
they compute with (it needs ``astype``, ``permute_dims``, ``reshape``,
``concat``, ``ones``, ``unstack`` and ``stack``) and read only static shapes.

Examples
--------
>>> import numpy as np
>>> from diffinterface.families import exact_products
>>> from diffinterface.families import autograd_namespace as xp
>>> exact_products.prod(xp, np.array([[2.0, 3.0], [0.0, 5.0]]), axis=1)
array([6., 0.])
"""

from __future__ import annotations


def _axes(axis, ndim):
    if axis is None:
        return tuple(range(ndim))
    return tuple(a % ndim for a in ((axis,) if isinstance(axis, int) else axis))


def prod(xp, x, /, *, axis=None, dtype=None, keepdims=False):
    """The product of ``x`` over ``axis``, as a tree of pairwise products."""
    x = x if dtype is None else xp.astype(x, dtype)
    shape = tuple(x.shape)
    axes = _axes(axis, len(shape))
    kept = tuple(a for a in range(len(shape)) if a not in axes)
    kept_shape = tuple(shape[a] for a in kept)
    factors = xp.reshape(xp.permute_dims(x, axes + kept), (-1,) + kept_shape)
    count = factors.shape[0]
    if count == 0:
        factors, count = xp.ones((1,) + kept_shape, dtype=x.dtype), 1
    while count > 1:
        if count % 2:
            factors = xp.concat([factors, xp.ones((1,) + kept_shape, dtype=x.dtype)], axis=0)
        factors = factors[0::2] * factors[1::2]
        count = (count + 1) // 2
    result = factors[0]
    if keepdims:
        result = xp.reshape(result, tuple(1 if a in axes else shape[a] for a in range(len(shape))))
    return result


def cumulative_prod(xp, x, /, *, axis=None, dtype=None, include_initial=False):
    """Running products of ``x`` along ``axis``, one multiplication per step."""
    if axis is None:
        if len(x.shape) != 1:
            raise ValueError(
                f"cumulative_prod: axis: expected an axis for a {len(x.shape)}-d array; got None"
            )
        axis = 0
    axis = axis % len(x.shape)
    x = x if dtype is None else xp.astype(x, dtype)
    steps = []
    if include_initial:
        steps.append(xp.ones(tuple(n for a, n in enumerate(x.shape) if a != axis), dtype=x.dtype))
    running = None
    for item in xp.unstack(x, axis=axis):
        running = item if running is None else running * item
        steps.append(running)
    if not steps:
        return x * 1
    return xp.stack(steps, axis=axis)
