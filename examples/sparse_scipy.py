"""Sparse derivatives for scipy: a sparse Hessian for trust-constr, a sparse Jacobian for BDF.

    python examples/sparse_scipy.py

1. ``scipy.optimize.minimize(method="trust-constr")`` on the chain energy (a
   pentadiagonal Hessian) with ``hess=`` from ``di.AutoSparse(di.AutoJAX())``
   (a ``scipy.sparse.csr_array``), against the dense Hessian of ``di.AutoJAX()``.
2. ``scipy.integrate.solve_ivp(method="BDF")`` on the 2-D Brusselator
   (32 x 32 grid, 2048 unknowns) with ``jac=`` from the sparse Jacobian,
   against the dense one.

Both print the wall-clock speed-up of the whole solve (preparation included).
"""

import time

import numpy as np
from scipy.integrate import solve_ivp
from scipy.optimize import minimize

import diffinterface as di


def chain_energy(x):
    xp = di.array_namespace(x)
    r1, r2 = x[1:] - x[:-1], x[2:] - x[:-2]
    return xp.sum(r1**2 + r1**4 + xp.exp(-r1)) + xp.sum(-0.1 * r2**3) + 1e-3 * xp.sum(x**2)


def brusselator(x):
    xp = di.array_namespace(x)
    n = int(round((x.shape[0] // 2) ** 0.5))
    u, v = xp.reshape(x[: n * n], (n, n)), xp.reshape(x[n * n :], (n, n))
    alpha = 10.0 * (n - 1) ** 2 / 100.0

    def laplacian(w):
        return (
            xp.roll(w, 1, axis=0)
            + xp.roll(w, -1, axis=0)
            + xp.roll(w, 1, axis=1)
            + xp.roll(w, -1, axis=1)
            - 4 * w
        )

    du = 1.0 + u * u * v - 4.4 * u + alpha * laplacian(u)
    dv = 3.4 * u - u * u * v + alpha * laplacian(v)
    return (
        np.concatenate([np.reshape(du, -1), np.reshape(dv, -1)])
        if xp is np
        else xp.concatenate((xp.reshape(du, (-1,)), xp.reshape(dv, (-1,))))
    )


def optimize(backend, x0):
    start = time.perf_counter()
    prep_g = di.prepare_gradient(chain_energy, backend, x0)
    prep_h = di.prepare_hessian(chain_energy, backend, x0)
    fun = lambda x: tuple(
        np.asarray(a) for a in di.value_and_gradient(chain_energy, backend, x, prep=prep_g)
    )  # noqa: E731
    hess = lambda x: di.hessian(chain_energy, backend, x, prep=prep_h)  # noqa: E731
    result = minimize(
        fun, x0, jac=True, hess=hess, method="trust-constr", options={"gtol": 1e-8, "maxiter": 200}
    )
    return result, time.perf_counter() - start


def integrate(backend, y0):
    start = time.perf_counter()
    prep = di.prepare_jacobian(brusselator, backend, y0)
    jac = lambda t, y: di.jacobian(brusselator, backend, y, prep=prep)  # noqa: E731
    result = solve_ivp(
        lambda t, y: brusselator(y), (0.0, 1.0), y0, method="BDF", jac=jac, rtol=1e-6, atol=1e-8
    )
    return result, time.perf_counter() - start


def main():
    x0 = np.random.default_rng(0).uniform(0.1, 1.0, 2000)
    sparse, t_sparse = optimize(di.AutoSparse(di.AutoJAX()), x0)
    dense, t_dense = optimize(di.AutoJAX(), x0)
    print(
        f"trust-constr, chain energy N = {x0.size}: sparse Hessian {t_sparse:.2f} s, dense {t_dense:.2f} s "
        f"({t_dense / t_sparse:.1f}x); f* = {sparse.fun:.8f} (dense {dense.fun:.8f}), {sparse.nit} iterations"
    )

    n = 32
    grid = np.linspace(0.0, 1.0, n)
    y0 = np.concatenate(
        [
            (22.0 * (grid * (1 - grid)) ** 1.5 * np.ones((n, 1))).ravel(),
            (27.0 * (grid[:, None] * (1 - grid[:, None])) ** 1.5 * np.ones((1, n))).ravel(),
        ]
    )
    sparse, t_sparse = integrate(di.AutoSparse(di.AutoJAX()), y0)
    dense, t_dense = integrate(di.AutoJAX(), y0)
    gap = np.abs(sparse.y[:, -1] - dense.y[:, -1]).max()
    print(
        f"solve_ivp BDF, Brusselator {n} x {n} ({y0.size} unknowns): sparse Jacobian {t_sparse:.2f} s, "
        f"dense {t_dense:.2f} s ({t_dense / t_sparse:.1f}x); {sparse.njev} Jacobians, "
        f"max |y_sparse - y_dense| at t = 1: {gap:.1e}"
    )


if __name__ == "__main__":
    main()
