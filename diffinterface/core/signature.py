"""The signature of a prepared call: built once at preparation, compared at every call.

A preparation records the call it was made for, slot by slot: the function
object, the backend, x (class, dtype and shape, or a pytree's structure and
leaves), the seeds (tangents or cotangents: their count and each one's kind,
arrays or trees), each context's kind (for a ``Constant`` its value's
family, shape and dtype: a Python float, a NumPy scalar and a 0-d array of
one dtype are the same kind) and ``y``'s. Two forms of it are built here:

- :func:`signature`, the comparable slots of the operator's arguments (its
  seeds, named ``tangents`` or ``cotangents``, and ``y`` only where it takes
  them), from which :func:`mismatch_report` writes the
  ``PreparationMismatchError`` that lists every slot as "matches" or
  "MISMATCH, prepared ..., given ..." (there a Python float, a NumPy scalar
  and a 0-d array are one kind);
- the same slots as the cheapest tests that decide them, in the one check
  object of a preparation (:class:`~diffinterface.core.check.Check`).

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
      contexts: matches
    (prepare again for these arguments, or prepare with strict=False to skip this check at your own risk)
"""

from __future__ import annotations

from types import MethodType


from ..contexts import Context
from ..families import FAMILIES, dtype_name, family_of, is_array, shape_of
from .tree_key import TreeKey, leaf_kind, tree_key

_NUMPY_SCALAR = "numpy scalar"
#: the names of the seeds' slot (an operator's ``seeds``)
_SEEDS = ("tangents", "cotangents")


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


# -- the comparable slots, and the report of a mismatch ------------------------------------------


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
    """A context's kind: its class and, for array-like values, their family, dtype and shape.

    A Python int is a 0-d int64 kind, as a float is a float64 one (NumPy
    scalars and 0-d arrays of the dtype alike): a preparation with
    ``Constant(2)`` refuses ``Constant(2.5)``, as one at a float64 array
    refuses a float32 one. A bool is a flag, no array: its class is its kind.
    """
    value = c.value
    if is_array(value):
        return (type(c).__name__, family_of(value), dtype_name(value), shape_of(value))
    return (type(c).__name__, type(value).__module__ + "." + type(value).__qualname__)


def signature(call):
    """The slots of a :class:`~diffinterface.core.preparation.Call`, as comparable values: only those
    of the arguments its operator takes (seeds under their name, ``y`` for two-argument functions)."""
    op, seeds = call.op, call.seeds
    slots = {"f": call.f, "backend": call.backend, "x": _array_key(call.x)}
    if op.seeds is not None:
        slots[op.seeds] = (
            None
            if seeds is None
            else tuple(_array_key(t) for t in seeds)
            if isinstance(seeds, tuple)
            else ("not a tuple", type(seeds).__name__)
        )
    slots["contexts"] = tuple(
        _context_key(c) if isinstance(c, Context) else ("not a context", type(c).__name__)
        for c in call.contexts
    )
    if op.two_argument:
        slots["y"] = _array_key(call.y)
    return slots


def _format(slot, value):
    if value is None:
        return "none"
    if isinstance(value, TreeKey):
        return repr(value)
    if slot == "x" or slot == "y":
        cls, dtype, shape = value
        return f"{cls} {dtype} {shape}"
    if slot in _SEEDS and value and all(isinstance(v, tuple) for v in value):
        return f"{len(value)} of [" + ", ".join(f"{d} {s}" for _, d, s in value) + "]"
    return repr(value)


def _mismatch_line(slot, prepared, given):
    if slot == "x" and isinstance(prepared, TreeKey):
        return f"  x: MISMATCH, {prepared.difference(given)}"
    if (
        slot in _SEEDS
        and isinstance(prepared, tuple)
        and any(isinstance(p, TreeKey) for p in prepared)
    ):
        if isinstance(given, tuple) and len(given) == len(prepared):
            i = next(i for i, (p, g) in enumerate(zip(prepared, given)) if p != g)
            if isinstance(prepared[i], TreeKey):
                return f"  {slot}: MISMATCH, {slot}[{i}]: {prepared[i].difference(given[i])}"
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
