"""A stiff ODE (Robertson's chemical kinetics) with an exact Jacobian from diffinterface.

Run: python examples/stiff_ode.py

Implicit solvers (BDF, Radau) need the Jacobian of the right-hand side.
Without one, ``solve_ivp`` estimates it by finite differences, column by
column. ``diffinterface.scipy.ode`` prepares an exact Jacobian once (``t`` is
passed as a ``di.Constant``, so new times reuse the preparation) and hands
``solve_ivp`` its ``fun(t, y)`` and ``jac(t, y)``.
"""

import numpy as np
import scipy.integrate

import diffinterface as di
from diffinterface.scipy import ode
from diffinterface.testing import CountingFunction


def robertson(y, t):
    """Three species reacting at rates 0.04, 1e4 and 3e7: stiff, and y1 + y2 + y3 stays 1."""
    xp = di.array_namespace(y)
    a, b, c = y[0], y[1], y[2]
    return xp.stack([-0.04 * a + 1e4 * b * c, 0.04 * a - 1e4 * b * c - 3e7 * b**2, 3e7 * b**2])


def main():
    y0 = np.array([1.0, 0.0, 0.0])
    span = (0.0, 1e4)
    tolerances = {"rtol": 1e-6, "atol": 1e-10}
    print(f"{'Jacobian':<20} {'steps':>6} {'Jacobians':>10} {'evaluations of f':>17}  y(10^4)")
    counted = CountingFunction(robertson)  # counts every evaluation, the Jacobian estimates' too
    estimated = scipy.integrate.solve_ivp(
        lambda t, y: counted(y, t), span, y0, method="BDF", **tolerances
    )
    reference = estimated.y[:, -1]
    print(
        f"{'estimated by scipy':<20} {estimated.t.size - 1:6d} {estimated.njev:10d} {counted.count:17d}  {reference}"
    )
    for name, backend in {"exact, JAX": di.AutoJAX(), "exact, PyTorch": di.AutoTorch()}.items():
        counted = CountingFunction(robertson)
        rhs = ode(counted, backend, y0)  # prepares the Jacobian once
        counted.take()
        solution = scipy.integrate.solve_ivp(
            rhs.fun, span, rhs.y0, method="BDF", jac=rhs.jac, **tolerances
        )
        end = solution.y[:, -1]
        print(f"{name:<20} {solution.t.size - 1:6d} {solution.njev:10d} {counted.count:17d}  {end}")
        if not solution.success or abs(end.sum() - 1.0) > 1e-6:
            raise SystemExit(f"{name}: the integration failed or lost mass: {solution.message}")
        if not np.allclose(end, reference, rtol=1e-3, atol=1e-8):
            raise SystemExit(f"{name}: the end state disagrees with scipy's own run")
    print("the exact Jacobians reproduce the solution without scipy's extra evaluations of f")
    print("(on JAX a prepared Jacobian runs compiled code and never calls the Python function)")


if __name__ == "__main__":
    main()
