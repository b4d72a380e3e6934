"""The operator table: every operator family once, with the facts every layer derives from it.

The public functions (``diffinterface/operators/``), the adapter defaults
(``prepare_<name>`` returning None), ``SecondOrder``'s delegation, the value
methods of the prepared-call path and the conformance kit's operator lists
all read this table. Adding an operator family means one row here and its
module in ``operators/``.

    >>> from diffinterface.core.operator_table import OPERATORS
    >>> OPERATORS["gradient"].methods
    ('gradient', 'value_and_gradient')
    >>> [op.name for op in OPERATORS.values() if op.order == 2]
    ['second_derivative', 'hvp', 'hessian']
"""

from __future__ import annotations

from typing import Optional

from ..frozen import Frozen


class Operator(Frozen, eq=False):
    """One operator family.

    ``methods`` are the prepared implementation's method names: the plain
    operator, then the one that also returns the value (and first
    derivative). ``valued_returns`` names what that second method returns, in
    order ("value", "first", "second"); the leading "value" entries are not
    derivatives and take no ``out=`` buffer.
    """

    name: str
    order: int
    #: None, "tangents" (shaped like x) or "cotangents" (shaped like f(x))
    seeds: Optional[str]
    methods: tuple
    valued_returns: tuple
    #: what the plain operator returns: "first" or "second" derivative
    returns: str
    #: x must be a scalar (derivatives along a line)
    scalar_x: bool = False
    #: f must return a scalar
    scalar_y: bool = False
    #: two-argument functions ``f(y, x)`` (``y=``) are accepted
    allows_y: bool = False

    @property
    def n_values(self) -> int:
        return self.valued_returns.count("value")

    @property
    def plain(self) -> str:
        return self.methods[0]

    @property
    def valued(self) -> str:
        return self.methods[1]

    def __repr__(self):
        return f"<operator {self.name}>"


OPERATORS = {
    op.name: op
    for op in (
        Operator("pushforward", 1, "tangents", ("pushforward", "value_and_pushforward"), ("value", "first"),
                 "first", allows_y=True),
        Operator("pullback", 1, "cotangents", ("pullback", "value_and_pullback"), ("value", "first"),
                 "first", allows_y=True),
        Operator("derivative", 1, None, ("derivative", "value_and_derivative"), ("value", "first"),
                 "first", scalar_x=True, allows_y=True),
        Operator("gradient", 1, None, ("gradient", "value_and_gradient"), ("value", "first"),
                 "first", scalar_y=True),
        Operator("jacobian", 1, None, ("jacobian", "value_and_jacobian"), ("value", "first"),
                 "first", allows_y=True),
        Operator("second_derivative", 2, None, ("second_derivative", "value_derivative_and_second_derivative"),
                 ("value", "first", "second"), "second", scalar_x=True),
        Operator("hvp", 2, "tangents", ("hvp", "gradient_and_hvp"), ("first", "second"),
                 "second", scalar_y=True),
        Operator("hessian", 2, None, ("hessian", "value_gradient_and_hessian"), ("value", "first", "second"),
                 "second", scalar_y=True),
    )
}

FIRST_ORDER = tuple(name for name, op in OPERATORS.items() if op.order == 1)
SECOND_ORDER = tuple(name for name, op in OPERATORS.items() if op.order == 2)
