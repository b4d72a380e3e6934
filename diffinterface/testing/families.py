"""Moving scenarios between array families (every registered family with concrete arrays), importing a framework only when asked.

>>> from diffinterface.testing import default_scenarios
>>> from diffinterface.testing.families import to_family, to_numpy
>>> s = default_scenarios(operators="gradient")[0]
>>> to_family(s, "numpy") is s
True
>>> to_numpy(s.x).dtype
dtype('float64')
"""

from __future__ import annotations

import dataclasses

import numpy as np

from ..families import FAMILIES, as_numpy
from ..contexts import Context

#: families the kit knows how to build inputs in: every registered family whose arrays exist outside
#: a trace (``Family.concrete``), each built from numpy by its own ``from_dlpack``
CONVERTIBLE_FAMILIES = tuple(name for name, family in FAMILIES.items() if family.concrete)


def is_container(a):
    """True for the pytree nodes the kit builds scenarios with: tuples (named too), lists, dicts."""
    return isinstance(a, (tuple, list, dict))


def tree_map(fn, a):
    """``fn`` applied to every leaf of nested tuples, namedtuples, lists and dicts, structure kept."""
    if isinstance(a, dict):
        return {k: tree_map(fn, v) for k, v in a.items()}
    if isinstance(a, tuple) and hasattr(a, "_fields"):
        return type(a)(*(tree_map(fn, v) for v in a))
    if isinstance(a, (tuple, list)):
        return type(a)(tree_map(fn, v) for v in a)
    return fn(a)


def tree_leaves(a):
    """The leaves of ``a`` in order (dicts by sorted key, as optree and JAX order them)."""
    if isinstance(a, dict):
        return [leaf for k in sorted(a) for leaf in tree_leaves(a[k])]
    if isinstance(a, (tuple, list)):
        return [leaf for v in a for leaf in tree_leaves(v)]
    return [a]


def to_numpy(a):
    """A numpy copy of an array of any family (Python numbers become 0-d arrays)."""
    return np.array(as_numpy(a), copy=True)


def convert(a, family, device=None):
    """``a`` (numpy array, Python number or tuple of them) in ``family``, on ``device`` when one is named
    (in the framework's terms: "cuda", "gpu:0"); Python numbers stay numbers."""
    if a is None or a.__class__ in (int, float):
        return a
    if is_container(a):
        return tree_map(lambda leaf: convert(leaf, family, device), a)
    if family not in CONVERTIBLE_FAMILIES:
        raise ValueError(f"family: expected one of {CONVERTIBLE_FAMILIES}; got {family!r}")
    if family == "numpy":
        return a if device is None else FAMILIES[family].to_device(a, device)
    # a copy: the scenario's own arrays are never shared with the family's
    converted = FAMILIES[family].from_dlpack(np.array(a, copy=True))
    return converted if device is None else FAMILIES[family].to_device(converted, device)


def _convert_context(context, family, device):
    return type(context)(convert(context.value, family, device))


def to_family(scenario, family, device=None):
    """The scenario with x, y, tangents, contexts and expected results in ``family`` (on ``device`` if named).

    The function is unchanged: scenario functions are written against the array
    API, so they run on every family.
    """
    if family == "numpy" and device is None:
        return scenario
    if family not in CONVERTIBLE_FAMILIES:
        raise ValueError(f"family: expected one of {CONVERTIBLE_FAMILIES}; got {family!r}")
    return dataclasses.replace(
        scenario,
        x=convert(scenario.x, family, device),
        y=convert(scenario.y, family, device),
        tangents=convert(scenario.tangents, family, device),
        contexts=tuple(
            _convert_context(c, family, device) for c in scenario.contexts if isinstance(c, Context)
        ),
        value=convert(scenario.value, family, device),
        first=convert(scenario.first, family, device),
        second=convert(scenario.second, family, device),
    )


def zeros_like(a, family, device=None):
    """A fresh zero buffer shaped like the numpy array ``a`` in ``family`` (None for immutable JAX; a tf.Variable for TensorFlow)."""
    if is_container(a):
        return tree_map(lambda leaf: zeros_like(leaf, family, device), a)
    a = np.asarray(a)
    entry = FAMILIES[family]
    if entry.write is None:
        return None
    # a family whose arrays are immutable but has a writable buffer type (TensorFlow's tf.Variable)
    # builds that
    build = getattr(entry, "buffer", entry.from_dlpack)
    buffer = build(np.zeros(a.shape, dtype=a.dtype))
    return buffer if device is None else entry.to_device(buffer, device)


def map_first_leaf(fn, a):
    """``fn`` applied to ``a``, or to the first leaf only of a tree ``a`` (the other leaves kept)."""
    if not is_container(a):
        return fn(a)
    pending = [True]

    def first_only(leaf):
        if not pending:
            return leaf
        pending.clear()
        return fn(leaf)

    return tree_map(first_only, a)


def reshaped_other(x, family, device=None):
    """An input like ``x`` but with one more element (shape differs), for the mismatch check.

    For a tree, the same tree with one more element in its first leaf.
    """

    def grown(leaf):
        flat = np.reshape(to_numpy(leaf), (-1,))
        return convert(np.concatenate([flat, np.zeros(1, dtype=flat.dtype)]), family, device)

    return map_first_leaf(grown, x)
