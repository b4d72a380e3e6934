"""AutoAutograd: values, evaluation counts against native autograd, arrays, contexts, errors.

The conformance kit (tests/core/test_conformance.py) checks values on its scenarios;
this file checks what the autograd adapter itself promises.
"""

import autograd
import autograd.numpy as anp
import numpy as np
import pytest
from autograd.differential_operators import make_hvp
from autograd.numpy.numpy_boxes import ArrayBox

import diffinterface as di
from diffinterface.testing import CountingFunction as Counted
from diffinterface.core import Problem, get_adapter

from diffinterface.testing.analytic_functions import coupled, coupled_jacobian
from diffinterface.testing.analytic_functions import sin_weighted_sum as agnostic
from diffinterface.testing.analytic_functions import sin_weighted_sum_gradient as agnostic_gradient
from diffinterface.testing.analytic_functions import (
    sin_weighted_sum_hessian_diagonal as agnostic_hessian_diagonal,
)

BACKEND = di.AutoAutograd()


def matrix_of_scalar(x):
    """Seed 003: a 3x3 function of a scalar x."""
    A = anp.array([[x + 1, x + 2, x + 3], [x + 4, x + 5, x + 6], [x + 7, x + 8, x + 9]])
    B = anp.array([[x - 1, x - 2, x - 3], [x - 4, x - 5, x - 6], [x - 7, x - 8, x - 9]])
    return A.T @ (B * 1.5)


def matrix_of_scalar_derivative(x):
    # d/dx (A.T @ 1.5 B) = 1.5 (A'.T B + A.T B') with A' = B' = ones
    A = np.arange(1.0, 10.0).reshape(3, 3) + x
    B = x - np.arange(1.0, 10.0).reshape(3, 3)
    ones = np.ones((3, 3))
    return 1.5 * (ones.T @ B + A.T @ ones)


X = np.array([0.3, -1.2, 2.0, 0.7])


# --- values ----------------------------------------------------------------------------------


def test_gradient_and_value():
    prep = di.prepare_gradient(agnostic, BACKEND, X)
    value, grad = di.value_and_gradient(agnostic, BACKEND, X, prep=prep)
    np.testing.assert_allclose(grad, agnostic_gradient(X), rtol=1e-12)
    np.testing.assert_allclose(value, np.sum(np.sin(X) * X**2), rtol=1e-12)
    np.testing.assert_allclose(
        di.gradient(agnostic, BACKEND, X, prep=prep), agnostic_gradient(X), rtol=1e-12
    )


def test_jacobian_and_value():
    prep = di.prepare_jacobian(coupled, BACKEND, X)
    value, jac = di.value_and_jacobian(coupled, BACKEND, X, prep=prep)
    np.testing.assert_allclose(jac, coupled_jacobian(X), rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(value, coupled(X), rtol=1e-12)
    np.testing.assert_allclose(
        di.jacobian(coupled, BACKEND, X, prep=prep), coupled_jacobian(X), rtol=1e-12
    )


def test_jacobian_of_matrix_input_has_output_then_input_shape():
    x = np.arange(6.0).reshape(2, 3)
    jac = di.jacobian(lambda x: anp.sum(x**2, axis=1), BACKEND, x)
    assert jac.shape == (2, 2, 3)
    expected = np.zeros((2, 2, 3))
    expected[0, 0], expected[1, 1] = 2 * x[0], 2 * x[1]
    np.testing.assert_allclose(jac, expected)


def test_jacobian_of_scalar_output_and_of_scalar_x():
    jac = di.jacobian(agnostic, BACKEND, X)
    assert jac.shape == (4,)
    np.testing.assert_allclose(jac, agnostic_gradient(X), rtol=1e-12)
    jac = di.jacobian(lambda t: anp.stack([t**2, anp.sin(t)]), BACKEND, np.array(0.5))
    assert jac.shape == (2,)
    np.testing.assert_allclose(jac, [1.0, np.cos(0.5)], rtol=1e-12)


def test_derivative_of_matrix_valued_function():
    value, deriv = di.value_and_derivative(matrix_of_scalar, BACKEND, 0.7)
    np.testing.assert_allclose(deriv, matrix_of_scalar_derivative(0.7), rtol=1e-12)
    np.testing.assert_allclose(value, matrix_of_scalar(0.7), rtol=1e-12)


def test_pullback_and_pushforward_batches():
    cotangents = (np.ones(4), np.arange(4.0), np.eye(4)[2])
    tangents = (np.ones(4), np.eye(4)[0])
    jac = coupled_jacobian(X)
    value, rows = di.value_and_pullback(coupled, BACKEND, X, cotangents)
    for c, r in zip(cotangents, rows):
        np.testing.assert_allclose(r, c @ jac, rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(value, coupled(X))
    value, columns = di.value_and_pushforward(coupled, BACKEND, X, tangents)
    for t, col in zip(tangents, columns):
        np.testing.assert_allclose(col, jac @ t, rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(value, coupled(X))


def test_constant_context_changes_without_repreparing():
    def scaled(x, a):
        return anp.sum(a * x**2)

    prep = di.prepare_gradient(scaled, BACKEND, X, di.Constant(2.0))
    np.testing.assert_allclose(di.gradient(scaled, BACKEND, X, di.Constant(2.0), prep=prep), 4 * X)
    np.testing.assert_allclose(
        di.gradient(scaled, BACKEND, X, di.Constant(-3.0), prep=prep), -6 * X
    )

    def weighted(x, a):
        return a * x

    prep = di.prepare_jacobian(weighted, BACKEND, X, di.Constant(np.arange(4.0)))
    jac = di.jacobian(weighted, BACKEND, X, di.Constant(np.ones(4)), prep=prep)
    np.testing.assert_allclose(jac, np.eye(4))


def test_function_independent_of_x_is_zero_only_when_autograd_sees_through():
    np.testing.assert_array_equal(di.gradient(lambda x: 0 * np.sum(x), BACKEND, X), np.zeros(4))
    with pytest.raises(di.GraphBreakError, match="does not depend on x through autograd's graph"):
        di.gradient(lambda x: 3.0, BACKEND, X)
    with pytest.raises(di.GraphBreakError):
        di.jacobian(lambda x: np.ones(2), BACKEND, X)


# --- evaluation counts: equal to native autograd ----------------------------------------------


def native_calls(f, call):
    counted = Counted(f)
    call(counted)
    return counted.count


def prepared_calls(prepare, operator, f, x, *extra):
    counted = Counted(f)
    prep = prepare(counted, BACKEND, x, *extra)
    at_preparation = counted.count
    counted.count = 0
    operator(counted, BACKEND, x, *extra, prep=prep)
    return at_preparation, counted.count


@pytest.mark.parametrize(
    "prepare, operator, f, native",
    [
        (di.prepare_gradient, di.gradient, agnostic, lambda f: autograd.grad(f)(X)),
        (
            di.prepare_gradient,
            di.value_and_gradient,
            agnostic,
            lambda f: autograd.value_and_grad(f)(X),
        ),
        (di.prepare_jacobian, di.jacobian, coupled, lambda f: autograd.jacobian(f)(X)),
        (di.prepare_jacobian, di.value_and_jacobian, coupled, lambda f: autograd.jacobian(f)(X)),
        (di.prepare_jacobian, di.jacobian, lambda x: x**2, lambda f: autograd.jacobian(f)(X)),
    ],
    ids=["gradient", "value_and_gradient", "jacobian", "value_and_jacobian", "square_jacobian"],
)
def test_prepared_calls_evaluate_f_as_often_as_native(prepare, operator, f, native):
    at_preparation, per_call = prepared_calls(prepare, operator, f, X)
    assert per_call == native_calls(f, native) == 1
    # The output shape comes from the forward pass each call records: none spent at preparation.
    assert at_preparation == 0


@pytest.mark.parametrize(
    "operator, f, native",
    [
        (di.gradient, agnostic, lambda f: autograd.grad(f)(X)),
        (di.value_and_gradient, agnostic, lambda f: autograd.grad(f)(X)),
        (di.jacobian, coupled, lambda f: autograd.jacobian(f)(X)),
        (di.value_and_jacobian, coupled, lambda f: autograd.jacobian(f)(X)),
    ],
    ids=["gradient", "value_and_gradient", "jacobian", "value_and_jacobian"],
)
def test_unprepared_calls_evaluate_f_once_like_native(operator, f, native):
    counted = Counted(f)
    operator(counted, BACKEND, X)
    assert counted.count == native_calls(f, native) == 1


@pytest.mark.parametrize("operator", [di.derivative, di.value_and_derivative])
def test_derivative_of_matrix_function_records_one_forward_pass(operator):
    at_preparation, per_call = prepared_calls(
        di.prepare_derivative, operator, matrix_of_scalar, 0.7
    )
    assert per_call == native_calls(matrix_of_scalar, lambda f: autograd.deriv(f)(0.7)) == 1
    # Even reverse mode (autograd.jacobian, one backward pass per output entry) records f once.
    assert native_calls(matrix_of_scalar, lambda f: autograd.jacobian(f)(0.7)) == 1
    assert at_preparation == 0  # forward mode needs no output shape


@pytest.mark.parametrize(
    "f", [matrix_of_scalar, lambda t: (matrix_of_scalar(t) ** 2).sum()], ids=["matrix", "scalar"]
)
def test_derivative_evaluates_once_in_every_call_while_it_learns_the_output(f):
    """The first call records f for reverse mode; a matrix output sends later calls forward."""
    counted = Counted(f)
    prep = di.prepare_derivative(counted, BACKEND, 0.7)
    expected = autograd.jacobian(f)(0.7)
    for _ in range(3):
        counted.count = 0
        value, d = di.value_and_derivative(counted, BACKEND, 0.7, prep=prep)
        assert counted.count == 1
        np.testing.assert_allclose(d, expected, rtol=1e-12)
        np.testing.assert_allclose(value, f(0.7))


def test_pullback_batch_records_one_forward_pass():
    cotangents = tuple(np.eye(4))
    at_preparation, per_call = prepared_calls(
        di.prepare_pullback, di.pullback, coupled, X, cotangents
    )
    assert per_call == 1
    assert at_preparation == 1


def test_pushforward_runs_f_once_per_tangent_like_make_jvp():
    tangents = tuple(np.eye(4)[:3])
    _, per_call = prepared_calls(di.prepare_pushforward, di.pushforward, coupled, X, tangents)
    from autograd.core import make_jvp

    def native(f):
        for t in tangents:
            make_jvp(f, X)(t)

    assert per_call == native_calls(coupled, native) == 3


# --- second order --------------------------------------------------------------------------


def test_hessian_and_value_gradient_hessian_from_one_forward_pass():
    counted = Counted(agnostic)
    prep = di.prepare_hessian(counted, BACKEND, X)
    assert counted.count == 0  # the output is a scalar by contract; each call checks it
    value, grad, hess = di.value_gradient_and_hessian(counted, BACKEND, X, prep=prep)
    assert counted.count == native_calls(agnostic, lambda f: autograd.hessian(f)(X)) == 1
    np.testing.assert_allclose(value, agnostic(X), rtol=1e-12)
    np.testing.assert_allclose(grad, agnostic_gradient(X), rtol=1e-12)
    np.testing.assert_allclose(hess, np.diag(agnostic_hessian_diagonal(X)), rtol=1e-12, atol=1e-14)
    hess = di.hessian(counted, BACKEND, X, prep=prep)
    np.testing.assert_allclose(hess, autograd.hessian(agnostic)(X), rtol=1e-12, atol=1e-14)


def test_hessian_of_coupled_function_with_context():
    def f(x, a):
        return a * anp.sum(x) ** 3

    x = np.array([0.5, -1.0, 2.0])
    prep = di.prepare_hessian(f, BACKEND, x, di.Constant(1.0))
    hess = di.hessian(f, BACKEND, x, di.Constant(2.0), prep=prep)
    np.testing.assert_allclose(hess, np.full((3, 3), 2 * 6 * np.sum(x)), rtol=1e-12)


def test_hvp_batch_from_one_forward_pass():
    tangents = (np.ones(4), np.arange(4.0), np.eye(4)[1])
    counted = Counted(agnostic)
    prep = di.prepare_hvp(counted, BACKEND, X, tangents)
    counted.count = 0
    grad, products = di.gradient_and_hvp(counted, BACKEND, X, tangents, prep=prep)
    assert counted.count == 1
    np.testing.assert_allclose(grad, agnostic_gradient(X), rtol=1e-12)
    hvp_native, _ = make_hvp(agnostic)(X)
    for t, p in zip(tangents, products):
        np.testing.assert_allclose(p, agnostic_hessian_diagonal(X) * t, rtol=1e-12, atol=1e-14)
        np.testing.assert_allclose(p, hvp_native(t), rtol=1e-12, atol=1e-14)
    assert len(di.hvp(counted, BACKEND, X, tangents, prep=prep)) == 3


def test_second_derivative_forward_over_forward():
    def f(x):
        return anp.sin(x) * x**3

    counted = Counted(f)
    prep = di.prepare_second_derivative(counted, BACKEND, 0.5)
    counted.count = 0
    value, d, dd = di.value_derivative_and_second_derivative(counted, BACKEND, 0.5, prep=prep)
    assert counted.count == 1
    s, c = np.sin(0.5), np.cos(0.5)
    np.testing.assert_allclose(
        [value, d, dd], [s * 0.125, c * 0.125 + 0.75 * s, -s * 0.125 + 1.5 * c + 3 * s]
    )
    matrix = di.second_derivative(matrix_of_scalar, BACKEND, 0.7)
    np.testing.assert_allclose(matrix, np.full((3, 3), 9.0))  # 1.5 * 2 * (ones.T @ ones)


def test_second_order_needs_a_scalar_output():
    with pytest.raises(
        ValueError, match=r"hessian needs f to return a scalar; it returns shape \(4,\)"
    ):
        di.hessian(coupled, BACKEND, X)
    with pytest.raises(
        ValueError, match=r"hvp needs f to return a scalar; it returns shape \(4,\)"
    ):
        di.hvp(coupled, BACKEND, X, (X,))


def test_first_derivatives_handed_to_second_order_pairs_are_differentiable_again():
    adapter = get_adapter(BACKEND)
    value_and_gradient = adapter.differentiable_value_and_gradient(
        Problem(adapter, agnostic, X, None, (), None)
    )
    hess = autograd.jacobian(lambda x: value_and_gradient(x)[1])(X)
    np.testing.assert_allclose(hess, np.diag(agnostic_hessian_diagonal(X)), rtol=1e-12, atol=1e-14)
    value_and_derivative = adapter.differentiable_value_and_derivative(
        Problem(adapter, matrix_of_scalar, 0.7, None, (), None)
    )
    np.testing.assert_allclose(
        autograd.deriv(lambda x: value_and_derivative(x)[1])(0.7), np.full((3, 3), 9.0)
    )
    # Finite differences over autograd goes through the same prepared gradient.
    outer = di.SecondOrder(di.AutoFiniteDiff(), BACKEND)
    np.testing.assert_allclose(
        di.hessian(agnostic, outer, X), np.diag(agnostic_hessian_diagonal(X)), atol=1e-6
    )


# --- arrays: family, dtype, inputs -----------------------------------------------------------


def test_numpy_in_numpy_out_and_float64_kept():
    grad = di.gradient(agnostic, BACKEND, X)
    jac = di.jacobian(coupled, BACKEND, X)
    deriv = di.derivative(matrix_of_scalar, BACKEND, 0.7)
    for result in (grad, jac, deriv):
        assert isinstance(result, np.ndarray) and result.dtype == np.float64


def test_float32_kept():
    x = X.astype(np.float32)
    assert di.gradient(agnostic, BACKEND, x).dtype == np.float32
    assert di.jacobian(coupled, BACKEND, x).dtype == np.float32
    value, grad, hess = di.value_gradient_and_hessian(agnostic, BACKEND, x)
    assert grad.dtype == hess.dtype == np.float32


def test_scalar_x_gives_numpy_scalars():
    grad = di.gradient(lambda x: x**3, BACKEND, 2.0)
    assert isinstance(grad, (np.ndarray, np.generic)) and grad.dtype == np.float64
    assert float(grad) == 12.0


def test_inputs_and_seeds_are_not_modified_or_aliased():
    x, a = X.copy(), np.arange(4.0)
    cotangents = (np.ones(4),)

    def identity(x):
        return x

    prep = di.prepare_jacobian(identity, BACKEND, x)
    first = di.jacobian(identity, BACKEND, x, prep=prep)
    first[:] = 7.0  # a result the caller overwrites must not leak into the next call
    np.testing.assert_array_equal(di.jacobian(identity, BACKEND, x, prep=prep), np.eye(4))
    di.pullback(lambda x, a: a * x, BACKEND, x, cotangents, di.Constant(a))
    di.gradient(agnostic, BACKEND, x)
    np.testing.assert_array_equal(x, X)
    np.testing.assert_array_equal(a, np.arange(4.0))
    np.testing.assert_array_equal(cotangents[0], np.ones(4))


# --- array_namespace on autograd's boxes ---------------------------------------------------------


def test_array_namespace_is_the_differentiable_autograd_namespace_on_every_kind_of_box():
    from diffinterface.families import autograd_namespace

    seen = []

    def f(x):
        seen.append(di.array_namespace(x))
        return agnostic(x)

    autograd.grad(f)(X)  # reverse-mode box
    autograd.deriv(lambda s: f(s * X))(1.0)  # forward-mode box
    make_hvp(f)(X)[0](X)  # box of a box (reverse over reverse)
    assert len(seen) == 3 and all(xp is autograd_namespace for xp in seen)
    assert di.array_namespace(X) is np


def test_calls_nest_inside_functions_autograd_differentiates():
    def squared_gradient_norm(x):
        g = di.gradient(agnostic, BACKEND, x)  # x is an autograd box here
        return anp.sum(g**2)

    hess = np.diag(agnostic_hessian_diagonal(X))
    np.testing.assert_allclose(
        autograd.grad(squared_gradient_norm)(X), 2 * hess @ agnostic_gradient(X), rtol=1e-12
    )

    def jacobian_sum(x):
        jac = di.jacobian(coupled, BACKEND, x)
        assert isinstance(jac, ArrayBox) and jac.shape == (
            4,
            4,
        )  # one box, not an object array of boxes
        return anp.sum(jac)

    by_finite_differences = di.gradient(
        lambda x: np.sum(coupled_jacobian(x)), di.AutoFiniteDiff(), X
    )
    np.testing.assert_allclose(autograd.grad(jacobian_sum)(X), by_finite_differences, rtol=1e-6)

    def hessian_trace(x):
        return anp.trace(di.hessian(agnostic, BACKEND, x))

    by_finite_differences = di.gradient(
        lambda x: np.sum(agnostic_hessian_diagonal(x)), di.AutoFiniteDiff(), X
    )
    np.testing.assert_allclose(autograd.grad(hessian_trace)(X), by_finite_differences, rtol=1e-6)


# --- capabilities and errors -------------------------------------------------------------------


def test_two_argument_functions_are_rejected_clearly():
    assert di.check_inplace(BACKEND) is False

    def f(y, x):
        y[:] = x**2

    for call in (
        lambda: di.jacobian(f, BACKEND, X, y=np.zeros(4)),
        lambda: di.prepare_pullback(f, BACKEND, X, (np.ones(4),), y=np.zeros(4)),
        lambda: di.derivative(lambda y, x: None, BACKEND, 1.0, y=np.zeros(2)),
    ):
        with pytest.raises(
            di.UnsupportedError, match="AutoAutograd cannot differentiate two-argument"
        ):
            call()


@pytest.mark.filterwarnings("ignore:Output seems independent of input")
def test_gradient_of_array_output_names_f_and_the_shape():
    prep = di.prepare_gradient(
        coupled, BACKEND, X
    )  # checked on the call, from its own forward pass
    for call in (di.gradient, di.value_and_gradient):
        with pytest.raises(
            ValueError, match=r"gradient needs f to return a scalar; it returns shape \(4,\)"
        ):
            call(coupled, BACKEND, X, prep=prep)
    with pytest.raises(
        TypeError, match="f: expected f to return an array or a number; it returned list"
    ):
        di.gradient(lambda x: [x[0], x[1]], BACKEND, X)
    # for jacobian a list of arrays is a pytree output: a list of Jacobians, learned on the call that meets it
    f = lambda x: [x[0], x[1]]  # noqa: E731
    prep = di.prepare_jacobian(f, BACKEND, X)
    for _ in range(2):  # the first call rebuilds the preparation for the tree, the second uses it
        rows = di.jacobian(f, BACKEND, X, prep=prep)
        assert isinstance(rows, list) and len(rows) == 2
        np.testing.assert_array_equal(rows[0], np.eye(X.size)[0])
        np.testing.assert_array_equal(rows[1], np.eye(X.size)[1])


def test_torch_input_is_rejected_with_the_accepted_family():
    import torch  # a tested backend: the suite fails without it anyway

    with pytest.raises(
        TypeError, match="x: AutoAutograd differentiates numpy or autograd arrays; got torch"
    ):
        di.gradient(agnostic, BACKEND, torch.ones(3, dtype=torch.float64))


def test_float32_survives_rules_that_promote_in_every_operator():
    # log2's rule divides by a float64 numpy scalar, max's by an integer count: the results stay float32
    def f(x):
        xp = di.array_namespace(x)
        return xp.sum(xp.log2(x * x + 1.0)) + xp.max(x) + xp.mean(x * x)

    x = np.array([0.5, -1.0, 2.0], dtype=np.float32)
    one = np.ones((), dtype=np.float32)
    results = [
        di.gradient(f, BACKEND, x),
        di.hessian(f, BACKEND, x),
        di.hvp(f, BACKEND, x, (x,))[0],
        di.pullback(f, BACKEND, x, (one,))[0],
        di.pushforward(f, BACKEND, x, (x,))[0],
        di.jacobian(lambda x: di.array_namespace(x).maximum(x, 0.3 * x), BACKEND, x),
    ]
    assert [r.dtype for r in results] == [np.float32] * len(results)
    np.testing.assert_allclose(results[0], di.gradient(f, BACKEND, x.astype(np.float64)), rtol=1e-5)


def test_linalg_differentiates_in_forward_mode_and_over_itself():
    def f(x):
        xp = di.array_namespace(x)
        return (
            xp.linalg.slogdet(x)[1]
            + xp.sum(xp.linalg.solve(x, x[0]) ** 2)
            + xp.sum(xp.linalg.eigvalsh(x + x.T) ** 3)
        )

    x = np.array([[2.0, 0.3, -0.4], [0.1, 1.5, 0.25], [-0.3, 0.7, 1.8]])
    tangent = np.sin(np.arange(9.0)).reshape(3, 3)
    pushed = di.pushforward(f, BACKEND, x, (tangent,))[0]
    np.testing.assert_allclose(pushed, np.sum(di.gradient(f, BACKEND, x) * tangent), rtol=1e-10)
    np.testing.assert_allclose(di.hessian(f, BACKEND, x), di.hessian(f, di.AutoJAX(), x), rtol=1e-8)
    along = lambda t: f(x + t * tangent)  # noqa: E731 - forward over forward through every rule
    np.testing.assert_allclose(
        di.second_derivative(along, BACKEND, 0.0),
        di.second_derivative(along, di.AutoJAX(), 0.0),
        rtol=1e-8,
    )


def test_singular_vectors_are_refused_in_forward_mode_with_the_way_around():
    def f(x):
        return di.array_namespace(x).linalg.svd(x, full_matrices=False)[1]

    x = np.array([[2.0, 0.3, -0.4], [0.1, 1.5, 0.25]])
    with pytest.raises(
        NotImplementedError, match=r"array_namespace\(x\)\.linalg\.svd: .*use linalg\.svdvals"
    ):
        di.pushforward(f, BACKEND, x, (np.ones_like(x),))
    singular = di.jacobian(lambda x: di.array_namespace(x).linalg.svdvals(x), BACKEND, x)
    np.testing.assert_allclose(di.jacobian(f, BACKEND, x), singular, rtol=1e-12)


def test_sort_is_right_in_both_modes_on_matrices():
    # autograd's own forward rule of sort gave a (3, 4, 4) tangent for a (3, 4) matrix
    x = np.array([[2.0, 0.3, -0.4, 0.5], [0.1, 1.5, 0.25, -0.7], [-0.3, 0.7, 1.8, 0.2]])
    f = lambda x: di.array_namespace(x).sort(x, axis=0)  # noqa: E731
    order = np.argsort(x, axis=0)
    tangent = np.arange(12.0).reshape(3, 4)
    np.testing.assert_array_equal(
        di.pushforward(f, BACKEND, x, (tangent,))[0], np.take_along_axis(tangent, order, 0)
    )
    pulled = di.pullback(f, BACKEND, x, (tangent,))[0]
    np.testing.assert_array_equal(np.take_along_axis(pulled, order, 0), tangent)


def test_an_empty_output_that_ignores_x_has_an_empty_derivative():
    f = lambda x: np.zeros((2, 0))  # noqa: E731
    assert di.derivative(f, BACKEND, 1.5).shape == (2, 0)
    assert di.jacobian(f, BACKEND, np.ones(3)).shape == (2, 0, 3)
    with pytest.raises(di.GraphBreakError):  # a non-empty constant output stays a graph break
        di.derivative(lambda x: np.zeros(2), BACKEND, 1.5)


def test_a_cache_written_inside_f_is_refused_with_the_way_around():
    def f(x, cache):
        cache[:] = x**2
        return cache.sum()

    assert get_adapter(BACKEND).capabilities.writes_cache is False
    cache = np.zeros(3)
    with pytest.raises(
        di.UnsupportedError, match=r"cannot differentiate f with a di\.Cache.*di\.AutoTorch\(\)"
    ):
        di.gradient(f, BACKEND, np.ones(3), di.Cache(cache))
    # a Cache f does not write boxes into still works
    assert di.gradient(
        lambda x, c: (x * c.sum()).sum(), BACKEND, np.ones(2), di.Cache(np.ones(2))
    ).tolist() == [2, 2]
