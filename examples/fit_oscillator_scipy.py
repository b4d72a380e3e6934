"""Fit a damped oscillator's named physical parameters with scipy, through a flat view of them.

Run: python examples/fit_oscillator_scipy.py

The model keeps its parameters in a dict, ``{"k": stiffness, "c": damping,
"x0": initial displacement}``; ``scipy.optimize.minimize`` wants one flat
vector. ``di.flatten`` gives the flat starting point and ``unravel``, the
function back to the dict, which the objective calls on every iterate, traced
values included; ``diffinterface.scipy.objective`` hands scipy the value and
gradient of the least-squares misfit from one prepared call per iterate.
"""

import numpy as np
import scipy.optimize

import diffinterface as di
from diffinterface.scipy import objective

TIMES = np.linspace(0.0, 10.0, 200)
TRUE = {"k": 4.0, "c": 0.3, "x0": 1.5}


def displacement(params, t):
    """An underdamped oscillator released at rest from ``x0``: ``x'' + c x' + k x = 0``."""
    xp = di.array_namespace(params["k"])
    decay = params["c"] / 2
    omega = xp.sqrt(params["k"] - decay**2)
    return (
        params["x0"] * xp.exp(-decay * t) * (xp.cos(omega * t) + decay / omega * xp.sin(omega * t))
    )


def main():
    rng = np.random.default_rng(0)
    observed = displacement({k: np.asarray(v) for k, v in TRUE.items()}, TIMES) + 0.02 * rng.normal(
        size=TIMES.size
    )
    guess = {"k": np.asarray(3.0), "c": np.asarray(0.1), "x0": np.asarray(1.0)}
    flat0, unravel = di.flatten(guess)

    def misfit(flat):
        residual = displacement(unravel(flat), TIMES) - observed
        return (residual**2).sum()

    print(f"{'backend':<20} {'k':>7} {'c':>7} {'x0':>7} {'iterations':>10}")
    print(f"{'true':<20} {TRUE['k']:7.3f} {TRUE['c']:7.3f} {TRUE['x0']:7.3f}")
    for name, backend in (
        ("JAX", di.AutoJAX()),
        ("autograd", di.AutoAutograd()),
        ("finite differences", di.AutoFiniteDiff()),
    ):
        problem = objective(misfit, backend, flat0)
        result = scipy.optimize.minimize(problem.fun, problem.x0, jac=problem.jac, method="BFGS")
        fitted = unravel(result.x)
        print(
            f"{name:<20} {float(fitted['k']):7.3f} {float(fitted['c']):7.3f} {float(fitted['x0']):7.3f} "
            f"{result.nit:10d}"
        )
        for key, true in TRUE.items():
            if abs(float(fitted[key]) - true) > 0.05 * true:
                raise SystemExit(f"{name}: fitted {key} = {float(fitted[key]):.3f}, true {true}")
    print("every backend recovered k, c and x0 within 5%")


if __name__ == "__main__":
    main()
