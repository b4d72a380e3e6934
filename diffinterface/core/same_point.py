"""Same-point preparations: ``prepare_pushforward_same_point``, ``prepare_pullback_same_point``,
``prepare_hvp_same_point``.

Krylov solvers and Newton-CG apply one derivative at one x to many seeds. A
same-point preparation computes once what depends only on x (an adapter's
``prepare_same_point(operator, problem)``: JAX's linearization or ``vjp``
residuals, torch's recorded graph, autograd's recorded pass), and its calls
run the seed-dependent part only. Calls must pass the prepared x and
contexts: the very objects, or equal values (an x of other values raises
:class:`~diffinterface.errors.PreparationMismatchError`). An x changed in
place keeps its identity, so the check cannot see it: mutating x after
preparing is the caller's risk (results stay those at the prepared values).
An adapter without a same-point recipe gets the ordinary preparation, with
the same check.
"""

from __future__ import annotations

import numpy as np

from ..errors import PreparationMismatchError
from ..families import as_numpy, is_array
from .aux import _leaves
from .transform import Built, Step


def _same_values(given, prepared):
    if given is prepared:
        return True
    try:
        given_leaves, prepared_leaves = _leaves(given), _leaves(prepared)
        return len(given_leaves) == len(prepared_leaves) and all(
            g is p
            or (np.array_equal(as_numpy(g), as_numpy(p)) if is_array(g) and is_array(p) else g == p)
            for g, p in zip(given_leaves, prepared_leaves)
        )
    except Exception:  # noqa: BLE001 - values that cannot be compared are not the prepared ones
        return False


def same_point(draft, setting):
    """The transform of a same-point preparation: its methods refuse another x or other contexts.

    The call keeps ``same_point``, so the adapter may prepare its same-point
    recipe (``Adapter.prepare_same_point``); the check wraps everything else.
    """
    call = draft.call
    if not call.same_point:
        return None
    op = call.op

    def wrap(built):
        impl = built.impl
        own = built.methods == (getattr(impl, op.plain), getattr(impl, op.valued))
        movable = (
            own
            and built.tree is None
            and built.ytree is None
            and callable(getattr(impl, "move", None))
        )
        return built._replace(methods=same_point_methods(call, built.methods), movable=movable)

    return Step(draft, wrap)


def moved(prep, x):
    """The same-point preparation ``prep`` at another point ``x`` (same shape and dtype), reusing what it
    compiled, or None where its adapter cannot move it (then prepare again).

    For callers that go from point to point with one function, backend and contexts, as the scipy adaptors
    do from iterate to iterate; ``x`` must not change afterwards (it is not copied).
    """
    from .preparation import Plan, Preparation

    plan = prep.plan
    if not plan.movable:
        return None
    call, op = plan.call._replace(x=x), prep.op
    impl = plan.impl.move(x)
    methods = same_point_methods(call, (getattr(impl, op.plain), getattr(impl, op.valued)))
    built = Built(None, impl, plan.spec, methods, movable=True)
    return Preparation(op, prep.backend, prep.strict, Plan(call, built, prep.strict))


def same_point_methods(call, methods):
    """The (plain, valued) ``methods`` refusing an x or contexts other than ``call``'s."""
    x0, ctx0, name = call.x, call.ctx, call.op.name

    def check(x, ctx):
        if x is not x0 and not _same_values(x, x0):
            raise PreparationMismatchError(
                f"x: this preparation (prepare_{name}_same_point) holds what depends on its own x; this call's x "
                f"has other values. Prepare again at this x, or use prepare_{name} for calls at several points"
            )
        if ctx != ctx0 and not all(_same_values(c, c0) for c, c0 in zip(ctx, ctx0)):
            raise PreparationMismatchError(
                f"contexts: this preparation (prepare_{name}_same_point) holds what depends on its contexts' "
                f"values; this call's differ. Prepare again with these, or use prepare_{name}"
            )

    plain_method, valued_method = methods

    def plain(x, seeds, *ctx):
        check(x, ctx)
        return plain_method(x, seeds, *ctx)

    def valued(x, seeds, *ctx):
        check(x, ctx)
        return valued_method(x, seeds, *ctx)

    return plain, valued
