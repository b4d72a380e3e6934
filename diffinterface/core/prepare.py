"""Preparing an operator call: validate once, fold the feature transforms, build once, wrap in reverse.

:func:`prepare` takes a :class:`~diffinterface.core.preparation.Call` (the
arguments by name) and returns its :class:`Preparation`:

1. :func:`validate` checks what every call
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
    >>> di.gradient(lambda x: x.sum(), di.AutoFiniteDiff(), np.arange(3))  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    TypeError: x: expected a real floating-point array (float32 or float64); got numpy int64 array ...
"""

from __future__ import annotations

from typing import Any, Callable, NamedTuple

from ..contexts import check_contexts
from ..errors import UnsupportedError
from ..families import (
    NUMBERS,
    describe,
    family_of,
    has_complex_leaf,
    is_array,
    require_real_float,
    shape_of,
    traced_family,
)

from .aux import AuxCapture, aux_outputs
from .complex_convention import complex_view
from .build import build
from .dtypes import result_dtype, zero_d_results
from .foreign import foreign_contexts
from .hand_over import hand_over
from .output_tree import output_plan, tree_output
from .preparation import Plan, Preparation
from .registry import get_adapter
from .transform import Draft, Rewrite, Setting
from .tree_input import tree_input, x_tree
from .build import check_tangents

__all__ = [
    "TRANSFORMS",
    "Transform",
    "check_tangents",
    "prepare",
    "register_transform",
    "unregister_transform",
]


class Transform(NamedTuple):
    """A feature transform (:mod:`diffinterface.core.transform`) and when it applies.

    ``when(call, adapter)`` is asked of the call as rewritten so far; it is
    cheap and decides nothing else, so a feature costs a call that does not
    use it nothing.
    """

    rewrite: Rewrite
    when: Callable[[Any, Any], bool]

    @property
    def name(self):
        return self.rewrite.__name__


def _always(call, adapter):
    return True


#: The feature transforms, in the order they rewrite a call (their wraps apply in reverse):
#: the outermost feature first, the innermost (closest to the adapter) last.
TRANSFORMS: list[Transform] = [
    # f returns (y, aux): every later step sees f returning y
    Transform(aux_outputs, lambda call, adapter: call.has_aux),
    # AutoSelect: the call goes whole to the candidate it chooses
    Transform(hand_over, lambda call, adapter: adapter.capabilities.prepares_calls),
    # a complex x, through its real view
    Transform(complex_view, lambda call, adapter: has_complex_leaf(call.x)),
    # Constants of another family than x's, converted
    Transform(foreign_contexts, lambda call, adapter: bool(call.contexts)),
    # a 0-d numpy result as an array, never a NumPy scalar
    Transform(
        zero_d_results, lambda call, adapter: not adapter.capabilities.numpy_results_are_arrays
    ),
    # a pytree output as one flat array
    Transform(tree_output, lambda call, adapter: call.op.tree_output and call.y is None),
    # a pytree x as one flat array, or as it is to an adapter that takes it
    Transform(tree_input, lambda call, adapter: not is_array(call.x)),
    # derivatives in x's dtype
    Transform(result_dtype, _always),
]


def register_transform(rewrite, when=_always, before=None):
    """Add the transform ``rewrite`` to :data:`TRANSFORMS`, before the one named ``before`` (default: last).

    ``rewrite(draft, setting) -> Step | None`` (:mod:`diffinterface.core.transform`)
    is asked for every preparation made afterwards where ``when(call, adapter)``
    is true. Returns the :class:`Transform`, for :func:`unregister_transform`.
    """
    if not callable(rewrite) or not callable(when):
        raise TypeError(f"rewrite, when: expected callables; got {rewrite!r}, {when!r}")
    names = [t.name for t in TRANSFORMS]
    transform = Transform(rewrite, when)
    if before is None:
        TRANSFORMS.append(transform)
    elif before in names:
        TRANSFORMS.insert(names.index(before), transform)
    else:
        raise ValueError(f"before: expected one of {names}; got {before!r}")
    return transform


def unregister_transform(transform):
    """Remove a transform added by :func:`register_transform`."""
    TRANSFORMS.remove(transform)


def prepare(call, strict, learn_output=False, one_off=False):
    """Validate the :class:`~diffinterface.core.preparation.Call` and build its :class:`Preparation`.

    ``learn_output`` learns f's output at preparation even where the adapter
    would not (``output_from_each_call``): see ``core/call.py``'s ``_learned_tree_output``.
    ``one_off`` marks the preparation of an unprepared call (:attr:`Problem.one_off`).
    """
    adapter = get_adapter(call.backend)
    validate(call, adapter, strict)
    setting = Setting(adapter, strict, one_off, learn_output)
    draft, wraps, built = (
        Draft(call, aux=call.f if isinstance(call.f, AuxCapture) else None),
        [],
        None,
    )
    for transform in TRANSFORMS:
        if not transform.when(draft.call, adapter):
            continue
        step = transform.rewrite(draft, setting)
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
    # an unprepared call's preparation runs once, in the core, and is never compared
    plan = Plan(call, built, strict, checked=not one_off)
    return Preparation(call.op, call.backend, strict, plan, call.has_aux)


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
    require_values(call.x, adapter)
    if adapter.capabilities.prepares_calls:  # each backend it hands over to checks x and y
        return
    if has_complex_leaf(call.x):  # core/complex_convention.py checks x, y and seeds its own way
        return
    if is_array(call.x):
        check_x(call.x, adapter, call.op)
        x_family = family_of(call.x)
    else:
        x_family = x_tree(call.x, adapter, call.op).family
    if call.y is not None:
        _check_y(call, adapter, x_family)


def require_has_aux(has_aux):
    """Raise unless ``has_aux`` is True or False."""
    if has_aux is not True and has_aux is not False:
        raise TypeError(f"has_aux: expected True or False; got {has_aux!r}")


#: what to do with an x that is neither real floating-point nor complex (core/complex_convention.py
#: takes those)
_REAL_X_ADVICE = "Convert an integer x yourself (x.astype(float))"


def check_x(x, adapter, op):
    if not is_array(x):
        raise TypeError(f"x: expected a float or an array; got {describe(x)}")
    require_real_float(x, "x", _REAL_X_ADVICE)
    family = family_of(x)
    capabilities = adapter.capabilities
    if family not in capabilities.families and family not in capabilities.traceable_families:
        raise TypeError(
            f"x: {type(adapter.backend).__name__} differentiates {' or '.join(adapter.capabilities.all_families)} "
            f"arrays; got {describe(x)}"
        )
    if op.scalar_x and shape_of(x) != ():
        raise ValueError(f"x: {op.name} expects a scalar x (shape ()); got {describe(x)}")


def _check_y(call, adapter, x_family):
    """Raise unless ``call.y`` is an output buffer a two-argument ``f(y, x)`` can write."""
    op, y = call.op, call.y
    if not op.two_argument:
        raise TypeError(f"y: {op.name} does not take two-argument functions f(y, x)")
    if not adapter.capabilities.inplace:
        raise UnsupportedError(
            f"y: {type(call.backend).__name__} cannot differentiate two-argument functions f(y, x) "
            "that write into y (check_inplace(backend) is False); return the output from f instead"
        )
    if not is_array(y) and output_plan(y, NUMBERS) is not None:
        raise TypeError(
            f"y: a two-argument f(y, x) writes into one array y; got a pytree {type(y).__name__}. "
            "For a pytree output, return it from a one-argument f(x) instead"
        )
    if not is_array(y) or family_of(y) != x_family:  # a pytree x's family is its leaves'
        raise TypeError(
            f"y: expected an output buffer of the same array family as x; got {describe(y)}"
        )


def require_values(x, adapter):
    """Raise a TypeError naming the transform and the way around when x (an array or a pytree) is a
    traced value and ``adapter`` or a backend it is made of needs x's values.

    Inside ``jax.jit`` (``vmap``, ``grad``), a ``torch.func`` transform or a
    ``tf.function``, x is a traced value: its family says so
    (:meth:`~diffinterface.families.base.Family.has_values`). A backend whose
    framework traces f works there; a backend that reads x's values to
    prepare (a sparsity detection, a timed selection) or to compute (finite
    differences' steps, taken on the host) declares why in
    ``Capabilities.needs_values``, with the way around, and such a call is
    refused here, by name, before anything reaches numpy, unless it computes on that family's
    traced values with the family's own namespace (``Capabilities.traceable_families``).
    """
    needs = [part for part in adapter.parts() if part.capabilities.needs_values is not None]
    if not needs:
        return
    family = traced_family(x)
    if family is None:
        return
    needs = [part for part in needs if family.name not in part.capabilities.traceable_families]
    if not needs:
        return
    part = needs[0]
    what, way = part.capabilities.needs_values
    inside = f" (inside {family.traced_by})" if family.traced_by else ""
    who = _name(part) if part is adapter else f"{_name(adapter)} cannot run here: {_name(part)}"
    raise TypeError(
        f"x: {who} {what}, and x is a traced {family.name} value{inside}, which has none. {way}"
    )


def _name(adapter):
    return type(adapter.backend).__name__
