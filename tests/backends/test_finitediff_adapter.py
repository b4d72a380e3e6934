"""AutoFiniteDiff's first-order recipes (``backends/finitediff/adapter.py``): the columns of every
Jacobian in their place and dtype, the points f is evaluated at, and the value each ``value_and_``
operator returns.

Written against the survivors of a mutation run (docs/testing.md, "Mutation testing"); numpy
only, so that mutmut's forked children never start JAX.
"""

from __future__ import annotations

import numpy as np
import pytest

import diffinterface as di
from diffinterface.core import get_adapter

F = di.AutoFiniteDiff
X23 = np.array([[0.3, -0.8, 1.1], [0.5, 1.7, -0.4]])


def skewed(x):
    """R^(2 x 3) -> R^4, with a Jacobian that is no transpose of anything of the same shape."""
    flat = np.reshape(x, -1)
    return np.array(
        [flat[0] * flat[1], np.sin(flat[2]) + flat[5], flat[3] ** 2, np.exp(flat[4]) * flat[0]]
    )


def skewed_jacobian(x):
    flat = np.reshape(x, -1)
    J = np.zeros((4, 6))
    J[0, 0], J[0, 1] = flat[1], flat[0]
    J[1, 2], J[1, 5] = np.cos(flat[2]), 1.0
    J[2, 3] = 2 * flat[3]
    J[3, 4], J[3, 0] = np.exp(flat[4]) * flat[0], np.exp(flat[4])
    return J.reshape(4, 2, 3)


class Recorded:
    """f = skewed, noting the dtype of every point it is evaluated at."""

    def __init__(self):
        self.dtypes = set()

    def __call__(self, x):
        self.dtypes.add(np.asarray(x).dtype)
        return skewed(x)


@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_the_adaptive_jacobian_at_a_matrix_x_puts_each_column_in_its_place(dtype):
    x = X23.astype(dtype)
    f = Recorded()
    backend = F(method="adaptive")
    rtol = 1e-7 if dtype == "float64" else 2e-3
    J = di.jacobian(f, backend, x)
    assert J.shape == (4, 2, 3) and J.dtype == np.dtype(dtype)
    np.testing.assert_allclose(J, skewed_jacobian(X23), rtol=rtol, atol=rtol)
    value, J = di.value_and_jacobian(f, backend, x)
    np.testing.assert_array_equal(value, skewed(x))
    np.testing.assert_allclose(J, skewed_jacobian(X23), rtol=rtol, atol=rtol)
    # the points f sees are in x's dtype
    assert f.dtypes == {np.dtype(dtype)}


def test_the_adaptive_jacobian_evaluates_f_at_x_for_the_value_only_when_asked():
    calls = []

    def f(x):
        calls.append(1)
        return skewed(x)

    backend = F(method="adaptive")
    prep = di.prepare_jacobian(f, backend, X23)
    del calls[:]
    di.jacobian(f, backend, X23, prep=prep)
    plain = len(calls)
    del calls[:]
    di.value_and_jacobian(f, backend, X23, prep=prep)
    assert len(calls) == plain + 1


def matrix_of(t):
    return np.array([[np.sin(t), t**2, 1.0], [t**3, np.exp(t), -t]])


def matrix_derivative(t):
    return np.array([[np.cos(t), 2 * t, 0.0], [3 * t**2, np.exp(t), -1.0]])


@pytest.mark.parametrize("method", ["central", "forward", "complex", "adaptive"])
def test_the_derivative_of_a_matrix_valued_f_has_the_outputs_shape(method):
    backend = F(method=method)
    rtol = 1e-5 if method == "forward" else 1e-8
    for x in (0.4, np.float64(0.4), np.array(0.4)):
        d = di.derivative(matrix_of, backend, x)
        assert d.shape == (2, 3)
        np.testing.assert_allclose(d, matrix_derivative(0.4), rtol=rtol, atol=rtol)
        value, d = di.value_and_derivative(matrix_of, backend, x)
        assert value.shape == d.shape == (2, 3)
        np.testing.assert_allclose(value, matrix_of(0.4), rtol=1e-15)
        np.testing.assert_allclose(d, matrix_derivative(0.4), rtol=rtol, atol=rtol)


@pytest.mark.parametrize("method", ["central", "forward", "complex", "adaptive"])
def test_the_gradient_of_a_vector_f_is_refused_naming_the_gradient(method):
    with pytest.raises(
        ValueError,
        match=r"^f: gradient needs f to return a scalar; it returns shape \(3,\) \(use jacobian",
    ):
        di.gradient(np.sin, F(method=method), np.ones(3))


@pytest.mark.parametrize("method", ["central", "forward", "complex", "adaptive"])
def test_the_gradient_at_a_matrix_x_has_xs_shape(method):
    def f(x):
        return (np.sin(x) * np.arange(1.0, 7.0).reshape(2, 3)).sum()

    expected = np.cos(X23) * np.arange(1.0, 7.0).reshape(2, 3)
    rtol = 1e-5 if method == "forward" else 1e-8
    gradient = di.gradient(f, F(method=method), X23)
    assert gradient.shape == (2, 3)
    np.testing.assert_allclose(gradient, expected, rtol=rtol, atol=rtol)
    value, gradient = di.value_and_gradient(f, F(method=method), X23)
    assert gradient.shape == (2, 3) and value == f(X23)
    np.testing.assert_allclose(gradient, expected, rtol=rtol, atol=rtol)


def test_a_traced_x_is_refused_saying_why_the_selector_needs_values():
    # the refusal at a traced x (inside jax.jit): adaptive points and workers need concrete values
    def needs_values(backend):
        return get_adapter(backend).capabilities.needs_values

    around = (
        "Inside jax.jit, use AutoFiniteDiff(method='central'), 'forward' or 'complex' without "
        "workers, which compute on JAX's traced values; or differentiate with its framework's own "
        "backend"
    )
    adaptive, workers = needs_values(F(method="adaptive")), needs_values(F(workers=map))
    assert adaptive[0] == (
        "takes its steps on the host, on x's values (method='adaptive' picks its points from f's "
        "values)"
    )
    assert workers[0] == (
        "takes its steps on the host, on x's values (workers= evaluate f on concrete points)"
    )
    assert adaptive[1] == workers[1] and adaptive[1].startswith(around)
    for method in ("central", "forward", "complex"):
        assert needs_values(F(method=method))[1].startswith("Inside the transform, differentiate")


@pytest.mark.parametrize("method", ["central", "forward", "complex"])
def test_the_second_derivatives_first_derivative_of_a_matrix_valued_f_has_the_outputs_shape(
    method,
):
    value, d, second = di.value_derivative_and_second_derivative(matrix_of, F(method=method), 0.4)
    assert value.shape == d.shape == second.shape == (2, 3)
    np.testing.assert_allclose(d, matrix_derivative(0.4), rtol=1e-5, atol=1e-5)


def test_the_central_jacobian_evaluates_f_at_x_only_for_the_value():
    calls = []

    def f(x):
        calls.append(1)
        return skewed(x)

    for operator in ("jacobian", "gradient"):
        g = f if operator == "jacobian" else (lambda x: f(x).sum())
        prep = getattr(di, "prepare_" + operator)(g, F(), X23)
        # a Jacobian's columns one after the other
        assert di.batch_size(prep) == (1 if operator == "jacobian" else None)
        del calls[:]
        getattr(di, operator)(g, F(), X23, prep=prep)
        assert len(calls) == 12  # two per entry of x
        del calls[:]
        getattr(di, "value_and_" + operator)(g, F(), X23, prep=prep)
        assert len(calls) == 13


@pytest.mark.parametrize("method", ["central", "forward", "complex", "adaptive"])
def test_each_method_declares_what_it_does_to_the_core(method):
    # built afresh: get_adapter keeps one adapter per selector, built by whichever test came first
    from diffinterface.backends.finitediff.adapter import FiniteDiffAdapter
    from diffinterface.backends.finitediff.refusals import COMPLEX_STEP_REAL_X_ONLY

    for workers in (None, map):
        if method == "adaptive" and workers is not None:
            continue
        capabilities = FiniteDiffAdapter(F(method=method, workers=workers)).capabilities
        on_traced = method != "adaptive" and workers is None
        assert capabilities.traceable_families == (("jax",) if on_traced else ())
        assert capabilities.needs_values[1].startswith(
            "Inside the transform" if on_traced else "Inside jax.jit"
        )
        assert capabilities.traced_array_name.startswith("JAX tracer (on JAX arrays")
        complex_step = method == "complex"
        assert capabilities.complex_step is complex_step
        assert capabilities.writes_cache is (not complex_step)
        assert capabilities.complex_x_refusal == (
            COMPLEX_STEP_REAL_X_ONLY if complex_step else None
        )
        assert capabilities.batches_points is (method in ("central", "forward"))


def test_the_adaptive_method_without_scipy_names_the_package_to_install(monkeypatch):
    import sys

    from diffinterface.backends.finitediff.adapter import FiniteDiffAdapter

    monkeypatch.setitem(sys.modules, "scipy.differentiate", None)
    FiniteDiffAdapter(F(method="central"))  # the other methods need no scipy
    with pytest.raises(
        di.MissingBackendError,
        match=r"^AutoFiniteDiff\(method='adaptive'\) uses scipy.differentiate \(scipy >= 1.15\), "
        r"which is not installed: pip install 'diffinterface\[scipy\]'$",
    ) as caught:
        FiniteDiffAdapter(F(method="adaptive"))
    assert caught.value.name == "scipy"


def test_an_integer_valued_f_is_differenced_in_xs_dtype():
    x = np.array([0.3, 0.7, 1.1])
    J = di.jacobian(lambda x: np.floor(x * 1e9).astype(np.int64), F(), x)
    assert J.dtype == np.float64
    np.testing.assert_allclose(J, 1e9 * np.eye(3), rtol=1e-3, atol=1e3)


@pytest.mark.parametrize("method", ["central", "forward", "complex"])
def test_the_jacobian_of_a_matrix_valued_f_at_a_vector_x_ends_with_xs_axis(method):
    x = np.array([0.4, -0.3, 0.9, 0.2])

    def f(x):
        return np.stack([np.sin(x[:3]) * x[3], x[:3] ** 2])

    expected = np.zeros((2, 3, 4))
    for i in range(3):
        expected[0, i, i], expected[0, i, 3] = np.cos(x[i]) * x[3], np.sin(x[i])
        expected[1, i, i] = 2 * x[i]
    rtol = 1e-5 if method == "forward" else 1e-8
    J = di.jacobian(f, F(method=method), x)
    assert J.shape == (2, 3, 4)
    np.testing.assert_allclose(J, expected, rtol=rtol, atol=rtol)


def scaled_cube(x, a):
    return a * x**3


@pytest.mark.parametrize("method", ["central", "forward"])
def test_second_order_at_a_scalar_x_passes_f_its_contexts(method):
    backend, x, a = F(method=method), 0.7, di.Constant(2.0)
    value, d, second = di.value_derivative_and_second_derivative(scaled_cube, backend, x, a)
    np.testing.assert_allclose([value, d, second], [0.686, 2.94, 8.4], rtol=1e-4)
    gradient, (hvp,) = di.gradient_and_hvp(scaled_cube, backend, x, (1.5,), a)
    np.testing.assert_allclose([gradient, hvp], [2.94, 12.6], rtol=1e-4)


def test_gradient_and_hvp_at_a_scalar_x_evaluates_f_at_x_only_for_the_hvp():
    calls = []

    def f(x):
        calls.append(x)
        return x**3

    backend = F()
    prep = di.prepare_hvp(f, backend, 0.7, (1.0,))
    del calls[:]
    di.hvp(f, backend, 0.7, (1.0,), prep=prep)
    hvp_calls = len(calls)
    del calls[:]
    di.gradient_and_hvp(f, backend, 0.7, (1.0,), prep=prep)
    assert len(calls) == hvp_calls + 2  # the gradient's two points


@pytest.mark.parametrize("method", ["central", "forward"])
@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_the_derivative_at_a_scalar_x_takes_steps_relative_to_x_in_its_dtype(method, dtype):
    # at a large x a step not scaled by |x| falls below x's spacing; in float32 a float64 step too
    points = []

    def f(t):
        points.append(t)
        return t**2

    for x in (0.7, 1e6):
        x = np.dtype(dtype).type(x)
        del points[:]
        d = di.derivative(f, F(method=method), x)
        rtol = {"float64": 1e-5, "float32": 1e-2}[dtype]
        np.testing.assert_allclose(d, 2 * x, rtol=rtol)
        assert np.asarray(d).dtype == np.dtype(dtype)
        value, d = di.value_and_derivative(f, F(method=method), x)
        assert value == x**2
        np.testing.assert_allclose(d, 2 * x, rtol=rtol)
        assert {np.asarray(p).dtype for p in points} == {np.dtype(dtype)}


@pytest.mark.parametrize("method", ["central", "forward"])
def test_the_derivative_at_a_scalar_x_passes_f_its_contexts(method):
    backend, a = F(method=method), di.Constant(2.0)
    for x in (0.7, np.float32(0.7)):
        rtol = 1e-5 if isinstance(x, float) else 1e-2
        np.testing.assert_allclose(di.derivative(scaled_cube, backend, x, a), 2.94, rtol=rtol)
        value, d = di.value_and_derivative(scaled_cube, backend, x, a)
        np.testing.assert_allclose([value, d], [2 * x**3, 2.94], rtol=rtol)


@pytest.mark.parametrize("method", ["central", "forward"])
def test_the_derivative_at_a_scalar_x_evaluates_f_at_the_methods_points(method):
    points = []

    def f(t):
        points.append(t)
        return t**2

    x, backend = 0.7, F(method=method)
    prep = di.prepare_derivative(f, backend, x)
    del points[:]
    di.derivative(f, backend, x, prep=prep)
    below, above = sorted(points)
    assert len(points) == 2 and above > x and (below == x) is (method == "forward") and below <= x
    del points[:]
    di.value_and_derivative(f, backend, x, prep=prep)
    assert points.count(x) == 1 and len(points) == (2 if method == "forward" else 3)


# f's evaluations per prepared pushforward of n tangents, and the value's source: f(x) (central,
# forward: n+1 evaluations with the value) or the real part of f(x + i h t) (complex: n)
PUSHFORWARD_EVALUATIONS = {
    "central": (lambda n: 2 * n, lambda n: 2 * n + 1),
    "forward": (lambda n: n + 1, lambda n: n + 1),
    "complex": (lambda n: n, lambda n: n),
}


@pytest.mark.parametrize("method", sorted(PUSHFORWARD_EVALUATIONS))
def test_the_pushforward_evaluates_f_at_x_only_where_its_method_needs_it(method):
    points = []

    def f(x):
        points.append(np.array(x))
        return skewed(x)

    tangents = (X23, np.cos(X23))
    backend = F(method=method)
    prep = di.prepare_pushforward(f, backend, X23, tangents)
    # one tangent after the other
    assert di.batch_size(prep) == 1
    alone, with_value = PUSHFORWARD_EVALUATIONS[method]
    del points[:]
    products = di.pushforward(f, backend, X23, tangents, prep=prep)
    assert len(points) == alone(2)
    assert any(np.array_equal(p, X23) for p in points) is (method == "forward")
    del points[:]
    value, same = di.value_and_pushforward(f, backend, X23, tangents, prep=prep)
    assert len(points) == with_value(2)
    np.testing.assert_allclose(value, skewed(X23), rtol=1e-15)
    assert value.dtype == np.float64
    J = skewed_jacobian(X23).reshape(4, 6)
    for t, product, again in zip(tangents, products, same):
        np.testing.assert_allclose(product, J @ t.reshape(-1), rtol=1e-4, atol=1e-6)
        np.testing.assert_array_equal(product, again)


def test_the_central_pushforward_of_a_tree_steps_a_float32_leaf_by_the_float32_rule():
    # a float64 step on the float32 leaf is lost to its rounding: an error of a percent
    x = {"a": np.array([0.3, 1.7], np.float32), "b": np.array([0.5, -0.9])}
    t = {"a": np.array([1.0, 0.5], np.float32), "b": np.zeros(2)}

    def f(x):
        return np.sin(x["a"]) * x["b"]

    (product,) = di.pushforward(f, F(), x, (t,))
    exact = np.cos(x["a"].astype(np.float64)) * t["a"] * x["b"]
    np.testing.assert_allclose(product, exact, rtol=1e-3)


def test_the_adaptive_pushforward_of_a_matrix_valued_f_has_the_outputs_shape():
    def f(x):
        return np.outer(np.sin(x), x[:2])

    x, t = np.array([0.3, -0.8, 1.1]), np.array([1.0, 0.5, -2.0])
    exact = np.outer(np.cos(x) * t, x[:2]) + np.outer(np.sin(x), t[:2])
    (product,) = di.pushforward(f, F(method="adaptive"), x, (t,))
    value, (again,) = di.value_and_pushforward(f, F(method="adaptive"), x, (t,))
    assert product.shape == again.shape == (3, 2)
    np.testing.assert_allclose(product, exact, rtol=1e-8)
    np.testing.assert_array_equal(value, f(x))
