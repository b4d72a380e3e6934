"""The :class:`Scenario` type and the builders every scenario set shares.

The sets live in :mod:`.scenarios` (first and second order), :mod:`.buffer_scenarios`,
:mod:`.edge_scenarios` and :mod:`.pytree_scenarios`; each builds on this module, so
no set imports another one back.
"""

from __future__ import annotations

import dataclasses
from typing import Any, Callable, Optional

import numpy as np

from ..core import operators_of_order
from ..core import OPERATORS as OPERATOR_TABLE

FIRST_ORDER = operators_of_order(1)
"""The names of the first-order operators, a tuple of str (a :class:`Scenario`'s ``operator``).

Examples
--------
>>> from diffinterface.testing import FIRST_ORDER
>>> "gradient" in FIRST_ORDER, "hessian" in FIRST_ORDER
(True, False)
"""
SECOND_ORDER = operators_of_order(2)
"""The names of the second-order operators, a tuple of str.

Examples
--------
>>> from diffinterface.testing import SECOND_ORDER
>>> sorted(SECOND_ORDER)
['hessian', 'hvp', 'second_derivative']
"""
OPERATORS = FIRST_ORDER + SECOND_ORDER
#: operators whose function may be two-argument, f(y, x, *contexts)
TWO_ARGUMENT_OPERATORS = tuple(name for name, op in OPERATOR_TABLE.items() if op.two_argument)


@dataclasses.dataclass(frozen=True, eq=False)
class Scenario:
    """One operator on one function at one point, with its expected results.

    Each parameter is also the attribute of the same name. An inconsistent
    scenario (an unknown operator, tangents missing or superfluous, no
    expected result) raises TypeError or ValueError naming the field.

    Parameters
    ----------
    operator : str
        The operator's name, one of :data:`FIRST_ORDER` or :data:`SECOND_ORDER`.
    f : callable
        ``f(x, *contexts)``, or with ``y`` set ``f(y, x, *contexts)``, which
        writes into y.
    x : array, float or pytree
        The point.
    y : array, optional
        A buffer shaped like f(x), for a two-argument ``f``; only for operators
        that have a two-argument form.
    tangents : tuple, optional
        The tangents (pushforward, hvp) or cotangents (pullback): a non-empty
        tuple; None for the other operators.
    contexts : tuple of Constant or Cache, default ()
        Extra arguments of ``f``.
    value : object, optional
        f(x), the expected value.
    first : object
        The expected first-order result: pushforward and pullback a tuple, one
        entry per tangent; derivative, gradient, jacobian an array. For a
        second-order operator, the derivative or gradient that
        ``value_derivative_and_second_derivative`` and friends also return.
    second : object
        The expected second-order result (second_derivative, hvp as a tuple,
        hessian); required for second-order operators.
    name : str, optional
        The scenario's name in test ids; default ``"<operator>-<dtype>"``.

    Examples
    --------
    >>> import numpy as np, diffinterface as di
    >>> s = Scenario("gradient", lambda x: (x ** 2).sum(), np.array([1.0, 2.0]),
    ...              value=np.float64(5.0), first=np.array([2.0, 4.0]), name="square")
    >>> s.dtype, s.x_shape
    ('float64', (2,))
    """

    operator: str
    f: Callable
    x: Any
    y: Any = None
    tangents: Optional[tuple] = None
    contexts: tuple = ()
    value: Any = None
    first: Any = None
    second: Any = None
    name: str = ""

    def __post_init__(self):
        if self.operator not in OPERATORS:
            raise ValueError(f"operator: expected one of {OPERATORS}; got {self.operator!r}")
        if not callable(self.f):
            raise TypeError(f"f: expected a callable; got {type(self.f).__name__}")
        needs_tangents = self.operator in ("pushforward", "pullback", "hvp")
        if needs_tangents and not (isinstance(self.tangents, tuple) and self.tangents):
            raise TypeError(
                f"tangents: {self.operator} scenarios need a non-empty tuple of tangents; got {self.tangents!r}"
            )
        if not needs_tangents and self.tangents is not None:
            raise TypeError(
                f"tangents: {self.operator} takes no tangents; got {type(self.tangents).__name__}"
            )
        if self.y is not None and self.operator not in TWO_ARGUMENT_OPERATORS:
            raise ValueError(f"y: {self.operator} has no two-argument form; y must be None")
        if not isinstance(self.contexts, tuple):
            raise TypeError(
                f"contexts: expected a tuple of di.Constant/di.Cache; got {type(self.contexts).__name__}"
            )
        if self.first is None and self.operator in FIRST_ORDER:
            raise ValueError(f"first: a {self.operator} scenario needs its expected result")
        if self.second is None and self.operator in SECOND_ORDER:
            raise ValueError(
                f"second: a {self.operator} scenario needs its expected second-order result"
            )
        if not self.name:
            object.__setattr__(self, "name", f"{self.operator}-{self.dtype}")

    @property
    def order(self) -> int:
        return 1 if self.operator in FIRST_ORDER else 2

    @property
    def python_number(self) -> bool:
        """True when x is a Python float: such scenarios run on numpy results only."""
        return self.x.__class__ in (int, float)

    @property
    def dtype(self) -> str:
        """x's dtype; for a pytree x, its least precise leaf's (the tolerances follow it)."""
        from ..families import dtype_name
        from .families import is_container, tree_leaves

        if is_container(self.x):
            return min(
                (dtype_name(leaf) for leaf in tree_leaves(self.x)), key=("float32", "float64").index
            )
        return dtype_name(self.x)

    @property
    def x_shape(self) -> tuple:
        """x's shape (``()`` for a pytree x)."""
        from ..families import is_array, shape_of

        return shape_of(self.x) if is_array(self.x) else ()

    @property
    def two_argument(self) -> bool:
        return self.y is not None

    def __repr__(self):
        return f"<Scenario {self.name}>"


# -- test functions with hand-written derivatives ------------------------------------------------
#
# Each builder takes a numpy x and returns (f, value, jac) where jac has shape
# f(x).shape + x.shape; scalar-output ones also return the Hessian. Constants
# are drawn in x's dtype so that results keep x's dtype.


def _contract_x(jac, t, x_ndim):
    """J @ t over x's axes (the pushforward of t)."""
    axes = list(range(jac.ndim - x_ndim, jac.ndim))
    return np.tensordot(jac, t, axes=(axes, list(range(x_ndim))))


def _contract_y(jac, c, y_ndim):
    """c @ J over y's axes (the pullback of c)."""
    return np.tensordot(c, jac, axes=(list(range(y_ndim)), list(range(y_ndim))))


def _tangent(shape, dtype, seed):
    rng = np.random.default_rng(seed)
    return rng.uniform(-1.0, 1.0, size=shape).astype(dtype)


def _x(shape, dtype):
    """A deterministic, well-scaled input: values in [0.2, 1.1], all distinct."""
    n = int(np.prod(shape))
    return (
        np.linspace(0.2, 1.1, n).reshape(shape).astype(dtype)
        if shape
        else np.asarray(0.7, dtype=dtype)
    )
