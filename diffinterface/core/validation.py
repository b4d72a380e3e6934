"""The arguments of a call, checked once at preparation: each error names the argument, what was
expected and what was given.

:func:`validate` checks what every preparation shares (f, strict, the
contexts, has_aux, a real x or a pytree of them, y); the transforms of
:mod:`diffinterface.core.prepare` check what they own (a complex x, pytree
seeds), and the build checks the seeds of the call it builds.

    >>> import numpy as np, diffinterface as di
    >>> di.gradient(lambda x: x.sum(), di.AutoFiniteDiff(), np.arange(3))  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    TypeError: x: expected a real floating-point array (float32 or float64); got numpy int64 array ...
"""

from __future__ import annotations

from ..contexts import check_contexts
from ..errors import UnsupportedError
from ..families import (
    NUMBERS,
    describe,
    dtype_name,
    family_of,
    has_complex_leaf,
    is_array,
    shape_of,
)
from .foreign import require_family
from .output_tree import output_plan
from ..families import FLOAT_DTYPES, require_real_float
from .tree_input import x_tree


def require_has_aux(has_aux):
    """Raise unless ``has_aux`` is True or False."""
    if has_aux is not True and has_aux is not False:
        raise TypeError(f"has_aux: expected True or False; got {has_aux!r}")


def validate(call, adapter, strict):
    """Raise for what no transform owns: f, strict, has_aux, the contexts, a real x or pytree, y."""
    if not callable(call.f):
        raise TypeError(f"f: expected a callable; got {type(call.f).__name__}")
    if not isinstance(strict, bool):
        raise TypeError(f"strict: expected True or False; got {strict!r}")
    require_has_aux(call.has_aux)
    if call.has_aux and call.y is not None:
        raise TypeError(
            "has_aux: two-argument functions f(y, x) write their output into y and return no aux; "
            "return (y, aux) from a one-argument f(x) instead"
        )
    check_contexts(call.contexts)
    if has_complex_leaf(call.x):  # core/complex_convention.py checks x, y and seeds its own way
        return
    if is_array(call.x):
        check_x(call.x, adapter, call.op)
    else:
        x_tree(call.x, adapter, call.op)
    if call.y is not None:
        _check_y(call, adapter)


#: what to do with an x that is neither real floating-point nor complex (core/complex_convention.py takes those)
_REAL_X_ADVICE = "Convert an integer x yourself (x.astype(float))"


def check_x(x, adapter, op):
    if not is_array(x):
        raise TypeError(f"x: expected a float or an array; got {describe(x)}")
    require_real_float(x, "x", _REAL_X_ADVICE)
    family = family_of(x)
    if family not in adapter.families:
        raise TypeError(
            f"x: {type(adapter.backend).__name__} differentiates {' or '.join(adapter.families)} "
            f"arrays; got {describe(x)}"
        )
    if op.scalar_x and shape_of(x) != ():
        raise ValueError(f"x: {op.name} expects a scalar x (shape ()); got {describe(x)}")


def check_tangents(tangents, like, like_name, name="tangents", family=None):
    """Raise unless ``tangents`` is a non-empty tuple of real floating arrays shaped like ``like`` (a Spec).

    Each must have ``like``'s dtype too: derivatives are computed in that dtype,
    and a complex tangent for a real function has no real meaning (JAX would
    silently drop its imaginary part); and, given ``family``, be an array of
    that family (x's).
    """
    if not isinstance(tangents, tuple) or not tangents:
        raise TypeError(
            f"{name}: expected a non-empty tuple of arrays shaped like {like_name} (a batch; for one, "
            f"({name[:-1]},)); got {describe(tangents) if is_array(tangents) else type(tangents).__name__}"
        )
    for i, t in enumerate(tangents):
        if not is_array(t) or shape_of(t) != like.shape:
            raise ValueError(
                f"{name}[{i}]: expected an array shaped like {like_name}, {like.shape}; got {describe(t)}"
            )
        dtype = dtype_name(t)
        if dtype != like.dtype:
            kind = (
                "a real floating-point array"
                if dtype not in FLOAT_DTYPES
                else f"the dtype of {like_name}"
            )
            raise TypeError(
                f"{name}[{i}]: expected {kind}, {like.dtype} like {like_name}; got {describe(t)}. "
                "Convert it yourself: diffinterface does not change dtypes."
            )
        if family is not None:
            require_family(t, family, f"{name}[{i}]", like_name)


def _check_y(call, adapter):
    """Raise unless ``call.y`` is an output buffer a two-argument ``f(y, x)`` can write."""
    op, y = call.op, call.y
    if not op.allows_y:
        raise TypeError(f"y: {op.name} does not take two-argument functions f(y, x)")
    if not adapter.inplace:
        raise UnsupportedError(
            f"y: {type(call.backend).__name__} cannot differentiate two-argument functions f(y, x) "
            "that write into y (check_inplace(backend) is False); return the output from f instead"
        )
    if not is_array(y) and output_plan(y, NUMBERS) is not None:
        raise TypeError(
            f"y: a two-argument f(y, x) writes into one array y; got a pytree {type(y).__name__}. "
            "For a pytree output, return it from a one-argument f(x) instead"
        )
    if not is_array(y) or family_of(y) != family_of(call.x):
        raise TypeError(
            f"y: expected an output buffer of the same array family as x; got {describe(y)}"
        )
