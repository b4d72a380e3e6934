"""Preparation objects: what an operator decided once, and the check that a call still fits it.

``prepare_gradient(f, backend, x)`` returns a :class:`Preparation` holding the
adapter's prepared implementation (``impl``) and a compact key of the call it
was made for: the function object, the backend, x's type, shape and dtype,
the tangents' count, types, shapes and dtypes, each context's kind (for a
``Constant`` its value's family, shape and dtype: a Python float, a NumPy
scalar and a 0-d array of one dtype are the same kind) and ``y``'s. By
default (``strict=True``) every prepared call compares its arguments with the
key, at a cost of a few attribute reads, and a mismatch raises
:class:`~diffinterface.PreparationMismatchError` listing every slot.
``strict=False`` skips the comparison, at the caller's own risk: a call that
does not fit may then return wrong results.

    >>> import numpy as np, diffinterface as di
    >>> f = lambda x: (x ** 2).sum()
    >>> prep = di.prepare_gradient(f, di.AutoFiniteDiff(), np.ones(3))
    >>> di.gradient(f, di.AutoFiniteDiff(), np.ones(4), prep=prep)
    Traceback (most recent call last):
    ...
    diffinterface.errors.PreparationMismatchError: prep: the call does not match the preparation of gradient:
      f: matches
      backend: matches
      x: MISMATCH, prepared numpy.ndarray float64 (3,), given numpy.ndarray float64 (4,)
      tangents: matches
      contexts: matches
      y: matches
    (prepare again for these arguments, or prepare with strict=False to skip this check at your own risk)
"""

from __future__ import annotations

from types import MethodType

import numpy as np

from ..arrays import dtype_name, family_of, is_array, shape_of
from ..contexts import Context
from ..errors import PreparationMismatchError


def _array_key(a):
    """(type, dtype, shape) of an array; None for None.

    A Python float, a NumPy scalar and a 0-d ndarray are one type here: numpy
    arithmetic turns one into another (``np.array(0.7) + 0.25`` is an ``np.float64``).
    """
    if a is None:
        return None
    cls, shape = type(a), shape_of(a)
    if not shape and (cls is float or cls is np.ndarray or isinstance(a, np.generic)):
        return (_NUMPY_SCALAR, dtype_name(a), shape)
    return (cls.__module__ + "." + cls.__qualname__, dtype_name(a), shape)


_NUMPY_SCALAR = "numpy scalar"


def _context_key(c):
    """A context's kind: its class and, for array-like values, their family, dtype and shape."""
    value = c.value
    if is_array(value):
        return (type(c).__name__, family_of(value), dtype_name(value), shape_of(value))
    return (type(c).__name__, type(value).__module__ + "." + type(value).__qualname__)


def signature(f, backend, x, tangents, contexts, y):
    """The slots of a call, as comparable values (the slow path and the messages use it)."""
    return {
        "f": f,
        "backend": backend,
        "x": _array_key(x),
        "tangents": (
            None if tangents is None
            else tuple(_array_key(t) for t in tangents) if isinstance(tangents, tuple)
            else ("not a tuple", type(tangents).__name__)
        ),
        "contexts": tuple(_context_key(c) if isinstance(c, Context) else ("not a context", type(c).__name__)
                          for c in contexts),
        "y": _array_key(y),
    }


def _format(slot, value):
    if value is None:
        return "none"
    if slot == "x" or slot == "y":
        cls, dtype, shape = value
        return f"{cls} {dtype} {shape}"
    if slot == "tangents" and value and isinstance(value[0], tuple):
        return f"{len(value)} of [" + ", ".join(f"{d} {s}" for _, d, s in value) + "]"
    return repr(value)


def _same(slot, prepared, given):
    if slot == "f":
        # bound methods are new objects at each attribute access: compare their function and instance
        return given is prepared or (type(given) is MethodType and given == prepared)
    return given == prepared


#: what a fast-path runner returns when the call does not fit (the slow path then explains why)
MISMATCH = object()


def _exact(a):
    """``(class, shape, dtype)`` read as attributes: the happy path's comparison, before any normalizing."""
    return a.__class__, getattr(a, "shape", None), getattr(a, "dtype", None)


def _fits_exactly(a, exact):
    cls, shape, dtype = exact
    return a.__class__ is cls and (shape is None or (a.shape == shape and (a.dtype is dtype or a.dtype == dtype)))


def _tangents_check(tangents):
    """``fits(tangents) -> bool`` for a batch like ``tangents`` (None: no tangents)."""
    if tangents is None:
        return None
    exact = tuple(_exact(t) for t in tangents)
    keys = tuple(_array_key(t) for t in tangents)
    k = len(tangents)

    def fits(given):
        if given.__class__ is not tuple or len(given) != k:
            return False
        for t, e in zip(given, exact):
            if not _fits_exactly(t, e):
                # another class may still be the same kind (a float for an np.float64): compare the keys
                return tuple(_array_key(t) for t in given) == keys
        return True

    return fits


def _contexts_check(contexts):
    """``fits(contexts) -> bool`` for contexts of the kinds of ``contexts``."""
    exact = tuple((c.__class__, _exact(c.value)) for c in contexts)
    keys = tuple(_context_key(c) for c in contexts)
    n = len(contexts)

    def fits(given):
        if len(given) != n:
            return False
        for c, (cls, e) in zip(given, exact):
            if c.__class__ is not cls or not _fits_exactly(c.value, e):
                return tuple(_context_key(c) if isinstance(c, Context) else None for c in given) == keys
        return True

    return fits


def _runners(methods, f, backend, x, tangents, contexts, strict):
    """``(plain, valued)`` fast-path runners: ``run(f, backend, x, tangents, contexts)``.

    Each runs its prepared method, after the key comparison when ``strict``, and
    returns :data:`MISMATCH` when the call does not fit. Specialized here for
    the arguments the preparation was made for, so the common calls (an array
    x, no tangents, no contexts) cost a handful of identity tests and two
    attribute reads, in the one frame that also calls the method.
    """
    return tuple(_runner(method, f, backend, x, tangents, contexts, strict) for method in methods)


def _runner(fn, f, backend, x, tangents, contexts, strict):
    x_class = x.__class__
    x_shape = getattr(x, "shape", ())
    x_dtype = getattr(x, "dtype", None)
    simple = tangents is None and not contexts
    if not strict:
        if simple:
            return lambda f_, backend_, x_, tangents_, contexts_: fn(x_)

        def run(f_, backend_, x_, tangents_, contexts_):
            if contexts_:
                args = [c.value for c in contexts_]
                return fn(x_, *args) if tangents_ is None else fn(x_, tangents_, *args)
            return fn(x_) if tangents_ is None else fn(x_, tangents_)

        return run

    if simple and x_class is not float:

        def run(f_, backend_, x_, tangents_, contexts_):
            if (
                (f_ is f or (f_.__class__ is MethodType and f_ == f))
                and (backend_ is backend or backend_ == backend)
                and x_.__class__ is x_class
                and x_.shape == x_shape
                and (x_.dtype is x_dtype or x_.dtype == x_dtype)
                and tangents_ is None
                and not contexts_
            ):
                return fn(x_)
            return MISMATCH

        return run

    tangents_fit = _tangents_check(tangents)
    contexts_fit = _contexts_check(contexts)
    x_is_float = x_class is float

    def run(f_, backend_, x_, tangents_, contexts_):
        if not (
            (f_ is f or (f_.__class__ is MethodType and f_ == f))
            and (backend_ is backend or backend_ == backend)
            and x_.__class__ is x_class
            and (x_is_float or (x_.shape == x_shape and (x_.dtype is x_dtype or x_.dtype == x_dtype)))
            and (tangents_ is None if tangents_fit is None else (tangents_ is not None and tangents_fit(tangents_)))
            and (not contexts_ if not contexts else contexts_fit(contexts_))
        ):
            return MISMATCH
        args = [c.value for c in contexts_] if contexts_ else ()
        if tangents_ is None:
            return fn(x_, *args)
        return fn(x_, tangents_, *args)

    return run


class Preparation:
    """Result of ``prepare_<operator>``; pass it back as ``prep=``.

    Attributes: ``operator`` (its family's name), ``backend``, ``impl`` (the
    object whose methods do the numeric work), ``spec`` (output shape and
    dtype, when it was needed), ``strict``.
    """

    __slots__ = ("op", "backend", "impl", "spec", "strict", "methods", "runners", "recorded")

    def __init__(self, op, f, backend, x, tangents, contexts, y, impl, spec, strict):
        self.op = op
        self.backend = backend
        self.impl = impl
        self.spec = spec
        self.strict = bool(strict)
        #: (plain, valued) prepared methods, looked up once
        self.methods = (getattr(impl, op.plain), getattr(impl, op.valued))
        self.recorded = signature(f, backend, x, tangents, contexts, y)
        #: (plain, valued) fast paths of the prepared call (see :func:`_runners`)
        self.runners = _runners(self.methods, f, backend, x, tangents, contexts, self.strict)

    @property
    def operator(self):
        return self.op.name

    def __repr__(self):
        return f"<{self.op.name} preparation for {self.backend!r}{'' if self.strict else ' (strict=False)'}>"

    def check(self, op, f, backend, x, tangents, contexts, y):
        """Raise unless this preparation fits the call (the operator always; the rest when strict)."""
        if op is not self.op:
            raise PreparationMismatchError(
                f"prep: this preparation was made by prepare_{self.op.name}, "
                f"but it was passed to {op.name}; use prepare_{op.name}"
            )
        if not self.strict:
            return
        given = signature(f, backend, x, tangents, contexts, y)
        lines, mismatch = [], False
        for slot, prepared in self.recorded.items():
            now = given[slot]
            if _same(slot, prepared, now):
                lines.append(f"  {slot}: matches")
            else:
                mismatch = True
                lines.append(f"  {slot}: MISMATCH, prepared {_format(slot, prepared)}, given {_format(slot, now)}")
        if mismatch:
            raise PreparationMismatchError(
                f"prep: the call does not match the preparation of {op.name}:\n" + "\n".join(lines)
                + "\n(prepare again for these arguments, or prepare with strict=False to skip this check "
                "at your own risk)"
            )
