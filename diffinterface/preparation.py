"""Preparation objects: what an operator decided once, reused by every prepared call.

``prepare_gradient(f, backend, x)`` returns a :class:`Preparation` holding the
adapter's compiled or seeded implementation (``impl``) and the signature it was
made for. A prepared call runs ``impl`` and nothing else; with ``strict=True``
it first compares its arguments with the signature and raises
:class:`PreparationMismatchError` listing every slot.

    >>> import numpy as np, diffinterface as di
    >>> f = lambda x: (x ** 2).sum()
    >>> prep = di.prepare_gradient(f, di.AutoFiniteDiff(), np.ones(3), strict=True)
    >>> di.gradient(f, di.AutoFiniteDiff(), np.ones(4), prep=prep)
    Traceback (most recent call last):
    ...
    diffinterface.errors.PreparationMismatchError: ...
"""

from __future__ import annotations

from .arrays import dtype_name, family_of, shape_of
from .errors import PreparationMismatchError


def _array_signature(a):
    if a is None:
        return None
    return (family_of(a), dtype_name(a), shape_of(a))


def _format(value):
    if value is None:
        return "none"
    if isinstance(value, tuple) and len(value) == 3 and all(isinstance(v, (str, tuple)) for v in value):
        family, dtype, shape = value
        return f"{family} {dtype} {shape}"
    return repr(value)


def signature(f, backend, x, tangents, contexts, y):
    """The slots a strict preparation records, as a dict of comparable values."""
    return {
        "f": f,
        "backend": backend,
        "x": _array_signature(x),
        "y": _array_signature(y),
        "tangents": None if tangents is None else tuple(_array_signature(t) for t in tangents),
        "contexts": tuple(
            (c.kind, _array_signature(c.value) if shape_of(c.value) else type(c.value).__name__)
            for c in contexts
        ),
    }


class Preparation:
    """Result of ``prepare_<operator>``; pass it back as ``prep=``.

    Attributes: ``operator`` (its family's name), ``backend``, ``impl`` (the
    object whose methods do the numeric work), ``spec`` (output shape and
    dtype, when it was needed), ``strict``.
    """

    __slots__ = ("operator", "backend", "impl", "spec", "strict", "recorded", "fast")

    def __init__(self, operator, backend, impl, spec, strict, recorded):
        self.operator = operator
        self.backend = backend
        self.impl = impl
        self.spec = spec
        self.strict = strict
        self.recorded = recorded
        # The operator name when a call may skip every check (not strict): the
        # public functions compare it to take their fast path.
        self.fast = None if strict else operator

    def __repr__(self):
        return f"<{self.operator} preparation for {self.backend!r}{' (strict)' if self.strict else ''}>"

    def check(self, operator, f, backend, x, tangents, contexts, y):
        """Raise unless this preparation fits the call (operator always; the rest if strict)."""
        if operator != self.operator:
            raise PreparationMismatchError(
                f"prep: this preparation was made by prepare_{self.operator}, "
                f"but it was passed to {operator}; use prepare_{operator}"
            )
        if not self.strict:
            return
        given = signature(f, backend, x, tangents, contexts, y)
        lines = []
        mismatch = False
        for slot, prepared in self.recorded.items():
            now = given[slot]
            same = now is prepared if slot == "f" else now == prepared
            if same:
                lines.append(f"  {slot}: matches")
            else:
                mismatch = True
                lines.append(f"  {slot}: MISMATCH, prepared {_format(prepared)}, given {_format(now)}")
        if mismatch:
            raise PreparationMismatchError(
                f"prep: the call does not match the strict preparation of {operator}:\n" + "\n".join(lines)
            )
