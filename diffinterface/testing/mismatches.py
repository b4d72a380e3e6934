"""Calls that change one slot of a preparation's key: each must raise ``PreparationMismatchError``."""

from __future__ import annotations

import numpy as np

from ..contexts import Cache, Constant
from ..selectors import AutoZeroForward, AutoZeroReverse
from .families import convert, is_container, map_first_leaf, reshaped_other, to_numpy


class _OtherArray(np.ndarray):
    """An ndarray subclass: same shape and dtype as x, another array type."""


def _other_dtype(x, family, device=None):
    base = to_numpy(x)
    other = np.float32 if base.dtype == np.float64 else np.float64
    if x.__class__ is float:
        return np.float32(x)
    return convert(base.astype(other), family, device)


def _other_type(x, family):
    if family == "numpy":
        return np.asarray(x).view(_OtherArray)
    return to_numpy(x)


def _in_first_leaf(change, x, family):
    """``change`` applied to x, or to the first leaf only of a tree x."""
    return map_first_leaf(lambda leaf: change(leaf, family), x)


def _other_structure(x):
    """The tree x with one more leaf (a copy of its first) in a new node."""
    return (
        {"x": x, "extra": x}
        if not isinstance(x, dict)
        else {**x, "extra leaf": next(iter(x.values()))}
    )


def mismatched_calls(case, scenario, args, op):
    """``(slot, args)`` pairs: the case's call arguments with one slot changed."""
    f, backend, x, *rest = args
    family = case.family
    seeds, contexts = (rest[0], tuple(rest[1:])) if op.seeds else (None, tuple(rest))

    def call(f=f, backend=backend, x=x, seeds=seeds, contexts=contexts):
        return (f, backend, x, *((seeds,) if op.seeds else ()), *contexts)

    yield "x shape", call(x=reshaped_other(x, family, case.device))
    yield (
        "x dtype",
        call(
            x=_in_first_leaf(
                lambda leaf, family: _other_dtype(leaf, family, case.device), x, family
            )
        ),
    )
    yield "x array type", call(x=_in_first_leaf(_other_type, x, family))
    if is_container(x):
        yield "x tree structure", call(x=_other_structure(x))
    if op.seeds:
        yield f"{op.seeds} count", call(seeds=seeds + (seeds[0],))
        yield (
            f"{op.seeds} shape",
            call(seeds=tuple(reshaped_other(t, family, case.device) for t in seeds)),
        )
    yield "function object", call(f=lambda *a: f(*a))
    yield (
        "backend",
        call(backend=AutoZeroReverse() if backend == AutoZeroForward() else AutoZeroForward()),
    )
    if contexts:
        first = contexts[0]
        flipped = (Cache if isinstance(first, Constant) else Constant)(first.value)
        yield "context kind", call(contexts=(flipped, *contexts[1:]))
    else:
        yield "context count", call(contexts=(Constant(1.0),))
