"""Where f is evaluated at a complex-step point: numpy's one-source namespace turns complex-step safe.

The complex step (``AutoFiniteDiff(method="complex")``) evaluates a real ``f``
at ``x + i h t`` and reads the derivative from the imaginary part, which is
right only where every function f calls extends to complex numbers as the
analytic continuation of its real self. ``abs``, ``sign``, ``conj``,
comparisons, ``hypot``, ``var``, the norms... do not, in numpy: their complex
meaning is another function. While the finite-difference backend evaluates f
at such a point (:func:`at_complex_points`), ``di.array_namespace`` of numpy
arrays gives :mod:`.complex_step_namespace`, where each of them is its real
function's continuation (``abs(z) = z sign(Re z)``, comparisons of the real
parts, ...) or refuses by name (:func:`refusal`). Everywhere else it gives numpy.

A value whose imaginary part is larger than a step can make it is a genuinely
complex number (a complex constant, ``exp(1j * x)``); for it the continuation
of ``abs`` or ``real`` cannot be read off the value, so the functions that
need a real value refuse it (:func:`require_real_values`).

    >>> import numpy as np
    >>> from diffinterface.families import array_namespace
    >>> z = np.array([-2.0 + 1e-20j, 3.0 + 1e-20j])
    >>> array_namespace(z).abs(z).dtype.name
    'float64'
    >>> xp_abs = at_complex_points(lambda z: array_namespace(z).abs(z))
    >>> xp_abs(z).imag.tolist()
    [-1e-20, 1e-20]
"""

from __future__ import annotations

import contextvars

import numpy as np

from ..errors import UnsupportedError

#: the largest ratio of imaginary to real parts a step makes in an array of real values
#: (None: not at a complex-step point)
_RATIO: contextvars.ContextVar = contextvars.ContextVar("complex_step_ratio", default=None)
# a step h = rel_step |x| makes imaginary parts of about rel_step (x f'/f) times the values: far
# below this unless a value sits at its own zero (a kink of abs, sign: no derivative there)
_SMALLEST_RATIO = 1e-3


def at_complex_points(f, rel_step=None):
    """``f`` evaluated with numpy's namespace made complex-step safe (for steps of ``rel_step``)."""
    return AtComplexPoints(f, max(_SMALLEST_RATIO, float(rel_step or 0.0) ** 0.5))


class AtComplexPoints:
    """``f`` called with the namespace made complex-step safe: a class, so that it pickles by
    reference to this module, for workers in other processes (a closure would carry the context
    variable, which does not pickle)."""

    __slots__ = ("f", "ratio")

    def __init__(self, f, ratio):
        self.f, self.ratio = f, ratio

    def __call__(self, *args):
        token = _RATIO.set(self.ratio)
        try:
            return self.f(*args)
        finally:
            _RATIO.reset(token)


def at_complex_step():
    """True while f is evaluated at a complex-step point (inside :func:`at_complex_points`)."""
    return _RATIO.get() is not None


def refusal(name, why):
    """The error of the namespace's function ``name`` that has no complex-step meaning, for ``why``."""
    return UnsupportedError(
        f"array_namespace(x).{name}: AutoFiniteDiff(method='complex') evaluates f at complex "
        f"points x + i·h·t, where {why}, so the derivative would be silently wrong; use "
        "AutoFiniteDiff(method='central') or AutoFiniteDiff(method='forward'), which evaluate f "
        "at real points"
    )


def require_real_values(name, *arrays):
    """``arrays``, after checking that each complex one holds the complex-step values of real numbers."""
    ratio = _RATIO.get() or _SMALLEST_RATIO
    for a in arrays:
        if not np.iscomplexobj(a) or not np.size(a):
            continue
        a = np.asarray(a)
        if np.max(np.abs(a.imag)) > ratio * np.max(np.abs(a.real)):
            raise refusal(
                name,
                "it received genuinely complex values (imaginary parts far larger than the step "
                "makes), whose real function has no continuation to read",
            )
    return arrays


def real_part(a):
    """The real part of a complex array (a real array or a number as it is)."""
    return a.real if np.iscomplexobj(a) else a


def any_complex(*arrays):
    return any(np.iscomplexobj(a) for a in arrays)


def complex_dtype_of(dtype):
    """The complex dtype holding a real floating ``dtype``'s values with their steps (float32: complex64)."""
    dtype = np.dtype(dtype)
    return np.result_type(dtype, np.complex64) if dtype.kind == "f" else dtype
