"""The dtypes and kinds of results (core/dtypes.py), decided at preparation: derivatives in x's dtype
whatever f computes in, the value ``f(x)`` in f's own, a complex output of a real x refused by name,
and every 0-d numpy result a 0-d ``np.ndarray``, never a NumPy scalar.

Finite differences stand for every adapter here: their results are not arrays by construction
(``numpy_results_are_arrays`` is False), and their derivatives are difference quotients, in f's
output's dtype before the cast.
"""

from __future__ import annotations

import types

import numpy as np
import pytest

import diffinterface as di
from diffinterface.core import OPERATORS
from diffinterface.core.dtypes import derivatives_in_x_dtype
from diffinterface.core.problem import Spec
from tests.entered import functions_entered

FD = di.AutoFiniteDiff()


def _cube_sum(x, c):
    return (x**3).sum() * c


def _square(x, c):
    return x**2 * c


def _square_in(dtype):
    return lambda x: (x**2 * 2.0).astype(dtype)


#: name: (value-and function, f of (x, c), seeds, what it returns: "value" or "derivative", each)
VALUED = {
    "derivative": (di.value_and_derivative, _square, (), ("value", "derivative")),
    "second_derivative": (
        di.value_derivative_and_second_derivative,
        _square,
        (),
        ("value", "derivative", "derivative"),
    ),
    "gradient": (di.value_and_gradient, _cube_sum, (), ("value", "derivative")),
    "jacobian": (di.value_and_jacobian, _square, (), ("value", "derivative")),
    "hessian": (
        di.value_gradient_and_hessian,
        _cube_sum,
        (),
        ("value", "derivative", "derivative"),
    ),
    "pushforward": (di.value_and_pushforward, _square, ("x",), ("value", "derivative")),
    "pullback": (di.value_and_pullback, _square, ("y",), ("value", "derivative")),
    "hvp": (di.gradient_and_hvp, _cube_sum, ("x",), ("derivative", "derivative")),
}

PLAIN = {
    "derivative": di.derivative,
    "second_derivative": di.second_derivative,
    "gradient": di.gradient,
    "jacobian": di.jacobian,
    "hessian": di.hessian,
    "pushforward": di.pushforward,
    "pullback": di.pullback,
    "hvp": di.hvp,
}


def _point(name, dtype):
    """x for the operator ``name`` (a scalar for derivatives along a line) and its seeds."""
    if name in ("derivative", "second_derivative"):
        return dtype(0.5)
    return np.array([0.5, 1.5], dtype=dtype)


def _seeds(kinds, x, y_dtype):
    return tuple(
        (np.ones_like(x),) if kind == "x" else (np.ones(np.shape(x), dtype=y_dtype),)
        for kind in kinds
    )


def _dtypes(result):
    """The dtype of each result, a tuple of seeds' results read as its first."""
    return [np.asarray(r[0] if isinstance(r, tuple) else r).dtype for r in result]


@pytest.mark.parametrize("prepared", [False, True], ids=["unprepared", "prepared"])
@pytest.mark.parametrize("name", VALUED)
def test_derivatives_take_x_dtype_and_the_value_keeps_f_own(name, prepared):
    valued, f, kinds, returns = VALUED[name]
    # a float32 x promoted by a float64 Constant: f computes in float64
    x, c = _point(name, np.float32), di.Constant(np.float64(2.0))
    seeds = _seeds(kinds, x, np.float64)
    if prepared:
        prepare = getattr(di, f"prepare_{name}")
        prep = prepare(f, FD, x, *seeds, c)
        result = valued(f, FD, x, *seeds, c, prep=prep)
        plain = PLAIN[name](f, FD, x, *seeds, c, prep=prep)
    else:
        result = valued(f, FD, x, *seeds, c)
        plain = PLAIN[name](f, FD, x, *seeds, c)
    expected = {"value": np.float64, "derivative": np.float32}
    assert _dtypes(result) == [np.dtype(expected[r]) for r in returns]
    assert _dtypes((plain,)) == [np.dtype(np.float32)]


def _dtypes_entered(run):
    """The names of the functions of ``core/dtypes.py`` that ``run()`` enters."""
    return functions_entered(run, "core/dtypes.py")


def test_a_prepared_call_pays_for_the_cast_only_where_the_dtypes_differ():
    x = np.array([0.5, 1.5], dtype=np.float32)
    same, promoted = _square_in(np.float32), _square_in(np.float64)
    prep = di.prepare_jacobian(same, FD, x)
    assert not _dtypes_entered(lambda: di.jacobian(same, FD, x, prep=prep))
    prep = di.prepare_jacobian(promoted, FD, x)
    assert _dtypes_entered(lambda: di.jacobian(promoted, FD, x, prep=prep))


def test_an_adapter_derivative_given_as_a_python_float_is_cast_too():
    # an adapter's method may return a Python float for a 0-d derivative: it is cast like an array
    problem = types.SimpleNamespace(_spec=Spec((), "float64"), x_dtype="float32")
    plain, valued = derivatives_in_x_dtype(
        OPERATORS["derivative"], problem, (lambda x: 0.5, lambda x: (0.25, 0.5))
    )
    derivative = plain(np.float32(0.5))
    assert type(derivative) is np.ndarray and derivative.dtype == np.float32 and derivative == 0.5
    value, derivative = valued(np.float32(0.5))
    assert value == 0.25 and type(value) is float  # f's value, as f gave it
    assert type(derivative) is np.ndarray and derivative.dtype == np.float32


@pytest.mark.parametrize(
    "dtype, complex_dtype", [(np.float64, "complex128"), (np.float32, "complex64")]
)
def test_a_complex_output_of_a_real_x_is_refused_naming_f(dtype, complex_dtype):
    x = np.ones(2, dtype=dtype)
    with pytest.raises(TypeError) as info:
        di.jacobian(lambda x: x * (1 + 1j), FD, x)
    assert str(info.value) == (
        f"f: expected f to return real floating-point values for a real x ({np.dtype(dtype).name}); "
        f"it returned {complex_dtype} of shape (2,). Return the real part (xp.real(...)), or the "
        "real and imaginary parts stacked (xp.stack([xp.real(y), xp.imag(y)])): diffinterface "
        "differentiates real-valued functions; complex outputs are not supported yet."
    )


def test_a_complex_output_of_a_complex_x_is_differentiated():
    x = np.array([1.0 + 1.0j, 2.0])
    jacobian = di.jacobian(lambda x: x * (1 + 1j), FD, x)
    assert jacobian.dtype == np.complex128


# -- 0-d results are arrays ----------------------------------------------------------------------


def _scalar_sum(x):
    return (x**3).sum()  # a NumPy scalar, or a Python float at a float x


def _line(x):
    return x**3  # a Python float at a float x


#: name: (operator, value-and operator, f, x, seeds): every result is 0-d
ZERO_D = {
    "derivative": (di.derivative, di.value_and_derivative, _line, 0.5, ()),
    "second_derivative": (
        di.second_derivative,
        di.value_derivative_and_second_derivative,
        _line,
        0.5,
        (),
    ),
    "gradient": (di.gradient, di.value_and_gradient, _scalar_sum, np.array(0.5), ()),
    "jacobian": (di.jacobian, di.value_and_jacobian, _scalar_sum, np.array(0.5), ()),
    "hessian": (di.hessian, di.value_gradient_and_hessian, _scalar_sum, np.array(0.5), ()),
    "pushforward": (
        di.pushforward,
        di.value_and_pushforward,
        _scalar_sum,
        np.array(0.5),
        ((np.array(1.0),),),
    ),
    "pullback": (di.pullback, di.value_and_pullback, _scalar_sum, np.array(0.5), ((1.0,),)),
    "hvp": (di.hvp, di.gradient_and_hvp, _scalar_sum, np.array(0.5), ((np.array(1.0),),)),
}


def _leaves(result):
    if isinstance(result, tuple):
        return [leaf for r in result for leaf in _leaves(r)]
    return [result]


@pytest.mark.parametrize("prepared", [False, True], ids=["unprepared", "prepared"])
@pytest.mark.parametrize("name", ZERO_D)
def test_every_0d_result_is_an_ndarray(name, prepared):
    plain, valued, f, x, seeds = ZERO_D[name]
    prep = getattr(di, f"prepare_{name}")(f, FD, x, *seeds) if prepared else None
    for result in (plain(f, FD, x, *seeds, prep=prep), valued(f, FD, x, *seeds, prep=prep)):
        leaves = _leaves(result)
        assert leaves and all(type(r) is np.ndarray and r.shape == () for r in leaves), result


@pytest.mark.parametrize(
    "operator, seeds", [(di.value_and_gradient, ()), (di.gradient_and_hvp, ((np.ones(2),),))]
)
def test_a_0d_value_of_an_array_x_is_an_ndarray_and_the_derivatives_keep_x_shape(operator, seeds):
    result = operator(_scalar_sum, FD, np.array([0.5, 1.5]), *seeds)
    leaves = _leaves(result)
    assert all(type(r) is np.ndarray for r in leaves), result
    assert [r.shape for r in leaves] == ([(), (2,)] if not seeds else [(2,), (2,)])
