"""The complex convention's transform (core/complex_convention.py) on the host backends: each
refusal with its whole message, the real line of a complex scalar, a tree x of complex and real
leaves, prepared calls at other points, and the gradient an adapter computes whole."""

from __future__ import annotations

import re

import numpy as np
import pytest
import torch

import diffinterface as di

PAGE = "see the 'Complex numbers' page of the docs (docs/complex.md)"
ADVICE = (
    "a complex x takes complex tangents of its dtype, a complex output complex cotangents, a real "
    f"one real cotangents. Convert it yourself: diffinterface does not change dtypes; {PAGE}"
)
Z = np.array([1 + 2j, 3 - 1j, -0.5 + 0.25j])
T = np.array([1 + 0j, 0.5j, -1 + 1j])
BACKENDS = [di.AutoFiniteDiff(), di.AutoTorch(), di.AutoAutograd()]
IDS = ["finitediff", "torch", "autograd"]


def loss(z):
    xp = di.array_namespace(z)
    return xp.sum(xp.real(z) ** 2 + 3 * xp.imag(z) ** 2)


def square(z):
    return z * z


def modulus(z):
    return di.array_namespace(z).abs(z)


def raises(error, message, run):
    with pytest.raises(error) as raised:
        run()
    assert str(raised.value) == message
    return raised.value


def test_seeds_of_another_kind_are_refused_with_the_whole_message():
    fd = di.AutoFiniteDiff()
    start = "tangents: expected a non-empty tuple of arrays shaped like x (a batch; for one, "
    raises(
        TypeError,
        start + "(tangent,)); got numpy complex128 array of shape (3,)",
        lambda: di.pushforward(square, fd, Z, T),
    )
    raises(TypeError, start + "(tangent,)); got tuple", lambda: di.pushforward(square, fd, Z, ()))
    raises(
        TypeError,
        "tangents[0]: expected a complex128 array shaped like x, (3,); got numpy float64 array of "
        f"shape (3,): {ADVICE}",
        lambda: di.pushforward(square, fd, Z, (T.real.copy(),)),
    )
    raises(
        TypeError,
        "tangents[1]: expected a complex128 array shaped like x, (3,); got numpy complex128 array "
        f"of shape (2,): {ADVICE}",
        lambda: di.pushforward(square, fd, Z, (T, T[:2])),
    )
    raises(
        TypeError,
        "cotangents[0]: expected a float64 array shaped like the output y = f(x), (3,); got numpy "
        f"complex128 array of shape (3,): {ADVICE}",
        lambda: di.pullback(modulus, fd, Z, (T,)),
    )
    raises(
        TypeError,
        "cotangents: expected a non-empty tuple of arrays shaped like the output y = f(x) (a "
        "batch; for one, (cotangent,)); got list",
        lambda: di.pullback(modulus, fd, Z, [np.ones(3)]),
    )
    tree = {"a": Z, "b": np.ones(3)}
    raises(
        ValueError,
        "tangents[0]: expected a tree shaped like x; leaf ['b']: prepared numpy.ndarray float64 "
        f"(3,), given numpy.ndarray float64 (2,): {ADVICE}",
        lambda: di.pushforward(lambda x: x["a"] * x["b"], fd, tree, ({"a": Z, "b": np.ones(2)},)),
    )
    raises(
        TypeError,
        "tangents[0]: expected a complex128 array shaped like x, (3,); got list object: " + ADVICE,
        lambda: di.pushforward(square, fd, Z, ([1, 2, 3],)),
    )


def test_what_has_no_complex_meaning_is_refused_before_f_runs():
    calls = []

    def counted(z):
        calls.append(1)
        return loss(z)

    fd = di.AutoFiniteDiff()
    raises(
        di.UnsupportedError,
        "y: a two-argument f(y, x) at a complex x is not supported; return the output from a "
        f"one-argument f(x) instead; {PAGE}",
        lambda: di.pushforward(lambda y, z: None, fd, Z, (T,), y=np.zeros(3, complex)),
    )
    error = raises(
        di.UnsupportedError,
        "x: hessian at a complex x is refused: the second derivative of a real f of complex x is "
        "real-linear, not complex-linear, so no complex matrix x.shape + x.shape holds it. Use hvp "
        "(its product with a complex tangent t, d/dε gradient(x + ε t)), or a real x = (x.real, "
        f"x.imag) rebuilt inside f for the real Hessian of both parts; {PAGE}",
        lambda: di.hessian(counted, fd, Z),
    )
    assert error and calls == []
    raises(
        ValueError,
        "x: derivative expects a scalar x (shape ()); got numpy complex128 array of shape (3,)",
        lambda: di.derivative(counted, fd, Z),
    )
    raises(
        ValueError,
        "x: second_derivative expects a scalar x (shape ()); got a pytree",
        lambda: di.second_derivative(lambda x: x["a"] ** 3, fd, {"a": np.asarray(1j)}),
    )
    assert calls == []
    complex_step = di.AutoFiniteDiff(method="complex")
    refusal = (
        "the complex step (method='complex') evaluates f at x + i·h·t, which needs a real x; use "
        "AutoFiniteDiff(method='central'), which steps a complex x's real and imaginary parts in "
        f"turn; {PAGE}"
    )
    raises(
        di.UnsupportedError,
        f"x: {complex_step!r} does not differentiate a complex x (numpy complex128 array of shape "
        f"(3,)): {refusal}",
        lambda: di.gradient(counted, complex_step, Z),
    )
    raises(
        di.UnsupportedError,
        f"x: {complex_step!r} does not differentiate a complex x (a pytree with complex leaves): "
        f"{refusal}",
        lambda: di.gradient(lambda x: counted(x["a"]), complex_step, {"a": Z}),
    )
    # a backend made of parts refuses through the part that cannot
    pair = di.SecondOrder(complex_step, di.AutoTorch())
    with pytest.raises(di.UnsupportedError, match=re.escape(refusal)):
        di.hvp(counted, pair, Z, (T,))
    assert calls == []


def test_an_x_of_a_family_the_backend_does_not_take_is_refused_by_name():
    autograd = di.AutoAutograd()
    raises(
        TypeError,
        "x: AutoAutograd differentiates numpy or autograd arrays; got torch complex128 array of "
        "shape (3,)",
        lambda: di.gradient(loss, autograd, torch.from_numpy(Z)),
    )
    raises(
        TypeError,
        "x: AutoAutograd differentiates numpy or autograd arrays; got a tree of torch arrays",
        lambda: di.gradient(lambda x: loss(x["a"]), autograd, {"a": torch.from_numpy(Z)}),
    )


@pytest.mark.parametrize("backend", BACKENDS, ids=IDS)
def test_complex_derivatives_are_of_holomorphic_functions_only(backend):
    tail = (
        "at a complex x is the complex derivative of a holomorphic f, but f returns real values (a "
        "real-valued f of complex x is holomorphic only when constant). Use gradient (a real "
        f"scalar), pullback or pushforward, whose real-linear meaning holds for any f; {PAGE}"
    )
    raises(
        di.UnsupportedError,
        f"f: derivative {tail}",
        lambda: di.derivative(modulus, backend, np.asarray(1 + 1j)),
    )
    raises(di.UnsupportedError, f"f: jacobian {tail}", lambda: di.jacobian(modulus, backend, Z))
    raises(
        di.UnsupportedError,
        "f: jacobian at a complex x takes an array output (a pytree output is not supported there "
        f"yet); use pushforward or pullback, which take pytrees; {PAGE}",
        lambda: di.jacobian(lambda z: {"a": z * z}, backend, Z),
    )
    with pytest.raises(TypeError) as raised:
        di.gradient(lambda z: di.array_namespace(z).sum(z * z), backend, Z)
    assert re.fullmatch(
        r"f: gradient needs a real-valued f; at a complex x it returned \S+ complex128 array of "
        r"shape \(\)\. Return a real loss \(xp\.real\(\.\.\.\), xp\.abs\(\.\.\.\) \*\* 2\), or use "
        r"pullback for a complex output; " + re.escape(PAGE),
        str(raised.value),
    ), str(raised.value)


def gradient_of_loss(z):
    return 2 * z.real + 6j * z.imag


@pytest.mark.parametrize("backend", BACKENDS, ids=IDS)
def test_gradients_and_hvps_follow_the_convention_prepared_or_not(backend):
    tolerance = {"rtol": 1e-6, "atol": 1e-6}
    np.testing.assert_allclose(di.gradient(loss, backend, Z), gradient_of_loss(Z), **tolerance)
    prep = di.prepare_gradient(loss, backend, Z)
    for x in (Z, 2 * Z):
        value, gradient = di.value_and_gradient(loss, backend, x, prep=prep)
        assert np.isrealobj(value) and gradient.dtype == np.complex128
        np.testing.assert_allclose(value, loss(x), rtol=1e-12)
        np.testing.assert_allclose(gradient, gradient_of_loss(x), **tolerance)
        np.testing.assert_allclose(
            di.gradient(loss, backend, x, prep=prep), gradient_of_loss(x), **tolerance
        )
    # a real loss seeing its contexts through the view
    np.testing.assert_allclose(
        di.gradient(lambda z, c: c * loss(z), backend, Z, di.Constant(3.0)),
        3 * gradient_of_loss(Z),
        **tolerance,
    )
    low = Z.astype(np.complex64)
    assert di.gradient(loss, backend, low).dtype == np.complex64
    (product,) = di.hvp(loss, backend, Z, (T,))
    np.testing.assert_allclose(product, gradient_of_loss(T), rtol=1e-5, atol=1e-5)
    gradient, (product,) = di.gradient_and_hvp(loss, backend, Z, (T,))
    np.testing.assert_allclose(gradient, gradient_of_loss(Z), **tolerance)
    np.testing.assert_allclose(product, gradient_of_loss(T), rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("backend", BACKENDS, ids=IDS)
def test_products_of_a_holomorphic_f_are_its_complex_derivative_and_adjoint(backend):
    def f(z, c):
        return c * z**2

    c = di.Constant(2.0)
    derivative = 4 * Z
    tolerance = {"rtol": 1e-6, "atol": 1e-6}
    value, (pushed, again) = di.value_and_pushforward(f, backend, Z, (T, 2 * T), c)
    np.testing.assert_allclose(value, 2 * Z**2, rtol=1e-12)
    np.testing.assert_allclose(pushed, derivative * T, **tolerance)
    np.testing.assert_allclose(again, 2 * derivative * T, **tolerance)
    value, (pulled,) = di.value_and_pullback(f, backend, Z, (T,), c)
    np.testing.assert_allclose(value, 2 * Z**2, rtol=1e-12)
    np.testing.assert_allclose(pulled, np.conj(derivative) * T, **tolerance)
    value, jacobian = di.value_and_jacobian(f, backend, Z, c)
    np.testing.assert_allclose(value, 2 * Z**2, rtol=1e-12)
    np.testing.assert_allclose(jacobian, np.diag(derivative), **tolerance)
    assert jacobian.dtype == np.complex128


@pytest.mark.parametrize("backend", BACKENDS, ids=IDS)
def test_a_complex_scalar_s_derivatives_are_taken_along_the_real_line(backend):
    def f(z, c):
        return c * di.array_namespace(z).stack([z**3, z])

    c = di.Constant(2.0)
    prep = di.prepare_derivative(f, backend, np.asarray(1 + 1j), c)
    for z in (1 + 1j, 0.5 - 2j):
        x = np.asarray(z)
        value, derivative = di.value_and_derivative(f, backend, x, c, prep=prep)
        np.testing.assert_allclose(value, [2 * z**3, 2 * z], rtol=1e-12)
        np.testing.assert_allclose(derivative, [6 * z**2, 2], rtol=1e-6, atol=1e-6)
        np.testing.assert_allclose(
            di.derivative(f, backend, x, c, prep=prep), [6 * z**2, 2], rtol=1e-6, atol=1e-6
        )
    z = np.asarray(0.5 - 2j)
    value, first, second = di.value_derivative_and_second_derivative(f, backend, z, c)
    np.testing.assert_allclose(value, [2 * z**3, 2 * z], rtol=1e-12)
    np.testing.assert_allclose(first, [6 * z**2, 2], rtol=1e-6, atol=1e-6)
    np.testing.assert_allclose(second, [12 * z, 0], rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(
        di.second_derivative(f, backend, z, c), [12 * z, 0], rtol=1e-4, atol=1e-4
    )
    assert second.dtype == np.complex128


@pytest.mark.parametrize("backend", BACKENDS, ids=IDS)
def test_a_tree_x_of_complex_and_real_leaves(backend):
    x = {"w": Z, "b": np.array([1.0, 2.0, 3.0])}

    def f(x):
        return x["w"] ** 2 * x["b"]

    tolerance = {"rtol": 1e-6, "atol": 1e-6}
    jacobian = di.jacobian(f, backend, x)
    np.testing.assert_allclose(jacobian["w"], np.diag(2 * Z * x["b"]), **tolerance)
    np.testing.assert_allclose(jacobian["b"], np.diag(Z**2), **tolerance)
    assert jacobian["w"].dtype == jacobian["b"].dtype == np.complex128
    tangent = {"w": T, "b": np.array([1.0, -1.0, 0.5])}
    (pushed,) = di.pushforward(f, backend, x, (tangent,))
    wanted = 2 * Z * x["b"] * T + Z**2 * tangent["b"]
    np.testing.assert_allclose(pushed, wanted, **tolerance)
    (pulled,) = di.pullback(f, backend, x, (T,))
    np.testing.assert_allclose(pulled["w"], np.conj(2 * Z * x["b"]) * T, **tolerance)
    np.testing.assert_allclose(pulled["b"], np.real(np.conj(Z**2) * T), **tolerance)
    assert pulled["b"].dtype == np.float64

    def tree_loss(x):
        return loss(x["w"]) + di.array_namespace(x["b"]).sum(x["b"] ** 3)

    gradient = di.gradient(tree_loss, backend, x)
    np.testing.assert_allclose(gradient["w"], gradient_of_loss(Z), **tolerance)
    np.testing.assert_allclose(gradient["b"], 3 * x["b"] ** 2, rtol=1e-6)


@pytest.mark.parametrize("backend", [di.AutoTorch(), di.AutoAutograd()], ids=["torch", "autograd"])
def test_an_error_inside_f_names_the_user_s_function_through_the_view(backend):
    def uses_numpy(z):
        return np.median(z) * z

    with pytest.raises(di.TracedArrayError, match=r"^f: \S*uses_numpy raised"):
        di.derivative(uses_numpy, backend, np.asarray(1 + 1j))
    with pytest.raises(di.TracedArrayError, match=r"^f: \S*uses_numpy raised"):
        di.pushforward(uses_numpy, backend, Z, (T,))


def test_a_prepared_complex_plan_shows_the_view_it_runs_through():
    prep = di.prepare_gradient(loss, di.AutoFiniteDiff(), Z)
    assert re.fullmatch(r"complex view of .*", repr(prep.plan.impl))
    # the view's implementation answers for the real view's methods
    view = prep.plan.impl
    assert view.value_and_gradient is view.inner.value_and_gradient
    assert not repr(
        di.prepare_gradient(loss, di.AutoFiniteDiff(), Z.real.copy()).plan.impl
    ).startswith("complex view")


@pytest.mark.parametrize("backend", BACKENDS, ids=IDS)
def test_products_of_a_real_output_and_with_contexts(backend):
    def scaled_modulus(z, c):
        return c * di.array_namespace(z).abs(z)

    c, u = di.Constant(2.0), np.array([1.0, -0.5, 2.0])
    tolerance = {"rtol": 1e-6, "atol": 1e-6}
    # the gradient of Re <u, f> for a real f: u times d|z| = z / |z|, twice
    (pulled,) = di.pullback(scaled_modulus, backend, Z, (u,), c)
    np.testing.assert_allclose(pulled, 2 * u * Z / np.abs(Z), **tolerance)
    value, (pulled,) = di.value_and_pullback(scaled_modulus, backend, Z, (u,), c)
    np.testing.assert_allclose(value, 2 * np.abs(Z), rtol=1e-12)
    np.testing.assert_allclose(pulled, 2 * u * Z / np.abs(Z), **tolerance)
    (pushed,) = di.pushforward(scaled_modulus, backend, Z, (T,), c)
    np.testing.assert_allclose(pushed, 2 * np.real(np.conj(Z) * T) / np.abs(Z), **tolerance)
    (pushed,) = di.pushforward(lambda z, c: c * z**2, backend, Z, (T,), c)
    np.testing.assert_allclose(pushed, 4 * Z * T, **tolerance)
