"""Preparing an operator call: validate once, fold the feature transforms, build once, wrap in reverse.

:func:`prepare` takes a :class:`~diffinterface.core.preparation.Call` (the
arguments by name) and returns its :class:`Preparation`:

1. :func:`~diffinterface.core.validation.validate` checks what every call
   shares (f, strict, has_aux, the contexts, x, y);
2. each transform of :data:`TRANSFORMS`, in order, that applies rewrites the
   call (aux outputs take f's aux out, a complex x becomes its real view, a
   pytree x a flat array, ...) and keeps the wrap of its results
   (:mod:`diffinterface.core.transform`);
3. :func:`~diffinterface.core.build.build` makes the problem of the last
   call and asks the adapter for its implementation, once;
4. the wraps turn that implementation's methods into the ones of the call
   the user made, innermost first.

A new feature that cuts across operators is one module with one transform
and one line in :data:`TRANSFORMS` (or :func:`register_transform` from
outside the package); no transform calls :func:`prepare`.

    >>> import numpy as np, diffinterface as di
    >>> prep = di.prepare_gradient(lambda x: (x**2).sum(), di.AutoFiniteDiff(), np.ones(2))
    >>> prep.operator, prep.tree is None
    ('gradient', True)
"""

from __future__ import annotations

from .aux import aux_outputs, capture_of
from .complex_convention import complex_view
from .build import build
from .dtypes import result_dtype
from .foreign import foreign_contexts
from .hand_over import hand_over
from .output_tree import tree_output
from .preparation import Plan, Preparation
from .registry import get_adapter
from .same_point import same_point
from .scalar_results import zero_d_results
from .transform import Draft, Setting, Transform
from .tree_input import tree_input
from .validation import check_tangents, validate

__all__ = ["TRANSFORMS", "check_tangents", "prepare", "register_transform"]

#: The feature transforms, in the order they rewrite a call (their wraps apply in reverse):
#: the outermost feature first, the innermost (closest to the adapter) last.
TRANSFORMS: list[Transform] = [
    aux_outputs,  # f returns (y, aux): every later step sees f returning y
    hand_over,  # AutoSelect: the call goes whole to the candidate it chooses
    same_point,  # every call at the prepared x: checked around everything below
    complex_view,  # a complex x through its real view
    foreign_contexts,  # Constants of another family, in x's
    zero_d_results,  # a 0-d numpy result as an array, never a NumPy scalar
    tree_output,  # a pytree output as one flat array
    tree_input,  # a pytree x as one flat array (or as it is, to an adapter that takes it)
    result_dtype,  # derivatives in x's dtype
]


def register_transform(transform, before=None):
    """Add ``transform`` to :data:`TRANSFORMS`, before the one named ``before`` (default: last).

    A transform is ``transform(draft, setting) -> Step | None``
    (:mod:`diffinterface.core.transform`); it applies to every preparation
    made after this call.
    """
    if not callable(transform):
        raise TypeError(f"transform: expected a callable; got {type(transform).__name__}")
    names = [t.__name__ for t in TRANSFORMS]
    if before is None:
        TRANSFORMS.append(transform)
    elif before in names:
        TRANSFORMS.insert(names.index(before), transform)
    else:
        raise ValueError(f"before: expected one of {names}; got {before!r}")


def prepare(call, strict, learn_output=False, one_off=False):
    """Validate the :class:`~diffinterface.core.preparation.Call` and build its :class:`Preparation`.

    ``learn_output`` learns f's output at preparation even where the adapter
    would not (``output_from_each_call``): see ``core/call.py``'s ``_learned_tree_output``.
    ``one_off`` marks the preparation of an unprepared call (:attr:`Problem.one_off`).
    """
    adapter = get_adapter(call.backend)
    validate(call, adapter, strict)
    setting = Setting(adapter, strict, one_off, learn_output)
    draft, wraps, built = Draft(call, aux=capture_of(call.f)), [], None
    for transform in TRANSFORMS:
        step = transform(draft, setting)
        if step is None:
            continue
        draft, built = step.draft, step.built
        if built is not None:
            break
        if step.wrap is not None:
            wraps.append(step.wrap)
    if built is None:
        built = build(draft, setting)
    for wrap in reversed(wraps):
        built = wrap(built)
    return Preparation(call.op, call.backend, strict, Plan(call, built, strict), call.has_aux)
