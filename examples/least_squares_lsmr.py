"""Fit an exponential decay to 4000 samples with ``least_squares(tr_solver="lsmr")``, never forming a Jacobian.

Run: python examples/least_squares_lsmr.py

``scipy.optimize.least_squares`` with ``tr_solver="lsmr"`` accepts a
``jac`` that returns a ``scipy.sparse.linalg.LinearOperator``: it only needs
products ``J @ v`` and ``J.T @ u``. ``diffinterface.scipy.jacobian_operator``
builds that operator at each iterate from same-point preparations: ``f``'s
pass at the iterate runs once, each product is a pushforward or a pullback.
With 4000 residuals and 3 parameters the dense Jacobian would be small, but
the same code serves 10^5 residuals and 10^4 parameters, where it would not.
"""

import numpy as np
import scipy.optimize

import diffinterface as di
from diffinterface.scipy import jacobian_operator

T = np.linspace(0.0, 4.0, 4000)
TRUTH = np.array([2.5, 1.3, 0.4])  # amplitude, rate, offset
DATA = TRUTH[0] * np.exp(-TRUTH[1] * T) + TRUTH[2] + 0.01 * np.sin(37.0 * T)


def residuals(p):
    xp = di.array_namespace(p)
    return p[0] * xp.exp(-p[1] * xp.asarray(T)) + p[2] - xp.asarray(DATA)


def main():
    print(f"{'backend':<20} {'a':>7} {'k':>7} {'c':>7} {'iterations':>10} {'operators':>9}")
    for name, backend in (
        ("JAX", di.AutoJAX()),
        ("PyTorch", di.AutoTorch()),
        ("autograd", di.AutoAutograd()),
        ("finite differences", di.AutoFiniteDiff()),
    ):
        operators = []

        def jac(p, backend=backend, operators=operators):
            operators.append(jacobian_operator(residuals, backend, p))
            return operators[-1]

        fit = scipy.optimize.least_squares(
            lambda p: np.asarray(residuals(p)), np.array([1.0, 0.5, 0.0]), jac=jac, tr_solver="lsmr"
        )
        a, k, c = fit.x
        print(f"{name:<20} {a:7.3f} {k:7.3f} {c:7.3f} {fit.nfev:10d} {len(operators):9d}")
        if not fit.success or not np.allclose(fit.x, TRUTH, rtol=2e-2, atol=2e-2):
            raise SystemExit(f"{name}: the fit missed the truth {TRUTH}: {fit.x}")
    print("every backend fitted a, k and c with the Jacobian as a LinearOperator")


if __name__ == "__main__":
    main()
