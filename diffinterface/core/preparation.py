"""Preparation objects: what an operator decided once, and the call it was decided for.

``prepare_gradient(f, backend, x)`` returns a :class:`Preparation`. Its
:class:`Plan` holds the adapter's prepared implementation (``impl``), the
methods every prepared call runs, the pytree plans and the call's signature
(:mod:`diffinterface.core.signature`), both as comparable slots for the
messages and as the cheap per-call tests. By default (``strict=True``) every
prepared call compares its arguments with it, at a cost of a few attribute
reads, and a mismatch raises :class:`~diffinterface.PreparationMismatchError`
listing every slot. ``strict=False`` skips the comparison, at the caller's
own risk: a call that does not fit may then return wrong results.

A preparation is immutable, but for one case: an adapter that learns f's
output from each call (``output_from_each_call``, autograd's jacobian) meets a
pytree output only at a call, and that call replaces the plan, in one
reference (:meth:`Preparation.adopt`), so that the caller's object keeps working.
"""

from __future__ import annotations

from typing import Any, NamedTuple

from ..errors import PreparationMismatchError
from .signature import FastCheck, mismatch_report, signature


class Call(NamedTuple):
    """The arguments of one operator call, by name (built off the prepared fast path only).

    ``op`` is the operator's row, ``valued`` 1 for its value-and method,
    ``seeds`` the tangents or cotangents (None for operators without them).

    >>> import numpy as np, diffinterface as di
    >>> from diffinterface.core import OPERATORS
    >>> call = Call(OPERATORS["pushforward"], np.sin, di.AutoFiniteDiff(), np.ones(2), (np.ones(2),),
    ...             (di.Constant(2.0),))
    >>> [type(a).__name__ for a in call.arguments]
    ['ndarray', 'tuple', 'float']
    """

    op: Any
    f: Any
    backend: Any
    x: Any
    seeds: Any = None
    contexts: tuple = ()
    y: Any = None
    valued: int = 0
    prep: Any = None
    out: Any = None
    #: f returns ``(y, aux)`` (see :mod:`diffinterface.core.aux`)
    has_aux: bool = False
    #: a same-point preparation (see :mod:`diffinterface.core.same_point`)
    same_point: bool = False

    @property
    def ctx(self):
        """The contexts' values, as f receives them."""
        return tuple(c.value for c in self.contexts)

    @property
    def arguments(self):
        """The prepared methods' arguments: ``(x, *ctx)`` or ``(x, seeds, *ctx)``."""
        head = (self.x,) if self.seeds is None else (self.x, self.seeds)
        return head + self.ctx if self.contexts else head


class Plan:
    """What a preparation decided: the implementation, the methods calls run, and the call they serve.

    Built once from the :class:`~diffinterface.core.transform.Built` result
    of the pipeline (:mod:`diffinterface.core.prepare`): ``methods`` are the
    (plain, valued) prepared methods; ``tree`` is the flattening plan of a
    pytree x, ``ytree`` the :class:`~diffinterface.core.output_tree.OutputPlan`
    of a pytree output (``spec`` then describes the flat output the adapter
    sees); ``movable`` a same-point plan that ``impl.move(x)`` serves at
    another x; ``check`` the :class:`~diffinterface.core.signature.FastCheck`
    of the call, None when the preparation is not strict; ``recorded`` its
    comparable slots.
    """

    __slots__ = ("impl", "spec", "methods", "tree", "ytree", "check", "recorded", "call", "movable")

    def __init__(self, call, built, strict):
        self.call = call
        self.impl, self.spec, self.methods = built.impl, built.spec, built.methods
        self.tree, self.ytree, self.movable = built.tree, built.ytree, built.movable
        self.recorded = signature(call) if strict else None  # what a mismatch report compares
        # nothing more to compare for an array x: a float's kind is its class; methods that check x
        # themselves
        x_checked = built.tree is None and (
            call.x.__class__ is float or getattr(built.impl, "checks_x", False) is True
        )
        cotangent_tree = built.ytree if call.op.seeds == "cotangents" else None
        self.check = FastCheck(call, built.tree, cotangent_tree, x_checked) if strict else None


class Preparation:
    """Result of ``prepare_<operator>``; pass it back as ``prep=``.

    ``prepare_<operator>`` builds it; a user never calls the constructor. Once
    built it cannot be changed: prepare again for another call.

    Parameters
    ----------
    op : Operator
        The operator's row of the operator table (``operator`` is its name).
    backend : AbstractBackend
        The selector the preparation was made for.
    strict : bool
        Whether every prepared call compares its arguments with the prepared
        call (raising :class:`~diffinterface.PreparationMismatchError`).
    plan : Plan
        What the preparation decided: the adapter's implementation, the
        methods prepared calls run and the prepared call's signature.
    has_aux : bool, default False
        Whether ``f`` returns ``(y, aux)``.

    Attributes
    ----------
    operator : str
        The operator family's name, e.g. ``"gradient"``.
    impl : object
        The object whose methods do the numeric work.
    spec : object or None
        The output's shape and dtype, when the preparation needed them.

    Examples
    --------
    >>> import numpy as np, diffinterface as di
    >>> def f(x):
    ...     return (x ** 2).sum()
    >>> prep = di.prepare_gradient(f, di.AutoFiniteDiff(), np.ones(2))
    >>> prep.operator, prep.strict, prep.has_aux
    ('gradient', True, False)
    >>> np.round(di.gradient(f, di.AutoFiniteDiff(), np.array([1.0, 2.0]), prep=prep), 6)
    array([2., 4.])
    """

    # ``methods`` and ``quick_check`` repeat the plan's: the prepared path reads them from here,
    # one attribute each (they change only with the plan, in adopt)
    __slots__ = ("op", "backend", "strict", "plan", "methods", "quick_check", "has_aux")

    def __init__(self, op, backend, strict, plan, has_aux=False):
        for slot, value in (
            ("op", op),
            ("backend", backend),
            ("strict", bool(strict)),
            ("has_aux", has_aux),
        ):
            object.__setattr__(self, slot, value)
        self._take(plan)

    def __setattr__(self, name, value):
        raise AttributeError(f"a Preparation cannot be changed ({name}); prepare again instead")

    def _take(self, plan):
        object.__setattr__(self, "plan", plan)
        object.__setattr__(self, "methods", plan.methods)
        object.__setattr__(self, "quick_check", plan.check)

    def adopt(self, fresh):
        """Take ``fresh``'s plan (a preparation of the same call that learned f's pytree output)."""
        self._take(fresh.plan)

    impl = property(lambda self: self.plan.impl)
    spec = property(lambda self: self.plan.spec)
    tree = property(lambda self: self.plan.tree)
    ytree = property(lambda self: self.plan.ytree)

    @property
    def operator(self):
        return self.op.name

    def __repr__(self):
        aux = " (has_aux)" if self.has_aux else ""
        size = getattr(
            self.plan.impl, "batch_size", None
        )  # seeds per vectorized pass of its sweeps
        return (
            f"<{self.op.name} preparation for {self.backend!r}{'' if size is None else f', batch_size={size}'}"
            f"{aux}{'' if self.strict else ' (strict=False)'}>"
        )

    def check(self, call):
        """Raise unless this preparation fits the :class:`Call` (the operator always; the rest when strict)."""
        op = call.op
        if op is not self.op:
            raise PreparationMismatchError(
                f"prep: this preparation was made by prepare_{self.op.name}, "
                f"but it was passed to {op.name}; use prepare_{op.name}"
            )
        if call.has_aux is not self.has_aux:
            raise PreparationMismatchError(
                f"has_aux: this preparation was made with has_aux={self.has_aux}, but this call has "
                f"has_aux={call.has_aux}; pass has_aux={self.has_aux}, or prepare again with has_aux={call.has_aux}"
            )
        if not self.strict:
            return
        report = mismatch_report(op.name, self.plan.recorded, signature(call))
        if report is not None:
            raise PreparationMismatchError(report)
