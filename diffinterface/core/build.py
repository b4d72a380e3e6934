"""The one build of a preparation: the :class:`Problem` of the last draft, and the adapter's implementation.

Every transform of :mod:`diffinterface.core.prepare` has rewritten the call
into one an adapter prepares (a real array x, or a pytree the adapter takes
as it is); :func:`build` makes its :class:`~diffinterface.core.problem.Problem`
once, checks the seeds against it, and asks the adapter for the
implementation: the core answers an empty problem itself
(:mod:`diffinterface.core.empty`). An error raised by f meanwhile is
explained (:mod:`diffinterface.core.boundary`).
"""

from __future__ import annotations

from ..families import FLOAT_DTYPES, describe, dtype_name, is_array, shape_of
from .boundary import explain
from .dtypes import require_real_output
from .empty import prepare_empty
from .problem import Problem, Spec
from .transform import Built
from .foreign import require_family


def build(draft, setting):
    """The :class:`~diffinterface.core.transform.Built` preparation of the last draft."""
    call = draft.call
    op = call.op
    problem = Problem.of(draft, setting)
    try:
        if op.seeds == "cotangents":
            family = None if draft.ytree is not None else problem.family
            check_tangents(problem.tangents, problem.spec, "the output y", "cotangents", family)
        elif op.seeds == "tangents" and draft.tree is None:
            like = Spec(problem.x_shape, problem.x_dtype)
            check_tangents(call.seeds, like, "x", family=problem.family)
        impl = _impl(op, problem)
    except Exception as error:
        better = explain(
            error,
            setting.adapter,
            call.f,
            call.x,
            problem.ctx,
            call.y,
            trees=op.tree_output,
            has_aux=draft.aux is not None,  # call.f returns the y of the user's pair
        )
        if better is None:
            raise
        raise better from error
    plain, valued = op.methods  # names of the prepared methods
    methods = (getattr(impl, plain), getattr(impl, valued))
    return Built(problem, impl, problem._spec, methods, tree=draft.tree)


def _impl(op, problem):
    """The prepared implementation of ``op``: the adapter's, or the core's answer to an empty problem.

    An empty ``x`` is known before asking the adapter; an empty ``f(x)`` only
    once the output's shape is learned, which the adapter may do while
    preparing (:mod:`diffinterface.core.empty`).
    """
    adapter = problem.adapter
    handles_empty = op.name in adapter.capabilities.own_empty_results
    if not handles_empty and problem.is_empty(op):
        return prepare_empty(op, problem)
    impl = (problem.same_point and adapter.prepare_same_point(op.name, problem)) or problem.impl(
        op.name
    )
    if problem._spec is not None:  # an adapter that learned the output its own way
        require_real_output(problem._spec, problem.x_dtype, problem.f)
    if not handles_empty and problem.is_empty(op):
        return prepare_empty(op, problem)
    return impl


def check_tangents(tangents, like, like_name, name="tangents", family=None):
    """Raise unless ``tangents`` is a non-empty tuple of real floating arrays shaped like ``like`` (a Spec).

    Each must have ``like``'s dtype too: derivatives are computed in that dtype,
    and a complex tangent for a real function has no real meaning (JAX would
    silently drop its imaginary part); and, given ``family``, be an array of
    that family (x's).
    """
    if not isinstance(tangents, tuple) or not tangents:
        raise TypeError(
            f"{name}: expected a non-empty tuple of arrays shaped like {like_name} (a batch; for one, "
            f"({name[:-1]},)); got {describe(tangents) if is_array(tangents) else type(tangents).__name__}"
        )
    for i, t in enumerate(tangents):
        if not is_array(t) or shape_of(t) != like.shape:
            raise ValueError(
                f"{name}[{i}]: expected an array shaped like {like_name}, {like.shape}; got {describe(t)}"
            )
        dtype = dtype_name(t)
        if dtype != like.dtype:
            kind = (
                "a real floating-point array"
                if dtype not in FLOAT_DTYPES
                else f"the dtype of {like_name}"
            )
            raise TypeError(
                f"{name}[{i}]: expected {kind}, {like.dtype} like {like_name}; got {describe(t)}. "
                "Convert it yourself: diffinterface does not change dtypes."
            )
        if family is not None:
            require_family(t, family, f"{name}[{i}]", like_name)
