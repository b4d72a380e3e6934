"""ImplicitFunction: inside the frameworks' own transforms, with pytrees, a byproduct, and its errors.

The closed forms on every backend are the kit's (``diffinterface/testing/implicit_scenarios.py``,
run by ``test_conformance.py``); here: ``jax.grad`` and ``jax.jit`` of a loss, torch's
``backward()``, a ``tf.GradientTape``, pytree x and y, the byproduct, the linear solvers'
options, and every refusal.
"""

from __future__ import annotations

import numpy as np
import pytest

import diffinterface as di
from diffinterface.testing import BACKENDS

RNG = np.random.default_rng(0)
X = RNG.normal(size=(7, 3))
T = RNG.normal(size=7)
LAM = 0.4


def ridge_solver(lam):
    lam = float(np.asarray(lam))
    return np.linalg.solve(X.T @ X + lam * np.eye(3), X.T @ T)


def ridge_conditions(lam, b):
    xp = di.array_namespace(b)
    Xc = xp.asarray(X, dtype=b.dtype)
    residual = xp.matmul(Xc, b) - xp.asarray(T, dtype=b.dtype)
    return xp.matmul(residual, Xc) + lam * b


def exact_derivative(lam=LAM):
    return -np.linalg.solve(X.T @ X + lam * np.eye(3), ridge_solver(lam))


def loss_gradient(lam=LAM):
    """d/dlam of sum(b(lam)^2) / 2."""
    return float(ridge_solver(lam) @ exact_derivative(lam))


class Counted:
    def __init__(self, solver):
        self.solver, self.calls = solver, 0

    def __call__(self, *args):
        self.calls += 1
        return self.solver(*args)


CONDITION_BACKENDS = {k: BACKENDS[k] for k in ("finitediff-central", "jax", "torch", "autograd")}


@pytest.mark.parametrize("key", list(CONDITION_BACKENDS))
def test_jax_grad_and_jit_of_a_loss(key):
    import jax

    jnp = jax.numpy
    solver = Counted(ridge_solver)
    impl = di.ImplicitFunction(solver, ridge_conditions, CONDITION_BACKENDS[key])

    def loss(lam):
        b = impl(lam)
        return jnp.sum(b * b) / 2

    with jax.enable_x64(True):
        lam = jnp.asarray(LAM, dtype=jnp.float64)
        assert np.isclose(float(jax.grad(loss)(lam)), loss_gradient(), rtol=1e-8)
        solver.calls = 0
        assert np.isclose(
            float(jax.jit(jax.grad(loss))(lam + 0.25)), loss_gradient(LAM + 0.25), rtol=1e-8
        )
        assert solver.calls == 1


@pytest.mark.parametrize("key", list(CONDITION_BACKENDS))
def test_torch_backward(key):
    import torch

    solver = Counted(ridge_solver)
    impl = di.ImplicitFunction(solver, ridge_conditions, CONDITION_BACKENDS[key])
    lam = torch.tensor(LAM, dtype=torch.float64, requires_grad=True)
    b = impl(lam)
    (b * b).sum().div(2).backward()
    assert np.isclose(lam.grad.item(), loss_gradient(), rtol=1e-8)
    assert solver.calls == 1


@pytest.mark.parametrize("key", ["finitediff-central", "tensorflow", "autograd"])
def test_tensorflow_tape(key):
    import tensorflow as tf

    impl = di.ImplicitFunction(ridge_solver, ridge_conditions, BACKENDS[key])
    lam = tf.constant(LAM, dtype=tf.float64)
    with tf.GradientTape() as tape:
        tape.watch(lam)
        b = impl(lam)
        loss = tf.reduce_sum(b * b) / 2
    assert np.isclose(float(tape.gradient(loss, lam)), loss_gradient(), rtol=1e-8)


def test_finite_differences_outer_calls_the_solver_once_per_point():
    solver = Counted(ridge_solver)
    impl = di.ImplicitFunction(solver, ridge_conditions, di.AutoFiniteDiff())
    derivative = di.derivative(impl, di.AutoFiniteDiff(), LAM + 0.5)
    # the implicit rule: exact for these linear conditions, where a difference of solutions is not
    np.testing.assert_allclose(derivative, exact_derivative(LAM + 0.5), rtol=1e-9)
    assert solver.calls == 1


def test_a_batch_of_tangents_is_one_factorisation(monkeypatch):
    import scipy.linalg

    factorisations = []
    original = scipy.linalg.lu_factor
    monkeypatch.setattr(
        scipy.linalg, "lu_factor", lambda a, **kw: factorisations.append(1) or original(a, **kw)
    )
    x = np.linspace(0.5, 2.0, 5)
    impl = di.ImplicitFunction(np.sqrt, lambda x, y: y * y - x, di.AutoAutograd())
    tangents = tuple(np.eye(5))
    results = di.pushforward(impl, di.AutoAutograd(), x, tangents)
    np.testing.assert_allclose(np.stack(results), np.diag(0.5 / np.sqrt(x)), atol=1e-12)
    assert len(factorisations) == 1


def test_pytree_x_and_y_and_contexts():
    def solver(params, scale):
        a, c = params["a"], params["c"]
        return {"root": np.sqrt(a) * scale, "shift": c + 1.0}

    def conditions(params, y, scale):
        return {
            "root": y["root"] ** 2 - params["a"] * scale**2,
            "shift": y["shift"] - params["c"] - 1.0,
        }

    impl = di.ImplicitFunction(solver, conditions, di.AutoAutograd())
    params = {"a": np.array([4.0, 9.0]), "c": np.array(2.0)}
    out = impl(params, di.Constant(2.0))
    np.testing.assert_allclose(out["root"], [4.0, 6.0])

    def loss(params, scale):
        y = impl(params, di.Constant(scale))
        return (y["root"] ** 2).sum() + y["shift"] ** 2

    grad = di.gradient(loss, di.AutoAutograd(), params, di.Constant(2.0))
    # d/da (a scale^2) = scale^2 = 4; d/dc (c + 1)^2 = 2 (c + 1) = 6
    np.testing.assert_allclose(grad["a"], [4.0, 4.0])
    np.testing.assert_allclose(grad["c"], 6.0)


def test_byproduct_reaches_the_conditions():
    seen = []

    def solver(x):
        y = np.clip(x, 0.0, None)  # the projection onto y >= 0; its active set is the byproduct
        return y, x > 0.0

    def conditions(x, y, active):
        seen.append(active)
        xp = di.array_namespace(y)
        mask = xp.asarray(active.astype(np.float64))
        return mask * (y - x) + (1.0 - mask) * y

    impl = di.ImplicitFunction(solver, conditions, di.AutoAutograd(), has_byproduct=True)
    x = np.array([-1.0, 2.0, 3.0])
    np.testing.assert_allclose(
        di.jacobian(impl, di.AutoJAX(), x), np.diag([0.0, 1.0, 1.0]), atol=1e-12
    )
    assert seen and all(np.array_equal(a, [False, True, True]) for a in seen)


@pytest.mark.parametrize("method", ["gmres", "cg", "bicgstab"])
def test_iterative_solvers(method):
    impl = di.ImplicitFunction(
        ridge_solver, ridge_conditions, di.AutoAutograd(), linear_solver=method
    )
    np.testing.assert_allclose(
        di.derivative(impl, di.AutoJAX(), LAM), exact_derivative(), rtol=1e-8
    )


def test_callable_linear_solver_gets_the_operator():
    import scipy.sparse.linalg

    shapes = []

    def solve(operator, rhs):
        shapes.append(operator.shape)
        return scipy.sparse.linalg.lsqr(operator, rhs, atol=1e-14, btol=1e-14)[0]

    impl = di.ImplicitFunction(
        ridge_solver, ridge_conditions, di.AutoAutograd(), linear_solver=solve
    )
    np.testing.assert_allclose(
        di.derivative(impl, di.AutoTorch(), LAM), exact_derivative(), rtol=1e-8
    )
    assert shapes and set(shapes) == {(3, 3)}


# -- errors ----------------------------------------------------------------------------------------


def test_conditions_of_another_shape_than_y():
    impl = di.ImplicitFunction(ridge_solver, lambda lam, b: b[:2] * lam, di.AutoAutograd())
    with pytest.raises(ValueError, match=r"conditions: expected an output of y's shape \(3,\)"):
        impl(np.array(LAM))


def test_solver_returning_another_shape():
    def solver(x):
        return np.ones(3) if float(x) < 1.0 else np.ones(4)

    impl = di.ImplicitFunction(solver, lambda x, y: y - x, di.AutoAutograd())
    impl(np.array(0.5))
    with pytest.raises(ValueError, match=r"solver: expected y of shape \(3,\).*got shape \(4,\)"):
        impl(np.array(2.0))


def test_solver_returning_no_array():
    impl = di.ImplicitFunction(lambda x: "done", lambda x, y: y - x, di.AutoAutograd())
    with pytest.raises(
        TypeError, match="solver.s y: expected a float, an array or a pytree of arrays; got str"
    ):
        impl(np.array(2.0))


def test_byproduct_missing():
    impl = di.ImplicitFunction(
        np.sqrt, lambda x, y, z: y * y - x, di.AutoAutograd(), has_byproduct=True
    )
    with pytest.raises(
        TypeError, match=r"solver: with has_byproduct=True, expected a pair \(y, z\)"
    ):
        impl(np.array([4.0]))


@pytest.mark.parametrize("method", ["direct", "gmres"])
def test_singular_dc_dy(method):
    # c = (y0 + y1 - x, y0 + y1 - x): every y on a line solves it, dc/dy is singular
    impl = di.ImplicitFunction(
        lambda x: np.array([float(x), 0.0]),
        lambda x, y: (y[0] + y[1] - x) * np.ones(2),
        di.AutoAutograd(),
        linear_solver=method,
        maxiter=20,
    )
    with pytest.raises(di.LinearSolveError, match="singular") as info:
        di.derivative(impl, di.AutoTorch(), 1.0)
    assert "nan" not in str(info.value).lower()


def test_iterative_not_converged_gives_its_residual():
    n = 30
    A = np.diag(np.logspace(0, 6, n))

    impl = di.ImplicitFunction(
        lambda x: x / np.diag(A),
        lambda x, y: A @ y - x,
        di.AutoAutograd(),
        linear_solver="cg",
        maxiter=2,
    )
    with pytest.raises(
        di.LinearSolveError, match=r"cg did not converge in 2 iterations.*relative residual \d"
    ):
        di.pullback(impl, di.AutoTorch(), np.ones(n), (np.ones(n),))


@pytest.mark.parametrize(
    "kwargs, match",
    [
        ({"linear_solver": "lu"}, "linear_solver: expected 'direct', 'gmres'"),
        ({"linear_solver": "gmres", "rtol": -1.0}, "rtol: expected a float >= 0"),
        ({"linear_solver": "cg", "maxiter": 0}, "maxiter: expected None or an int > 0"),
        ({"has_byproduct": 1}, "has_byproduct: expected True or False"),
    ],
)
def test_bad_arguments(kwargs, match):
    with pytest.raises((TypeError, ValueError), match=match):
        di.ImplicitFunction(ridge_solver, ridge_conditions, di.AutoAutograd(), **kwargs)


def test_not_callable_and_not_a_backend():
    with pytest.raises(TypeError, match="solver: ImplicitFunction expected a callable"):
        di.ImplicitFunction(None, ridge_conditions, di.AutoAutograd())
    with pytest.raises(TypeError, match="backend"):
        di.ImplicitFunction(ridge_solver, ridge_conditions, "jax")


@pytest.mark.parametrize("conditions_backend", [di.AutoAutograd(), di.AutoJAX(), di.AutoTorch()])
def test_second_derivatives_through_the_implicit_rule(conditions_backend):
    """b''(lam) = 2 M^-2 b, M = X^T X + lam I: the conditions' mixed second derivative (lam b) counts."""
    impl = di.ImplicitFunction(ridge_solver, ridge_conditions, conditions_backend)
    M = X.T @ X + LAM * np.eye(3)
    wanted = 2 * np.linalg.solve(M, np.linalg.solve(M, ridge_solver(LAM)))
    for outer in (di.AutoJAX(), di.AutoTorch()):
        got = di.second_derivative(lambda s: impl(s), outer, np.float64(LAM))
        np.testing.assert_allclose(got, wanted, rtol=1e-8)

    # a fixed point whose conditions couple x and y nonlinearly: the Hessian of sum(y) against
    # differences of its exact gradient
    W = 0.3 * RNG.normal(size=(4, 4))

    def solve(x):
        y = np.zeros(4)
        for _ in range(200):
            y = np.tanh(W @ y + np.asarray(x))
        return y

    def conditions(x, y):
        xp = di.array_namespace(y)
        return y - xp.tanh(xp.matmul(xp.asarray(W, dtype=y.dtype), y) + x)

    fixed = di.ImplicitFunction(solve, conditions, conditions_backend)
    x0 = RNG.normal(size=4)

    def gradient(x):
        y = solve(x)
        slope = 1 - np.tanh(W @ y + x) ** 2
        return slope * np.linalg.solve((np.eye(4) - slope[:, None] * W).T, np.ones(4))

    step = 1e-6
    differences = np.stack(
        [(gradient(x0 + step * e) - gradient(x0 - step * e)) / (2 * step) for e in np.eye(4)]
    )
    hessian = di.hessian(lambda x: fixed(x).sum(), di.AutoJAX(), x0)
    np.testing.assert_allclose(hessian, differences, rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(hessian, hessian.T, rtol=1e-10, atol=1e-12)


def test_sparse_conditions_backend_factorises_sparsely(monkeypatch):
    import scipy.sparse.linalg

    factorised = []
    original = scipy.sparse.linalg.splu
    monkeypatch.setattr(
        scipy.sparse.linalg, "splu", lambda a, **kw: factorised.append(a.nnz) or original(a, **kw)
    )
    n = 50
    x = np.linspace(1.0, 4.0, n)
    backend = di.AutoSparse(di.AutoAutograd())
    impl = di.ImplicitFunction(np.sqrt, lambda x, y: y * y - x, backend)
    (got,) = di.pullback(impl, di.AutoTorch(), x, (np.ones(n),))
    np.testing.assert_allclose(got, 0.5 / np.sqrt(x), rtol=1e-12)
    assert factorised == [n]  # one sparse factorisation of the diagonal dc/dy, n entries stored


def test_singular_sparse_dc_dy():
    backend = di.AutoSparse(di.AutoAutograd())
    impl = di.ImplicitFunction(lambda x: np.zeros(3), lambda x, y: y * y - x, backend)
    with pytest.raises(di.LinearSolveError, match="dc/dy is singular"):
        di.jacobian(impl, di.AutoTorch(), np.ones(3))


@pytest.mark.parametrize("key", ["torch", "autograd", "jax"])
def test_torch_func_transforms(key):
    import torch

    impl = di.ImplicitFunction(
        lambda x: np.sqrt(np.asarray(x)), lambda x, y: y * y - x, BACKENDS[key]
    )
    x = torch.tensor([4.0, 9.0], dtype=torch.float64)
    wanted = 0.5 / np.sqrt(x.numpy())
    np.testing.assert_allclose(torch.func.grad(lambda x: impl(x).sum())(x).numpy(), wanted)
    np.testing.assert_allclose(torch.func.jacrev(impl)(x).diagonal().numpy(), wanted)
    np.testing.assert_allclose(torch.func.jacfwd(impl)(x).diagonal().numpy(), wanted)


def test_jax_vmap_after_one_call_and_its_refusal_before():
    import jax

    jnp = jax.numpy
    impl = di.ImplicitFunction(
        lambda x: np.sqrt(np.asarray(x)), lambda x, y: y * y - x, di.AutoTorch()
    )
    batched = jax.vmap(jax.grad(lambda x: jnp.sum(impl(x))))
    with jax.enable_x64(True):
        xs = jnp.array([[4.0, 9.0], [1.0, 16.0]])
        # vmap traces without values, and the solver is the only way to learn y's shape
        with pytest.raises(di.UnsupportedError, match="Call it once outside jax.jit"):
            batched(xs)
        impl(np.array([1.0, 1.0]))
        np.testing.assert_allclose(batched(xs), 0.5 / np.sqrt(np.asarray(xs)))


@pytest.mark.parametrize("method", ["gmres", "cg", "bicgstab"])
def test_jax_conditions_run_the_whole_krylov_loop_in_jax(method, monkeypatch):
    import jax
    from diffinterface.wrappers.implicit import linear_solvers

    def never(*args, **kwargs):
        raise AssertionError("scipy's Krylov loop ran: each product would cross into JAX")

    # a framework with Krylov solvers of its own declares them: scipy's are not called
    monkeypatch.setattr(linear_solvers, "ITERATIVE", {m: never for m in linear_solvers.ITERATIVE})
    impl = di.ImplicitFunction(
        ridge_solver, ridge_conditions, di.AutoJAX(), linear_solver=method, rtol=1e-12
    )
    with jax.enable_x64(True):
        lam = jax.numpy.float64(LAM)
        grad = jax.jit(jax.grad(lambda s: jax.numpy.sum(impl(s) ** 2) / 2))
        impl(lam)
        np.testing.assert_allclose(float(grad(lam)), loss_gradient(), rtol=1e-8)
        np.testing.assert_allclose(float(grad(lam + 0.25)), loss_gradient(LAM + 0.25), rtol=1e-8)
    np.testing.assert_allclose(
        di.jacobian(impl, di.AutoTorch(), np.float64(LAM)), exact_derivative(), rtol=1e-8
    )


def test_jax_krylov_not_converged_raises_linear_solve_error_eagerly():
    import jax

    n = 30
    A = np.diag(np.logspace(0, 6, n))
    impl = di.ImplicitFunction(
        lambda x: np.asarray(x) / np.diag(A),
        lambda x, y: di.array_namespace(y).asarray(A) @ y - x,
        di.AutoJAX(),
        linear_solver="cg",
        maxiter=2,
    )
    with jax.enable_x64(True):
        # eagerly, the rules' own exception reaches the caller, not JAX's callback error
        with pytest.raises(di.LinearSolveError, match=r"cg did not converge.*relative residual \d"):
            jax.grad(lambda x: jax.numpy.sum(impl(x)))(jax.numpy.ones(n))
    with pytest.raises(di.LinearSolveError, match=r"cg did not converge.*relative residual \d"):
        di.pullback(impl, di.AutoTorch(), np.ones(n), (np.ones(n),))


def test_output_like_lets_jit_and_vmap_trace_on_the_first_call():
    import jax

    jnp = jax.numpy

    def make(**kwargs):
        return di.ImplicitFunction(
            lambda x: np.sqrt(np.asarray(x)), lambda x, y: y * y - x, di.AutoJAX(), **kwargs
        )

    with jax.enable_x64(True):
        xs = jnp.array([[4.0, 9.0], [1.0, 16.0]])
        for like in (np.zeros(2), jax.ShapeDtypeStruct((2,), jnp.float64)):
            impl = make(output_like=like)
            grad = jax.jit(jax.grad(lambda x, impl=impl: jnp.sum(impl(x))))
            np.testing.assert_allclose(grad(xs[0]), 0.5 / np.sqrt(np.asarray(xs[0])))
            batched = jax.vmap(jax.grad(lambda x, impl=make(output_like=like): jnp.sum(impl(x))))
            np.testing.assert_allclose(batched(xs), 0.5 / np.sqrt(np.asarray(xs)))
        tree = di.ImplicitFunction(
            lambda x: {"r": np.sqrt(np.asarray(x))},
            lambda x, y: {"r": y["r"] * y["r"] - x},
            di.AutoJAX(),
            output_like={"r": np.zeros(2)},
        )
        np.testing.assert_allclose(jax.jit(tree)(xs[0])["r"], np.sqrt(np.asarray(xs[0])))
        # without it, the refusal names the keyword
        with pytest.raises(di.UnsupportedError, match="output_like="):
            jax.jit(make())(xs[0])
        # a wrong description is caught against the solver's y at the first point
        with pytest.raises(ValueError, match="output_like: described y as"):
            make(output_like=np.zeros(3))(np.array([4.0, 9.0]))
    with pytest.raises(TypeError, match="output_like: expected an array"):
        make(output_like={"r": 2})


@pytest.mark.parametrize("has_byproduct", [False, True])
def test_jax_krylov_pullback_of_several_cotangents_fuses_the_product_in_x(has_byproduct):
    import jax
    from diffinterface.backends.jax.krylov import KrylovSolve

    calls = []
    fused = KrylovSolve.implicit_pullback

    def counted(self, *args):
        calls.append(args[-1].shape[1])  # the columns solved together
        return fused(self, *args)

    def solver(x):
        y = np.sqrt(np.asarray(x))
        return (y, "a byproduct that is no array") if has_byproduct else y

    def conditions(x, y, *byproduct):
        return y * y - x

    impl = di.ImplicitFunction(
        solver,
        conditions,
        di.AutoJAX(),
        linear_solver="gmres",
        rtol=1e-12,
        has_byproduct=has_byproduct,
    )
    x = np.array([4.0, 9.0, 16.0])
    us = (np.array([1.0, 0.0, 2.0]), np.array([0.5, -1.0, 3.0]))
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(KrylovSolve, "implicit_pullback", counted)
        with jax.enable_x64(True):
            got = di.pullback(impl, di.AutoTorch(), x, us)
    assert calls and max(calls) == 2, "the solves and the products in x not in one JAX program"
    for g, u in zip(got, us):  # dy/dx = diag(1 / (2 sqrt(x)))
        np.testing.assert_allclose(np.asarray(g), u / (2 * np.sqrt(x)), rtol=1e-10)
