"""Second-order operators and SecondOrder(outer, inner): analytic values, counts, errors, the kit.

Values are checked against closed forms (Rosenbrock's Hessian, quadratic forms
x^T A x with Hessian A + A^T, scalar functions with known second derivatives)
on finite differences, the zero backends (shapes only) and SecondOrder pairs,
two of them mixing frameworks. The conformance kit's second-order scenarios
run over the pairs here (and over every plain backend in test_conformance.py).
"""

import numpy as np
import pytest

import diffinterface as di
from diffinterface.testing import CountingFunction as Counted
from diffinterface.testing import build_cases, second_order_scenarios
from diffinterface.testing.analytic_functions import (
    rosenbrock,
    rosenbrock_gradient,
    rosenbrock_hessian,
)

F, J, T, A = di.AutoFiniteDiff, di.AutoJAX, di.AutoTorch, di.AutoAutograd

#: SecondOrder pairs that must work: outer finite differences over any inner, and same-framework pairs
PAIRS = {
    "fd-over-torch": di.SecondOrder(F(), T()),
    "fd-over-autograd": di.SecondOrder(F(), A()),
    "fd-over-jax": di.SecondOrder(F(), J()),
    "fd-over-fd-complex": di.SecondOrder(F(), F(method="complex")),
    "jax-forward-over-reverse": di.SecondOrder(J(mode="forward"), J(mode="reverse")),
    "jax-reverse-over-forward": di.SecondOrder(J(mode="reverse"), J(mode="forward")),
    "torch-forward-over-reverse": di.SecondOrder(T(mode="forward"), T(mode="reverse")),
    "torch-reverse-over-forward": di.SecondOrder(T(mode="reverse"), T(mode="forward")),
    "torch-dual-over-forward": di.SecondOrder(T(), T(mode="forward")),
}

#: Pairs that cannot work: the outer traces one framework, the inner computes in another
#: Pairs of different frameworks: the inner's first derivative is bridged (DifferentiateWith)
CROSS_FRAMEWORK = {
    "jax-over-torch": di.SecondOrder(J(), T()),
    "torch-over-jax": di.SecondOrder(T(), J()),
    "torch-over-autograd": di.SecondOrder(T(), A()),
    "autograd-over-fd": di.SecondOrder(A(), F()),
}

#: Plain backends whose values are checked here (the kit covers every backend as well)
VALUED = {
    "finitediff-central": F(),
    "finitediff-forward": F(method="forward"),
    "finitediff-complex": F(method="complex"),
    "finitediff-adaptive": F(method="adaptive"),
    "torch": T(),
    "autograd": A(),
    "jax": J(),
    **PAIRS,
}


def _tolerance(backend):
    backends = (backend.outer, backend.inner) if isinstance(backend, di.SecondOrder) else (backend,)
    return 1e-5 if any(isinstance(b, F) for b in backends) else 1e-10


X = np.array([0.5, -0.3, 1.2, 0.8, 1.1])
MATRIX = np.array([[2.0, 1.0, 0.0], [-1.0, 3.0, 0.5], [0.25, 0.0, 1.0]])


def quadratic(x, a):
    return (x.reshape(-1) @ a @ x.reshape(-1)).sum()


# --- values ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("backend", VALUED.values(), ids=VALUED.keys())
def test_rosenbrock_hessian_gradient_and_hvp(backend):
    rtol = _tolerance(backend)
    expected = rosenbrock_hessian(X)
    prep = di.prepare_hessian(rosenbrock, backend, X)
    np.testing.assert_allclose(
        di.hessian(rosenbrock, backend, X, prep=prep), expected, rtol=rtol, atol=rtol
    )
    value, gradient, hessian = di.value_gradient_and_hessian(rosenbrock, backend, X, prep=prep)
    np.testing.assert_allclose(value, rosenbrock(X), rtol=1e-12)
    np.testing.assert_allclose(gradient, rosenbrock_gradient(X), rtol=rtol, atol=rtol)
    np.testing.assert_allclose(hessian, expected, rtol=rtol, atol=rtol)
    tangents = (np.ones(5), np.arange(5.0))
    gradient, products = di.gradient_and_hvp(rosenbrock, backend, X, tangents)
    np.testing.assert_allclose(gradient, rosenbrock_gradient(X), rtol=rtol, atol=rtol)
    assert isinstance(products, tuple) and len(products) == 2
    for t, product in zip(tangents, products):
        np.testing.assert_allclose(product, expected @ t, rtol=rtol, atol=rtol * 10)


@pytest.mark.parametrize("backend", VALUED.values(), ids=VALUED.keys())
def test_quadratic_form_with_matrix_input_and_a_constant(backend):
    # f(x) = vec(x)^T A vec(x) has Hessian A + A^T, whatever x's shape.
    rtol = _tolerance(backend)
    x = np.array([[1.0, -2.0, 0.5]]).reshape(3, 1)
    hessian = di.hessian(quadratic, backend, x, di.Constant(MATRIX))
    assert hessian.shape == (3, 1, 3, 1)
    np.testing.assert_allclose(hessian.reshape(3, 3), MATRIX + MATRIX.T, rtol=rtol, atol=rtol)
    (product,) = di.hvp(quadratic, backend, x, (np.ones((3, 1)),), di.Constant(MATRIX))
    np.testing.assert_allclose(
        product.reshape(3), (MATRIX + MATRIX.T).sum(axis=1), rtol=rtol, atol=rtol
    )


@pytest.mark.parametrize("backend", VALUED.values(), ids=VALUED.keys())
def test_second_derivatives_of_scalar_and_vector_functions(backend):
    rtol = _tolerance(backend)
    x = 0.7
    value, first, second = di.value_derivative_and_second_derivative(
        lambda t: t**3 * 2.0, backend, x
    )
    np.testing.assert_allclose([value, first, second], [2 * x**3, 6 * x**2, 12 * x], rtol=rtol)

    def curve(t):
        return di.array_namespace(t).stack([t**4, t**2 * 3.0])

    prep = di.prepare_second_derivative(curve, backend, x)
    np.testing.assert_allclose(
        di.second_derivative(curve, backend, x, prep=prep), [12 * x**2, 6.0], rtol=rtol
    )


def test_finite_differences_keep_float32_and_do_not_touch_x():
    x = X.astype(np.float32)
    before = x.copy()
    hessian = di.hessian(rosenbrock, F(), x)
    assert hessian.dtype == np.float32
    np.testing.assert_allclose(hessian, rosenbrock_hessian(X), rtol=2e-3, atol=0.5)
    (product,) = di.hvp(rosenbrock, F(), x, (np.ones(5, np.float32),))
    assert product.dtype == np.float32
    np.testing.assert_array_equal(x, before)


@pytest.mark.parametrize("method,relative_error", [("central", 1e-7), ("complex", 1e-10)])
def test_finite_difference_second_order_accuracy(method, relative_error):
    # The stated accuracy: about sqrt(eps) for nested central differences, eps**(2/3) with the complex step.
    hessian = di.hessian(rosenbrock, F(method=method), X)
    expected = rosenbrock_hessian(X)
    assert np.abs(hessian - expected).max() / np.abs(expected).max() < relative_error
    second = di.second_derivative(np.exp, F(method=method), 1.0)
    assert abs(second / np.e - 1) < relative_error * 10


# --- evaluation counts ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "method,hessian_calls,value_calls,hvp_calls",
    [
        # n = 5: 2n^2 + 1 second differences; + 2n + 1 (central) or n + 1 (forward) for value and gradient,
        # sharing f(x); 4n per tangent for hvp. Complex: 2n^2 complex steps, + n for the gradient; 2n per tangent.
        ("central", 51, 61, 20),
        ("forward", 51, 56, 20),
        ("complex", 50, 55, 10),
    ],
)
def test_finite_difference_evaluation_counts(method, hessian_calls, value_calls, hvp_calls):
    f = Counted(rosenbrock)
    backend = F(method=method)
    prep = di.prepare_hessian(f, backend, X)
    f.count = 0
    di.hessian(f, backend, X, prep=prep)
    assert f.count == hessian_calls
    f.count = 0
    di.value_gradient_and_hessian(f, backend, X, prep=prep)
    assert f.count == value_calls
    prep = di.prepare_hvp(f, backend, X, (np.ones(5),))
    f.count = 0
    di.hvp(f, backend, X, (np.ones(5),), prep=prep)
    assert f.count == hvp_calls


def test_value_gradient_and_hessian_evaluates_the_inner_gradient_once_per_point():
    # Outer forward differences over an inner complex-step gradient (n evaluations of f each):
    # the Hessian needs the gradient at x and at n shifted points; value and gradient come
    # from the gradient at x, so n * (n + 1) evaluations and not one gradient more.
    f = Counted(rosenbrock)
    backend = di.SecondOrder(F(method="forward"), F(method="complex"))
    prep = di.prepare_hessian(f, backend, X)
    f.count = 0
    value, gradient, hessian = di.value_gradient_and_hessian(f, backend, X, prep=prep)
    assert f.count == 5 * 6
    np.testing.assert_allclose(gradient, rosenbrock_gradient(X), rtol=1e-10)
    np.testing.assert_allclose(hessian, rosenbrock_hessian(X), rtol=1e-5, atol=1e-4)


# --- zero backends: shapes through the generic fallbacks ---------------------------------------------


ZEROS = {
    "zero-forward": di.AutoZeroForward(),
    "zero-reverse": di.AutoZeroReverse(),
    "zero-over-fd": di.SecondOrder(di.AutoZeroReverse(), F()),
    "fd-over-zero": di.SecondOrder(F(), di.AutoZeroForward()),
}


@pytest.mark.parametrize("backend", ZEROS.values(), ids=ZEROS.keys())
def test_fallbacks_give_the_contract_shapes(backend):
    x = np.ones((2, 3))
    f = lambda x: (x**2).sum()  # noqa: E731
    value, gradient, hessian = di.value_gradient_and_hessian(f, backend, x)
    assert value == 6.0 and gradient.shape == (2, 3) and hessian.shape == (2, 3, 2, 3)
    gradient, products = di.gradient_and_hvp(f, backend, x, (x, x, x))
    assert gradient.shape == (2, 3) and [p.shape for p in products] == [(2, 3)] * 3
    value, first, second = di.value_derivative_and_second_derivative(
        lambda t: t * np.ones((4, 2)), backend, 1.0
    )
    assert value.shape == first.shape == second.shape == (4, 2)
    # Every derivative in the chain is zero, whichever side the zero backend is on.
    np.testing.assert_array_equal(hessian, 0.0)
    np.testing.assert_array_equal(second, 0.0)


# --- SecondOrder: which pairs work ------------------------------------------------------------------


@pytest.mark.parametrize("backend", CROSS_FRAMEWORK.values(), ids=CROSS_FRAMEWORK.keys())
@pytest.mark.parametrize("operator", ["hessian", "hvp", "second_derivative"])
def test_pairs_across_frameworks_compute(backend, operator):
    f = Counted(lambda x: di.array_namespace(x).sum(x**2))
    args = {
        "hessian": (np.ones(2),),
        "hvp": (np.ones(2), (np.ones(2),)),
        "second_derivative": (1.0,),
    }[operator]
    prep = getattr(di, "prepare_" + operator)(f, backend, *args)
    result = getattr(di, operator)(f, backend, *args, prep=prep)
    want = {"hessian": 2.0 * np.eye(2), "hvp": (np.full(2, 2.0),), "second_derivative": 2.0}[
        operator
    ]
    np.testing.assert_allclose(np.asarray(result), np.asarray(want), rtol=1e-5, atol=1e-5)


def test_second_order_with_one_backend_twice_is_that_backend():
    # SecondOrder(b, b) uses b's native operators: the same evaluation count as b.
    f = Counted(rosenbrock)
    for backend in (F(), di.SecondOrder(F(), F())):
        prep = di.prepare_hessian(f, backend, X)
        f.count = 0
        di.hessian(f, backend, X, prep=prep)
        assert f.count == 2 * 5**2 + 1


def test_second_order_as_a_first_order_backend_is_its_inner():
    backend = di.SecondOrder(F(), F(method="complex"))
    f = Counted(rosenbrock)
    prep = di.prepare_gradient(f, backend, X)
    f.count = 0
    gradient = di.gradient(f, backend, X, prep=prep)
    assert f.count == 5  # the complex step: one evaluation per entry, not central's two
    np.testing.assert_allclose(gradient, rosenbrock_gradient(X), rtol=1e-13)
    np.testing.assert_allclose(di.jacobian(np.sin, backend, X), np.diag(np.cos(X)), rtol=1e-13)


# --- the keywords: out=, strict=, errors ----------------------------------------------------------------


def test_out_buffers_are_written_and_returned():
    backend = F()
    gradient_out, hessian_out = np.empty(5), np.empty((5, 5))
    value, gradient, hessian = di.value_gradient_and_hessian(
        rosenbrock, backend, X, out=(gradient_out, hessian_out)
    )
    assert gradient is gradient_out and hessian is hessian_out
    np.testing.assert_allclose(hessian_out, rosenbrock_hessian(X), rtol=1e-6)
    value, gradient, hessian = di.value_gradient_and_hessian(
        rosenbrock, backend, X, out=(None, hessian_out)
    )
    assert hessian is hessian_out and gradient is not None
    product_out = np.empty(5)
    gradient, (product,) = di.gradient_and_hvp(
        rosenbrock, backend, X, (np.ones(5),), out=(None, (product_out,))
    )
    assert product is product_out
    np.testing.assert_allclose(product_out, rosenbrock_hessian(X).sum(axis=1), rtol=1e-6)
    second_out = np.empty(())
    assert di.second_derivative(np.sin, backend, np.float64(0.5), out=second_out) is second_out
    with pytest.raises(ValueError, match="out"):
        di.gradient_and_hvp(rosenbrock, backend, X, (np.ones(5),), out=np.empty(5))
    with pytest.raises(ValueError, match="out"):
        di.hessian(rosenbrock, backend, X, out=np.empty(5))


def test_strict_preparation_lists_the_mismatch():
    prep = di.prepare_hvp(rosenbrock, F(), X, (np.ones(5),), strict=True)
    with pytest.raises(di.PreparationMismatchError, match="tangents: MISMATCH"):
        di.hvp(rosenbrock, F(), X, (np.ones(5), np.ones(5)), prep=prep)
    prep = di.prepare_hessian(rosenbrock, F(), X)
    with pytest.raises(di.PreparationMismatchError, match="prepare_hessian"):
        di.hvp(rosenbrock, F(), X, (np.ones(5),), prep=prep)


def test_bad_inputs_name_the_argument():
    with pytest.raises(ValueError, match="scalar"):
        di.hessian(np.sin, F(), X)
    with pytest.raises(ValueError, match="scalar"):
        di.hvp(np.sin, F(), X, (X,))
    with pytest.raises(ValueError, match="x: second_derivative expects a scalar x"):
        di.second_derivative(np.sin, F(), X)
    with pytest.raises(TypeError, match="tangents"):
        di.hvp(rosenbrock, F(), X, X)
    with pytest.raises(ValueError, match=r"tangents\[0\]"):
        di.hvp(rosenbrock, F(), X, (np.ones(3),))
    import torch

    # a torch x for a pair whose inner takes numpy arrays only (FD over torch takes it: see below)
    with pytest.raises(TypeError, match="x: SecondOrder differentiates numpy"):
        di.hessian(lambda x: (x**2).sum(), di.SecondOrder(F(), di.AutoAutograd()), torch.ones(2))


def test_finite_differences_over_torch_take_torch_arrays_and_trees():
    import torch

    x = torch.tensor([0.3, 0.6], dtype=torch.float64)
    pair = di.SecondOrder(F(), T())
    H = di.hessian(lambda x: (x.sin() * x).sum(), pair, x)
    assert isinstance(H, torch.Tensor) and H.dtype == torch.float64
    torch.testing.assert_close(
        H, di.hessian(lambda x: (x.sin() * x).sum(), T(), x), rtol=1e-6, atol=1e-8
    )
    params = {"w": x, "b": torch.tensor(0.5, dtype=torch.float64)}

    def loss(p):
        return (p["w"] ** 3).sum() * p["b"]

    (product,) = di.hvp(loss, pair, params, (params,))
    (expected,) = di.hvp(loss, T(), params, (params,))
    for key in params:
        assert isinstance(product[key], torch.Tensor)
        torch.testing.assert_close(product[key], expected[key], rtol=1e-6, atol=1e-8)


# --- the conformance kit --------------------------------------------------------------------------------


# Every plain backend runs the second-order scenarios in tests/core/test_conformance.py. Here: the pairs,
# two of them mixing frameworks (a JAX pair recompiles on each unprepared call, so one of each kind).
KIT_PAIRS = {
    k: PAIRS[k]
    for k in (
        "fd-over-torch",
        "fd-over-autograd",
        "fd-over-jax",
        "fd-over-fd-complex",
        "jax-forward-over-reverse",
        "torch-forward-over-reverse",
        "torch-reverse-over-forward",
    )
}


@pytest.mark.parametrize(
    "case", [pytest.param(c, id=c.id) for c in build_cases(KIT_PAIRS, second_order_scenarios())]
)
def test_second_order_pairs_conformance(case):
    case.check()


def test_errors_inside_f_are_explained_through_pairs():
    # the inner's framework runs f: its limits and its traced arrays are named through the pair
    reversed_product = lambda x: (x[::-1] * x).sum()  # noqa: E731
    for pair in (di.SecondOrder(F(), T()), di.SecondOrder(T(), T(mode="forward"))):
        with pytest.raises(
            ValueError, match=r"torch does not support slicing with a negative step.*xp.flip"
        ):
            di.hessian(reversed_product, pair, X)
    with pytest.raises(di.TracedArrayError, match="di.array_namespace"):
        di.hessian(lambda x: np.sum(np.sin(x)), di.SecondOrder(F(), T()), X)
