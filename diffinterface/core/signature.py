"""The signature of a prepared call: built once at preparation, compared at every call.

A preparation records the call it was made for, slot by slot: the function
object, the backend, x (class, dtype and shape, or a pytree's structure and
leaves), the seeds (tangents or cotangents: their count and each one's kind,
arrays or trees), each context's kind (for a ``Constant`` its value's
family, shape and dtype: a Python float, a NumPy scalar and a 0-d array of
one dtype are the same kind) and ``y``'s. Two forms of it are built here:

- :func:`signature`, the comparable slots, from which
  :func:`mismatch_report` writes the ``PreparationMismatchError`` that lists
  every slot as "matches" or "MISMATCH, prepared ..., given ...";
- :class:`FastCheck`, the same slots as the cheapest tests that decide them:
  identities, classes and the raw ``shape``/``dtype`` attributes, no
  conversion. Every operator's prepared call compares with it in one
  expression (``diffinterface.core.call.call``); a call it refuses goes to
  the full comparison, which raises on a real mismatch and otherwise lets the
  call through (there a Python float, a NumPy scalar and a 0-d array are one kind).

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


from ..contexts import Context
from ..families import FAMILIES, dtype_name, family_of, is_array, shape_of
from .tree_key import TreeKey, leaf_kind, tree_key

_NUMPY_SCALAR = "numpy scalar"


def same_function(given, prepared):
    """True when ``given`` is the prepared function: the same object, or an equal bound method.

    Bound methods are new objects at each attribute access: their function
    and instance are compared instead.

    >>> class Model:
    ...     def loss(self, x):
    ...         return x
    >>> model = Model()
    >>> model.loss is model.loss, same_function(model.loss, model.loss), same_function(model.loss, Model().loss)
    (False, True, False)
    """
    return given is prepared or (given.__class__ is MethodType and given == prepared)


# -- the comparable slots, and the report of a mismatch
# --------------------------------------------------


class _ArrayKey(tuple):
    """(type, dtype, shape) of an array as the messages name it, compared by its ``kind`` (a leaf kind)."""

    kind: tuple

    def __eq__(self, other):
        return isinstance(other, _ArrayKey) and self.kind == other.kind

    def __ne__(self, other):
        return not self == other

    def __hash__(self):
        return hash(self.kind)


def _array_key(a):
    """The :class:`_ArrayKey` of an array, a :class:`TreeKey` for a pytree; None for None.

    Arrays of one :func:`~diffinterface.core.pytree.leaf_kind` are equal here: a
    Python float, a NumPy scalar and a 0-d ndarray (numpy arithmetic turns one
    into another: ``np.array(0.7) + 0.25`` is an ``np.float64``), a torch
    ``Parameter`` and a ``Tensor``.
    """
    if a is None:
        return None
    if not is_array(a):
        return tree_key(a)
    shape = shape_of(a)
    if not shape and FAMILIES[family_of(a)].scalar_results:  # a family whose 0-d kinds are one
        name = _NUMPY_SCALAR
    else:
        name = a.__class__.__module__ + "." + a.__class__.__qualname__
    key = _ArrayKey((name, dtype_name(a), shape))
    key.kind = leaf_kind(a)
    return key


def _context_key(c):
    """A context's kind: its class and, for array-like values, their family, dtype and shape."""
    value = c.value
    if is_array(value):
        return (type(c).__name__, family_of(value), dtype_name(value), shape_of(value))
    return (type(c).__name__, type(value).__module__ + "." + type(value).__qualname__)


def signature(call):
    """The slots of a :class:`~diffinterface.core.preparation.Call`, as comparable values."""
    seeds = call.seeds
    return {
        "f": call.f,
        "backend": call.backend,
        "x": _array_key(call.x),
        "tangents": (
            None
            if seeds is None
            else tuple(_array_key(t) for t in seeds)
            if isinstance(seeds, tuple)
            else ("not a tuple", type(seeds).__name__)
        ),
        "contexts": tuple(
            _context_key(c) if isinstance(c, Context) else ("not a context", type(c).__name__)
            for c in call.contexts
        ),
        "y": _array_key(call.y),
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


def _mismatch_line(slot, prepared, given):
    if slot == "x" and isinstance(prepared, TreeKey):
        return f"  x: MISMATCH, {prepared.difference(given)}"
    if (
        slot == "tangents"
        and isinstance(prepared, tuple)
        and any(isinstance(p, TreeKey) for p in prepared)
    ):
        if isinstance(given, tuple) and len(given) == len(prepared):
            i = next(i for i, (p, g) in enumerate(zip(prepared, given)) if p != g)
            if isinstance(prepared[i], TreeKey):
                return f"  tangents: MISMATCH, tangents[{i}]: {prepared[i].difference(given[i])}"
    return f"  {slot}: MISMATCH, prepared {_format(slot, prepared)}, given {_format(slot, given)}"


def mismatch_report(name, recorded, given):
    """The message of a mismatch between the ``recorded`` and ``given`` slots, or None when they match."""
    lines, mismatch = [], False
    for slot, prepared in recorded.items():
        now = given[slot]
        if same_function(now, prepared) if slot == "f" else now == prepared:
            lines.append(f"  {slot}: matches")
        else:
            mismatch = True
            lines.append(_mismatch_line(slot, prepared, now))
    if not mismatch:
        return None
    return (
        f"prep: the call does not match the preparation of {name}:\n"
        + "\n".join(lines)
        + "\n(prepare again for these arguments, or prepare with strict=False to skip this check "
        "at your own risk)"
    )


# -- the per-call form: the cheapest tests of the same slots
# ---------------------------------------------


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


def _shape_and_dtype(a):
    """(attribute, shape, dtype): where ``a``'s shape and dtype are read (None: ``a`` itself), and their values.

    The per-call comparison reads them the same way and compares a dtype by
    identity first: numpy's dtypes of one kind are one object, and ``==``
    (which accepts dtype-like strings) is the slower test.
    """
    meta = _metadata_attribute(a)
    source = a if meta is None else getattr(a, meta)
    return meta, source.shape, source.dtype


def _kind(value, tree_fits=None):
    """(class, attribute, shape, dtype, tree_fits): the per-call test of one seed or context value.

    A pytree seed is tested by ``tree_fits``; an array by its shape and dtype
    (read from ``attribute``, None: its own); anything else by its class alone
    (``shape`` None).
    """
    if tree_fits is None and value.__class__ is not float and is_array(value):
        return (value.__class__, *_shape_and_dtype(value), None)
    return value.__class__, None, None, None, tree_fits


def _rest(x_plan, seeds, contexts, y_plan):
    """``rest(x, seeds, contexts) -> bool``: all that the plain attributes of :class:`FastCheck` leave.

    A pytree x leaf by leaf; the seeds, a tuple of as many, each of its kind
    (cotangents of a pytree output checked against the output's plan, tangents
    that are pytrees against x's: a class test alone would pass any dict);
    as many contexts, each of its class, its value of its kind. One frame,
    whatever the mix: seeds and context values are compared in one loop.
    """
    tree_fits = x_plan.fits if x_plan is not None else None
    n_seeds = None if seeds is None else len(seeds)
    seed_kinds = (
        ()
        if seeds is None
        else tuple(
            _kind(
                s,
                y_plan.fits
                if y_plan is not None
                else x_plan.fits
                if x_plan is not None and not is_array(s)
                else None,
            )
            for s in seeds
        )
    )
    classes = tuple(c.__class__ for c in contexts)
    kinds = (*seed_kinds, *(_kind(c.value) for c in contexts))

    def rest(x, seeds, contexts):
        if tree_fits is not None and not tree_fits(x):
            return False
        if seeds is None:
            if n_seeds is not None:
                return False
            values = ()
        elif seeds.__class__ is not tuple or len(seeds) != n_seeds:
            return False
        else:
            values = seeds
        if contexts or classes:
            if len(contexts) != len(classes) or any(
                c.__class__ is not k for c, k in zip(contexts, classes)
            ):
                return False
            values = (*values, *[c.value for c in contexts])
        for v, (cls, attr, shape, dtype, fits) in zip(values, kinds):
            if v.__class__ is not cls:
                return False
            if fits is not None:
                if not fits(v):
                    return False
            elif shape is not None:
                m = v if attr is None else getattr(v, attr)
                if m.shape != shape or not ((d := m.dtype) is dtype or d == dtype):
                    return False
        return True

    return rest


class FastCheck:
    """The slots of a prepared call as their cheapest tests (see the module docstring).

    The common calls (an array x, no contexts, no seeds or one array seed)
    are decided by plain attributes, read in one expression without a
    further call: ``f``, ``backend``, ``x_class`` and, unless ``x_known`` (a
    float's class says all; methods that check x themselves,
    ``Impl(checks_x=True)`` in core/adapter.py), x's shape and dtype as read
    from ``x_attr`` (None: x's own; see :func:`_metadata_attribute`). ``plain``
    says that nothing more is compared; ``one_seed`` that the one seed's
    ``seed_class``, shape and dtype are. Otherwise ``rest(x, seeds,
    contexts)`` compares a pytree x leaf by leaf, the seeds and the contexts.
    """

    __slots__ = (
        "f",
        "backend",
        "x_class",
        "x_known",
        "x_attr",
        "x_shape",
        "x_dtype",
        "plain",
        "one_seed",
        "seed_class",
        "seed_attr",
        "seed_shape",
        "seed_dtype",
        "rest",
    )

    def __init__(self, call, x_plan, y_plan, x_checked):
        x, seeds, contexts = call.x, call.seeds, call.contexts
        self.f, self.backend, self.x_class = call.f, call.backend, x.__class__
        # a pytree x is compared by its plan, in rest
        self.x_known = x_checked or x_plan is not None or not hasattr(x, "shape")
        self.x_attr, self.x_shape, self.x_dtype = (
            (None, None, None) if self.x_known else _shape_and_dtype(x)
        )
        self.plain = x_plan is None and seeds is None and not contexts
        seed = seeds[0] if seeds is not None and len(seeds) == 1 else None
        self.one_seed = (
            x_plan is None
            and not contexts
            and y_plan is None
            and seed is not None
            and seed.__class__ is not float
            and is_array(seed)
        )
        self.seed_class = seed.__class__
        self.seed_attr, self.seed_shape, self.seed_dtype = (
            _shape_and_dtype(seed) if self.one_seed else (None,) * 3
        )
        self.rest = _rest(x_plan, seeds, contexts, y_plan)
