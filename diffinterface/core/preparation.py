"""Preparation objects: what an operator decided once, and the call it was decided for.

``prepare_gradient(f, backend, x)`` returns a :class:`Preparation`. Its
:class:`Plan` holds the adapter's prepared implementation (``impl``), the
methods every prepared call runs, the pytree plans and the call's signature
in its one :class:`~diffinterface.core.check.Check`. By default
(``strict=True``) every prepared call compares its arguments with it, at a
cost of a few attribute reads, and a mismatch raises
:class:`~diffinterface.PreparationMismatchError` listing every slot.
``strict=False`` skips the signature (never the operator, ``has_aux`` or a
same-point preparation's point), at the caller's own risk: a call that does
not fit may then return wrong results.

A preparation is immutable, but for one case: an adapter that learns f's
output from each call (``output_from_each_call``, autograd's jacobian) meets a
pytree output only at a call, and that call replaces the plan, in one
reference (:meth:`Preparation.adopt`), so that the caller's object keeps working.
"""

from __future__ import annotations

from typing import Any, NamedTuple

from .check import Check


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
    #: a same-point preparation (see :meth:`~diffinterface.core.adapter.Adapter.prepare_same_point`)
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
    sees); ``check`` the :class:`~diffinterface.core.check.Check` of
    the call (None for the preparation of an unprepared call, which the core
    runs once and never compares: ``checked=False``).
    """

    __slots__ = ("impl", "spec", "methods", "tree", "ytree", "check", "call")

    def __init__(self, call, built, strict, checked=True):
        self.call = call
        self.impl, self.spec, self.methods = built.impl, built.spec, built.methods
        self.tree, self.ytree = built.tree, built.ytree
        cotangent_tree = built.ytree if call.op.seeds == "cotangents" else None
        self.check = Check(call, built.tree, cotangent_tree, strict) if checked else None


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
    check : Check
        The preparation's one check (:mod:`diffinterface.core.check`):
        ``prep.check(call)`` raises ``PreparationMismatchError`` unless the
        :class:`Call` fits.

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

    # ``methods`` and ``check`` repeat the plan's: the prepared path reads them from here, one
    # attribute each (they change only with the plan, in adopt); ``check(call)`` raises
    # PreparationMismatchError unless the call fits
    __slots__ = ("op", "backend", "strict", "plan", "methods", "check", "has_aux")

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
        object.__setattr__(self, "check", plan.check)

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
