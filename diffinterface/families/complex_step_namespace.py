"""numpy's namespace at a complex-step point: each function the continuation of its real self, or refused.

What :func:`diffinterface.array_namespace` gives for numpy arrays while
``AutoFiniteDiff(method="complex")`` evaluates f at ``x + i h t`` (see
:mod:`.complex_step`). On real arrays every function is numpy's own. On
complex ones, where numpy's complex function is not the analytic continuation
of the real one:

- ``abs`` is ``z sign(Re z)``, ``sign``, ``floor``, ``ceil``, ``trunc``,
  ``round`` and ``signbit`` act on the real part (their derivative is 0),
  ``real`` and ``conj`` are the identity and ``imag`` zero (on a real value);
- comparisons, ``nonzero``, ``count_nonzero``, ``any`` and ``all`` read the
  real parts (``max``, ``min``, ``maximum``, ``minimum``, ``sort``,
  ``argmax``, ``clip``... are numpy's, which order complex numbers by their
  real parts first);
- ``hypot``, ``atan2``, ``copysign``, ``logaddexp``, ``floor_divide``,
  ``remainder``, ``nextafter``, ``var``, ``std`` and ``vecdot`` are written
  with analytic operations;
- ``astype`` and ``asarray`` to a real floating dtype keep the step (to the
  complex dtype of that precision);
- ``linalg`` and ``fft``: :mod:`.complex_step_linalg`.

    >>> import numpy as np
    >>> z = np.array([-2.0 + 1e-20j, 3.0 + 1e-20j])
    >>> abs(z).imag.tolist(), greater(z, 0.0).tolist(), conj(z).imag.tolist()
    ([-1e-20, 1e-20], [False, True], [1e-20, 1e-20])
"""

from __future__ import annotations

import numpy as np

from .complex_step import any_complex, complex_dtype_of, real_part, require_real_values
from .complex_step_linalg import fft, linalg  # noqa: F401 - the namespace's submodules


def _on_real_part(name, function):
    """numpy's ``function`` of the real parts (a function without derivative: comparisons...)."""

    def on_real_parts(*arrays, **keywords):
        if any_complex(*arrays):
            arrays = tuple(real_part(a) for a in require_real_values(name, *arrays))
        return function(*arrays, **keywords)

    on_real_parts.__name__ = name
    return on_real_parts


def _constant(name, function):
    """numpy's ``function`` (floor, sign...) of the real part, in the complex dtype: derivative 0."""

    def of_real_part(z, /, **keywords):
        if not np.iscomplexobj(z):
            return function(z, **keywords)
        (z,) = require_real_values(name, z)
        return function(z.real, **keywords).astype(z.dtype)

    of_real_part.__name__ = name
    return of_real_part


equal, not_equal, greater, greater_equal, less, less_equal, nonzero, count_nonzero, any, all = (
    _on_real_part(name, getattr(np, name))
    for name in (
        "equal",
        "not_equal",
        "greater",
        "greater_equal",
        "less",
        "less_equal",
        "nonzero",
        "count_nonzero",
        "any",
        "all",
    )
)
signbit = _on_real_part("signbit", np.signbit)
sign, floor, ceil, trunc, round = (
    _constant(name, getattr(np, name)) for name in ("sign", "floor", "ceil", "trunc", "round")
)
around = round


def abs(x, /):  # noqa: A001 - the array API's name
    if not np.iscomplexobj(x):
        return np.abs(x)
    require_real_values("abs", x)
    return np.where(x.real < 0, -x, x)


absolute = fabs = abs


def real(x, /):
    return require_real_values("real", x)[0] if np.iscomplexobj(x) else np.real(x)


def conj(x, /):
    return require_real_values("conj", x)[0] if np.iscomplexobj(x) else np.conj(x)


conjugate = conj


def imag(x, /):
    if not np.iscomplexobj(x):
        return np.imag(x)
    return np.zeros_like(require_real_values("imag", x)[0])


def angle(z, deg=False):
    if not np.iscomplexobj(z):
        return np.angle(z, deg)
    require_real_values("angle", z)
    return np.where(z.real < 0, 180.0 if deg else np.pi, 0.0).astype(z.dtype)


def hypot(x1, x2, /):
    if not any_complex(x1, x2):
        return np.hypot(x1, x2)
    x1, x2 = require_real_values("hypot", x1, x2)
    return np.sqrt(x1 * x1 + x2 * x2)


def atan2(x1, x2, /):
    if not any_complex(x1, x2):
        return np.atan2(x1, x2)
    y, x = require_real_values("atan2", x1, x2)
    y, x = np.asarray(y) + 0j * x, np.asarray(x) + 0j * y
    with np.errstate(divide="ignore", invalid="ignore"):
        # atan(y / x) away from the y axis, pi/2 - atan(x / y) near it: no division by a small part
        mostly_x = np.abs(x.real) >= np.abs(y.real)
        half_turn = np.where(y.real >= 0, np.pi, -np.pi) * (x.real < 0)
        return np.where(
            mostly_x,
            np.arctan(y / x) + half_turn,
            np.where(y.real >= 0, np.pi / 2, -np.pi / 2) - np.arctan(x / y),
        )


arctan2 = atan2


def copysign(x1, x2, /):
    if not any_complex(x1, x2):
        return np.copysign(x1, x2)
    require_real_values("copysign", x1, x2)
    return abs(x1) * np.where(np.signbit(real_part(x2)), -1.0, 1.0)


def logaddexp(x1, x2, /):
    if not any_complex(x1, x2):
        return np.logaddexp(x1, x2)
    # the larger plus log1p(exp(-|difference|)): numpy's maximum orders by the real parts
    return np.maximum(x1, x2) + np.log1p(np.exp(-abs(x1 - x2)))


def floor_divide(x1, x2, /):
    if not any_complex(x1, x2):
        return np.floor_divide(x1, x2)
    x1, x2 = require_real_values("floor_divide", x1, x2)
    quotient = np.floor_divide(real_part(x1), real_part(x2))
    return quotient.astype(np.result_type(x1, x2))


def remainder(x1, x2, /):
    if not any_complex(x1, x2):
        return np.remainder(x1, x2)
    return x1 - x2 * floor_divide(x1, x2)


def nextafter(x1, x2, /):
    if not any_complex(x1, x2):
        return np.nextafter(x1, x2)
    x1, x2 = require_real_values("nextafter", x1, x2)
    return x1 + (np.nextafter(real_part(x1), real_part(x2)) - real_part(x1))


def var(x, /, *, axis=None, correction=0.0, keepdims=False, ddof=None):
    if not np.iscomplexobj(x):
        return np.var(x, axis=axis, ddof=correction if ddof is None else ddof, keepdims=keepdims)
    deviation = x - np.mean(x, axis=axis, keepdims=True)
    count = np.size(x) // np.size(np.sum(deviation, axis=axis))
    squares = np.sum(deviation * deviation, axis=axis, keepdims=keepdims)
    return squares / (count - (correction if ddof is None else ddof))


def std(x, /, *, axis=None, correction=0.0, keepdims=False, ddof=None):
    if not np.iscomplexobj(x):
        return np.std(x, axis=axis, ddof=correction if ddof is None else ddof, keepdims=keepdims)
    return np.sqrt(var(x, axis=axis, correction=correction, keepdims=keepdims, ddof=ddof))


vecdot = linalg.vecdot


def vdot(a, b, /):
    if not any_complex(a, b):
        return np.vdot(a, b)
    require_real_values("vdot", a)  # numpy conjugates a
    return np.sum(np.ravel(a) * np.ravel(b))


def astype(x, dtype, /, *, copy=True, device=None):
    if np.iscomplexobj(x) and np.dtype(dtype).kind in "fc":
        return x.astype(complex_dtype_of(dtype), copy=copy)
    if np.iscomplexobj(x):  # an integer or bool: of the real part
        (x,) = require_real_values("astype", x)
        return x.real.astype(dtype, copy=copy)
    return np.astype(x, dtype, copy=copy)


def asarray(obj, /, *, dtype=None, device=None, copy=None):
    if dtype is not None and np.iscomplexobj(obj):
        return astype(np.asarray(obj, copy=copy), dtype, copy=False)
    return np.asarray(obj, dtype=dtype, copy=copy)


def __getattr__(name):
    # everything else is numpy's: a name read once is kept here, so later reads are plain module
    # attributes (functions call ``xp.sin`` on every evaluation)
    value = getattr(np, name)
    globals()[name] = value
    return value
