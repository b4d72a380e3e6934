"""``diffinterface.scipy.jacobian_operator`` and ``hessian_operator`` on every backend, and with scipy's solvers."""

import numpy as np
import pytest
import scipy.optimize
import scipy.sparse.linalg

import diffinterface as di
from diffinterface.scipy import hessian_operator, jacobian_operator


def _residual(x):
    xp = di.array_namespace(x)
    return xp.concatenate([xp.sin(x) * x[0], x[1:] * x[:-1]])


def _energy(x):
    xp = di.array_namespace(x)
    return xp.sum(xp.exp(0.5 * (x[1:] - x[:-1]))) + xp.sum(x**4) / 4


X = np.linspace(0.2, 1.0, 5)


def test_jacobian_operator_products(di_backend):
    J = jacobian_operator(_residual, di_backend, X)
    dense = np.asarray(di.jacobian(_residual, di_backend, X))
    rng = np.random.default_rng(0)
    v, u = rng.standard_normal(5), rng.standard_normal(9)
    m, w = rng.standard_normal((5, 3)), rng.standard_normal((9, 2))
    assert J.shape == (9, 5) and J.dtype == np.float64
    assert np.allclose(J.value, _residual(X))
    for got, wanted in (
        (J @ v, dense @ v),
        (J.T @ u, dense.T @ u),
        (J @ m, dense @ m),
        (J.T @ w, dense.T @ w),
        (J @ m[:, :0], dense @ m[:, :0]),
        (J.T @ w[:, :0], dense.T @ w[:, :0]),
    ):
        assert isinstance(got, np.ndarray) and got.shape == wanted.shape
        np.testing.assert_allclose(got, wanted, rtol=1e-6, atol=1e-6)


def test_hessian_operator_products(di_backend):
    H = hessian_operator(_energy, di_backend, X)
    dense = np.asarray(di.hessian(_energy, di_backend, X))
    rng = np.random.default_rng(1)
    v, m = rng.standard_normal(5), rng.standard_normal((5, 4))
    assert H.shape == (5, 5) and H.H is H
    np.testing.assert_allclose(
        H.gradient, np.asarray(di.gradient(_energy, di_backend, X)), rtol=1e-6, atol=1e-6
    )
    for got, wanted in (
        (H @ v, dense @ v),
        (H @ m, dense @ m),
        (H.T @ v, dense.T @ v),
        (H @ m[:, :0], dense @ m[:, :0]),
    ):
        assert got.shape == wanted.shape
        np.testing.assert_allclose(got, wanted, rtol=1e-5, atol=1e-5)


SOLVER_BACKENDS = {
    "jax": di.AutoJAX(),
    "torch": di.AutoTorch(),
    "autograd": di.AutoAutograd(),
    "finitediff": di.AutoFiniteDiff(),
}


@pytest.mark.parametrize("backend", list(SOLVER_BACKENDS.values()), ids=list(SOLVER_BACKENDS))
def test_least_squares_lsmr_on_an_exponential_fit(backend):
    """4000 residuals a * exp(-k t) + c - data; jac returns the operator, never a dense Jacobian."""
    t = np.linspace(0.0, 4.0, 4000)
    truth = np.array([2.5, 1.3, 0.4])
    data = truth[0] * np.exp(-truth[1] * t) + truth[2] + 0.01 * np.sin(37 * t)

    def residuals(p):
        xp = di.array_namespace(p)
        return p[0] * xp.exp(-p[1] * xp.asarray(t)) + p[2] - xp.asarray(data)

    operators = []

    def jac(p):
        operators.append(jacobian_operator(residuals, backend, p))
        return operators[-1]

    fit = scipy.optimize.least_squares(
        lambda p: np.asarray(residuals(p)), np.array([1.0, 0.5, 0.0]), jac=jac, tr_solver="lsmr"
    )
    assert fit.success and operators and all(op.shape == (4000, 3) for op in operators)
    np.testing.assert_allclose(fit.x, truth, rtol=2e-2, atol=2e-2)


@pytest.mark.parametrize("backend", list(SOLVER_BACKENDS.values()), ids=list(SOLVER_BACKENDS))
def test_cg_on_the_hessian_operator_solves_a_newton_step(backend):
    x = np.linspace(-0.5, 0.5, 50)
    H = hessian_operator(_energy, backend, x)
    step, info = scipy.sparse.linalg.cg(H, -H.gradient, rtol=1e-10)
    dense = np.asarray(di.hessian(_energy, backend, x))
    assert info == 0
    np.testing.assert_allclose(dense @ step, -H.gradient, rtol=1e-6, atol=1e-6)


def test_gmres_eigsh_and_lsqr_take_the_operators():
    backend = di.AutoJAX()
    x = np.linspace(-0.5, 0.5, 30)
    H = hessian_operator(_energy, backend, x)
    # the dense reference from another backend: an unprepared JAX Hessian runs eagerly and
    # compiles each operation of its nested transforms at this shape, for seconds
    dense = np.asarray(di.hessian(_energy, di.AutoAutograd(), x))
    solution, info = scipy.sparse.linalg.gmres(H, np.ones(30), rtol=1e-10)
    assert info == 0 and np.allclose(dense @ solution, np.ones(30), atol=1e-6)
    largest = scipy.sparse.linalg.eigsh(H, k=2, return_eigenvectors=False)
    assert np.allclose(np.sort(largest), np.sort(np.linalg.eigvalsh(dense))[-2:])
    J = jacobian_operator(_residual, backend, x)
    target = J @ np.ones(30)
    assert np.allclose(
        scipy.sparse.linalg.lsqr(J, target, atol=1e-12, btol=1e-12)[0], np.ones(30), atol=1e-5
    )


def test_framework_arrays_give_numpy_products():
    import torch

    x = torch.linspace(0.2, 1.0, 5, dtype=torch.float64)
    J = jacobian_operator(_residual, di.AutoTorch(), x)
    got = J @ np.ones(5)
    assert isinstance(got, np.ndarray)
    assert np.allclose(got, np.asarray(di.jacobian(_residual, di.AutoTorch(), x)) @ np.ones(5))


def test_bad_arguments_are_named():
    with pytest.raises(TypeError, match="x: expected an array"):
        jacobian_operator(_residual, di.AutoJAX(), [1.0, 2.0])
    with pytest.raises(TypeError, match="backend"):
        hessian_operator(_energy, "jax", X)


def test_operators_are_taken_at_x_as_it_was_built_whatever_x_holds_later():
    # issue #48: J @ v stayed at the old x while the lazily prepared J.T @ u took the new one
    f = lambda x: np.sin(x) * x[0]  # noqa: E731
    x = np.array([0.5, -1.0, 2.0])
    J = jacobian_operator(f, di.AutoAutograd(), x)
    H = hessian_operator(lambda x: (np.sin(x) * x[0]).sum(), di.AutoAutograd(), x)
    expected_J = di.jacobian(f, di.AutoAutograd(), x.copy())
    expected_H = di.hessian(lambda x: (np.sin(x) * x[0]).sum(), di.AutoAutograd(), x.copy())
    x[...] = 7.0
    eye = np.eye(3)
    np.testing.assert_allclose(J @ eye, expected_J)
    np.testing.assert_allclose(J.T @ eye, expected_J.T)
    np.testing.assert_allclose(H @ eye[:, :2], expected_H[:, :2])
