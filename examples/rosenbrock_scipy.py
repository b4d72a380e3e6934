"""Minimize the Rosenbrock function with scipy, on every backend.

Run: python examples/rosenbrock_scipy.py

``diffinterface.scipy.objective`` prepares ``value_and_gradient`` once and
hands ``scipy.optimize.minimize`` its ``fun``, ``jac`` and ``hess``. scipy
asks for the value and the gradient at the same iterate separately; the
objective answers both from one prepared call, so ``f`` is evaluated for an
iterate's value and gradient at most once (on JAX, never: the compiled code
runs without calling the Python function).
"""

import numpy as np
import scipy.optimize

import diffinterface as di
from diffinterface.scipy import objective
from diffinterface.testing import CountingFunction


def rosenbrock(x):
    """The extended Rosenbrock function: minimum 0 at x = (1, ..., 1)."""
    xp = di.array_namespace(x)
    return xp.sum(100.0 * (x[1:] - x[:-1] ** 2) ** 2 + (1.0 - x[:-1]) ** 2)


BACKENDS = {
    "finite differences": di.AutoFiniteDiff(),
    "JAX": di.AutoJAX(),
    "PyTorch": di.AutoTorch(),
    "autograd": di.AutoAutograd(),
}


def main():
    x0 = np.zeros(6)
    print(
        f"{'backend':<20} {'method':<12} {'|x - 1|':>9} {'iterations':>10} {'value+gradient calls':>21} {'f evaluations':>14}"
    )
    for name, backend in BACKENDS.items():
        for method in ("BFGS", "trust-exact"):
            f = CountingFunction(rosenbrock)  # counts evaluations (on JAX: traces)
            problem = objective(f, backend, x0)
            extra = {"hess": problem.hess} if method == "trust-exact" else {}
            result = scipy.optimize.minimize(
                problem.fun, problem.x0, jac=problem.jac, method=method, **extra
            )
            error = float(np.max(np.abs(result.x - 1.0)))
            print(
                f"{name:<20} {method:<12} {error:9.1e} {result.nit:10d} "
                f"{problem.calls['value_and_gradient']:21d} {f.count:14d}"
            )
            if error > 1e-3:
                raise SystemExit(f"{name} {method} did not reach the minimum: {result.x}")
    print("every backend reached the minimum at (1, ..., 1)")


if __name__ == "__main__":
    main()
