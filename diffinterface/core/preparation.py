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

from ..families import FAMILIES, dtype_name, family_of, is_array, shape_of
from ..contexts import Context
from ..errors import PreparationMismatchError
from .pytree import TreeKey, tree_key


def _array_key(a):
    """(type, dtype, shape) of an array, a :class:`TreeKey` for a pytree; None for None.

    A Python float, a NumPy scalar and a 0-d ndarray are one type here: numpy
    arithmetic turns one into another (``np.array(0.7) + 0.25`` is an ``np.float64``).
    """
    if a is None:
        return None
    if not is_array(a):
        return tree_key(a)
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
    if isinstance(value, TreeKey):
        return repr(value)
    if slot == "x" or slot == "y":
        cls, dtype, shape = value
        return f"{cls} {dtype} {shape}"
    if slot == "tangents" and value and all(isinstance(v, tuple) for v in value):
        return f"{len(value)} of [" + ", ".join(f"{d} {s}" for _, d, s in value) + "]"
    return repr(value)


def _same(slot, prepared, given):
    if slot == "f":
        # bound methods are new objects at each attribute access: compare their function and instance
        return given is prepared or (type(given) is MethodType and given == prepared)
    return given == prepared


def _raw_key(a):
    """(class, shape, dtype) as the objects themselves: compared by the fast check without conversions."""
    return (a.__class__, getattr(a, "shape", None), getattr(a, "dtype", None))


def _raw_matches(a, key):
    cls, shape, dtype = key
    return a.__class__ is cls and (shape is None or (a.shape == shape and a.dtype == dtype))


def _mismatch_line(slot, prepared, given):
    if slot == "x" and isinstance(prepared, TreeKey):
        return f"  x: MISMATCH, {prepared.difference(given)}"
    if slot == "tangents" and isinstance(prepared, tuple) and any(isinstance(p, TreeKey) for p in prepared):
        if isinstance(given, tuple) and len(given) == len(prepared):
            i = next(i for i, (p, g) in enumerate(zip(prepared, given)) if p != g)
            if isinstance(prepared[i], TreeKey):
                return f"  tangents: MISMATCH, tangents[{i}]: {prepared[i].difference(given[i])}"
    return f"  {slot}: MISMATCH, prepared {_format(slot, prepared)}, given {_format(slot, given)}"


def _metadata_attribute(x):
    """The attribute of ``x`` whose ``shape`` and ``dtype`` are plain reads (None: ``x``'s own).

    Its family says (:class:`~diffinterface.families.Family`); the attribute must
    hold x's very shape and dtype, else x's own are read.
    """
    name = FAMILIES[family_of(x)].metadata if family_of(x) in FAMILIES else None
    if name is None:
        return None
    meta = getattr(x, name, None)
    if getattr(meta, "shape", None) != x.shape or getattr(meta, "dtype", None) != x.dtype:
        return None
    return name


def _matcher(f, backend, x, tangents, contexts, tree=None, seed_tree=None):
    """``matches(f, backend, x, tangents, contexts) -> bool``: the check of the general runner.

    Specialized at preparation for the arguments it was made for: identity
    tests and the raw ``shape``/``dtype`` attributes, no conversion. False
    sends the call to the slow path, which compares the full signature (there a
    Python float, a NumPy scalar and a 0-d array are one kind) and raises on a
    real mismatch.
    """
    x_class = x.__class__
    x_shape = getattr(x, "shape", ())
    x_dtype = getattr(x, "dtype", None)
    n_ctx = len(contexts)
    ctx_keys = tuple((c.__class__, *_raw_key(c.value)) for c in contexts)
    n_seeds = None if tangents is None else len(tangents)
    seed_keys = None if tangents is None else tuple(_raw_key(t) for t in tangents)

    def seeds_and_contexts_match(tangents, contexts):
        if tangents is None:
            if n_seeds is not None:
                return False
        elif tangents.__class__ is not tuple or len(tangents) != n_seeds:
            return False
        else:
            for t, key in zip(tangents, seed_keys):
                if not _raw_matches(t, key):
                    return False
        if len(contexts) != n_ctx:
            return False
        for c, (context_class, cls, shape, dtype) in zip(contexts, ctx_keys):
            if c.__class__ is not context_class:
                return False
            v = c.value
            if v.__class__ is not cls or (shape is not None and (v.shape != shape or v.dtype != dtype)):
                return False
        return True

    if seed_tree is not None:
        # cotangents shaped like a pytree output y: the raw class test above passes any dict, so
        # each is checked against the output plan too (structure, leaf shapes and dtypes)
        seed_fits, classes_match = seed_tree.fits, seeds_and_contexts_match

        def seeds_and_contexts_match(tangents, contexts):
            return classes_match(tangents, contexts) and all(map(seed_fits, tangents))

    if tree is not None:
        # tangents shaped like a tree x are checked leaf by leaf (cotangents are checked above)
        fits = tree.fits
        tree_seeds = seed_tree is None and tangents is not None and not all(is_array(t) for t in tangents)

        def tree_seeds_and_contexts_match(tangents_, contexts_):
            if not tree_seeds:
                return seeds_and_contexts_match(tangents_, contexts_)
            if tangents_.__class__ is not tuple or len(tangents_) != n_seeds or not all(map(fits, tangents_)):
                return False
            return seeds_and_contexts_match(tangents, contexts_)

        return tree.matcher(f, backend, tree_seeds_and_contexts_match)

    if x_class is float:

        def matches(f_, backend_, x_, tangents_, contexts_):
            return (
                (f_ is f or (f_.__class__ is MethodType and f_ == f))
                and (backend_ is backend or backend_ == backend)
                and x_.__class__ is float
                and seeds_and_contexts_match(tangents_, contexts_)
            )

    else:

        def matches(f_, backend_, x_, tangents_, contexts_):
            return (
                (f_ is f or (f_.__class__ is MethodType and f_ == f))
                and (backend_ is backend or backend_ == backend)
                and x_.__class__ is x_class
                and x_.shape == x_shape
                and x_.dtype == x_dtype
                and seeds_and_contexts_match(tangents_, contexts_)
            )

    return matches


def _anything(*call):
    return True


def _runner(method, leave, f, backend, x, tangents, contexts, tree, strict, seed_tree=None):
    """``run(f, backend, x, tangents, contexts)``: the prepared call in one frame, check included.

    Returns ``method``'s result. A call that fails the strict check, and an
    exception from ``method``, go to ``leave(error, f, backend, x, tangents,
    contexts)`` (``error`` None for a mismatch): the slow path, which checks in
    full, or explains the error (``core/call.py``). The ``try`` costs nothing
    until ``method`` raises. ``strict=False`` compares nothing. The common
    shapes of a strict call (an array x with no contexts, and no tangents or
    one) get their own runner, the check written out inline; x's shape and
    dtype are read where they are plain attributes (:func:`_metadata_attribute`).
    A dtype is compared by identity first: numpy's dtypes of one kind are one
    object, and ``==`` (which accepts dtype-like strings) is the slower test.
    """
    if (strict and tree is None and seed_tree is None and x.__class__ is not float and not contexts
            and (tangents is None or len(tangents) == 1)):
        x_class, meta = x.__class__, _metadata_attribute(x)
        source = getattr(x, meta) if meta is not None else x
        x_shape, x_dtype = source.shape, source.dtype
        if tangents is None:
            if meta is None:

                def run(f_, backend_, x_, tangents_, contexts_):
                    if (
                        (f_ is f or (f_.__class__ is MethodType and f_ == f))
                        and (backend_ is backend or backend_ == backend)
                        and x_.__class__ is x_class
                        and x_.shape == x_shape
                        and ((d := x_.dtype) is x_dtype or d == x_dtype)
                        and tangents_ is None
                        and not contexts_
                    ):
                        try:
                            return method(x_)
                        except Exception as error:
                            return leave(error, f_, backend_, x_, tangents_, contexts_)
                    return leave(None, f_, backend_, x_, tangents_, contexts_)

            else:

                def run(f_, backend_, x_, tangents_, contexts_):
                    if (
                        (f_ is f or (f_.__class__ is MethodType and f_ == f))
                        and (backend_ is backend or backend_ == backend)
                        and x_.__class__ is x_class
                        and (m := getattr(x_, meta)).shape == x_shape
                        and ((d := m.dtype) is x_dtype or d == x_dtype)
                        and tangents_ is None
                        and not contexts_
                    ):
                        try:
                            return method(x_)
                        except Exception as error:
                            return leave(error, f_, backend_, x_, tangents_, contexts_)
                    return leave(None, f_, backend_, x_, tangents_, contexts_)

            return run

        (t,) = tangents
        t_class, t_meta = t.__class__, _metadata_attribute(t) if is_array(t) else None
        t_source = getattr(t, t_meta) if t_meta is not None else t
        t_shape, t_dtype = getattr(t_source, "shape", None), getattr(t_source, "dtype", None)
        if t_shape is not None and meta is None and t_meta is None:

            def run(f_, backend_, x_, tangents_, contexts_):
                if (
                    (f_ is f or (f_.__class__ is MethodType and f_ == f))
                    and (backend_ is backend or backend_ == backend)
                    and x_.__class__ is x_class
                    and x_.shape == x_shape
                    and ((d := x_.dtype) is x_dtype or d == x_dtype)
                    and tangents_.__class__ is tuple
                    and len(tangents_) == 1
                    and (t := tangents_[0]).__class__ is t_class
                    and t.shape == t_shape
                    and ((d := t.dtype) is t_dtype or d == t_dtype)
                    and not contexts_
                ):
                    try:
                        return method(x_, tangents_)
                    except Exception as error:
                        return leave(error, f_, backend_, x_, tangents_, contexts_)
                return leave(None, f_, backend_, x_, tangents_, contexts_)

            return run

        if t_shape is not None and meta is not None and t_meta == meta:

            def run(f_, backend_, x_, tangents_, contexts_):
                if (
                    (f_ is f or (f_.__class__ is MethodType and f_ == f))
                    and (backend_ is backend or backend_ == backend)
                    and x_.__class__ is x_class
                    and (m := getattr(x_, meta)).shape == x_shape
                    and ((d := m.dtype) is x_dtype or d == x_dtype)
                    and tangents_.__class__ is tuple
                    and len(tangents_) == 1
                    and (t := tangents_[0]).__class__ is t_class
                    and (m := getattr(t, meta)).shape == t_shape
                    and ((d := m.dtype) is t_dtype or d == t_dtype)
                    and not contexts_
                ):
                    try:
                        return method(x_, tangents_)
                    except Exception as error:
                        return leave(error, f_, backend_, x_, tangents_, contexts_)
                return leave(None, f_, backend_, x_, tangents_, contexts_)

            return run

    # strict=False: no comparison (the public functions' direct path serves most of these calls)
    matches = _matcher(f, backend, x, tangents, contexts, tree, seed_tree) if strict else _anything
    if tangents is None:

        def run(f_, backend_, x_, tangents_, contexts_):
            if not matches(f_, backend_, x_, tangents_, contexts_):
                return leave(None, f_, backend_, x_, tangents_, contexts_)
            try:
                if contexts_:
                    return method(x_, *[c.value for c in contexts_])
                return method(x_)
            except Exception as error:
                return leave(error, f_, backend_, x_, tangents_, contexts_)

    else:

        def run(f_, backend_, x_, tangents_, contexts_):
            if not matches(f_, backend_, x_, tangents_, contexts_):
                return leave(None, f_, backend_, x_, tangents_, contexts_)
            try:
                if contexts_:
                    return method(x_, tangents_, *[c.value for c in contexts_])
                return method(x_, tangents_)
            except Exception as error:
                return leave(error, f_, backend_, x_, tangents_, contexts_)

    return run


def _leaving(off_path, prep, valued):
    """The ``leave`` of a runner: ``off_path`` told which preparation and which method it comes from."""

    def leave(error, f, backend, x, tangents, contexts):
        return off_path(prep, valued, error, f, backend, x, tangents, contexts)

    return leave


class Preparation:
    """Result of ``prepare_<operator>``; pass it back as ``prep=``.

    Attributes: ``operator`` (its family's name), ``backend``, ``impl`` (the
    object whose methods do the numeric work), ``spec`` (output shape and
    dtype, when it was needed), ``strict``.
    """

    __slots__ = ("op", "backend", "impl", "spec", "strict", "methods", "runners", "recorded", "tree", "ytree",
                 "direct", "f", "x_class", "x_shape", "x_dtype", "x_checked")

    def __init__(self, op, f, backend, x, tangents, contexts, y, impl, spec, strict, tree=None, methods=None,
                 ytree=None, off_path=None):
        self.op = op
        self.backend = backend
        self.impl = impl
        self.spec = spec
        self.strict = bool(strict)
        #: the flattening plan of a pytree x (None for arrays), see :mod:`diffinterface.core.pytree`
        self.tree = tree
        #: the :class:`~diffinterface.core.pytree.OutputPlan` of a pytree output (None for arrays);
        #: ``spec`` then describes the flat output the adapter sees
        self.ytree = ytree
        #: (plain, valued) prepared methods, looked up once (for a flat tree problem, wrapped by the plan)
        self.methods = methods if methods is not None else (getattr(impl, op.plain), getattr(impl, op.valued))
        self.recorded = signature(f, backend, x, tangents, contexts, y)
        #: (plain, valued) runners: check (when strict) and call in one frame, see :func:`_runner`;
        #: a call they cannot finish goes to ``off_path(prep, valued, error, f, backend, x, tangents, contexts)``
        seed_tree = ytree if op.seeds == "cotangents" else None
        self.runners = tuple(
            _runner(m, _leaving(off_path, self, valued), f, backend, x, tangents, contexts, tree, self.strict,
                    seed_tree)
            for valued, m in enumerate(self.methods)
        )
        #: the direct path of the public functions (core/call.py ``prepared_fast_path``): for an array
        #: x without seeds or contexts, the operator whose calls that path serves (None: no such path),
        #: the objects it compares by identity and, unless ``x_checked``, x's shape and dtype
        self.f, self.x_class = f, x.__class__
        self.x_shape, self.x_dtype = getattr(x, "shape", ()), getattr(x, "dtype", None)
        # nothing more to compare: a float's kind is its class; a method that checks x itself; no check
        self.x_checked = x.__class__ is float or getattr(impl, "checks_x", False) is True or not self.strict
        # (an x whose plain shape and dtype are slow reads, JAX's, is compared by its runner instead)
        self.direct = (op if tree is None and tangents is None and not contexts and y is None
                       and (self.x_checked or _metadata_attribute(x) is None) else None)

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
                lines.append(_mismatch_line(slot, prepared, now))
        if mismatch:
            raise PreparationMismatchError(
                f"prep: the call does not match the preparation of {op.name}:\n" + "\n".join(lines)
                + "\n(prepare again for these arguments, or prepare with strict=False to skip this check "
                "at your own risk)"
            )
