"""ImplicitFunction against hand-written implicit-function-theorem recipes on JAX and torch, and its memory
matrix-free.

    python -m benchmarks.bench_implicit               # ridge n = 1000, then the matrix-free fixed point
    python -m benchmarks.bench_implicit ridge 300     # the ridge rows only, n = 300 (quick)
    python -m benchmarks.bench_implicit fixed 300     # the fixed-point rows only (JAX, optimistix, torch)
    python -m benchmarks.bench_implicit memory 20000  # the matrix-free row only

**Ridge argmin gradient.** ``b(lam) = argmin |X b - t|^2 / 2 + lam |b|^2 / 2``
with n = 1000 unknowns (X: 1000 x 1000); the loss ``sum(b^2) / 2`` and its
gradient in ``lam``. Both sides call the same numpy solver (``np.linalg.solve``
of the normal equations) and differentiate the same conditions
``X^T (X b - t) + lam b`` by the implicit function theorem:

- native JAX: ``jax.jacfwd`` of the conditions in b, ``jnp.linalg.solve`` of
  the transposed system, ``jax.vjp`` in lam, jitted (jaxopt's ``custom_root``
  with a dense solve does this);
- native torch: ``torch.func.jacfwd``, ``torch.linalg.solve``, ``torch.func.vjp``;
- diffinterface: ``jax.grad`` (jitted) and torch's ``backward()`` of the loss
  of ``di.ImplicitFunction(solver, conditions, backend)`` with
  ``linear_solver="direct"``, and with ``"cg"`` (matrix-free); the conditions
  backend is ``AutoJAX`` / ``AutoTorch`` in forward mode with
  ``batch_size=n``, as the native recipes' ``jacfwd`` (every column in one
  batch; the selectors' default memory budget would sweep them in smaller
  batches).

Each round moves lam (a new point: the solver runs and the system is formed
again on both sides), the recipes alternate within the round, and the ratio
is the median over rounds of (diffinterface time / native time) with its
interquartile range; wall time, each sample blocking on its result, every library on one thread
(:data:`ONE_THREAD`).

**Fixed-point gradient.** ``y = tanh(W y + x)`` (W a contraction), n = 1000,
the gradient in x of ``sum(y^2) / 2``, both sides calling the same numpy
fixed-point iteration: on JAX, ``jax.scipy.sparse.linalg.gmres`` on the vjp
of the conditions in y, jitted (native), against ``linear_solver="gmres"``
inside ``jax.jit(jax.grad)``; on torch (no GMRES of its own), a dense solve
on ``torch.func.jacfwd`` against ``"direct"`` under ``backward()``. Against
optimistix (the ``benchmark`` extra; the row is skipped without it): the same
fixed point solved in JAX by ``optimistix.fixed_point``, differentiated by
``optimistix.ImplicitAdjoint`` with lineax's GMRES (native), against an
``ImplicitFunction`` whose solver is that same jitted ``fixed_point``, with
``linear_solver="gmres"``, under ``jax.jit(jax.grad)``.

**Matrix-free fixed point.** ``y = tanh(y_{i-1} + y_{i+1}) / 4 + x``
(a coupled contraction), N = 20,000 unknowns, the pullback of one cotangent
with ``linear_solver="gmres"``, conditions by AutoJAX: the run's peak
resident memory against the 3.2 GB an N x N float64 matrix would take,
in a fresh process (``ru_maxrss``, which includes the frameworks' own
footprint), with the pullback checked against a dense-free reference
(``scipy.sparse`` solve of the tridiagonal system).

Recorded runs: ``results/implicit.md``.
"""

from __future__ import annotations

import os
import statistics
import sys
import time

import numpy as np

import diffinterface as di

ROUNDS = 11


def _ridge_data(n):
    rng = np.random.default_rng(0)
    X = rng.normal(size=(n, n)) / np.sqrt(n)
    return X, rng.normal(size=n)


def _solver(X, t):
    gram, rhs = X.T @ X, X.T @ t

    def solver(lam):
        return np.linalg.solve(gram + float(np.asarray(lam)) * np.eye(len(rhs)), rhs)

    return solver


def _conditions(X, t):
    def conditions(lam, b):
        xp = di.array_namespace(b)
        Xc, tc = xp.asarray(X), xp.asarray(t)
        return xp.matmul(xp.matmul(Xc, b) - tc, Xc) + lam * b

    return conditions


def _exact(X, t, lam):
    gram = X.T @ X + lam * np.eye(X.shape[1])
    b = np.linalg.solve(gram, X.T @ t)
    return float(-b @ np.linalg.solve(gram, b))


def _jax_recipes(X, t):
    import jax
    import jax.numpy as jnp

    jax.config.update("jax_enable_x64", True)
    solver, conditions = _solver(X, t), _conditions(X, t)

    @jax.jit
    def implicit_gradient(lam, b):
        dc_db = jax.jacfwd(conditions, argnums=1)(lam, b)
        w = jnp.linalg.solve(dc_db.T, b)  # dL/db = b
        _, pull = jax.vjp(lambda s: conditions(s, b), lam)
        return -pull(w)[0]

    def native(lam):
        b = jnp.asarray(solver(lam))
        return jax.block_until_ready(implicit_gradient(jnp.float64(lam), b))

    recipes = {"native": native}
    for method in ("direct", "cg"):
        impl = di.ImplicitFunction(
            solver, conditions, di.AutoJAX(mode="forward", batch_size=len(t)), linear_solver=method
        )
        impl(
            np.float64(0.3)
        )  # jit traces without values: the function learns y's shape from one call
        grad = jax.jit(jax.grad(lambda s, impl=impl: jnp.sum(impl(s) ** 2) / 2))
        recipes[method] = lambda lam, grad=grad: jax.block_until_ready(grad(jnp.float64(lam)))
    return recipes


def _torch_recipes(X, t):
    import torch

    solver, conditions = _solver(X, t), _conditions(X, t)

    def native(lam):
        s = torch.tensor(lam, dtype=torch.float64)
        b = torch.from_numpy(solver(lam))
        dc_db = torch.func.jacfwd(conditions, argnums=1)(s, b)
        w = torch.linalg.solve(dc_db.T, b)
        _, pull = torch.func.vjp(lambda s: conditions(s, b), s)
        return -pull(w)[0]

    recipes = {"native": native}
    for method in ("direct", "cg"):
        impl = di.ImplicitFunction(
            solver,
            conditions,
            di.AutoTorch(mode="forward", batch_size=len(t)),
            linear_solver=method,
        )

        def ours(lam, impl=impl):
            s = torch.tensor(lam, dtype=torch.float64, requires_grad=True)
            (impl(s) ** 2).sum().div(2).backward()
            return s.grad

        recipes[method] = ours
    return recipes


FRAMEWORKS = {"jax": _jax_recipes, "torch": _torch_recipes}


def _fixed_point_data(n):
    rng = np.random.default_rng(1)
    W = 0.9 * rng.normal(size=(n, n)) / np.sqrt(n) / 2  # a contraction: |W| < 1
    return W, rng.normal(size=n)


def _fixed_point_solver(W):
    def solver(x):
        x = np.asarray(x)
        y = np.zeros_like(x)
        for _ in range(500):
            y_next = np.tanh(W @ y + x)
            if np.max(np.abs(y_next - y)) < 1e-14:
                break
            y = y_next
        return y_next

    return solver


def _fixed_point_conditions(W):
    def conditions(x, y):
        xp = di.array_namespace(y)
        return y - xp.tanh(xp.matmul(xp.asarray(W), y) + x)

    return conditions


def _fixed_point_exact(W, x):
    y = _fixed_point_solver(W)(x)
    slope = 1 - np.tanh(W @ y + x) ** 2
    return slope * np.linalg.solve((np.eye(len(x)) - slope[:, None] * W).T, y)


def _jax_fixed_point_recipes(W, x0):
    """The gradient in x of ``sum(y(x)^2) / 2``, y the fixed point: GMRES on vjps (native) and gmres here."""
    import jax
    import jax.numpy as jnp

    jax.config.update("jax_enable_x64", True)
    solver, conditions = _fixed_point_solver(W), _fixed_point_conditions(W)

    @jax.jit
    def implicit_gradient(x, y):
        _, pull_y = jax.vjp(lambda v: conditions(x, v), y)
        w, _ = jax.scipy.sparse.linalg.gmres(lambda u: pull_y(u)[0], y, tol=1e-10, atol=0.0)
        _, pull_x = jax.vjp(lambda s: conditions(s, y), x)
        return -pull_x(w)[0]

    def native(x):
        y = jnp.asarray(solver(x))
        return jax.block_until_ready(implicit_gradient(jnp.asarray(x), y))

    impl = di.ImplicitFunction(solver, conditions, di.AutoJAX(), linear_solver="gmres", rtol=1e-10)
    impl(np.asarray(x0))  # jit traces without values: the function learns y's shape from one call
    grad = jax.jit(jax.grad(lambda s: jnp.sum(impl(s) ** 2) / 2))
    return {"native": native, "gmres": lambda x: jax.block_until_ready(grad(jnp.asarray(x)))}


def _optimistix_fixed_point_recipes(W, x0):
    """The same gradient with the forward iteration in JAX: optimistix's implicit differentiation (native)
    against ``linear_solver="gmres"``, both solving by the same jitted ``optimistix.fixed_point``."""
    import jax
    import jax.numpy as jnp
    import lineax
    import optimistix

    jax.config.update("jax_enable_x64", True)
    Wj = jnp.asarray(W)

    def step(y, x):
        return jnp.tanh(Wj @ y + x)

    def fixed_point(x, adjoint):
        iteration = optimistix.FixedPointIteration(rtol=1e-13, atol=1e-13)
        y0 = jnp.zeros_like(x)
        return optimistix.fixed_point(
            step, iteration, y0, args=x, max_steps=500, adjoint=adjoint
        ).value

    # GMRES on both sides, to the same relative tolerance in the 2-norm (lineax's default is the max norm)
    gmres = lineax.GMRES(rtol=1e-10, atol=0.0, norm=optimistix.two_norm)
    adjoint = optimistix.ImplicitAdjoint(linear_solver=gmres)
    native = jax.jit(jax.grad(lambda x: jnp.sum(fixed_point(x, adjoint) ** 2) / 2))

    solver = jax.jit(lambda x: fixed_point(x, optimistix.ImplicitAdjoint()))
    impl = di.ImplicitFunction(
        solver, _fixed_point_conditions(W), di.AutoJAX(), linear_solver="gmres", rtol=1e-10
    )
    impl(jnp.asarray(x0))  # jit traces without values: the function learns y's shape from one call
    grad = jax.jit(jax.grad(lambda x: jnp.sum(impl(x) ** 2) / 2))
    return {
        "native": lambda x: jax.block_until_ready(native(jnp.asarray(x))),
        "gmres": lambda x: jax.block_until_ready(grad(jnp.asarray(x))),
    }


def _torch_fixed_point_recipes(W, x0):
    """The same gradient: a dense solve on ``jacfwd`` (native; torch has no GMRES) and "direct" here."""
    import torch

    solver, conditions = _fixed_point_solver(W), _fixed_point_conditions(W)

    def native(x):
        x = torch.from_numpy(np.asarray(x))
        y = torch.from_numpy(solver(x.numpy()))
        dc_dy = torch.func.jacfwd(conditions, argnums=1)(x, y)
        w = torch.linalg.solve(dc_dy.T, y)
        _, pull = torch.func.vjp(lambda s: conditions(s, y), x)
        return -pull(w)[0]

    backend = di.AutoTorch(mode="forward", batch_size=len(x0))
    impl = di.ImplicitFunction(solver, conditions, backend, linear_solver="direct")

    def ours(x):
        s = torch.tensor(np.asarray(x), requires_grad=True)
        (impl(s) ** 2).sum().div(2).backward()
        return s.grad

    return {"native": native, "direct": ours}


#: the fixed-point rows: "optimistix" is JAX against optimistix (a benchmark-only peer, skipped when absent)
FIXED_POINT = {
    "jax": _jax_fixed_point_recipes,
    "optimistix": _optimistix_fixed_point_recipes,
    "torch": _torch_fixed_point_recipes,
}


def measure_fixed_point(framework, n=1000, rounds=ROUNDS):
    """As :func:`measure_ridge`, for the fixed point ``y = tanh(W y + x)``, the gradient in x."""
    W, x0 = _fixed_point_data(n)
    recipes = FIXED_POINT[framework](W, x0)
    exact = _fixed_point_exact(W, x0)
    for name, recipe in recipes.items():
        got = np.asarray(recipe(x0))
        if not np.allclose(got, exact, rtol=1e-7, atol=1e-9):
            raise AssertionError(
                f"{framework} {name}: the fixed point's gradient differs from exact"
            )
    return _interleaved(recipes, [x0 + 0.001 * r for r in range(rounds)])


def _interleaved(recipes, points):
    """``{recipe: (median s, median ratio to native, (q1, q3))}``: every recipe at each point in turn."""
    times: dict = {name: [] for name in recipes}
    for point in points:
        for name, recipe in recipes.items():
            start = time.perf_counter()
            recipe(point)
            times[name].append(time.perf_counter() - start)
    out = {}
    for name in recipes:
        ratios = [a / b for a, b in zip(times[name], times["native"])]
        q = statistics.quantiles(ratios, n=4)
        out[name] = (statistics.median(times[name]), statistics.median(ratios), (q[0], q[2]))
    return out


def measure_ridge(framework, n=1000, rounds=ROUNDS):
    """``{recipe: (median s, median ratio to native, (q1, q3))}`` for one framework; checks every recipe."""
    X, t = _ridge_data(n)
    recipes = FRAMEWORKS[framework](X, t)
    for name, recipe in recipes.items():  # warm up (compilations, preparations) and check
        got = float(np.asarray(recipe(0.3)))
        exact = _exact(X, t, 0.3)
        if not np.isclose(got, exact, rtol=1e-7):
            raise AssertionError(
                f"{framework} {name}: gradient {got} differs from the closed form {exact}"
            )
    return _interleaved(recipes, [0.5 + 0.01 * r for r in range(rounds)])  # a new point each round


def measure_memory(n=20_000):
    """``(peak RSS in MB, seconds, max relative error)`` of one matrix-free pullback at N = ``n``."""
    import resource

    import scipy.sparse
    import scipy.sparse.linalg

    def solver(x):
        x = np.asarray(x)
        y = np.zeros_like(x)
        for _ in range(200):
            y_next = np.tanh(np.roll(y, 1) + np.roll(y, -1)) / 4 + x
            if np.max(np.abs(y_next - y)) < 1e-15:
                break
            y = y_next
        return y_next

    def conditions(x, y):
        xp = di.array_namespace(y)
        return y - xp.tanh(xp.roll(y, 1) + xp.roll(y, -1)) / 4 - x

    impl = di.ImplicitFunction(solver, conditions, di.AutoJAX(), linear_solver="gmres", rtol=1e-12)
    rng = np.random.default_rng(0)
    x, u = rng.uniform(-1, 1, n), rng.normal(size=n)
    start = time.perf_counter()
    (got,) = di.pullback(impl, di.AutoFiniteDiff(), x, (u,))
    seconds = time.perf_counter() - start
    y = solver(x)
    slope = (1 - np.tanh(np.roll(y, 1) + np.roll(y, -1)) ** 2) / 4
    shift = scipy.sparse.eye(n, k=1, format="csr") + scipy.sparse.eye(n, k=-1, format="csr")
    shift = shift + scipy.sparse.coo_matrix(([1.0, 1.0], ([0, n - 1], [n - 1, 0])), shape=(n, n))
    A = scipy.sparse.eye(n) - scipy.sparse.diags(slope) @ shift  # dc/dy; dc/dx = -I
    exact = scipy.sparse.linalg.spsolve(A.T.tocsc(), u)
    error = float(np.max(np.abs(np.asarray(got) - exact)) / np.max(np.abs(exact)))
    peak_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    return peak_mb, seconds, error


#: one thread for every library's linear algebra: on a shared machine a multi-threaded BLAS call waits for
#: cores held by other processes, which swamps what is measured; every recipe runs under the same setting
ONE_THREAD = {
    "OMP_NUM_THREADS": "1",
    "OPENBLAS_NUM_THREADS": "1",
    "MKL_NUM_THREADS": "1",
    "XLA_FLAGS": "--xla_cpu_multi_thread_eigen=false intra_op_parallelism_threads=1",
}


def _with_one_thread():
    """Re-execute ``python -m benchmarks.bench_implicit`` (same arguments) once with :data:`ONE_THREAD`."""
    if not all(name in os.environ for name in ONE_THREAD):
        os.execve(
            sys.executable,
            [sys.executable, "-m", "benchmarks.bench_implicit", *sys.argv[1:]],
            {**os.environ, **ONE_THREAD},
        )


def _installed(*modules):
    import importlib.util

    return all(importlib.util.find_spec(m) is not None for m in modules)


def main(argv):
    _with_one_thread()
    import torch

    torch.set_num_threads(1)
    what = argv[0] if argv else "all"
    if what in ("all", "ridge"):
        n = int(argv[1]) if len(argv) > 1 else 1000
        print(f"ridge argmin gradient, n = {n}, {ROUNDS} rounds (a new lam each)")
        print("| framework | recipe | median ms | ratio to native [IQR] |")
        print("|---|---|---|---|")
        for framework in FRAMEWORKS:
            for name, (s, ratio, (q1, q3)) in measure_ridge(framework, n).items():
                print(
                    f"| {framework} | {name} | {s * 1e3:.1f} | {ratio:.2f} [{q1:.2f}-{q3:.2f}] |",
                    flush=True,
                )
    if what in ("all", "fixed"):
        n = int(argv[1]) if what == "fixed" and len(argv) > 1 else 1000
        print(f"fixed point gradient, n = {n}, {ROUNDS} rounds (a new x each)")
        print("| framework | recipe | median ms | ratio to native [IQR] |")
        print("|---|---|---|---|")
        for framework in FIXED_POINT:
            if framework == "optimistix" and not _installed("optimistix", "lineax"):
                print(
                    "| optimistix | skipped: optimistix not installed "
                    '(pip install "diffinterface[benchmark]") | | |',
                    flush=True,
                )
                continue
            for name, (s, ratio, (q1, q3)) in measure_fixed_point(framework, n).items():
                print(
                    f"| {framework} | {name} | {s * 1e3:.1f} | {ratio:.2f} [{q1:.2f}-{q3:.2f}] |",
                    flush=True,
                )
    if what in ("all", "memory"):
        n = int(argv[1]) if what == "memory" and len(argv) > 1 else 20_000
        peak, seconds, error = measure_memory(n)
        dense = n * n * 8 / 1e6
        print(
            f"matrix-free fixed point, N = {n}: pullback {seconds:.2f} s, relative error {error:.1e}, "
            f"peak RSS {peak:.0f} MB (an N x N float64 matrix: {dense:.0f} MB)"
        )


if __name__ == "__main__":
    main(sys.argv[1:])
