"""The operator table: every operator family once, with the facts every layer derives from it.

The public functions (``diffinterface/operators/``), the adapter defaults
(``prepare_<name>`` returning None), ``SecondOrder``'s delegation, the value
methods of the prepared-call path and the conformance kit's operator lists
all read this table. Each operator family's module in ``operators/`` defines
its row (facts: seeds, order, shapes, the mode a fallback prefers) and what
the operator *does* (its fallback, its answer to an empty problem, how its
results become pytrees), and registers both here with
:func:`register_operator`; the core imports no operator. Adding an operator
family means its module in ``operators/`` and its re-export lines.

    >>> import diffinterface
    >>> from diffinterface.core.operator_table import OPERATORS
    >>> OPERATORS["gradient"].methods
    ('gradient', 'value_and_gradient')
    >>> [op.name for op in OPERATORS.values() if op.order == 2]
    ['second_derivative', 'hvp', 'hessian']
"""

from __future__ import annotations

from typing import Any, Callable, Literal, Optional

from ..frozen import Frozen


class Rules:
    """What an operator module tells the core about its family (see :func:`register_operator`).

    - ``fallback(problem) -> Impl``: the operator built from the adapter's primitives;
    - ``empty(answer) -> Impl``: the answer to an empty problem, from an
      :class:`~diffinterface.core.empty.EmptyAnswer` (zeros shaped like x or y, the value);
    - ``flat_x(plan, plain, valued, problem) -> (plain, valued)``: the prepared methods over a
      flat problem made to take and return pytrees like x (``plan``: its
      :class:`~diffinterface.core.pytree.TreePlan`); None: the operator takes no pytree x;
    - ``flat_y(plan, plain, valued, x_plan) -> (plain, valued)``: the same for a pytree output
      (``plan``: its :class:`~diffinterface.core.output_tree.OutputPlan`); None: f must return an array.
    """

    __slots__ = ("fallback", "empty", "flat_x", "flat_y")

    def __init__(
        self,
        fallback: Callable,
        empty: Callable,
        flat_x: Optional[Callable] = None,
        flat_y: Optional[Callable] = None,
    ):
        self.fallback, self.empty, self.flat_x, self.flat_y = fallback, empty, flat_x, flat_y


#: operator family name -> its :class:`Rules`, filled by each operator module
RULES: dict[str, Rules] = {}
#: operator family name -> fallback(problem) -> Impl (each :class:`Rules`' fallback), read by
#: ``Problem.impl``
FALLBACKS: dict[str, Callable] = {}


#: what seeds an operator takes: tangents (shaped like x), cotangents (shaped like f(x)), or none
Seeds = Optional[Literal["tangents", "cotangents"]]
#: what a derivative method returns: the value f(x), the first or the second derivative
Returned = Literal["value", "first", "second"]
#: the shape of an operator's result: like x, like f(x), f(x)'s then x's (a Jacobian), x's twice
ResultShape = Literal["x", "y", "y+x", "x+x"]
#: the mode a fallback uses on an adapter that does both ("smaller side": forward when x is
#: smaller than f(x), as for a Jacobian; the adapter's ``square_jacobian_mode`` when they match)
FallbackMode = Literal["forward", "reverse", "smaller side"]


class Operator(Frozen, eq=False):
    """One operator family, its row given by keyword:
    ``Operator(name="gradient", order=1, seeds=None, methods=(...), ...)``.

    ``methods`` are the prepared implementation's method names: the plain
    operator, then the one that also returns the value (and first
    derivative). ``valued_returns`` names what that second method returns, in
    order ("value", "first", "second"); the leading "value" entries are not
    derivatives and take no ``out=`` buffer.
    """

    __frozen_keyword_only__ = (
        "name",
        "order",
        "seeds",
        "methods",
        "valued_returns",
        "plain_returns",
        "scalar_x",
        "scalar_y",
        "two_argument",
        "tree_output",
        "fallback_mode",
        "result_shape",
        "for_array_outputs",
    )

    #: the family's name, as the public functions spell it ("gradient", "hvp")
    name: str
    #: 1 or 2: the order of the derivative the plain operator returns
    order: int
    #: the seeds the operator takes (None, "tangents" or "cotangents")
    seeds: Seeds
    #: the prepared implementation's method names: the plain one, then the one returning values too
    methods: tuple[str, str]
    #: what the second method returns, in order
    valued_returns: tuple[Returned, ...]
    #: what the plain operator returns: "first" or "second" derivative
    plain_returns: Returned
    #: x must be a scalar (derivatives along a line)
    scalar_x: bool = False
    #: f must return a scalar
    scalar_y: bool = False
    #: two-argument functions ``f(y, x)`` (``y=``) are accepted
    two_argument: bool = False
    #: f may return a pytree of arrays (gradient and hessian need a scalar output by definition)
    tree_output: bool = False
    #: the mode a fallback uses on an adapter that does both
    fallback_mode: FallbackMode = "forward"
    #: the shape of the plain operator's result(s): "x" (gradient, pullback, hvp), "y" (derivative,
    #: pushforward, second derivative), "y+x" (jacobian) or "x+x" (hessian)
    result_shape: ResultShape = "x"
    #: the operator a message suggests when f returns an array where this one needs a scalar
    for_array_outputs: Optional[str] = None

    @property
    def n_values(self) -> int:
        return self.valued_returns.count("value")

    @property
    def plain(self) -> str:
        return self.methods[0]

    @property
    def valued(self) -> str:
        return self.methods[1]

    @property
    def rules(self) -> Rules:
        """This family's :class:`Rules`, registered by its module in ``operators/``."""
        return RULES[self.name]

    def listed_in(self, names) -> bool:
        """True when an adapter's set of operator names (``pytrees``, ``own_empty_results``...) holds this one."""
        return self.name in names

    def __repr__(self):
        return f"<operator {self.name}>"


def register_operator(op: Operator, **rules: Any) -> Operator:
    """Register an operator family: its row ``op`` and what its module does (its :class:`Rules`).

    Each module of ``operators/`` defines its row and calls this once, at
    import, with its rules; ``import diffinterface`` imports them all before
    any call. The core reads the table generically: an adapter's
    ``prepare_<name>`` defaults to None for every registered family
    (:class:`~diffinterface.core.adapter.Adapter`), the kit lists them.

    >>> import diffinterface
    >>> RULES["gradient"].fallback is FALLBACKS["gradient"], RULES["derivative"].flat_x is None
    (True, True)
    """
    OPERATORS[op.name] = op
    RULES[op.name] = Rules(**rules)
    FALLBACKS[op.name] = rules["fallback"]
    return op


#: operator family name -> its :class:`Operator` row, filled by each module of ``operators/``
#: (:func:`register_operator`), in the order ``diffinterface/operators/__init__.py`` imports them
OPERATORS: dict[str, Operator] = {}


def operators_of_order(order: int) -> tuple:
    """The names of the registered operator families of ``order`` (1 or 2), in registration order.

    >>> import diffinterface
    >>> operators_of_order(2)
    ('second_derivative', 'hvp', 'hessian')
    """
    return tuple(name for name, op in OPERATORS.items() if op.order == order)
