"""How AutoFiniteDiff evaluates f (``backends/finitediff/evaluation.py``) and what it refuses
(``refusals.py``): contexts reach every evaluation, a two-argument f writes into a buffer of y's
dtype (complex at complex-step points), complex-step points see the namespace made safe for the
selector's step, workers run every evaluation, and each refusal names what the user must change.

Written against the survivors of a mutation run (docs/testing.md, "Mutation testing"); numpy
only, so that mutmut's forked children never start JAX.
"""

from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest

import diffinterface as di
from diffinterface.backends.finitediff import refusals

F = di.AutoFiniteDiff
METHODS = ("central", "forward", "complex")
X = np.array([0.3, 0.7, 1.1])
#: the largest error each method's first derivative may have here (float64, float32)
BOUND = {
    "central": {"float64": 1e-9, "float32": 1e-4},
    "forward": {"float64": 1e-6, "float32": 1e-3},
    "complex": {"float64": 1e-14, "float32": 1e-6},
}


@pytest.fixture(scope="module")
def threads():
    with ThreadPoolExecutor(3) as pool:
        yield pool


def scaled_sines(x, a):
    return a * np.sin(x).sum()


def sines_into(y, x, a):
    """A two-argument f: writes a * sin(x) into y."""
    y[:] = a * np.sin(x)


# -- contexts --------------------------------------------------------------------------------------


@pytest.mark.parametrize("method", METHODS)
def test_every_evaluation_passes_f_its_contexts(method):
    backend = F(method=method)
    a = di.Constant(3.0)
    gradient = di.gradient(scaled_sines, backend, X, a)
    np.testing.assert_allclose(gradient, 3 * np.cos(X), rtol=0, atol=3e-6)
    (product,) = di.hvp(scaled_sines, backend, X, (np.ones(3),), a)
    np.testing.assert_allclose(product, -3 * np.sin(X), rtol=0, atol=1e-5)
    _, (product_again,) = di.gradient_and_hvp(scaled_sines, backend, X, (np.ones(3),), a)
    np.testing.assert_array_equal(product_again, product)
    second = di.second_derivative(lambda x, a: a * np.sin(x), backend, 0.5, a)
    assert abs(second + 3 * np.sin(0.5)) < 1e-5
    hessian = di.hessian(scaled_sines, backend, X, a)
    np.testing.assert_allclose(hessian, np.diag(-3 * np.sin(X)), rtol=0, atol=1e-5)
    _, _, hessian_again = di.value_gradient_and_hessian(scaled_sines, backend, X, a)
    np.testing.assert_allclose(hessian_again, hessian, rtol=0, atol=1e-12)


def test_the_adaptive_method_passes_f_its_contexts():
    gradient = di.gradient(scaled_sines, F(method="adaptive"), X, di.Constant(3.0))
    np.testing.assert_allclose(gradient, 3 * np.cos(X), rtol=0, atol=1e-10)


# -- a two-argument f ------------------------------------------------------------------------------


@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("method", METHODS)
def test_a_two_argument_f_is_differentiated_in_ys_dtype(method, dtype):
    x, y = X.astype(dtype), np.zeros(3, dtype)
    backend, a = F(method=method), di.Constant(2.0)
    jacobian = di.jacobian(sines_into, backend, x, a, y=y)
    (product,) = di.pushforward(sines_into, backend, x, (np.ones(3, dtype),), a, y=y)
    assert jacobian.dtype == product.dtype == np.dtype(dtype)
    bound = BOUND[method][dtype]
    np.testing.assert_allclose(jacobian, np.diag(2 * np.cos(X)), rtol=0, atol=bound)
    np.testing.assert_allclose(product, 2 * np.cos(X), rtol=0, atol=bound)


# -- complex-step points ---------------------------------------------------------------------------


def cubed_magnitudes(x):
    xp = di.array_namespace(x)
    return xp.sum(xp.abs(x) ** 3)


@pytest.mark.parametrize("rel_step", [None, 1e-2])
@pytest.mark.parametrize("kind", ["serial", "threads"])
def test_complex_step_points_see_the_namespace_made_safe_for_the_selectors_step(
    rel_step, kind, threads
):
    # numpy's abs of x + i·h·t drops the imaginary part; the namespace's continues |x|. A step of
    # 1e-2 |x| makes imaginary parts of 1e-2 times the values: genuinely complex for the default
    # step's tolerance, the continuation's imaginary part for this selector's
    x = np.array([-2.0, 1.5])
    backend = F(method="complex", rel_step=rel_step, workers=threads if kind == "threads" else None)
    gradient = di.gradient(cubed_magnitudes, backend, x)
    # truncation O(h^2): (2e-2)^2 times |x| for rel_step=1e-2
    bound = 1e-12 if rel_step is None else 1e-3
    np.testing.assert_allclose(gradient, 3 * x * np.abs(x), rtol=bound)


def real_sum_of_squares(x, a):
    return (a * np.sum(x**2)).real


@pytest.mark.parametrize("kind", ["serial", "threads"])
@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_a_real_value_at_a_complex_point_is_refused_naming_f_the_selector_and_the_dtype(
    kind, dtype, threads
):
    backend = F(method="complex", workers=threads if kind == "threads" else None)
    with pytest.raises(Exception) as raised:
        di.gradient(real_sum_of_squares, backend, X.astype(dtype), di.Constant(2.0))
    error = raised.value
    while not isinstance(error, di.GraphBreakError) and error.__cause__ is not None:
        error = error.__cause__  # a worker's error is chained to the one naming its evaluation
    assert isinstance(error, di.GraphBreakError), repr(raised.value)
    message = str(error)
    assert message.startswith("f: real_sum_of_squares returned a real " + dtype + " value"), message
    assert f"where {backend!r} evaluates it" in message
    # the causes to look for, and the fix
    causes = (
        "the derivative would read as zeros. The usual causes: float() or .item() on a value "
        "computed from x, .real, np.abs, astype(float), np.asarray(..., dtype=float), or a real output"
    )
    assert causes in message
    assert message.endswith(
        "Keep f complex-safe (xp = di.array_namespace(x), no casts), "
        "or use AutoFiniteDiff(method='central')."
    )


def test_the_refusal_of_a_real_value_names_the_selector_given_itself_or_its_text():
    # the traced path (JAX) passes the selector, the host path its text (it pickles)
    backend = F(method="complex")
    value = np.zeros(2, np.float32)
    by_selector = refusals.dropped_imaginary_part(real_sum_of_squares, backend, value)
    by_text = refusals.dropped_imaginary_part(real_sum_of_squares, repr(backend), value)
    assert str(by_selector) == str(by_text)
    assert "real float32 value at the complex point where AutoFiniteDiff(method='complex'" in str(
        by_text
    )


# -- workers ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("operator", ["gradient", "hessian"])
@pytest.mark.parametrize("method", ["central", "forward"])
def test_with_workers_every_evaluation_runs_in_a_worker(operator, method, threads):
    callers = []

    def f(x):
        callers.append(threading.current_thread())
        return np.sum(np.sin(x))

    backend = F(method=method, workers=threads)
    prep = getattr(di, "prepare_" + operator)(f, backend, X)
    callers.clear()  # the preparation evaluated f once, in the caller's thread
    result = getattr(di, operator)(f, backend, X, prep=prep)
    assert callers and threading.current_thread() not in callers
    expected = np.cos(X) if operator == "gradient" else np.diag(-np.sin(X))
    np.testing.assert_allclose(result, expected, rtol=0, atol=1e-5)


# -- refusals --------------------------------------------------------------------------------------


def test_a_cache_is_refused_at_complex_points_naming_its_context():
    def f(x, a, scratch):
        scratch[:] = a * x
        return np.sum(scratch**2)

    backend = F(method="complex")
    with pytest.raises(di.UnsupportedError) as raised:
        di.gradient(f, backend, X, di.Constant(2.0), di.Cache(np.zeros(3)))
    message = str(raised.value)
    assert message.startswith(f"contexts[1]: {backend!r} evaluates f at complex points"), message
    assert "real dtype cannot hold (the imaginary part written into it would be lost)" in message
    assert message.endswith(
        "Use AutoFiniteDiff(method='central'), or build the intermediate without writing into a buffer"
    )
    # the real methods write into it
    gradient = di.gradient(f, F(), X, di.Constant(2.0), di.Cache(np.zeros(3)))
    np.testing.assert_allclose(gradient, 8 * X, rtol=1e-8)


def test_f_computing_in_a_narrower_dtype_than_x_is_refused_naming_both():
    def in_float32(x):
        return np.sum(x.astype(np.float32) ** 2)

    backend = F()
    with pytest.raises(di.DifferentiationError) as raised:
        di.gradient(in_float32, backend, X)
    message = str(raised.value)
    assert message.startswith("f: ")
    assert "in_float32 returned float32 values for a float64 x" in message
    assert f"{backend!r} differences f's values" in message
    assert (
        "precision, not x's. f computes in a narrower dtype than x, as another framework" in message
    )


@pytest.mark.parametrize("x_dtype, out_dtype", [("float32", "float32"), ("float32", "float64")])
def test_f_computing_in_x_dtype_or_a_wider_one_is_differentiated(x_dtype, out_dtype):
    def f(x):
        return np.sum(np.sin(x)).astype(out_dtype)

    gradient = di.gradient(f, F(), X.astype(x_dtype))
    np.testing.assert_allclose(gradient, np.cos(X), rtol=0, atol=1e-3)
