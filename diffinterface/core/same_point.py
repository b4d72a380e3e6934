"""Same-point preparations: ``prepare_pushforward_same_point``, ``prepare_pullback_same_point``,
``prepare_hvp_same_point``.

Krylov solvers and Newton-CG apply one derivative at one x to many seeds. A
same-point preparation computes once what depends only on x (an adapter's
``prepare_same_point(operator, problem)``: JAX's linearization or ``vjp``
residuals, torch's recorded graph, autograd's recorded pass), and its calls
run the seed-dependent part only. Calls must pass the prepared x and
contexts: the very objects, or equal values (an x of other values raises
:class:`~diffinterface.errors.PreparationMismatchError`: the preparation's
:class:`~diffinterface.core.check.Check` compares them, strict or not). An x
or a Constant array changed in place keeps its identity: a strict
preparation keeps copies of those that can be written in place and refuses
them too, one comparison of each per call; with ``strict=False`` nothing is
copied and changing them in place is the caller's risk (backends that
computed what depends on them at preparation answer at the old values, the
others at the new ones). An adapter without a same-point recipe gets the
ordinary preparation, with the same check.
"""

from __future__ import annotations

from .transform import Built, Step


def same_point(draft, setting):
    """The transform of a same-point preparation: its plan says whether ``impl.move`` may serve another x.

    The call keeps ``same_point``, so the adapter may prepare its same-point
    recipe (``Adapter.prepare_same_point``) and the preparation's check
    compares the point.
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
        return built._replace(movable=movable)

    return Step(draft, wrap)


def moved(prep, x):
    """The same-point preparation ``prep`` at another point ``x`` (same shape and dtype), reusing what it
    compiled, or None where its adapter cannot move it (then prepare again).

    For callers that go from point to point with one function, backend and contexts, as the scipy adaptors
    do from iterate to iterate; ``x`` changed in place afterwards is refused as the prepared point's
    is (where strict).
    """
    from .preparation import Plan, Preparation

    plan = prep.plan
    if not plan.movable:
        return None
    call, op = plan.call._replace(x=x), prep.op
    impl = plan.impl.move(x)
    methods = (getattr(impl, op.plain), getattr(impl, op.valued))
    built = Built(None, impl, plan.spec, methods, movable=True)
    return Preparation(op, prep.backend, prep.strict, Plan(call, built, prep.strict))
