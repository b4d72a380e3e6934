"""Edge-case scenarios: empty inputs and outputs, and the type of a scalar value.

Empty arrays: ``x`` of size 0 with a non-empty output, an empty output of a
non-empty ``x``, and both empty, for vector and matrix-shaped ``x``, on every
operator where the combination exists (one- and two-argument functions).
Their Jacobians have a zero-size axis, so the expected results are empty
arrays, or exact zeros where a result is an empty sum (a pushforward along an
empty ``x``, a pullback through an empty output); f's value is still checked.

Scalar values: every ``value_and_*`` of a scalar-valued ``f`` returns the
value as an array of x's family with f's dtype (a 0-d array; for numpy x a
0-d ``numpy.ndarray``, never a NumPy scalar or a Python float), and every
other 0-d numpy result likewise; the kit checks the type of every result it
compares (:meth:`~diffinterface.testing.Case.run`).

    >>> from diffinterface.testing import edge_scenarios
    >>> [s.name for s in edge_scenarios(operators="hessian")]
    ['hessian-empty_vector_to_scalar-float64', 'hessian-empty_matrix_to_scalar-float32']
"""

from __future__ import annotations

import numpy as np

from ..families import array_namespace
from .scenarios import OPERATORS, Scenario, _filter, _scenario, _tangent


def _offset_by_empty_sum(offset):
    """f(x) = sum(sin(x)) + offset: an output of offset's shape from an x of any size (empty included)."""

    def f(x):
        xp = array_namespace(x)
        return xp.sum(xp.sin(x)) + xp.asarray(offset)

    return f


def _empty_output(x):
    """f(x) = sin(x)[..., :0]: an empty output (its last axis cut to 0) of any x."""

    def f(x):
        xp = array_namespace(x)
        return xp.sin(x)[..., :0]

    return f, np.sin(x)[..., :0]


def _scalar_times_empty(x):
    """f(x) = x * zeros(0): an empty output of a scalar x."""
    zeros = np.zeros((0,), dtype=x.dtype)

    def f(x):
        xp = array_namespace(x)
        return x * xp.asarray(zeros)

    return f


#: (shape, kind, dtype) of the empty inputs: a vector and a matrix with no elements
_EMPTY_X = (((0,), "empty_vector", "float64"), ((2, 0), "empty_matrix", "float32"))


def _jacobian_pushforward_pullback(f, x, value, jac, what, *, batched=(), seed):
    """The jacobian, pushforward and pullback scenarios of f at x, each named ``<operator>-<what>``.

    The operators in ``batched`` take the tangents ``(t, -t)``; ``seed`` draws them.
    """
    return [
        _scenario(
            operator,
            f,
            x,
            value,
            jac,
            batched=operator in batched,
            seed=seed,
            name=f"{operator}-{what}",
        )
        for operator in ("jacobian", "pushforward", "pullback")
    ]


def _empty_first_order():
    scenarios = []
    add = scenarios.append
    for shape, kind, dtype in _EMPTY_X:
        x = np.zeros(shape, dtype=dtype)
        # x empty, output of 3 entries: a (3, *x.shape) Jacobian of size 0
        offset = np.linspace(0.5, 1.5, 3).astype(dtype)
        f, value = _offset_by_empty_sum(offset), offset
        jac = np.zeros((3, *shape), dtype=dtype)
        scenarios += _jacobian_pushforward_pullback(
            f,
            x,
            value,
            jac,
            f"{kind}_to_vector-{dtype}",
            batched=("pushforward", "pullback"),
            seed=20,
        )
        add(
            _scenario(
                "jacobian",
                f,
                x,
                value,
                jac,
                two_argument=True,
                name=f"jacobian-{kind}_to_vector-two_argument-{dtype}",
            )
        )
        # x empty, scalar output: the gradient is empty
        scalar = np.asarray(1.25, dtype=dtype)
        f = _offset_by_empty_sum(scalar)
        add(
            _scenario(
                "gradient",
                f,
                x,
                scalar,
                np.zeros(shape, dtype=dtype),
                name=f"gradient-{kind}_to_scalar-{dtype}",
            )
        )
        # x empty, output empty too
        f, value = _empty_output(x)
        jac = np.zeros(value.shape + shape, dtype=dtype)
        scenarios += _jacobian_pushforward_pullback(
            f, x, value, jac, f"{kind}_to_empty-{dtype}", seed=21
        )
    for shape, kind, dtype in (((3,), "vector", "float64"), ((2, 3), "matrix", "float32")):
        # x non-empty, output empty: a Jacobian with no rows
        x = np.linspace(0.2, 1.1, int(np.prod(shape))).reshape(shape).astype(dtype)
        f, value = _empty_output(x)
        jac = np.zeros(value.shape + shape, dtype=dtype)
        scenarios += _jacobian_pushforward_pullback(
            f, x, value, jac, f"{kind}_to_empty-{dtype}", batched=("pullback",), seed=22
        )
        add(
            _scenario(
                "pullback",
                f,
                x,
                value,
                jac,
                two_argument=True,
                seed=23,
                name=f"pullback-{kind}_to_empty-two_argument-{dtype}",
            )
        )
    x = np.asarray(0.7)
    f = _scalar_times_empty(x)
    add(
        _scenario(
            "derivative", f, x, np.zeros(0), np.zeros(0), name="derivative-scalar_to_empty-float64"
        )
    )
    add(
        _scenario(
            "derivative",
            f,
            x,
            np.zeros(0),
            np.zeros(0),
            two_argument=True,
            name="derivative-scalar_to_empty-two_argument-float64",
        )
    )
    return scenarios


def _empty_second_order():
    scenarios = []
    add = scenarios.append
    for shape, kind, dtype in _EMPTY_X:
        x = np.zeros(shape, dtype=dtype)
        value = np.asarray(1.25, dtype=dtype)
        f, empty = _offset_by_empty_sum(value), np.zeros(shape, dtype=dtype)
        t = _tangent(shape, dtype, 24)
        add(
            Scenario(
                "hvp",
                f,
                x,
                tangents=(t, -t),
                value=value,
                first=empty,
                second=(empty, empty),
                name=f"hvp-{kind}_to_scalar-batched-{dtype}",
            )
        )
        add(
            Scenario(
                "hessian",
                f,
                x,
                value=value,
                first=empty,
                second=np.zeros(shape + shape, dtype=dtype),
                name=f"hessian-{kind}_to_scalar-{dtype}",
            )
        )
    x = np.asarray(0.7)
    empty = np.zeros(0)
    add(
        Scenario(
            "second_derivative",
            _scalar_times_empty(x),
            x,
            value=empty,
            first=empty,
            second=empty,
            name="second_derivative-scalar_to_empty-float64",
        )
    )
    return scenarios


def edge_scenarios(operators=None):
    """Empty-array scenarios for every operator (first and second order).

    Parameters
    ----------
    operators : str or sequence of str, optional
        Keep only the empty-array scenarios of these operators, of either order (default: all of
        them); a name of no operator raises ValueError.

    Returns
    -------
    list of Scenario
        Scenarios whose x (and, for some, output) has no elements.

    Examples
    --------
    >>> from diffinterface.testing import FIRST_ORDER, SECOND_ORDER, edge_scenarios
    >>> [s.name for s in edge_scenarios("gradient")]
    ['gradient-empty_vector_to_scalar-float64', 'gradient-empty_matrix_to_scalar-float32']
    >>> sorted({s.operator for s in edge_scenarios()}) == sorted(FIRST_ORDER + SECOND_ORDER)
    True
    """
    return _filter(_empty_first_order() + _empty_second_order(), operators, OPERATORS)
