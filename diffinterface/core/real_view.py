"""The real view of a value with complex leaves: each complex array as a real one with a last axis of 2.

:class:`ComplexView` records which leaves of a value (an array or a pytree)
are complex and converts to and from its real view, for the convention of
:mod:`diffinterface.core.complex_convention`.

    >>> import numpy as np
    >>> view = ComplexView(np.array([1 + 2j]))
    >>> view.real(np.array([1 + 2j]))
    array([[1., 2.]])
"""

from __future__ import annotations

from ..families import FAMILIES, NUMBERS, family_of, is_array, is_complex


class ComplexView:
    """Which leaves of a value (an array or a pytree) are complex, and the conversions to and from its real view.

    :meth:`real` and :meth:`complex_result` convert the user's arrays, compiled
    where the family compiles (JAX: one dispatch each, not one per operation);
    :meth:`real_inside` and :meth:`complex_inside` run inside f, on traced values.
    """

    __slots__ = ("_flatten", "any", "complex_result", "family", "key", "mask", "real", "spec")

    def __init__(self, value):
        if is_array(value):
            leaves, self.spec, self._flatten = [value], None, None
        else:
            import optree

            leaves, self.spec = optree.tree_flatten(value)
            self._flatten = optree.tree_flatten
        self.mask = tuple(is_complex(leaf) for leaf in leaves)
        self.any = any(self.mask)
        families = [
            family_of(leaf) for leaf in leaves if leaf.__class__ is not float and is_array(leaf)
        ]
        self.family = FAMILIES[families[0] if families else NUMBERS]
        self.key = (self.family.name, self.mask, self.spec)
        like = next((leaf for leaf, m in zip(leaves, self.mask) if m), None)
        compiled = self.family.compiled if like is not None else (lambda fn, like: fn)
        #: ``value`` (shaped like the viewed one) with each complex leaf as its real view
        self.real = compiled(lambda v: self._map(v, self.family.real_view), like)
        #: a result's complex leaves rebuilt from its real view (a numpy scalar as a 0-d array)
        self.complex_result = compiled(
            lambda v: self._map(v, lambda r: self.complex_array(r[..., 0], r[..., 1])), like
        )

    def _map(self, value, convert):
        if self.spec is None:
            return convert(value) if self.mask[0] else value
        leaves = self._flatten(value)[0]
        return self.spec.unflatten([convert(a) if m else a for a, m in zip(leaves, self.mask)])

    def real_inside(self, value):
        """:attr:`real` inside f, each leaf by its own family (autograd's boxes of a numpy x)."""
        return self._map(value, lambda a: FAMILIES[family_of(a)].real_view(a))

    def complex_inside(self, value):
        """The complex leaves rebuilt from a real view, inside f (traced values included)."""
        return self._map(
            value, lambda r: FAMILIES[family_of(r)].complex_from_parts(r[..., 0], r[..., 1])
        )

    def complex_array(self, re, im):
        c = self.family.complex_from_parts(re, im)
        return self.family.as_result(c)
