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


# -- turning a function into scenarios
# -------------------------------------------------------------------


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


def _first_order_set():
    scenarios = []
    add = scenarios.append

    # derivative: scalar x -> scalar, vector, matrix; two-argument; Constant context
    for dtype in ("float64", "float32"):
        x = _x((), dtype)
        f, value, d, _ = scalar_to_scalar(x)
        add(_scenario("derivative", f, x, value, d, name=f"derivative-scalar_to_scalar-{dtype}"))
    x = _x((), "float64")
    f, value, d, _ = scalar_to_array(x, (3,))
    add(_scenario("derivative", f, x, value, d, name="derivative-scalar_to_vector-float64"))
    add(
        _scenario(
            "derivative",
            f,
            x,
            value,
            d,
            two_argument=True,
            name="derivative-scalar_to_vector-two_argument-float64",
        )
    )
    # a Python float x (the contract accepts numbers; results are numpy float64)
    f, value, d, _ = scalar_to_array(x, (2,))
    python_float = _scenario(
        "derivative", f, x, value, d, name="derivative-python_float_to_vector-float64"
    )
    add(dataclasses.replace(python_float, x=float(x)))
    x = _x((), "float32")
    f, value, d, _ = scalar_to_array(x, (2, 3))
    add(_scenario("derivative", f, x, value, d, name="derivative-scalar_to_matrix-float32"))
    x = _x((), "float64")
    f, ctx, value, d, _ = scalar_with_context(x)
    add(
        _scenario(
            "derivative", f, x, value, d, contexts=ctx, name="derivative-constant_context-float64"
        )
    )

    # gradient: vector and matrix x; float32; Constant context
    for shape, kind, dtype in (
        ((4,), "vector", "float64"),
        ((4,), "vector", "float32"),
        ((2, 3), "matrix", "float64"),
    ):
        x = _x(shape, dtype)
        f, value, grad, _ = array_to_scalar(x)
        add(_scenario("gradient", f, x, value, grad, name=f"gradient-{kind}_to_scalar-{dtype}"))
    x = _x((2, 2), "float64")
    f, ctx, value, grad, _ = gradient_with_context(x)
    add(
        _scenario(
            "gradient", f, x, value, grad, contexts=ctx, name="gradient-constant_context-float64"
        )
    )

    # jacobian: vector/matrix in and out; two-argument; Constant context
    x = _x((3,), "float64")
    f, value, jac = vector_to_vector(x, 4)
    add(_scenario("jacobian", f, x, value, jac, name="jacobian-vector_to_vector-float64"))
    add(
        _scenario(
            "jacobian",
            f,
            x,
            value,
            jac,
            two_argument=True,
            name="jacobian-vector_to_vector-two_argument-float64",
        )
    )
    x32 = _x((3,), "float32")
    f, value, jac = vector_to_vector(x32, 2)
    add(_scenario("jacobian", f, x32, value, jac, name="jacobian-vector_to_vector-float32"))
    f, value, jac = vector_to_matrix(x)
    add(_scenario("jacobian", f, x, value, jac, name="jacobian-vector_to_matrix-float64"))
    xm = _x((2, 3), "float64")
    f, value, jac = matrix_to_vector(xm)
    add(_scenario("jacobian", f, xm, value, jac, name="jacobian-matrix_to_vector-float64"))
    f, value, jac = matrix_to_matrix(xm)
    add(_scenario("jacobian", f, xm, value, jac, name="jacobian-matrix_to_matrix-float64"))
    xm32 = _x((2, 3), "float32")
    f, value, jac = matrix_to_matrix(xm32)
    add(
        _scenario(
            "jacobian",
            f,
            xm32,
            value,
            jac,
            two_argument=True,
            name="jacobian-matrix_to_matrix-two_argument-float32",
        )
    )
    f, ctx, value, jac = jacobian_with_context(x, 2)
    add(
        _scenario(
            "jacobian", f, x, value, jac, contexts=ctx, name="jacobian-constant_context-float64"
        )
    )

    # pushforward: batched tangents (t, -t); scalar and matrix outputs; two-argument; context
    f, value, jac = vector_to_vector(x, 4)
    add(
        _scenario(
            "pushforward",
            f,
            x,
            value,
            jac,
            batched=True,
            seed=1,
            name="pushforward-vector_to_vector-batched-float64",
        )
    )
    f, value, jac = matrix_to_matrix(xm32)
    add(
        _scenario(
            "pushforward", f, xm32, value, jac, seed=2, name="pushforward-matrix_to_matrix-float32"
        )
    )
    xv = _x((4,), "float64")
    f, value, grad, _ = array_to_scalar(xv)
    add(
        _scenario(
            "pushforward", f, xv, value, grad, seed=3, name="pushforward-vector_to_scalar-float64"
        )
    )
    f, value, jac = vector_to_matrix(x)
    add(
        _scenario(
            "pushforward",
            f,
            x,
            value,
            jac,
            batched=True,
            two_argument=True,
            seed=4,
            name="pushforward-vector_to_matrix-two_argument-batched-float64",
        )
    )
    f, ctx, value, jac = jacobian_with_context(x, 2)
    add(
        _scenario(
            "pushforward",
            f,
            x,
            value,
            jac,
            contexts=ctx,
            seed=5,
            name="pushforward-constant_context-float64",
        )
    )

    # pullback: batched cotangents; scalar x; scalar output; two-argument; context
    f, value, jac = vector_to_vector(x, 4)
    add(
        _scenario(
            "pullback",
            f,
            x,
            value,
            jac,
            batched=True,
            seed=6,
            name="pullback-vector_to_vector-batched-float64",
        )
    )
    f, value, jac = matrix_to_vector(xm32)
    add(
        _scenario("pullback", f, xm32, value, jac, seed=7, name="pullback-matrix_to_vector-float32")
    )
    f, value, grad, _ = array_to_scalar(xm)
    add(_scenario("pullback", f, xm, value, grad, seed=8, name="pullback-matrix_to_scalar-float64"))
    xs = _x((), "float64")
    f, value, d, _ = scalar_to_array(xs, (3,))
    add(
        _scenario(
            "pullback",
            f,
            xs,
            value,
            d,
            batched=True,
            seed=9,
            name="pullback-scalar_to_vector-batched-float64",
        )
    )
    f, value, jac = vector_to_vector(x, 2)
    add(
        _scenario(
            "pullback",
            f,
            x,
            value,
            jac,
            two_argument=True,
            seed=10,
            name="pullback-vector_to_vector-two_argument-float64",
        )
    )
    f, ctx, value, grad, _ = gradient_with_context(xv)
    add(
        _scenario(
            "pullback",
            f,
            xv,
            value,
            grad,
            contexts=ctx,
            seed=11,
            name="pullback-constant_context-float64",
        )
    )
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
        Keep only the scenarios of these operators (default: all of them).

    Returns
    -------
    list of Scenario

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
        Keep only the scenarios of these operators (default: all of them).

    Returns
    -------
    list of Scenario

    Examples
    --------
    >>> sorted({s.operator for s in second_order_scenarios()})
    ['hessian', 'hvp', 'second_derivative']
    """
    from .buffer_scenarios import buffer_second_order_scenarios

    return _filter(second_order_set() + buffer_second_order_scenarios(), operators, SECOND_ORDER)
