"""Newton-CG with Hessian-vector products at one iterate: same-point preparations against ordinary ones.

Run: python examples/newton_cg_same_point.py

``scipy.optimize.minimize(method="Newton-CG", hessp=...)`` solves each Newton
step with conjugate gradients: many Hessian-vector products at one iterate.
A ``hessp`` on ``di.prepare_hvp_same_point`` at each iterate runs the
gradient's forward and backward passes once per iterate; a ``hessp`` on one
ordinary ``prepare_hvp`` runs them for every product. Each reaches the same
minimum in the same iterations; the time per iteration differs (the figures
printed depend on the machine; each recipe runs once untimed first, so that
framework start-up is not counted).

What to expect: on torch a same-point preparation is one forward and backward
pass, and each product one backward pass through the kept graph; ordinary
products run the forward and backward passes every time, so with conjugate
gradients taking tens of products per Newton step an iterate costs less with
same-point products (how much less depends on f and the machine: measure for
your function). On JAX a same-point preparation compiles for its point, which
costs more than the products it saves at one iterate: the ordinary recipe
wins there. The third row, ``objective(...).hessp``, takes the recipe the
backend declares cheaper (``Capabilities.cheap_same_point``).
"""

import time

import numpy as np
import scipy.optimize

import diffinterface as di
from diffinterface.scipy import objective

N = 2000


def energy(x):
    """A chain of particles with anharmonic springs of stiffness from 1 to 1000 (so conjugate gradients
    takes many steps per Newton step), each particle pulled towards its rest position."""
    xp = di.array_namespace(x)
    r = x[1:] - x[:-1]
    stiffness = xp.asarray(np.logspace(0.0, 3.0, N - 1))
    rest = xp.asarray(np.linspace(0.0, 1.0, N))
    return xp.sum(stiffness * (r**2 + r**4) + xp.exp(-r)) + 0.5 * xp.sum((x - rest) ** 2)


def ordinary_hessp(backend, x0):
    """``hessp`` on one ordinary preparation, used at every iterate."""
    prep = di.prepare_hvp(energy, backend, x0, (np.zeros_like(x0),))

    def hessp(x, p):
        return np.asarray(di.hvp(energy, backend, x, (p,), prep=prep)[0])

    return hessp


def same_point_hessp(backend, x0):
    """``hessp`` on a same-point preparation at each iterate (at a copy: scipy may reuse its array)."""
    last = {}

    def hessp(x, p):
        if "x" not in last or not np.array_equal(last["x"], x):
            last["x"] = np.array(x)
            last["prep"] = di.prepare_hvp_same_point(energy, backend, last["x"], (p,))
        return np.asarray(di.hvp(energy, backend, last["x"], (p,), prep=last["prep"])[0])

    return hessp


def minimize(backend, hessp_of):
    x0 = np.zeros(N)
    problem = objective(energy, backend, x0)
    hessp = hessp_of(problem, backend, x0)
    hessp(
        x0, np.zeros(N)
    )  # both recipes prepare before the clock starts (the same-point one at x0)
    start = time.perf_counter()
    result = scipy.optimize.minimize(
        problem.fun,
        problem.x0,
        jac=problem.jac,
        hessp=hessp,
        method="Newton-CG",
        options={"xtol": 1e-9},
    )
    return result, (time.perf_counter() - start) / result.nit


def main():
    recipes = {
        "same point": lambda problem, backend, x0: same_point_hessp(backend, x0),
        "ordinary": lambda problem, backend, x0: ordinary_hessp(backend, x0),
        "objective": lambda problem, backend, x0: problem.hessp,
    }
    print(
        f"{'backend':<10} {'hessp':<11} {'iterations':>10} {'products':>9} {'ms per iteration':>17}"
    )
    for name, backend in (("JAX", di.AutoJAX()), ("PyTorch", di.AutoTorch())):
        minima = []
        for recipe, hessp_of in recipes.items():
            minimize(
                backend, hessp_of
            )  # start-up: first compilations, torch's first backward passes
            result, per_iteration = minimize(backend, hessp_of)
            minima.append(result.x)
            print(
                f"{name:<10} {recipe:<11} {result.nit:10d} {result.nhev:9d} {1e3 * per_iteration:17.2f}"
            )
            if not result.success:
                raise SystemExit(f"{name} {recipe}: Newton-CG did not converge: {result.message}")
        if not all(np.allclose(minima[0], other, atol=1e-6) for other in minima[1:]):
            raise SystemExit(f"{name}: MISMATCH between the two minima")
    print("Newton-CG reached the same minimum with each recipe")


if __name__ == "__main__":
    main()
