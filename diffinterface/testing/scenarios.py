"""Scenarios: one operator applied to one function at one point, with the answer known in advance.

A :class:`Scenario` holds the function, the input ``x``, the optional output
buffer ``y`` (two-argument form ``f(y, x, *contexts)``), the tangents, the
contexts and the expected results. Expected results come from analytic
formulas (a Jacobian written by hand, contracted with the tangents), never
from a backend.

    >>> from diffinterface.testing import default_scenarios
    >>> scenarios = default_scenarios(operators=["gradient"])
    >>> sorted({s.operator for s in scenarios})
    ['gradient']
    >>> scenarios[0].name
    'gradient-vector_to_scalar-float64'

Functions are written against the array API (``xp = di.array_namespace(x)``),
so every backend can trace them; closed-over constants are numpy arrays of x's
dtype, turned into x's family with ``xp.asarray`` inside the function.
"""

from __future__ import annotations

import dataclasses
import itertools
from functools import partial

import numpy as np

from .analytic_functions import (
    array_to_scalar,
    gradient_with_context,
    jacobian_with_context,
    matrix_to_matrix,
    matrix_to_vector,
    scalar_to_array,
    scalar_to_scalar,
    scalar_with_context,
    vector_to_matrix,
    vector_to_vector,
)

# re-exported for the scenario modules that import them from here
from .scenario import FIRST_ORDER, SECOND_ORDER, Scenario, _contract_x, _contract_y, _tangent, _x
from .scenario import OPERATORS as OPERATORS
from .second_order_set import second_order_set
from .scenario import TWO_ARGUMENT_OPERATORS as TWO_ARGUMENT_OPERATORS


# -- turning a function into scenarios -----------------------------------------------------------


def _two_argument(f):
    """The two-argument form of f: ``f2(y, x, *ctx)`` writes f(x, *ctx) into y."""

    def f_in_place(y, x, *ctx):
        y[...] = f(x, *ctx)

    f_in_place.__name__ = getattr(f, "__name__", "f") + "_in_place"
    return f_in_place


def _scenario(
    operator, f, x, value, jac, *, name, contexts=(), batched=False, two_argument=False, seed=0
):
    """A first-order scenario for ``operator`` from the analytic Jacobian ``jac``."""
    from ..contexts import Constant

    dtype = x.dtype
    value = np.asarray(value, dtype=dtype)
    jac = np.asarray(jac, dtype=dtype)
    x_ndim, y_shape = x.ndim, value.shape
    tangents = None
    if operator == "pushforward":
        t = _tangent(x.shape, dtype, seed)
        tangents = (t, -t) if batched else (t,)
        first = tuple(
            np.asarray(_contract_x(jac, t, x_ndim), dtype=dtype).reshape(y_shape) for t in tangents
        )
    elif operator == "pullback":
        c = _tangent(y_shape, dtype, seed)
        tangents = (c, -c) if batched else (c,)
        first = tuple(
            np.asarray(_contract_y(jac, c, len(y_shape)), dtype=dtype).reshape(x.shape)
            for c in tangents
        )
    elif operator == "derivative":
        first = jac.reshape(y_shape)
    elif operator == "gradient":
        first = jac.reshape(x.shape)
    else:
        first = jac
    y = None
    if two_argument:
        f = _two_argument(f)
        y = np.zeros(y_shape, dtype=dtype)
    return Scenario(
        operator,
        f,
        x,
        y=y,
        tangents=tangents,
        contexts=tuple(Constant(c) for c in contexts),
        value=value,
        first=first,
        name=name,
    )


#: The first-order scenarios, in order: (operator, what, analytic function, x's shape, x's dtype).
#: Each is named ``<operator>-<what>-<dtype>`` and is what its name says: ``two_argument`` makes f
#: write into y, ``batched`` gives the tangents ``(t, -t)``, ``constant_context`` passes the
#: function's constants as Constant contexts, ``python_float`` makes x a Python float.
_FIRST_ORDER = (
    ("derivative", "scalar_to_scalar", scalar_to_scalar, (), "float64"),
    ("derivative", "scalar_to_scalar", scalar_to_scalar, (), "float32"),
    ("derivative", "scalar_to_vector", partial(scalar_to_array, shape=(3,)), (), "float64"),
    (
        "derivative",
        "scalar_to_vector-two_argument",
        partial(scalar_to_array, shape=(3,)),
        (),
        "float64",
    ),
    ("derivative", "python_float_to_vector", partial(scalar_to_array, shape=(2,)), (), "float64"),
    ("derivative", "scalar_to_matrix", partial(scalar_to_array, shape=(2, 3)), (), "float32"),
    ("derivative", "constant_context", scalar_with_context, (), "float64"),
    ("gradient", "vector_to_scalar", array_to_scalar, (4,), "float64"),
    ("gradient", "vector_to_scalar", array_to_scalar, (4,), "float32"),
    ("gradient", "matrix_to_scalar", array_to_scalar, (2, 3), "float64"),
    ("gradient", "constant_context", gradient_with_context, (2, 2), "float64"),
    ("jacobian", "vector_to_vector", partial(vector_to_vector, m=4), (3,), "float64"),
    ("jacobian", "vector_to_vector-two_argument", partial(vector_to_vector, m=4), (3,), "float64"),
    ("jacobian", "vector_to_vector", partial(vector_to_vector, m=2), (3,), "float32"),
    ("jacobian", "vector_to_matrix", vector_to_matrix, (3,), "float64"),
    ("jacobian", "matrix_to_vector", matrix_to_vector, (2, 3), "float64"),
    ("jacobian", "matrix_to_matrix", matrix_to_matrix, (2, 3), "float64"),
    ("jacobian", "matrix_to_matrix-two_argument", matrix_to_matrix, (2, 3), "float32"),
    ("jacobian", "constant_context", partial(jacobian_with_context, m=2), (3,), "float64"),
    ("pushforward", "vector_to_vector-batched", partial(vector_to_vector, m=4), (3,), "float64"),
    ("pushforward", "matrix_to_matrix", matrix_to_matrix, (2, 3), "float32"),
    ("pushforward", "vector_to_scalar", array_to_scalar, (4,), "float64"),
    ("pushforward", "vector_to_matrix-two_argument-batched", vector_to_matrix, (3,), "float64"),
    ("pushforward", "constant_context", partial(jacobian_with_context, m=2), (3,), "float64"),
    ("pullback", "vector_to_vector-batched", partial(vector_to_vector, m=4), (3,), "float64"),
    ("pullback", "matrix_to_vector", matrix_to_vector, (2, 3), "float32"),
    ("pullback", "matrix_to_scalar", array_to_scalar, (2, 3), "float64"),
    ("pullback", "scalar_to_vector-batched", partial(scalar_to_array, shape=(3,)), (), "float64"),
    ("pullback", "vector_to_vector-two_argument", partial(vector_to_vector, m=2), (3,), "float64"),
    ("pullback", "constant_context", gradient_with_context, (4,), "float64"),
)


def _first_order_set():
    scenarios = []
    # each pushforward and pullback draws its tangents from a seed of its own
    seeds = itertools.count(1)
    for operator, what, analytic, shape, dtype in _FIRST_ORDER:
        tags = what.split("-")
        x = _x(shape, dtype)
        if "constant_context" in tags:
            f, contexts, value, jac, *_ = analytic(x)
        else:
            # the Hessian some analytic functions also return is for the second-order set
            f, value, jac, *_ = analytic(x)
            contexts = ()
        scenario = _scenario(
            operator,
            f,
            x,
            value,
            jac,
            name=f"{operator}-{what}-{dtype}",
            contexts=contexts,
            batched="batched" in tags,
            two_argument="two_argument" in tags,
            seed=next(seeds) if operator in ("pushforward", "pullback") else 0,
        )
        if "python_float_to_vector" in tags:
            # the contract accepts numbers for x; the results are then numpy float64
            scenario = dataclasses.replace(scenario, x=float(x))
        scenarios.append(scenario)
    return scenarios


def _filter(scenarios, operators, allowed):
    if operators is None:
        return scenarios
    if isinstance(operators, str):
        operators = (operators,)
    unknown = [op for op in operators if op not in allowed]
    if unknown:
        raise ValueError(f"operators: expected names among {allowed}; got {unknown}")
    return [s for s in scenarios if s.operator in operators]


def default_scenarios(operators=None):
    """First-order scenarios: every first-order operator on scalar, vector and matrix inputs and outputs.

    Covers one- and two-argument functions, batched tangents ``(t, -t)``,
    ``Constant`` and ``Cache`` contexts (:mod:`.buffer_scenarios`), closures over constant arrays, float32 and float64.

    Parameters
    ----------
    operators : str or sequence of str, optional
        Keep only the scenarios of these operators, names from :data:`FIRST_ORDER` (default: all
        of them); another name raises ValueError.

    Returns
    -------
    list of Scenario
        A new list on each call, the scenarios of :mod:`.buffer_scenarios` last.

    Examples
    --------
    >>> [s.name for s in default_scenarios(operators="derivative")][:2]
    ['derivative-scalar_to_scalar-float64', 'derivative-scalar_to_scalar-float32']
    """
    from .buffer_scenarios import buffer_scenarios

    return _filter(_first_order_set() + buffer_scenarios(), operators, FIRST_ORDER)


def second_order_scenarios(operators=None):
    """Scenarios for second_derivative, hvp (batched) and hessian, with analytic Hessians.

    Parameters
    ----------
    operators : str or sequence of str, optional
        Keep only the scenarios of these operators, names from :data:`SECOND_ORDER` (default:
        all of them); another name raises ValueError.

    Returns
    -------
    list of Scenario
        Each with its expected ``second`` and the ``first`` (derivative or gradient) beside it.

    Examples
    --------
    >>> sorted({s.operator for s in second_order_scenarios()})
    ['hessian', 'hvp', 'second_derivative']
    """
    from .buffer_scenarios import buffer_second_order_scenarios

    return _filter(second_order_set() + buffer_second_order_scenarios(), operators, SECOND_ORDER)
